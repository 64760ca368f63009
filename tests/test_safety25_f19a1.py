"""Issue 28, hostile pass 19X: findings of report h19a fixed on branch f19a1.

N1. A bind mount of any folder inside the package (``planner/core``) or of the shipped catalog is refused as
    ``--out`` (and a new folder under it), API ``out=``, ``import-skypilot --out``, ``calibrate --out`` and as
    ``TMPDIR``: every folder of the package and the catalog is known by device and inode
    (planner.core.protected._protected_ids), not only their top folders. Checked with a real bind mount in a
    private mount namespace (``unshare -m``; skipped where that cannot be made), and without one through a link
    to a folder inside a stand-in package (protected_by_id does not resolve links, so only the inode matches).
M4. The installed distribution's metadata folder (``planner-*.dist-info``) is refused as ``--out`` as part of
    the package.
M2. With /tmp and /var/tmp unable to take files and the current folder the ``--out`` folder, the line has its verb
    and hints what can help (TMPDIR to a folder with room, or another current folder), not "unset it".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core import protected
from planner.core.errors import DestinationError

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "planner"
QLORA = ROOT / "scenarios" / "qlora-7b-12gb.yaml"

VMS = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
       "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a\n"
       "g6.xlarge,L4,1,4,16,,0.8048,0.3,us-east-1,us-east-1a\n")


def _package_refusal(shown: str, hint: str = "reports", api: bool = False) -> str:
    # planner.core.protected._refusal, for a folder option, with the package as the protected folder; the API's
    # str() names out= (DestinationError, h19a M1), the CLI line --out
    give = f"out=, a folder outside it, e.g. out='{hint}'" if api else f"--out, a folder outside it, e.g. --out {hint}"
    return (f"{shown}: is planner's own package folder ({PACKAGE}), or a folder inside it, and planner does not "
            f"write into it. Give another {give}.")


# -- N1: a real bind mount, in a private mount namespace --------------------------------------------------------

_SCRIPT = r'''
import json, os, sys, tempfile
from click.testing import CliRunner
import planner
from planner.cli.main import main
from planner.core.errors import DestinationError

bc, scenario, vms, ok_out = sys.argv[1:5]
res = {}
def cli(key, args, env=None):
    r = CliRunner().invoke(main, args, env=env)
    res[key] = [r.exit_code, r.stderr]
cli("plan", ["plan", scenario, "--out", bc, "--format", "json"])
cli("newsub", ["plan", scenario, "--out", bc + "/newsub", "--format", "json"])
cli("import", ["catalog", "import-skypilot", "--provider", "aws", vms, "--out", bc])
cli("calibrate", ["calibrate", "--model", "llama-2-7b", "--task", "infer", "--context", "4096",
                  "--out", bc + "/cal.yaml"])
tempfile.tempdir = None
cli("tmpdir", ["plan", scenario, "--out", ok_out, "--format", "xlsx"], env={"TMPDIR": bc})
try:
    planner.plan(scenario, out=bc, format="json")
    res["api"] = None
except DestinationError as exc:
    res["api"] = str(exc)
print(json.dumps(res))
'''


def _in_private_namespace(tmp_path: Path, source: Path, bc: Path) -> dict:
    """Run _SCRIPT with ``source`` bind-mounted on ``bc`` in a private mount namespace (gone when it ends);
    skipped where that namespace or the mount cannot be made (not root, no unshare)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("needs root and unshare to bind-mount in a private mount namespace")
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            f"mount --bind {source} {bc} && umount {bc}"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no bind mount here: {probe.stderr.decode(errors='replace').strip()}")
    vms = tmp_path / "vms.csv"
    vms.write_text(VMS)
    ok_out = tmp_path / "ok"
    script = tmp_path / "script.py"
    script.write_text(_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TMPDIR", None)
    cmd = 'mount --bind "$1" "$2" && exec "$3" "$4" "$2" "$5" "$6" "$7"'
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", cmd, "sh", str(source), str(bc),
                        sys.executable, str(script), str(QLORA), str(vms), str(ok_out)],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_bind_mount_of_a_package_subfolder_is_refused_everywhere(tmp_path: Path) -> None:
    bc = tmp_path / "bc"
    bc.mkdir()
    core = PACKAGE / "core"
    before = _listing(core)
    res = _in_private_namespace(tmp_path, core, bc)
    assert _listing(core) == before  # nothing written into the package
    assert _listing(bc) == []  # the mount is gone with its namespace
    assert res["plan"] == [2, "Error: " + _package_refusal(str(bc)) + "\n"]
    assert res["newsub"] == [2, "Error: " + _package_refusal(f"{bc}/newsub") + "\n"]
    assert res["import"] == [2, "Error: " + _package_refusal(str(bc)) + "\n"]
    assert res["calibrate"] == [2, f"Error: {bc}/cal.yaml: is inside planner's own package folder ({PACKAGE}), and "
                                   "planner does not write into it. Give another --out, a file outside it, e.g. "
                                   "--out cal.yaml.\n"]
    assert res["tmpdir"] == [2, f"Error: the temporary folder {bc} (TMPDIR) is inside planner's own package folder "
                                f"({PACKAGE}), where planner writes nothing, not even temporary files. Set TMPDIR to "
                                "another folder, e.g. TMPDIR=/tmp.\n"]
    assert not (tmp_path / "ok" / "qlora-7b-12gb.xlsx").exists()
    assert res["api"] == _package_refusal(str(bc), api=True)


# -- N1 without a mount: a folder inside a stand-in package, known by its inode alone ------------------------------

def _stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in package (pkg/, with pkg/core and pkg/catalog_data/aws, as a regular install ships the
    catalog) that planner.core.protected takes for its own."""
    pkg = tmp_path / "pkg"
    (pkg / "core").mkdir(parents=True)
    (pkg / "catalog_data" / "aws").mkdir(parents=True)
    monkeypatch.setattr(protected, "_protected", lambda: [pkg])
    return pkg


@pytest.mark.parametrize("inner", ["core", "catalog_data", "catalog_data/aws"])
def test_every_folder_of_the_package_is_known_by_its_inode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           inner: str) -> None:
    pkg = _stand_in(tmp_path, monkeypatch)
    alias = tmp_path / "elsewhere" / "alias"
    alias.parent.mkdir()
    alias.symlink_to(pkg / inner)  # its path leads nowhere near pkg: only the inode tells (as a bind mount's)
    assert protected.protected_by_id(alias) == pkg
    assert protected.protected_by_id(alias / "newsub" / "deeper") == pkg  # a folder to be made under it
    assert protected.protected_by_id(tmp_path / "elsewhere") is None
    assert protected.protected_by_id(tmp_path) is None  # the folder above the package is not inside it


def test_the_inode_set_holds_every_folder_and_no_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = _stand_in(tmp_path, monkeypatch)
    outside = tmp_path / "outside"
    outside.mkdir()
    (pkg / "link").symlink_to(outside)  # a link inside the package does not make its target protected
    expected = {(os.stat(p).st_dev, os.stat(p).st_ino)
                for p in (pkg, pkg / "core", pkg / "catalog_data", pkg / "catalog_data" / "aws")}
    ids = protected._protected_ids()
    assert set(ids) == expected and set(ids.values()) == {pkg}
    assert protected.protected_by_id(outside, ids) is None


def test_refuse_protected_walks_the_descriptor_into_an_inner_folder(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # the locked descriptor of a folder inside the package: refused by its own inode (as a bind mount's, whose '..'
    # leaves the package)
    pkg = _stand_in(tmp_path, monkeypatch)
    fd = os.open(pkg / "catalog_data" / "aws", os.O_RDONLY | os.O_DIRECTORY)
    monkeypatch.chdir(tmp_path)
    raised = None
    try:
        protected.refuse_protected(tmp_path / "out", fd=fd)
    except DestinationError as exc:
        raised = str(exc)
    finally:
        os.close(fd)
    # str() is the API's wording (out=); the CLI prints cli_line() (--out): f19a2 (h19a M1)
    assert raised == (f"{tmp_path / 'out'}: is planner's own package folder ({pkg}), or a folder inside it, and "
                      "planner does not write into it. Give another out=, a folder outside it, e.g. out='reports'.")


# -- M4: the installed distribution's metadata folder ------------------------------------------------------------

def test_the_metadata_folder_is_the_distributions(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    try:
        dist = metadata.distribution("planner")
    except metadata.PackageNotFoundError:
        assert protected._metadata_folder() is None
        return
    # the folder that holds the distribution's METADATA file, as its files list names it
    meta = next((f for f in dist.files or [] if f.name == "METADATA"), None)
    if meta is None:
        pytest.skip("this install lists no METADATA file")
    expected = Path(os.path.realpath(dist.locate_file(meta))).parent
    assert protected._metadata_folder() == expected
    assert expected in protected.protected_folders()
    raised = None
    try:
        protected.refuse_protected(expected / "newsub")  # refused before anything is made: nothing written there
    except DestinationError as exc:
        raised = str(exc)
    assert raised is not None and raised.startswith(f"{expected / 'newsub'}: is planner's own package metadata "
                                                    f"folder ({expected}), or a folder inside it"), raised


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_out_into_the_metadata_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    meta = tmp_path / "site-packages" / "planner-0.1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Name: planner\n")
    monkeypatch.setattr(protected, "_metadata_folder", lambda: meta)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", str(meta), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {meta}: is planner's own package metadata folder ({meta}), or a folder inside it, "
                        "and planner does not write into it. Give another --out, a folder outside it, e.g. --out "
                        "reports.\n")
    assert _listing(meta) == ["METADATA"]
    link = tmp_path / "meta-link"
    link.symlink_to(meta)
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", str(link / "sub"), "--format", "json"])
    assert r.exit_code == 2 and "package metadata folder" in r.stderr, r.output
    assert _listing(meta) == ["METADATA"]


# -- M2: the current folder as the temporary folder, and it is --out -----------------------------------------------

def test_the_current_folder_as_temporary_folder_and_out_is_said_with_a_hint_that_helps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.core import tempdir

    out = tmp_path / "out"
    out.mkdir()
    for var in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(tempdir, "_takes_files", lambda folder: False)  # /tmp, /var/tmp, /usr/tmp: full
    monkeypatch.chdir(out)
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", ".", "--format", "xlsx"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: the temporary folder would be the current folder {out}, as /tmp and /var/tmp cannot "
                        "take files (full or read-only), and it is the --out folder .: temporary files (openpyxl's, "
                        "the importer's check copy) would be made there, beside the reports. Set TMPDIR to a private "
                        "folder of your own elsewhere with room (one made with mkdir -m 700), or run from another "
                        "folder.\n")
    assert "unset it" not in r.stderr
    assert _listing(out) == []
