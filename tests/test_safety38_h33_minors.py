"""Issue 28, minors of hostile pass 33 fixed outside the staging and importer branches: tester B's m2 (a scenario's
whole number written with 100,000 decimal digits was echoed whole, a 100 KB error line) and m8 (a long targets list
quoted whole in a warning), tester A's m6 (a manifest recording an encoding no file system uses)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main


def test_a_long_decimal_that_reads_as_whole_is_clipped_in_the_message(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    digits = "2048." + "0" * 100_000 + "1"  # its float is 2048.0: more digits than a float holds
    path.write_text("name: bf\nworkloads:\n  - name: w\n    model: llama-2-7b\n    task: infer\n"
                    f"    context: {digits}\n    concurrency: 1\n")
    r = CliRunner().invoke(main, ["plan", str(path), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2
    # the first 80 characters and the length, as every long value a message echoes (planner.core.names.clip_text)
    assert r.output == (f"Error: {path}:6: workloads[0].context: must be a whole number, not {digits[:80]}... "
                        "(100,006 characters), which has more digits than a float holds (it would read as 2048). "
                        "Write the whole number meant, without decimals.\n")


def test_a_long_targets_list_is_quoted_by_its_first_entries_in_the_warning() -> None:
    """h33b m8: a compressed-tensors group targeting 224 module names gave a 100-line warning quoting them all."""
    from planner.model.quantization import _few

    targets = [f"model.layers.{i}.{p}" for i in range(32) for p in ("q", "k", "v", "o", "gate", "up", "down")]
    assert len(targets) == 224
    assert _few(targets) == "['model.layers.0.q', 'model.layers.0.k', 'model.layers.0.v', ... (224 entries)]"
    assert _few(["Linear", "Embedding"]) == "['Linear', 'Embedding']"



@pytest.mark.parametrize("enc", ["utf-16", "utf-32", "cp037", "utf-7", "punycode", "unicode_escape"])
def test_an_encoding_no_file_system_names_files_in_is_not_planners(enc: str) -> None:
    """h33a m6: a manifest recording UTF-16 got the hint to run 'under a locale whose encoding is utf-16', and with
    ASCII names it was trusted; a file system's encoding keeps ASCII as it is, and these do not ('a' in UTF-16 is
    b'\\xff\\xfea\\x00')."""
    from planner.core.manifest import name_encoding

    assert "a.json".encode(enc) != b"a.json" or "\\".encode(enc) != b"\\" or "+".encode(enc) != b"+"
    assert name_encoding(enc, ["a.json"]) is None


@pytest.mark.parametrize("enc, canonical", [("utf-8", "utf-8"), ("latin-1", "iso8859-1"), ("cp1252", "cp1252"),
                                            ("shift_jis", "shift_jis"), ("koi8-r", "koi8-r")])
def test_a_locale_encoding_is_still_read(enc: str, canonical: str) -> None:
    from planner.core.manifest import name_encoding

    assert name_encoding(enc, ["a.json"]) == canonical


@pytest.mark.parametrize("out, said", [
    ("\u201cc.yaml\u201d", "so it would be part of the file's name. Write --out 'c.yaml'."),
    ("c.yaml ", "ends with a space, which would be part of the file's name. Write --out 'c.yaml'."),
    ("x/$HOME/c.yaml", "so it would be part of the file's or a folder's name."),
])
def test_calibrate_out_refusals_speak_of_a_file(out: str, said: str) -> None:
    """h33a m7: calibrate's --out names a file, yet its refusals spoke of "the folder's name"."""
    r = CliRunner().invoke(main, ["calibrate", "--out", out])
    assert r.exit_code == 2
    assert said in r.output and "the folder's name" not in r.output, r.output


@pytest.mark.parametrize("out, ends", [("cal/new/", "'/'"), ("cal/new/.", "'.'")])
def test_calibrate_out_naming_a_folder_is_refused_up_front(out: str, ends: str, tmp_path: Path, monkeypatch) -> None:
    """h33a m7: 'cal/new/' (a folder's path, not there yet) passed the checks made before the measurement."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["calibrate", "--out", out, "--model", "llama-2-7b", "--task", "infer"])
    assert r.exit_code == 2
    assert r.output == (f"Error: --out: {out!r} names a folder (it ends with {ends}); --out takes a file. Give the path "
                        f"of a file in it, e.g. --out {out.rstrip('/')}/calibration.yaml.\n")


def test_many_leftover_staging_folders_are_said_in_a_few_lines(tmp_path: Path) -> None:
    """h33a m4: 3,000 hand-made staging folders gave 6,000 unsorted lines on every run; now the first ten in name
    order (planner.core.reportset.MAX_LEFTOVER_NOTES) and one line counting the rest."""
    from planner.core.atomic import write_text
    from planner.core.reportset import MAX_LEFTOVER_NOTES, ReportSet

    out = tmp_path / "o"
    out.mkdir()
    for i in reversed(range(25)):  # made in reverse: the lines come in name order all the same
        d = out / f".planner-staging-{i:08d}"
        d.mkdir()
        (d / ".planner-staging").write_text('planner staging folder 1\n"r.csv"\n')
        (d / "user.txt").write_text("x")
    with ReportSet(out, set_name="plan r") as rs:
        write_text(rs.path("r.md"), "# r\n")
        rs.commit()
    left = [n for n in rs.notes if n.startswith("Left ")]
    assert MAX_LEFTOVER_NOTES == 10 and len(left) == 10
    assert [n.split(":")[0] for n in left] == [f"Left {out}/.planner-staging-{i:08d}" for i in range(10)]
    assert rs.notes[-1] == (f"... and 15 more such lines about {out}'s leftovers of earlier runs, from "
                            ".planner-staging-00000010 to .planner-staging-00000024 (in name order); run 'ls -a' "
                            "there to see them."), rs.notes
    assert all((out / f".planner-staging-{i:08d}" / "user.txt").exists() for i in range(25))
