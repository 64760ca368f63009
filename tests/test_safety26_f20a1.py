"""Issue 28, hostile pass 20X: findings of report h20a fixed on branch f20a1.

- N1: the cleanup of a stopped run's staging folder left a mount point at a ``.planner-staging-*`` name (a bind
  mount, another file system) whole: nothing outside ``--out`` is removed, and it is said.
- m6: a staging-named folder emptied but not removable is said with the reason, not as "it holds (could not be
  removed), which planner cannot tell it wrote".
- m5: ``--out`` removed or moved away during the run is said as that, not as permissions or disk room.
- m3: the checkout's ``planner.egg-info`` (beside the package, where it exists) is refused as ``--out``.
- m1: ``calibrate --out`` on a read-only file system, under /proc or /sys, or below a regular file is refused
  before the measurement (one Error line).
- m4: a file planner did not write whose name differs from a new report's only in case or Unicode form (NFD
  and NFC) is refused, naming both names.
- m2: a stale report made read-only is kept and said (``Kept ...: it was made read-only``), and the run goes on.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from planner.core.atomic import write_text
from planner.core.pseudofs import is_mount_point
from planner.core.reportset import STAGING_PREFIX, ReportSet, _dead_staging_note

MARK = b'planner staging folder 1\n"r.json"\n'


def _set(out: Path, text: str = "{}\n") -> ReportSet:
    with ReportSet(out, set_name="s") as rs:
        write_text(rs.path("r.json"), text)
        rs.commit()
    return rs


def _mount(args: list[str]) -> None:
    """Mount as ``args`` say, or skip: mounts need root (CAP_SYS_ADMIN) and a mount namespace that allows them."""
    if os.geteuid() != 0:
        pytest.skip("mounting needs root")
    done = subprocess.run(["mount", *args], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"mount failed here: {done.stderr.decode(errors='replace').strip()}")


def _dead_run(folder: Path, report: Path) -> None:
    """What a stopped run leaves in its staging folder: a copy of a listed report and the mark listing it."""
    (folder / "r.json").write_bytes(report.read_bytes())
    (folder / ".planner-staging").write_bytes(MARK)


@pytest.mark.parametrize("kind", ["bind", "tmpfs"])
def test_mount_point_at_a_staging_name_is_left_whole(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "out"
    _set(out)
    at = out / (STAGING_PREFIX + "abcdefgh")
    at.mkdir(mode=0o700)
    outside = tmp_path / "ext"
    outside.mkdir()
    if kind == "bind":
        _mount(["--bind", str(outside), str(at)])
    else:
        _mount(["-t", "tmpfs", "-o", "size=1m", "tmpfs", str(at)])
    try:
        _dead_run(at, out / "r.json")
        before = sorted(p.name for p in at.iterdir())
        rs = _set(out)
        after = sorted(p.name for p in at.iterdir())
    finally:
        subprocess.run(["umount", str(at)], check=True)
    assert before == [".planner-staging", "r.json"]
    assert after == before  # nothing removed on the other side of the mount point
    said = [n for n in rs.notes if n.startswith(f"Left {at}")]
    assert said and "mount point or on another file system" in said[0] and "removed nothing" in said[0]


def test_is_mount_point(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert is_mount_point(plain) is False
    assert is_mount_point(plain, os.stat(tmp_path).st_dev) is False
    assert is_mount_point(plain, os.stat(tmp_path).st_dev + 1) is True  # another device than --out's
    assert is_mount_point(tmp_path / "missing") is True  # cannot be read: nothing removed there
    assert is_mount_point("/") is True


def test_is_mount_point_bind_same_file_system(tmp_path: Path) -> None:
    src, at = tmp_path / "src", tmp_path / "at"
    src.mkdir()
    at.mkdir()
    _mount(["--bind", str(src), str(at)])
    try:
        assert os.stat(at).st_dev == os.stat(tmp_path).st_dev  # the device alone cannot tell it
        seen = is_mount_point(at)
    finally:
        subprocess.run(["umount", str(at)], check=True)
    assert seen is True


def test_not_removable_folder_said_with_its_reason() -> None:
    out, folder = Path("o"), Path("o") / (STAGING_PREFIX + "x")
    line = _dead_staging_note(out, folder, 1, ["(could not be removed: Device or resource busy)"])
    assert line.startswith(f"Left {folder}: it could not be removed (Device or resource busy); check it")
    assert "Planner removed the 1 file(s)" in line
    assert "it holds" not in line and "cannot tell it wrote" not in line
    empty = _dead_staging_note(out, folder, 0, ["(could not be removed: Device or resource busy)"])
    assert empty == (f"Left {folder}: it could not be removed (Device or resource busy); check it and remove it "
                     "yourself.")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_read_only_stale_report_kept_and_run_goes_on(tmp_path: Path) -> None:
    # m2: the md of an earlier run, made read-only, is a stale report under --format json: kept, said, exit 0
    from click.testing import CliRunner

    from planner.cli.main import main

    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml"
    out = tmp_path / "rp"
    first = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json,md"])
    assert first.exit_code == 0, first.output
    md = out / "qlora-7b-12gb.md"
    text = md.read_text()
    md.chmod(0o444)
    run = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json"])
    md.chmod(0o644)
    assert run.exit_code == 0, run.output
    assert md.read_text() == text
    assert (out / "qlora-7b-12gb.json").is_file()
    said = " ".join(run.output.split())  # notes wrap at the terminal width
    assert f"Kept {md}, a name of this report set not written this time: it was made read-only" in said


@pytest.mark.parametrize("when", ["before path()", "after path()"])
def test_out_removed_during_the_run_is_said_as_that(tmp_path: Path, when: str) -> None:
    # m5: --out removed by another shell while the reports are staged: the line says the folder went, not
    # permissions or disk room (before path(): the name is listed in the staging mark; after: the file written)
    import shutil

    from planner.core.errors import OutputError

    out = tmp_path / "del"
    with pytest.raises(OutputError) as info:
        with ReportSet(out, set_name="s") as rs:
            if when == "after path()":
                target = rs.path("r.json")
                shutil.rmtree(out)
            else:
                shutil.rmtree(out)
                target = rs.path("r.json")
            write_text(target, "{}\n")
    line = str(info.value)
    expected = (f"{out / 'r.json'}: cannot write (No such file or directory): the folder {out} is not there "
                "(removed or moved away during the run)" if when == "after path()" else
                f"{out}: was removed or moved away during the run (No such file or directory)")
    assert line.startswith(expected)
    assert "writable" not in line and "disk" not in line
    assert not out.exists()  # nothing made again where it was


def test_file_whose_folder_was_moved_away(tmp_path: Path) -> None:
    from planner.core.errors import OutputError

    folder = tmp_path / "cal"
    folder.mkdir()
    folder.rename(tmp_path / "cal.old")
    with pytest.raises(OutputError) as info:
        write_text(folder / "calibration.yaml", "x")
    assert "the folder " + str(folder) + " is not there (removed or moved away during the run)" in str(info.value)


def test_checkout_egg_info_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # m3: the checkout's planner.egg-info (setuptools' build metadata beside the package, which an editable
    # install makes) is refused as --out, as the installed dist-info is; made here for the test where missing
    import shutil

    from click.testing import CliRunner

    import planner
    from planner.cli.main import main
    from planner.core import protected

    egg = Path(planner.__file__).resolve().parent.parent / "planner.egg-info"
    made = not egg.exists()
    if made:
        egg.mkdir()
        (egg / "PKG-INFO").write_text("Name: planner\n")
    monkeypatch.setattr(protected, "_metadata_folder", lambda: None)  # the checkout's folder alone refuses it
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml"
    monkeypatch.chdir(tmp_path)
    try:
        before = sorted(p.name for p in egg.iterdir())
        r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(egg), "--format", "json"])
        after = sorted(p.name for p in egg.iterdir())
    finally:
        if made:
            shutil.rmtree(egg)
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {egg}: is planner's own package metadata folder ({egg}), or a folder inside it, "
                        "and planner does not write into it. Give another --out, a folder outside it, e.g. --out "
                        "reports.\n")
    assert after == before


CAL = ["--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16", "--micro-batch", "2", "--seq-len", "512"]


def _calibrate_refused(out: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """``calibrate --out out``'s error line; the measurement stands in as a failure, so a run that got past the
    destination checks is seen."""
    from click.testing import CliRunner

    from planner.cli.main import main
    from planner.validate import calibrate as cal

    def measured(*_a, **_k):
        raise AssertionError("the measurement started")

    monkeypatch.setattr(cal, "run_calibration", measured)
    r = CliRunner().invoke(main, ["calibrate", *CAL, "--out", out])
    assert r.exit_code == 2, (r.output, r.exception)
    return r.stderr


def test_calibrate_out_below_a_file_is_refused_before_the_measurement(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # m1: the folder of --out is a regular file (or lies below one): said before the measurement
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fileparent").write_text("x")
    for out in ("fileparent/cal.yaml", "fileparent/sub/cal.yaml"):
        line = _calibrate_refused(out, monkeypatch)
        assert line == (f"Error: {out}: would be made in fileparent, which is a regular file, not a folder. Give "
                        "--out a file in a folder you can write (it is created if missing), e.g. --out "
                        "./calibration.yaml.\n")


@pytest.mark.parametrize("out, kind", [("/proc/self/cal.yaml", "proc"), ("/sys/cal.yaml", "sysfs")])
def test_calibrate_out_on_a_pseudo_file_system_is_refused(out: str, kind: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.core.pseudofs import file_system_type

    if file_system_type(str(Path(out).parent)) != kind:
        pytest.skip(f"{Path(out).parent} is not {kind} here")
    line = _calibrate_refused(out, monkeypatch)
    assert line.startswith(f"Error: {out}: would be made in {Path(out).parent}, a folder of the {kind} file system")
    assert line.endswith("Give --out a file on a disk (its folder is created if missing).\n")


def test_calibrate_out_on_a_read_only_file_system_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ro = tmp_path / "rodir"
    ro.mkdir()
    _mount(["-t", "tmpfs", "-o", "ro,size=100k", "tmpfs", str(ro)])
    try:
        lines = [_calibrate_refused(str(ro / "cal.yaml"), monkeypatch),
                 _calibrate_refused(str(ro / "sub" / "cal.yaml"), monkeypatch)]
    finally:
        subprocess.run(["umount", str(ro)], check=True)
    for line, out in zip(lines, (ro / "cal.yaml", ro / "sub" / "cal.yaml")):
        assert line == (f"Error: {out}: cannot be written: the folder {ro} is not writable (Read-only file system), "
                        "so the measurement's result could not be saved. Give --out a file in a folder you can "
                        "write (it is created if missing), e.g. --out ./calibration.yaml.\n")


@pytest.mark.parametrize("theirs", ["QLORA-7B-12GB.json", "qlora-7b-12gb.JSON"])
def test_a_foreign_file_differing_only_in_case_is_refused(tmp_path: Path, theirs: str) -> None:
    # m4: the user's own file that a case-insensitive file system stores as the report: refused, both named
    from click.testing import CliRunner

    from planner.cli.main import main

    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml"
    out = tmp_path / "cs"
    out.mkdir()
    (out / theirs).write_text("mine")
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {out / 'qlora-7b-12gb.json'}: would sit beside {out / theirs}, a file planner did "
                        f"not write, and the two names ({theirs!r} and 'qlora-7b-12gb.json') differ only in upper "
                        "and lower case or in Unicode form (composed or decomposed), which macOS and Windows store "
                        "as one file. Move that file away or give another --out.\n")
    assert sorted(p.name for p in out.iterdir()) == [theirs]  # nothing written beside it


def test_a_foreign_file_in_another_unicode_form_is_refused(tmp_path: Path) -> None:
    import unicodedata

    from planner import plan
    from planner.core.errors import DestinationError

    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml"
    cafe = tmp_path / "cafe.yaml"
    cafe.write_text(scenario.read_text().replace("name: qlora-7b-12gb", "name: café", 1))
    assert "name: café" in cafe.read_text()
    out = tmp_path / "nf"
    out.mkdir()
    decomposed = unicodedata.normalize("NFD", "café") + ".md"
    (out / decomposed).write_text("mine")
    with pytest.raises(DestinationError) as info:
        plan(str(cafe), out=str(out), format="md")
    line = str(info.value)
    assert "a file planner did not write" in line and "('cafe\\u0301.md' and 'caf\\xe9.md')" in line
    assert [p.name for p in out.iterdir()] == [decomposed]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_this_sets_own_report_in_another_form_is_not_refused(tmp_path: Path) -> None:
    # planner's own earlier report (listed in the manifest) in the other spelling is the same set's: no refusal
    import unicodedata

    from planner import plan

    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml"
    out = tmp_path / "nf"
    for form in ("NFD", "NFC"):
        text = scenario.read_text().replace("name: qlora-7b-12gb", "name: " + unicodedata.normalize(form, "café"), 1)
        (tmp_path / "s.yaml").write_text(text)
        plan(str(tmp_path / "s.yaml"), out=str(out), format="md")
