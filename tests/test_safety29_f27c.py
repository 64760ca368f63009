"""Issue 28, hostile pass 27: a relative output folder resolved once, at the call's start, and the minor findings
of report h27a.

- N1: ``plan(out='reports')`` and ``compare(out=...)`` with a relative ``out=`` while the current folder changes
  during the call (another thread's ``os.chdir``; here a patched writer changes it, not a timing) land the whole set
  in the folder the path named at the call's start, leave no staging folder, and still show the path as written;
  a run that fails after such a change removes its staging folder from that folder (planner.core.resolved).
- m1: ``--out newdir/..`` (``out=``) with ``newdir`` missing is refused in one line with the path meant, and makes
  no folder; a '..' after a folder that exists is kept.
- m2: ``--out file:///x`` (``out=``) is refused with the path the URL names as the hint.
- m3: another user's link in a sticky folder is refused with the one hint that fits (a path without the link), not
  the sticky bit the folder already has.
- m4: an empty ``.planner-staging-*`` folder planner did not make is "Left" with a sentence that parses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import planner.api.comparisons as comparisons
import planner.report.workbook as workbook
from planner import compare, plan
from planner.cli.main import main
from planner.core.atomic import STAGING_PREFIX
from planner.core.errors import InputError, OutputError
from planner.core.resolved import show_path, show_text

ROOT = Path(__file__).resolve().parents[1]
QLORA = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
COMPARE = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"
STEM = "qlora-7b-12gb"  # QLORA's name: (its report names)
MANIFEST = ".planner-reports.json"


def _two_folders(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "A", tmp_path / "B"
    (first / "reports").mkdir(parents=True)
    (second / "reports").mkdir(parents=True)
    return first, second


def _chdir_then(folder: Path, write):
    """A workbook writer that first changes the current folder (what another thread's os.chdir does mid-call)."""
    def patched(*args, **kwargs):
        os.chdir(folder)
        return write(*args, **kwargs)
    return patched


# -- N1 --
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_cwd_change_during_plan_leaves_the_set_whole_in_the_first_folder(tmp_path: Path, monkeypatch) -> None:
    first, second = _two_folders(tmp_path)
    monkeypatch.chdir(first)  # restored after the test, whatever the call changed
    monkeypatch.setattr(workbook, "write_workbook", _chdir_then(second, workbook.write_workbook))
    r = plan(QLORA, out="reports", format="md,json,xlsx")
    assert Path.cwd() == second  # the writer did change it, in the middle of the call
    assert sorted(os.listdir(first / "reports")) == sorted([MANIFEST, f"{STEM}.json", f"{STEM}.md", f"{STEM}.xlsx"])
    assert os.listdir(second / "reports") == []
    assert r.outputs == {ext: Path("reports") / f"{STEM}.{ext}" for ext in ("json", "xlsx", "md")}  # as given
    listed = json.loads((first / "reports" / MANIFEST).read_text())
    assert sorted(listed["files"]) == [f"{STEM}.json", f"{STEM}.md", f"{STEM}.xlsx"]


def test_a_failed_plan_after_a_cwd_change_removes_its_staging_folder(tmp_path: Path, monkeypatch) -> None:
    first, second = _two_folders(tmp_path)
    monkeypatch.chdir(first)

    def failing(data, path):
        os.chdir(second)
        raise OutputError(f"{path}: cannot write (test)")
    monkeypatch.setattr(workbook, "write_workbook", failing)
    with pytest.raises(OutputError) as caught:
        plan(QLORA, out="reports", format="md,json,xlsx")
    assert os.listdir(first / "reports") == []  # no staging folder left, nothing written
    assert os.listdir(second / "reports") == []
    # the path in the line is shown as the user gave it: reports/<staging>/<name>, not the absolute one
    line = str(caught.value)
    assert line.startswith(f"reports/{STAGING_PREFIX}") and line.endswith(f"/{STEM}.xlsx: cannot write (test)"), line


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_cwd_change_during_compare_leaves_the_set_whole_in_the_first_folder(tmp_path: Path, monkeypatch) -> None:
    first, second = _two_folders(tmp_path)
    monkeypatch.chdir(first)
    monkeypatch.setattr(comparisons, "write_comparison_workbook",
                        _chdir_then(second, comparisons.write_comparison_workbook))
    r = compare(COMPARE, out="reports")
    assert Path.cwd() == second
    names = sorted(os.listdir(first / "reports"))
    stem = r.outputs["json"].stem
    assert names == sorted([MANIFEST, f"{stem}.json", f"{stem}.xlsx"])
    assert os.listdir(second / "reports") == []
    assert r.outputs == {"json": Path("reports") / f"{stem}.json", "xlsx": Path("reports") / f"{stem}.xlsx"}


def test_a_relative_out_is_shown_as_given_in_the_cli_lines(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", "o", "--format", "md"])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip().splitlines()[-1] == f"Wrote o/{STEM}.md"
    (tmp_path / "o" / f"{STEM}.csv").write_text("mine\n")  # a file planner did not write, where a report goes
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", "o", "--format", "csv"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: o/{STEM}.csv: is not a file planner wrote there"), r.stderr
    assert str(tmp_path) not in r.stderr


def test_show_text_replaces_the_whole_folder_only() -> None:
    at, shown = Path("/w/o"), Path("o")
    text = "/w/o/x.md: in /w/o. Not /w/other, /w/o.bak/y or /x/w/o."
    # '/w/other' and '/w/o.bak' are other folders than 'o', and '/x/w/o' another path: each left as it is
    assert show_text(text, at, shown) == "o/x.md: in o. Not /w/other, /w/o.bak/y or /x/w/o."
    assert show_text("/w/x.md is in /w", Path("/w"), Path(".")) == "x.md is in ."  # Path(".") / "x.md" is x.md
    assert show_path(Path("/w/o/x.md"), at, shown) == Path("o/x.md")
    assert show_path(Path("/elsewhere/x.md"), at, shown) == Path("/elsewhere/x.md")


# -- m1 --
@pytest.mark.parametrize("given, meant", [("newdir/..", "."), ("nd2/../../k3", "../k3"), ("a/b/../../r", "r")])
def test_a_dotdot_after_a_missing_folder_is_refused(tmp_path: Path, monkeypatch, given: str, meant: str) -> None:
    work = tmp_path / "w"
    work.mkdir()
    monkeypatch.chdir(work)
    missing = given.split("/..")[0]
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", given, "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: --out: {given!r} has '..' right after {missing}, a folder that does not exist: "
                        f"planner would make it only to leave it again. Write --out {meant!r}.\n")
    with pytest.raises(InputError) as caught:
        plan(QLORA, out=given, format="md")
    assert str(caught.value).endswith(f"planner would make it only to leave it again. Give out={meant!r}.")
    assert sorted(os.listdir(tmp_path)) == ["w"] and os.listdir(work) == []  # no folder made, nothing written


def test_a_dotdot_after_a_folder_that_exists_is_kept(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ex").mkdir()
    r = plan(QLORA, out="ex/../r2", format="md")
    assert r.outputs == {"md": Path("ex/../r2") / f"{STEM}.md"}
    assert (tmp_path / "r2" / f"{STEM}.md").is_file() and os.listdir(tmp_path / "ex") == []


# -- m2 --
@pytest.mark.parametrize("url, meant", [("file:///tmp/x%20y", "/tmp/x y"), ("FILE:/tmp/u2", "/tmp/u2")])
def test_a_file_url_as_out_is_refused_with_its_path(tmp_path: Path, monkeypatch, url: str, meant: str) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", url, "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: --out: {url!r} is a URL, but a path is taken as written, not as a URL: it would "
                        f"make a folder 'file:' in the current folder. Write --out {meant!r}.\n")
    with pytest.raises(InputError) as caught:
        plan(QLORA, out=url, format="md")
    assert str(caught.value).endswith(f"Give out={meant!r}.")
    assert os.listdir(tmp_path) == []


# -- m3 --
def test_another_users_link_in_a_sticky_folder_gets_one_fitting_hint(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a link to another user")
    mine = tmp_path / "mine"
    mine.mkdir()
    shared = tmp_path / "st"
    shared.mkdir()
    shared.chmod(0o1777)  # sticky already, as /tmp
    link = shared / "lnk"
    link.symlink_to(mine)
    os.lchown(link, 65534, 65534)
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", str(link), "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr.endswith(f"Give a path without that link (such as {mine}, where it points now, if you trust "
                             "it).\n"), r.stderr
    assert "chmod +t" not in r.stderr and r.stderr.count("Give ") == 1
    assert os.listdir(mine) == []


# -- m4 --
def test_an_empty_foreign_staging_folder_is_left_with_a_clear_line(tmp_path: Path) -> None:
    out = tmp_path / "st"
    plan(QLORA, out=out, format="md")
    fake = out / (STAGING_PREFIX + "abcdefgh")
    fake.mkdir(mode=0o755)  # not as planner makes one (mkdtemp: 0700), and no mark in it
    r = plan(QLORA, out=out, format="md")
    assert r.notes == (f"Left {fake}: it holds no planner mark, so planner cannot tell it made it; check it and "
                       "remove it yourself.",)
    assert fake.is_dir()
