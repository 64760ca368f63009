"""Issue 28, hostile pass 26: findings m2, m4 and m1 of report h26a and M6 of report h26b.

- h26a m2: a folder, socket, named pipe or symbolic link named ``.planner-reports.json`` in ``--out`` is refused
  in one line that says what it is ("is not a regular file (a folder)") and to move that folder away, not "Move
  that file away" (planner.core.manifest.read_manifest).
- h26a m4: a symlink loop as ``--out`` (or on its path) of plan, compare, catalog import-skypilot and calibrate is
  named as a loop, with the link and the ``ls -l`` hint an input loop gets, not "cannot create the output
  directory (Too many levels of symbolic links)" (planner.core.atomic.loop_line); the API says ``out=``; a
  dangling link is still named with where it points.
- h26b M6: a YAML text holding the escapes of a surrogate pair (``"\\ud83d\\ude00"``, as JSON writes an emoji)
  is named as a pair, with its character's code point and 32-bit escape (``\\U0001F600``) as the hint; a lone
  surrogate is shown as the file writes it, not as "such as \\ud800" (planner.core.yamlio.surrogate_problem).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.errors import DestinationError

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / "qlora-7b-12gb.yaml"
MANIFEST = ".planner-reports.json"


def _make(kind: str, path: Path) -> None:
    """Make a non-regular file of ``kind`` at ``path``."""
    if kind == "folder":
        path.mkdir()
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(path))
    elif kind == "named pipe":
        os.mkfifo(path)
    else:
        path.symlink_to("nowhere")


@pytest.mark.parametrize("kind", ["folder", "socket", "named pipe", "symbolic link"])
def test_a_manifest_that_is_no_regular_file_is_named_as_what_it_is(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "o"
    out.mkdir()
    _make(kind, out / MANIFEST)
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(out), "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {out / MANIFEST}: is not a regular file (a {kind}), so not a report manifest "
                        "planner wrote, and planner keeps the list of its reports in a file of that name. Move that "
                        f"{kind} away or give another --out.\n")
    assert sorted(os.listdir(out)) == [MANIFEST]  # nothing written beside it


def test_the_api_names_a_manifest_folder_too(tmp_path: Path) -> None:
    from planner import plan

    out = tmp_path / "o"
    (out / MANIFEST).mkdir(parents=True)
    with pytest.raises(DestinationError) as info:
        plan(str(SCENARIO), out=str(out), format="md")
    assert "is not a regular file (a folder)" in str(info.value)
    assert "Move that folder away" in str(info.value)


def _loop(tmp_path: Path) -> Path:
    """Two links that lead to each other (``ln -s b a; ln -s a b``); the first."""
    a, b = tmp_path / "loopA", tmp_path / "loopB"
    b.symlink_to(a)
    a.symlink_to(b)
    return a


def _loop_line(path: Path, link: Path, what: str = "folder") -> str:
    where = "is" if link == path else f"has on its path {link}, which is"
    return (f"Error: {path}: {where} a symlink loop (each link leads to another, never to a {what}). Point the link "
            f"at the {what} itself ('ls -l' shows where each link leads), or give another --out.\n")


@pytest.mark.parametrize("below", ["", "x", "x/y"])
def test_a_symlink_loop_as_plan_out_is_named_a_loop(tmp_path: Path, below: str) -> None:
    loop = _loop(tmp_path)
    out = loop / below if below else loop
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(out), "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr == _loop_line(out, loop)
    assert sorted(os.listdir(tmp_path)) == ["loopA", "loopB"]


def test_a_symlink_loop_as_compare_out_is_named_a_loop(tmp_path: Path) -> None:
    loop = _loop(tmp_path)
    r = CliRunner().invoke(main, ["compare", str(REPO / "scenarios" / "compare-qlora-7b-12gb.yaml"),
                                  "--out", str(loop)])
    assert r.exit_code == 2, r.output
    assert r.stderr == _loop_line(loop, loop)


def test_the_api_names_a_loop_with_out_equals(tmp_path: Path) -> None:
    from planner import plan

    loop = _loop(tmp_path)
    with pytest.raises(DestinationError) as info:
        plan(str(SCENARIO), out=str(loop / "x"), format="md")
    assert str(info.value) == _loop_line(loop / "x", loop)[len("Error: "):-1].replace("--out", "out=")


@pytest.mark.parametrize("below", ["", "x"])
def test_a_symlink_loop_as_import_skypilot_out_is_named_a_loop(tmp_path: Path, below: str) -> None:
    csv = tmp_path / "aws" / "vms.csv"
    csv.parent.mkdir()
    csv.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
                   "AvailabilityZone\ng5.xlarge,A10G,1,4,16,,1.006,0.45,us-east-1,us-east-1a\n")
    loop = _loop(tmp_path)
    out = loop / below if below else loop
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(csv), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert r.stderr == _loop_line(out, loop)


@pytest.mark.parametrize("below", ["", "cal.yaml"])
def test_a_symlink_loop_as_calibrate_out_is_named_a_loop(tmp_path: Path, below: str) -> None:
    loop = _loop(tmp_path)
    out = loop / below if below else loop
    r = CliRunner().invoke(main, ["calibrate", "--model", "qwen2.5-0.5b", "--task", "infer", "--weights", "bf16",
                                  "--context", "256", "--out", str(out)])
    assert r.exit_code == 2, r.output
    # the loop itself as the file: it should lead to a file; a loop above it: to a folder
    assert r.stderr == _loop_line(out, loop, "file" if out == loop else "folder")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_dangling_out_link_is_still_named_with_where_it_points(tmp_path: Path) -> None:
    link = tmp_path / "dl"
    link.symlink_to("missing")
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(link / "x"), "--format", "md"])
    assert r.exit_code == 2, r.output
    assert f"Error: {link}: is a link to a folder that does not exist ({link} -> missing)." in r.stderr


def _text_problem(escapes: str):
    """The problem parse_yaml (both parsers: the constructor is shared) raises for ``notes: "a<escapes>b"``."""
    from planner.core.yamlio import YamlProblem, parse_yaml

    try:
        parse_yaml(f'x: 1\nnotes: "a{escapes}b"\n')
    except YamlProblem as exc:
        return str(exc), exc.line, exc.hint
    return None


@pytest.mark.parametrize("escapes, code", [
    ("\\ud83d\\ude00", 0x1F600),  # an emoji, as JSON.stringify writes it
    ("\\uD83D\\uDE00", 0x1F600),  # upper-case hex: the same pair
    ("\\ud800\\udc00", 0x10000),  # the first character beyond U+FFFF
    ("\\udbff\\udfff", 0x10FFFF),  # the last
    ("\\ud840\\udc00", 0x20000),  # CJK Extension B
])
def test_a_surrogate_pair_escape_is_named_a_pair_with_its_32_bit_escape(escapes: str, code: int) -> None:
    # the code point by UTF-16's decoding, RFC 2781 section 2.2, computed here from the escapes' hex
    high, low = (int(h, 16) for h in escapes.split("\\u")[1:])
    assert 0x10000 + (high - 0xD800) * 0x400 + (low - 0xDC00) == code
    assert _text_problem(escapes) == (
        f"a text holds the escapes of a surrogate pair (\\u{high:04x}\\u{low:04x}, as JSON and JavaScript write "
        f"U+{code:04X}), which YAML reads as two halves, not as that character", 2,
        f"Write the character itself, or its \\U{code:08X} escape.")
    written = f"\\U{code:08X}"  # the hint's spelling reads back as the character itself
    from planner.core.yamlio import parse_yaml

    assert parse_yaml(f'notes: "a{written}b"\n')["notes"] == f"a{chr(code)}b"


@pytest.mark.parametrize("escapes, lone", [
    ("\\ud83d", "\\ud83d"),  # a high half alone
    ("\\ude00", "\\ude00"),  # a low half alone
    ("\\ude00\\ud83d", "\\ude00"),  # the halves in the wrong order: no pair
    ("\\udc00\\ud83d\\ude00", "\\udc00"),  # a lone low half before a pair: the first is named
])
def test_a_lone_surrogate_escape_is_named_as_the_file_writes_it(escapes: str, lone: str) -> None:
    assert _text_problem(escapes) == (
        f"a text holds an escape of a lone surrogate ({lone}), which is not a character", 2,
        "Write the character itself, or its \\U0001xxxx escape.")


def test_the_command_line_names_the_pair_at_its_line(tmp_path: Path) -> None:
    scenario = tmp_path / "su2.yaml"
    scenario.write_text('name: ssc\ndescription: "a\\ud83d\\ude00b"\nworkloads:\n  - name: w1\n'
                        '    model: llama-2-7b\n    task: infer\n')
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {scenario}:2: description: a text holds the escapes of a surrogate pair "
                        "(\\ud83d\\ude00, as JSON and JavaScript write U+1F600), which YAML reads as two halves, not "
                        "as that character. Write the character itself, or its \\U0001F600 escape.\n")
    assert not (tmp_path / "o").exists()
