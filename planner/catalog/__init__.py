"""Stage 2, catalog: the hardware and model catalog read from YAML, with overlays.

Reads ``catalog/*.yaml`` (GPUs, platforms, RAM, PCIe, network, cloud instances, models) and a
user's overlay folder into a frozen :class:`~planner.catalog.loader.Catalog`, every entry with its
price, source and date; ``sources`` reads the ``SOURCES.md`` documents that ``REF:`` ids cite.
Imports only ``planner.core`` and ``planner.model``.
"""
