"""Python's cyclic garbage collector paused over a burst of allocations (reading a catalog)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["COMMAND_THRESHOLD", "collections_spaced", "collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a burst of allocations; set it back as it was.

    Reading a catalog makes several objects per YAML node (a node, its value, the entries
    checked from them; 80,000 nodes for a catalog with 16x the GPUs). Each 700 new container
    objects start a collection (``gc.get_threshold()``), and every tenth of those walks the
    older objects too, the modules already imported among them (pandas' are many). None of
    that frees anything here: a plain document's nodes and values hold no reference cycles (a
    recursive alias, or an exception with its traceback, makes one: it is collected at the
    first collection after the pause). Reference counting frees everything as usual meanwhile,
    so memory grows only by what the collector would have found, nothing in a plain catalog.

    The collector is enabled again on the way out only if it was enabled on the way in (a caller
    that disabled it keeps it so); nothing else changes. Measured with ``gc.callbacks`` (2 cores,
    benchmarks/README.md): a plan on the 16x catalog spent 0.66-0.80 s collecting, 0.18 s with
    this pause and :func:`collections_spaced`; the three 16x files parse in 0.40 s, not 0.64 s.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: Container objects allocated (less those freed) between two young-generation collections while a
#: command runs; CPython's default is 700 (``gc.get_threshold()[0]``). 50,000 as in freqtrade's
#: ``gc_set_threshold`` (freqtrade/util/gc_setup.py); mypy's ``tune_gc`` uses 200,000.
COMMAND_THRESHOLD = 50_000


@contextlib.contextmanager
def collections_spaced(first: int = COMMAND_THRESHOLD) -> Iterator[None]:
    """Run the young-generation collection after ``first`` net new container objects instead of
    CPython's 700; set the thresholds back as they were on the way out.

    A planner command allocates in bursts (importing pandas, reading the catalog, building the
    candidate table and the workbook's cells) objects that live until the command ends or are
    freed by reference counting; the collector, started every 700 allocations, walks them again
    and again and frees nearly nothing (measured with ``gc.callbacks``: 0.19 s of a plan on the
    shipped scenario, 0.11 s with the spaced threshold, most of it while pandas imports). Cycles
    are still collected, later and in larger batches; the older generations keep their own
    thresholds (``gc.get_threshold()[1:]``). Used by the command
    line only (planner.cli.main), around one command: a program that imports the planner keeps
    its own settings.
    """
    old = gc.get_threshold()
    gc.set_threshold(max(first, old[0]), *old[1:])
    try:
        yield
    finally:
        # the young generation holds every object the command made; with the old threshold the next
        # allocation would walk them all (0.1 s after a plan). gc.freeze() moves them out of the
        # generations (and counts the young one from zero), gc.unfreeze() into the oldest one,
        # which a full collection walks as before: nothing is left uncollectable
        gc.freeze()
        gc.set_threshold(*old)
        gc.unfreeze()
