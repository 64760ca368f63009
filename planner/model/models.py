"""Resolve the ``--model`` option to an :class:`~planner.model.architecture.Architecture`.

``--model`` accepts three forms, tried in this order:

1. a catalog id from ``catalog/models.yaml`` (``llama-2-7b``), matched without regard to case;
2. a path to a ``config.json``, or to a directory holding one (``./my-model``);
3. a Hugging Face hub id ``org/name`` (or a legacy single name such as ``gpt2``). A catalog entry
   whose ``hf_id`` is that hub id answers first (its config is curated and verified, so a plan does
   not change with what a machine happens to have cached); otherwise the ``config.json`` must
   already be in the local Hugging Face cache. The network is never used.

A path that exists on disk always wins over a hub id of the same spelling (a catalog id wins over
both). Names that match nothing raise :class:`~planner.core.errors.ModelConfigError` with a
did-you-mean over the catalog ids (over the catalog's hub ids for an ``org/name``) and a hint
naming the three accepted forms.

The Hugging Face cache layout (``huggingface_hub`` file-system cache, documented in its
"Understand caching" guide): ``<cache>/models--<org>--<name>/snapshots/<revision>/config.json``,
with ``<cache>/models--<org>--<name>/refs/main`` holding the revision ``main`` points to. The cache
directory is ``$HF_HUB_CACHE``, else ``$HUGGINGFACE_HUB_CACHE`` (the older name), else
``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``.

This module keeps no state and does no work at import time. It does not depend on the catalog
loader: a catalog is passed in as a plain mapping ``id -> entry``, where an entry is a mapping (or
an object with attributes) holding ``config`` (the config.json mapping), and optionally ``hf_id``,
``source`` (where the config was published), ``file`` (the catalog file it came from;
``catalog/models.yaml`` when absent) and ``where`` (``"<file>:<line>"`` of the config, for error
messages). :class:`planner.catalog.models.ModelEntry` objects fit this shape.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from planner.model.architecture import Architecture, from_hf_config
from planner.core.errors import ModelConfigError, did_you_mean
from planner.core.infile import SYMLINK_LOOP_HINT, FileProblem, read_input
from planner.core.names import clip_text, escape_unsafe
from planner.core.jsonio import load_json_mapping
from planner.core.yamlio import YamlProblem

#: What a catalog entry may be: a mapping with a ``config`` key, or an object with a ``config`` attribute.
ModelLike = Union[Mapping[str, Any], Any]

#: The catalog file named in ``ResolvedModel.source`` when an entry does not say where it came from.
DEFAULT_CATALOG_FILE = "catalog/models.yaml"

#: The three forms ``--model`` accepts, as shown in error hints.
ACCEPTED_FORMS = (
    "--model takes a catalog id (see 'planner catalog models'), a path to a config.json or to a directory "
    "holding one, or a Hugging Face id org/name whose config.json is already in the local Hugging Face cache."
)


#: :data:`ACCEPTED_FORMS` as a scenario's or workload's ``model:`` key takes them (a file's, or a mapping's a
#: script gives: no ``--model`` was written, h24b M4).
KEY_ACCEPTED_FORMS = ACCEPTED_FORMS.replace("--model takes", "model: takes", 1)

# Hugging Face repository names: letters, digits, '-', '_', '.'; an optional 'org/' in front.
#: A web address: a scheme (https://), or a Hugging Face page written without one (huggingface.co/org/name).
_WEB = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|(?:www\.)?(?:huggingface\.co|hf\.co)/)", re.IGNORECASE)
#: The repository of a Hugging Face page address: huggingface.co/ORG/NAME, then /tree/..., /blob/... or nothing.
_HF_PAGE = re.compile(r"^(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/(?!(?:models|datasets|spaces|docs)/)"
                      r"([A-Za-z0-9][A-Za-z0-9._-]*)/([A-Za-z0-9][A-Za-z0-9._-]*)(?:[/?#]|\Z)", re.IGNORECASE)


def is_web_address(name: str) -> bool:
    """Whether ``name`` reads as a web address (``https://...``, ``huggingface.co/org/name``), which planner
    never downloads from."""
    return bool(_WEB.match(name.strip()))


def _web_address_error(name: str, catalog: Mapping[str, Any]) -> ModelConfigError:
    """The error for a web address given as a model: the hub id a Hugging Face page names, and the catalog id
    whose ``hf_id`` it is, when one is."""
    page = _HF_PAGE.match(name.strip())
    if not page:
        return ModelConfigError(f"{name!r} is a web address, and planner downloads nothing", hint=ACCEPTED_FORMS)
    hub_id = f"{page.group(1)}/{page.group(2)}"
    known = next((key for key, entry in catalog.items() if isinstance(_field(entry, "hf_id"), str)
                  and _field(entry, "hf_id").lower() == hub_id.lower()), None)
    hint = (f"The catalog holds it: give its id {known} (or the hub id {hub_id})." if known else
            f"Give the hub id {hub_id} once its config.json is in the local Hugging Face cache (huggingface-cli "
            f"download {hub_id} config.json), or the path to a downloaded config.json.")
    return ModelConfigError(f"{name!r} is a web address, and planner downloads nothing; the page names the hub id "
                            f"{hub_id}", hint=hint)


#: The longest Hugging Face repository id, org/name (huggingface_hub.utils.validate_repo_id refuses a longer one).
MAX_HUB_ID_CHARS = 96
_HUB_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*\Z")  # \Z: no trailing newline


#: Names users type for a model the catalog holds under another id: a release that exists only as one
#: checkpoint. Meta released Llama 3.3 70B only instruction-tuned (meta-llama/Llama-3.3-70B-Instruct;
#: Meta's Llama 3.3 model card: "an instruction tuned generative model in 70B"), so 'Llama-3.3-70B' is it.
MODEL_ID_ALIASES = {"llama-3.3-70b": "llama-3.3-70b-instruct"}


@dataclass(frozen=True)
class ResolvedModel:
    """A model named on the command line, with its architecture and where it was read from.

    Attributes:
        id: the catalog id, the hub id, or (for a path) the name of the model's directory or file.
        architecture: the architecture read from the config.json keys.
        source: ``"catalog: catalog/models.yaml"``, the path of the config.json as the user wrote
            it, or ``"hf-cache: <path of the cached config.json>"``.
        hf_id: the Hugging Face repository id when known, else None.
    """

    id: str
    architecture: Architecture
    source: str
    hf_id: str | None = None


def resolve_model(
    name_or_path: str,
    catalog_models: Mapping[str, ModelLike] | None = None,
    *,
    hf_cache: Path | None = None,
) -> ResolvedModel:
    """Resolve a ``--model`` value to a :class:`ResolvedModel`.

    Args:
        name_or_path: a catalog id, a path to a config.json (or a directory holding one), or a
            Hugging Face hub id whose config.json is in the local cache; an os.PathLike (pathlib.Path) is
            always a path.
        catalog_models: catalog entries by id (see the module docstring for an entry's shape);
            None for no catalog.
        hf_cache: the Hugging Face hub cache directory; None to find it from the environment
            (:func:`hf_cache_dir`).

    Returns:
        The resolved model.

    Raises:
        ModelConfigError: the name matches nothing (with a did-you-mean and the accepted forms),
            the file cannot be read as a JSON object (with file and line), or the config is not a
            supported architecture (see :func:`planner.model.architecture.from_hf_config`).
    """
    catalog = dict(catalog_models or {})
    path_only = isinstance(name_or_path, os.PathLike)  # a pathlib.Path is a path, never a catalog or hub id
    if path_only:
        name_or_path = os.fspath(name_or_path)
    name = name_or_path.strip() if isinstance(name_or_path, str) else ""
    if not name:
        raise ModelConfigError("the model name is empty", hint=ACCEPTED_FORMS)
    if path_only:
        if _exists(name):
            return _from_path(name, _expand(name))
        raise ModelConfigError("no such file or directory", file=name, hint=ACCEPTED_FORMS)

    # 1. A catalog id (ids are lower-case by the catalog schema), or a name :data:`MODEL_ID_ALIASES` gives one.
    for key in (name, name.lower(), MODEL_ID_ALIASES.get(name.lower(), "")):
        if key in catalog:
            return _from_catalog(key, catalog[key])

    # 2. A path that exists, or that can only be meant as a path; a web address is neither (h18b minor f).
    if is_web_address(name) and not _exists(name):
        raise _web_address_error(name, catalog)
    loop = _link_problem(name)
    if loop is not None:
        raise ModelConfigError(loop, file=name, hint=SYMLINK_LOOP_HINT)
    if _exists(name):
        return _from_path(name, _expand(name))
    if _looks_like_path(name):
        raise ModelConfigError("no such file or directory", file=name, hint=ACCEPTED_FORMS)

    # 3. A hub id: a catalog entry with that hf_id, else the local Hugging Face cache.
    if _HUB_ID.match(name):
        for model_id, entry in catalog.items():
            hf_id = _field(entry, "hf_id")
            if isinstance(hf_id, str) and hf_id.lower() == name.lower():
                return _from_catalog(model_id, entry)
        cache = hf_cache if hf_cache is not None else hf_cache_dir()
        cached = cached_config_path(name, cache)
        if cached is not None:
            return _from_hf_cache(name, cached)
        if "/" in name:
            raise ModelConfigError(
                f"{clip_text(name)!r} is not in the catalog and its config.json is not in the local Hugging Face "
                f"cache {cache}",
                hint=_hint(name, catalog, download=name),
            )

    raise ModelConfigError(f"unknown model {clip_text(name)!r}", hint=_hint(name, catalog))  # its first 80 (h23b M4)


def hf_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """The Hugging Face hub cache directory, as ``huggingface_hub`` chooses it.

    Args:
        env: environment variables to read; None for ``os.environ``.

    Returns:
        ``$HF_HUB_CACHE``, else ``$HUGGINGFACE_HUB_CACHE``, else ``$HF_HOME/hub``, else
        ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub`` (user expanded; left
        unexpanded, a path that holds no cache, when there is no home directory).
    """
    env = os.environ if env is None else env
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(var):
            return _expand(env[var])
    if env.get("HF_HOME"):
        return _expand(env["HF_HOME"]) / "hub"
    if env.get("XDG_CACHE_HOME"):
        return _expand(env["XDG_CACHE_HOME"]) / "huggingface" / "hub"
    # without HOME and a password entry (a container's user id) '~' cannot be expanded: the relative
    # path '~/.cache/...' then names no cache (it is looked up, found missing, and the id is unknown)
    return _expand("~/.cache/huggingface/hub")


def cached_config_path(hub_id: str, cache: Path) -> Path | None:
    """The cached ``config.json`` of a hub repository, or None when it is not cached.

    The revision named by ``refs/main`` is used (as Transformers loads it offline); a ``refs/main`` that names
    no snapshot holding a config.json is refused. Without ``refs/main`` (a revision downloaded by its
    hash), the snapshot with the newest modification time that holds one (ties broken by name).

    Raises:
        ModelConfigError: ``refs/main`` names no cached snapshot with a config.json.

    Args:
        hub_id: ``org/name`` (or a legacy single name).
        cache: the hub cache directory (see :func:`hf_cache_dir`).
    """
    repo = cache / ("models--" + hub_id.replace("/", "--"))
    snapshots = repo / "snapshots"
    try:
        if not snapshots.is_dir():
            return None
    except OSError:  # a name past the file system's limit (ENAMETOOLONG: no hub id is that long), or unreadable
        return None
    ref = repo / "refs" / "main"
    try:
        revision = read_input(ref, max_bytes=4096).data.decode("utf-8").strip() if ref.is_file() else ""
    except (FileProblem, OSError, UnicodeDecodeError):
        revision = ""
    if ref.is_file():  # refs/main names the revision Transformers loads offline: that one, or none
        candidate = snapshots / revision / "config.json"
        if revision and re.fullmatch(r"[0-9A-Za-z._-]+", revision) and revision not in (".", "..") \
                and (candidate.is_file() or _exists(candidate)):
            return candidate  # one that is no regular file (a FIFO, a folder) is refused by the reader as such
        raise ModelConfigError(f"refs/main names the revision {revision[:64]!a}, which the cache holds no config.json "
                               "of, so it is not the snapshot the hub id names", file=str(ref),
                               hint=f"Download the model again (huggingface-cli download {hub_id}), or give the "
                                    "snapshot folder's path as the model.")
    found: list[tuple[float, str, Path]] = []
    try:
        children = list(snapshots.iterdir())
    except OSError:
        return None
    for snap in children:
        config = snap / "config.json"
        try:
            if snap.is_dir() and config.is_file():
                found.append((snap.stat().st_mtime, snap.name, config))
        except OSError:
            continue
    if not found:
        return None
    return max(found)[2]


# ----- the three forms ----------------------------------------------------------------

def _from_catalog(model_id: str, entry: ModelLike) -> ResolvedModel:
    file = _field(entry, "file") or DEFAULT_CATALOG_FILE
    config = _field(entry, "config")
    where = _field(entry, "where") or f"{file}: {model_id}: config"
    if not isinstance(config, Mapping):
        raise ModelConfigError("the catalog entry has no config mapping", file=where)
    hf_id = _field(entry, "hf_id")
    return ResolvedModel(
        id=model_id,
        architecture=from_hf_config(config, where),
        source=f"catalog: {file}",
        hf_id=hf_id if isinstance(hf_id, str) and hf_id else None,
    )


def _from_path(name: str, path: Path) -> ResolvedModel:
    shown = name
    if path.is_dir():
        path = path / "config.json"
        shown = str(Path(name) / "config.json")
        if not path.exists():
            raise ModelConfigError("the directory holds no config.json", file=name, hint=ACCEPTED_FORMS)
    config = _read_json(path, shown)
    # The model's directory names it (not resolved: cache snapshots are symlinks into blobs/).
    model_id = (path.absolute().parent.name or path.stem) if path.name == "config.json" else path.stem
    # the id is shown and written into the reports: a control or bidirectional character in the
    # directory's name is written as an escape (planner.core.names.escape_unsafe)
    model_id = escape_unsafe(model_id)
    return ResolvedModel(id=model_id, architecture=from_hf_config(config, shown), source=shown, hf_id=None)


def _from_hf_cache(hub_id: str, config_path: Path) -> ResolvedModel:
    shown = str(config_path)
    config = _read_json(config_path, shown)
    return ResolvedModel(
        id=hub_id, architecture=from_hf_config(config, shown), source=f"hf-cache: {shown}", hf_id=hub_id
    )


# ----- helpers ------------------------------------------------------------------------

def _read_json(path: Path, shown: str) -> dict:
    """Read a config.json, turning :class:`YamlProblem` into :class:`ModelConfigError`."""
    try:
        return load_json_mapping(path)
    except YamlProblem as exc:
        raise ModelConfigError(exc.problem, file=shown, line=exc.line, hint=exc.hint) from None


def _expand(name: str) -> Path:
    """``name`` as a path with ``~`` expanded (left as is when the user is unknown)."""
    try:
        return Path(name).expanduser()
    except RuntimeError:
        return Path(name)


def _exists(name: str | Path) -> bool:
    """Whether ``name`` names something (a file, a directory, a FIFO or a device; a link followed), without
    opening it; False for names the OS refuses."""
    try:
        return _expand(name).exists()
    except (OSError, ValueError):
        return False


def _link_problem(name: str) -> str | None:
    """'is a symlink loop (...)' when ``name`` is a symbolic link whose links lead round in a circle
    (os.stat fails with ELOOP, and Path.exists says only False); None otherwise."""
    try:
        path = _expand(name)
        if not os.path.islink(path):
            return None
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symlink loop (each link leads to another, never to a file)"
    except ValueError:
        pass
    return None


def _field(entry: ModelLike, key: str) -> Any:
    """A field of a catalog entry that is a mapping or an object with attributes."""
    if isinstance(entry, Mapping):
        return entry.get(key)
    return getattr(entry, key, None)


def _looks_like_path(name: str) -> bool:
    """True for names that can only be meant as a file path (so neither a catalog id nor a hub id)."""
    return (
        name.endswith(".json")
        or name.startswith(("/", "~", "."))
        or "\\" in name
        or name.count("/") > 1
    )


def _hint(name: str, catalog: Mapping[str, Any], download: str | None = None) -> str:
    """Close catalog ids (hub ids for a hub id), or all of them when there are few; then the accepted forms."""
    parts = []
    if download:  # a hub id: compare with the catalog's hub ids
        choices = [h for h in (_field(e, "hf_id") for e in catalog.values()) if isinstance(h, str) and h]
    else:
        choices = list(catalog)
    close = did_you_mean(name, choices)
    if not (close and close.startswith("Did you mean")):  # full-width 'ｌｌａｍａ-2-7b' is 'llama-2-7b' in NFKC
        import unicodedata

        folded = did_you_mean(unicodedata.normalize("NFKC", name), choices)
        close = folded if folded and folded.startswith("Did you mean") else close
    if close and not close.startswith("None of the "):  # ACCEPTED_FORMS already points at 'planner catalog models'
        parts.append(close)
    if download and len(download) > MAX_HUB_ID_CHARS:  # no command that echoes 25,000 characters (h23b M4)
        parts.append(f"A Hugging Face id is at most {MAX_HUB_ID_CHARS} characters (huggingface_hub's "
                     f"validate_repo_id); this one has {len(download):,}.")
    elif download:
        parts.append(
            f"Fetch it once with 'huggingface-cli download {download} config.json' where the hub is reachable."
        )
    parts.append(ACCEPTED_FORMS)
    return " ".join(parts)
