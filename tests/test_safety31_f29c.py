"""Issue 28, hostile pass 29: h29a N3 (the sweep of a stopped import's check copy removes a folder only when each
file in it still holds the size and SHA-256 the mark recorded before planner wrote it: a cloud.yaml edited after the
import was killed is kept, as is a file the mark does not name or a file cut short); h29a N1 (a path argument whose
__fspath__() raises is an InputError naming the keyword: scenario, out=, catalog=, model=, workload=,
calibration=, load_catalog(overlay, base=); a scenario path-like is read once); h29a N2 (the "temporary folder is
the --out folder" refusal judged as tempfile will find the folder once --out is made: TMPDIR naming an --out not
made yet, and the system's /tmp as --out with no variable set, are refused).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _stopped_copy(temp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A check copy made as import-skypilot makes it (gpus.yaml and cloud.yaml), its mark then naming a process
    that has ended, as a SIGKILL leaves it."""
    import tempfile

    from planner.core.checkcopy import MARK, make_check_dir, write_check_file

    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    d = make_check_dir()
    write_check_file(d, "gpus.yaml", b"gpus: []\n")
    write_check_file(d, "cloud.yaml", b'instances:\n  - source: "skypilot"\n')
    mark = json.loads((d / MARK).read_text())
    (d / MARK).write_text(json.dumps({**mark, "pid": _dead_pid()}))
    return d


def _sweep(folder: Path) -> list[Path]:
    from planner.catalog.loader import CATALOG_FILES
    from planner.core.checkcopy import sweep_stale

    return sweep_stale(folder, CATALOG_FILES, now=time.time() + 3600)


def test_the_mark_records_each_files_size_and_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.core.checkcopy import MARK

    d = _stopped_copy(tmp_path, monkeypatch)
    files = json.loads((d / MARK).read_text())["files"]
    data = b'instances:\n  - source: "skypilot"\n'
    assert files["cloud.yaml"] == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert sorted(files) == ["cloud.yaml", "gpus.yaml"]


def test_an_untouched_stopped_copy_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _stopped_copy(tmp_path, monkeypatch)
    assert _sweep(tmp_path) == [d]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("change", ["edited", "appended", "same size", "cut short", "not recorded", "no files key"])
def test_a_copy_whose_file_is_not_as_planner_wrote_it_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              change: str) -> None:
    from planner.core.checkcopy import MARK

    d = _stopped_copy(tmp_path, monkeypatch)
    cloud = d / "cloud.yaml"
    if change == "edited":
        cloud.write_text('instances:\n  - source: "skypilot; price checked by me"\n')
    elif change == "appended":
        with cloud.open("a") as f:
            f.write("# mine\n")
    elif change == "same size":
        cloud.write_bytes(cloud.read_bytes().replace(b"skypilot", b"SKYPILOT"))
    elif change == "cut short":  # a SIGKILL while planner wrote it: the mark already names its whole bytes
        cloud.write_bytes(cloud.read_bytes()[:5])
    elif change == "not recorded":  # a SIGKILL after the file was made but before the mark named it
        mark = json.loads((d / MARK).read_text())
        del mark["files"]["cloud.yaml"]
        (d / MARK).write_text(json.dumps(mark))
    else:  # an older planner's mark: the pid only
        mark = json.loads((d / MARK).read_text())
        del mark["files"]
        (d / MARK).write_text(json.dumps(mark))
    os.utime(cloud, (time.time() - 7200, time.time() - 7200))
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    assert _sweep(tmp_path) == []
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before


class _Raising:
    """A path-like whose __fspath__() raises (h29a N1)."""

    def __fspath__(self) -> str:
        raise RuntimeError("boom")


class _Counting:
    """A path-like giving ``first`` on its first __fspath__() call and ``later`` after, counting the calls."""

    def __init__(self, first: str, later: str) -> None:
        self.first, self.later, self.calls = first, later, 0

    def __fspath__(self) -> str:
        self.calls += 1
        return self.first if self.calls == 1 else self.later


_SCENARIO = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")


@pytest.mark.parametrize("entry", ["scenario", "out", "catalog", "compare scenario", "base", "overlay", "model",
                                   "workload", "fit model", "calibration"])
def test_a_path_whose_fspath_raises_is_an_input_error_naming_the_keyword(entry: str) -> None:
    from planner import compare, estimate, fit, load_catalog, plan
    from planner.core.errors import InputError

    calls = {"scenario": lambda: plan(_Raising()), "out": lambda: plan(_SCENARIO, out=_Raising(), format="md"),
             "catalog": lambda: plan(_SCENARIO, catalog=_Raising()), "compare scenario": lambda: compare(_Raising()),
             "base": lambda: load_catalog(base=_Raising()), "overlay": lambda: load_catalog(_Raising()),
             "model": lambda: estimate(model=_Raising(), task="infer"),
             "workload": lambda: estimate(workload=_Raising()),
             "fit model": lambda: fit(model=_Raising(), task="infer", gpu="rtx-4090", context="max"),
             "calibration": lambda: estimate(model="llama-2-7b", task="infer", gpu="rtx-4090",
                                             calibration=_Raising())}
    with pytest.raises(InputError) as info:
        calls[entry]()
    keyword = entry.split()[-1]
    assert str(info.value) == (f"{keyword}: could not be read as a path: RuntimeError: boom. Pass the path as a str "
                               "or pathlib.Path.")


def test_a_scenario_path_is_read_once(tmp_path: Path) -> None:
    from planner import plan
    from planner.core.errors import InputError

    missing = tmp_path / "missing.yaml"
    path = _Counting(_SCENARIO, str(missing))  # a second read would name a file that is not there
    result = plan(path)
    assert path.calls == 1
    import yaml

    assert result.scenario == yaml.safe_load(Path(_SCENARIO).read_text())["name"]  # planned from the first path's file
    with pytest.raises(InputError):
        plan(_Counting(str(missing), _SCENARIO))  # and the other way round: the missing file is the one read


def test_tmpdir_naming_an_out_folder_not_made_yet_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """h29a N2: tempfile picks its folder at first use, after planner made --out: judged as it will be then."""
    import tempfile

    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.setattr(tempfile, "tempdir", None)
    out = tmp_path / "k25"
    monkeypatch.setenv("TMPDIR", str(out))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", _SCENARIO, "--out", "./k25/", "--format", "xlsx"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (
        f"Error: the temporary folder {out} (TMPDIR) is the --out folder k25: temporary files (openpyxl's, the "
        "importer's check copy) would be made there, beside the reports. Set TMPDIR to a private folder of your "
        "own elsewhere (one made with mkdir -m 700), or unset it (then /tmp is used).")
    assert not out.exists()  # refused before anything is made


def test_the_systems_temporary_folder_as_out_is_refused_as_tmpdir_naming_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from planner.core import tempdir
    from planner.core.errors import DestinationError

    system = tmp_path / "systmp"
    system.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(tempdir, "_system_temp_folder", lambda: None)  # the system's own is usable
    monkeypatch.setattr(tempdir, "_system_default", lambda: system)  # ... and it is this folder
    for var in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(tempdir, "refuse_protected_temp", lambda: None)
    with pytest.raises(DestinationError) as unset:
        tempdir.refuse_temp_in(system)
    assert str(unset.value) == (  # the API form of the message: out=, not --out
        f"the temporary folder {system} (the system's, as TMPDIR is not set) is the out= folder {system}: temporary "
        "files (openpyxl's, the importer's check copy) would be made there, beside the reports. Give another output "
        "folder, or set TMPDIR to a private folder of your own elsewhere (one made with mkdir -m 700).")
    monkeypatch.setenv("TMPDIR", str(system))
    with pytest.raises(DestinationError) as named:
        tempdir.refuse_temp_in(system)
    assert str(named.value).endswith("(one made with mkdir -m 700).")  # not "unset it (then /tmp is used)": it is
    tempdir.refuse_temp_in(tmp_path / "elsewhere")  # another --out: accepted
