"""Issue 28, hostile pass 23A: findings m1-m5 of report h23a.

- m1: --out (and the API's out=) whose bytes arrive undecoded but form valid UTF-8 (an ASCII locale without
  UTF-8 mode, ``LC_ALL=C PYTHONUTF8=0``: 'р' d1 80, an emoji f0 9f 98 80) is read as the characters it encodes
  and taken; a lone byte 0x80-0x9F is still refused, and the hint takes out whole characters only
  (planner.core.outpath.unsafe_path_char, without_piece).
- m2: a new manifest .planner-reports.json is made as the folder makes a new file (0o644 less the umask or the
  folder's default ACL), no wider than the reports: a default ACL that makes new files 0600 makes it 0600 too,
  and one granting another user read and write gives that user read only (planner.core.atomic._new_temp).
- m3: a default destination refused for its place (plan without --out from /sys or from planner's catalog folder;
  calibrate with XDG_CONFIG_HOME on /proc or a regular file) says it is the default and where it comes from
  (planner.cli.plan.refuse_default_out; planner.cli.calibrate).
- m4: an --out still to be made whose first new folder would sit beside an entry whose name differs only in case
  or Unicode form (NFC/NFD) is refused, as a report beside such a file is, with that folder offered; an --out
  that exists is written into as before (planner.core.destinations._new_folder_clash).
- m5: calibrate --out onto a report or cloud.yaml that planner wrote, unchanged since and listed in its folder's
  manifest, is refused as such (the set named), not as a broken calibration file; a listed file changed since is
  read as a calibration file as before (planner.core.destinations.written_set).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sky_helpers import G5, aws_csv, run_cli

ROOT = Path(__file__).parents[1]
SCENARIO = str(ROOT / "scenarios" / "qlora-7b-12gb.yaml")


def _ascii_locale(text: str) -> str:
    """``text`` as Python reads it in an ASCII locale without UTF-8 mode: each byte over 0x7F of its UTF-8 a
    surrogate escape (PEP 383)."""
    return "".join(chr(b) if b < 0x80 else chr(0xDC00 + b) for b in text.encode("utf-8"))


# -- m1: UTF-8 bytes that arrive undecoded --------------------------------------------------------------------------

def test_utf8_letters_arriving_undecoded_are_taken(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = _ascii_locale("р中é😀")  # d1 80 (0x80 inside), f0 9f 98 80 (0x9f, 0x80 inside)
    assert "\udc80" in raw and "\udc9f" in raw
    code, text = run_cli("plan", SCENARIO, "--out", raw, "--format", "md")
    assert code == 0, text
    assert [p.name for p in tmp_path.iterdir()] == ["р中é😀"]  # the UTF-8 bytes, as a UTF-8 locale writes them
    assert (tmp_path / "р中é😀" / "qlora-7b-12gb.md").is_file()


def test_a_lone_c1_byte_beside_utf8_letters_is_refused_and_the_hint_keeps_the_letters(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = _ascii_locale("р") + "\udc80" + "x"  # d1 80 80 78: the second 0x80 starts nothing
    code, text = run_cli("plan", SCENARIO, "--out", raw, "--format", "md")
    assert code == 2
    # the hint drops the lone byte only: d1 80 (р) stays whole
    assert text.strip() == ("Error: --out: '\\xd1\\x80\\x80x' holds the byte \\x80 (U+0080 in Latin-1, a control "
                            "character), which no listing shows, so the folder's name would look like another. "
                            "Write --out $'\\xd1\\x80x' without it.")  # bash's $'...': the bytes (h37b m1)
    assert list(tmp_path.iterdir()) == []


def test_an_undecoded_utf8_control_is_refused_whole(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for char, named in (("\u009b", "U+009B"), ("\u200b", "U+200B (ZERO WIDTH SPACE)")):
        raw = "a" + _ascii_locale(char) + "b"
        code, text = run_cli("plan", SCENARIO, "--out", raw, "--format", "md")
        assert code == 2
        shown = "".join(f"\\x{b:02x}" for b in char.encode("utf-8"))
        # named as a UTF-8 locale names it; the hint drops all of its bytes
        assert text.strip() == (f"Error: --out: 'a{shown}b' holds {named}, which no listing shows, so the folder's "
                                "name would look like another. Write --out 'ab' without it.")
    assert list(tmp_path.iterdir()) == []


def test_the_api_takes_undecoded_utf8_and_refuses_a_lone_byte(tmp_path, monkeypatch):
    from planner import plan
    from planner.core.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as info:
        plan(SCENARIO, out=_ascii_locale("р") + "\udc85", format="json")
    message = str(info.value)
    assert "holds the byte \\x85 (U+0085 in Latin-1, a control character)" in message
    assert message.endswith("Give out='\\\\xd1\\\\x80'.")  # the path offered keeps р whole (d1 80), escaped
    assert list(tmp_path.iterdir()) == []
    plan(SCENARIO, out=_ascii_locale("р"), format="json")
    assert [p.name for p in tmp_path.iterdir()] == ["р"]


# -- m3: a default destination refused for its place -----------------------------------------------------------------

def _is_fs(path: str, kind: str) -> bool:
    from planner.core.pseudofs import file_system_type

    return os.path.isdir(path) and file_system_type(path) == kind


CAL = ("calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16", "--micro-batch", "2",
       "--seq-len", "512")


@pytest.mark.skipif(not _is_fs("/sys", "sysfs"), reason="Linux /sys only")
def test_plan_without_out_from_sys_says_the_default(monkeypatch):
    monkeypatch.chdir("/sys")
    code, text = run_cli("plan", SCENARIO, "--format", "md")
    assert code == 2
    assert text.strip() == ("Error: reports: would be made in ., a folder of the sysfs file system, a pseudo file "
                            "system that the kernel makes up for its own state: it holds no file planner can write. "
                            "That is --out's default, reports in the current folder (/sys): cd to a folder on a "
                            "disk, or give --out a folder on a disk.")
    code, given = run_cli("plan", SCENARIO, "--format", "md", "--out", "reports")  # given: the --out hint stays
    assert code == 2
    assert given.strip().endswith("Give --out a folder on a disk (it is created if missing).")


def test_plan_without_out_from_the_catalog_folder_says_the_default(monkeypatch):
    catalog = ROOT / "catalog"
    monkeypatch.chdir(catalog)
    code, text = run_cli("plan", SCENARIO, "--format", "md")
    assert code == 2
    assert text.strip() == (f"Error: reports: is planner's own catalog folder ({catalog}), or a folder inside it, and "
                            "planner does not write into it. That is --out's default, reports in the current folder "
                            f"({catalog}): cd to a folder outside it, or give --out a folder outside it.")
    assert not (catalog / "reports").exists()


@pytest.mark.skipif(not _is_fs("/proc", "proc"), reason="Linux /proc only")
def test_calibrate_with_xdg_config_home_on_proc_says_the_default(monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", "/proc")
    code, text = run_cli(*CAL)
    assert code == 2
    assert text.strip() == ("Error: /proc/planner/calibration.yaml: would be made in /proc, a folder of the proc "
                            "file system, a pseudo file system that the kernel makes up for its own state: it holds "
                            "no file planner can write. That is the default calibration file, from XDG_CONFIG_HOME "
                            "(else HOME): set it to a folder on a disk, or give --out with a file on a disk.")


def test_calibrate_with_xdg_config_home_a_file_says_the_default(tmp_path, monkeypatch):
    home = tmp_path / "afile"
    home.write_text("x\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    code, text = run_cli(*CAL)
    assert code == 2
    assert text.strip() == (f"Error: {home}/planner/calibration.yaml: would be made in {home}, which is a regular "
                            "file, not a folder. That is the default calibration file, from XDG_CONFIG_HOME (else "
                            "HOME): set it to a folder you can write, or give --out with a file you can write.")
    assert home.read_text() == "x\n"


# -- m2: the manifest under a folder's default ACL ---------------------------------------------------------------------

def _acl(entries: list[tuple[int, int, int]]) -> bytes:
    """A POSIX ACL as the kernel's xattr holds it (version 2; tag, permissions, id per entry), as setfacl writes it."""
    import struct

    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, uid) for tag, perm, uid in entries)


USER_OBJ, USER, GROUP_OBJ, MASK, OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
ANYONE = 0xFFFFFFFF


def _default_acl(folder: Path, entries: list[tuple[int, int, int]]) -> None:
    try:
        os.setxattr(folder, "system.posix_acl_default", _acl(entries))
    except (OSError, AttributeError) as exc:
        pytest.skip(f"no POSIX ACLs here: {exc}")


def test_a_new_manifest_follows_a_private_default_acl(tmp_path):
    out = tmp_path / "m8"
    out.mkdir(mode=0o711)
    # setfacl -d -m g::-,o::- m8: new files get no group or others' access whatever the umask
    _default_acl(out, [(USER_OBJ, 7, ANYONE), (GROUP_OBJ, 0, ANYONE), (OTHER, 0, ANYONE)])
    code, text = run_cli("plan", SCENARIO, "--out", str(out), "--format", "md,json")
    assert code == 0, text
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()}
    # 0o644 (or a report's 0o666) reduced by the ACL's group and others entries (---): 0600
    assert modes == {".planner-reports.json": 0o600, "qlora-7b-12gb.md": 0o600, "qlora-7b-12gb.json": 0o600}


def test_a_new_manifest_gives_a_default_acl_user_no_write(tmp_path):
    out = tmp_path / "m9"
    out.mkdir(mode=0o755)
    # setfacl -d -m u:65534:rw: the other user may read (and write) the reports, never write the manifest
    _default_acl(out, [(USER_OBJ, 7, ANYONE), (USER, 6, 65534), (GROUP_OBJ, 5, ANYONE), (MASK, 7, ANYONE),
                       (OTHER, 5, ANYONE)])
    code, text = run_cli("plan", SCENARIO, "--out", str(out), "--format", "md")
    assert code == 0, text
    raw = os.getxattr(out / ".planner-reports.json", "system.posix_acl_access")
    import struct

    entries = {struct.unpack_from("<HHI", raw, 4 + 8 * i)[0]: struct.unpack_from("<HHI", raw, 4 + 8 * i)[1]
               for i in range((len(raw) - 4) // 8)}
    assert entries[MASK] == 4  # the mask is the creation mode's group bits (0o644: r--), so user 65534 reads only
    assert (out / ".planner-reports.json").stat().st_mode & 0o777 == 0o644
    code, text = run_cli("plan", SCENARIO, "--out", str(out), "--format", "md")  # the manifest is still trusted
    assert code == 0, text


# -- m5: calibrate --out onto a file planner wrote ----------------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_calibrate_out_onto_a_report_or_cloud_yaml_says_planner_wrote_it(tmp_path):
    out = tmp_path / "cr"
    code, text = run_cli("catalog", "import-skypilot", str(aws_csv(tmp_path, G5)), "--out", str(out))
    assert code == 0, text
    code, text = run_cli("plan", SCENARIO, "--out", str(out), "--format", "json,csv")
    assert code == 0, text
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for name, owner in (("qlora-7b-12gb.json", "plan qlora-7b-12gb"), ("qlora-7b-12gb.csv", "plan qlora-7b-12gb"),
                        ("cloud.yaml", "import-skypilot")):
        code, text = run_cli(*CAL, "--out", str(out / name))
        assert code == 2
        assert text.strip() == (f"Error: {out / name}: is a file planner wrote (set '{owner}', as "
                                ".planner-reports.json beside it lists it), not a calibration file, and calibrate "
                                "would replace it. Give --out another file, e.g. --out ./calibration.yaml.")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_calibrate_out_onto_a_listed_file_changed_since_is_read_as_before(tmp_path):
    out = tmp_path / "cr"
    code, text = run_cli("plan", SCENARIO, "--out", str(out), "--format", "json")
    assert code == 0, text
    report = out / "qlora-7b-12gb.json"
    report.write_text('{"format_version": 1}\n')  # no longer what planner wrote: the user's file
    code, text = run_cli(*CAL, "--out", str(report))
    assert code == 2
    assert "planner wrote" not in text
    assert text.strip().startswith(f"Error: {report}:1: format_version: unknown key 'format_version'.")


# -- m4: a new --out folder beside a lookalike ------------------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_new_out_beside_a_folder_in_another_unicode_form_or_case_is_refused(tmp_path, monkeypatch):
    import unicodedata

    monkeypatch.chdir(tmp_path)
    nfd, nfc = unicodedata.normalize("NFD", "café"), unicodedata.normalize("NFC", "café")
    assert nfd != nfc
    code, text = run_cli("plan", SCENARIO, "--out", nfd, "--format", "md")
    assert code == 0, text
    code, text = run_cli("plan", SCENARIO, "--out", nfc, "--format", "md")
    assert code == 2
    assert text.strip() == (f"Error: {nfc}: would make the folder {nfc} beside the folder {nfd}, and the two "
                            "names ('cafe\\u0301' and 'caf\\xe9') differ only in upper and lower case or in Unicode "
                            "form (composed or decomposed), which macOS and Windows store as one. Give --out "
                            f"{nfd} to write into that folder, or a name of its own.")
    code, text = run_cli("plan", SCENARIO, "--out", "Café/sub", "--format", "md")  # the first folder made counts
    assert code == 2
    assert f"would make the folder Café beside the folder {nfd}," in text
    assert f"Give --out {nfd}/sub to write into that folder" in text
    assert [p.name for p in tmp_path.iterdir()] == [nfd]
    code, text = run_cli("plan", SCENARIO, "--out", nfd, "--format", "md")  # the folder that exists: written
    assert code == 0, text


def test_a_new_out_beside_a_file_in_another_case_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Reports").write_text("mine\n")
    code, text = run_cli("plan", SCENARIO, "--format", "md")  # --out's default, reports
    assert code == 2
    assert text.strip() == ("Error: reports: would make the folder reports beside the file Reports, and the two names "
                            "('Reports' and 'reports') differ only in upper and lower case or in Unicode form "
                            "(composed or decomposed), which macOS and Windows store as one. Give --out a name of "
                            "its own.")
    assert [p.name for p in tmp_path.iterdir()] == ["Reports"]
