"""Issue 28, hostile pass 22: A minor m1 and B minor M6.

A minor m1: a replaced report, and the manifest rewritten beside it, lost its ``user.*`` extended attributes
(desktop tags and comments) while its mode, group and ACL were kept. They are copied onto the new file now,
before the rename; an attribute that cannot be copied is said in one note line naming it, and the report is
replaced without it.

B minor M6: ``plan``, ``compare`` and ``estimate`` said nothing when an overlay's own ``SOURCES.md`` could not be
read at all, and compare and estimate nothing when the overlay cited ``REF:`` ids defined nowhere (only the
workbook's Sources sheet and ``catalog check`` told). Each now warns, one line per problem, in the text and in
``--json``'s warnings, naming the file and the ids, escaped as every text from a file.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
COMPARE = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"


def _user_xattrs_or_skip(path: Path) -> None:
    """Skip where this file system takes no ``user.*`` attribute (tmpfs before Linux 6.6, some overlays)."""
    try:
        os.setxattr(path, "user.probe", b"1")
        os.removexattr(path, "user.probe")
    except (OSError, AttributeError) as exc:
        pytest.skip(f"no user extended attributes here ({exc})")


def _plan(out: Path, *extra: str):
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(out), "--format", "md,csv", *extra])
    assert r.exit_code == 0, r.output
    return r


# ---- A m1: user.* extended attributes survive a replacement

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_replaced_report_and_the_manifest_keep_their_user_xattrs(tmp_path: Path) -> None:
    out = tmp_path / "x"
    _plan(out)
    md, manifest = out / "qlora-7b-12gb.md", out / ".planner-reports.json"
    _user_xattrs_or_skip(md)
    os.setxattr(md, "user.xdg.tags", b"keep")
    os.setxattr(md, "user.xdg.comment", b"reviewed \xff")  # any bytes: copied as they are
    os.setxattr(manifest, "user.note", b"mine")
    inode = os.stat(md).st_ino
    r = _plan(out)
    assert os.stat(md).st_ino != inode  # a new file took the name (the test would pass trivially otherwise)
    assert sorted(os.listxattr(md)) == ["user.xdg.comment", "user.xdg.tags"]
    assert os.getxattr(md, "user.xdg.tags") == b"keep" and os.getxattr(md, "user.xdg.comment") == b"reviewed \xff"
    assert os.listxattr(manifest) == ["user.note"] and os.getxattr(manifest, "user.note") == b"mine"
    assert os.listxattr(out / "qlora-7b-12gb.csv") == []  # none set: none given
    assert "extended attribute" not in r.stderr


def test_an_atomic_write_keeps_user_xattrs(tmp_path: Path) -> None:
    from planner.core.atomic import write_text

    f = tmp_path / "calibration.yaml"
    f.write_text("a\n")
    _user_xattrs_or_skip(f)
    os.setxattr(f, "user.tag", b"t")
    notes: list[str] = []
    write_text(f, "b\n", notes=notes)
    assert f.read_text() == "b\n" and os.getxattr(f, "user.tag") == b"t" and notes == []


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_xattr_that_cannot_be_copied_is_said_in_one_note(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "x"
    _plan(out)
    md = out / "qlora-7b-12gb.md"
    _user_xattrs_or_skip(md)
    os.setxattr(md, "user.a", b"1")
    os.setxattr(md, "user.b\x1b[31m", b"2")  # a name holding ESC: named escaped
    real = os.setxattr

    def refuse_user(target, name, *args, **kwargs):
        if str(name).startswith("user."):
            raise OSError(errno.ENOTSUP, "Operation not supported")
        return real(target, name, *args, **kwargs)

    monkeypatch.setattr(os, "setxattr", refuse_user)
    before = md.read_bytes()
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(out), "--format", "md,csv"])
    assert r.exit_code == 0, r.output
    said = [line for line in r.stderr.splitlines() if "extended attribute" in line]
    assert len(said) == 1, r.stderr  # one line for the report (the manifest has none)
    note = " ".join(r.stderr.split())
    assert f"{md}: its extended attributes " in note
    assert "user.a" in note and "user.b\\x1b[31m" in note and "\x1b" not in r.stderr
    assert ("could not be copied (Operation not supported), so the new file replaced it without them (tags or "
            "comments set on the old file); set them again if they are needed.") in note
    # the report was replaced all the same (a new plan, same bytes here), without the attributes
    assert md.read_bytes() == before and os.listxattr(md) == []


def test_the_note_names_at_most_five_attributes(tmp_path: Path, monkeypatch) -> None:
    from planner.core.aclxattr import keep_user_xattrs

    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("a")
    new.write_text("b")
    _user_xattrs_or_skip(old)
    names = [f"user.n{i}" for i in range(7)]
    for n in names:
        os.setxattr(old, n, b"v")
    fd = os.open(new, os.O_RDONLY)
    try:
        assert keep_user_xattrs(fd, old, old) is None  # copied, nothing said
        assert sorted(os.listxattr(new)) == names
        for n in names:
            os.removexattr(new, n)

        def refuse(*args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(os, "setxattr", refuse)
        note = keep_user_xattrs(fd, old, old)
    finally:
        os.close(fd)
    assert note is not None and " and 2 more could not be copied (Permission denied)" in note, note
    assert note.startswith(f"{old}: its extended attributes ")
    assert note.count("user.n") == 5


# ---- B M6: an overlay's SOURCES.md that cannot be read, ids it cites defined nowhere

_INSTANCE = """schema_version: 1
instances:
  - id: my-g5-xlarge
    provider: aws
    instance: "g5.xlarge"
    gpu: a10g
    gpu_count: 1
    vcpus: 4
    memory: 16 GiB
    usd_per_hour: 1.006
    spot_usd_per_hour: 0.4
    region: "us-east-1"
    source: "REF:EVIL-1 and REF:EVIL-2"
    as_of: "2026-12-01"
    verification: V
"""


def _overlay(tmp_path: Path, name: str = "ov", sources: bytes | None = None) -> Path:
    ov = tmp_path / name
    ov.mkdir()
    (ov / "cloud.yaml").write_text(_INSTANCE)
    if sources is not None:
        (ov / "SOURCES.md").write_bytes(sources)
    return ov


def _compare_scenario(tmp_path: Path) -> Path:
    text = COMPARE.read_text()
    assert "instances: [aws-g5-xlarge," in text  # the line the overlay's instance is added to
    path = tmp_path / "cmp.yaml"
    path.write_text(text.replace("instances: [aws-g5-xlarge,", "instances: [my-g5-xlarge, aws-g5-xlarge,"))
    return path


def _undefined(ov: Path) -> str:
    """The warning for EVIL-1 and EVIL-2, as undefined_ref_warning writes it (paths outside the current folder
    are shown as given)."""
    return (f"catalog sources: REF:EVIL-1 ({ov}/cloud.yaml my-g5-xlarge); REF:EVIL-2 ({ov}/cloud.yaml my-g5-xlarge) "
            f"cited in the catalog but defined in no SOURCES.md read; add them to {ov}/SOURCES.md so what cites "
            "them can be traced ('planner catalog check' lists each)")


def _unreadable(ov: Path) -> None:
    """Make the overlay's SOURCES.md unreadable: larger than an input may be (a sparse file: no disk used)."""
    from planner.core.infile import MAX_FILE_BYTES

    with open(ov / "SOURCES.md", "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)


def _said_in_text(output: str, line: str) -> bool:
    return line in " ".join(output.split())


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_compare_warns_of_an_unreadable_sources_file_and_undefined_ids(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # a catalog path inside the current folder is shown relative to it
    (tmp_path / "o").mkdir()
    ov = _overlay(tmp_path / "o")
    _unreadable(ov)
    from planner.core.infile import MAX_FILE_BYTES

    unreadable = (f"catalog sources: o/ov/SOURCES.md: cannot be read: is {MAX_FILE_BYTES + 1} bytes, more than "
                  f"the {MAX_FILE_BYTES} a planner input may be")
    undefined = _undefined(Path("o/ov"))
    scenario = _compare_scenario(tmp_path)
    r = CliRunner().invoke(main, ["compare", str(scenario), "--catalog", str(ov), "--json"])
    assert r.exit_code == 0, r.output
    warnings = json.loads(r.stdout)["warnings"]
    assert [w for w in warnings if w.startswith("catalog sources: ")] == [unreadable, undefined], warnings
    r = CliRunner().invoke(main, ["compare", str(scenario), "--catalog", str(ov)])
    assert r.exit_code == 0, r.output
    assert _said_in_text(r.stdout, f"Warning: {unreadable}") and _said_in_text(r.stdout, f"Warning: {undefined}")


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_estimate_warns_of_an_unreadable_sources_file_and_undefined_ids(tmp_path: Path) -> None:
    from planner import estimate

    ov = _overlay(tmp_path, sources=b"| id | document | where |\n|---|---|---|\n| EVIL-1 | caf\xe9 | x |\n")
    r = estimate(model="llama-2-7b", task="infer", catalog=ov)
    told = [w for w in r.warnings if w.startswith("catalog sources: ")]
    # EVIL-1 is defined (read with U+FFFD for the bad byte), EVIL-2 nowhere: one line each problem
    assert told == [f"catalog sources: {ov}/SOURCES.md:3: is not UTF-8 text (byte 0xe9); read with each bad byte "
                    "as U+FFFD: save it as UTF-8",
                    f"catalog sources: REF:EVIL-2 ({ov}/cloud.yaml my-g5-xlarge) cited in the catalog but defined in "
                    f"no SOURCES.md read; add it to {ov}/SOURCES.md so what cites it can be traced ('planner catalog "
                    "check' lists each)"], told
    assert r.to_dict()["warnings"][-2:] == told
    res = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--catalog", str(ov)])
    assert res.exit_code == 0, res.output
    assert all(_said_in_text(res.stdout, f"Warning: {w}") for w in told), res.stdout


def test_estimate_without_an_overlay_or_with_a_whole_one_says_nothing_of_sources(tmp_path: Path) -> None:
    from planner import estimate

    assert not [w for w in estimate(model="llama-2-7b", task="infer").warnings if "catalog sources" in w]
    ov = _overlay(tmp_path, sources=b"| id | document | where |\n|---|---|---|\n| EVIL-1 | a | https://a.example/x |\n"
                                    b"| EVIL-2 | b | https://b.example/y |\n")
    assert not [w for w in estimate(model="llama-2-7b", task="infer", catalog=ov).warnings
                if "catalog sources" in w]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_warns_of_ids_an_overlay_entry_it_does_not_buy_cites(tmp_path: Path) -> None:
    ov = _overlay(tmp_path)  # no SOURCES.md: an overlay need not have one
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--catalog", str(ov), "--json"])
    assert r.exit_code == 0, r.output
    warnings = json.loads(r.stdout)["warnings"]
    assert [w for w in warnings if w.startswith("catalog sources: ")] == [_undefined(ov)], warnings


def test_the_warnings_escape_a_path_from_the_file_system(tmp_path: Path) -> None:
    from planner import estimate

    ov = _overlay(tmp_path, name="ov\x1b]0;T\x07")
    told = [w for w in estimate(model="llama-2-7b", task="infer", catalog=ov).warnings if "catalog sources" in w]
    assert len(told) == 1 and "\x1b" not in told[0] and "\x07" not in told[0], told
    assert "ov\\x1b]0;T\\x07/cloud.yaml my-g5-xlarge" in told[0]


def test_many_undefined_ids_are_named_ten_and_counted(tmp_path: Path) -> None:
    from planner.catalog.check import undefined_ref_warning
    from planner.catalog.loader import load_catalog
    from planner.catalog.sources import sources_for_catalog

    ov = tmp_path / "ov"
    ov.mkdir()
    refs = " ".join(f"REF:X-{i:02d}" for i in range(12))
    (ov / "cloud.yaml").write_text(_INSTANCE.replace('"REF:EVIL-1 and REF:EVIL-2"', f'"{refs}"'))
    cat = load_catalog(ov)
    line = undefined_ref_warning(cat, sources_for_catalog(cat.files))
    assert line is not None and line.count("REF:X-") == 10 and "REF:X-09 (" in line and "REF:X-10" not in line
    assert " and 2 more cited in the catalog" in line
