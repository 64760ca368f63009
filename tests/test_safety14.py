"""Issue 28, hostile pass 10A.

1. A folder in which another user can rename entries (another user's folder; one that its group or others can
   write, without the sticky bit) is refused as --out, before anything is written: another user could swap the
   staging folder for a link and make the run remove or overwrite the user's files elsewhere (h10a #1). The same
   rule holds for TMPDIR, where openpyxl reopens its temporaries by path (h10a #2, #3). A staging folder that is
   no longer the one the run made is left alone.
4. SIGQUIT, SIGXCPU, SIGALRM, SIGUSR1, SIGPWR... (default action: end the process) are turned into Interrupted
   like SIGINT, unless a handler is installed; a set moving into place completes first (h10a #4).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import _cli, _scenario
from planner.cli.main import main
from planner.core.errors import DestinationError
from planner.core.interrupt import Interrupted, SignalGuard
from planner.core.reportset import ReportSet
from planner.core.sharing import rename_risk

SHARED_TAIL = ("a folder or link swapped in there could make planner remove or overwrite files elsewhere, so it "
               "writes nothing there.")


@pytest.mark.parametrize("mode, why", [
    (0o777, "anyone can write it and it has no sticky bit, so anyone can rename what planner puts there"),
])
def test_an_out_others_can_rename_in_is_refused_before_anything_is_written(tmp_path: Path, mode: int,
                                                                           why: str) -> None:
    out = tmp_path / "shared"
    out.mkdir()
    out.chmod(mode)
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {out}: is the output folder, but {why}; {SHARED_TAIL} Give a folder only you can "
                        "write (chmod go-w), set its sticky bit (chmod +t) so that no one else can rename your files "
                        "in it, or give another --out.\n"), r.stderr
    assert list(out.iterdir()) == []


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_sticky_shared_out_is_written(tmp_path: Path) -> None:
    out = tmp_path / "shared"
    out.mkdir()
    out.chmod(0o1777)  # as /tmp: only a file's owner (and the folder's, and root) can rename it
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [".planner-reports.json", "x.csv", "x.json", "x.xlsx"]


def test_rename_risk_reads_the_owner_the_bits_and_the_sticky_bit(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    d.chmod(0o700)
    assert rename_risk(d) is None
    st = os.stat(d)
    other = os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, os.geteuid() + 12345, st.st_gid,
                            st.st_size, 0, 0, 0))
    assert rename_risk(d, other) == f"it belongs to another user (uid {os.geteuid() + 12345}), who can rename " \
        "anything in it"
    root_owned = os.stat_result((stat.S_IFDIR | 0o1777, *tuple(st)[1:4], 0, *tuple(st)[5:7], 0, 0, 0))
    assert rename_risk(d, root_owned) is None  # /tmp: root's, sticky


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_tmpdir_others_can_rename_in_is_refused(tmp_path: Path) -> None:
    tmp = tmp_path / "t"
    tmp.mkdir()
    tmp.chmod(0o777)
    r = _cli("plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(tmp_path / "o"),
             env={"TMPDIR": str(tmp)})
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"Error: {tmp}: is the temporary folder (TMPDIR) that openpyxl and the importer write "
                               "into, but anyone can write it and it has no sticky bit"), r.stderr
    assert not (tmp_path / "o").exists() and list(tmp.iterdir()) == []


def test_a_staging_folder_swapped_for_a_link_is_left_alone(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "thesis.tex").write_text("years of work")
    out = tmp_path / "out"
    with ReportSet(out, set_name="plan x") as rs:
        rs.path("x.json").write_text("{}")
        staging = rs.path("x.json").parent
        os.rename(staging, tmp_path / "moved")  # another user swaps the staging folder for a link to the victim's
        os.symlink(victim, staging)
    assert (victim / "thesis.tex").read_text() == "years of work"
    assert any("is no longer the folder this run made" in n for n in rs.notes), rs.notes


@pytest.mark.parametrize("name", ["SIGQUIT", "SIGXCPU", "SIGALRM", "SIGUSR1", "SIGPWR"])
def test_other_fatal_signals_are_interrupts(name: str) -> None:
    signum = getattr(signal, name)
    old = signal.signal(signum, signal.SIG_DFL)
    raised = None
    try:
        with SignalGuard():
            try:
                os.kill(os.getpid(), signum)  # Python runs the handler before the next bytecode
            except Interrupted as exc:
                raised = exc
    finally:
        signal.signal(signum, old)
    assert raised is not None and raised.exit_code == 128 + signum and raised.name == name


def test_a_handler_someone_installed_is_kept() -> None:
    seen = []
    old = signal.signal(signal.SIGUSR2, lambda s, f: seen.append(s))
    try:
        with SignalGuard():
            os.kill(os.getpid(), signal.SIGUSR2)
    finally:
        signal.signal(signal.SIGUSR2, old)
    assert seen == [signal.SIGUSR2]


def test_refusal_is_a_destination_error(tmp_path: Path) -> None:
    from planner.core.sharing import refuse_shared_folder

    d = tmp_path / "d"
    d.mkdir()
    d.chmod(0o777)
    raised = None
    try:
        refuse_shared_folder(d, "the output folder", "Hint.")
    except DestinationError as exc:
        raised = str(exc)
    assert raised is not None and raised.endswith("so it writes nothing there. Hint."), raised


# -- h10a #5 and #8: what clearing a dead run's staging folder did, in one line ---------------------------------

def _dead(out: Path, files: dict[str, str]) -> Path:
    from planner.core import reportset

    dead = out / (reportset.STAGING_PREFIX + "dead5678")
    dead.mkdir()
    for name, text in files.items():
        (dead / name).write_text(text)
    # each name, then (as planner.core.atomic.write_bytes records it once the file is complete) its SHA-256 and size
    listed = b"".join(f'"{n}"\n'.encode() + json.dumps({"sha256": {n: hashlib.sha256(t.encode()).hexdigest()},
                                                         "bytes": {n: len(t.encode())}}).encode() + b"\n"
                      for n, t in files.items())
    # and the line of every staged report's hash that a run writes just before its moves: this run was stopped
    # during them, so the set may be mixed (without it, nothing was moved and nothing is said to mix: h33a m3)
    listed += json.dumps({"sha256": {n: hashlib.sha256(t.encode()).hexdigest() for n, t in files.items()}}).encode() + b"\n"
    (dead / reportset.STAGING_MARK).write_bytes(reportset._MARK_HEADER + listed)
    return dead


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_dead_staging_folder_cleared_without_a_manifest_is_said(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out),
                                     "--format", "json"]).exit_code == 0
    (out / ".planner-reports.json").unlink()  # the user "resets" the folder
    dead = _dead(out, {"x.json": "the previous json\n"})
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "b.yaml", "y")), "--out", str(out),
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    assert (f"Removed {dead}, which a stopped planner run left, with 1 file(s) of its reports: {out} has no "
            ".planner-reports.json to tell whether that run was stopped during its moves, so its reports there may "
            "mix new files with older ones; run it again to rewrite them whole.") in " ".join(r.output.split())
    assert not dead.exists()


def test_a_dead_staging_folder_left_is_said_once(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    dead = _dead(out, {"x.json": "the previous json\n", "x.csv": "a,b\n"})
    (dead / "x.csv").unlink()
    (dead / "x.csv").mkdir()  # a listed name now a folder, with the user's file in it
    (dead / "x.csv" / "mine.txt").write_text("mine")
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "y")), "--out", str(out),
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    assert f"Removed {dead}" not in said, said
    assert (f"Left {dead}: it holds x.csv, which planner cannot tell it wrote; check it and remove it yourself. "
            "Planner removed the 1 file(s) of reports that a stopped planner run left there; "
            f"{out} has no .planner-reports.json") in said, said
    assert (dead / "x.csv" / "mine.txt").read_text() == "mine"


# -- h10a #7: a failed undo says where each file is ------------------------------------------------------------

def test_a_failed_undo_with_nothing_moved_says_every_report_is_back(tmp_path: Path, monkeypatch) -> None:
    import errno

    from planner.core import moves
    from planner.core.errors import OutputError

    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out),
                                     "--format", "json"]).exit_code == 0
    before = (out / "x.json").read_bytes()

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(moves, "_place", read_only)  # the first move fails: nothing was moved
    raised = None
    with ReportSet(out, set_name="plan x") as rs:
        rs.path("x.json").write_text("{}\n")
        try:
            moves.move_into_place(rs, [], {}, {"x.json": "0" * 64}, mark=".planner-staging", restore=read_only)
        except OutputError as exc:
            raised = str(exc)
    assert raised is not None and "putting the previous set back failed too (Read-only file system); every report " \
        f"in {out} is back as it was (the new ones are in " in raised, raised
    assert (out / "x.json").read_bytes() == before


def test_where_now_names_the_new_and_the_previous_file_of_each_step(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from planner.core.moves import _Moves, _where_now

    rs = SimpleNamespace(out=tmp_path / "o", _staging=tmp_path / "o" / ".planner-staging-x")
    m = _Moves(steps=[("swapped", "a.csv", rs._staging / "a.csv"), ("placed", "b.json", None),
                      ("taken", "c.md", rs._staging / "c.md")])
    assert _where_now(rs, m) == (f"now {rs.out / 'a.csv'} holds the new report and the previous one is in "
                                 f"{rs._staging / 'a.csv'}; {rs.out / 'b.json'} holds the new report (there was none "
                                 f"before); c.md (removed as stale) is in {rs._staging / 'c.md'}; every other report "
                                 f"in {rs.out} is as it was.")


# -- h10a #10: a lone CR inside a CSV line --------------------------------------------------------------------

def test_a_lone_carriage_return_inside_a_csv_line_is_refused_at_its_line(tmp_path: Path) -> None:
    from test_safety7c import _aws

    path = _aws(tmp_path, "g6.xlarge,L4,1.0,4.0,16.0,L4,0.8048,0.26,us-east-1,use1-az1,x86_64\n"
                          "g6.2xlarge,L4,1.0,8.0,32.0,L4,0.9776,0.4,us-east-1,use1-\raz1,x86_64\n")
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(path), "--out", str(tmp_path / "ov")])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {path}: line 3: holds a carriage return (CR, \\r) alone inside the line, which would "
                        "split its row in two. Remove it from line 3 (SkyPilot's vms.csv holds none), then import "
                        "the file again.\n"), r.stderr
    assert not (tmp_path / "ov").exists()


def test_calibrate_reads_its_out_file_before_the_measurement(tmp_path: Path) -> None:
    # h10a minor: a report or a manifest given as calibrate --out was read only after the measurement; it is
    # refused now, before torch is needed (this machine has none: the line is the file's, not torch's)
    report = tmp_path / "x.json"
    report.write_text('{"scenario": "x"}\n')
    r = CliRunner().invoke(main, ["calibrate", "--model", "llama-2-7b", "--task", "infer", "--out", str(report)])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"Error: {report}:1: scenario: unknown key 'scenario'. Did you mean 'schema_version'?\n", \
        r.stderr
    assert report.read_text() == '{"scenario": "x"}\n'


# -- h10a #9: the API refuses the out= spellings the command line refuses --------------------------------------

@pytest.mark.parametrize("out, said", [
    ("$HOME/r", "holds '$HOME', which was not expanded (Python expands no '$' or '`'), so it would be part of a "
                "folder's name. Expand it first, e.g. out=os.path.expandvars('$HOME/r'), or give the folder's path "
                "itself."),
    ("x/$(pwd)", "holds '$(', which was not expanded"),
    (" o", "has the folder name ' o', which begins with a blank that no listing shows. Give out='o'."),
    ("a /b", "has the folder name 'a ', which ends with a blank that no listing shows. Give out='a/b'."),
    ("a\tb", "holds U+0009 (CHARACTER TABULATION), which no listing shows, so the folder's name would look like "
             "another. Give out='ab'."),
])
def test_the_api_refuses_out_paths_naming_another_folder(tmp_path: Path, monkeypatch, out: str, said: str) -> None:
    import planner
    from planner.core.errors import InputError

    monkeypatch.chdir(tmp_path)
    raised = None
    try:
        planner.plan(str(_scenario(tmp_path / "a.yaml", "x")), out=out)
    except InputError as exc:
        raised = str(exc)
    assert raised is not None and said in raised, raised
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]  # no folder made


# -- h11a #1, #2, #3, #5 -------------------------------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_folder_above_out_that_others_can_rename_in_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could rename 'mine' (the --out below it) and put a link in its place
    out = shared / "mine" / "reports"
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {shared}: is a folder above the output folder ({out}), but anyone can write "
                               "it and it has no sticky bit"), r.stderr
    assert list(shared.iterdir()) == []
    shared.chmod(0o1777)  # sticky: only 'mine''s owner can rename it
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out)])
    assert r.exit_code == 0, r.output


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_tmpdir_below_a_folder_others_can_rename_in_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "t").mkdir(parents=True)
    shared.chmod(0o777)
    r = _cli("plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(tmp_path / "o"),
             env={"TMPDIR": str(shared / "t")})
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"Error: {shared}: is a folder above the temporary folder (TMPDIR)"), r.stderr


@pytest.mark.parametrize("name", ["SIGIO", "SIGSYS", "SIGTRAP", "SIGRTMIN"])
def test_the_rest_of_the_fatal_signals_are_interrupts(name: str) -> None:
    from planner.core.interrupt import OTHER_FATAL_SIGNALS

    assert getattr(signal, name) in OTHER_FATAL_SIGNALS
    assert signal.SIGRTMAX in OTHER_FATAL_SIGNALS


def test_a_private_manifest_stays_private(tmp_path: Path) -> None:
    out = tmp_path / "o"
    for micro_batch in (1, 2):  # the second run writes another report, so the manifest is rewritten
        r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x", micro_batch)), "--out",
                                      str(out), "--format", "json"])
        assert r.exit_code == 0, r.output
        if micro_batch == 1:
            (out / ".planner-reports.json").chmod(0o600)  # the user makes it private
    assert stat.S_IMODE(os.stat(out / ".planner-reports.json").st_mode) == 0o600


def test_an_out_named_as_a_staging_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / ".planner-staging-abc"
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out)])
    assert r.exit_code == 2, r.output
    # safety17b (h12a #6): every component is checked now, and the message names the folder above
    assert r.stderr == (f"Error: {out}: has the folder name '.planner-staging-abc', the name planner gives its staging "
                        f"folders (.planner-staging-...), so a later run into {tmp_path} would take it for one a "
                        "stopped run left and say so each time. Give the folder another name.\n"), r.stderr
    assert not out.exists()


def test_a_format_listed_twice_is_refused() -> None:
    # h11b #10 (left by safety15b): '--format csv,csv' was taken as csv without a word; lists that name an item
    # twice are refused elsewhere (allowed_gpus, lora_targets)
    from planner.core.errors import InputError
    from planner.api.plans import report_formats

    raised = None
    try:
        report_formats("csv,json,csv")
    except InputError as exc:
        raised = str(exc)
    assert raised == "--format: lists 'csv' twice; give each format once: --format csv,json.", raised
