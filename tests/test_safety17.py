"""Issue 28, hostile pass 12A #1 and a minor item.

1. A symbolic link on the way to --out (or TMPDIR) that another user owns, or that sits in a folder where another
   user can replace it, is refused: in a sticky folder such as /tmp a link's owner can point it elsewhere while the
   run writes through it, and the run's writes by path then land in any file of the user's (h12a #1).
   planner.core.sharing.links_on_path lists the links the kernel follows, as path_resolution(7) describes.
m. New output folders are made 0o755 less the umask: under umask 000 or 020 the folder planner had just made was
   refused as one others could write.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import _scenario
from planner.cli.main import main
from planner.core.sharing import links_on_path

OTHER = 65534  # 'nobody' on Linux


def _links(path: Path) -> list[str]:
    return [str(p) for p, _ in links_on_path(path)]


def test_links_on_path_lists_every_link_the_kernel_follows(tmp_path: Path) -> None:
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "l2").symlink_to(tmp_path / "real")
    (tmp_path / "l1").symlink_to("l2")  # relative, to another link
    assert _links(tmp_path / "l1" / "sub") == [str(tmp_path / "l1"), str(tmp_path / "l2")]
    # '..' after a link is taken from where the link led (path_resolution(7)), not from the name written
    (tmp_path / "other").mkdir()
    (tmp_path / "real" / "up").symlink_to(tmp_path / "other")
    assert _links(tmp_path / "l2" / "up" / ".." / "sub") == [str(tmp_path / "l2"), str(tmp_path / "real" / "up")]
    assert _links(tmp_path / "real" / "sub" / "not-yet" / "deeper") == []
    assert _links(tmp_path / "real") == []


def test_a_link_loop_stops_at_the_kernels_limit(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    assert len(links_on_path(tmp_path / "a" / "x")) == 40  # ELOOP after 40 (path_resolution(7))


def _other_users_link(tmp_path: Path, target: Path) -> Path:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a link to another user")
    shared = tmp_path / "st"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp: sticky, so the folder itself is accepted
    link = shared / "lnk"
    link.symlink_to(target)
    os.lchown(link, OTHER, OTHER)
    return link


def test_an_out_through_another_users_link_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    link = _other_users_link(tmp_path, mine)
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(link)])
    assert r.exit_code == 2, r.output
    # the link is the output folder itself: said so, with where the link points (h34a m10)
    assert r.stderr.startswith(f"Error: {link}: is the output folder (it now points to {mine}), "
                               f"but it is a symbolic link of another user (uid {OTHER}) in a sticky folder, where "
                               "its owner can point it elsewhere while planner writes; so planner could be made to "
                               "write elsewhere, and it writes "
                               f"nothing there. Give a path without that link (such as {mine}, where it points "
                               "now, if you trust it).\n"), r.stderr
    assert list(mine.iterdir()) == []


def test_a_root_link_to_another_users_link_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    link = _other_users_link(tmp_path, mine)
    chain = tmp_path / "st" / "l1"
    chain.symlink_to(link)  # root's (this user's) link, to the other user's
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(chain / "sub")])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {link}: is on the way to the output folder ({chain / 'sub'})"), r.stderr
    assert list(mine.iterdir()) == []


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_tmpdir_through_another_users_link_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mytmp"
    mine.mkdir(mode=0o700)
    link = _other_users_link(tmp_path, mine)
    from cli_helpers import _cli

    # a child process: tempfile caches the temporary folder in the process that first asks
    r = _cli("plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(tmp_path / "o"), env={"TMPDIR": str(link)})
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith(f"Error: {link}: is the temporary folder (TMPDIR)"), r.stderr  # the link itself
    assert not (tmp_path / "o").exists()


def test_the_users_own_link_in_a_sticky_folder_is_accepted(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    shared = tmp_path / "st"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "lnk").symlink_to(mine)  # this user's: only this user (and root) can replace it in a sticky folder
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(shared / "lnk"),
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in mine.iterdir()) == [".planner-reports.json", "x.json"]


def test_a_link_in_a_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    (open_dir / "lnk").symlink_to(mine)
    open_dir.chmod(0o777)  # no sticky bit: anyone can replace the link
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(open_dir / "lnk")])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {open_dir / 'lnk'}: is the output folder"), r.stderr
    assert "where another user could replace it (that folder: anyone can write it and it has no sticky bit" in r.stderr
    assert list(mine.iterdir()) == []


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("mask", [0o000, 0o020])
def test_a_new_out_folder_is_not_writable_by_others_whatever_the_umask(tmp_path: Path, mask: int) -> None:
    # a umask is process-wide: set in a child process, not here (no interpreter-wide change in the test process)
    from cli_helpers import _cli

    out = tmp_path / "a" / "b"
    r = _cli(shell=f"umask {mask:03o} && python -m planner plan '{_scenario(tmp_path / 's.yaml', 'x')}' --out '{out}' "
                   "--format json")
    assert r.returncode == 0, r.stderr
    for folder in (tmp_path / "a", out):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755


def test_calibrate_out_through_another_users_link_is_refused_before_the_measurement(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    link = _other_users_link(tmp_path, mine)
    r = CliRunner().invoke(main, ["calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16",
                                  "--micro-batch", "1", "--seq-len", "128", "--out", str(link / "cal.yaml")])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {link}: is the calibration file's folder"), r.stderr
    assert list(mine.iterdir()) == []


def test_an_interrupt_swallowed_in_a_callback_is_still_known(capsys: pytest.CaptureFixture[str]) -> None:
    # the slow CLI test saw it: SIGINT arrived while importlib ran its module-lock weakref callback, where Python
    # ignores exceptions ("Exception ignored in ... Traceback"), and the run went on to exit 0. The guard keeps the
    # signal (the command then stops as interrupted: planner.cli.main) and prints no traceback for it.
    import signal
    import weakref

    from planner.core.interrupt import SignalGuard

    class Thing:
        pass

    with SignalGuard() as guard:
        thing = Thing()
        ref = weakref.ref(thing, lambda _r: guard._handle(signal.SIGTERM, None))
        del thing  # the callback raises Interrupted, which Python swallows
        assert ref() is None
        assert guard.received == signal.SIGTERM
    assert capsys.readouterr().err == ""


def test_calibrate_out_through_a_dangling_link_is_refused_before_the_measurement(tmp_path: Path) -> None:
    # safety17b named a dangling --out link for reports; calibrate met it only after measuring (no torch here: a
    # refusal after the measurement would be the torch message instead)
    (tmp_path / "dl").symlink_to("missing/sub")
    r = CliRunner().invoke(main, ["calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16",
                                  "--micro-batch", "1", "--seq-len", "128", "--out", str(tmp_path / "dl" / "c.yaml")])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {tmp_path / 'dl'}: is a link to a folder that does not exist ({tmp_path / 'dl'} -> "
                        "missing/sub). Create that folder, or give --out a directory that exists or can be created.\n"), \
        r.stderr


def test_another_users_link_in_a_folder_only_this_user_can_write_is_accepted(tmp_path: Path) -> None:
    # its owner could change it only by replacing it, which takes write permission on its folder (rename(2))
    if os.geteuid() != 0:
        pytest.skip("needs root to give a link to another user")
    mine = tmp_path / "mine"
    mine.mkdir()
    (tmp_path / "lnk").symlink_to(mine)
    os.lchown(tmp_path / "lnk", OTHER, OTHER)
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(tmp_path / "lnk"),
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in mine.iterdir()) == [".planner-reports.json", "x.json"]


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_help_and_usage_lines_never_go_into_a_file_the_command_line_names(tmp_path: Path) -> None:
    # h13a #1: the stream check ran after the options were read, so --help, --version and usage lines were printed
    # into the scenario (and the catalog, the package) they were redirected onto
    from cli_helpers import _cli

    s = _scenario(tmp_path / "s.yaml", "x")
    before = s.read_bytes()
    for shell, stream in ((f"python -m planner plan '{s}' --help >> '{s}'", "standard output"),
                          (f"python -m planner plan --top 1 --top 2 '{s}' 2>> '{s}'", "standard error"),
                          (f"python -m planner --version --no-such '{s}' 1<> '{s}'", "standard output")):
        r = _cli(shell=shell)
        assert r.returncode == 2, (shell, r.stdout, r.stderr)
        said = r.stderr if stream == "standard output" else r.stdout
        assert said == (f"Error: {stream} is {s}, an input of this run; planner does not write into it. Redirect "
                        f"{stream} to another file.\n"), (shell, said)
        assert s.read_bytes() == before, shell
    # both streams onto it: the refusal itself would go into the file, so nothing is written anywhere
    r = _cli(shell=f"python -m planner plan '{s}' --help >> '{s}' 2>&1")
    assert r.returncode == 2 and r.stdout == r.stderr == ""
    assert s.read_bytes() == before


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_log_beside_the_reports_is_not_one_of_them(tmp_path: Path) -> None:
    # 'plan s.yaml --out . > plan.txt' was refused: every file in --out counted; only those planner writes there do
    from cli_helpers import _cli

    s = _scenario(tmp_path / "s.yaml", "x")
    r = _cli(shell="python -m planner plan s.yaml --out . --format json > plan.txt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Recommendation:" in (tmp_path / "plan.txt").read_text()
    assert s.is_file()


def test_a_manifest_listing_paths_is_not_planners(tmp_path: Path) -> None:
    # h13a minor: a manifest listing '../victim.txt' or an absolute path was read and carried forward; planner
    # never writes a name with '/', so such a file is not its manifest
    import hashlib
    import json

    out = tmp_path / "o"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    digest = hashlib.sha256(victim.read_bytes()).hexdigest()
    manifest = out / ".planner-reports.json"
    manifest.write_text(json.dumps({"format": "planner report manifest 1", "files": {
        "../victim.txt": {"sha256": [digest], "set": "plan x"}}}))
    manifest.chmod(0o644)
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "s.yaml", "x")), "--out", str(out),
                                  "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {manifest}: is not a report manifest planner wrote, and planner keeps the list of its "
                        "reports in a file of that name. Move that file away or give another --out.\n"), r.stderr
    assert victim.read_text() == "mine\n"


@pytest.mark.parametrize("gpu, hint", [
    ("L4", "Did you mean 'l4'?"),  # the id in another case first (ids are lower case)
    ("zzz", "'planner catalog gpus' lists the valid ids."),  # 'planner catalog' alone needs a KIND (h13b #4)
])
def test_an_unknown_gpu_in_constraints_gets_a_hint_that_works(tmp_path: Path, gpu: str, hint: str) -> None:
    s = tmp_path / "s.yaml"
    s.write_text("name: c\nworkloads:\n  - {name: w1, model: llama-2-7b, task: infer, context: 1024}\n"
                 f"constraints: {{excluded_gpus: [{gpu}]}}\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"Error: {s}:4: constraints.excluded_gpus: unknown GPU {gpu!r}. {hint}\n", r.stderr


def test_a_calibrated_cuda_context_as_large_as_the_card_is_refused(tmp_path: Path) -> None:
    # h13b #7: 30 GiB on an L4 (22.07 GiB offered to processes: catalog/gpus.yaml memory_cuda_total) was used
    cal = tmp_path / "big.yaml"
    cal.write_text('gpus:\n  - gpu_name: "NVIDIA L4"\n    cuda_context: 30 GiB\n    allocator_fraction: 0.05\n'
                   "    measured_on: 2026-11-01\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--context", "1024",
                                  "--gpu", "l4", "--calibration", str(cal)])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {cal}: gpus (NVIDIA L4).cuda_context: 30.00 GiB is as much as all the memory "
                               "l4 offers to processes (22.07 GiB), so it cannot be this card's CUDA context."), r.stderr
