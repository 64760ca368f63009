"""Issue 20's leftovers that need files made at run time: a symlink loop given as a scenario, a
workload, a --model path or a workload's model; a SOURCES.md that is not UTF-8 in an overlay folder.
(The config.json cases are in tests/data/bad/cases.yaml.) Messages are checked outside pytest.raises."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.catalog.sources import read_sources
from planner.cli.main import main
from planner.core.infile import FileProblem, read_input

ROOT = Path(__file__).resolve().parents[1]
LOOP = "is a symlink loop (each link leads to another, never to a file). Point the link at the file itself " \
       "('ls -l' shows where each link leads)."


def _loop(tmp_path: Path) -> Path:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    os.symlink(b, a)
    os.symlink(a, b)
    return a


def _one_line(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("command", [["plan"], ["estimate", "--workload"], ["estimate", "--model"]])
def test_a_symlink_loop_is_called_one(tmp_path: Path, command: list[str]) -> None:
    loop = _loop(tmp_path)
    out = tmp_path / "out"
    line = _one_line(command + [str(loop)] + (["--out", str(out)] if command == ["plan"] else []))
    # before: 'no such file' (or 'unknown model' for --model)
    if command[-1] == "--model":
        assert line == f"Error: --model: the path '{loop}' {LOOP}"
    else:
        assert line == f"Error: {loop}: {LOOP}"
    assert not out.exists()


def test_a_workload_s_model_that_is_a_symlink_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _loop(tmp_path)
    monkeypatch.chdir(tmp_path)  # a workload file's relative model path is read from its directory, as a scenario's
    workload = tmp_path / "w.yaml"
    workload.write_text("model: ./a.yaml\ntask: infer\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("workloads:\n  - model: ./a.yaml\n    task: infer\n")
    line = _one_line(["plan", str(scenario), "--out", str(tmp_path / "out")])
    assert line == f"Error: {scenario}:2: workloads[0].model: the path '{tmp_path}/a.yaml' {LOOP}"
    assert _one_line(["estimate", "--workload", str(workload)]) == \
        f"Error: {workload}:1: model: the path '{tmp_path}/a.yaml' {LOOP}"


def test_read_input_names_the_loop(tmp_path: Path) -> None:
    loop = _loop(tmp_path)
    try:
        read_input(loop)
    except FileProblem as exc:
        problem = exc.problem
    else:  # pragma: no cover - the test fails below
        problem = None
    assert problem == "is a symlink loop (each link leads to another, never to a file)"


def _overlay_with_sources(tmp_path: Path, data: bytes) -> Path:
    overlay = tmp_path / "overlay"
    shutil.copytree(ROOT / "tests" / "data" / "bad" / "overlay" / "ok", overlay)
    (overlay / "SOURCES.md").write_bytes(data)
    return overlay


# 'café' in Latin-1: byte 0xe9 on line 3, which is not UTF-8
LATIN1 = b"| id | document | where |\n|---|---|---|\n| MY-QUOTE | caf\xe9 price list | example.com/quotes/2026 |\n"


def test_a_sources_file_that_is_not_utf8_is_a_problem_naming_line_and_byte(tmp_path: Path) -> None:
    overlay = _overlay_with_sources(tmp_path, LATIN1)
    index = read_sources(overlay / "SOURCES.md", "overlay/SOURCES.md")
    assert index.problems == ("overlay/SOURCES.md:3: is not UTF-8 text (byte 0xe9); read with each bad byte as "
                              "U+FFFD: save it as UTF-8",)
    # the id is still defined (so what cites it is not also reported as undefined), its text marked
    assert index.get("MY-QUOTE").text == "caf\ufffd price list"


def test_catalog_check_fails_on_a_sources_file_that_is_not_utf8(tmp_path: Path) -> None:
    overlay = _overlay_with_sources(tmp_path, LATIN1)
    result = CliRunner().invoke(main, ["catalog", "check", "--catalog", str(overlay)])
    assert result.exit_code != 0, result.output
    assert "SOURCES.md:3: is not UTF-8 text (byte 0xe9)" in " ".join(result.output.split())


def test_a_plan_warns_of_a_sources_file_that_is_not_utf8(tmp_path: Path) -> None:
    overlay = _overlay_with_sources(tmp_path, LATIN1)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["plan", str(ROOT / "scenarios" / "qlora-7b-12gb.yaml"), "--catalog",
                                       str(overlay), "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "qlora-7b-12gb.json").read_text())
    warned = [w for w in doc["warnings"] if w.startswith("catalog sources: ")]
    assert len(warned) == 1 and warned[0].endswith("SOURCES.md:3: is not UTF-8 text (byte 0xe9); read with each "
                                                   "bad byte as U+FFFD: save it as UTF-8"), doc["warnings"]


def test_a_utf8_sources_file_gives_no_such_warning(tmp_path: Path) -> None:
    overlay = _overlay_with_sources(tmp_path, LATIN1.replace(b"\xe9", "é".encode()))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["plan", str(ROOT / "scenarios" / "qlora-7b-12gb.yaml"), "--catalog",
                                       str(overlay), "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "qlora-7b-12gb.json").read_text())
    assert not [w for w in doc["warnings"] if w.startswith("catalog sources: ")]
