"""Issue 28, hostile pass 19X: the exit status when both standard streams are a pipe whose reader is gone (N2); a
bare ``planner`` (and ``planner --debug``) whose standard error fails (N3); the API's ``out=`` errors naming the
keyword (M1); an unusable default calibration file said to be the default one (M3); in an ASCII locale, the unwritable
report name one this run writes (M5); an infeasible plan keeping an edited md with its reasons and exit 1 (M6); a
lock held by another thread of this process said as that (M7)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
PLANNER = [sys.executable, "-c", "from planner.cli.main import main; main()"]
COMMANDS = "calibrate, catalog, compare, estimate, fit, plan"


def _run(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(PLANNER + args, cwd=cwd, timeout=300, stdin=subprocess.DEVNULL, **kw)


# ----- N2: both streams a pipe whose reader is gone ----------------------------------------------------------------

def _both_broken(args: list[str], cwd: Path) -> int:
    rd, wr = os.pipe()
    os.close(rd)  # the reader is gone before the run: every write fails with EPIPE
    try:
        return _run(args, cwd, stdout=wr, stderr=wr).returncode
    finally:
        os.close(wr)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_bad_input_with_both_streams_broken_exits_2_not_the_interpreters_120(tmp_path: Path) -> None:
    # 120 is CPython's status for a failed flush of sys.stdout at shutdown; planner's for bad input is 2
    assert _both_broken(["plan", "nonexist.yaml"], tmp_path) == 2
    assert _both_broken(["estimate", "--model", "nope-model"], tmp_path) == 2
    assert _both_broken([], tmp_path) == 2


# ----- N3: a bare 'planner' whose standard error fails --------------------------------------------------------------

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_bare_planner_with_a_full_standard_error_says_so_on_standard_output(tmp_path: Path) -> None:
    with open("/dev/full", "w", encoding="utf-8") as full:
        r = _run([], tmp_path, stdout=subprocess.PIPE, stderr=full, text=True)
        d = _run(["--debug"], tmp_path, stdout=subprocess.PIPE, stderr=full, text=True)
    assert (r.returncode, d.returncode) == (2, 2)  # a usage error, not 1 ("nothing feasible")
    path = "-c"  # click's program name for 'python -c ...'
    want = (f"Error: no command given; give one of {COMMANDS}. See '{path} --help'. (Standard error cannot be "
            "written: No space left on device; this line is given here instead.)\n")
    assert r.stdout == want
    assert d.stdout == want


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_planner_debug_alone_says_what_a_bare_planner_says(tmp_path: Path) -> None:
    r = _run([], tmp_path, capture_output=True, text=True)
    d = _run(["--debug"], tmp_path, capture_output=True, text=True)
    assert (r.returncode, d.returncode) == (2, 2)
    first = f"Error: no command given; give one of {COMMANDS} (the usage follows)."
    assert r.stderr.splitlines()[0] == first
    assert d.stderr == r.stderr  # the same line, then the same usage
    assert "Usage:" in d.stderr.splitlines()[1]


# ----- M1: the API's out= errors name out=, the command line's --out -----------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_api_out_errors_name_the_keyword_and_the_command_line_the_option(tmp_path: Path) -> None:
    from planner import plan
    from planner.core.errors import DestinationError

    catalog = ROOT / "catalog"
    errors = []
    for out in (str(catalog), "/dev/null"):
        try:
            plan(str(SCENARIO), out=out, format="json")
        except DestinationError as exc:
            errors.append(exc)
    assert len(errors) == 2
    own, device = errors
    assert str(own) == (f"{catalog}: is planner's own catalog folder ({catalog}), or a folder inside it, and planner "
                        "does not write into it. Give another out=, a folder outside it, e.g. out='my-catalog'.")
    assert str(device) == ("/dev/null: is a character device, not a directory. Give out= a directory (it is created "
                           "if missing).")
    assert "--out" not in str(own) + str(device)
    # the same errors as the command line prints them
    assert own.cli_line().endswith("Give another --out, a folder outside it, e.g. --out my-catalog.")
    r = _run(["plan", str(SCENARIO), "--out", "/dev/null"], tmp_path, capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr == ("Error: /dev/null: is a character device, not a directory. Give --out a directory (it is "
                        "created if missing).\n")


def test_keyword_words_turns_options_into_keywords_and_leaves_prose() -> None:
    from planner.core.errors import keyword_words

    assert keyword_words("write there (--out .).") == "write there (out='.')."
    assert keyword_words("so --catalog w would read it") == "so catalog='w' would read it"
    assert keyword_words("the --out folder /x is it") == "the out= folder /x is it"
    assert keyword_words("--outside --out-dir") == "--outside --out-dir"  # no option of that name


# ----- M3: an unusable default calibration file is said to be the default one --------------------------------------

def _default_calibration_error(tmp_path: Path, make) -> tuple[subprocess.CompletedProcess, str]:
    xdg = tmp_path / "xdg"
    (xdg / "planner").mkdir(parents=True)
    path = xdg / "planner" / "calibration.yaml"
    make(path)
    env = {**os.environ, "XDG_CONFIG_HOME": str(xdg)}
    r = _run(["estimate", "--model", "llama-2-7b", "--task", "infer", "--context", "4096", "--gpu", "l4"], tmp_path,
             capture_output=True, text=True, env=env)
    return r, str(path)


DEFAULT_NOTE = ("; it is the default calibration file (from XDG_CONFIG_HOME, else HOME), which an estimate on a card "
                "reads when no calibration file is named. Move it away (an estimate then uses no calibration), or "
                "give --calibration FILE to read another.\n")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_folder_at_the_default_calibration_file_is_said_to_be_the_default_with_a_hint(tmp_path: Path) -> None:
    r, path = _default_calibration_error(tmp_path, lambda p: p.mkdir())
    assert r.returncode == 2
    assert r.stderr == f"Error: {path}: is a directory, not a file{DEFAULT_NOTE}"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_fifo_at_the_default_calibration_file_is_said_to_be_the_default_with_a_hint(tmp_path: Path) -> None:
    r, path = _default_calibration_error(tmp_path, lambda p: os.mkfifo(p))
    assert r.returncode == 2
    assert r.stderr.startswith(f"Error: {path}: is a named pipe (FIFO), not a regular file")
    assert r.stderr.endswith(DEFAULT_NOTE)
    assert "a pipe from the shell" not in r.stderr  # the hint for a path the user gave is not this one's


def test_the_api_names_calibration_as_a_keyword_for_the_default_file(tmp_path: Path, monkeypatch) -> None:
    from planner import estimate
    from planner.core.errors import InputError

    (tmp_path / "planner" / "calibration.yaml").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    try:
        estimate(model="llama-2-7b", task="infer", context=4096, gpu="l4")
        said = None
    except InputError as exc:
        said = str(exc)
    assert said is not None
    assert said.endswith("or give calibration=FILE to read another.")


# ----- M5: in an ASCII locale, the unwritable report name is one this run writes ------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_unwritable_report_name_is_one_of_the_formats_asked_for(tmp_path: Path) -> None:
    text = SCENARIO.read_text(encoding="utf-8")
    lines = [('name: "\u8ba1\u5212"' if ln.startswith("name:") else ln) for ln in text.splitlines()]
    (tmp_path / "cn.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    r = _run(["plan", "cn.yaml", "--out", "w", "--format", "md,json"], tmp_path, capture_output=True, env=env)
    assert r.returncode == 2
    err = r.stderr.decode("ascii")
    # PLAN_FORMATS lists xlsx first; the line names a file of --format md,json (json comes before md there)
    assert err.startswith("Error: the report name '\\u8ba1\\u5212.json' cannot be written in the file system's "
                          "encoding (ascii)"), err
    assert not (tmp_path / "w").exists()


# ----- M6: an infeasible plan keeps an edited md as a stale report, with its reasons and exit 1 ---------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_infeasible_plan_keeps_an_edited_md_and_gives_its_reasons(tmp_path: Path) -> None:
    text = SCENARIO.read_text(encoding="utf-8")
    (tmp_path / "inf.yaml").write_text(text + "constraints:\n  budget_usd: 100\n", encoding="utf-8")  # nothing fits
    fmt = ["--format", "xlsx,md,json"]
    r = _run(["plan", str(SCENARIO), "--out", "o", *fmt], tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    md = tmp_path / "o" / "qlora-7b-12gb.md"
    with open(md, "a", encoding="utf-8") as fh:
        fh.write("user edit\n")
    edited = md.read_bytes()
    r = _run(["plan", "inf.yaml", "--out", "o", *fmt], tmp_path, capture_output=True, text=True)
    assert r.returncode == 1, r.stderr  # nothing fits, said with the reasons (as with --format json)
    err = " ".join(r.stderr.split())
    assert "Kept o/qlora-7b-12gb.md, a name of this report set not written this time: it changed since planner " \
           "wrote it." in err
    assert "No machine fits scenario 'qlora-7b-12gb'" in err
    assert "Error:" not in err
    assert md.read_bytes() == edited
    assert sorted(p.name for p in (tmp_path / "o").iterdir() if not p.name.startswith(".")) == \
        ["qlora-7b-12gb.json", "qlora-7b-12gb.md"]  # the stale xlsx removed, the new json written
    # a feasible plan would write the md: still refused, and the edit kept
    r = _run(["plan", str(SCENARIO), "--out", "o", *fmt], tmp_path, capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.startswith("Error: o/qlora-7b-12gb.md: is changed since planner wrote it")
    assert md.read_bytes() == edited


# ----- M7: a lock this process holds is said as that ----------------------------------------------------------------

def test_a_lock_held_by_another_thread_of_this_process_is_said_as_that(tmp_path: Path) -> None:
    import threading

    from planner.core.errors import OutputError
    from planner.core.reportset import ReportSet

    out = tmp_path / "o"
    said: list[str] = []

    def second() -> None:
        try:
            with ReportSet(out):
                said.append("locked")
        except OutputError as exc:
            said.append(str(exc))

    with ReportSet(out):
        t = threading.Thread(target=second)
        t.start()
        t.join()
    assert said == [f"{out}: this process already holds this directory's lock (another call writing reports into it, "
                    "such as plan(out=) or compare(out=) in another thread, or a lock the program took on the "
                    "folder). Let that call finish first (one call at a time per folder), or give another out="
                    "."]
    assert "another process" not in said[0]
