"""Model entries (``models.yaml`` ``models:``): Hugging Face ``config.json`` keys kept as written.

A model's ``published_parameters``, when given, equals the count
:func:`planner.model.architecture.from_hf_config` makes from its ``config``. Importing this module
does no work and it keeps no state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.core.frozenmap import FrozenMap
from planner.core.fields import Entry
from planner.catalog.schema import Field, Kind, Merged, Parsed, later, read_positive_int, read_text


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """A model of ``models.yaml``: its Hugging Face ``config.json`` keys, kept as written.

    Attributes:
        config: the config.json keys and values, read-only (nested mappings read-only too, lists
            as tuples); :func:`planner.model.architecture.from_hf_config` parses it.
        published_parameters: a published total parameter count, when given; the count from
            ``config`` equals it exactly (checked when the catalog is loaded).
        file: the catalog file the entry's config came from, for messages.
        where: ``"<file>:<line>"`` of the ``config`` key, for messages.
    """

    id: str
    hf_id: str
    config: Mapping[str, Any] = field(hash=False)
    source: str
    as_of: str
    published_parameters: int | None = None
    parameters_source: str | None = None
    notes: str | None = None
    verification: str | None = None
    file: str = field(default="", compare=False)
    where: str = field(default="", compare=False)


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return FrozenMap({key: _freeze(v) for key, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _config(e: Entry, k: str) -> Mapping[str, Any]:
    child = e.child(k)
    assert child is not None  # a required key: child() raised when it is absent
    if not child.data:
        raise e.error("must hold the keys of the model's config.json, not an empty mapping", k)
    for key in child.data:
        if not isinstance(key, str):
            raise child.error(f"key {key!r} is not a name", None, "config.json keys are texts such as 'hidden_size'.")
    return _freeze(child.data)


#: A Hugging Face repository id: 'name' or 'namespace/name', each of letters, digits, '-', '_' and '.', at most
#: 96 characters, with no '--' or '..' (huggingface_hub utils/_validators.py validate_repo_id).
_HF_ID = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")


def _hf_id(e: Any, k: str) -> str:
    """A model's Hugging Face id, in the form the hub takes (:data:`_HF_ID`)."""
    value = read_text(e, k)
    if not _HF_ID.fullmatch(value) or "--" in value or ".." in value or value.endswith((".", "-")):
        raise e.error(f"{value!a} is not a Hugging Face model id", k,
                      "Write it as the hub's page does: 'namespace/name' (e.g. meta-llama/Llama-2-7b-hf), in ASCII "
                      "letters, digits, '-', '_' and '.', without spaces, '--' or '..'.")
    return value


#: ``models.yaml`` keys besides the common ones.
MODEL_FIELDS: dict[str, Field] = {
    "hf_id": Field(_hf_id),
    "config": Field(_config),
    "published_parameters": Field(read_positive_int(10**14, "parameters", "model"), required=False),
    "parameters_source": Field(read_text, required=False),
}


def _architecture(p: Parsed) -> Any:
    """The Architecture a model's ``config`` gives (planner.model.architecture.from_hf_config), checked
    when the catalog is read (a file or a Catalog object given to the API) rather than when the model is
    first used.

    Raises:
        CatalogError: the config is not one planner reads, at the key's own line and entry path
            (``models.yaml:11: models[0] (evil-7b).config.hidden_size: ...``; ``the Catalog given:
            models[0] (llama-2-7b).config.hidden_size`` for a Catalog object), the problem and hint as
            from_hf_config words them.
    """
    from planner.core.errors import ModelConfigError
    from planner.model.architecture import from_hf_config

    cfg = p.origin["config"]
    try:
        return from_hf_config(p.values["config"], None)
    except ModelConfigError as exc:
        key = exc.entry.split(".")[0] if exc.entry else None
        written = cfg.data.get("config")
        lines = getattr(written, "lines", None) or {}
        line = lines.get(key) if key else None
        where = cfg.key_path("config") or "config"
        raise cfg.error_cls(exc.problem, file=cfg.file, line=line or cfg.line_of("config"),
                            entry=f"{where}.{exc.entry}" if exc.entry else where, hint=exc.hint) from None


def _check_published_parameters(p: Parsed, arch: Any) -> None:
    """A model's published_parameters is a total the count from its config must equal exactly."""
    published = p.values.get("published_parameters")
    if published is None:
        return
    count = arch.parameters
    if count == published:
        return
    key = later(p, "published_parameters", "config")
    at = p.origin["published_parameters"]
    drop = "write 'published_parameters: null' in the overlay" if at is not p.entry else "drop published_parameters"
    hint = ("The two must be equal: check config against the model's config.json (a mistyped size such as "
            f"intermediate_size or num_hidden_layers changes the count), or {drop} if only a rounded total (such "
            "as '14.8B') is known.")
    if key == "config":
        hint = ("An overlay's config that changes the count describes another model: give it an id of its own, or "
                "write 'published_parameters: null' in the overlay; if it is meant to be the same model, check it "
                "against the model's config.json.")
        raise p.err(f"config counts {count:,} parameters, but published_parameters ({at.file}:"
                    f"{at.line_of('published_parameters')}) is {published:,} ({count - published:+,})", "config", hint)
    raise p.err(f"published_parameters {published:,} is not the count from config, {count:,} parameters "
                f"({count - published:+,})", "published_parameters", hint)


def _check_models(m: Merged) -> None:
    """Every model's config is one planner reads (:func:`_architecture`), its published_parameters the count
    from it, and its hf_id no other model's."""
    by_hf_id: dict[str, Any] = {}
    for p in m.entries["models"].values():
        _check_published_parameters(p, _architecture(p))
        other = by_hf_id.setdefault(p.values["hf_id"].lower(), p)  # the hub's ids compare without case
        if other is not p:  # --model ORG/NAME would pick one of the two without a word
            raise p.err(f"hf_id {p.values['hf_id']!r} is also model {other.id!r}'s", "hf_id",
                        f"A Hugging Face id names one model: give {p.id!r} its own, or overlay {other.id!r} itself.")


def _model_where(p: Parsed) -> dict[str, Any]:
    """A model record's ``file`` and ``where`` (the file and line of its ``config`` key)."""
    cfg = p.origin["config"]
    line = cfg.line_of("config")
    return {"file": cfg.file or "", "where": f"{cfg.file}:{line}" if line else (cfg.file or "")}


MODELS = Kind("models", ModelEntry, MODEL_FIELDS, check_merged=_check_models, extra=_model_where)
