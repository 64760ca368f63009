"""Issue 28, leftovers of hostile pass 11A.

4. A umask that takes a permission from the user's own new files and folders (277, 477, 177, 777) is refused
   before anything is written, with the umask to set: planner's staging folder (0o700 less the umask) could not be
   written or read, and the message blamed a writable --out (h11a #4).
3. A report a set gains (a new --format) gets no permission bit the set's other reports lack: a set made private
   (chmod 600) stays private (h11a #3, second half).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import _cli, _scenario
from planner.cli.main import main
from planner.core import outpath
from planner.core.errors import OutputError


@pytest.mark.parametrize("mask, taken, hint", [
    (0o277, "write", "0077"),    # owner's write taken; group and others' bits (077) kept in the hint
    (0o477, "read", "0077"),
    (0o177, "search", "0077"),
    (0o722, "read/write/search", "0022"),
    (0o400, "read", "0022"),     # h13a #2: the hint was 'umask 0000', which makes every report writable by anyone
])
def test_a_umask_taking_the_owners_bits_is_refused_with_the_one_to_set(monkeypatch: pytest.MonkeyPatch,
                                                                       mask: int, taken: str, hint: str) -> None:
    monkeypatch.setattr(outpath, "process_umask", lambda: mask)
    raised = None
    try:
        outpath.refuse_owner_umask()
    except OutputError as exc:
        raised = str(exc)
    assert raised == (f"the umask {mask:04o} takes {taken} permission from your own new files and folders, so planner "
                      f"could not write its reports and check them. Run `umask {hint}` (it keeps what the umask takes "
                      "from group and others, and at least their write) and try again.")


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002, 0o027])
def test_a_umask_leaving_the_owners_bits_is_accepted(monkeypatch: pytest.MonkeyPatch, mask: int) -> None:
    monkeypatch.setattr(outpath, "process_umask", lambda: mask)
    assert outpath.refuse_owner_umask() is None


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_umask_277_on_the_command_line_writes_nothing(tmp_path: Path) -> None:
    # the real process umask, read from /proc/self/status by the child (Linux)
    if not Path("/proc/self/status").exists():
        pytest.skip("reads the umask from /proc (Linux)")
    scen = _scenario(tmp_path / "a.yaml", "x")
    r = _cli(shell=f"umask 277 && python -m planner plan '{scen}' --out '{tmp_path / 'o'}'")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("Error: the umask 0277 takes write permission from your own new files"), r.stderr
    assert not (tmp_path / "o").exists()


def test_a_report_a_private_set_gains_is_private(tmp_path: Path) -> None:
    out = tmp_path / "o"
    scen = _scenario(tmp_path / "a.yaml", "x")
    r = CliRunner().invoke(main, ["plan", str(scen), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    (out / "x.json").chmod(0o600)  # the user makes the set private
    r = CliRunner().invoke(main, ["plan", str(scen), "--out", str(out), "--format", "json,md"])
    assert r.exit_code == 0, r.output
    assert stat.S_IMODE(os.stat(out / "x.json").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(out / "x.md").st_mode) == 0o600  # not 0o666 less the umask


def test_a_new_set_follows_the_umask(tmp_path: Path) -> None:
    # no report of the set there yet: the new files are as a plain open() makes them (0o666 less the umask)
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out),
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    from planner.core.atomic import process_umask

    assert stat.S_IMODE(os.stat(out / "x.json").st_mode) == 0o666 & ~process_umask()


def test_stdout_appended_to_a_report_in_out_is_not_called_an_input(tmp_path: Path) -> None:
    # h11a minor: 'plan S --out ap --format json >> ap/x.md' was refused, but the md was called an input
    scen = _scenario(tmp_path / "a.yaml", "x")
    out = tmp_path / "ap"
    r = CliRunner().invoke(main, ["plan", str(scen), "--out", str(out), "--format", "json,md"])
    assert r.exit_code == 0, r.output
    before = (out / "x.md").read_bytes()
    r = _cli(shell=f"python -m planner plan '{scen}' --out '{out}' --format json >> '{out / 'x.md'}'")
    assert r.returncode == 2
    assert r.stderr == (f"Error: standard output is {out / 'x.md'}, a file in the output folder (--out), which this "
                        "run may replace or remove; planner does not write into it. Redirect standard output to "
                        "another file.\n"), r.stderr
    assert (out / "x.md").read_bytes() == before


def test_a_default_calibration_file_inside_the_package_names_the_variable(tmp_path: Path) -> None:
    # h11a minor: XDG_CONFIG_HOME inside the package was refused with "Give another --out", and no --out was given
    import planner

    pkg = Path(planner.__file__).resolve().parent
    r = CliRunner().invoke(main, ["calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16",
                                  "--micro-batch", "1", "--seq-len", "128"], env={"XDG_CONFIG_HOME": str(pkg)})
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {pkg / 'planner' / 'calibration.yaml'}: is inside planner's own package folder ({pkg}), "
                        "and planner does not write into it. That is the default calibration file, from "
                        "XDG_CONFIG_HOME (else HOME): set it to a folder outside, or give --out with a file "
                        "outside.\n"), r.stderr


def _xyz_overlay(tmp_path: Path) -> Path:
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    architecture: xyz\n"
                                  "    source: x\n    as_of: 2026-01-01\n", encoding="utf-8")
    return ov


def test_compare_warns_of_a_gpu_of_an_unknown_architecture(tmp_path: Path) -> None:
    # h11b #4 left compare without the word plan and estimate give: the shipped QLoRA scenario plans an RTX 3060
    ov = _xyz_overlay(tmp_path)
    r = CliRunner().invoke(main, ["compare", str(_scenario(tmp_path / "a.yaml", "x")), "--catalog", str(ov)])
    assert r.exit_code == 0, r.output
    said = " ".join(r.stdout.split())
    assert (f"Warning: {ov / 'gpus.yaml'}:4: gpus[0] (rtx-3060-12gb).architecture: architecture 'xyz' is none the "
            "speed model has figures for") in said, said


def test_fit_notes_a_gpu_of_an_unknown_architecture(tmp_path: Path) -> None:
    ov = _xyz_overlay(tmp_path)
    r = CliRunner().invoke(main, ["fit", "--gpu", "rtx-3060-12gb", "--model", "llama-2-7b", "--task", "train",
                                  "--method", "qlora", "--micro-batch", "max", "--seq-len", "512", "--catalog", str(ov)])
    assert r.exit_code == 0, r.output
    said = " ".join(r.stdout.split())
    assert "Note: GPU 'rtx-3060-12gb' has the architecture 'xyz', none the speed model has figures for" in said, said


def test_catalog_check_names_the_overlays_sources_file_for_its_problems(tmp_path: Path) -> None:
    # a problem in an overlay's SOURCES.md was listed under the shipped catalog's SOURCES.md
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "SOURCES.md").write_text("| ref | source |\n|---|---|\n| [ZZ1] | https://example.com |\n", encoding="utf-8")
    (ov / "gpus.yaml").write_text("schema_version: 1\ngpus: []\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["catalog", "check", "--catalog", str(ov)])
    assert r.exit_code == 1, r.output
    lines = [x for x in r.stdout.replace("\n  ", " ").splitlines() if x.startswith("FAIL")]
    assert lines == [f"FAIL [location] {ov / 'SOURCES.md'}:3: a table row without a usable id ('[ZZ1]'); skipped"], \
        r.stdout
