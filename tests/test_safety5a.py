"""Findings of hostile pass 4A on issue 28 (report sets, paths, permissions, importer, output failures).

Each test fails on main at cff61f9: a replaced report lost its POSIX ACL, the manifest was chmod-ed by
path after its rename, a failed stdout write cut away other programs' lines, a file named like planner's
temporary manifest was deleted on its name alone, Lambda's prices were imported as AWS's, an overlay
imported east of UTC was refused west of it, a bind mount of the catalog (or an --out swapped for a link
to it) was written into, an edit saved during the renames was lost, a killed run's N.old links were left
for ever, and calibrate reached the measurement with --out inside the package.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from tests.cli_helpers import _cli, _scenario, _sha

ROOT = Path(__file__).resolve().parents[1]
QLORA = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
SKY = ROOT / "tests" / "data" / "skypilot"
ACL = "system.posix_acl_access"



def _acl(uid: int) -> bytes:
    """A POSIX access ACL as Linux stores it (acl(5); linux/posix_acl_xattr.h: version 2, then (tag, perm,
    id) entries): owner rw, named user ``uid`` r, owning group nothing, mask r, others nothing."""
    entries = [(0x01, 6, 0xFFFFFFFF), (0x02, 4, uid), (0x04, 0, 0xFFFFFFFF), (0x10, 4, 0xFFFFFFFF),
               (0x20, 0, 0xFFFFFFFF)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def _set_acl_or_skip(path: Path) -> bytes:
    acl = _acl(os.getuid() + 1001)
    try:
        os.setxattr(path, ACL, acl)
    except (OSError, AttributeError) as exc:  # no xattr / ACL support on this file system
        pytest.skip(f"no POSIX ACLs here ({exc})")
    return os.getxattr(path, ACL)


# -- 1. a replaced report keeps its POSIX ACL ---------------------------------------------------------

def test_a_replaced_report_keeps_its_posix_acl(tmp_path: Path) -> None:
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"]).exit_code == 0
    acl = _set_acl_or_skip(out / "s.json")
    mode = os.stat(out / "s.json").st_mode & 0o7777
    _scenario(s, "s", micro_batch=2)
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert os.getxattr(out / "s.json", ACL) == acl
    assert os.stat(out / "s.json").st_mode & 0o7777 == mode
    assert "micro-batch 2 x 512 tokens" in (out / "s.json").read_text()


def test_an_atomic_write_keeps_the_acl_of_the_file_it_replaces(tmp_path: Path) -> None:
    from planner.core.atomic import write_text

    f = tmp_path / "cloud.yaml"
    f.write_text("a\n")
    acl = _set_acl_or_skip(f)
    write_text(f, "b\n")
    assert f.read_text() == "b\n" and os.getxattr(f, ACL) == acl


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_acl_that_cannot_be_kept_refuses_the_replacement(tmp_path: Path, monkeypatch) -> None:
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"]).exit_code == 0
    acl = _set_acl_or_skip(out / "s.json")
    before = (out / "s.json").read_bytes()

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "setxattr", refuse)
    _scenario(s, "s", micro_batch=2)
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err == (f"Error: {out / 's.json'}: cannot keep its access control list (POSIX ACL: Operation not "
                   "permitted), and replacing it would change who can read it; nothing was replaced. Give another "
                   "--out, or remove the ACL (setfacl -b) if it is not needed."), err
    assert (out / "s.json").read_bytes() == before and os.getxattr(out / "s.json", ACL) == acl


# -- 2. nothing is chmod-ed or chown-ed by path ----------------------------------------------------------

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_no_file_planner_writes_is_chmod_by_path_and_the_manifest_is_private(tmp_path: Path, monkeypatch) -> None:
    def by_path(*args, **kwargs):
        raise AssertionError(f"changed by path: {args}")

    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    old = os.umask(0o002)
    try:
        assert CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json,md"]).exit_code == 0
        os.chmod(out / "s.md", 0o600)
        monkeypatch.setattr(os, "chmod", by_path)
        monkeypatch.setattr(os, "chown", by_path)
        _scenario(s, "s", micro_batch=2)
        r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json,md"])
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.output
    assert os.stat(out / ".planner-reports.json").st_mode & 0o777 == 0o644  # 0664 by umask 002, less g+w
    assert os.stat(out / "s.md").st_mode & 0o777 == 0o600


# -- 3, 12, 13. standard output: only planner's own bytes taken back; 1<>file restored; EAGAIN waited ---

def _whole_writer_on(path: Path, flags: int, monkeypatch):
    from planner.cli.common import _WholeWriter

    fd = os.open(path, flags)
    out = io.TextIOWrapper(io.BufferedWriter(_WholeWriter(fd)), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", out)
    return fd, out


def test_a_failed_stdout_keeps_lines_others_appended_after_planners(tmp_path: Path, monkeypatch) -> None:
    from planner.cli.common import restore_stdout_file

    log = tmp_path / "shared.log"
    log.write_bytes(b"other 1\n")
    fd, out = _whole_writer_on(log, os.O_WRONLY | os.O_APPEND, monkeypatch)
    out.write("planner line\n")
    out.flush()
    with open(log, "ab") as other:  # another program appends after planner's write
        other.write(b"other 2\n")
    said = restore_stdout_file()
    os.close(fd)
    assert log.read_bytes() == b"other 1\nplanner line\nother 2\n"
    assert said == (" The 13 bytes planner wrote to standard output (from byte 8 of the file) were left in place: "
                    "another program wrote to the file after them, and planner takes back only its own bytes.")


def test_a_failed_stdout_takes_back_only_its_own_bytes_when_others_wrote_before(tmp_path: Path,
                                                                                 monkeypatch) -> None:
    from planner.cli.common import restore_stdout_file

    log = tmp_path / "shared.log"
    log.write_bytes(b"other 1\n")
    fd, out = _whole_writer_on(log, os.O_WRONLY | os.O_APPEND, monkeypatch)
    with open(log, "ab") as other:  # appended after the run started, before planner's write
        other.write(b"other 2\n")
    out.write("planner line\n")
    out.flush()
    said = restore_stdout_file()
    os.close(fd)
    assert said == ""
    assert log.read_bytes() == b"other 1\nother 2\n"


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_read_write_stdout_is_restored_after_a_failed_write(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    original = b"IMPORTANT LINE 1\nIMPORTANT LINE 2\nIMPORTANT LINE 3\n"
    f.write_bytes(original)
    r = _cli(shell="ulimit -f 1; planner estimate --model llama-2-7b --task infer --context 2048 1<>f.txt",
             cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("Error: cannot write the output (File too large): the file-size limit"), r.stderr
    assert f.read_bytes() == original


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_non_blocking_stdout_pipe_is_waited_for(tmp_path: Path) -> None:
    import fcntl
    import time

    whole = _cli("catalog", "gpus", "--json").stdout.encode()
    assert len(whole) > 65536  # more than a pipe holds (pipe(7): 65,536 bytes on Linux)
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    p = subprocess.Popen([sys.executable, "-m", "planner", "catalog", "gpus", "--json"], stdout=w,
                         stderr=subprocess.PIPE, env=env)
    os.close(w)
    time.sleep(3)  # a slow reader: the pipe is full meanwhile
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    err = p.stderr.read().decode()
    assert p.wait() == 0, err
    assert data == whole


# -- 4. a file named like planner's temporary manifest is removed only when planner wrote it -------------

def test_a_file_named_like_a_temporary_manifest_is_kept_unless_planner_wrote_it(tmp_path: Path) -> None:
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"]).exit_code == 0
    notes = out / "..planner-reports.json.0badc0de.tmp"
    notes.write_text("my own notes - not JSON, not a manifest\n")
    os.chmod(notes, 0o644)
    left = out / "..planner-reports.json.0123abcd.tmp"  # a manifest a killed run left: planner's
    shutil.copy(out / ".planner-reports.json", left)
    os.chmod(left, 0o644)
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert notes.read_text() == "my own notes - not JSON, not a manifest\n"
    assert not left.exists()
    text = " ".join(r.output.split())
    assert (f"Kept {notes}: it has the name of planner's temporary manifest but is not one planner wrote (not "
            "this user's, or not a report manifest); check it and remove it yourself.") in text, text
    # "stopped, or unable to remove it": a run that failed on an append-only folder leaves one too (h33a m8)
    assert f"Removed {left}, a temporary file an earlier planner run left (stopped, or unable to remove it)." in text, text


# -- 5. import-skypilot refuses another provider's layout -----------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_lambdas_vms_csv_is_not_imported_as_aws(tmp_path: Path) -> None:
    (tmp_path / "aws").mkdir()
    shutil.copy(SKY / "lambda" / "vms.csv", tmp_path / "aws" / "vms.csv")
    r = _cli("catalog", "import-skypilot", "aws/vms.csv", "--out", "ov", cwd=tmp_path)
    assert r.returncode == 2, r.stdout
    header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"
    assert r.stderr.strip() == (
        f"Error: aws/vms.csv: its header is lambda's vms.csv layout ({header}), but its directory's name says aws; "
        "the rows would be labelled aws with lambda's prices. Import it as lambda (--provider lambda, or from a "
        "folder named lambda), or give aws's own vms.csv. Give a SkyPilot vms.csv "
        "(catalogs/v8/<provider>/vms.csv)."), r.stderr
    assert not (tmp_path / "ov").exists()
    r = _cli("catalog", "import-skypilot", str(SKY / "aws" / "vms.csv"), "--provider", "lambda", "--out", "ov2",
             cwd=tmp_path)
    assert r.returncode == 2
    assert "its header is aws's vms.csv layout" in r.stderr and "but --provider says lambda" in r.stderr, r.stderr


# -- 6. today is the UTC date ------------------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_overlay_imported_east_of_utc_loads_west_of_it(tmp_path: Path) -> None:
    import datetime as dt

    # UTC+14 and UTC-12 are 26 hours apart: their local dates always differ, whatever the time
    r = _cli("catalog", "import-skypilot", str(SKY / "lambda" / "vms.csv"), "--out", "ov", cwd=tmp_path,
             env={"TZ": "Etc/GMT-14"})
    assert r.returncode == 0, r.stderr
    utc = dt.datetime.now(dt.timezone.utc).date().isoformat()
    assert f'as_of: "{utc}"' in (tmp_path / "ov" / "cloud.yaml").read_text() or \
        dt.datetime.now(dt.timezone.utc).date().isoformat() != utc  # midnight UTC passed meanwhile
    r = _cli("catalog", "cloud", "--catalog", "ov", cwd=tmp_path, env={"TZ": "Etc/GMT+12"})
    assert r.returncode == 0, r.stderr


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_date_of_today_in_utc_loads_under_any_time_zone(tmp_path: Path) -> None:
    import datetime as dt

    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    (tmp_path / "ov").mkdir()
    (tmp_path / "ov" / "gpus.yaml").write_text(
        'schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    price_usd: 250\n    price_kind: quote\n'
        f'    source: "REF:X"\n    as_of: {today}\n')
    r = _cli("catalog", "gpus", "--catalog", "ov", cwd=tmp_path, env={"TZ": "Etc/GMT+12"})
    assert r.returncode == 0, r.stderr


# -- 8. the shipped catalog is known by device and inode ----------------------------------------------

def test_an_out_swapped_for_a_link_to_the_catalog_before_the_lock_is_refused(tmp_path: Path,
                                                                             monkeypatch) -> None:
    import planner.core.reportset as rs_mod

    catalog = ROOT / "catalog"
    before = sorted(os.listdir(catalog))
    out = tmp_path / "o"
    real_ensure = rs_mod.ensure_dir

    def ensure_then_swap(d, *rest):  # after the checks, before the lock: --out becomes a link to the catalog
        real_ensure(d, *rest)
        os.rename(out, tmp_path / "o.real")
        os.symlink(catalog, out)
        return d

    monkeypatch.setattr(rs_mod, "ensure_dir", ensure_then_swap)
    s = _scenario(tmp_path / "s.yaml", "s")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err == (f"Error: {out}: is planner's own catalog folder ({catalog}), or a folder inside it, and planner "
                   "does not write into it. Give another --out, a folder outside it, e.g. --out my-catalog."), err
    assert sorted(os.listdir(catalog)) == before
    assert os.path.islink(out)  # the folder the run made is only removed when it is that folder, and empty


def test_a_bind_mount_of_the_catalog_is_refused(tmp_path: Path) -> None:
    catalog = ROOT / "catalog"
    before = sorted(os.listdir(catalog))
    (tmp_path / "bind").mkdir()
    s = _scenario(tmp_path / "s.yaml", "s")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no mount namespaces here (unshare -m)")
    r = subprocess.run(["unshare", "-m", "bash", "-c",
                        f"mount --bind '{catalog}' '{tmp_path / 'bind'}' || exit 77; "
                        f"'{sys.executable}' -m planner plan '{s}' --out '{tmp_path / 'bind'}' --format json"],
                       capture_output=True, text=True)
    if r.returncode == 77:
        pytest.skip("cannot bind-mount here")
    assert r.returncode == 2, r.stdout
    assert r.stderr.strip() == (f"Error: {tmp_path / 'bind'}: is planner's own catalog folder ({catalog}), or a "
                                "folder inside it, and planner does not write into it. Give another --out, a folder "
                                "outside it, e.g. --out my-catalog."), r.stderr
    assert sorted(os.listdir(catalog)) == before


# -- 9. an edit saved during the renames is put back -----------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("swap", [True, False], ids=["renameat2", "no-swap"])
def test_an_edit_saved_between_the_check_and_the_rename_is_put_back(tmp_path: Path, monkeypatch, swap: bool) -> None:
    import planner.core.reportset as rs_mod
    from planner.core import renames

    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json,md"]).exit_code == 0
    json_before = (out / "s.json").read_bytes()
    real_link, real_swap = os.link, renames.exchange

    edited: list = []

    def edit(path):  # the user saves an edit after planner's last hash check (once)
        if Path(path).name == "s.md" and not edited:
            edited.append(path)
            with open(path, "a") as fh:
                fh.write("MY NOTES (user edit)\n")

    def edit_then_link(src, dst, *a, **k):
        edit(src)
        return real_link(src, dst, *a, **k)

    def edit_then_swap(a, b):
        edit(b)
        return real_swap(a, b)

    if swap:
        monkeypatch.setattr(renames, "exchange", edit_then_swap)
    else:  # a system that cannot swap: the kept link is hashed again after the renames
        monkeypatch.setattr(renames, "exchange", lambda a, b: False)
        monkeypatch.setattr(renames, "rename_noreplace", lambda a, b: False)
        monkeypatch.setattr(rs_mod.os, "link", edit_then_link)
    _scenario(s, "s", micro_batch=2)
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json,md"])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err == (f"Error: {out / 's.md'}: was changed while planner was replacing it (an edit saved meanwhile); "
                   "it was put back with that change, and the rest of the previous set as it was: nothing was "
                   "replaced. Save your edit under another name (or move the file away) and run again."), err
    assert (out / "s.md").read_text().endswith("MY NOTES (user edit)\n")
    assert (out / "s.json").read_bytes() == json_before
    assert not [p for p in os.listdir(out) if p.startswith(".planner-staging-")]


# -- 14. a run killed during the renames leaves nothing a later run cannot clean ------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_old_links_of_a_run_killed_during_commit_are_cleaned_by_the_next_run(tmp_path: Path) -> None:
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json,md"]).exit_code == 0
    _scenario(s, "s", micro_batch=2)
    killed = (
        "import os, sys\n"
        "real = os.replace\n"
        "def replace(a, b, *x, **k):\n"
        "    if '.planner-staging-' in str(a) and '.planner-staging-' not in str(b):\n"
        "        os._exit(9)  # killed during the renames (SIGKILL)\n"
        "    return real(a, b, *x, **k)\n"
        "os.replace = replace\n"
        "from planner.core import renames\n"
        "real_swap = renames.exchange\n"
        "def swap(a, b):\n"
        "    real_swap(a, b)  # the first report swapped into place, then killed\n"
        "    os._exit(9)\n"
        "renames.exchange = swap\n"
        "from planner.cli.main import main\n"
        f"main(['plan', {str(s)!r}, '--out', {str(out)!r}, '--format', 'json,md'])\n")
    p = subprocess.run([sys.executable, "-c", killed], capture_output=True, text=True)
    assert p.returncode == 9, p.stderr
    staged = [p for p in os.listdir(out) if p.startswith(".planner-staging-")]
    # the previous report kept in the staging folder: as N.old (plain renames) or under its staged name (swaps)
    assert staged and any(n.endswith(".old") or n == "s.json" for n in os.listdir(out / staged[0]))
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json,md"])
    assert r.exit_code == 0, r.output
    assert "Left " not in r.output, r.output
    assert not [p for p in os.listdir(out) if p.startswith(".planner-staging-")]


# -- 15. calibrate refuses the package and the catalog before measuring -----------------------------------

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("dest, what", [("planner/calibration.yaml", "package"), ("planner/__init__.py", "package"),
                                        ("catalog/calibration.yaml", "catalog")])
def test_calibrate_refuses_the_package_and_the_catalog_before_measuring(dest: str, what: str) -> None:
    before = _sha(ROOT / "planner" / "__init__.py")
    r = _cli("calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16", "--micro-batch",
             "2", "--seq-len", "512", "--out", dest, cwd=ROOT)
    assert r.returncode == 2
    folder, name = dest.split("/")
    # the file is named and a file hinted (--out takes a file here): its name in the current directory, ROOT,
    # which lies outside the package and the catalog (planner.core.protected._accepted_example)
    assert r.stderr.strip() == (f"Error: {dest}: is inside planner's own {what} folder ({ROOT / folder}), and planner "
                                f"does not write into it. Give another --out, a file outside it, e.g. --out {name}."), \
        r.stderr
    assert "PyTorch" not in r.stderr
    assert _sha(ROOT / "planner" / "__init__.py") == before
    assert not (ROOT / "planner" / "calibration.yaml").exists() and not (ROOT / "catalog" / "calibration.yaml").exists()


# -- 7. umask 002 with user private groups: the shipped example regenerates on a fresh checkout ----------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_group_writable_manifest_of_the_users_private_group_is_trusted(tmp_path: Path) -> None:
    from planner.core.reportset import private_group

    out = tmp_path / "examples"
    shutil.copytree(ROOT / "reports" / "examples", out)
    manifest = out / ".planner-reports.json"
    os.chmod(manifest, 0o664)  # what git checks out under umask 002 (Debian, Ubuntu, Fedora)
    if not private_group(os.getuid(), os.stat(manifest).st_gid):
        pytest.skip("this user's group is not a user private group")
    r = _cli("plan", str(ROOT / "scenarios" / "lab-workstation-mix.yaml"), "--out", str(out), "--format", "xlsx",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert os.stat(manifest).st_mode & 0o777 == 0o644  # planner writes it back without g+w


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_group_writable_manifest_of_a_shared_group_is_not_trusted(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file another group needs root here")
    out = tmp_path / "examples"
    shutil.copytree(ROOT / "reports" / "examples", out)
    manifest = out / ".planner-reports.json"
    os.chown(manifest, -1, 65533)  # a group that is not the user's own (no group entry at all)
    os.chmod(manifest, 0o664)
    r = _cli("plan", str(ROOT / "scenarios" / "lab-workstation-mix.yaml"), "--out", str(out), "--format", "xlsx",
             cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith(f"Error: {manifest}: can be written by its group or by others, so planner does not "
                               "trust its list"), r.stderr


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_group_writable_manifest_with_an_acl_is_not_trusted(tmp_path: Path) -> None:
    from planner.core.reportset import private_group

    out = tmp_path / "examples"
    shutil.copytree(ROOT / "reports" / "examples", out)
    manifest = out / ".planner-reports.json"
    if not private_group(os.getuid(), os.stat(manifest).st_gid):
        pytest.skip("this user's group is not a user private group")
    acl = _acl(os.getuid() + 1001)[:-16] + struct.pack("<HHI", 0x10, 6, 0xFFFFFFFF) + struct.pack("<HHI", 0x20, 0,
                                                                                                   0xFFFFFFFF)
    try:
        os.setxattr(manifest, ACL, acl)  # named user: r; mask rw: group bits show rw
    except OSError as exc:
        pytest.skip(f"no POSIX ACLs here ({exc})")
    assert os.stat(manifest).st_mode & 0o020
    r = _cli("plan", str(ROOT / "scenarios" / "lab-workstation-mix.yaml"), "--out", str(out), "--format", "xlsx",
             cwd=tmp_path)
    assert r.returncode == 2
    assert "can be written by its group or by others" in r.stderr, r.stderr


# -- 10. the importer's summary counts rows by reason, not by line --------------------------------------

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_the_importers_summary_counts_rows_by_reason_without_their_line(tmp_path: Path) -> None:
    head = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch"
    rows = [f"g5.x{i},A10G,1.0,4.0,16.0,,$1.29,0.3,us-east-1,use1-az1,x86_64" for i in range(2000)]
    rows.append("g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.3,us-east-1,use1-az1,x86_64")
    (tmp_path / "vms.csv").write_text("\n".join([head, *rows]) + "\n")
    r = _cli("catalog", "import-skypilot", "vms.csv", "--provider", "aws", "--out", "ov", cwd=tmp_path,
             env={"COLUMNS": "400"})
    assert r.returncode == 0, r.stderr
    # 2,000 rows (file lines 2 to 2001) with one reason: one line, the first rows in the file's order
    assert r.stderr.splitlines() == [
        "vms.csv: 1 instance(s)",
        "  left out 2000: column Price: '$1.29' is not a number (line 2: g5.x0, line 3: g5.x1, line 4: g5.x2, ...)"]


# -- 11. the importer stops once its overlay is sure to be over the loader's cap ---------------------------

def test_the_importer_stops_once_the_overlay_is_sure_to_be_over_the_cap(tmp_path: Path, monkeypatch) -> None:
    import planner.core.infile as infile
    from planner.catalog.skypilot import entry_bytes, import_file

    head = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch"
    rows = [f"g5.x{i},A10G,1.0,4.0,16.0,,1.29,0.3,us-east-1,use1-az1,x86_64" for i in range(200)]
    csv = tmp_path / "vms.csv"
    csv.write_text("\n".join([head, *rows]) + "\n")
    whole = import_file(csv, provider="aws", source="S", as_of="2026-01")
    assert len(whole.rows) == 200 and whole.entry_bytes == sum(entry_bytes(r, source="S", as_of="2026-01")
                                                                for r in whole.rows)
    one = whole.entry_bytes // 200  # every entry here has the same size but for its id's digits
    cap = one * 50  # the 51st or so row passes it
    monkeypatch.setattr(infile, "MAX_FILE_BYTES", cap)  # the loader's cap, as the importer reads it
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(csv), "--provider", "aws", "--out",
                                  str(tmp_path / "ov"), "--source", "S", "--as-of", "2026-01"])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err.startswith(f"Error: {csv}: the overlay would be over {cap:,} bytes ("), err
    # counted while reading (least_entry_bytes: each entry at least about `one` less its region's 9 characters and
    # a few digits), so the cap is passed by the 55th instance type at the latest
    assert "the most the catalog loader reads in one file) already with the 5" in err, err
    assert "a SkyPilot vms.csv gives a few hundred GPU instance types, so check that this is one, or split it" in err
    assert not (tmp_path / "ov").exists()
