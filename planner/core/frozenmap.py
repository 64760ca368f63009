"""A read-only mapping that pickles and deep-copies, for the catalog's frozen records.

``types.MappingProxyType`` is read-only but cannot be pickled (``TypeError: cannot pickle 'mappingproxy'
object``), so a :class:`~planner.catalog.loader.Catalog` holding one could not be sent to another process
(``multiprocessing.Pool.map``) nor ``copy.deepcopy``-ed (h10b #8). :class:`FrozenMap` reads like one (a
``collections.abc.Mapping``: ``m[k]``, ``len``, iteration, ``==`` with any mapping), has no method that changes
it, and pickles as the class and a plain dict of its items (``__reduce__``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["FrozenMap"]


class FrozenMap(Mapping):
    """A read-only mapping of the items of ``data`` (a mapping or (key, value) pairs), copied on creation.

    Unhashable, as ``dict`` and ``MappingProxyType`` are (its values may be unhashable).
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = ()) -> None:
        object.__setattr__(self, "_data", dict(data))

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FrozenMap is read-only")

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __reduce__(self) -> tuple[type, tuple[dict[Any, Any]]]:
        return (FrozenMap, (dict(self._data),))

    __hash__ = None  # type: ignore[assignment]
