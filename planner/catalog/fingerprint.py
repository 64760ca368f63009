"""The fingerprint of a :class:`~planner.catalog.loader.Catalog`'s content, for trusting a checked catalog by what it
holds, not by which object it is.

The loader checks every entry and marks the Catalog it returns with :func:`content_fingerprint` of what it checked;
the API (planner.api.inputs.catalog_of) takes a Catalog without checking it again only while its content still gives
that fingerprint. A Catalog or record changed in place (``object.__setattr__``, which bypasses the frozen dataclass,
or a FrozenMap's dict changed) gives another fingerprint and is checked as the loader checks a file (h23b N1).

Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import operator
import pickle
from typing import Any

#: The Catalog field that holds the fingerprint itself (left out of what is hashed).
FINGERPRINT_FIELD = "checked"


def content_fingerprint(catalog: Any) -> str:
    """The SHA-256 (64 hex digits) of the pickled values of every field of ``catalog`` but the fingerprint itself:
    every entry, number (as its exact bits: -0.0 and 0.0 differ), text, mapping and record type it holds. A record
    (a dataclass) is pickled as its type and its fields' values, in order (:class:`_FieldPickler`), which is
    faster than pickle's own reduction of such a record; the shipped catalog pickles to about 150 KB.

    Returns:
        the hex digest; '' when the content cannot be pickled (a value set in code that is no plain value, such as a
        lambda), which matches no fingerprint, so such a catalog is always checked.
    """
    try:
        values = tuple(getattr(catalog, f.name) for f in dataclasses.fields(catalog) if f.name != FINGERPRINT_FIELD)
        buf = io.BytesIO()
        _FieldPickler(buf).dump(values)
        return hashlib.sha256(buf.getbuffer()).hexdigest()
    except Exception:  # noqa: BLE001 - whatever pickling raises (PicklingError, TypeError, RecursionError): check it
        return ""


class _FieldPickler(pickle.Pickler):
    """A pickler (protocol 5) that writes a dataclass record as its type and the values of its fields, in order.

    The standard reduction of a frozen slots dataclass calls ``dataclasses.fields`` once per record, in Python (its
    ``__getstate__``): three quarters of the time for the shipped catalog's 1,600 records. The fields of each record
    type are looked up once per pickler instead. The bytes are for hashing only (never loaded)."""

    def __init__(self, file: Any) -> None:
        super().__init__(file, protocol=5)
        self._getters: dict[type, Any] = {}

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        get = self._getters.get(cls, _UNSEEN)
        if get is _UNSEEN:
            names = tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None
            # one C call for all the fields (attrgetter of one name returns the value, not a 1-tuple)
            get = self._getters[cls] = (None if names is None else
                                        operator.attrgetter(*names) if len(names) > 1 else
                                        (lambda o, n=names: tuple(getattr(o, x) for x in n)))
        if get is None:
            return NotImplemented
        return cls, get(obj)


_UNSEEN: Any = object()


def still_checked(catalog: Any) -> bool:
    """Whether ``catalog`` holds exactly what the loader (or the API's check) fingerprinted when it checked it."""
    mark = getattr(catalog, FINGERPRINT_FIELD, "")
    return isinstance(mark, str) and len(mark) == 64 and mark == content_fingerprint(catalog)


__all__ = ["FINGERPRINT_FIELD", "content_fingerprint", "still_checked"]
