"""Issue 28, hostile pass 21A: findings of report h21a.

- m5: ``import-skypilot --catalog OV``: a row naming a GPU that OV's gpus.yaml adds (an id the shipped catalog
  lacks) by its id or its name, case-blind, is kept with that GPU's id (planner.catalog.skypilot._row_gpu,
  overlay_gpu_names); the written overlay without that gpus.yaml is refused as naming an unknown GPU, with the
  hint to copy the overlay's gpus.yaml into --out (planner.cli.catalog.import_skypilot_command); without
  ``--catalog`` the row is still left out.
- m1: a path that cannot be read (a scenario, --catalog, --out without read permission; an --out folder without
  search permission) is one planner line naming the option, the path and the permission it lacks, with a chmod
  hint and another path (planner.core.denied, planner.cli.options.PathType); in the API such an out= is a
  DestinationError raised before any work (planner.core.destinations.check_destinations). Permissions are
  simulated with os.access monkeypatched (the tests run as root, which passes every check).
- m2: calibrate's file in a folder not made yet below a world-writable folder (no sticky bit) is refused before
  the measurement, as one in a folder already there is (planner.core.sharing.refuse_shared_above).
- m3: '-' as the scenario, workload or SkyPilot file (no such file) gets a hint that planner reads files by path
  and that /dev/stdin is the path of a pipe (planner.core.infile._open_problem); import-skypilot given one file
  twice ('/dev/stdin /dev/stdin') says so before reading.
- m4: --out (and the API's out=) holding a byte 0x80-0x9F that is not UTF-8 (a C1 control in Latin-1, read by
  Python as the surrogate escape '\\udc9b') is refused as U+009B written in UTF-8 is, the byte shown as \\x9b
  (planner.core.outpath.unsafe_path_char); other non-UTF-8 bytes ('\\xff') are still taken.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from planner.core.errors import DestinationError
from sky_helpers import G5, aws_csv, run_cli
from planner.core.names import path_word  # hints name paths as shell words (h37b N6)

ROOT = Path(__file__).parents[1]
SCENARIO = str(ROOT / "scenarios" / "qlora-7b-12gb.yaml")


def _deny(monkeypatch, path: Path, bits: int) -> None:
    """os.access answers False for ``path`` and any of ``bits`` (as for a user lacking that permission)."""
    real = os.access

    def access(p, mode, *a, **k):
        if os.path.abspath(os.fsdecode(p)) == str(path) and mode & bits:
            return False
        return real(p, mode, *a, **k)

    monkeypatch.setattr(os, "access", access)


# -- m1: a path that cannot be read ------------------------------------------------------------------------------

def test_an_out_folder_without_read_permission_is_one_line(tmp_path, monkeypatch):
    out = tmp_path / "o3"
    out.mkdir()
    _deny(monkeypatch, out, os.R_OK)
    code, text = run_cli("plan", SCENARIO, "--out", str(out), "--format", "json")
    assert code == 2
    assert text.strip() == (f"Error: --out: '{out}' cannot be read (permission denied: you lack its read permission). "
                            f"Give another --out, or let yourself in: chmod u+rx {path_word(out)}.")
    assert list(out.iterdir()) == []


def test_an_out_folder_without_search_permission_names_the_folder(tmp_path, monkeypatch):
    out = tmp_path / "o4"
    out.mkdir()
    _deny(monkeypatch, out, os.X_OK)
    code, text = run_cli("plan", SCENARIO, "--out", str(out), "--format", "json")
    assert code == 2
    assert "search (x) permission" in text and ".planner-reports.json" not in text
    assert f"chmod u+rx {path_word(out)}" in text


def test_an_unreadable_scenario_and_catalog_get_the_line(tmp_path, monkeypatch):
    mine = tmp_path / "mine.yaml"
    mine.write_bytes(Path(SCENARIO).read_bytes())
    _deny(monkeypatch, mine, os.R_OK)
    code, text = run_cli("plan", str(mine), "--out", str(tmp_path / "o5"))
    assert code == 2
    assert text.strip() == (f"Error: scenario: '{mine}' cannot be read (permission denied: you lack its read "
                            f"permission). Give another file, or let yourself in: chmod u+r {path_word(mine)}.")
    cat = tmp_path / "cat3"
    cat.mkdir()
    monkeypatch.undo()
    _deny(monkeypatch, cat, os.R_OK)
    code, text = run_cli("plan", SCENARIO, "--catalog", str(cat), "--out", str(tmp_path / "o6"))
    assert code == 2
    assert f"--catalog: '{cat}' cannot be read" in text and "Give another --catalog" in text


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_api_raises_a_destination_error_before_any_work(tmp_path, monkeypatch):
    from planner import plan

    out = tmp_path / "o4"
    out.mkdir()
    _deny(monkeypatch, out, os.X_OK)
    with pytest.raises(DestinationError) as info:
        plan(SCENARIO, out=str(out), format="json")
    assert str(info.value).startswith(f"{out}: cannot be read (permission denied: you lack its search (x) permission)")
    assert "Give another out=," in str(info.value)
    assert list(out.iterdir()) == []

# -- m5: an overlay's own GPU, named by a row ---------------------------------------------------------------------


def _overlay_gpu(folder: Path, gpu_id: str, name: str) -> Path:
    """``folder/gpus.yaml`` holding the shipped a10g entry under ``gpu_id`` and ``name`` (its figures as shipped)."""
    shipped = yaml.safe_load((Path(__file__).parents[1] / "catalog" / "gpus.yaml").read_text(encoding="utf-8"))
    entry = dict(next(g for g in shipped["gpus"] if g["id"] == "a10g"), id=gpu_id, name=name)
    folder.mkdir(exist_ok=True)
    (folder / "gpus.yaml").write_text(yaml.safe_dump({"schema_version": 1, "gpus": [entry]}), encoding="utf-8")
    return folder


def _rows(path: Path) -> dict[str, str]:
    """instance id -> gpu id of an overlay cloud.yaml."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {r["id"]: r["gpu"] for r in data["instances"]}


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_rows_naming_an_overlay_gpu_by_id_or_name_are_kept(tmp_path):
    ov = _overlay_gpu(tmp_path / "OV", "zz9", "NVIDIA ZZ9")
    new = tmp_path / "NEW"
    new.mkdir()
    (new / "gpus.yaml").write_bytes((ov / "gpus.yaml").read_bytes())
    csv = aws_csv(tmp_path, G5, "zz.xlarge,zz9,1,4,16,,0.9,0.3,us-east-1,us-east-1a,x86_64",
                  "zy.xlarge,NVIDIA ZZ9,1,4,16,,0.9,0.3,us-east-1,us-east-1a,x86_64",
                  "zx.xlarge,ZZ9,1,4,16,,0.9,0.3,us-east-1,us-east-1a,x86_64")
    code, out = run_cli("catalog", "import-skypilot", str(csv), "--catalog", str(ov), "--out", str(new))
    assert code == 0, out
    assert "has no gpus.yaml entry" not in out
    # the shipped A10G through the alias table, the three others by the overlay's id, name and upper-case id
    assert _rows(new / "cloud.yaml") == {"aws-g5-xlarge": "a10g", "aws-zz-xlarge": "zz9", "aws-zy-xlarge": "zz9",
                                         "aws-zx-xlarge": "zz9"}


def test_without_the_overlay_the_rows_are_left_out(tmp_path):
    csv = aws_csv(tmp_path, G5, "zz.xlarge,zz9,1,4,16,,0.9,0.3,us-east-1,us-east-1a,x86_64")
    code, out = run_cli("catalog", "import-skypilot", str(csv), "--out", str(tmp_path / "NEW"))
    assert code == 0, out
    assert "GPU 'zz9' has no gpus.yaml entry (line 3: zz.xlarge)" in out
    assert _rows(tmp_path / "NEW" / "cloud.yaml") == {"aws-g5-xlarge": "a10g"}


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_output_without_the_overlay_gpus_is_refused(tmp_path):
    ov = _overlay_gpu(tmp_path / "OV", "zz9", "NVIDIA ZZ9")
    csv = aws_csv(tmp_path, G5, "zz.xlarge,zz9,1,4,16,,0.9,0.3,us-east-1,us-east-1a,x86_64")
    code, out = run_cli("catalog", "import-skypilot", str(csv), "--catalog", str(ov), "--out", str(tmp_path / "NEW"))
    assert code == 2
    assert re.search(r"would not load, so nothing was written: .*unknown GPU 'zz9'", out), out
    # the paths are plain shell words here (no quoting); h30b M1's test quotes a path with a blank and a ';';
    # '--' before the paths since h33b m4 (a path starting with '-' is never read as an option)
    new = tmp_path / "NEW"
    assert out.rstrip().endswith(f"The rows name zz9 of {ov}/gpus.yaml, which {new} lacks: copy it there (mkdir -p -- "
                                 f"{new} && cp -- {ov}/gpus.yaml {new}/gpus.yaml) and import again, then give --catalog "
                                 f"{new} alone."), out
    assert "None of the" not in out, out
    assert not (tmp_path / "NEW" / "cloud.yaml").exists()


# -- m2: calibrate --out in a folder to be made below a world-writable one --------------------------------------

CAL = ("--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16", "--micro-batch", "2", "--seq-len", "512")


@pytest.mark.parametrize("made", [True, False])
def test_calibrate_refuses_a_world_writable_folder_above_before_measuring(tmp_path, made):
    ww = tmp_path / "ww"
    ww.mkdir()
    os.chmod(ww, 0o777)
    if made:
        (ww / "planner").mkdir()
    code, text = run_cli("calibrate", *CAL, "--out", str(ww / "planner" / "calibration.yaml"))
    assert code == 2
    # the same line whether the calibration file's folder is there already or made by the save
    assert text.startswith(f"Error: {ww}: is a folder above the calibration file's folder ({ww / 'planner'}), but "
                           "anyone can write it and it has no sticky bit"), text
    assert "PyTorch" not in text  # refused before the measurement's own checks
    assert (ww / "planner").exists() == made


def test_calibrate_into_a_private_new_folder_passes_the_check(tmp_path):
    code, text = run_cli("calibrate", *CAL, "--out", str(tmp_path / "ok" / "sub" / "cal.yaml"))
    assert "is a folder above" not in text
    assert not (tmp_path / "ok").exists()


# -- m3: '-' is not standard input -------------------------------------------------------------------------------

STDIN_HINT = ("Error: -: no such file. planner reads files by path and does not take '-' for standard input; to read a "
              "pipe, give the path /dev/stdin.")


@pytest.mark.parametrize("args", [("plan", "-", "--format", "json"), ("estimate", "--workload", "-"),
                                  ("catalog", "import-skypilot", "-", "--provider", "aws")])
def test_a_dash_for_a_file_points_to_dev_stdin(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)  # no file named '-' here
    code, text = run_cli(*args, *(("--out", "x") if args[0] != "estimate" else ()))
    assert code == 2
    assert text.strip() == STDIN_HINT



def test_one_file_given_twice_to_import_skypilot_is_said(tmp_path):
    csv = aws_csv(tmp_path, G5)
    code, text = run_cli("catalog", "import-skypilot", str(csv), str(csv), "--out", str(tmp_path / "NEW"))
    assert code == 2
    assert text.strip() == (f"Error: FILE...: {csv} is given twice. Give each file once (a pipe such as /dev/stdin "
                            "can be read only once).")
    assert not (tmp_path / "NEW").exists()


# -- m4: a C1 control byte that is not UTF-8 ----------------------------------------------------------------------

def test_a_raw_c1_byte_in_out_is_refused_like_its_utf8_form(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = os.fsdecode(b"o\x9b2J")  # 'o\udc9b2J'
    assert raw == "o\udc9b2J"
    code, text = run_cli("plan", SCENARIO, "--out", raw, "--format", "json")
    assert code == 2
    assert text.strip() == ("Error: --out: 'o\\x9b2J' holds the byte \\x9b (U+009B in Latin-1, a control character), "
                            "which no listing shows, so the folder's name would look like another. Write --out 'o2J' "
                            "without it.")
    code, utf8 = run_cli("plan", SCENARIO, "--out", "o\x9b2J", "--format", "json")
    assert code == 2
    # the same line but for how the character is named
    assert utf8.replace("U+009B", "X") == text.replace("the byte \\x9b (U+009B in Latin-1, a control character)", "X")
    assert list(tmp_path.iterdir()) == []


def test_the_api_refuses_the_byte_and_takes_other_non_utf8_bytes(tmp_path, monkeypatch):
    from planner import plan
    from planner.core.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as info:
        plan(SCENARIO, out=os.fsdecode(b"p\x85"), format="json")
    assert "holds the byte \\x85 (U+0085 in Latin-1, a control character)" in str(info.value)
    assert list(tmp_path.iterdir()) == []
    plan(SCENARIO, out=os.fsdecode(b"o\xff"), format="json")  # 0xff is no control: the folder is made
    assert [p.name for p in tmp_path.iterdir()] == [os.fsdecode(b"o\xff")]
