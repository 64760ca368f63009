"""The memo of checked catalogs (planner.catalog.memo.remembered, with a memo the caller passes, as the test
session's conftest does): a catalog read again from the same paths, bytes and UTC date is the Catalog already
checked; any change of a file's bytes, of the date, or of the Catalog in place (object.__setattr__) gives a fresh
read and check. Without a memo (the package's own loads) each load reads and checks again."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from planner.catalog.loader import default_catalog_dir, load_catalog
from planner.core.errors import CatalogError


@pytest.fixture(autouse=True)
def _own_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    # a memo of this test's own, not the session's
    from planner.catalog import loader
    from planner.catalog.memo import remembered

    mine: dict = {}
    monkeypatch.setattr(loader, "_checked_catalog", lambda files: remembered(files, loader._read_all, mine))


def test_without_a_memo_each_load_reads_again(tmp_path: Path) -> None:
    from planner.catalog import loader

    base = _copy(tmp_path)
    files = [(name, path, False) for name, path in loader._catalog_files(base, overlay=False)]
    assert loader._read_all(files, [None] * len(files)) is not loader._read_all(files, [None] * len(files))


def _copy(tmp_path: Path) -> Path:
    base = tmp_path / "catalog"
    shutil.copytree(default_catalog_dir(), base)
    return base


def test_the_same_files_give_the_same_checked_catalog(tmp_path: Path) -> None:
    base = _copy(tmp_path)
    first = load_catalog(base=base)
    assert load_catalog(base=base) is first


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    base = _copy(tmp_path)
    first = load_catalog(base=base)
    gpus = base / "gpus.yaml"
    text = gpus.read_text()
    assert "tdp_w: 450" in text  # the RTX 4090's board power in the shipped file
    gpus.write_text(text.replace("tdp_w: 450", "tdp_w: 451", 1))
    again = load_catalog(base=base)
    assert again is not first and again.sha256 != first.sha256
    assert 451 in {g.tdp_w for g in again.gpus} and 451 not in {g.tdp_w for g in first.gpus}


def test_a_catalog_changed_in_place_is_not_given_again(tmp_path: Path) -> None:
    base = _copy(tmp_path)
    first = load_catalog(base=base)
    object.__setattr__(first, "gpus", first.gpus[:1])  # bypasses the frozen dataclass
    again = load_catalog(base=base)
    assert again is not first and len(again.gpus) > 1


def test_another_day_checks_the_dates_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = _copy(tmp_path)
    ram = base / "ram.yaml"
    text = ram.read_text()
    dates = sorted({line.split("as_of:")[1].strip().strip("'\"") for line in text.splitlines() if "as_of:" in line})
    newest = dates[-1]
    assert load_catalog(base=base).sha256
    from planner.core import clock

    # the day before the newest price's date: that price is then "after today" and refused
    day = dt.date.fromisoformat(newest if len(newest) == 10 else newest + "-01")
    monkeypatch.setattr(clock, "utc_today", lambda: day - dt.timedelta(days=40))
    with pytest.raises(CatalogError) as info:
        load_catalog(base=base)
    assert "after today" in str(info.value)


def test_a_failed_load_is_not_kept(tmp_path: Path) -> None:
    base = _copy(tmp_path)
    overlay = tmp_path / "mine"
    overlay.mkdir()
    (overlay / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-4090\n    tdp_w: -1\n")
    for _ in range(2):  # refused each time, as the first time
        with pytest.raises(CatalogError):
            load_catalog(overlay, base=base)
    (overlay / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-4090\n    tdp_w: 449\n")
    assert 449 in {g.tdp_w for g in load_catalog(overlay, base=base).gpus}
