"""Hostile pass 41A: standard output onto another name of a set's manifest (N1), calibrate --out named as code or a
shared library (N3, N15) or into a module search folder not made yet (N16), a path hook's marker on sys.path taken
for a folder (N17), a stop signal at the guard's end (N8: covered in test_safety48_h40a)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CALIBRATE = ["calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16", "--micro-batch", "2",
             "--seq-len", "512"]


def _planner(args: list[str], cwd: Path, stdout, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "planner", *args], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("removed", [False, True])
def test_standard_output_onto_another_name_of_a_manifest_is_refused(tmp_path: Path, removed: bool) -> None:
    # h41a N1: a hard link to another folder's .planner-reports.json (or one whose name was removed after the shell
    # opened it) took the output; the set's next run then refused its manifest
    r = _planner(["plan", str(ROOT / "scenarios" / "qlora-7b-12gb.yaml"), "--out", "s1", "--format", "csv"], tmp_path,
                 subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    manifest = tmp_path / "s1" / ".planner-reports.json"
    before = manifest.read_bytes()
    link = tmp_path / "notes.txt"
    os.link(manifest, link)
    with open(link, "a") as fh:
        if removed:
            os.unlink(link)
        r = _planner(["--version"], tmp_path, fh)
    assert r.returncode == 2, r.stderr
    assert "a report set's manifest or a report it lists" in r.stderr, r.stderr
    assert manifest.read_bytes() == before


@pytest.mark.parametrize("name", ["yaml/__init__.py", "libm.so.6", "cal.txt", "sitecustomize/__init__.py"])
def test_calibrate_out_not_named_as_yaml_is_refused(tmp_path: Path, name: str) -> None:
    # h41a N3 (a package's __init__.py hides PyYAML, or runs at every start as a sitecustomize package), N15 (a YAML
    # file named libm.so.6 in the interpreter's library folder stops every start of it): a calibration file is YAML
    from planner.core.errors import DestinationError
    from planner.core.importpath import refuse_import_shadow

    path = tmp_path / name
    with pytest.raises(DestinationError) as err:
        refuse_import_shadow(path.parent, path.name)
    assert str(err.value).startswith(f"{path}: is not named as a YAML file (.yaml or .yml), and a calibration file "
                                     "is YAML"), err.value
    refuse_import_shadow(tmp_path, "cal.YML")  # any case


def test_calibrate_out_into_a_search_folder_not_made_yet_is_judged(tmp_path: Path, monkeypatch) -> None:
    # h41a N16: PYTHONPATH=new (not there yet), --out new/planner/cal.yaml: the run would make 'new/planner', a plain
    # folder that hides the editable planner from every later run with that PYTHONPATH
    from planner.core.errors import DestinationError
    from planner.core.importpath import refuse_import_shadow

    new = tmp_path / "new"
    monkeypatch.setattr(sys, "path", [*sys.path, str(new)])
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DestinationError) as err:
        refuse_import_shadow(new / "planner", "cal.yaml")
    assert "a plain folder named 'planner' there hides the installed 'planner' package" in str(err.value), err.value


def test_a_path_hooks_marker_on_sys_path_is_no_folder(tmp_path: Path, monkeypatch) -> None:
    # h41a N17: setuptools' editable finder puts '__editable__.planner-0.1.0.finder.__path_hook__' on sys.path, a
    # marker for its path hook, which was taken for a folder of that name in the current folder
    from planner.core.importpath import _search_folders

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["__editable__.planner-0.1.0.finder.__path_hook__", str(tmp_path)])
    assert [str(f) for f, _ in _search_folders()] == [os.path.realpath(tmp_path)]


@pytest.mark.slow
def test_a_file_size_limit_of_zero_leaves_no_staging_folder_and_names_the_limit(tmp_path: Path) -> None:
    # h41b 10: under 'ulimit -f 0' the staging mark could not be written, its empty file was not known as this run's,
    # so the folder was left ("remove it yourself") and the line said "give a directory that can be written"
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    r = subprocess.run([sys.executable, "-m", "planner", "plan", str(ROOT / "scenarios" / "qlora-7b-12gb.yaml"),
                        "--out", "o13", "--format", "csv"], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=limit, timeout=300)
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == ("Error: o13: cannot write into the output directory (File too large). The "
                                         "folder can be written, but the file-size limit ('ulimit -f') stopped it. "
                                         "Raise the limit (ulimit -f unlimited) and run again."), r.stderr
    assert not (tmp_path / "o13").exists() or not any((tmp_path / "o13").iterdir())


@pytest.mark.parametrize("given, meant", [("o\u2215x", "o/x"), ("o\uff0fx", "o/x"), ("o\u2800x", "o x"),
                                          ("o\u00a0x", "o x")])
def test_an_out_with_a_slash_or_blank_lookalike_inside_a_name_is_refused(given: str, meant: str) -> None:
    # h41b 21: 'o∕x' was written and shown as if it were the folder x inside o; 'o⠀x' as 'o x'
    from planner.core.outpath import out_path_problem

    found = out_path_problem(given)
    assert found is not None and found[1] == meant, found
    assert "so the folder's name would look like another path" in found[0]


def test_a_letter_drawn_like_a_slash_is_a_names_own() -> None:
    from planner.core.outpath import out_path_problem

    assert out_path_problem("o\u30cex") is None  # Katakana NO: a Japanese folder name


@pytest.mark.parametrize("name, runs", [("sitecustomize.py", True), ("sitecustomize", True),
                                        ("usercustomize.cpython-311-x86_64-linux-gnu.so", True), ("x.pth", True),
                                        ("sitecustomize.yaml", False), ("usercustomize.txt", False)])
def test_a_start_up_name_is_a_module_or_package_only(name: str, runs: bool) -> None:
    # h42a m3: 'sitecustomize.yaml' was said to be "a name Python runs at every start"; no import reads it
    from planner.core.importpath import startup_name

    assert startup_name(name) is runs


def test_a_stop_signal_python_wrapped_is_said_as_a_stop_not_a_bug() -> None:
    # h42a N4: SIGTERM during a lazy import came out as 'internal error (RuntimeError: Error calling __set_name__ ...)'
    from planner.cli.common import _interrupted_within
    from planner.core.interrupt import Interrupted

    stop = Interrupted(15)
    try:
        try:
            raise stop
        except Interrupted as exc:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from exc
    except RuntimeError as wrapped:
        assert _interrupted_within(wrapped) is stop
    assert _interrupted_within(ValueError("x")) is None


@pytest.mark.parametrize("value, why", [("2026-02-30", "February 2026 has 28 days, so there is no day 30"),
                                        ("2026-13", "there is no month 13"), ("2028-02-29", None),
                                        ("2026-1-5", None)])
def test_a_date_written_as_asked_that_names_no_day_is_said_so(value: str, why: str | None) -> None:
    # h41b 11: '--as-of 2026-02-30' was said not to be "written YYYY-MM-DD or YYYY-MM"
    from planner.core.fieldhints import impossible_date
    from planner.core.written import date_option_problem

    assert impossible_date(value) == why  # (2028 is a leap year; '2026-1-5' is a spelling matter, said elsewhere)
    if why is not None:
        assert date_option_problem("--as-of", value).startswith(f"--as-of: '{value}' is no date: {why}. ")


def test_the_gpus_hint_never_copies_over_a_gpus_yaml_in_out(tmp_path: Path) -> None:
    # h41b 17: "copy it there (... cp -- OV/gpus.yaml OUT/gpus.yaml)" replaced the user's own OUT/gpus.yaml
    from tests.sky_helpers import G5, aws_csv, run_cli
    from tests.test_safety25_f21a1 import _overlay_gpu

    ov = _overlay_gpu(tmp_path / "OV", "zz9", "NVIDIA ZZ9")
    csv = aws_csv(tmp_path, G5, "zz.xlarge,zz9,1,4,16,,0.9,0.3,us-east-1,us-east-1a,x86_64")
    new = tmp_path / "NEW"
    new.mkdir()
    mine = "schema_version: 1\ngpus: []\n"
    (new / "gpus.yaml").write_text(mine)
    code, out = run_cli("catalog", "import-skypilot", str(csv), "--catalog", str(ov), "--out", str(new))
    assert code == 2
    said = " ".join(out.split())
    assert "cp --" not in said, said
    assert said.endswith(f"The rows name zz9 of {ov}/gpus.yaml; {new}/gpus.yaml has no entry for it: add its entry "
                         f"from {ov}/gpus.yaml to {new}/gpus.yaml and import again, then give --catalog {new} "
                         "alone."), said
    assert (new / "gpus.yaml").read_text() == mine


def test_a_gcp_gpu_row_of_a_bad_region_or_zone_is_said(tmp_path: Path) -> None:
    # h41b 22: GCP GPU rows whose Region is a zone's name, or malformed, or whose zone is no zone, priced nothing and
    # were in no line of the summary (VM rows with the same faults were said)
    from planner.catalog.skypilot import import_file
    from tests.sky_helpers import vms_csv

    header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
    path = vms_csv(tmp_path, "gcp", header, "g2-standard-4,,,4,16,,0.2,0.1,us-central1,us-central1-a",
                   ",L4,1,,,,0.5,0.2,us-central1,us-central1-a", ",L4,1,,,,0.4,0.2,=1+1,us-central1-a",
                   ",L4,1,,,,0.4,0.2,us-central1-z,us-central1-a", ",L4,1,,,,0.3,0.2,us-central1,us-central1-ab")
    result = import_file(path)
    said = " ".join(result.skipped.values())
    assert [r.instance for r in result.rows] == ["g2-standard-4"]
    assert "line 4: the GPU row: the region '=1+1' is no region name" in said, said
    assert "line 5: the GPU row: the region 'us-central1-z' is an availability zone's name" in said, said
    assert "line 6: the GPU row: its AvailabilityZone 'us-central1-ab' is not a zone of its Region" in said, said


def test_reasons_differing_only_in_a_gpu_count_are_one_kind() -> None:
    # h41b 16: "carries 1 GPU" and "carries 4 GPUs" were two kinds of reason
    from planner.catalog.import_summary import left_out_lines

    lines = left_out_lines({"a": "line 2: it carries 1 GPU, but AcceleratorCount gives 'T4' x4",
                            "b": "line 3: it carries 4 GPUs, but AcceleratorCount gives 'T4' x1"})
    assert len(lines) == 1 and lines[0].startswith("left out 2: "), lines
