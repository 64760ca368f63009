"""planner.core.collector: the cyclic collector paused or spaced out, and set back as it was."""

from __future__ import annotations

import gc
import weakref

import pytest

from planner.core.collector import (
    COMMAND_THRESHOLD,
    collections_spaced,
    collector_paused,
)


@pytest.fixture
def gc_state():
    """Restore the collector's state whatever a test does to it."""
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    yield
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def test_paused_inside_and_enabled_again(gc_state):
    gc.enable()
    with collector_paused():
        inside = gc.isenabled()
    assert (inside, gc.isenabled()) == (False, True)


def test_paused_keeps_a_disabled_collector_disabled(gc_state):
    gc.disable()
    with collector_paused():
        pass
    assert gc.isenabled() is False


def test_paused_enabled_again_after_an_error(gc_state):
    gc.enable()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("x")
    assert gc.isenabled()


def test_spaced_sets_the_young_threshold_and_restores_all_three(gc_state):
    gc.set_threshold(700, 10, 10)
    with collections_spaced():
        inside = gc.get_threshold()
    assert inside == (COMMAND_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_spaced_never_lowers_a_higher_threshold(gc_state):
    gc.set_threshold(10**6, 5, 7)
    with collections_spaced():
        inside = gc.get_threshold()
    assert inside == (10**6, 5, 7)


def test_spaced_leaves_cycles_collectable(gc_state):
    """Objects made under the spaced threshold (gc.freeze/unfreeze on the way out) are still
    found by a full collection."""
    gc.enable()

    class Node:
        pass

    with collections_spaced():
        a = Node()
        a.self = a  # a reference cycle: reference counting alone never frees it
        gone = weakref.ref(a)
        del a
    assert gone() is not None
    gc.collect()
    assert gone() is None
