"""Issue 28, hostile pass 25: findings N2, N3, m2 and m3 of report h25a (file names under another file-system
encoding).

- N2, N3: a manifest records the file-system encoding its names were written under (nothing under UTF-8, the
  default; ``"encoding"`` otherwise: planner.core.manifest.recorded_encoding). A run whose file-system encoding
  differs, into an --out whose manifest lists a name that is not ASCII, is refused up front in one line naming the
  manifest, a name, both encodings and the hint (LC_ALL=C.UTF-8, PYTHONUTF8=1) — a DestinationError (an
  InputError) naming out= in the API, never a bare UnicodeEncodeError, a second set written beside the first or an
  entry dropped from the manifest (planner.core.manifest.refuse_other_encoding). ASCII names are the same bytes in
  every encoding and are never refused; an "encoding" that is no codec, or that cannot encode a listed name, is
  not a manifest planner wrote.
- N2 (a lookalike): under a non-UTF-8 file-system encoding, a report is refused beside a file planner did
  not write whose name's bytes are UTF-8 for the same name (planner.core.destinations._foreign_case_clash).
- m2: a staging folder's mark records the encoding likewise, and the names it lists are matched by the bytes the
  stopped run wrote, so a dead staging folder gets one verdict under every locale
  (planner.core.reportset._named_here).
- m3: an --out refused for control characters gets a hint free of every one of them
  (planner.core.outpath.without_unsafe); where the file-system encoding is not UTF-8 and the path's bytes are
  UTF-8 of a name nothing refuses, the hint is a UTF-8 locale (planner.core.outpath.utf8_reading).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sky_helpers import run_cli

ROOT = Path(__file__).parents[1]
SCENARIO = str(ROOT / "scenarios" / "qlora-7b-12gb.yaml")
MANIFEST = ".planner-reports.json"


def _scenario(tmp_path: Path, name: str) -> Path:
    """The shipped scenario under another ``name``."""
    text = Path(SCENARIO).read_text(encoding="utf-8")
    lines = [f"name: {name}" if line.startswith("name:") else line for line in text.splitlines()]
    path = tmp_path / "s.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ascii_run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """``code`` in a fresh Python whose file-system encoding is ASCII (``LC_ALL=C PYTHONUTF8=0``: PEP 538 and
    540 do not apply where LC_ALL is set and UTF-8 mode is off)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONUTF8", "PYTHONIO"))}
    env.update(LC_ALL="C", PYTHONUTF8="0", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, timeout=120)


# -- N2, N3: a manifest whose names another encoding wrote -----------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_utf8_run_records_no_encoding_and_refuses_a_latin1_manifest(tmp_path):
    from planner import plan
    from planner.core.errors import DestinationError, InputError

    out = tmp_path / "o"
    plan(str(_scenario(tmp_path, "café")), out=str(out), format="md")
    doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert "encoding" not in doc and list(doc["files"]) == ["café.md"]  # UTF-8: the default, not recorded
    # the same manifest as a Latin-1 run would have written it: its 'café.md' is b'caf\xe9.md' on disk
    doc["encoding"] = "iso8859-1"
    (out / MANIFEST).write_text(json.dumps(doc), encoding="utf-8")
    before = sorted(os.listdir(out))
    with pytest.raises(DestinationError) as info:
        plan(SCENARIO, out=str(out), format="md")  # an ASCII set: the manifest's names are the problem
    assert isinstance(info.value, InputError)
    assert str(info.value) == (
        f"{out}/{MANIFEST}: lists reports named under the file-system encoding iso8859-1 ('caf\\xe9.md'), and this "
        "run's file-system encoding is utf-8, which would name those files with other bytes, so planner would not "
        "find the files it wrote there. Run again under a locale whose encoding is iso8859-1, or give another out=.")
    assert sorted(os.listdir(out)) == before  # nothing written, nothing dropped


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_recorded_encoding_with_ascii_names_only_is_taken(tmp_path):
    from planner import plan

    out = tmp_path / "o"
    plan(SCENARIO, out=str(out), format="md")
    doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    doc["encoding"] = "latin-1"  # ASCII names are the same bytes in every encoding
    (out / MANIFEST).write_text(json.dumps(doc), encoding="utf-8")
    plan(SCENARIO, out=str(out), format="md,json")
    doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert "encoding" not in doc  # rewritten by a UTF-8 run
    assert sorted(doc["files"]) == ["qlora-7b-12gb.json", "qlora-7b-12gb.md"]


@pytest.mark.parametrize("recorded", ["no-such-codec", 7, "ascii"])
def test_an_encoding_that_is_no_codec_or_cannot_name_a_listed_file_is_not_planners(tmp_path, recorded):
    from planner import plan
    from planner.core.errors import DestinationError

    out = tmp_path / "o"
    plan(str(_scenario(tmp_path, "café")), out=str(out), format="md")
    doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    doc["encoding"] = recorded  # 'ascii' cannot encode 'café.md': no planner run wrote that
    (out / MANIFEST).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DestinationError) as info:
        plan(SCENARIO, out=str(out), format="md")
    assert str(info.value).startswith(f"{out}/{MANIFEST}: is not a report manifest planner wrote")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_ascii_locale_refuses_a_utf8_manifest_in_one_line_cli_and_api(tmp_path):
    from planner import plan

    out = tmp_path / "o"
    plan(str(_scenario(tmp_path, "计划-é")), out=str(out), format="md")
    before = (out / MANIFEST).read_bytes()
    cli = _ascii_run("import sys; from planner.cli.main import main; sys.argv = ['planner', 'plan', "
                     f"{SCENARIO!r}, '--out', 'o', '--format', 'md']; main()", tmp_path)
    line = (f"Error: o/{MANIFEST}: lists reports named under the file-system encoding utf-8 ('\\u8ba1\\u5212-\\xe9.md'), "
            "and this run's file-system encoding is ascii, which would name those files with other bytes, so planner "
            "would not find the files it wrote there. Run again under a UTF-8 locale (LC_ALL=C.UTF-8) or in "
            "Python's UTF-8 mode (PYTHONUTF8=1), or give another --out.")
    assert cli.returncode == 2, cli.stderr
    assert cli.stderr.decode("ascii").strip() == line  # not "the output's encoding (ascii) cannot write"
    api = _ascii_run("from planner import plan\ntry:\n"
                     f"    plan({SCENARIO!r}, out='o', format='md')\n"
                     "except Exception as e:\n    print(type(e).__name__, e)", tmp_path)
    assert api.returncode == 0, api.stderr
    said = api.stdout.decode("ascii").strip()
    assert said.startswith("DestinationError ") and "UnicodeEncodeError" not in said
    assert said == "DestinationError " + line[len("Error: "):].replace("--out", "out=")
    assert sorted(os.listdir(out)) == [MANIFEST, "计划-é.md"] and (out / MANIFEST).read_bytes() == before


# -- m2: a dead staging folder, one verdict under every encoding ----------------------------------------------------

def _dead_staging(out: Path, listed: str, on_disk: bytes, header_extra: str = "") -> Path:
    """A staging folder as a stopped run leaves it: its mark lists ``listed`` and its temporary's name (recorded
    before it was made: planner.core.stagemark); that temporary is named ``on_disk``."""
    folder = out / ".planner-staging-abcd1234"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder, 0o700)
    tmp = json.dumps({"tmp": "." + listed + ".5e74b24d.tmp"})
    (folder / ".planner-staging").write_text("planner staging folder 1\n" + header_extra + json.dumps(listed) + "\n"
                                             + tmp + "\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(folder), b"." + on_disk + b".5e74b24d.tmp"), "wb") as fh:
        fh.write(b"{}")
    return folder


def test_a_latin1_runs_staging_folder_is_removed_by_a_utf8_run(tmp_path):
    from planner.core.reportset import ReportSet

    out = tmp_path / "o"
    folder = _dead_staging(out, "café.json", "café.json".encode("latin-1"), '{"encoding": "iso8859-1"}\n')
    with ReportSet(out, set_name="plan x") as rs:
        notes = list(rs.notes)
    assert not folder.exists()
    # the one file was the recorded temporary: said as that, and no set can be mixed by a run that moved nothing
    # (h33a m3)
    assert notes == [f"Removed {folder}, which a stopped planner run left, with 1 unfinished temporary file(s)."]
    # the same mark without its encoding line reads the name as UTF-8: the Latin-1 bytes are then not its file
    folder = _dead_staging(out, "café.json", "café.json".encode("latin-1"))
    with ReportSet(out, set_name="plan x") as rs:
        notes = list(rs.notes)
    assert folder.exists() and notes[0].startswith(f"Left {folder}: it holds .caf\\xe9.json.5e74b24d.tmp, which")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_utf8_runs_staging_folder_is_removed_under_an_ascii_locale(tmp_path):
    out = tmp_path / "o"
    folder = _dead_staging(out, "计划-é.json", "计划-é.json".encode("utf-8"))
    run = _ascii_run("from planner.core.reportset import ReportSet\n"
                     "with ReportSet('o', set_name='plan x') as rs:\n    pass\nprint(ascii(list(rs.notes)))", tmp_path)
    assert run.returncode == 0, run.stderr
    assert not folder.exists()  # as a UTF-8 run removes it (h25a m2: it was "Left" under Latin-1)
    assert run.stdout.decode("ascii").startswith("['Removed o/.planner-staging-abcd1234, which a stopped planner run")


def test_a_non_utf8_run_records_its_encoding_in_the_mark_and_the_manifest(monkeypatch):
    from planner.core import manifest

    assert manifest.recorded_encoding() == {}  # this process: UTF-8
    monkeypatch.setattr(manifest.sys, "getfilesystemencoding", lambda: "ISO-8859-1")
    assert manifest.recorded_encoding() == {"encoding": "iso8859-1"}


# -- m3: the hint of a refused --out ---------------------------------------------------------------------------------

def test_the_hint_drops_every_control_character(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, text = run_cli("plan", SCENARIO, "--out", "a\u0088b\u0092c", "--format", "md")
    assert code == 2
    assert text.strip() == ("Error: --out: 'a\\x88b\\x92c' holds U+0088, which no listing shows, so the folder's name "
                            "would look like another. Write --out 'abc' without it (and the others of its kind).")
    code, text = run_cli("plan", SCENARIO, "--out", "abc", "--format", "md")  # the hint's path is taken
    assert code == 0, text
    assert [p.name for p in tmp_path.iterdir()] == ["abc"]


def test_utf8_bytes_read_in_latin1_get_the_locale_hint(monkeypatch):
    from planner.core import manifest, outpath

    latin1 = "计划".encode("utf-8").decode("latin-1")  # 'è®¡å\x88\x92', as a Latin-1 locale reads those bytes
    assert outpath.utf8_reading(latin1) is None  # this process is UTF-8: its text is what it reads
    monkeypatch.setattr(manifest.sys, "getfilesystemencoding", lambda: "iso8859-1")
    monkeypatch.setattr(outpath.os, "fsencode", lambda text: text.encode("latin-1"))  # as Latin-1's os.fsencode
    assert outpath.utf8_reading(latin1) == "计划"
    assert outpath.utf8_reading("caf\u00e9") is None  # b'caf\xe9' is no UTF-8: the name is judged as it is
    assert outpath.utf8_reading("a\u0088b") is None  # b'a\x88b' neither
    assert outpath.without_unsafe(latin1) == "è®¡å"


def test_a_report_beside_a_file_whose_utf8_name_reads_alike_is_refused_in_latin1(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from planner.core import destinations, manifest, outpath
    from planner.core.errors import DestinationError

    user = "café.md".encode("utf-8").decode("latin-1")  # the user's b'caf\xc3\xa9.md', as Latin-1 lists it
    real_scandir = os.scandir
    destinations._foreign_case_clash(tmp_path, "café.md", {})  # UTF-8 run, empty folder: nothing to refuse
    monkeypatch.setattr(manifest.sys, "getfilesystemencoding", lambda: "iso8859-1")
    monkeypatch.setattr(outpath.os, "fsencode", lambda text: text.encode("latin-1"))  # as Latin-1's os.fsencode
    monkeypatch.setattr(destinations.os, "scandir", lambda path: iter([SimpleNamespace(name=user)]))
    try:
        with pytest.raises(DestinationError) as info:
            destinations._foreign_case_clash(tmp_path, "café.md", {})  # this run's 'café.md' is b'caf\xe9.md'
        destinations._foreign_case_clash(tmp_path, "cafe.md", {})  # another name: taken
        destinations._foreign_case_clash(tmp_path, "café.md", {user: {}})  # planner's own: the manifest's rule
    finally:
        monkeypatch.setattr(destinations.os, "scandir", real_scandir)
    assert str(info.value) == (
        f"{tmp_path}/café.md: would sit beside {tmp_path}/{user}, a file planner did not write, whose name's bytes "
        "are UTF-8 for 'caf\\xe9.md': a UTF-8 locale would show the two as one name. This run's file-system "
        "encoding is iso8859-1: run again under a UTF-8 locale (LC_ALL=C.UTF-8) or with PYTHONUTF8=1, move that "
        "file away, or give another out=.")
