"""Output failures are one 'Error:' line and a non-zero exit, never "internal error" (issue 28): standard
output full (/dev/full), closed, opened read-only; a Latin-1 terminal (characters it lacks shown as escapes);
a file-size limit while openpyxl writes; an --out 1,200 folders deep."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"


def _planner(*args: str, stdout=subprocess.PIPE, env: dict | None = None, preexec=None, shell_suffix: str = ""):
    environ = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    if shell_suffix:  # a redirection only a shell can make ('>&-')
        import shlex

        cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "planner", *args]) + " " + shell_suffix
        return subprocess.run(["bash", "-c", cmd], env=environ, stderr=subprocess.PIPE, text=True, timeout=120)
    return subprocess.run([sys.executable, "-m", "planner", *args], env=environ, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=preexec)


def _one_error_line(stderr: str, start: str) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: " + start), stderr
    assert "internal error" not in stderr and "Traceback" not in stderr and "Exception ignored" not in stderr


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [["catalog", "gpus"], ["plan", str(SCENARIO)], ["--help"]])
def test_a_full_standard_output(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        r = _planner(*args, stdout=full)
    assert r.returncode == 2
    _one_error_line(r.stderr, "cannot write the output (No space left on device).")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_standard_output_opened_read_only() -> None:
    with open(os.devnull) as read_only:
        r = _planner("plan", str(SCENARIO), stdout=read_only)
    assert r.returncode == 2
    _one_error_line(r.stderr, "cannot write the output (Bad file descriptor).")


def test_a_closed_standard_output(tmp_path: Path) -> None:
    # before: exit 0, nothing printed, the reports written unseen
    r = _planner("plan", str(SCENARIO), "--out", str(tmp_path / "o"), shell_suffix=">&-")
    assert r.returncode == 2
    _one_error_line(r.stderr, "standard output is closed")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_latin1_terminal_gets_escapes_for_what_it_lacks(tmp_path: Path) -> None:
    scenario = tmp_path / "cjk.yaml"
    scenario.write_text(SCENARIO.read_text().replace("name: qlora-7b-12gb", "name: \u8a08\u753b-plan"))
    r = _planner("plan", str(scenario), "--out", str(tmp_path / "o"), "--format", "json,md",
                 env={"PYTHONIOENCODING": "latin-1"})
    assert r.returncode == 0, r.stderr
    assert "Scenario \\u8a08\\u753b-plan:" in r.stdout and "internal error" not in r.stderr
    assert (tmp_path / "o" / "\u8a08\u753b-plan.json").is_file()


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_file_size_limit_while_the_workbook_is_written(tmp_path: Path) -> None:
    def limit() -> None:  # 16 KiB: the workbook's largest sheet (Sources, about 18 KB) fails in openpyxl's temporary file
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))

    out = tmp_path / "o"
    r = _planner("plan", str(SCENARIO), "--out", str(out), "--format", "xlsx", preexec=limit)
    assert r.returncode == 2
    _one_error_line(r.stderr, f"{out / 'qlora-7b-12gb.xlsx'}: cannot write the workbook (File too large)")
    assert not out.exists() or os.listdir(out) == []  # no staging folder, no half a workbook


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_out_folder_1200_deep(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from planner.cli.main import main

    deep = tmp_path.joinpath(*["a"] * 1200)  # os.makedirs would recurse once per level, past the limit
    try:
        r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(deep), "--format", "json"])
        assert r.exit_code == 0, r.output
        assert (deep / "qlora-7b-12gb.json").is_file()
    finally:
        _remove_chain(tmp_path / "a")
    too_deep = tmp_path.joinpath(*["b" * 200] * 30)  # 6,000 bytes: over PATH_MAX (4,096)
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(too_deep), "--format", "json"])
    assert r.exit_code == 2 and r.stderr.startswith("Error: ") and "internal error" not in r.stderr
    assert "File name too long" in r.stderr


def _remove_chain(top: Path) -> None:
    """Remove a chain of folders (one inside the other) and their files, deepest first, without recursion:
    shutil.rmtree (Python 3.11) and pytest's clean-up of old temporary folders recurse once per level."""
    chain = []
    here = top
    while here.is_dir():
        chain.append(here)
        subs = [p for p in here.iterdir() if p.is_dir()]
        here = subs[0] if subs else here / "-"
    for d in reversed(chain):
        for f in d.iterdir():
            if not f.is_dir():
                f.unlink()
        d.rmdir()
