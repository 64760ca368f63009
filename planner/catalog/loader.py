"""The catalog: :func:`load_catalog` reads and checks ``catalog/*.yaml`` and an overlay into a :class:`Catalog`.

:func:`load_catalog` reads the shipped catalog directory (the ``catalog/`` folder next to the
``planner/`` package) and, when given, a user overlay directory (``--catalog DIR``). Every
field is read through :class:`planner.core.fields.Entry`, so a problem is reported as one
:class:`~planner.core.errors.CatalogError` naming the file, the line, the entry path (with the entry's
id, ``gpus[3] (rtx-4090).memory``), the problem and a hint. The schema is ``catalog/README.md`` (schema_version 1).
Each list's record, keys and checks live in the module of its file (:mod:`~planner.catalog.pcie`,
:mod:`~planner.catalog.gpus`, :mod:`~planner.catalog.ram`, :mod:`~planner.catalog.platforms`,
:mod:`~planner.catalog.network`, :mod:`~planner.catalog.cloud`, :mod:`~planner.catalog.models`, as a
:class:`~planner.catalog.schema.Kind`); this module finds the files, merges the overlay, runs the
kinds' checks and freezes the result.

Units inside the records follow :mod:`planner.core.units`: sizes are ``int`` bytes (names end in
``_bytes``), rates are bytes per second (``_bytes_per_s``), money is USD (``_usd``), power is
watts (``_w``), compute is dense TFLOPS (``_tflops``).

Overlay rules (``catalog/README.md``): every file of the overlay is read with the same schema.
An entry whose ``id`` matches a shipped entry of the same list replaces it key by key (only
the keys it gives; ``key: null`` clears an optional key); ``remove: true`` drops the shipped
entry; a new ``id`` adds an entry, which must then give every required key. An overlay entry
that changes a price must give its own ``source`` and ``as_of``; one that gives a price key (a value
or ``null``) without ``notes`` drops the shipped entry's notes, which describe the shipped price. A ``*.yaml``/``*.yml`` file
whose name is not a catalog file is an error (with a did-you-mean), in the shipped directory
and in the overlay; other files (``README.md``) are not read.

Cross-references are checked after both are merged: a cloud instance's ``gpu`` and a
platform's ``fixed_gpu`` must be GPU ids, a platform's ``memory_kind`` must be the kind of
some DIMM, and every ``pcie_gen`` must be a generation in ``pcie.yaml``. So are the rules
between fields that would leave an entry unusable: a platform's ``psu_w`` above its
``platform_w`` (and above its fixed GPUs' power plus ``platform_w``), ``dimm_slots`` at least
``memory_channels``, ``max_memory`` at least one of the smallest modules of its kind per
channel; a model's ``published_parameters`` equal to the count from its ``config``. Memory
sizes of DIMMs, platforms and cloud instances are binary: written in decimal units ('192 GB')
they are refused.

Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

import errno

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from planner.core.frozenmap import FrozenMap
from planner.core.errors import CatalogError, did_you_mean
from planner.core.fields import Entry
from planner.core.names import clip_text
from planner.core.yamlio import YamlProblem, read_mapping
from planner.catalog.cloud import INSTANCES, CloudInstance
from planner.catalog.devices import device_name_hint
from planner.catalog.fingerprint import content_fingerprint
from planner.catalog.gpus import GPUS, Gpu
from planner.catalog.models import MODELS, ModelEntry
from planner.catalog.network import NICS, SWITCHES, Nic, Switch
from planner.catalog.pcie import GENERATIONS, PcieGen
from planner.catalog.platforms import PLATFORMS, Platform
from planner.catalog.ram import DIMMS, Dimm
from planner.catalog.schema import (ENTRIES_HINT, ID_PATTERN, CatalogWarning, Field, Kind, Parsed, check_entry_count,
                                    read_id)

#: The catalog schema version this module reads.
SCHEMA_VERSION = 1

#: Catalog files and the entry lists each may hold, in load order.
CATALOG_FILES: dict[str, tuple[str, ...]] = {
    "pcie.yaml": ("generations",),
    "gpus.yaml": ("gpus",),
    "ram.yaml": ("dimms",),
    "platforms.yaml": ("platforms",),
    "network.yaml": ("nics", "switches"),
    "cloud.yaml": ("instances",),
    "models.yaml": ("models",),
}

#: Every entry list, in load order (the order of :data:`CATALOG_FILES`): its record, keys and checks.
KINDS: dict[str, Kind] = {k.name: k for k in (GENERATIONS, GPUS, DIMMS, PLATFORMS, NICS, SWITCHES, INSTANCES, MODELS)}

#: The ``planner catalog KIND`` listing that shows each list's ids (h14b #11: 'planner catalog' alone needs a KIND;
#: DIMMs are listed by 'planner catalog ram', NICs and switches by 'network', cloud instances by 'cloud'). PCIe
#: generations have no listing: their few ids are named in the hint itself.
KIND_LISTINGS = {"gpus": "gpus", "dimms": "ram", "platforms": "platforms", "nics": "network", "switches": "network",
                 "instances": "cloud", "models": "models"}

#: The keys that hold a price, in any list: an overlay that changes one gives its own provenance.
_PRICE_KEYS = ("price_usd", "base_price_usd", "cable_price_usd", "usd_per_hour", "spot_usd_per_hour",
               "spot_usd_per_hour_range")


def _with_entry_id(path: Path, where: str | None) -> str | None:
    """``where`` ('gpus[1].tdp_w', from a problem found while the YAML was read) with the entry's id added as
    every other catalog message writes it ('gpus[1] (rtx-3090).tdp_w', h18b #8), read from the file's node
    tree (yaml.compose builds no values, so the number refused is not read again); ``where`` unchanged when
    the entry has no valid id or the file cannot be composed."""
    import re

    import yaml

    m = re.match(r"([a-z_]+)\[([0-9]+)\]", where or "")
    if m is None:
        return where
    try:
        root = yaml.compose(path.read_text(encoding="utf-8-sig"))
        items = dict((k.value, v) for k, v in root.value)[m.group(1)].value
        entry = dict((k.value, v) for k, v in items[int(m.group(2))].value)
        raw_id = entry["id"].value
    except (OSError, UnicodeError, yaml.YAMLError, KeyError, IndexError, TypeError, AttributeError, ValueError):
        # a file the composer cannot walk to the entry keeps the index alone
        return where
    if not (isinstance(raw_id, str) and ID_PATTERN.match(raw_id)):
        return where
    return f"{m.group(0)} ({raw_id}){where[m.end():]}"


class SourceRef(NamedTuple):
    """Where one catalog entry's figures came from: (file, id, source, as_of)."""

    file: str
    id: str
    source: str
    as_of: str


@dataclass(frozen=True, slots=True)
class Catalog:
    """Everything the planner knows about hardware, prices and models.

    Attributes:
        schema_version: always :data:`SCHEMA_VERSION`.
        files: the files read, shipped first, then the overlay's.
        sources: one :class:`SourceRef` per entry, in catalog order.
        sha256: :func:`content_sha256` of ``files`` ('' for a catalog built in code).
        removed: shipped entries an overlay removed: id -> 'file:line' of its 'remove: true'.
        warnings: :class:`~planner.catalog.schema.CatalogWarning` for values that load but are probably typos (a cloud
            instance's spot price above its on-demand price).
        checked: the :func:`~planner.catalog.fingerprint.content_fingerprint` of the content the loader checked
            (not an init argument; '' for a Catalog made in code).
    """

    schema_version: int
    gpus: tuple[Gpu, ...] = ()
    dimms: tuple[Dimm, ...] = ()
    pcie: tuple[PcieGen, ...] = ()
    platforms: tuple[Platform, ...] = ()
    nics: tuple[Nic, ...] = ()
    switches: tuple[Switch, ...] = ()
    instances: tuple[CloudInstance, ...] = ()
    models: tuple[ModelEntry, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    files: tuple[str, ...] = ()
    sha256: str = ""
    removed: Mapping[str, str] = field(default_factory=dict)
    warnings: tuple[CatalogWarning, ...] = ()
    #: The fingerprint of what the loader checked, set on the object :func:`load_catalog` returns; a copy made in
    #: code (``dataclasses.replace``) starts '', and one changed in place (``object.__setattr__``) no longer gives
    #: it, so the API checks either as the loader would (planner.api.inputs.catalog_of), and a catalog read from
    #: files and left as read is not checked twice (h23b N1: trust the content, not the object).
    checked: str = field(default="", init=False, repr=False, compare=False)

    def gpu(self, gpu_id: str) -> Gpu:
        """The GPU with this id. Raises CatalogError with a did-you-mean when there is none."""
        return _lookup(self.gpus, gpu_id, "GPU", "gpus.yaml", self.removed)

    def dimm(self, dimm_id: str) -> Dimm:
        """The DIMM with this id. Raises CatalogError with a did-you-mean when there is none."""
        return _lookup(self.dimms, dimm_id, "DIMM", "ram.yaml", self.removed)

    def platform(self, platform_id: str) -> Platform:
        """The platform with this id. Raises CatalogError with a did-you-mean when there is none."""
        return _lookup(self.platforms, platform_id, "platform", "platforms.yaml", self.removed)

    def nic(self, nic_id: str) -> Nic:
        """The NIC with this id. Raises CatalogError with a did-you-mean when there is none."""
        return _lookup(self.nics, nic_id, "NIC", "network.yaml", self.removed)

    def switch(self, switch_id: str) -> Switch:
        """The switch with this id. Raises CatalogError with a did-you-mean when there is none."""
        return _lookup(self.switches, switch_id, "switch", "network.yaml", self.removed)

    def instance(self, instance_id: str) -> CloudInstance:
        """The cloud instance with this catalog id. Raises CatalogError when there is none."""
        return _lookup(self.instances, instance_id, "cloud instance", "cloud.yaml",
                       self.removed)

    def model(self, model_id: str) -> ModelEntry:
        """The model with this catalog id. Raises CatalogError with a did-you-mean when there is none."""
        return _lookup(self.models, model_id, "model", "models.yaml", self.removed)

    def pcie_gen(self, gen: int) -> PcieGen:
        """The PCIe generation ``gen`` (e.g. 4). Raises CatalogError when the catalog lacks it."""
        for g in self.pcie:
            if g.gen == gen:
                return g
        gens = [str(g.gen) for g in self.pcie]
        raise CatalogError(f"unknown PCIe generation {gen!r}", hint=did_you_mean(str(gen), gens))

    def dimms_of_kind(self, kind: str) -> tuple[Dimm, ...]:
        """The DIMMs of one kind (``ddr5-rdimm``...), smallest first."""
        return tuple(sorted((d for d in self.dimms if d.kind == kind), key=lambda d: (d.size_bytes, d.id)))


def purchasable_gpus(catalog: Catalog, allowed: Iterable[str] | None = None, excluded: Iterable[str] = (),
                     vendors: Iterable[str] | None = None) -> list[Gpu]:
    """The catalog's GPUs a plan may buy under a scenario's filters (``allowed_gpus``,
    ``excluded_gpus``, ``vendors``; None: no filter). A GPU without a purchase price (a cloud-only
    part such as the A10G) is left out unless ``allowed`` names it, or it is a discontinued card
    that has prices (its launch list price not paid under ``price: street``), where the solver's
    price rule then says why it is not bought."""
    allow = None if allowed is None else set(allowed)
    skip = set(excluded)
    kinds = None if vendors is None else set(vendors)
    return [g for g in catalog.gpus if (allow is None or g.id in allow) and g.id not in skip
            and (kinds is None or g.vendor in kinds)
            and (g.price_usd is not None or allow is not None or bool(g.discontinued and g.prices))]


def removal_hint(removed: Mapping[str, str], item_id: Any, file: str) -> str | None:
    """The hint for an id the catalog overlay removed from ``file`` ('gpus.yaml': ``remove: true`` there), or None:
    "The catalog overlay removes it (r/gpus.yaml:3): drop the removal there, or the id here." Said instead of a
    "Did you mean" another id wherever an id is looked up (--gpu, --model, a scenario's model and constraints).

    Args:
        removed: :attr:`Catalog.removed`, id -> 'file:line' of its removal (of any kind: the file tells which).
    """
    where = removed.get(item_id) if isinstance(item_id, str) else None
    if where is None or Path(where.rsplit(":", 1)[0]).name != file:
        return None
    return f"The catalog overlay removes it ({where}): drop the removal there, or the id here."


def _lookup(items: tuple[Any, ...], item_id: str, what: str, file: str,
            removed: Mapping[str, str] | None = None) -> Any:
    for item in items:
        if item.id == item_id:
            return item
    ids = [i.id for i in items]
    listing = {"gpus.yaml": "gpus", "ram.yaml": "ram", "platforms.yaml": "platforms", "network.yaml": "network",
               "cloud.yaml": "cloud", "models.yaml": "models"}[file]
    # a GPU named as nvidia-smi and torch print it, 'NVIDIA H100 80GB HBM3': its id (h26b M2)
    driver = device_name_hint(item_id, ids) if what == "GPU" and isinstance(item_id, str) else None
    hint = removal_hint(removed or {}, item_id, file) or driver or (
        did_you_mean(str(item_id), ids, listing=listing) if ids else f"The catalog has no {file} entries.")
    raise CatalogError(f"unknown {what} {clip_text(item_id)!r}", hint=hint)  # its first 80 (h24b M6)


# ----- loading ------------------------------------------------------------------------------

def default_catalog_dir() -> Path:
    """The shipped catalog: the ``catalog/`` directory next to the ``planner/`` package in a source
    checkout (also an editable install), else the copy a regular install puts in the package as
    ``planner/catalog_data`` (pyproject.toml maps it)."""
    here = Path(__file__).resolve().parent.parent  # the planner package
    checkout = here.parent / "catalog"
    installed = here / "catalog_data"
    return checkout if checkout.is_dir() or not installed.is_dir() else installed


def load_catalog(overlay: Path | None = None, base: Path | None = None) -> Catalog:
    """Read the shipped catalog, apply a user overlay, check everything, return a :class:`Catalog`.

    Args:
        overlay: a directory of catalog files (``--catalog DIR``) merged over the base, or None.
        base: the shipped catalog directory; default :func:`default_catalog_dir`.

    Raises:
        CatalogError: a missing directory, an unreadable or malformed file, an unknown file
            name, key or id (with a did-you-mean), a missing key, a wrong type, a size or rate
            without its unit, a zero, negative, NaN, infinite or absurd number, a duplicate id,
            a price without source or as_of, a schema_version other than 1, a memory size of a
            DIMM, platform or instance in decimal units, fields that leave a platform unbuildable
            (see the module docstring), a model whose config does not count its
            published_parameters. The message gives the file, line and entry path.
    """
    return _load_catalog(overlay, base)


#: The hint of an overlay folder that cannot be one; its path goes in ``file=``, which every output escapes (h22b #1).
_OVERLAY_HINT = ("The catalog overlay (--catalog DIR; catalog= in Python) is a directory holding overlay files such "
                 "as gpus.yaml (catalog/README.md).")


def _load_catalog(overlay: Path | None, base: Path | None) -> Catalog:
    """:func:`load_catalog`'s work."""
    base_dir = Path(base) if base is not None else default_catalog_dir()
    if base is not None:
        from planner.catalog.basedir import check_base

        check_base(base_dir)
    elif not base_dir.is_dir():
        raise CatalogError(
            "the shipped catalog directory does not exist", file=str(base_dir),
            hint="The shipped catalog is the 'catalog/' folder beside the 'planner/' package (a regular install "
            "copies it into the package as planner/catalog_data); reinstall with 'pip install .' or "
            "'pip install -e .'.",
        )
    files = [(name, path, False) for name, path in _catalog_files(base_dir, overlay=False)]
    if overlay is not None:
        overlay_dir = Path(overlay)
        try:
            overlay_dir.stat()
        except OSError as exc:  # a name past the system's limits (ENAMETOOLONG), a loop of links, no access
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                raise CatalogError(f"cannot be read ({exc.strerror})", file=str(overlay_dir),
                                   hint=_OVERLAY_HINT) from None
        if not overlay_dir.exists():
            from planner.core.cwd import CWD_GONE, CWD_HINT, lost_relative

            if lost_relative(overlay_dir):  # a relative --catalog under a removed current folder
                raise CatalogError(f"cannot be found: {CWD_GONE}, and the path is relative to it",
                                   file=str(overlay_dir), hint=CWD_HINT + ".")
            raise CatalogError("no such catalog directory", file=str(overlay_dir), hint=_OVERLAY_HINT)
        if not overlay_dir.is_dir():
            raise CatalogError("is a file, not a directory", file=str(overlay_dir), hint=_OVERLAY_HINT)
        overlay_files_ = _catalog_files(overlay_dir, overlay=True)
        if not overlay_files_:
            raise CatalogError("holds no catalog files", file=str(overlay_dir),
                               hint="Valid names: " + ", ".join(CATALOG_FILES) + ".")
        files += [(name, path, True) for name, path in overlay_files_]
    return _checked_catalog(files)


def _checked_catalog(files: list[tuple[str, Path, bool]]) -> Catalog:
    """The Catalog of ``files`` ((catalog file name, path, read as overlay), in load order), read and checked
    (each time: no cache is kept here; a caller that loads many times may go through
    :func:`planner.catalog.memo.remembered` with a memo of its own, as the test suite does)."""
    return _read_all(files, [None] * len(files))


def _read_all(files: list[tuple[str, Path, bool]], sources: list[Any]) -> Catalog:
    """Read and check ``files`` in order (each one's bytes as already read in ``sources``, or None to read it
    here, where its problem is raised), and build the Catalog."""
    store = _Store()
    for (name, path, over), src in zip(files, sources):
        store.read_file(name, path, overlay=over, source=src)
    return store.build()


def overlay_files(directory: Path) -> list[tuple[str, Path]]:
    """The catalog files of the overlay folder ``directory`` as ``--catalog`` reads them: (name, path) in load
    order.

    Raises:
        CatalogError: the folder cannot be listed, or holds a ``*.yaml``/``*.yml`` file of another name
            ('gpus.yml', 'GPUS.yaml'), which the loader refuses.
    """
    return _catalog_files(directory, overlay=True)


def _catalog_files(directory: Path, *, overlay: bool) -> list[tuple[str, Path]]:
    """The catalog files of ``directory`` in load order; unknown ``*.yaml`` names are errors."""
    try:
        present = sorted(p for p in directory.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        raise CatalogError(f"cannot be listed ({exc.strerror or exc})", file=str(directory)) from exc
    known = {p.name: p for p in present if p.name in CATALOG_FILES}
    for p in present:
        if p.name not in CATALOG_FILES and Path(p.name.strip()).suffix.lower() in (".yaml", ".yml"):
            hint = did_you_mean(p.name, CATALOG_FILES, n=1) or ""
            if p.name.strip() in CATALOG_FILES:  # "cloud.yaml " (a trailing space): loaded by no one
                hint = f"Did you mean '{p.name.strip()}'?"
            if p.suffix.lower() == ".yml" and p.stem + ".yaml" in CATALOG_FILES:
                hint = f"Did you mean '{p.stem}.yaml'?"
            where = "An overlay" if overlay else "A catalog"
            raise CatalogError(
                f"{p.name!r} is not a catalog file name", file=str(p),
                hint=(hint + " " if hint else "") + f"{where} directory holds only " + ", ".join(CATALOG_FILES) + ".",
            )
    out = [(name, known[name]) for name in CATALOG_FILES if name in known]
    if not out and not overlay:
        raise CatalogError("holds no catalog files", file=str(directory),
                           hint="Valid names: " + ", ".join(CATALOG_FILES) + ".")
    return out


# ----- merging ------------------------------------------------------------------------------

class _Store:
    """Collects entries per list while files are read; :meth:`build` checks and freezes them."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Parsed]] = {kind: {} for kind in KINDS}
        self.removed: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
        self.files: list[str] = []
        self.digests: list[str] = []  # the SHA-256 of each file's bytes, from the one read that parsed it

    # -- reading one file --
    def read_file(self, name: str, path: Path, *, overlay: bool, source: Any = None) -> None:
        """Read the catalog file ``name`` at ``path`` into the store: its bytes as already read (``source``, an
        planner.core.infile.InputFile) or, with None, read here."""
        shown = str(path)
        try:
            lists = CATALOG_FILES[name]
            data, source = read_mapping(path, source=source, max_nodes=None, hint=f"A {name} is a mapping with 'schema_version: {SCHEMA_VERSION}' and "
                                           f"{'a ' if len(lists) == 1 else ''}"
                                           f"{' and '.join(repr(k + ':') for k in lists)} "
                                           f"list{'s' if len(lists) > 1 else ''} (catalog/README.md).")
        except YamlProblem as exc:
            raise CatalogError(exc.problem, file=shown, line=exc.line, entry=_with_entry_id(path, exc.path),
                               hint=exc.hint) from None
        self.files.append(shown)
        self.digests.append(source.sha256)
        root = Entry(data, file=shown, path="", error=CatalogError, line=1)
        lists = CATALOG_FILES[name]
        if "schema_version" not in data:
            raise root.error("missing required key 'schema_version'", None,
                             f"Add 'schema_version: {SCHEMA_VERSION}' at the top of the file.")
        root.check_keys(("schema_version", *lists))
        version = root.int("schema_version")
        if version != SCHEMA_VERSION:
            raise root.error(f"version {version} is not supported", "schema_version",
                             f"This planner reads schema_version {SCHEMA_VERSION} (catalog/README.md).")
        if not any(k in data for k in lists):
            raise root.error(f"has no {' or '.join(repr(k) for k in lists)} list", None,
                             f"A {name} holds its entries under {' and '.join(repr(k) + ':' for k in lists)}.")
        ids_in_file: dict[str, int | None] = {}
        for kind in lists:
            check_entry_count(data.get(kind), lambda problem: root.error(problem, kind, ENTRIES_HINT))
            for item in root.children(kind, None):
                self._read_entry(kind, item, overlay=overlay, ids_in_file=ids_in_file)

    def _read_entry(self, kind: str, e: Entry, *, overlay: bool, ids_in_file: dict[str, int | None]) -> None:
        spec = KINDS[kind]
        fields = spec.schema()
        raw_id = e.data.get("id")
        if isinstance(raw_id, str) and ID_PATTERN.match(raw_id):
            # messages name the entry by its place in the file and its id: 'gpus[3] (rtx-4090).memory'
            e.path = f"{e.path} ({raw_id})"
        e.check_keys((*spec.keys, "remove") if overlay else spec.keys, required=("id",))
        entry_id = read_id(e, "id")
        if entry_id in ids_in_file:
            first = ids_in_file[entry_id]
            raise e.error(f"duplicate id {entry_id!r}" + (f" (first on line {first})" if first else ""), "id",
                          "Ids are unique within a file; rename or remove one.")
        ids_in_file[entry_id] = e.line_of("id")
        table = self.entries[kind]
        remove = e.bool("remove") if "remove" in e.data else False
        if remove:
            self._remove(kind, entry_id, e)
            return
        existing = table.get(entry_id) if overlay else None
        if existing is not None:
            self._replace(kind, existing, e, fields)
            return
        parsed = Parsed(kind=kind, id=entry_id, entry=e)
        self._parse_keys(parsed, e, fields)
        missing = [k for k in spec.required if k not in parsed.values]
        if missing:
            hint = None
            if overlay:
                close = did_you_mean(entry_id, table) if table else None
                hint = (f"No shipped {kind} entry has id {entry_id!r}; an overlay entry with a new id must give "
                        "every required key." + (" " + close if close and close.startswith("Did") else ""))
            raise e.error(f"missing required key {missing[0]!r}", None, hint)
        table[entry_id] = parsed

    def _remove(self, kind: str, entry_id: str, e: Entry) -> None:
        """An overlay entry with 'remove: true' drops the shipped entry."""
        table = self.entries[kind]
        extra = [k for k in e.data if k not in ("id", "remove", "notes")]
        if extra:
            raise e.error(f"an entry with 'remove: true' takes only 'id', not {extra[0]!r}", extra[0])
        if entry_id not in table:
            raise e.error(f"there is no {kind} entry {entry_id!r} to remove", "id",
                          did_you_mean(entry_id, table, listing=KIND_LISTINGS.get(kind)))
        del table[entry_id]
        self.removed[kind][entry_id] = e

    def _replace(self, kind: str, existing: Parsed, e: Entry, fields: Mapping[str, Field]) -> None:
        """An overlay entry with a shipped id replaces it key by key; a changed price must come with its
        own provenance (:func:`_check_overlay_prices`)."""
        _check_overlay_prices(e, existing, fields)
        shipped = dict(existing.values)
        # a list of dated prices and the older single price are two forms of the same key: the
        # overlay's form replaces the shipped one (planner.catalog.prices)
        single = [k for k in ("price_usd", "base_price_usd") if k in fields]
        if "prices" in e.data:
            for k in single + ["price_kind"]:
                existing.values.pop(k, None)
                existing.origin.pop(k, None)
        elif any(k in e.data for k in single):
            existing.values.pop("prices", None)
            existing.origin.pop("prices", None)
        if any(k in e.data for k in (*_PRICE_KEYS, "prices")) and "notes" not in e.data:
            # the shipped notes describe the shipped price (a platform's parts list adds up to it, the
            # quote line shows it): an overlay that sets a price (or clears one) without notes of its
            # own does not keep them
            existing.values.pop("notes", None)
            existing.origin.pop("notes", None)
        self._parse_keys(existing, e, fields)
        check = KINDS[kind].check_overlay
        if check is not None:
            check(e, shipped)
        existing.entry = e

    @staticmethod
    def _parse_keys(parsed: Parsed, e: Entry, fields: Mapping[str, Field]) -> None:
        for key in e.data:
            if key == "remove":
                continue
            spec = fields[key]
            if e.data[key] is None and not spec.required:
                parsed.values.pop(key, None)  # 'key: null' clears an optional key
                parsed.origin.pop(key, None)
                continue
            parsed.values[key] = spec.read(e, key)
            parsed.origin[key] = e

    def file_rank(self, file: str | None) -> int:
        """Reading order of ``file`` (overlays after the base catalog); -1 when not read."""
        return self.files.index(file) if file in self.files else -1

    def gpu_ref_hint(self, gpu_id: str) -> str:
        """The hint for a reference to a GPU id the catalog lacks: what else names a GPU the overlay
        removed, or a did-you-mean."""
        removed = self.removed["gpus"].get(gpu_id)
        if removed is not None:
            refs = ([f"platforms.yaml {p.id}" for p in self.entries["platforms"].values()
                     if p.values.get("fixed_gpu") == gpu_id]
                    + [f"cloud.yaml {p.id}" for p in self.entries["instances"].values() if p.values["gpu"] == gpu_id])
            named = (f"{len(refs)} entries name it ({', '.join(refs)}): remove them as well"
                     if len(refs) > 1 else "remove this entry as well")
            return (f"The overlay removes GPU {gpu_id!r} ({removed.file}:{removed.line_of('remove')}); {named}, "
                    "or keep the GPU and leave it out of a plan with the scenario's constraints.excluded_gpus.")
        return did_you_mean(gpu_id, list(self.entries["gpus"])) or "gpus.yaml lists no GPUs."

    # -- checking and freezing --
    def build(self) -> Catalog:
        """Check every entry, then every list against the others; freeze the records into a Catalog."""
        e = self.entries
        for kind, table in e.items():
            check = KINDS[kind].check
            if check is not None:
                for p in table.values():
                    check(p)
        for kind in KINDS.values():
            if kind.check_merged is not None:
                kind.check_merged(self)
        warnings = tuple(w for kind in KINDS.values() if kind.warnings is not None
                         for p in e[kind.name].values() for w in kind.warnings(p))
        records: dict[str, tuple[Any, ...]] = {kind: tuple(KINDS[kind].build(p) for p in table.values())
                                               for kind, table in e.items()}
        sources = tuple(
            SourceRef(p.origin["source"].file or "", p.id, p.values["source"], p.values["as_of"])
            for kind in _file_order_kinds() for p in e[kind].values()
        )
        cat = Catalog(
            schema_version=SCHEMA_VERSION,
            gpus=records["gpus"],
            dimms=records["dimms"],
            pcie=tuple(sorted(records["generations"], key=lambda g: g.gen)),
            platforms=records["platforms"],
            nics=records["nics"],
            switches=records["switches"],
            instances=records["instances"],
            models=records["models"],
            sources=sources,
            files=tuple(self.files),
            sha256=digests_sha256(zip(self.files, self.digests)),
            removed=FrozenMap({i: f"{r.file}:{r.line_of('remove')}" for table in self.removed.values()
                                      for i, r in table.items()}),
            warnings=warnings,
        )
        object.__setattr__(cat, "checked", content_fingerprint(cat))  # frozen: set once, here
        return cat


def check_entry(kind: str, data: Mapping[str, Any], *, file: str | None = None, path: str = "") -> None:
    """Run the loader's own checks of one new entry of ``kind`` (a key of :data:`KINDS`: 'instances',
    'gpus', ...) as a catalog file would hold it: its keys, each field's reader and the kind's per-entry
    check; not the checks across entries (duplicate ids, references), which need the whole catalog.

    Used where planner writes catalog entries (planner.catalog.skypilot) to leave out one the loader
    would refuse before anything is written.

    Raises:
        CatalogError: the loader's one line, located at ``file`` and ``path``.
    """
    store = _Store()
    e = Entry(data, file=file, path=path, error=CatalogError)
    store._read_entry(kind, e, overlay=False, ids_in_file={})
    check = KINDS[kind].check
    if check is not None:
        for p in store.entries[kind].values():
            check(p)


def _check_overlay_prices(e: Entry, existing: Parsed, fields: Mapping[str, Field]) -> None:
    """An overlay entry that changes a shipped one keeps one source, date and price_kind per entry:
    a changed price gives its own source, as_of and price_kind and restates every other price; a new
    source, date or kind without a new price is refused. A ``prices:`` list carries a source, date
    and kind per price, so an entry that gives one is not held to these rules."""
    if "prices" in e.data:
        return
    prices = [k for k in _PRICE_KEYS if e.data.get(k) is not None]
    if prices and not ("source" in e.data and "as_of" in e.data):
        raise e.error(
            "a changed price needs its own source and as_of", prices[0],
            "Add 'source:' (where the price came from) and 'as_of:' (its date) to this overlay entry.",
        )
    if prices and "price_kind" in fields and "price_kind" not in e.data:
        # Keeping the shipped kind would label a quoted price 'msrp' or 'estimate' on the quote.
        raise e.error(
            "a changed price needs its own price_kind", prices[0],
            "Add 'price_kind:' quote (a vendor's quote), street, estimate or msrp to this overlay entry.",
        )
    has_price = any(existing.values.get(k) is not None for k in _PRICE_KEYS)
    if "price_kind" in e.data and has_price and not prices:
        # the kind describes the price: a new kind on the shipped price would relabel it
        raise e.error("changes price_kind but not the price it describes", "price_kind",
                      "Restate the price with it (price_usd, source, as_of), or leave price_kind out.")
    others = [k for k in _PRICE_KEYS if existing.values.get(k) is not None and k not in e.data]
    if prices and others:
        # one source, date and kind per entry: every price of it must come from the new source
        one = "one source, date and price_kind" if "price_kind" in fields else "one source and date"
        raise e.error(f"changes {prices[0]} but not {others[0]}: the entry has {one} for all its prices",
                      prices[0],
                      f"Restate {others[0]} with this source too (the shipped value if it still holds).")
    restated = [k for k in ("source", "as_of") if k in e.data]
    if restated and has_price and not prices:
        # An entry has one source and date, which the quote prints for its price.
        shipped = [k for k in _PRICE_KEYS if existing.values.get(k) is not None]
        shown = f"{shipped[0]} {_price_text(existing.values[shipped[0]])} of {existing.values['as_of']}"
        # the keys this entry's kind has: cloud rows have usd_per_hour and no price_kind (h18b #2)
        keys = ", ".join([*shipped, "price_kind"] if "price_kind" in fields else shipped)
        where = "the quote" if "price_kind" in fields else "the cost tables"
        raise e.error(
            f"changes {' and '.join(restated)} but not the price: {where} would show them for the "
            f"shipped price ({shown})", restated[0],
            f"Restate the price with your source and date ({keys}), or drop source/as_of "
            "from this overlay entry and say where your change comes from in 'notes:'.",
        )


def _price_text(value: object) -> str:
    """A shipped price as its file writes it: cents when it has at most two decimals (1,599.00),
    else every digit it has (0.526 stays 0.526, h18b #2); a (low, high) range as '[low, high]'."""
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_price_text(v) for v in value) + "]"
    if isinstance(value, (int, float)) and round(value, 2) == value:
        return f"{value:,.2f}"
    return f"{value:,}" if isinstance(value, (int, float)) else str(value)


def content_sha256(files: Iterable[str | Path]) -> str:
    """A SHA-256 that identifies a catalog's content: '' when a file cannot be read.

    The digest of the text ``sha256sum`` prints for the files in the order they were read (one line
    '<hex digest of the file>  <file name without directories>' each), so
    ``sha256sum pcie.yaml gpus.yaml ... | sha256sum`` in the catalog directory reproduces it; it
    changes whenever an entry, a price or an overlay file changes, not when the catalog moves.
    """
    pairs = []
    for f in files:
        try:
            pairs.append((f, hashlib.sha256(Path(f).read_bytes()).hexdigest()))
        except OSError:
            return ""
    return digests_sha256(pairs)


def digests_sha256(files: Iterable[tuple[str | Path, str]]) -> str:
    """:func:`content_sha256` from (file, hex SHA-256 of its bytes) pairs already computed (the
    loader hashes each file from the bytes it parsed, so a file is read once); '' for none."""
    lines = [f"{digest}  {Path(f).name}\n" for f, digest in files]
    return hashlib.sha256("".join(lines).encode()).hexdigest() if lines else ""


def _file_order_kinds() -> list[str]:
    return [kind for lists in CATALOG_FILES.values() for kind in lists]
