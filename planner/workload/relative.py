"""Relative model paths in a scenario or workload file, read from that file's directory (docs/scenarios.md,
``model``): the same file names the same model wherever planner runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from planner.catalog.loader import Catalog
from planner.core.errors import InputError, ScenarioError
from planner.core.fields import Entry
from planner.model.architecture import Architecture
from planner.model.models import is_web_address


def _is_relative_path(name: str) -> bool:
    """Whether ``name`` could be a relative path (not absolute, not '~/...', not empty)."""
    name = name.strip()
    if not name or name.startswith("~"):
        return False
    try:
        return not Path(name).is_absolute()
    except (OSError, ValueError):  # pragma: no cover - a name the OS refuses
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _looks_like_path(name: str) -> bool:
    """True for names that can only be meant as a path, not a hub id (planner.model.models' rule)."""
    return name.endswith(".json") or name.startswith(".") or "\\" in name or name.count("/") > 1


def relative_model_resolver(resolver: Any, catalog: Catalog, base_dir: Path, *, kind: str = "scenario") -> Any:
    """``resolver`` (planner.workload.inputs.make_resolver) with relative model paths read from ``base_dir``.

    A catalog id (matched as planner.model.models matches it, regardless of case), an absolute path
    and '~/...' are passed on unchanged. Any other value that names an existing file or directory
    under ``base_dir`` is resolved there. Otherwise the value is resolved as before (a hub id in
    the local cache), except that a path that exists only relative to the current directory is
    refused with the path to write; when it fails, the message says where the path was looked
    for (unless the value is a bare name without '/', far more often a mistyped catalog id).

    Args:
        kind: the file whose directory ``base_dir`` is, as messages name it ('scenario', 'workload').
    """
    ids = {m.id for m in catalog.models}

    def resolve(name: str, entry: Entry) -> tuple[str, str, Architecture]:
        text = name.strip() if isinstance(name, str) else name
        if not isinstance(text, str) or text in ids or text.lower() in ids or not _is_relative_path(text) \
                or (is_web_address(text) and not _exists(base_dir / text)):
            return resolver(name, entry)
        candidate = base_dir / text
        if _exists(candidate) or os.path.islink(candidate):  # a symlink loop too: the resolver says so
            return resolver(str(candidate), entry)
        looked = os.path.normpath(candidate.absolute())
        here = Path(text)
        if _exists(here) and here.absolute() != candidate.absolute():
            try:
                rel = Path(os.path.relpath(here.absolute(), base_dir.absolute())).as_posix()
            except ValueError:  # pragma: no cover - another drive on Windows
                rel = str(here.absolute())
            raise entry.error(f"no such file or directory: {text!r} (looked for {looked}, relative to the "
                              f"{kind} file's directory)", "model",
                              f"A relative model path in a {kind} is read from the {kind} file's directory, not "
                              f"the current one; for the one found here write model: {rel}, or an absolute path.")
        try:
            return resolver(name, entry)
        except InputError as exc:
            if exc.entry != entry.key_path("model") or exc.file != entry.file:
                raise  # not about the name (e.g. a config.json that cannot be read)
            if _looks_like_path(text) or exc.problem.startswith("no such file or directory"):
                problem = (f"no such file or directory: {text!r} (looked for {looked}, relative to the {kind} "
                           "file's directory)")
                hint = exc.hint
            elif "/" not in text:
                raise  # a bare name: a mistyped catalog id far more often than a path
            else:
                problem = exc.problem
                hint = (f"As a path it would be {looked} (relative to the {kind} file's directory), which does not "
                        f"exist. " + (exc.hint or "")).strip()
            raise ScenarioError(problem, file=exc.file, line=exc.line, entry=exc.entry, hint=hint) from None

    return resolve
