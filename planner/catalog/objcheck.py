"""The loader's checks run on a :class:`~planner.catalog.loader.Catalog` object rather than on files
(:func:`check_catalog`): for a Catalog changed in code and given to the Python API, checked as if its entries had
been read from files.

Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner.core.errors import CatalogError
from planner.core.fields import Entry, plain_number
from planner.core.held import held_list
from planner.core.names import unsafe_problem
from planner.catalog.loader import (KINDS, SCHEMA_VERSION, SourceRef, _file_order_kinds, _load_catalog,
                                    _Store)
from planner.catalog.prices import exempt_data
from planner.catalog.schema import ENTRIES_HINT, CatalogWarning, Kind, check_entry_count, read_text

def check_catalog(catalog: Any) -> Any:
    """Run the loader's own checks on a :class:`Catalog` object, as if its entries were read from files: its
    schema_version and each entry's keys through the same field readers (planner.catalog.schema; sizes and rates
    given back in bytes, ``'<n> B'``), the same duplicate-id check, each kind's per-entry ``check`` and the checks
    across lists (``check_merged``: references such as a platform's ``fixed_gpu``). For a Catalog changed in code
    (``dataclasses.replace`` on :func:`load_catalog` entries) given to the Python API.

    Returns:
        the Catalog with each value as the field readers give it: a number of another numeric type that holds the
        same value (``numpy.float64(329.0)``, ``Decimal(16)``, ``Fraction(1499)``, ``12884901888.0`` bytes) as the
        plain int or float the loader would build, so that nothing downstream meets a type a file never gives.

    Raises:
        CatalogError: one line naming the list, the entry and the field ('the Catalog given: gpus[3] (rtx-4090).vendor').
    """
    import dataclasses

    version = getattr(catalog, "schema_version", None)
    try:  # read as a file's is (a bool, numpy's too, is no number: h30b N4), then judged
        version = Entry({"schema_version": version}, file=None, path="", error=CatalogError).int("schema_version")
        if version != SCHEMA_VERSION:
            raise CatalogError(f"version {version!r} is not supported", hint=f"It is {SCHEMA_VERSION}.")
    except CatalogError as exc:
        raise CatalogError(exc.problem, entry="the Catalog given: schema_version", hint=exc.hint) from None
    store = _Store()
    lists = {"generations": "pcie"}
    for kind in _file_order_kinds():
        attr = lists.get(kind, kind)
        entries = getattr(catalog, attr, None)
        if not isinstance(entries, (tuple, list)):
            raise CatalogError(f"must be a tuple of entries, not {type(entries).__name__}",
                               entry=f"the Catalog given: {attr}")
        check_entry_count(entries, lambda problem: CatalogError(problem, entry=f"the Catalog given: {attr}",
                                                                 hint=ENTRIES_HINT))
        entries = held_list(entries)  # the entries stored, not what a subclass's __iter__ shows (h25b N1)
        record = KINDS[kind].record
        ids: dict[str, int | None] = {}
        for i, item in enumerate(entries):
            where = f"the Catalog given: {attr}[{i}]"
            if not isinstance(item, record):
                raise CatalogError(f"must be a {record.__name__}, not {type(item).__name__}", entry=where)
            data = _entry_data(KINDS[kind], item, f"{where} ({_short_repr(getattr(item, 'id', ''))[1:-1]})")
            store._read_entry(kind, Entry(data, file=None, path=where, error=CatalogError), overlay=False,
                              ids_in_file=ids)
    sources = getattr(catalog, "sources", None)
    sources = tuple(held_list(sources)) if isinstance(sources, tuple) else sources
    if not isinstance(sources, tuple) or not all(isinstance(s, SourceRef) for s in sources):
        raise CatalogError("must be a tuple of SourceRef (as load_catalog builds it)", entry="the Catalog given: sources")
    for i, ref in enumerate(sources):  # the texts the Assumptions sheet shows, read as an entry's would be
        entry = Entry(ref._asdict(), file=None, path=f"the Catalog given: sources[{i}]", error=CatalogError)
        if not isinstance(ref.file, str) or (ref.file and unsafe_problem(ref.file)):
            raise entry.error(f"must be the path of a catalog file (text), not {_short_repr(ref.file)}", "file")
        read_text(entry, "id"), read_text(entry, "source"), entry.date("as_of", past=True)
    rebuilt = store.build()
    _check_derived(catalog)
    normal: dict[str, tuple[Any, ...]] = {}
    for kind in _file_order_kinds():  # what an entry derives from its keys (price_usd from prices) agrees too
        attr = lists.get(kind, kind)
        entries = []
        for i, (given, built) in enumerate(zip(held_list(getattr(catalog, attr)), getattr(rebuilt, attr))):
            for f in dataclasses.fields(given):
                a, b = getattr(given, f.name), getattr(built, f.name)
                if f.name not in _NOT_FROM_KEYS and not _same(a, b):
                    raise CatalogError(f"{_short_repr(a)} is not what the entry's other fields give "
                                       f"({_short_repr(b)}), as the loader builds it from a file",
                                       entry=f"the Catalog given: {attr}[{i}] ({given.id}).{f.name}",
                                       hint="Change the keys it comes from (prices: for price_usd)."
                                       if f.name in ("price_usd", "base_price_usd") else
                                       "Give the value as load_catalog() builds it from the entry's keys.")
            entries.append(dataclasses.replace(given, **{f.name: getattr(built, f.name) for f in dataclasses.fields(given)
                                                         if f.init and f.name not in _NOT_FROM_KEYS}))
        normal[attr] = tuple(entries)
    return dataclasses.replace(catalog, **normal, sources=sources, schema_version=version)  # as the loader builds it


def _same(a: Any, b: Any) -> bool:
    """Whether ``a`` holds what ``b`` (as the loader builds it) holds, numbers compared as the plain int
    or float they hold (``Decimal('61.99')`` is the float 61.99 a file gives); one truth value (a numpy
    array compared gives many: not the same)."""
    try:
        return bool(_plain_values(a) == _plain_values(b))
    except Exception:  # any a caller's value raises as it is read (its own __iter__, __float__: h28b N1): not the same
        return False


def _plain_values(value: Any) -> Any:
    """``value`` with every number in it, in records and tuples too, as :func:`plain_number` gives it."""
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value),) + tuple(_plain_values(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):
        return tuple(_plain_values(v) for v in value)
    if isinstance(value, Mapping):  # a model's config: a list in it (as config.json gives) is the loader's tuple
        return {k: _plain_values(v) for k, v in value.items()}
    return plain_number(value)


def _check_derived(catalog: Any) -> None:
    """Check what :func:`load_catalog` derives rather than reads (for :func:`check_catalog`): ``files`` must be
    the files the loader reads for the one or two catalog directories they name (shipped or ``base`` first, then
    the overlay), ``sha256`` their :func:`content_sha256` as those files hold now, ``removed`` what the overlay
    removes, and ``warnings`` :class:`CatalogWarning` records of plain text.
    A catalog built in code has no files (``()``) and no digest (``''``).

    Raises:
        CatalogError: one line naming the field (``the Catalog given: files: ...``).
    """
    import re

    def bad(field_: str, problem: str, hint: str = "Use the Catalog as load_catalog() gives it.") -> CatalogError:
        return CatalogError(problem, entry=f"the Catalog given: {field_}", hint=hint)

    files, digest = getattr(catalog, "files", None), getattr(catalog, "sha256", None)
    if not isinstance(files, tuple) or not all(type(f) is str for f in files):
        raise bad("files", f"must be a tuple of file paths (str), not {_type_text(files)}")
    if not isinstance(digest, str) or (digest or files) and not re.fullmatch("[0-9a-f]{64}", digest):
        raise bad("sha256", f"must be the 64-hex-digit SHA-256 of the catalog files, not {_short_repr(digest)}")
    removed, warnings = getattr(catalog, "removed", None), getattr(catalog, "warnings", None)
    if not isinstance(removed, Mapping) or not all(type(k) is str and type(v) is str for k, v in removed.items()):
        raise bad("removed", f"must be a mapping of entry id (str) to 'file:line' (str), not {_type_text(removed)}")
    if not isinstance(warnings, tuple) or not all(
            isinstance(w, CatalogWarning) and all(type(x) is str for x in w) for w in warnings):
        raise bad("warnings", f"must be a tuple of CatalogWarning of text, not {_type_text(warnings)}")
    for name, texts in (("removed", [t for kv in removed.items() for t in kv]),
                        ("warnings", [t for w in warnings for t in w])):
        for text in texts:
            problem = unsafe_problem(text)
            if problem:
                raise bad(name, f"{_short_repr(text)} {problem}")
    if not files:
        if digest or removed:
            raise bad("sha256" if digest else "removed", "is set but the Catalog names no files it was read from")
        return
    dirs: list[str] = []
    names: set[str] = set()
    for f in files:
        parent, name = str(Path(f).parent), Path(f).name
        if not dirs or dirs[-1] != parent or name in names:  # a new folder, or the same one read again as overlay
            dirs.append(parent)
            names = set()
        names.add(name)
    if len(dirs) > 2:
        raise bad("files", f"name {len(dirs)} catalog directories in turn; the loader reads one and an overlay")
    try:
        again = _load_catalog(Path(dirs[1]) if len(dirs) == 2 else None, Path(dirs[0]))
    except CatalogError as exc:
        raise bad("files", f"are not a catalog the loader reads ({exc.one_line()})") from None
    if again.files != files:
        raise bad("files", f"{_short_repr(files)} are not the files the loader reads there "
                           f"({_short_repr(again.files)})")
    if digest != again.sha256:
        raise bad("sha256", f"{_short_repr(digest)} is not the SHA-256 of the catalog files ({again.sha256})",
                  "The files changed since the catalog was loaded, or the field was changed: load it again.")
    for i, ref in enumerate(getattr(catalog, "sources", ())):
        if ref.file and ref.file not in files:
            raise bad(f"sources[{i}] ({_short_repr(ref.id)}).file", f"{_short_repr(ref.file)} is none of the "
                      "catalog's files")
    if dict(removed) != dict(again.removed):
        raise bad("removed", f"{_short_repr(dict(removed))} is not what the overlay removes "
                             f"({_short_repr(dict(again.removed))})")


def _type_text(value: Any) -> str:
    """A value's type name, for a refusal of a derived field (the value itself may be long or unsafe)."""
    return type(value).__name__


def _short_repr(value: Any) -> str:
    """``ascii(value)`` cut to 120 characters: a refused value shown in one line, its escapes visible."""
    text = ascii(str.__str__(value) if isinstance(value, str) else value)  # a str subclass's text, not its repr
    return text if len(text) <= 120 else text[:117] + "..."


#: Record fields that say where an entry was read, not what it holds: not compared by :func:`check_catalog`.
_NOT_FROM_KEYS = frozenset({"file", "line", "where"})


def _empty(value: Any) -> bool:
    """None or an empty tuple (a field a file leaves out), tested by identity and type: ``value in (None, ())``
    would compare a numpy number with a tuple, which numpy answers with an array."""
    return value is None or (isinstance(value, tuple) and not value)


def _bytes_text(value: Any, *, per_s: bool, where: str) -> Any:
    """A size or rate field's value as a file writes it: a whole number of bytes (of any numeric type, 12884901888.0
    included) as '<n> B' ('<n> B/s'); a finite rate that is no whole number as '<float> B/s'; anything but a
    number as it is, for the field reader to refuse.

    Raises:
        CatalogError: a number that is no size or rate in bytes (a fraction of a byte, NaN, infinite), at
            ``where`` (the entry and field): the reader would answer that it 'has no unit'.
    """
    unit = " B/s" if per_s else " B"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return f"{value}{unit}"
    if per_s and math.isfinite(value):
        return f"{value!r}{unit}"
    what = "a finite number of bytes per second" if per_s else "a whole number of bytes"
    raise CatalogError(f"must be {what}, not {value!r}", entry=where,
                       hint="In a Catalog object sizes and rates are in bytes (a file writes them with a unit).")


def _entry_data(kind: Kind, record: Any, where: str = "") -> dict[str, Any]:
    """A record's values in the form a catalog file gives them (the inverse of :meth:`Kind.build` for the
    keys a file holds): sizes and rates as '<n> B' and '<n> B/s', tuples as lists, records as mappings."""
    import dataclasses

    def plain(v: Any, at: str) -> Any:  # at: the entry and field, for exempt_data's error
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return {f.name: (exempt_data(getattr(v, f.name), f"{at}.exempt") if f.name == "exempt"
                             else plain(getattr(v, f.name), at)) for f in dataclasses.fields(v)
                    if not _empty(getattr(v, f.name)) or (f.name == "exempt" and getattr(v, f.name) is None)}
        if isinstance(v, (tuple, list)):
            return [plain(x, f"{at}[{i}]") for i, x in enumerate(v)]
        return str.__str__(v) if isinstance(v, str) else v  # a str subclass as its text, read first (h31b N3)

    data: dict[str, Any] = {}
    for key, field_ in kind.schema().items():
        attr = field_.attr or key
        if not hasattr(record, attr):
            continue
        value = getattr(record, attr)
        if value is None or (isinstance(value, tuple) and not value and not field_.required):
            continue
        if attr.endswith(("_bytes", "_bytes_per_s")):
            value = _bytes_text(plain_number(value), per_s=attr.endswith("_per_s"), where=f"{where}.{key}")
        data[key] = plain(value, f"{where}.{key}")
    if data.get("prices"):
        for single in ("price_usd", "base_price_usd", "price_kind"):
            data.pop(single, None)
    return data
