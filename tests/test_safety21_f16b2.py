"""Hostile pass h16b, findings fixed on branch f16b2.

- 13n: a name holding a combining overline (U+0305, U+033F) or an overlay mark (Canonical_Combining_Class 1, such as
  U+0334-U+0338) is refused as a combining low line is (planner.core.names._drawn_mark_problem).
- 13j: so is a calibration gpu_name holding one, before any note shows it.
- 5: a scenario named after its file whose stem holds an invisible character (or a byte that is not UTF-8) is
  refused, not named after the escape (which a file literally named so would share); the path at the line's start
  shows a private-use character as its escape.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.names import name_problem

WORKLOADS = "workloads:\n  - name: w\n    model: llama-2-7b\n    task: infer\n    context: 2048\n"


@pytest.mark.parametrize("mark, why", [
    ("\u0305", "drawn as a line over"), ("\u033f", "drawn as a line over"),
    ("\u0334", "an overlay mark"), ("\u0335", "an overlay mark"), ("\u0336", "an overlay mark"),
    ("\u0337", "an overlay mark"), ("\u0338", "an overlay mark"), ("\u20d2", "an overlay mark"),
])
def test_an_overline_or_overlay_mark_in_a_name_is_refused(mark: str, why: str) -> None:
    told = name_problem(f"a{mark}b")
    assert told is not None
    # the message shows the mark as its escape, and the hint the name without it
    assert f"'a\\u{ord(mark):04x}b' holds U+{ord(mark):04X}" in told[0] and why in told[0], told
    assert told[1] == "Remove it: 'ab'."


def test_a_macron_and_an_acute_accent_are_still_names() -> None:
    # U+0304 COMBINING MACRON ('ā') and U+0301 are drawn over their own letter: not lines joining two
    assert name_problem("a\u0304b") is None and name_problem("cafe\u0301") is None


def test_a_workload_name_with_a_long_stroke_overlay_is_refused(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_text(WORKLOADS.replace("name: w", 'name: "a\\u0336b"'), encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert "U+0336 (COMBINING LONG STROKE OVERLAY)" in r.stderr and "Remove it: 'ab'." in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_a_calibration_gpu_name_with_an_overlay_is_refused(tmp_path: Path) -> None:
    cal = tmp_path / "c.yaml"
    cal.write_text('schema_version: 1\ngpus:\n  - gpu_name: "NVIDIA L\\u0334"\n    cuda_context: 2000 MiB\n'
                   "    allocator_fraction: 0.5\n    measured_on: 2026-12-01\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4",
                                  "--calibration", str(cal)])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "\u0334" not in line and "gpus[0].gpu_name: 'NVIDIA L\\u0334' holds U+0334 (COMBINING TILDE OVERLAY)" in line
    assert "Remove it: 'NVIDIA L'." in line


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u2060", "\ufeff", "\u00ad", "\u200e", "\U000e0041",
                                  "\u3164"])
def test_a_scenario_named_after_a_stem_with_an_invisible_character_is_refused(tmp_path: Path, char: str) -> None:
    s = tmp_path / f"x{char}y.yaml"
    s.write_text(WORKLOADS, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "the scenario is named after its file, and its name holds U+" in line and char not in line, line
    assert line.endswith("Give the name in the file (name: ...), or rename the file."), line
    assert not (tmp_path / "o").exists()


def test_the_escape_of_an_invisible_stem_is_no_longer_a_scenario_name_another_file_shares(tmp_path: Path) -> None:
    # before: 'x' U+200B 'y.yaml' planned as scenario 'x\u200by', the name of a file literally named 'x\u200by.yaml'
    # too, whose reports then replaced the first's; the literal one still plans (a backslash is a safe character)
    (tmp_path / "x\u200by.yaml").write_text(WORKLOADS, encoding="utf-8")
    literal = tmp_path / "x\\u200by.yaml"
    literal.write_text(WORKLOADS, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "x\u200by.yaml"), "--out", str(tmp_path / "o"), "--format",
                                  "json"])
    assert r.exit_code == 2
    r = CliRunner().invoke(main, ["plan", str(literal), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert "Scenario x\\u200by:" in r.stdout


def test_a_stem_byte_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    name = b"a\xffb.yaml".decode("utf-8", "surrogateescape")  # as os.listdir gives it (PEP 383)
    s = tmp_path / name
    try:
        s.write_text(WORKLOADS, encoding="utf-8")
    except (OSError, UnicodeEncodeError):
        pytest.skip("the file system takes UTF-8 names only")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert "its name holds the byte \\xff, which is not UTF-8" in r.stderr, r.stderr


def test_a_private_use_stem_is_escaped_at_the_start_of_the_line(tmp_path: Path) -> None:
    s = tmp_path / "p\uf022x.yaml"
    s.write_text(WORKLOADS, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "\uf022" not in line and line.startswith(f"Error: {tmp_path}/p\\uf022x.yaml: the scenario is named after"), line
