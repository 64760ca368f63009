"""Issue 28, hostile pass 25: output folders that change what Python imports, and hints that name the cause.

1. (h25a N1) An ``--out`` / ``out=`` that is, or lies inside, a ``site-packages`` or ``dist-packages`` folder, or
   that would make a plain ``planner`` folder (or one named like a module only an editable install's finder finds)
   directly in a folder of ``sys.path`` or the current folder, is refused before anything is made: such a folder
   is a namespace package that hides planner from every later run. The default ``reports``, and folders named
   like modules Python's path finder finds (``json``), are still accepted.
2. (h25a m5) ``plan`` without ``--out`` where ``reports`` cannot be made or written (a read-only file system, an
   immutable folder) says that ``reports`` is --out's default, as for /proc and /sys.
3. (h25a m1) An immutable (``chattr +i``) manifest or ``--out`` folder gets the ``lsattr`` hint an immutable
   report gets, not "check that the directory is writable and the disk has room" / "Permission denied".
"""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import planner
from planner.cli.main import main
from planner.core.errors import DestinationError, OutputError
from planner.core.importpath import refuse_import_shadow

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / "qlora-7b-12gb.yaml"


def _cli(args: list[str], cwd: Path, pythonpath: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    return subprocess.run([sys.executable, "-c", "from planner.cli.main import main; main()", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_out_named_planner_in_site_packages_is_refused_by_the_command_line(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "site-packages"
    site.mkdir(parents=True)
    target = site / "planner"
    done = _cli(["plan", str(SCENARIO), "--out", str(target), "--format", "md"], tmp_path,
                f"{REPO}{os.pathsep}{site}")
    assert done.returncode == 2, done.stdout + done.stderr
    assert not target.exists()  # nothing made: a plain folder there would hide planner from later runs
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"Error: {target}: is, or is inside, {site}, a folder Python imports installed "
                               "packages from"), lines[0]
    assert lines[0].endswith("Give another --out, a folder outside it, e.g. --out reports."), lines[0]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_api_refuses_a_site_packages_out_naming_the_keyword(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "dist-packages"
    site.mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DestinationError) as caught:
        planner.plan(str(SCENARIO), out=str(site / "planner"), format="md")
    assert not (site / "planner").exists()
    message = str(caught.value)
    assert "a folder Python imports installed packages from" in message, message
    assert message.endswith("Give another out=, a folder outside it, e.g. out='reports'."), message


def test_a_planner_folder_on_sys_path_is_refused_and_a_plain_name_is_not(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    entry = tmp_path / "entry"
    entry.mkdir()
    monkeypatch.syspath_prepend(str(entry))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DestinationError) as caught:
        refuse_import_shadow(entry / "planner" / "sub")
    message = str(caught.value)
    assert f"would make or write into the folder {entry / 'planner'}, in {entry}, a folder on Python's module " \
           "search path (sys.path)" in message, message
    for name in ("reports", "json", "my-reports"):  # json: the path finder finds the standard library's first
        refuse_import_shadow(entry / name)  # no error
    (entry / "mine").mkdir()
    (entry / "mine" / "__init__.py").write_text("")
    refuse_import_shadow(entry / "mine" / "reports")  # a regular package already: nothing new to import


def test_a_planner_folder_in_the_current_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a script run here has this folder first on its sys.path
    with pytest.raises(DestinationError) as caught:
        refuse_import_shadow(Path("planner"))
    message = str(caught.value)
    assert message.startswith(f"planner: would make or write into the folder {tmp_path / 'planner'}"), message
    refuse_import_shadow(Path("reports"))  # the default is accepted


class _LateFinder:
    """A meta-path finder placed after Python's path finder, as an editable install's is."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None):
        if name != "f25a_editable_only":
            return None
        return importlib.machinery.ModuleSpec(name, None, origin="/somewhere/f25a_editable_only/__init__.py")


def test_a_module_only_an_editable_finder_finds_is_protected_too(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    entry = tmp_path / "entry"
    entry.mkdir()
    monkeypatch.syspath_prepend(str(entry))
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, _LateFinder()])
    with pytest.raises(DestinationError) as caught:
        refuse_import_shadow(entry / "f25a_editable_only")
    assert "hides the installed 'f25a_editable_only' package from later imports" in str(caught.value)
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, _LateFinder)])
    refuse_import_shadow(entry / "f25a_editable_only")  # found by nothing: a folder there hides nothing


def test_a_calibration_file_in_site_packages_is_named(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    with pytest.raises(DestinationError) as caught:
        refuse_import_shadow(site, file_name="calibration.yaml")
    message = str(caught.value)
    assert message.startswith(f"{site / 'calibration.yaml'}: its folder is, or is inside, {site}"), message
    assert message.endswith("a file outside it, e.g. out='reports/calibration.yaml'."), message


class _ReadOnly:
    """A statvfs result whose flags say: mounted read-only."""

    f_flag = os.ST_RDONLY


@pytest.mark.parametrize("made, what", [(False, "create"), (True, "write into")])
def test_the_default_out_on_a_read_only_file_system_is_said_to_be_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made: bool, what: str) -> None:
    if made:
        (tmp_path / "reports").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "statvfs", lambda path: _ReadOnly())
    done = CliRunner().invoke(main, ["plan", str(SCENARIO)])
    assert done.exit_code == 2, done.output
    expected = (f"Error: reports: cannot {what} the output directory (Read-only file system). That is --out's "
                f"default, reports in the current folder ({tmp_path}): cd to a folder you can write, or give --out "
                "a folder you can write.\n")
    assert done.output == expected


def _chattr(flag: str, path: Path) -> bool:
    """Set or clear an attribute; False where this system or user cannot (the test is then skipped)."""
    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def test_an_immutable_out_folder_gets_the_lsattr_hint(tmp_path: Path) -> None:
    from planner.core.outpath import refuse_unwritable_out

    out = tmp_path / "ci"
    out.mkdir()
    if not _chattr("+i", out):
        pytest.skip("chattr +i is not permitted here (root and a file system with the attribute needed)")
    try:
        with pytest.raises(DestinationError) as caught:
            refuse_unwritable_out(out)
    finally:
        _chattr("-i", out)
    assert str(caught.value) == (f"{out}: cannot write into the output directory (Operation not permitted). Check "
                                 "that folder (an immutable attribute: lsattr -d), or give out= a directory that "
                                 "can be written.")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_immutable_manifest_gets_the_lsattr_hint(tmp_path: Path) -> None:
    out = tmp_path / "ci"
    planner.plan(str(SCENARIO), out=str(out), format=["json", "md"])
    manifest = out / ".planner-reports.json"
    if not _chattr("+i", manifest):
        pytest.skip("chattr +i is not permitted here (root and a file system with the attribute needed)")
    try:
        with pytest.raises(OutputError) as caught:
            planner.plan(str(SCENARIO), out=str(out), format="json")
    finally:
        _chattr("-i", manifest)
    message = str(caught.value)
    assert message.startswith(f"{manifest}: cannot write (Operation not permitted). Check that file and its "
                              "directory (an immutable or append-only attribute: lsattr), and run again."), message
