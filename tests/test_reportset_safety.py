"""A report set never replaces or removes a file that is not verifiably its own (issue 28, second hostile pass):
the set is the exact scenario name, a manifest is trusted only when it is this user's and not writable by
others, a failed move puts the previous set back, a staging folder is emptied only of what planner listed in it,
and what planner leaves behind it says."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.core.atomic import write_text
from planner.core.errors import OutputError
from planner.core.reportset import MANIFEST, STAGING_MARK, STAGING_PREFIX, ReportSet

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "scenarios" / "qlora-7b-12gb.yaml"


def _named(tmp_path: Path, name: str, file: str) -> Path:
    text = BASE.read_text()
    assert "\nname: qlora-7b-12gb\n" in text
    path = tmp_path / file
    path.write_text(text.replace("\nname: qlora-7b-12gb\n", f"\nname: {json.dumps(name)}\n"))
    return path


def _plan(*args: str):
    from planner.cli.main import main

    return CliRunner().invoke(main, ["plan", *args])


@pytest.mark.parametrize("first, second", [
    ("team a", "team-a"), ("team/a", "team-a"), ("team: a", "team-a"), (".planner-reports", "planner-reports"),
    ("x" * 120 + "one", "x" * 120 + "two"),  # the same first 120 bytes: the report name's cap
])
@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_scenarios_whose_names_give_one_file_name_never_replace_each_other(tmp_path: Path, first: str,
                                                                         second: str) -> None:
    out = tmp_path / "o"
    r = _plan(str(_named(tmp_path, first, "a.yaml")), "--out", str(out), "--format", "xlsx,csv,json,md")
    assert r.exit_code == 0, r.output
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    r = _plan(str(_named(tmp_path, second, "b.yaml")), "--out", str(out), "--format", "md")
    assert r.exit_code == 2, r.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing replaced, nothing removed
    assert r.stderr.count("\n") == 1 and "is a report of " in r.stderr
    assert repr("plan " + first) in r.stderr and repr("plan " + second) in r.stderr  # both sets named
    assert "Give another --out, or give the scenario another name" in r.stderr
    manifest = json.loads((out / MANIFEST).read_text())
    assert {e["set"] for e in manifest["files"].values()} == {f"plan {first}"}


def test_a_manifest_others_can_write_is_not_trusted(tmp_path: Path) -> None:
    out = tmp_path / "o2"
    out.mkdir()
    (out / "qlora-7b-12gb.md").write_text("notes\n")
    import hashlib

    digest = hashlib.sha256(b"notes\n").hexdigest()
    (out / MANIFEST).write_text(json.dumps({"format": "planner report manifest 1", "files": {
        "qlora-7b-12gb.md": {"sha256": [digest], "set": "plan qlora-7b-12gb"}}}))
    (out / MANIFEST).chmod(0o664)  # group-writable: anyone of the group could have listed the user's notes
    from planner.core.reportset import private_group

    if private_group(os.getuid(), os.stat(out / MANIFEST).st_gid):  # a user private group is trusted (umask 002)
        if os.geteuid() != 0:
            (out / MANIFEST).chmod(0o666)
        else:
            os.chown(out / MANIFEST, -1, 65533)  # a gid with no group entry: not the user's own group
    r = _plan(str(BASE), "--out", str(out))
    assert r.exit_code == 2
    assert "can be written by its group or by others, so planner does not trust its list" in r.stderr
    assert (out / "qlora-7b-12gb.md").read_text() == "notes\n"


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_another_users_manifest_or_file_is_not_trusted(tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = _plan(str(BASE), "--out", str(out), "--format", "csv,md")
    assert r.exit_code == 0, r.output
    os.chown(out / "qlora-7b-12gb.md", 12345, 12345)  # a listed file now another user's
    r = _plan(str(BASE), "--out", str(out), "--format", "csv")
    assert r.exit_code == 0, r.output
    assert (out / "qlora-7b-12gb.md").exists()  # not removed as stale
    assert "Kept" in r.stderr and "qlora-7b-12gb.md" in r.stderr
    r = _plan(str(BASE), "--out", str(out), "--format", "md")
    assert r.exit_code == 2 and "another user's file" in r.stderr
    os.chown(out / MANIFEST, 12345, 12345)
    r = _plan(str(BASE), "--out", str(out), "--format", "csv")
    assert r.exit_code == 2
    assert "belongs to another user (uid 12345), so planner does not trust its list" in r.stderr


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_the_manifest_is_never_group_writable_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o002)
    try:
        r = _plan(str(BASE), "--out", str(tmp_path / "o"), "--format", "csv")
        assert r.exit_code == 0, r.output
        assert not (tmp_path / "o" / MANIFEST).stat().st_mode & 0o022
        r = _plan(str(BASE), "--out", str(tmp_path / "o"), "--format", "csv")  # and it is trusted next time
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.output


def test_a_rename_failing_part_way_puts_the_previous_set_back(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "hf"
    with ReportSet(out, set_name="s") as rs:
        for ext in ("xlsx", "csv", "json", "md"):
            write_text(rs.path(f"r.{ext}"), f"old {ext}")
        rs.commit()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = os.replace

    def failing(src, dst, *a, **k):  # the md cannot be replaced (as with chattr +i)
        if Path(dst) == out / "r.md" and STAGING_PREFIX in str(src):  # the final move, not the staged write
            raise PermissionError(1, "Operation not permitted")
        return real(src, dst, *a, **k)

    from planner.core import renames

    real_swap = renames.exchange

    def failing_swap(a, b):  # the same refusal where the set is moved by swaps (renameat2)
        if Path(b) == out / "r.md":
            raise PermissionError(1, "Operation not permitted")
        return real_swap(a, b)

    monkeypatch.setattr(os, "replace", failing)
    monkeypatch.setattr(renames, "exchange", failing_swap)
    with pytest.raises(OutputError) as err:
        with ReportSet(out, set_name="s") as rs:
            for ext in ("xlsx", "csv", "json", "md"):
                write_text(rs.path(f"r.{ext}"), f"new {ext}")
            rs.commit()
    monkeypatch.setattr(os, "replace", real)
    monkeypatch.setattr(renames, "exchange", real_swap)
    assert "the previous set was put back as it was" in str(err.value)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # one whole set: the old one, its manifest
    with ReportSet(out, set_name="s") as rs:  # and the old set is still planner's
        write_text(rs.path("r.md"), "newer")
        rs.commit()


def test_a_removal_failing_puts_the_replaced_files_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "o"
    with ReportSet(out, set_name="s") as rs:
        write_text(rs.path("r.csv"), "old csv")
        write_text(rs.path("r.md"), "old md")
        rs.commit()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = os.unlink

    def failing(path, *a, **k):
        if str(path).endswith("r.md"):
            raise PermissionError(1, "Operation not permitted")
        return real(path, *a, **k)

    real_rename = os.rename

    def failing_rename(src, dst, *a, **k):  # a stale report is taken away by a rename into the staging folder
        if str(src).endswith("r.md"):
            raise PermissionError(1, "Operation not permitted")
        return real_rename(src, dst, *a, **k)

    monkeypatch.setattr(os, "unlink", failing)
    monkeypatch.setattr(os, "rename", failing_rename)
    with pytest.raises(OutputError):
        with ReportSet(out, set_name="s") as rs:
            write_text(rs.path("r.csv"), "new csv")
            rs.remove("r.md")
            rs.commit()
    monkeypatch.setattr(os, "unlink", real)
    monkeypatch.setattr(os, "rename", real_rename)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_staging_named_folder_holding_a_foreign_file_is_left(tmp_path: Path) -> None:
    out = tmp_path / "k"
    foreign = out / f"{STAGING_PREFIX}abcd1234"
    foreign.mkdir(parents=True)
    (foreign / STAGING_MARK).write_text("")
    (foreign / "precious.txt").write_text("precious\n")
    r = _plan(str(BASE), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert (foreign / "precious.txt").read_text() == "precious\n"
    assert f"Left {foreign}: it holds precious.txt, which planner cannot tell it wrote" in " ".join(r.stderr.split())


def test_a_dead_staging_folder_loses_only_what_its_mark_lists(tmp_path: Path) -> None:
    out = tmp_path / "k"
    dead = out / f"{STAGING_PREFIX}dead1234"
    dead.mkdir(parents=True)
    # the name, the temporary's exact name (recorded before it was made), the complete file's SHA-256 and size
    line = json.dumps({"sha256": {"s.csv": hashlib.sha256(b"half").hexdigest()}, "bytes": {"s.csv": 4}})
    (dead / STAGING_MARK).write_text(f'planner staging folder 1\n"s.csv"\n{{"tmp": ".s.csv.0123abcd.tmp"}}\n{line}\n')
    (dead / "s.csv").write_text("half")
    (dead / ".s.csv.0123abcd.tmp").write_text("half")
    (dead / "s.md").write_text("not listed")
    with ReportSet(out) as rs:
        write_text(rs.path("s.csv"), "new")
        rs.commit()
    assert sorted(p.name for p in dead.iterdir()) == [STAGING_MARK, "s.md"]
    assert any("s.md" in n for n in rs.notes)
    (dead / "s.md").unlink()
    with ReportSet(out) as rs:  # only planner's files left: the folder goes
        pass
    assert not dead.exists()


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_an_edited_stale_report_is_kept_and_said(tmp_path: Path) -> None:
    out = tmp_path / "g"
    assert _plan(str(BASE), "--out", str(out), "--format", "md").exit_code == 0
    with open(out / "qlora-7b-12gb.md", "a") as fh:
        fh.write("x\n")
    r = _plan(str(BASE), "--out", str(out), "--format", "csv")
    assert r.exit_code == 0, r.output
    assert (out / "qlora-7b-12gb.md").exists()
    assert f"Kept {out / 'qlora-7b-12gb.md'}, a name of this report set not written this time: it changed since " \
           "planner wrote it." in " ".join(r.stderr.split())


def test_temporary_manifests_of_a_killed_run_are_removed_and_said(tmp_path: Path) -> None:
    out = tmp_path / "g"
    out.mkdir()
    tmp = out / f".{MANIFEST}.deadbeef.tmp"  # as planner.core.atomic names it
    tmp.write_text("{")
    mine = out / f".{MANIFEST}.notes.tmp"  # not planner's pattern: left
    mine.write_text("mine")
    r = _plan(str(BASE), "--out", str(out), "--format", "csv")
    assert r.exit_code == 0, r.output
    assert not tmp.exists() and mine.exists()
    assert f"Removed {tmp}, a temporary file an earlier planner run left" in " ".join(r.stderr.split())


def test_a_deeply_nested_manifest_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "mn"
    out.mkdir()
    (out / MANIFEST).write_text("[" * 100000 + "\n")
    r = _plan(str(BASE), "--out", str(out))
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "is not a report manifest planner wrote" in r.stderr
    assert "internal error" not in r.stderr


def test_a_signal_during_the_moves_says_the_set_was_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    from planner.core.interrupt import Interrupted, SignalGuard

    out = tmp_path / "o"
    real = os.replace
    calls: list = []

    def replace_with_signal(a, b, *rest, **kw):
        calls.append(b)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)  # held until the set is in place
        return real(a, b, *rest, **kw)

    saved = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with SignalGuard() as guard:
            with pytest.raises(Interrupted) as info:
                with ReportSet(out, guard=guard) as rs:
                    write_text(rs.path("s.csv"), "new csv")
                    write_text(rs.path("s.json"), "new json")
                    monkeypatch.setattr(os, "replace", replace_with_signal)
                    rs.commit()
            monkeypatch.setattr(os, "replace", real)
    finally:
        signal.signal(signal.SIGINT, saved)
    assert info.value.written == [out / "s.csv", out / "s.json"]  # the command then says "wrote ..."
    assert (out / "s.csv").read_text() == "new csv"
