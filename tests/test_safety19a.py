"""Issue 28 ("never touch a file planner did not write"), findings of hostile pass 14A.

1. ``--help``, ``--version`` and usage lines went into files the command line does not name: the default ``--out``
   of plan (``reports/``, its reports and manifest), the default calibration file, a model's config.json named only
   inside the scenario or workload file, a cached hub config.json. The check before parsing now resolves the
   defaults, and before the full check has run no help or usage text goes into a data file (by suffix).
2. ``compare --out`` says, as plan does, what it did with a stopped run's staging folder (CLI and API ``notes``).
3. The take-back of a failed standard output leaves the file alone when another program changed planner's bytes.
4. A nameless scenario with no file stem (a pipe, /dev/stdin, an API mapping) is refused when reports are written.
5. Minors: the API's "Interrupted" line goes into no protected stream; an immovable report is named; a full TMPDIR
   is named as such.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from cli_helpers import QLORA, _cli, _scenario, _sha

DATA_LINE = ("a data file (a report, a manifest, an input such as a scenario or a model's config.json); planner writes "
             "no help, version or usage text into one. Redirect {name} to another file (a .txt or .log file).")


def _q(p: Path | str) -> str:
    return shlex.quote(str(p))


# ---- 1. help, version and usage lines into files of the defaults and of the inputs' inputs ----

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_help_and_usage_lines_go_into_no_report_of_the_default_out(tmp_path: Path) -> None:
    r = _cli("plan", str(QLORA), "--format", "json,md", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    js, md, manifest = (tmp_path / "reports" / n for n in ("qlora-7b-12gb.json", "qlora-7b-12gb.md",
                                                               ".planner-reports.json"))
    before = {p: _sha(p) for p in (js, md, manifest)}
    help_ = _cli(shell=f"python -m planner plan {_q(QLORA)} --help >> reports/qlora-7b-12gb.json", cwd=tmp_path)
    usage = _cli(shell=f"python -m planner plan {_q(QLORA)} --bogus 2>> reports/qlora-7b-12gb.md", cwd=tmp_path)
    bad = _cli(shell=f"python -m planner plan {_q(QLORA)} --format bogus 2>> reports/.planner-reports.json",
               cwd=tmp_path)
    assert {p: _sha(p) for p in before} == before
    assert (help_.returncode, usage.returncode, bad.returncode) == (2, 2, 2)
    said = ("a file in the output folder (--out), which this run may replace or remove; planner does not write into "
            "it. Redirect {name} to another file.\n")
    assert help_.stderr == ("Error: standard output is reports/qlora-7b-12gb.json, "
                            + said.format(name="standard output")), help_.stderr
    assert usage.stdout == ("Error: standard error is reports/qlora-7b-12gb.md, "
                            + said.format(name="standard error")), usage.stdout
    assert bad.stdout == ("Error: standard error is reports/.planner-reports.json, "
                          + said.format(name="standard error")), bad.stdout
    # the folder is the default of plan only: another command's help into it is refused as a report its manifest
    # lists, in whatever folder (h39a m6: that rule comes before the data-file one)
    other = _cli(shell="python -m planner fit --help >> reports/qlora-7b-12gb.json", cwd=tmp_path)
    assert other.returncode == 2
    assert other.stderr == (f"Error: standard output is {tmp_path / 'reports' / 'qlora-7b-12gb.json'}, a report "
                            "set's manifest or a report it lists, or a file of a staging folder (planner's own files "
                            "in a folder it writes reports into: written into, the next run there takes the set as "
                            "changed or the folder as not planner's); planner does not write into it. Redirect "
                            "standard output to another file.\n"), other.stderr
    assert _cli("plan", str(QLORA), "--format", "json,md", cwd=tmp_path).returncode == 0  # the set is still planner's


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("var", ["XDG_CONFIG_HOME", "HOME"])
def test_help_and_usage_lines_go_into_no_default_calibration_file(tmp_path: Path, var: str) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")} if var == "XDG_CONFIG_HOME" else \
        {"XDG_CONFIG_HOME": "", "HOME": str(tmp_path / "home")}
    cal = (tmp_path / "xdg" if var == "XDG_CONFIG_HOME" else tmp_path / "home" / ".config") / "planner" / \
        "calibration.yaml"
    cal.parent.mkdir(parents=True)
    cal.write_text("gpus: []\n")
    runs = [_cli(shell=f"python -m planner {words} {_q(cal)}", env=env, cwd=tmp_path) for words in (
        "calibrate --help >>", "estimate --model llama-3.1-8b --task infer --gpu l4 --help >>",
        "estimate --model llama-3.1-8b --task infer --gpu l4 --bogus 2>>")]
    assert cal.read_text() == "gpus: []\n"
    assert [r.returncode for r in runs] == [2, 2, 2]
    said = "an input of this run; planner does not write into it. Redirect {name} to another file.\n"
    assert runs[0].stderr == f"Error: standard output is {cal}, " + said.format(name="standard output"), runs[0].stderr
    assert runs[2].stdout == f"Error: standard error is {cal}, " + said.format(name="standard error"), runs[2].stdout
    # a calibration file given on the command line is the one read: the default is then no input of the run
    given = _cli(shell=f"python -m planner calibrate --out other.yaml --help >> {_q(cal)}", env=env, cwd=tmp_path)
    assert given.returncode == 2  # still refused, by the data-file rule (a .yaml)
    assert given.stderr == f"Error: standard output is {cal}, " + DATA_LINE.format(name="standard output") + "\n"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_help_and_usage_lines_go_into_no_config_json_only_the_scenario_names(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    cfg = tmp_path / "m" / "config.json"
    cfg.write_text('{"model_type": "llama"}\n')
    (tmp_path / "s.yaml").write_text(QLORA.read_text().replace("model: llama-2-7b", "model: ./m"))
    (tmp_path / "wl.yaml").write_text("model: ./m\ntask: infer\n")
    runs = {cmd: _cli(shell=cmd, cwd=tmp_path) for cmd in (
        "python -m planner plan s.yaml --out o --help >> m/config.json",
        "python -m planner plan s.yaml --out o --top x 2>> m/config.json",
        "python -m planner compare s.yaml --help >> m/config.json",
        "python -m planner estimate --workload wl.yaml --help >> m/config.json",
        "python -m planner estimate --workload wl.yaml --bogus 2>> m/config.json",
        "python -m planner --version >> m/config.json")}
    assert cfg.read_text() == '{"model_type": "llama"}\n'
    assert {cmd: r.returncode for cmd, r in runs.items()} == {cmd: 2 for cmd in runs}
    for cmd, r in runs.items():
        name = "standard error" if "2>>" in cmd else "standard output"
        said = r.stdout if name == "standard error" else r.stderr
        assert said == f"Error: {name} is {cfg}, " + DATA_LINE.format(name=name) + "\n", (cmd, said)
        assert (r.stderr if name == "standard error" else r.stdout) == ""


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_hub_ids_cached_config_json_takes_no_help(tmp_path: Path) -> None:
    snap = tmp_path / "hf" / "hub" / "models--acme--tiny" / "snapshots" / ("ab" * 20)
    snap.mkdir(parents=True)
    cfg = snap / "config.json"
    cfg.write_text("{}\n")
    r = _cli(shell=f"python -m planner estimate --model acme/tiny --task infer --help >> {_q(cfg)}",
             env={"HF_HOME": str(tmp_path / "hf")})
    assert r.returncode == 2
    assert r.stderr == f"Error: standard output is {cfg}, " + DATA_LINE.format(name="standard output") + "\n"
    assert cfg.read_text() == "{}\n"


def test_both_streams_data_files_say_nothing_anywhere(tmp_path: Path) -> None:
    r = _cli(shell="python -m planner plan x.yaml --help > a.json 2> b.md", cwd=tmp_path)
    assert r.returncode == 2
    assert (tmp_path / "a.json").read_bytes() == b"" and (tmp_path / "b.md").read_bytes() == b""
    r = _cli(shell="python -m planner plan x.yaml --bogus > a.json 2> b.md", cwd=tmp_path)
    assert r.returncode == 2
    assert (tmp_path / "a.json").read_bytes() == b"" and (tmp_path / "b.md").read_bytes() == b""


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_text_and_log_files_and_data_output_keep_working(tmp_path: Path) -> None:
    r = _cli(shell=f"python -m planner plan {_q(QLORA)} --out o --format json > plan.txt 2> err.log", cwd=tmp_path)
    assert r.returncode == 0
    assert (tmp_path / "plan.txt").read_text().startswith("Scenario qlora-7b-12gb: ")
    r = _cli(shell="python -m planner plan --help > help.txt", cwd=tmp_path)
    assert r.returncode == 0 and "planner plan [OPTIONS] SCENARIO" in (tmp_path / "help.txt").read_text()
    r = _cli(shell=f"python -m planner plan {_q(QLORA)} --bogus 2> err.log", cwd=tmp_path)
    assert r.returncode == 2
    said = (tmp_path / "err.log").read_text()  # click's words for an unknown option differ by version
    assert said.startswith("Error: No such option") and said.endswith(" See 'python -m planner plan --help'.\n"), said
    # a data file on standard output without a help or usage text: the run's own output, as before
    r = _cli(shell=f"python -m planner plan {_q(QLORA)} --out o --format json --json > plan.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "plan.json").read_text())["scenario"] == "qlora-7b-12gb"
    # a usage error found once the full check has run (estimate without a model) goes where standard error points
    r = _cli(shell="python -m planner estimate --task infer 2> err.json", cwd=tmp_path)
    assert r.returncode == 2
    assert (tmp_path / "err.json").read_text() == ("Error: give --model (and --task), or --workload FILE. See "
                                                   "'python -m planner estimate --help'.\n")


# ---- 2. compare --out says what it did with a stopped run's staging folder ----

COMPARE = QLORA.parent / "compare-qlora-7b-12gb.yaml"


def _dead_staging(out: Path, extra: str | None = None) -> Path:
    """A staging folder as a run killed during its moves leaves it (planner.core.reportset: its mark lists the
    file it made), with ``extra``, a file of no planner run's, beside it when given."""
    from planner.core import reportset

    dead = out / (reportset.STAGING_PREFIX + "dead5678")
    dead.mkdir()
    # a previous report the moves kept: the plan's json, whose SHA-256 the manifest lists (since h17a #2 a killed
    # run's N.old that no listed hash matches is left, as it may hold a late write)
    (dead / "0.old").write_bytes((out / "qlora-7b-12gb.json").read_bytes())
    (dead / reportset.STAGING_MARK).write_bytes(reportset._MARK_HEADER + b'"0.old"\n')
    if extra is not None:
        (dead / extra).write_text("a user's file\n")
    return dead


def _mixed(out: Path) -> None:
    """The manifest as a run killed during its moves leaves it: two hashes for a name."""
    manifest = out / ".planner-reports.json"
    doc = json.loads(manifest.read_text())
    doc["files"]["qlora-7b-12gb.json"]["sha256"].append("0" * 64)
    manifest.write_text(json.dumps(doc, indent=1) + "\n")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("as_json", [False, True])
def test_compare_says_the_stopped_runs_staging_folder_it_removed(tmp_path: Path, as_json: bool) -> None:
    out = tmp_path / "o"
    assert _cli("plan", str(QLORA), "--out", str(out), "--format", "json").returncode == 0
    _mixed(out)
    dead = _dead_staging(out)
    r = _cli("compare", str(COMPARE), "--out", str(out), *(["--json"] if as_json else []))
    assert r.returncode == 0, r.stderr
    assert not dead.exists()
    assert " ".join(r.stderr.split()) == (
        f"Removed {dead}, which a planner run stopped during its moves left, with 1 file(s) of its reports: the "
        f"reports of that run in {out} (qlora-7b-12gb.json) may mix its new files with older ones; run it again to "
        "rewrite them whole."), r.stderr
    if as_json:
        json.loads(r.stdout)  # the note is not in the JSON on standard output


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_compare_says_the_staging_folder_it_leaves_and_the_api_carries_both(tmp_path: Path) -> None:
    import planner

    out = tmp_path / "o"
    assert _cli("plan", str(QLORA), "--out", str(out), "--format", "json").returncode == 0
    dead = _dead_staging(out, extra="saved.json")
    r = _cli("compare", str(COMPARE), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert (dead / "saved.json").read_text() == "a user's file\n"
    left = f"Left {dead}: it holds saved.json, which planner cannot tell it wrote; check it and remove it yourself."
    assert " ".join(r.stderr.split()) == (left + " Planner removed the 1 file(s) of reports that a stopped planner "
                                          "run left there."), r.stderr
    res = planner.compare(str(COMPARE), out=out)  # the folder holds the user's file alone now
    assert [" ".join(n.split()) for n in res.notes] == [left]
    assert planner.compare(str(COMPARE)).notes == ()  # no out: nothing written, nothing to say


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_json_says_its_notes_on_standard_error(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert _cli("plan", str(QLORA), "--out", str(out), "--format", "json").returncode == 0
    dead = _dead_staging(out)
    r = _cli("plan", str(QLORA), "--out", str(out), "--format", "json", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["scenario"] == "qlora-7b-12gb"
    assert " ".join(r.stderr.split()) == (f"Removed {dead}, which a stopped planner run left, with 1 file(s) of its "
                                          "reports."), r.stderr


# ---- 3. a failed standard output takes back only bytes that are still planner's ----

CHANGED = (" The {n} bytes planner wrote to standard output (from byte 0 of the file) were left in place: another "
           "program changed them or cut the file after planner wrote them, and planner takes back only its own "
           "bytes; the file was left as it is.")


def _stdout_on(path: Path, flags: int, monkeypatch: pytest.MonkeyPatch):
    import io
    import sys

    from planner.cli.common import _WholeWriter

    fd = os.open(path, flags)
    out = io.TextIOWrapper(io.BufferedWriter(_WholeWriter(fd)), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", out)
    return fd, out


def test_bytes_another_program_wrote_over_planners_are_not_overwritten(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.cli.common import restore_stdout_file

    f = tmp_path / "f"
    f.write_bytes(b"A" * 40)
    fd, out = _stdout_on(f, os.O_RDWR, monkeypatch)  # 1<> f
    out.write("planner's text\n")  # 15 bytes over the first 15 A's
    out.flush()
    with open(f, "r+b") as other:  # another program writes in place over planner's bytes
        other.write(b"OTHER")
    said = restore_stdout_file()
    os.close(fd)
    assert f.read_bytes() == b"OTHERer's text\n" + b"A" * 25  # not the A's planner read before its write
    assert said == CHANGED.format(n=15)


def test_a_file_another_program_cut_is_not_cut_further(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.cli.common import restore_stdout_file

    f = tmp_path / "f"
    fd, out = _stdout_on(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, monkeypatch)  # > f
    out.write("planner's text\n")
    out.flush()
    os.truncate(f, 3)  # another program cuts the file, then writes more at its end
    with open(f, "ab") as other:
        other.write(b"OTHER" * 4)
    said = restore_stdout_file()
    os.close(fd)
    assert f.read_bytes() == b"pla" + b"OTHER" * 4
    assert said == CHANGED.format(n=15)


def test_planners_unchanged_bytes_in_a_write_only_file_are_taken_back(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.cli.common import restore_stdout_file

    f = tmp_path / "f"
    fd, out = _stdout_on(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, monkeypatch)  # > f: read back through /proc
    out.write("planner's text\n")
    out.flush()
    out.write("more\n")
    out.flush()
    said = restore_stdout_file()
    os.close(fd)
    assert (said, f.read_bytes()) == ("", b"")


# ---- 4. a nameless scenario with no file name writes no reports named 'scenario' ----

NAMELESS = ("is missing, and {what} has no file name to name the reports by: they would be named scenario.* in {out}, "
            "as those of every other scenario without a name, and replace them. Give the scenario a name, e.g. "
            "name: ft-7b-workstation (a scenario file without one is named by the file's stem).")


def _nameless(tmp_path: Path) -> Path:
    import yaml

    doc = yaml.safe_load(QLORA.read_text())
    del doc["name"]
    path = tmp_path / "a.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_nameless_scenario_from_a_pipe_or_stdin_is_refused_with_out(tmp_path: Path) -> None:
    a = _nameless(tmp_path)
    piped = _cli(shell=f"python -m planner plan <(cat {_q(a)}) --out o --format json", cwd=tmp_path)
    stdin = _cli(shell=f"python -m planner compare /dev/stdin --out o < {_q(a)}", cwd=tmp_path)
    assert (piped.returncode, stdin.returncode) == (2, 2)
    what = "a scenario read from a pipe or standard input"
    assert piped.stderr.startswith("Error: /dev/fd/"), piped.stderr
    assert piped.stderr.split(": ", 2)[2] == "name: " + NAMELESS.format(what=what, out="o") + "\n", piped.stderr
    assert stdin.stderr == "Error: /dev/stdin: name: " + NAMELESS.format(what=what, out="o") + "\n", stdin.stderr
    assert not (tmp_path / "o").exists()
    # without reports a nameless piped scenario is planned as before; a saved file is named by its stem
    r = _cli(shell=f"python -m planner compare /dev/stdin < {_q(a)}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli("plan", str(a), "--out", "o", "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [".planner-reports.json", "a.json"]


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_nameless_mapping_is_refused_with_out_and_planned_without(tmp_path: Path) -> None:
    import yaml

    import planner
    from planner.core.errors import ScenarioError

    doc = yaml.safe_load(_nameless(tmp_path).read_text())
    out = tmp_path / "o"
    said = {}
    for fn in (planner.plan, planner.compare):
        try:
            fn(doc, out=out)
        except ScenarioError as exc:
            said[fn.__name__] = str(exc)
    what = "a scenario given as a mapping"
    assert said == {n: "name: " + NAMELESS.format(what=what, out=out) for n in ("plan", "compare")}
    assert not out.exists()
    assert planner.plan(doc).scenario == "scenario"  # nothing written: the name names no file
    assert planner.plan({**doc, "name": "mine"}, out=out, format="json").outputs == {"json": out / "mine.json"}


# ---- 5a. the API's "Interrupted" line goes into no file planner must not write into ----

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("into", ["catalog", "input", "log"])
def test_the_apis_interrupted_line_goes_into_no_protected_stream(tmp_path: Path, into: str) -> None:
    import signal
    import subprocess
    import sys

    import planner
    from test_safety17a import _CHILD, _child_env

    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    cat = tmp_path / "cat"  # stands for the shipped catalog in the child (planner.core.protected._protected)
    cat.mkdir()
    (cat / "gpus.yaml").write_text("gpus: []\n")
    planner.plan(str(s), out=str(out), format="json,csv,md")
    err = {"catalog": cat / "gpus.yaml", "input": s, "log": tmp_path / "run.log"}[into]
    before = err.read_bytes() if err.exists() else b""
    call = (f"import planner, pathlib; import planner.core.protected as P; P._protected = lambda: "
            f"[pathlib.Path({str(cat)!r})]; planner.plan({str(s)!r}, out={str(out)!r}, format='json,csv')")
    code = _CHILD.format(send="signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)", call=call)
    with open(err, "ab") as stream:
        p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=stream, env=_child_env())
    assert p.returncode == -signal.SIGTERM
    assert sorted(os.listdir(out)) == [".planner-reports.json", "s.csv", "s.json"]
    if into == "log":  # a file of no run's: the line is said there, as before
        assert err.read_text() == (f"planner: Interrupted by SIGTERM after the reports were written: wrote "
                                   f"{out / 's.csv'} and {out / 's.json'} (complete); removed the stale "
                                   f"{out / 's.md'}; stopped.\n")
    else:
        assert err.read_bytes() == before


# ---- 5b. a report that cannot be moved is named ----

@pytest.mark.parametrize("which", ["json", "md"])
def test_a_report_that_cannot_be_moved_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str) -> None:
    import errno

    import planner
    from planner.core import moves, renames
    from planner.core.errors import OutputError

    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    planner.plan(str(s), out=str(out), format="json,md")
    before = {n: _sha(out / n) for n in ("s.json", "s.md", ".planner-reports.json")}
    real_exchange, real_rename = renames.exchange, moves.os.rename

    def refuse(path: Path) -> None:  # what chattr +i on that report does (rename(2): EPERM)
        if Path(path).name == f"s.{which}":
            raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(renames, "exchange", lambda a, b: refuse(b) or real_exchange(a, b))
    monkeypatch.setattr(moves.os, "rename", lambda a, b, **kw: refuse(a) or real_rename(a, b, **kw))
    said = None
    try:  # md is not written this time: the stale md is taken away
        planner.plan(str(s), out=str(out), format="json" if which == "md" else "json,md", top=2)
    except OutputError as exc:
        said = str(exc)
    what = "the new report cannot be moved into place" if which == "json" else "the stale report cannot be moved away"
    assert said == (f"{out / f's.{which}'}: {what} (Operation not permitted); the previous set was put back as it "
                    "was. Check that file (an immutable or append-only attribute: lsattr) and the directory, and run "
                    "again.")
    monkeypatch.undo()
    assert {n: _sha(out / n) for n in before} == before
    assert sorted(os.listdir(out)) == [".planner-reports.json", "s.json", "s.md"]


# ---- 5c. a full TMPDIR is named as such ----

@pytest.mark.parametrize("err, then", [
    (28, "the disk of {tmp} is full. Free space there, or set TMPDIR to a folder on a disk with room, and run again."),
    (27, "the file-size limit ('ulimit -f') stopped that file. Raise the limit and run again."),
    (5, "that failed. Check {tmp}, or set TMPDIR to another folder, and run again."),
])
def test_a_failed_temporary_sheet_file_names_the_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 err: int, then: str) -> None:
    import errno
    import tempfile

    import openpyxl

    import planner
    from planner.core.errors import OutputError

    assert (errno.ENOSPC, errno.EFBIG, errno.EIO) == (28, 27, 5)  # Linux's numbers (errno-base.h)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("TMPDIR", str(tmp))
    why = os.strerror(err)

    def save(self, target) -> None:  # the sheet writer's temporary file fails, as on a full TMPDIR
        raise OSError(err, why)

    monkeypatch.setattr(openpyxl.Workbook, "save", save)
    out = tmp_path / "o"
    said = None
    try:
        planner.plan(str(QLORA), out=out, format="xlsx,json")
    except OutputError as exc:
        said = str(exc)
    assert said == (f"{out / 'qlora-7b-12gb.xlsx'}: cannot write the workbook ({why}): openpyxl writes each sheet to "
                    f"a temporary file in {tmp} (the temporary folder, TMPDIR) first, and " + then.format(tmp=tmp))
    assert not out.exists() or os.listdir(out) == []
