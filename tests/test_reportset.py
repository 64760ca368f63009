"""A report set is one unit (planner.core.reportset), signals are held while it moves (planner.core.interrupt),
and single files are written atomically with byte-capped temporary names (planner.core.atomic)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
from pathlib import Path

import pytest

from planner.core.atomic import ensure_dir, write_text
from planner.core.errors import OutputError
from planner.core.interrupt import Interrupted, SignalGuard, held
from planner.core.names import MAX_STEM_BYTES, safe_stem
from planner.core.reportset import MANIFEST, STAGING_MARK, STAGING_PREFIX, ReportSet
from planner.core.names import path_word


@pytest.fixture(autouse=True)
def _signals_as_a_terminal_gives_them():
    """Each test starts as a program started from a terminal: SIGINT, SIGTERM, SIGHUP handled (not
    ignored, not blocked), and no gc callbacks.

    A test runner's worker process may inherit a signal as ignored or blocked (inherited dispositions are
    tested in tests/test_interrupt_cli.py). And Python runs a signal handler at the next bytecode, which can
    be inside a gc callback, where an exception raised is swallowed ("Exception ignored in ..."): once a
    Hypothesis test has run in this process its gc timing callback is installed
    (hypothesis.internal.conjecture.junkdrawer.gc_cumulative_time), so the guard's Interrupted could vanish.
    """
    import gc

    three = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    saved_handlers = {s: signal.getsignal(s) for s in three}
    saved_mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, three)
    for s in three:
        if saved_handlers[s] is signal.SIG_IGN:
            signal.signal(s, signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
    saved_callbacks = list(gc.callbacks)
    gc.callbacks.clear()  # in place: the collector holds this list, not the module attribute
    try:
        yield
    finally:
        gc.callbacks[:] = saved_callbacks
        for s, handler in saved_handlers.items():
            signal.signal(s, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, saved_mask)


def _listing(d: Path) -> dict[str, str]:
    """The folder's files and their text, less the manifest of what planner wrote (tests/test_no_foreign_files.py)."""
    return {p.name: p.read_text() for p in sorted(d.iterdir()) if p.name != MANIFEST}


def _old_set(out: Path) -> None:
    """An earlier set that planner wrote (only such files are replaced or removed)."""
    with ReportSet(out) as rs:
        for ext in ("csv", "json", "md"):
            write_text(rs.path(f"s.{ext}"), f"old {ext}")
        rs.commit()


def test_commit_moves_the_whole_set_and_leaves_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _old_set(out)
    with ReportSet(out) as rs:
        write_text(rs.path("s.csv"), "new csv")
        write_text(rs.path("s.json"), "new json")
        assert (out / "s.csv").read_text() == "old csv"  # nothing moves before the commit
        rs.remove("s.md")
        done = rs.commit()
    assert done == [out / "s.csv", out / "s.json"] and rs.removed == [out / "s.md"]
    assert _listing(out) == {"s.csv": "new csv", "s.json": "new json"}  # no staging folder, no lock file


def test_an_error_before_the_commit_leaves_the_previous_set(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _old_set(out)
    with pytest.raises(ZeroDivisionError):
        with ReportSet(out) as rs:
            write_text(rs.path("s.csv"), "new csv")
            1 / 0
    assert _listing(out) == {"s.csv": "old csv", "s.json": "old json", "s.md": "old md"}


def test_a_second_run_on_the_same_folder_fails_clearly(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with ReportSet(out):
        with pytest.raises(OutputError) as info:
            with ReportSet(out):
                pass
        # the holder is this same process (/proc/locks names it, h19a M7): said as that; another process's lock is
        # said as such in test_safety21_f16a2 and test_safety25_f19a2
        assert str(info.value) == (f"{out}: this process already holds this directory's lock (another call writing "
                                   "reports into it, such as plan(out=) or compare(out=) in another thread, or a lock "
                                   "the program took on the folder). Let that call finish first (one call at a time "
                                   "per folder), or give another out=.")
    with ReportSet(out) as rs:  # released at the end of the first
        rs.commit()


def test_a_read_only_report_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _old_set(out)
    os.chmod(out / "s.json", 0o444)
    with ReportSet(out) as rs:
        with pytest.raises(OutputError) as early:
            rs.check(["s.csv", "s.json"])
        write_text(rs.path("s.csv"), "new csv")
        write_text(rs.path("s.json"), "new json")
        with pytest.raises(OutputError) as info:
            rs.commit()
    for exc in (early, info):
        assert str(exc.value) == (f"{out / 's.json'}: is read-only, and planner does not replace a file that was made "
                                  f"read-only. Make it writable (chmod u+w {path_word(out / 's.json')}) or write "
                                  "elsewhere.")  # the path as a shell word (h36a 2)
    assert _listing(out) == {"s.csv": "old csv", "s.json": "old json", "s.md": "old md"}  # the csv did not move


def test_a_read_only_single_file_is_not_replaced(tmp_path: Path) -> None:
    p = tmp_path / "calibration.yaml"
    p.write_text("old")
    os.chmod(p, stat.S_IRUSR)
    with pytest.raises(OutputError) as info:
        write_text(p, "new")
    assert "is read-only, and planner does not replace a file that was made read-only" in str(info.value)
    assert p.read_text() == "old"


def test_staging_folders_of_a_killed_run_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / f"{STAGING_PREFIX}dead1234").mkdir(parents=True)
    (out / f"{STAGING_PREFIX}dead1234" / "s.csv").write_text("half")
    # the mark as planner writes it: its format line, then each name staged there (a JSON string a line) and, once
    # that file is complete, its SHA-256 and size (planner.core.stagemark)
    line = json.dumps({"sha256": {"s.csv": hashlib.sha256(b"half").hexdigest()}, "bytes": {"s.csv": 4}})
    (out / f"{STAGING_PREFIX}dead1234" / STAGING_MARK).write_text(f'planner staging folder 1\n"s.csv"\n{line}\n')
    with ReportSet(out) as rs:
        write_text(rs.path("s.csv"), "new")
        rs.commit()
    assert _listing(out) == {"s.csv": "new"}


def test_names_over_255_bytes_are_refused(tmp_path: Path) -> None:
    with ReportSet(tmp_path / "out") as rs:
        with pytest.raises(OutputError) as info:
            rs.path("\u8a08" * 90 + ".csv")  # 270 + 4 bytes
    assert "is 274 bytes, more than the 255 a file name may have" in str(info.value)


def test_a_long_destination_name_gets_a_short_temporary_name(tmp_path: Path) -> None:
    name = "\u8a08" * 80 + ".yaml"  # 245 bytes: allowed, but '.' + it + '.XXXXXXXX.tmp' would not be
    p = write_text(tmp_path / name, "x")
    assert p.read_text() == "x" and sorted(os.listdir(tmp_path)) == [name]


def test_output_paths_too_long_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(OutputError) as info:
        ensure_dir(tmp_path / ("x" * 300))
    assert "cannot create the output directory (File name too long)" in str(info.value)
    with pytest.raises(OutputError):
        ensure_dir(tmp_path / "/".join(["y" * 250] * 20))  # 5,000 bytes, over PATH_MAX


def test_stems_are_capped_in_bytes() -> None:
    cjk = "\u8a08\u753b" * 100  # 200 characters, 600 bytes
    stem = safe_stem(cjk)
    assert len(stem.encode()) <= MAX_STEM_BYTES and stem == "\u8a08\u753b" * 20  # 120 bytes, whole characters
    assert safe_stem("a" * 500) == "a" * MAX_STEM_BYTES
    assert safe_stem("ok\u202egpj.exe\nx") == "ok-gpj.exe-x"


def test_a_signal_inside_a_held_block_is_raised_when_it_ends() -> None:
    steps = []
    with SignalGuard() as guard:
        with pytest.raises(Interrupted) as info:
            with held(guard):
                # raise_signal sends it to this thread (kill(getpid()) may reach another thread of a pytest-xdist
                # worker, and arrive late)
                signal.raise_signal(signal.SIGTERM)
                steps.append("after the signal")  # the block goes on
                steps.append("end")
        with pytest.raises(Interrupted) as outside:
            signal.raise_signal(signal.SIGHUP)
            for _ in range(1000):  # the handler runs between bytecodes
                pass
    assert steps == ["after the signal", "end"]
    assert (info.value.exit_code, info.value.name) == (143, "SIGTERM")
    assert (outside.value.exit_code, outside.value.name) == (129, "SIGHUP")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the guard put the old handlers back


def test_a_signal_while_the_set_is_opened_or_moved_leaves_no_staging(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    out = tmp_path / "out"
    _old_set(out)
    real = tempfile.mkdtemp

    def mkdtemp_then_signal(*a, **kw):
        path = real(*a, **kw)
        signal.raise_signal(signal.SIGTERM)  # arrives after the folder is made, before __enter__ returns
        return path

    with SignalGuard() as guard:
        monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp_then_signal)
        with pytest.raises(Interrupted):
            with ReportSet(out, guard=guard):
                pytest.fail("the body must not run")
        monkeypatch.setattr(tempfile, "mkdtemp", real)
        assert _listing(out) == {"s.csv": "old csv", "s.json": "old json", "s.md": "old md"}
        # a signal during the moves: the set still moves whole, then the run stops
        real_replace = os.replace
        calls = []

        def replace_with_signal(a, b):
            calls.append(b)
            if len(calls) == 1:
                signal.raise_signal(signal.SIGINT)
            return real_replace(a, b)

        with pytest.raises(Interrupted) as info:
            with ReportSet(out, guard=guard) as rs:
                write_text(rs.path("s.csv"), "new csv")
                write_text(rs.path("s.json"), "new json")
                monkeypatch.setattr(os, "replace", replace_with_signal)
                rs.commit()
        monkeypatch.setattr(os, "replace", real_replace)
    assert info.value.exit_code == 130
    assert _listing(out) == {"s.csv": "new csv", "s.json": "new json", "s.md": "old md"}
    with ReportSet(out) as rs:  # and the lock was released
        rs.commit()


ROOT = Path(__file__).resolve().parents[1]


def _scenario(tmp_path: Path, seq_len: int) -> Path:
    text = (ROOT / "scenarios" / "qlora-7b-12gb.yaml").read_text().replace("seq_len: 512", f"seq_len: {seq_len}")
    assert f"seq_len: {seq_len}" in text
    path = tmp_path / "a.yaml"
    path.write_text(text)
    return path


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_report_of_an_earlier_plan_not_written_again_goes_with_the_new_set(tmp_path: Path) -> None:
    # A new-user trial: plan with md, change the scenario, plan with the default formats; the old md still
    # said 512 tokens beside a workbook and json of 8,192. The output folder now holds one plan's reports.
    from click.testing import CliRunner

    from planner import plan
    from planner.cli.main import main

    out = tmp_path / "o"
    first = plan(str(_scenario(tmp_path, 512)), out=str(out), format="xlsx,csv,json,md")
    assert set(first.outputs) == {"xlsx", "csv", "json", "md"} and first.removed == ()
    second = plan(str(_scenario(tmp_path, 8192)), out=str(out))
    assert set(second.outputs) == {"xlsx", "csv", "json"}
    assert second.removed == (out / "qlora-7b-12gb.md",) and not (out / "qlora-7b-12gb.md").exists()
    assert second.to_dict()["removed"] == [str(out / "qlora-7b-12gb.md")]
    # the command says what it removed
    plan(str(_scenario(tmp_path, 512)), out=str(out), format="md")
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path, 8192)), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "qlora-7b-12gb.json"]
    assert "Removed the stale" in r.output and "qlora-7b-12gb.md of an earlier plan" in r.output
    # h36a 5: said so when only --format changed too (the same plan): a format not written, not "another plan"
    assert "(a format not written this time: left beside the new reports, it could disagree with them)." in " ".join(
        r.output.split()), r.output


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_read_only_stale_report_is_kept_and_said(tmp_path: Path) -> None:
    # h20a m2: a stale report made read-only is kept and said, as an edited one is; the run goes on
    from planner import plan

    out = tmp_path / "o"
    plan(str(_scenario(tmp_path, 512)), out=str(out), format="csv,md")
    md = out / "qlora-7b-12gb.md"
    md.chmod(stat.S_IRUSR)
    before = _listing(out)
    try:
        result = plan(str(_scenario(tmp_path, 8192)), out=str(out), format="csv")
    finally:
        md.chmod(stat.S_IRUSR | stat.S_IWUSR)
    after = _listing(out)
    assert after["qlora-7b-12gb.md"] == before["qlora-7b-12gb.md"]  # kept, untouched
    assert after["qlora-7b-12gb.csv"] != before["qlora-7b-12gb.csv"]  # the csv of the 8,192-token plan
    said = [n for n in result.notes if n.startswith(f"Kept {md}")]
    assert said and "made read-only" in said[0] and "chmod u+w" in said[0]


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_nothing_fitting_after_a_plan_removes_all_of_that_plans_reports(tmp_path: Path) -> None:
    # A break-it trial: a feasible run wrote xlsx, csv, json and md; the same scenario made infeasible and
    # run with --format md wrote nothing and removed the xlsx and md, but left the csv and a json saying
    # "feasible": true beside them. Every report of the earlier plan now goes.
    from planner import plan
    from planner.solve.solver import NoFeasiblePlan

    out = tmp_path / "o"
    plan(str(_scenario(tmp_path, 512)), out=str(out), format="xlsx,csv,json,md")
    bad = tmp_path / "bad.yaml"
    text = _scenario(tmp_path, 512).read_text()
    assert "micro_batch: 1\n" in text
    bad.write_text(text.replace("micro_batch: 1\n", "micro_batch: 65536\n"))  # fits no card
    with pytest.raises(NoFeasiblePlan) as err:
        plan(str(bad), out=str(out), format="md")
    assert sorted(p.name for p in err.value.removed) == [f"qlora-7b-12gb.{e}" for e in ("csv", "json", "md", "xlsx")]
    assert not out.exists() or not any(out.iterdir())
