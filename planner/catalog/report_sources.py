"""A report named like a catalog's source list, in a folder that is (or is being made) a catalog overlay.

``--catalog DIR`` reads the overlay files of DIR (:data:`planner.catalog.loader.CATALOG_FILES`) and the
``SOURCES.md`` beside them (:data:`planner.catalog.sources.SOURCES_FILE`, :func:`planner.catalog.sources.sources_for_catalog`).
A plan report of a scenario named ``SOURCES`` (``--format md``) is a file of that name: written into an overlay
folder, or left in a folder that an import then makes one, it would be read as the overlay's source list (a
warning for each of its table rows, and ``catalog check`` failing). Both are refused before any work:

- :func:`refuse_report_as_sources`: a report set would write ``SOURCES.md`` (in any case: a case-insensitive file
  system, macOS or Windows, stores ``sources.md`` as that file) into a folder holding an overlay file;
- :func:`refuse_overlay_beside_report`: ``import-skypilot --out DIR`` would write ``cloud.yaml`` (making DIR an
  overlay) beside a ``SOURCES.md`` that is a report planner wrote there (listed in DIR's manifest with the hash it
  has now, :data:`planner.core.manifest.MANIFEST`).

A ``SOURCES.md`` a person wrote (not in the manifest, or changed since planner wrote it) is the overlay's own
source list and is left alone; a report of that name in a folder without overlay files is written as before.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from planner.core.errors import DestinationError
from planner.core.names import shell_word

#: What to do, for both refusals.
_HINT = "Give the scenario another name, or give another --out."


def _is_sources_name(name: str) -> bool:
    """Whether the file name ``name`` is the source list's, compared as a case-insensitive file system does
    (planner.core.names.clash_key)."""
    from planner.catalog.sources import SOURCES_FILE
    from planner.core.names import clash_key

    return clash_key(name) == clash_key(SOURCES_FILE)


def overlay_files_in(folder: Path) -> list[str]:
    """The names of the catalog overlay files directly in ``folder`` (as ``--catalog`` reads them: the names of
    :data:`planner.catalog.loader.CATALOG_FILES`, a link or a file alike), in load order; [] for a folder that does
    not exist or cannot be listed."""
    from planner.catalog.loader import CATALOG_FILES

    return [name for name in CATALOG_FILES if os.path.lexists(Path(folder) / name)]


def refuse_report_as_sources(out: Path, names: Iterable[str]) -> None:
    """Refuse a report set that would write a file named as a catalog's source list (``SOURCES.md``) into ``out``
    when ``out`` holds a catalog overlay file (``gpus.yaml``, ``cloud.yaml``, ...).

    Args:
        out: the output folder (``--out``, ``out=``); it may not exist yet (nothing is refused then).
        names: the file names the set writes.

    Raises:
        DestinationError: naming the report, the overlay files and what to do.
    """
    name = next((n for n in names if _is_sources_name(n)), None)
    if name is None:
        return
    present = overlay_files_in(out)
    if not present:
        return
    raise DestinationError(f"{Path(out) / name}: is named as a catalog folder's source list (SOURCES.md), and {out} "
                           f"holds catalog overlay files ({', '.join(present)}), so --catalog {shell_word(str(out))} would read this "
                           f"report as the overlay's source list. {_HINT}")


def refuse_overlay_beside_report(out: Path) -> None:
    """Refuse to make ``out`` a catalog overlay (``import-skypilot --out``) while a file there named as a catalog's
    source list (``SOURCES.md``) is a report planner wrote (listed in ``out``'s manifest, unchanged since).

    Raises:
        DestinationError: naming the report, the set that wrote it and what to do.
        OutputError: the manifest cannot be read (planner.core.manifest.read_manifest).
    """
    if not os.path.isdir(out):
        return
    from planner.core.atomic import own_file_sha256
    from planner.core.manifest import MANIFEST, read_manifest

    manifest = read_manifest(Path(out))
    for name, entry in manifest.items():
        if not _is_sources_name(name):
            continue
        digest = own_file_sha256(Path(out) / name)
        if digest is None or digest not in entry["sha256"]:
            continue  # gone, or changed since: a person's file now, the overlay's own source list
        raise DestinationError(f"{Path(out) / name}: is a report of {entry['set']!r} (see {Path(out) / MANIFEST}), "
                               f"and cloud.yaml written beside it would make {out} a catalog overlay whose source "
                               f"list (SOURCES.md) --catalog {shell_word(str(out))} reads from that report. Move the report away, "
                               f"give its scenario another name, or give another --out.")
