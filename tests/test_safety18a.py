"""Issue 28 ("never touch a file planner did not write"), the leftovers of hostile pass 13A.

3. A plan report named SOURCES.md (scenario ``name: SOURCES``, ``--format md``) written into a folder of catalog
   overlay files, or left in a folder that ``import-skypilot --out`` then makes an overlay, was read by
   ``--catalog`` as the overlay's source list (17 warnings, ``catalog check`` failing). Both are refused; a report
   of that name in a folder that is no overlay is still written (tests/test_safety3.py, test_safety6a.py,
   test_safety11.py keep that).
m. A dangling default calibration link (``$XDG_CONFIG_HOME/planner/calibration.yaml -> /nonexistent``) meant "no
   calibration" without a word; it is refused, as the default file's FIFO, device and folder are.
m. ``plan(out='/proc/self')`` failed at staging with 'No such file or directory' (an OutputError); it is a
   DestinationError before the work naming the pseudo file system.
m. TMPDIR set to the ``--catalog`` overlay folder (an input) or to ``--out``: openpyxl's temporaries and the
   importer's check copy landed there. Refused for plan, compare and import-skypilot, on the command line and in
   the API.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import planner
from cli_helpers import _scenario, _sha
from planner.cli.main import main
from planner.core.errors import DestinationError, InputError

ROOT = Path(__file__).resolve().parents[1]
COMPARE = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"
#: A price overlay of one GPU (as hostile pass 13A's setup wrote it).
OVERLAY_GPU = ("schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    price_usd: 250\n    price_kind: quote\n"
               "    source: \"quote Q-1234 from ACME\"\n    as_of: 2026-11-20\n")
#: A two-row SkyPilot v8 AWS vms.csv (hostile pass 13A's setup): two L4 instances in us-east-1.
VMS_CSV = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
           "AvailabilityZone,Arch\n"
           "g6.xlarge,L4,1,4,16,,0.8048,0.3,us-east-1,us-east-1a,x86_64\n"
           "g6.4xlarge,L4,1,16,64,,1.3232,0.5,us-east-1,us-east-1a,x86_64\n")


def _overlay(folder: Path, name: str = "gpus.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(OVERLAY_GPU if name == "gpus.yaml" else "schema_version: 1\n")
    return folder


def _vms(tmp_path: Path) -> Path:
    p = tmp_path / "aws" / "vms.csv"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(VMS_CSV)
    return p


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# -- 3. a report named SOURCES.md where --catalog would read it as the source list --------------------------

@pytest.mark.parametrize("overlay_file", ["gpus.yaml", "cloud.yaml", "ram.yaml", "platforms.yaml", "models.yaml"])
def test_a_sources_report_into_a_folder_of_overlay_files_is_refused(tmp_path: Path, overlay_file: str) -> None:
    s = _scenario(tmp_path / "s.yaml", "SOURCES")
    ov = _overlay(tmp_path / "ov", overlay_file)
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(ov), "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {ov / 'SOURCES.md'}: is named as a catalog folder's source list (SOURCES.md), and "
                        f"{ov} holds catalog overlay files ({overlay_file}), so --catalog {ov} would read this report "
                        "as the overlay's source list. Give the scenario another name, or give another --out.\n")
    assert _listing(ov) == [overlay_file]


def test_a_sources_report_in_another_case_is_refused_too(tmp_path: Path) -> None:
    # a case-insensitive file system (macOS, Windows) stores sources.md as SOURCES.md, which the loader then reads
    s = _scenario(tmp_path / "s.yaml", "sources")
    ov = _overlay(tmp_path / "ov")
    with pytest.raises(DestinationError) as info:
        planner.plan(str(s), out=str(ov), format="md")
    assert str(info.value).startswith(f"{ov / 'sources.md'}: is named as a catalog folder's source list")
    assert _listing(ov) == ["gpus.yaml"]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_sources_report_beside_no_overlay_file_is_written(tmp_path: Path) -> None:
    # only a folder of overlay files is refused: a plan folder keeps the report (the reverted attempt refused all)
    s = _scenario(tmp_path / "s.yaml", "SOURCES")
    d = tmp_path / "D"
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(d), "--format", "md,json"])
    assert r.exit_code == 0, r.output
    assert _listing(d) == [".planner-reports.json", "SOURCES.json", "SOURCES.md"]
    # other reports of that scenario into the overlay folder are fine: only the .md has the source list's name
    ov = _overlay(tmp_path / "ov")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(ov), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert _listing(ov) == [".planner-reports.json", "SOURCES.json", "gpus.yaml"]


def test_an_import_beside_a_sources_report_of_planners_is_refused(tmp_path: Path) -> None:
    s = _scenario(tmp_path / "s.yaml", "SOURCES")
    d = tmp_path / "D"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(d), "--format", "md"]).exit_code == 0
    before = _sha(d / "SOURCES.md")
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", "--provider", "aws", str(_vms(tmp_path)),
                                  "--out", str(d)])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {d / 'SOURCES.md'}: is a report of 'plan SOURCES' (see {d / '.planner-reports.json'}), "
                        f"and cloud.yaml written beside it would make {d} a catalog overlay whose source list "
                        f"(SOURCES.md) --catalog {d} reads from that report. Move the report away, give its scenario "
                        "another name, or give another --out.\n")
    assert _listing(d) == [".planner-reports.json", "SOURCES.md"]
    assert _sha(d / "SOURCES.md") == before


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_import_beside_a_sources_md_a_person_wrote_is_fine(tmp_path: Path) -> None:
    # the overlay's own source list (not in the manifest, or a report changed since): what SOURCES.md is for
    vms = _vms(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "SOURCES.md").write_text("| id | document | where |\n|---|---|---|\n| ACME | ACME quote | |\n")
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", "--provider", "aws", str(vms), "--out", str(mine)])
    assert r.exit_code == 0, r.output
    s = _scenario(tmp_path / "s.yaml", "SOURCES")
    d = tmp_path / "D"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(d), "--format", "md"]).exit_code == 0
    (d / "SOURCES.md").write_text("| id | document | where |\n|---|---|---|\n| ACME | ACME quote | |\n")
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", "--provider", "aws", str(vms), "--out", str(d)])
    assert r.exit_code == 0, r.output
    assert (d / "cloud.yaml").is_file()


# -- m. a dangling default calibration link ------------------------------------------------------------------

def _estimate(xdg: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    return CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4"])


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_dangling_default_calibration_link_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "xdg" / "planner").mkdir(parents=True)
    link = tmp_path / "xdg" / "planner" / "calibration.yaml"
    link.symlink_to("/nonexistent")
    r = _estimate(tmp_path / "xdg", monkeypatch)
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {link}: is a link to a file that does not exist ({link} -> /nonexistent), so there is "
                        "no default calibration to read. Point the link at what 'planner calibrate' wrote, or remove "
                        "it (then estimates use no calibration), or give --calibration FILE.\n")
    # the API says the same (an InputError)
    with pytest.raises(InputError) as info:
        planner.estimate(model="llama-2-7b", task="infer", gpu="l4")
    assert str(info.value).startswith(f"{link}: is a link to a file that does not exist")
    link.unlink()  # no file at all: no calibration, as before
    assert _estimate(tmp_path / "xdg", monkeypatch).exit_code == 0


def test_a_dangling_link_on_the_default_calibrations_folder_is_refused(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "xdg").mkdir()
    (tmp_path / "xdg" / "planner").symlink_to(tmp_path / "gone")
    r = _estimate(tmp_path / "xdg", monkeypatch)
    assert r.exit_code == 2, r.output
    folder = tmp_path / "xdg" / "planner"
    assert r.stderr == (f"Error: {folder}: is a link to a folder that does not exist ({folder} -> {tmp_path / 'gone'}), "
                        f"so the default calibration file {folder / 'calibration.yaml'} cannot be read. Point the link "
                        "at what 'planner calibrate' wrote, or remove it (then estimates use no calibration), or give "
                        "--calibration FILE.\n")


# -- m. out= on a pseudo file system ---------------------------------------------------------------------------

def _proc_is_procfs() -> bool:
    from planner.core.pseudofs import file_system_type

    return file_system_type("/proc/self") == "proc"


@pytest.mark.skipif(not os.path.exists("/proc/self/mountinfo") or not _proc_is_procfs(), reason="Linux /proc only")
def test_out_on_a_pseudo_file_system_is_refused_before_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    import planner.cost.objective as objective

    def no_work(*_a, **_k):  # the refusal comes before the planning
        raise AssertionError("planned")

    monkeypatch.setattr(objective, "plan", no_work)
    qlora = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
    with pytest.raises(DestinationError) as info:
        planner.plan(str(qlora), out="/proc/self", format="json")
    assert str(info.value) == ("/proc/self: is a folder of the proc file system, a pseudo file system that the kernel "
                               "makes up for its own state: it holds no file planner can write. Give out= a folder on "
                               "a disk (it is created if missing).")  # the API names the keyword (h19a M1)
    r = CliRunner().invoke(main, ["plan", str(qlora), "--out", "/proc/self/new", "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr == ("Error: /proc/self/new: would be made in /proc/self, a folder of the proc file system, a pseudo "
                        "file system that the kernel makes up for its own state: it holds no file planner can write. "
                        "Give --out a folder on a disk (it is created if missing).\n")


def test_a_folder_on_a_disk_is_no_pseudo_file_system(tmp_path: Path) -> None:
    from planner.core.pseudofs import PSEUDO_FILE_SYSTEMS, file_system_type

    assert file_system_type(tmp_path) not in PSEUDO_FILE_SYSTEMS
    assert file_system_type(tmp_path / "missing") is None


# -- m. TMPDIR the --catalog overlay folder or --out -----------------------------------------------------------

TMP_HINT = ("Set TMPDIR to a private folder of your own elsewhere (one made with mkdir -m 700), or unset it (then /tmp "
            "is used).")


def _tmpdir(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", None)  # as a fresh process finds it: from TMPDIR
    monkeypatch.setenv("TMPDIR", str(folder))


def _is_overlay(ov: Path) -> str:
    return (f"the temporary folder {ov} (TMPDIR) is the --catalog overlay folder {ov}, an input of this run: temporary "
            "files (openpyxl's, the importer's check copy) would be made there, among the overlay's catalog files. "
            + TMP_HINT)


def _is_out(out: Path) -> str:
    return (f"the temporary folder {out} (TMPDIR) is the --out folder {out}: temporary files (openpyxl's, the "
            "importer's check copy) would be made there, beside the reports. " + TMP_HINT)


def _commands(tmp_path: Path, ov: Path, out: Path) -> dict[str, list[str]]:
    qlora = str(ROOT / "scenarios" / "qlora-7b-12gb.yaml")
    return {"plan": ["plan", qlora, "--catalog", str(ov), "--out", str(out), "--format", "xlsx,json"],
            "compare": ["compare", str(COMPARE), "--catalog", str(ov), "--out", str(out)],
            "import": ["catalog", "import-skypilot", "--provider", "aws", str(_vms(tmp_path)), "--catalog", str(ov),
                       "--out", str(out)]}


@pytest.mark.parametrize("command", ["plan", "compare", "import"])
def test_tmpdir_the_overlay_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    ov, out = _overlay(tmp_path / "ov"), tmp_path / "out"
    _tmpdir(monkeypatch, ov)
    r = CliRunner().invoke(main, _commands(tmp_path, ov, out)[command])
    assert r.exit_code == 2, r.output
    assert r.stderr == "Error: " + _is_overlay(ov) + "\n"
    assert _listing(ov) == ["gpus.yaml"]
    assert not out.exists()


@pytest.mark.parametrize("command", ["plan", "compare", "import"])
def test_tmpdir_the_out_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    ov, out = _overlay(tmp_path / "ov"), tmp_path / "out"
    out.mkdir()
    _tmpdir(monkeypatch, out)
    r = CliRunner().invoke(main, _commands(tmp_path, ov, out)[command])
    assert r.exit_code == 2, r.output
    assert r.stderr == "Error: " + _is_out(out) + "\n"
    assert _listing(out) == []


def test_the_api_refuses_them_as_destination_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ov, out = _overlay(tmp_path / "ov"), tmp_path / "out"
    out.mkdir()
    qlora = str(ROOT / "scenarios" / "qlora-7b-12gb.yaml")
    _tmpdir(monkeypatch, ov)
    with pytest.raises(DestinationError) as info:
        planner.compare(str(COMPARE), catalog=str(ov), out=str(out))
    # the API names the keywords catalog= and out= (h19a M1); the command line's options: cli_line()
    assert str(info.value) == _is_overlay(ov).replace("the --catalog overlay", "the catalog= overlay")
    assert info.value.cli_line() == _is_overlay(ov)
    monkeypatch.setattr(tempfile, "tempdir", str(out))  # set in code: named as such
    with pytest.raises(DestinationError) as info:
        planner.plan(qlora, out=str(out), format="xlsx")
    assert str(info.value) == (f"the temporary folder {out} (tempfile.tempdir) is the out= folder {out}: temporary "
                               "files (openpyxl's, the importer's check copy) would be made there, beside the reports. "
                               "Set tempfile.tempdir to a private folder of your own elsewhere (one made with mkdir "
                               "-m 700), or set it to None (then TMPDIR or /tmp is used).")
    assert _listing(out) == []


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_tmpdir_elsewhere_or_with_no_temporary_file_is_fine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a plan that writes no workbook makes no temporary file; the scenario's own folder is no overlay
    ov, out = _overlay(tmp_path / "ov"), tmp_path / "out"
    out.mkdir()
    qlora = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
    _tmpdir(monkeypatch, out)
    r = CliRunner().invoke(main, ["plan", str(qlora), "--catalog", str(ov), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    (tmp_path / "sc").mkdir()
    s = _scenario(tmp_path / "sc" / "s.yaml", "tmp-beside")
    _tmpdir(monkeypatch, tmp_path / "sc")
    r = CliRunner().invoke(main, ["plan", str(s), "--catalog", str(ov), "--out", str(tmp_path / "o2"),
                                  "--format", "xlsx"])
    assert r.exit_code == 0, r.output
    assert _listing(tmp_path / "sc") == ["s.yaml"]
