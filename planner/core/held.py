"""What a caller's container holds, read through the base class's own methods.

A ``dict``, ``list`` or ``tuple`` subclass may override ``keys()``, ``items()``, ``__iter__`` or ``__len__``
to show less (or other) than it stores: a ``__len__`` returning 1 for 60 workloads passed the scenario caps,
a ``keys()`` hiding ``bogus`` had the key ignored (h25b N1, N2). ``dict.items(d)``, ``list.__iter__(l)`` and
``tuple.__iter__(t)`` read the stored entries, which a subclass cannot change; what the checks count and read
is then what is there. The collections module's own subclasses (OrderedDict, defaultdict, Counter) are read
through their own methods, which are honest and keep their order.
"""
from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict
from collections.abc import Mapping
from typing import Any

#: The containers read through their own methods: the built-ins and the collections module's own subclasses.
_TRUSTED = (dict, list, tuple, OrderedDict, defaultdict, Counter)


def _trusted(value: Any) -> bool:
    """A built-in container, or one of the collections module's own subclasses."""
    return type(value) in _TRUSTED


def held_items(value: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    """The (key, value) pairs a mapping stores: ``dict.items`` for a dict subclass, the mapping's own
    ``items()`` for any other (a Mapping that is no dict has no stored entries to read past it)."""
    if isinstance(value, dict) and not _trusted(value):
        return list(dict.items(value))
    return list(value.items())


def held_list(value: list[Any] | tuple[Any, ...]) -> list[Any]:
    """The items a list or tuple stores, in order: ``list.__iter__`` / ``tuple.__iter__`` for a subclass."""
    if _trusted(value):
        return list(value)
    return list(list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value))
