"""Standard output or standard error redirected onto an input of the run, or onto a file of planner's own
package or shipped catalog, is refused before anything is written (issue 28, hostile pass 5A item 2):
``planner catalog gpus 1<> catalog/gpus.yaml`` used to rewrite the shipped catalog with exit 0."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _run(args: list[str], *, stdout: Path | None = None, stderr: Path | None = None, mode: int = os.O_RDWR,
         cwd: Path | None = None) -> tuple[int, str]:
    """Run planner with stdout (or stderr) opened on ``stdout`` (``stderr``) with ``mode``; the other stream
    is captured and returned."""
    target = stdout or stderr
    fd = os.open(target, mode)
    try:
        kw = {"stdout": fd, "stderr": subprocess.PIPE} if stdout else {"stderr": fd, "stdout": subprocess.PIPE}
        proc = subprocess.run([sys.executable, "-m", "planner", *args], cwd=cwd, **kw, timeout=300)
    finally:
        os.close(fd)
    other = proc.stderr if stdout else proc.stdout
    return proc.returncode, other.decode()


def test_stdout_onto_the_shipped_catalog_is_refused():
    gpus = ROOT / "catalog" / "gpus.yaml"
    before = _sha(gpus)
    rc, err = _run(["catalog", "gpus"], stdout=gpus)  # 1<> catalog/gpus.yaml
    assert _sha(gpus) == before
    assert rc == 2, err
    assert f"Error: standard output is {gpus}, a file of planner's own package or shipped catalog" in err, err


def test_stdout_appended_onto_the_package_is_refused():
    init = ROOT / "planner" / "__init__.py"
    before = _sha(init)
    rc, err = _run(["catalog", "cloud"], stdout=init, mode=os.O_WRONLY | os.O_APPEND)  # >> planner/__init__.py
    assert _sha(init) == before
    assert rc == 2 and "a file of planner's own package or shipped catalog" in err, err


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_stream_onto_the_runs_scenario_is_refused(tmp_path: Path, stream: str):
    s = tmp_path / "s.yaml"
    s.write_bytes((ROOT / "scenarios" / "qlora-7b-12gb.yaml").read_bytes())
    before = _sha(s)
    rc, other = _run(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"], **{stream: s})
    assert _sha(s) == before
    assert rc == 2
    assert not (tmp_path / "o").exists()  # refused before anything was written
    if stream == "stdout":  # the line goes to the other stream
        assert f"Error: standard output is {s}, an input of this run" in other, other


def test_a_hard_link_of_an_input_is_the_input(tmp_path: Path):
    s = tmp_path / "s.yaml"
    s.write_bytes((ROOT / "scenarios" / "qlora-7b-12gb.yaml").read_bytes())
    os.link(s, tmp_path / "out.txt")
    rc, err = _run(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"], stdout=tmp_path / "out.txt")
    assert rc == 2 and "an input of this run" in err, err


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_stdout_onto_another_file_still_works(tmp_path: Path):
    s = tmp_path / "s.yaml"
    s.write_bytes((ROOT / "scenarios" / "qlora-7b-12gb.yaml").read_bytes())
    out = tmp_path / "plan.txt"
    out.write_text("")
    rc, err = _run(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"], stdout=out)
    assert rc == 0, err
    assert out.read_text().startswith("Scenario qlora-7b-12gb")
