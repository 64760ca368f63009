"""Stage 2, catalog: the hardware and model catalog read from YAML, with overlays.

Reads ``catalog/*.yaml`` and a user's overlay folder into a frozen
:class:`~planner.catalog.loader.Catalog`, every entry with its price, source and date. One module per
catalog file kind holds that kind's record, keys and checks: ``pcie`` (PCIe generations), ``gpus``,
``ram`` (DIMMs), ``platforms`` (hosts, and how cards fit their slots), ``network`` (NICs and
switches), ``cloud`` (cloud instances), ``models`` (Hugging Face configs); ``schema`` holds what they
share (the field readers, the entry being read, the kind table); ``loader`` finds the files, merges
the overlay and builds the ``Catalog`` (``load_catalog``); ``sources`` reads the ``SOURCES.md``
documents that ``REF:`` ids cite; ``devices`` the names NVIDIA's driver gives the GPUs (nvidia-smi, torch), to
their ids. Imports only ``planner.core`` and ``planner.model``.
"""
