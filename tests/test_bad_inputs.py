"""The corpus of malformed inputs (tests/data/bad/cases.yaml): each case's exact first line.

Every case runs ``planner <args>`` through click's CliRunner from a temporary directory that
holds a copy of tests/data/bad named ``bad`` (``{dir}`` in the case; ``{abs}``, its absolute path), so the paths in the
messages are relative, as a user would type them. A case gives the exit code, the exact
first line of stderr (the only line for exit 2), optionally a line stdout must hold, and the
report files expected in ``out/``. No run may raise, print a traceback or leave other files.
"""

from __future__ import annotations

import functools
import shlex
import shutil
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from click.testing import CliRunner

import planner.cli.options
from planner.catalog.loader import load_catalog
from planner.cli.main import main

CORPUS = Path(__file__).parent / "data" / "bad"
CASES: list[dict[str, Any]] = yaml.safe_load((CORPUS / "cases.yaml").read_text(encoding="utf-8"))["cases"]
KEYS = {"id", "note", "args", "exit", "stderr", "stdout", "stdout_has", "outputs"}


@functools.lru_cache(maxsize=1)
def _shipped() -> Any:
    return load_catalog()


def _load(catalog_dir: str | None) -> Any:
    """The CLI's catalog loader, reading the shipped catalog once for all cases (overlays each time)."""
    return _shipped() if catalog_dir is None else load_catalog(Path(catalog_dir))


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the corpus at ./bad in a fresh working directory; no Hugging Face cache, no calibration."""
    monkeypatch.setattr(planner.cli.options, "load_catalog_option", _load)
    shutil.copytree(CORPUS, tmp_path / "bad")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    return tmp_path


def _files(root: Path) -> set[str]:
    """The files under root, less the manifest of the reports planner wrote (planner.core.reportset.MANIFEST)."""
    from planner.core.reportset import MANIFEST

    return {str(p.relative_to(root)) for p in root.rglob("*") if p.name != MANIFEST}


def test_cases_are_well_formed() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "case ids are unique"
    for c in CASES:
        assert set(c) <= KEYS and {"id", "args", "exit", "stderr"} <= set(c), c["id"]
        assert c["exit"] in (0, 1, 2), c["id"]
        assert (c["exit"] == 2) == c["stderr"].startswith("Error: "), c["id"]
    used = {part for c in CASES for part in shlex.split(c["args"]) if part.startswith("{dir}/")}
    used.add("{dir}/scenario/formula-text.yaml")  # test_cell_text_from_user_files_never_becomes_a_formula
    for kind in ("scenario", "workload", "config", "overlay"):
        for path in sorted((CORPUS / kind).iterdir()):
            ref = f"{{dir}}/{kind}/{path.name}"
            assert any(u == ref or u.startswith(ref + "/") for u in used), f"{ref} is in no case"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_bad_input(case: dict[str, Any], corpus: Path) -> None:
    before = _files(corpus)
    args = [a.replace("{dir}", "bad") for a in shlex.split(case["args"])]
    result = CliRunner().invoke(main, args)
    output = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output
    assert "internal error" not in output
    assert result.exit_code == case["exit"], output

    expected = case["stderr"].replace("{abs}", str(Path("bad").absolute())).replace("{dir}", "bad")
    lines = result.stderr.splitlines()
    assert (lines[0] if lines else "") == expected
    if case["exit"] == 2:
        assert len(lines) == 1, "an input error is one line"
    if "stdout" in case:
        assert case["stdout"] in result.stdout.splitlines(), result.stdout
    if "stdout_has" in case:
        assert case["stdout_has"] in result.stdout, result.stdout

    outputs = sorted(case.get("outputs", []))
    new = _files(corpus) - before
    assert new == ({"out"} | {f"out/{name}" for name in outputs} if outputs else set()), sorted(new)


def test_debug_shows_the_traceback(corpus: Path) -> None:
    """--debug lets the exception through (CliRunner keeps it) instead of the one line."""
    result = CliRunner().invoke(main, ["--debug", "plan", "bad/scenario/unknown-gpu.yaml", "--out", "out"])
    assert result.exit_code == 1 and result.stderr == ""
    assert type(result.exception).__name__ == "ScenarioError"
    assert "unknown GPU 'rtx-4900'" in str(result.exception)


def test_cell_text_from_user_files_never_becomes_a_formula(corpus: Path) -> None:
    """Names, descriptions, notes and sources that start with = + - @ stay text in the workbook."""
    result = CliRunner().invoke(main, ["plan", "bad/scenario/formula-text.yaml", "--out", "out", "--format", "xlsx"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (corpus / "out").iterdir()) == [".planner-reports.json", "formula-text.xlsx"]
    book = openpyxl.load_workbook(corpus / "out" / "formula-text.xlsx")
    texts = ('=HYPERLINK("http://x.example","click")', "=cmd|' /C calc'!A0", "+1+2", "@SUM(A1:A3)", "-2+3")
    found = {t: 0 for t in texts[1:] if t != "+1+2"}  # the description and notes are not cells of their own
    for ws in book.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    assert not any(t in str(cell.value) for t in texts), (ws.title, cell.coordinate, cell.value)
                if cell.value in found:
                    assert cell.data_type == "s", (ws.title, cell.coordinate)
                    found[cell.value] += 1
    assert all(found.values()), found


def test_help_states_the_exit_codes() -> None:
    runner = CliRunner()
    for args in ([], ["plan"], ["estimate"], ["fit"], ["catalog"], ["compare"]):
        text = " ".join(runner.invoke(main, [*args, "--help"]).output.split())
        assert "Exit codes: 0 success; 1 nothing feasible" in text, args
        assert "2 bad input, one line 'Error: <file>:<line>: <entry>: <problem>. <hint>'" in text, args


def _one_line(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stdout == "", result.output
    return lines[0]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_positions_past_a_learned_position_table_are_refused() -> None:
    # GPT-2 learns 1,024 position embeddings (wpe): position 1,024 has none (IndexError / CUDA assert).
    line = _one_line(["estimate", "--model", "gpt2", "--task", "train", "--seq-len", "2048"])
    assert line == ("Error: --seq-len: 2,048 tokens are more than the 1,024 positions a gpt2 model has: its learned "
                    "position embedding (wpe) holds n_positions = 1024 rows, and position 1,024 and later index past "
                    "it (IndexError; a device-side assert on CUDA). Use --seq-len 1024 or less, or a model with rotary "
                    "position embeddings (llama, qwen2, ...).")
    line = _one_line(["estimate", "--model", "gpt2", "--task", "infer", "--context", "4096"])
    assert line.startswith("Error: --context: 4,096 tokens are more than the 1,024 positions a gpt2 model has")
    assert line.endswith("Use --context 1024 or less, or a model with rotary position embeddings (llama, qwen2, ...).")
    ok = CliRunner().invoke(main, ["estimate", "--model", "gpt2", "--task", "infer", "--context", "1024"])
    assert ok.exit_code == 0, ok.output


def test_rotary_models_past_their_maximum_still_only_warn() -> None:
    result = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "train", "--seq-len", "8192"])
    assert result.exit_code == 0, result.output
    assert ("Warning: seq_len 8192 exceeds the model's max_position_embeddings (4096); quality beyond it is not "
            "guaranteed." in result.output.splitlines())


def test_attention_with_vllm_is_refused() -> None:
    line = _one_line(["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
                      "--attention", "eager"])
    assert line == ("Error: --attention: sets the Transformers attention kernel (eager, sdpa, flash) and does nothing "
                    "with engine vllm: vLLM picks its own attention backend, and its start-up profile sizes it. Remove "
                    "it, or set --engine hf.")
