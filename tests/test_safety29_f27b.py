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
- h26a m1: import-skypilot's check copy (``planner-overlay-XXXXXXXX`` in the temporary folder) is made and removed
  with the stop signals held, so SIGTERM, SIGHUP or SIGINT landing in its removal leaves nothing; each copy holds
  planner's mark naming its process, and a later import removes (saying so) a copy a SIGKILL left when it can
  prove it is one: this user's 0700 folder of planner's name, the mark and catalog files only (regular, one link
  each), unchanged for 10 minutes, its process gone; anything else is left (planner.core.checkcopy).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
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


# ----- h26a m1: the importer's check copy in the temporary folder -----------------------------------------------

def _dead_pid() -> int:
    """The id of a process that has ended (and been waited for)."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _copy(folder: Path, name: str = "planner-overlay-abcd_123", *, pid: int | None = None,
          files: dict[str, str] | None = None) -> Path:
    """A check copy as a stopped run leaves it: mode 0700, planner's mark (naming ``pid``, by default one that
    has ended) and ``files`` (by default a cloud.yaml)."""
    from planner.core.checkcopy import MARK, MARK_FORMAT

    d = folder / name
    d.mkdir(mode=0o700)
    d.chmod(0o700)
    files = files if files is not None else {"cloud.yaml": "instances: []\n"}
    record = {n: {"size": len(t.encode()), "sha256": hashlib.sha256(t.encode()).hexdigest()} for n, t in files.items()}
    (d / MARK).write_text(json.dumps({"format": MARK_FORMAT, "pid": _dead_pid() if pid is None else pid,
                                      "files": record}) + "\n")
    for n, text in files.items():
        (d / n).write_text(text)
    return d


def _sweep(folder: Path, *, age: float = 3600):
    from planner.catalog.loader import CATALOG_FILES
    from planner.core.checkcopy import sweep_stale

    return sweep_stale(folder, CATALOG_FILES, now=time.time() + age)


def test_a_stopped_runs_marked_check_copy_is_removed(tmp_path: Path) -> None:
    d = _copy(tmp_path, files={"cloud.yaml": "x\n", "gpus.yaml": "y\n"})
    assert _sweep(tmp_path) == [d]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("case", ["alive", "recent", "foreign file", "no mark", "other mark", "link inside",
                                  "folder inside", "mode 0755", "hard link", "other name"])
def test_anything_not_provably_a_stopped_runs_check_copy_is_left(tmp_path: Path, case: str) -> None:
    from planner.core.checkcopy import MARK

    d = _copy(tmp_path, pid=os.getppid() if case == "alive" else None,
              name="planner-overlay-abc" if case == "other name" else "planner-overlay-abcd_123")
    if case == "foreign file":
        (d / "notes.txt").write_text("mine\n")
    elif case == "no mark":
        (d / MARK).unlink()
    elif case == "other mark":
        (d / MARK).write_text('{"format": "something else", "pid": 1}\n')
    elif case == "link inside":
        (d / "cloud.yaml").unlink()
        (d / "cloud.yaml").symlink_to(tmp_path / "elsewhere")
    elif case == "folder inside":
        (d / "gpus.yaml").mkdir()
    elif case == "mode 0755":
        d.chmod(0o755)
    elif case == "hard link":
        os.link(d / "cloud.yaml", tmp_path / "kept.yaml")
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert _sweep(tmp_path, age=0 if case == "recent" else 3600) == []
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before


def test_a_link_named_as_a_check_copy_is_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    d = _copy(real)
    (tmp_path / "planner-overlay-zzzz_999").symlink_to(d)
    assert _sweep(tmp_path) == []
    assert (d / "cloud.yaml").exists()


def test_the_mark_make_check_dir_writes_names_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from planner.core.checkcopy import MARK, MARK_FORMAT, make_check_dir, remove_check_dir, write_check_file

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    d = make_check_dir()
    assert d.parent == tmp_path and d.stat().st_mode & 0o777 == 0o700
    assert json.loads((d / MARK).read_text()) == {"format": MARK_FORMAT, "pid": os.getpid(), "files": {}}
    write_check_file(d, "cloud.yaml", b"x\n")
    assert _sweep(tmp_path) == []  # this process lives: kept, however old
    mark = json.loads((d / MARK).read_text())
    assert mark["files"] == {"cloud.yaml": {"size": 2, "sha256": hashlib.sha256(b"x\n").hexdigest()}}
    (d / MARK).write_text(json.dumps({**mark, "pid": _dead_pid()}))
    assert _sweep(tmp_path) == [d]
    d2 = make_check_dir()
    write_check_file(d2, "cloud.yaml", b"x\n")
    remove_check_dir(d2)
    assert os.listdir(tmp_path) == []


def test_an_import_removes_a_stopped_runs_check_copy_and_says_so(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from planner.core import checkcopy

    temp = tmp_path / "t"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(checkcopy, "STALE_SECONDS", 0)  # files made now are not 10 minutes old
    left = _copy(temp)
    other = temp / "planner-overlay-other_12"  # no mark: another's, or an older planner's: left
    other.mkdir(mode=0o700)
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(_vms(tmp_path)), "--out", str(tmp_path / "ov")])
    assert r.exit_code == 0, r.output
    assert (f"Note: removed {left}, the check copy of an import-skypilot run that was stopped (its process is "
            "gone).") in r.stderr
    assert os.listdir(temp) == [other.name]  # its own check copy gone too
    assert (tmp_path / "ov" / "cloud.yaml").exists()


def _vms(tmp_path: Path) -> Path:
    csv = tmp_path / "aws" / "vms.csv"
    csv.parent.mkdir(exist_ok=True)
    csv.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
                   "AvailabilityZone\ng5.xlarge,A10G,1,4,16,,1.006,0.45,us-east-1,us-east-1a\n")
    return csv


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stop_signal_during_the_check_copys_removal_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    signame: str) -> None:
    import signal
    import tempfile
    import types

    from planner.core import checkcopy

    temp = tmp_path / "t"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    sent = []

    def unlink(path, *a, **k):  # the signal lands as the first file goes, as in h26a m1
        if not sent:
            sent.append(path)
            os.kill(os.getpid(), getattr(signal, signame))
        return os.unlink(path, *a, **k)

    names = {n: getattr(os, n) for n in dir(os) if not n.startswith("__")}
    monkeypatch.setattr(checkcopy, "os", types.SimpleNamespace(**{**names, "unlink": unlink}))
    # a signal this process inherited as ignored (a run under nohup, or in a non-interactive shell's background,
    # where SIGINT is ignored) is kept ignored by planner's CLI, as it should be: give it its default for the run
    sig = getattr(signal, signame)
    inherited = signal.getsignal(sig)
    if inherited == signal.SIG_IGN:
        signal.signal(sig, signal.default_int_handler if signame == "SIGINT" else signal.SIG_DFL)
    try:
        r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(_vms(tmp_path)), "--out",
                                      str(tmp_path / "ov")])
    finally:
        if inherited == signal.SIG_IGN:
            signal.signal(sig, signal.SIG_IGN)
    assert sent and r.exit_code == 128 + sig, r.output
    assert f"Interrupted by {signame}; stopped." in r.stderr
    assert os.listdir(temp) == []  # the removal ran whole: no empty folder, no cloud.yaml
    assert not (tmp_path / "ov" / "cloud.yaml").exists()
