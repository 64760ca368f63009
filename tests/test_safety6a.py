"""Hostile pass 5A (reports/h5a.md): the fixes of issue 28's sixth safety round, one test each."""
from __future__ import annotations

import grp
import subprocess
import sys
from pathlib import Path
import pwd

import pytest

from planner.core.reportset import private_group

# Accounts as /etc/passwd and /etc/group would list them (pwd.struct_passwd / grp.struct_group fields).
ALICE = pwd.struct_passwd(("alice", "x", 1001, 1001, "", "/home/alice", "/bin/sh"))
MALLORY = pwd.struct_passwd(("mallory", "x", 1002, 1001, "", "/home/mallory", "/bin/sh"))
BOB = pwd.struct_passwd(("bob", "x", 1003, 1003, "", "/home/bob", "/bin/sh"))
ALICE_GROUP = grp.struct_group(("alice", "x", 1001, []))


def _mock(monkeypatch: pytest.MonkeyPatch, accounts: list, groups: list) -> None:
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: next(a for a in accounts if a.pw_uid == uid))
    monkeypatch.setattr(pwd, "getpwall", lambda: list(accounts))
    monkeypatch.setattr(grp, "getgrgid", lambda gid: next(g for g in groups if g.gr_gid == gid))
    monkeypatch.setattr(grp, "getgrall", lambda: list(groups))


def test_private_group_alone_is_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    _mock(monkeypatch, [ALICE, BOB], [ALICE_GROUP])
    assert private_group(1001, 1001)


def test_private_group_with_another_primary_member_is_distrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    # useradd -g alice mallory: mallory's primary gid is alice's group, /etc/group lists nobody
    _mock(monkeypatch, [ALICE, MALLORY], [ALICE_GROUP])
    assert not private_group(1001, 1001)


def test_private_group_with_a_second_entry_of_the_same_gid_is_distrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    # alice2:x:1001:eve in /etc/group: eve is in gid 1001 through another name
    _mock(monkeypatch, [ALICE], [ALICE_GROUP, grp.struct_group(("alice2", "x", 1001, ["eve"]))])
    assert not private_group(1001, 1001)


# -- 4. a write-only standard output over existing bytes: they are read through /proc, or nothing is written --

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_write_only_stdout_over_existing_bytes_is_restored(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    original = b"IMPORTANT LINE\n" * 72  # 1,080 bytes; the 1,042-byte output passes the 1,000-byte limit
    f.write_bytes(original)
    script = ("import os, resource, subprocess, sys\n"
              "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
              "import signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
              "fd = os.open(sys.argv[1], os.O_WRONLY)\n"
              "r = subprocess.run([sys.executable, '-m', 'planner', 'estimate', '--model', 'llama-2-7b', '--task',"
              " 'infer', '--context', '2048'], stdout=fd, stderr=subprocess.PIPE, text=True,"
              " preexec_fn=lambda: signal.signal(signal.SIGXFSZ, signal.SIG_IGN))\n"
              "sys.stderr.write(r.stderr); sys.exit(r.returncode)\n")
    r = subprocess.run([sys.executable, "-c", script, str(f)], capture_output=True, text=True)
    said = r.stderr
    assert r.returncode == 2, said
    assert said.startswith("Error: cannot write the output"), said
    assert "could not be read back" not in said
    assert f.read_bytes() == original


# -- 2. standard output or error onto an input, the shipped catalog or the package: refused, untouched --

REPO = Path(__file__).resolve().parent.parent


def test_stdout_onto_the_shipped_catalog_is_refused(tmp_path: Path) -> None:
    gpus = REPO / "catalog" / "gpus.yaml"
    before = gpus.read_bytes()
    r = subprocess.run(["bash", "-c", f'"{sys.executable}" -m planner catalog gpus 1<> "{gpus}"'],
                       cwd=tmp_path, capture_output=True, text=True)
    after = gpus.read_bytes()
    if after != before:
        gpus.write_bytes(before)  # the shipped catalog back for the rest of the suite
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"Error: standard output is {gpus}, a file of planner's own package"), r.stderr
    assert after == before


def test_stderr_appended_onto_a_workload_input_is_refused_silently(tmp_path: Path) -> None:
    w = tmp_path / "w.yaml"
    w.write_text("not: [a valid workload\n")
    before = w.read_bytes()
    r = subprocess.run(["bash", "-c", f'"{sys.executable}" -m planner estimate --workload w.yaml 2>> w.yaml'],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 2
    assert w.read_bytes() == before


# -- 6. a stale report kept because the run reads it says so, not "it changed" --

def test_a_stale_report_kept_as_an_input_says_why(tmp_path: Path) -> None:
    import yaml
    from click.testing import CliRunner

    from planner.cli.main import main

    doc = yaml.safe_load((REPO / "scenarios" / "qlora-7b-12gb.yaml").read_text())
    doc["name"] = "SOURCES"
    s = tmp_path / "s.yaml"
    s.write_text(yaml.safe_dump(doc, sort_keys=False))
    d = tmp_path / "D"
    first = CliRunner().invoke(main, ["plan", str(s), "--out", str(d), "--format", "md"])
    assert first.exit_code == 0, first.output
    (d / "gpus.yaml").write_bytes((REPO / "catalog" / "gpus.yaml").read_bytes())
    r = CliRunner().invoke(main, ["plan", str(s), "--catalog", str(d), "--out", str(d), "--format", "json"])
    out = r.output
    assert r.exit_code == 0, out
    assert "changed since planner wrote it" not in out
    assert f"Kept {d / 'SOURCES.md'}, a name of this report set not written this time: this run reads it " \
           "as an input." in out
    assert (d / "SOURCES.md").exists()


# -- 8. an overlay named "cloud.yaml " (trailing space) is refused with the hint, not ignored --

def test_an_overlay_name_with_a_trailing_space_gets_the_hint(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from planner.cli.main import main

    d = tmp_path / "D"
    d.mkdir()
    (d / "cloud.yaml ").write_bytes((REPO / "catalog" / "cloud.yaml").read_bytes())
    r = CliRunner().invoke(main, ["catalog", "cloud", "--catalog", str(d)])
    out = r.output
    assert r.exit_code == 2, out
    assert "'cloud.yaml ' is not a catalog file name" in out
    assert "Did you mean 'cloud.yaml'?" in out
