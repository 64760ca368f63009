"""Issue 28, hostile pass 12A (report h12a).

1. (#2) SIGABRT is handled as SIGTERM is; SIGBUS, SIGSEGV, SIGFPE and SIGILL get no handler but are blocked
   while a set moves into place: one sent then finishes the set, removes the staging folder, says the one
   'Interrupted by ...' line and only then takes its default action.
2. (#3) The Python API (``plan(out=)``, any :class:`ReportSet` without a guard) stopped by SIGTERM, SIGHUP,
   SIGQUIT during the moves (sent to its main thread): the set completes, the staging folder is removed, one
   line goes to stderr, and the signal then ends the process as it would have. It installs no handler.
3. A replaced report keeps its permission bits but never set-user-ID or set-group-ID.
4. A full disk (ENOSPC) or quota (EDQUOT) when planner makes its first file says so.
5. A temporary folder refused names the variable that named it (TEMP, TMP), not TMPDIR.

The in-process tests send the signal to the main thread (``pthread_kill``, as strace's ``inject=...:signal=`` does)
and replace :func:`planner.core.interrupt._end_by` (what unblocks and re-raises the signal at the end) by one that
records the signal and takes it (``sigtimedwait``), so the test process lives on; two subprocess tests let it
end a real process.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from cli_helpers import _scenario
from planner.core import interrupt, renames
from planner.core.atomic import ensure_dir, write_text
from planner.core.errors import DestinationError, OutputError
from planner.core.interrupt import FAULT_SIGNALS, OTHER_FATAL_SIGNALS, SIGNALS, Interrupted, SignalGuard
from planner.core.reportset import ReportSet

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def ended(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The signals the run let take their default action, taken here instead of ending the test process."""
    seen: list[int] = []

    def end_by(sigs: list[int]) -> None:
        seen.extend(sigs)
        signal.sigtimedwait(sigs, 0)  # a blocked one still pending: taken, so it never reaches the process
        signal.pthread_sigmask(signal.SIG_UNBLOCK, sigs)

    monkeypatch.setattr(interrupt, "_end_by", end_by)
    return seen


def _swap_then_signal(monkeypatch: pytest.MonkeyPatch, signum: int, *, process: bool = False) -> None:
    """The first swap of the moves sends ``signum`` to the main thread (or, ``process``, to the process)."""
    real = renames.exchange
    calls: list = []

    def swap(a, b):
        done = real(a, b)
        calls.append(b)
        if len(calls) == 1:
            if process:
                os.kill(os.getpid(), signum)
            else:
                signal.pthread_kill(threading.main_thread().ident, signum)
        return done

    monkeypatch.setattr(renames, "exchange", swap)


def _previous_set(out: Path) -> None:
    """A set of s.csv, s.json and s.md, for a set of s.csv and s.json to replace (s.md then stale)."""
    with ReportSet(out, set_name="plan s") as rs:
        for ext in ("csv", "json", "md"):
            write_text(rs.path(f"s.{ext}"), f"old {ext}")
        rs.commit()


def _new_set(out: Path, guard: SignalGuard | None = None) -> None:
    with ReportSet(out, guard=guard, set_name="plan s") as rs:
        write_text(rs.path("s.csv"), "new csv")
        write_text(rs.path("s.json"), "new json")
        rs.remove("s.md")
        rs.commit()


def test_sigabrt_is_handled_and_the_fault_signals_are_only_blocked() -> None:
    assert signal.SIGABRT in OTHER_FATAL_SIGNALS and signal.SIGABRT in SIGNALS
    assert set(FAULT_SIGNALS) == {signal.SIGBUS, signal.SIGSEGV, signal.SIGFPE, signal.SIGILL}
    assert not set(FAULT_SIGNALS) & set(SIGNALS)
    before = {s: signal.getsignal(s) for s in FAULT_SIGNALS}
    with SignalGuard():
        assert {s: signal.getsignal(s) for s in FAULT_SIGNALS} == before  # no Python handler, ever


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="no pthread_kill")
@pytest.mark.parametrize("name", ["SIGBUS", "SIGSEGV", "SIGFPE", "SIGILL"])
def test_a_fault_signal_sent_during_the_moves_finishes_the_set_first(tmp_path: Path, monkeypatch, ended,
                                                                     name: str) -> None:
    signum = getattr(signal, name)
    out = tmp_path / "o"
    _previous_set(out)
    _swap_then_signal(monkeypatch, signum)
    raised = None
    with SignalGuard() as guard:
        try:
            _new_set(out, guard)
        except Interrupted as exc:
            raised = exc
        assert ended == []  # still held: the command says its line first
    assert ended == [signum]  # then, as the guard ends, the signal takes its default action
    assert raised is not None and raised.name == name and raised.exit_code == 128 + signum
    assert raised.written == [out / "s.csv", out / "s.json"] and raised.removed == [out / "s.md"]
    assert sorted(os.listdir(out)) == [".planner-reports.json", "s.csv", "s.json"]  # whole, no staging folder
    assert (out / "s.json").read_text() == "new json"
    assert signum not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGQUIT", "SIGABRT"])
def test_the_api_stopped_during_the_moves_removes_its_staging_folder_and_says_so(tmp_path: Path, monkeypatch,
                                                                                   capsys, ended, name: str) -> None:
    signum = getattr(signal, name)
    out = tmp_path / "o"
    _previous_set(out)
    # sent to the main thread, which blocks it during the moves (a signal sent to the process may go to another
    # thread, which does not: the documented limit). SIGABRT is left to pytest's faulthandler (a C handler that
    # ends the process as the default action does: planner defers it the same way)
    abrt = signum == signal.SIGABRT
    _swap_then_signal(monkeypatch, signum)
    old = signal.getsignal(signum) if abrt else signal.signal(signum, signal.SIG_DFL)  # as a script with no handler
    try:
        capsys.readouterr()
        with pytest.raises(Interrupted):  # (the process would have ended here: _end_by is the test's)
            _new_set(out)
        assert signal.getsignal(signum) == signal.SIG_DFL  # no handler was installed
    finally:
        if not abrt:
            signal.signal(signum, old)
    assert ended == [signum]
    assert capsys.readouterr().err == (f"planner: Interrupted by {name} after the reports were written: wrote "
                                       f"{out / 's.csv'} and {out / 's.json'} (complete); removed the stale "
                                       f"{out / 's.md'}; stopped.\n")
    assert sorted(os.listdir(out)) == [".planner-reports.json", "s.csv", "s.json"]
    files = json.loads((out / ".planner-reports.json").read_text())["files"]
    assert sorted(files) == ["s.csv", "s.json"]


def test_the_api_keeps_the_callers_handlers(tmp_path: Path, monkeypatch) -> None:
    # SIGINT (Python's KeyboardInterrupt) and a handler of the caller's run after the set is in place, as before
    out = tmp_path / "o"
    _previous_set(out)
    seen: list[int] = []
    old = signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))
    _swap_then_signal(monkeypatch, signal.SIGUSR1, process=True)
    try:
        _new_set(out)
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert seen == [signal.SIGUSR1]
    assert sorted(os.listdir(out)) == [".planner-reports.json", "s.csv", "s.json"]


def _child_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"}
    env["PYTHONPATH"] = f"{ROOT / 'tests'}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return env


_CHILD = """
import os, signal, sys, threading
from planner.core import renames
real, n = renames.exchange, []
def swap(a, b):
    done = real(a, b)
    n.append(b)
    if len(n) == 1:
        {send}
    return done
renames.exchange = swap
{call}
print("returned")
"""


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_real_sigterm_ends_the_api_process_after_its_line(tmp_path: Path) -> None:
    # sent to the main thread, as strace's inject=renameat2:signal=TERM does (h12a #3)
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    import planner

    planner.plan(str(s), out=str(out), format="json,csv,md")
    code = _CHILD.format(send="signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)",
                         call=f"import planner; planner.plan({str(s)!r}, out={str(out)!r}, format='json,csv')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_child_env())
    assert p.returncode == -signal.SIGTERM, p.stderr  # ended by the signal itself, as it would have been
    assert p.stdout == ""
    assert p.stderr == (f"planner: Interrupted by SIGTERM after the reports were written: wrote {out / 's.csv'} and "
                        f"{out / 's.json'} (complete); removed the stale {out / 's.md'}; stopped.\n"), p.stderr
    assert sorted(os.listdir(out)) == [".planner-reports.json", "s.csv", "s.json"]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_real_sigbus_ends_the_cli_after_its_line(tmp_path: Path) -> None:
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    import planner

    planner.plan(str(s), out=str(out), format="json,csv,md")
    code = _CHILD.format(send="signal.pthread_kill(threading.main_thread().ident, signal.SIGBUS)",
                         call=("from planner.cli.main import main; "
                               f"main(['plan', {str(s)!r}, '--out', {str(out)!r}, '--format', 'json,csv'])"))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_child_env())
    assert p.returncode == -signal.SIGBUS, p.stderr
    assert p.stderr == (f"Interrupted by SIGBUS after the reports were written: wrote {out / 's.csv'} and "
                        f"{out / 's.json'} (complete); removed the stale {out / 's.md'}; stopped.\n"), p.stderr
    assert sorted(os.listdir(out)) == [".planner-reports.json", "s.csv", "s.json"]


def test_a_replaced_report_never_keeps_setuid_or_setgid(tmp_path: Path) -> None:
    out = tmp_path / "o"
    _previous_set(out)
    os.chmod(out / "s.json", 0o4755)
    os.chmod(out / "s.csv", 0o2640)
    _new_set(out)
    # the permission bits are kept (0o755, 0o640); S_ISUID (0o4000) and S_ISGID (0o2000) are not
    assert stat.S_IMODE(os.stat(out / "s.json").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(out / "s.csv").st_mode) == 0o640
    f = tmp_path / "f.txt"
    f.write_text("old")
    os.chmod(f, 0o6700)
    write_text(f, "new")
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o700
    write_text(f, "private", private=True)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o700


@pytest.mark.parametrize("err, said", [
    (errno.ENOSPC, "The folder can be written, but its disk is full: free some space, or give --out a folder on "
                   "another disk."),
    (errno.EDQUOT, "The folder can be written, but your disk quota there is used up: free some space, or give --out "
                   "a folder on another disk."),
])
def test_a_full_disk_at_the_first_file_is_said(tmp_path: Path, monkeypatch, err: int, said: str) -> None:
    def full(*a, **kw):
        raise OSError(err, os.strerror(err))

    out = tmp_path / "o"
    monkeypatch.setattr(tempfile, "mkdtemp", full)  # the staging folder
    raised = None
    try:
        with ReportSet(out, set_name="plan s"):
            pass
    except OutputError as exc:
        raised = str(exc)
    assert raised == f"{out}: cannot write into the output directory ({os.strerror(err)}). {said}"
    assert not out.exists()  # the folder it made is removed again
    monkeypatch.undo()
    monkeypatch.setattr(os, "mkdir", full)  # --out itself
    raised = None
    try:
        ensure_dir(out)
    except OutputError as exc:
        raised = exc
    assert raised is not None and not isinstance(raised, DestinationError)  # a write that failed, not a refusal
    assert str(raised) == f"{out}: cannot create the output directory ({os.strerror(err)}). {said}"


@pytest.mark.parametrize("var", ["TEMP", "TMP"])
def test_a_temporary_folder_refused_names_its_variable(monkeypatch, var: str) -> None:
    from planner.core.tempdir import refuse_protected_temp

    catalog = ROOT / "catalog"
    for v in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv(var, str(catalog))
    monkeypatch.setattr(tempfile, "tempdir", None)
    raised = None
    try:
        refuse_protected_temp()
    except OutputError as exc:
        raised = str(exc)
    assert raised == (f"the temporary folder {catalog} ({var}) is inside planner's own catalog folder ({catalog}), "
                      f"where planner writes nothing, not even temporary files. Set {var} (or TMPDIR, which is read "
                      "first) to another folder, e.g. TMPDIR=/tmp.")

