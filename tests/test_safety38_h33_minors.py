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
    order (planner.core.stagemark.MAX_LEFTOVER_NOTES) and one line counting the rest."""
    from planner.core.atomic import write_text
    from planner.core.reportset import ReportSet
    from planner.core.stagemark import MAX_LEFTOVER_NOTES

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
    assert rs.notes[-1] == (f"... and 15 more of {out}'s leftovers of earlier runs left as they are (check them), "
                            "from .planner-staging-00000010 to .planner-staging-00000024 (in name order)."), rs.notes
    assert all((out / f".planner-staging-{i:08d}" / "user.txt").exists() for i in range(25))


def test_a_leftover_left_for_the_user_is_said_before_the_removed_ones(tmp_path: Path) -> None:
    """h34a m4: past the cap, the one folder left with the user's file in it was counted among removed ones."""
    import json

    from planner.core.atomic import write_text
    from planner.core.reportset import ReportSet

    out = tmp_path / "o"
    out.mkdir()
    body = b"report\n"
    import hashlib

    digest = hashlib.sha256(body).hexdigest()
    for i in range(14):  # stopped runs' folders planner removes: a mark and the report it records by hash
        d = out / f".planner-staging-{i:08d}"
        d.mkdir(mode=0o700)
        (d / "r.csv").write_bytes(body)
        (d / ".planner-staging").write_text('planner staging folder 1\n"r.csv"\n'
                                            + json.dumps({"sha256": {"r.csv": digest}, "bytes": {"r.csv": 7}}) + "\n")
    user = out / ".planner-staging-zzzzzzzz"
    user.mkdir(mode=0o700)
    (user / "u.txt").write_text("mine")
    with ReportSet(out, set_name="plan r") as rs:
        write_text(rs.path("r.md"), "# r\n")
        rs.commit()
    assert rs.notes[0].startswith(f"Left {user}: it holds u.txt"), rs.notes
    removed = [n for n in rs.notes if n.startswith("Removed ")]
    assert len(removed) == 9 and rs.notes[-1].startswith(f"... and 5 more of {out}'s leftovers of earlier runs "
                                                         "removed, from .planner-staging-00000009"), rs.notes
    assert (user / "u.txt").read_text() == "mine"


def test_one_scenario_file_reached_by_another_path_is_no_other_file(tmp_path: Path) -> None:
    """h34a m6: the same scenario file through a linked folder, '//', or a hard link was "another scenario file"."""
    import os

    from planner.core.atomic import write_text
    from planner.core.reportset import ReportSet

    real = tmp_path / "s" / "a.yaml"
    real.parent.mkdir()
    real.write_text("name: lab\n")
    (tmp_path / "link").symlink_to(tmp_path / "s")
    os.link(real, tmp_path / "s" / "hard.yaml")
    out = tmp_path / "o"
    for origin in (real, tmp_path / "link" / "a.yaml", "/" + str(real), tmp_path / "s" / "hard.yaml"):
        with ReportSet(out, set_name="plan lab", origin=origin) as rs:
            write_text(rs.path("lab.md"), "# lab\n")
            rs.commit()
        assert rs.notes == [], (origin, rs.notes)


def test_an_escape_reading_codec_is_not_planners() -> None:
    """h34a m8: raw_unicode_escape writes ASCII as ASCII but reads b'\\u00e9' as 'é'."""
    from planner.core.manifest import name_encoding

    assert name_encoding("raw_unicode_escape", ["a.json"]) is None


@pytest.mark.parametrize("out, hint", [
    ('"a\\b"', "Write --out 'a\\b'."),  # one backslash, as the shell reads it in single quotes (h34a m1)
    ("$'a'/b", "Write --out 'a/b'."),  # the quoting taken off (h34a m2)
    ('a/ "b"/c', "Write --out 'a/b/c'."),  # a hint the next check takes (h34a m2)
    ("r/\ufe44/s", "Write --out 'r/s'."),  # a folder of quotes alone left out, not left empty
    ("it's'", "Write --out 'it'\"'\"'s'."),  # a quote inside: quoted for the shell
])
def test_out_hints_paste_as_the_path_meant(out: str, hint: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", "nothing.yaml", "--out", out])
    assert r.exit_code == 2
    assert r.output.rstrip("\n").endswith(hint), r.output


def test_calibrate_names_a_quoted_file_name_as_the_files() -> None:
    """h34a m3: 'cal/"x".yaml' was "a folder" and its hint kept a quote."""
    r = CliRunner().invoke(main, ["calibrate", "--out", 'cal/"x".yaml'])
    assert r.exit_code == 2
    assert r.output == ("Error: --out: 'cal/\"x\".yaml' has the file name '\"x\".yaml' that begins or ends with a "
                        "quotation mark, which a config file, a word processor or an unclosed quoting left in, so it "
                        "would be part of the file's name. Write --out 'cal/x.yaml'.\n")


def test_a_runaway_unknown_key_is_said_at_its_own_line(tmp_path: Path) -> None:
    """h34b m4: a key of 100 characters was said at its mapping's line (5), not its own (8)."""
    path = tmp_path / "s.yaml"
    path.write_text("name: t\nworkloads:\n  - name: w\n    model: llama-2-7b\n    task: train\n    method: qlora\n"
                    f"    micro_batch: 1\n    {'k' * 100}: 3\n")
    r = CliRunner().invoke(main, ["plan", str(path), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2
    assert r.output.startswith(f"Error: {path}:8: workloads[0]: unknown key '{'k' * 80}... (100 characters)'."), \
        r.output


def test_an_empty_unknown_key_is_said_to_be_empty(tmp_path: Path) -> None:
    """h34b m5: "workloads[0].: unknown key ''" (a dangling '.', and no word that the key is empty)."""
    path = tmp_path / "s.yaml"
    path.write_text("name: x\nworkloads:\n  - name: a\n    model: llama-2-7b\n    task: infer\n    '': 3\n")
    r = CliRunner().invoke(main, ["plan", str(path), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert r.output.startswith(f"Error: {path}:6: workloads[0]: unknown key '' (an empty key). Valid keys: "), r.output


@pytest.mark.parametrize("given, shown", [("=1+1", "200M"), ("=abc", "200M"), ("=300M", "300M")])
def test_a_count_without_a_workload_is_hinted_with_a_count(given: str, shown: str) -> None:
    """h34b m11: '=1+1' got the hint 'Write NAME=1+1', refused in turn as no token count."""
    scenario = str(Path(__file__).parents[1] / "scenarios" / "compare-qlora-7b-12gb.yaml")
    r = CliRunner().invoke(main, ["compare", scenario, "--tokens-per-month", given])
    assert r.exit_code == 2
    assert f"Write NAME={shown} (e.g. --tokens-per-month qlora-7b={shown})" in r.output, r.output


def test_format_as_an_array_or_a_generator_is_told_to_be_a_list(tmp_path: Path) -> None:
    """h34b m12: format= took a numpy array (and a generator), where every other list keyword refuses one."""
    from planner.api.plans import report_formats
    from planner.core.errors import InputError

    for value in ((f for f in ["json"]), iter(["json"])):
        with pytest.raises(InputError) as info:
            report_formats(value, api=True)
        assert "(planner reads lists). Write format='xlsx,csv'" in str(info.value)
    assert report_formats(["json", "md"], api=True) == ("json", "md")


def test_nesting_too_deep_is_said_at_its_line(tmp_path: Path) -> None:
    """h34b m14: a scenario or config.json nested past 200 levels was refused with no line."""
    scenario = tmp_path / "deep.yaml"
    scenario.write_text("name: x\nxnest: " + "[" * 5000 + "]" * 5000 + "\n")
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert r.output.startswith(f"Error: {scenario}:2: is nested too deeply (more than 200 mappings or lists"), r.output
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text('{"architectures": ["LlamaForCausalLM"],\n"model_type": "llama",\n"x": '
                                       + "[" * 5000 + "]" * 5000 + "}")
    r = CliRunner().invoke(main, ["estimate", "--model", str(model), "--task", "infer"])
    assert r.exit_code == 2
    assert r.output.startswith(f"Error: {model / 'config.json'}:3: is nested too deeply"), r.output


def test_an_error_about_standard_output_carries_what_was_left(tmp_path: Path) -> None:
    """h34a m5: with standard output full, the "Left ..." note (a folder holding the user's file) was lost; the
    Error line now carries it after the reports written (planner.cli.common.files_done)."""
    from planner.cli.common import files_done
    from planner.core.atomic import write_text
    from planner.core.interrupt import SignalGuard
    from planner.core.reportset import ReportSet

    out = tmp_path / "o"
    user = out / ".planner-staging-user"
    user.mkdir(parents=True, mode=0o700)
    (user / "u.txt").write_text("hi")
    guard = SignalGuard()
    with ReportSet(out, set_name="plan r", guard=guard) as rs:
        write_text(rs.path("r.json"), "{}\n")
        rs.commit()
    said = files_done(guard)
    assert said == (f" The reports were written, whole: {out / 'r.json'}. Left {user}: it holds u.txt, which planner "
                    "cannot tell it wrote; check it and remove it yourself."), said


def test_a_blank_line_before_the_header_is_said_so(tmp_path: Path) -> None:
    """h34b m7: a blank first line gave 'no column InstanceType, ... (header: empty)'."""
    from tests.sky_helpers import HEADER, run_cli

    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    path.write_text("\n" + HEADER + "\ng5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64\n")
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert " ".join(out.split()) == (f"Error: {path}: not a SkyPilot vms.csv as written: its line 1 is blank, and a "
                                     "vms.csv's first line is its header (InstanceType,AcceleratorName,...). Remove "
                                     "the blank lines before the header.")


def test_a_header_that_fits_two_layouts_in_neither_order_asks_for_the_provider(tmp_path: Path) -> None:
    """h34b m13: an AWS header without Arch, outside an aws/ folder, has gcp's and runpod's columns and was read as
    RunPod's (regions upper-cased as country codes); now the provider is asked for."""
    from tests.sky_helpers import run_cli

    path = tmp_path / "plain.csv"
    path.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
                    "AvailabilityZone\ng5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a\n")
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert "cannot tell which provider the file is for: its columns are both gcp's and runpod's" in out, out
    code, out = run_cli("catalog", "import-skypilot", str(path), "--provider", "aws", "--out", str(tmp_path / "o"))
    assert code == 0, out
    assert "provider: aws" in (tmp_path / "o" / "cloud.yaml").read_text()


def test_a_gcp_gpu_spot_below_the_floor_gives_no_spot_price(tmp_path: Path) -> None:
    """h35b N3: a GCP GPU row's spot price of 0.0000001 (below the 0.001 USD/h floor) was added to the VM's spot,
    pricing the GPUs at about 0 on spot; it is no spot offer for the GPUs, so the machine gets no spot price."""
    from tests.sky_helpers import run_cli

    path = tmp_path / "gcp" / "vms.csv"
    path.parent.mkdir()
    path.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,"
                    "AvailabilityZone\ng2-standard-4,L4,1,4,16,0.3,0.1,us-central1,us-central1-a\n"
                    ",L4,1,,,0.7,0.0000001,us-central1,us-central1-a\n")
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 0, out
    written = (tmp_path / "o" / "cloud.yaml").read_text()
    assert "spot_usd_per_hour: null" in written and "VM 0.3 + L4x1 0.7; no spot price." in written, written


def test_a_gcp_vm_row_naming_other_gpus_than_its_machine_type_is_left_out(tmp_path: Path) -> None:
    """h35b N1: a GCP VM row's own AcceleratorName/AcceleratorCount were never read (the machine type's table gave
    L4 x1 for a row saying H100 x8); a row that names other GPUs is left out, said. SkyPilot's own VM rows leave the
    two columns empty (the GPUs are their own rows), and those are read as before."""
    from tests.sky_helpers import run_cli

    path = tmp_path / "gcp" / "vms.csv"
    path.parent.mkdir()
    path.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,"
                    "AvailabilityZone\ng2-standard-4,H100,8,4,16,0.3,0.1,us-east1,us-east1-b\n"
                    ",L4,1,,,0.35,0.2,us-east1,us-east1-b\ng2-standard-4,,,4,16,0.3,0.1,us-central1,us-central1-a\n"
                    ",L4,1,,,0.7,0.2,us-central1,us-central1-a\n")
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 0, out
    # h36b m10: the count 8 reads as a number, so it is written x8, not quoted as text x'8'
    assert "left out 1: the row names 'H100' x8, but machine type g2-standard-4 carries 'L4' x1" in " ".join(  # h37b m6: one form for a GPU and its count, 'A100' x1 (name quoted, count not)
        out.split()), out


def test_an_azure_row_naming_another_gpu_than_its_instance_type_board_is_read_as_named(tmp_path: Path) -> None:
    """h35b N2: Standard_NC24ads_A100_v4 rows naming T4 or H100 were written as the A100 80GB PCIe all the same;
    the board rule applies only where the row names that GPU, so a T4 row beside an A100 row refuses the file."""
    from tests.sky_helpers import run_cli

    path = tmp_path / "azure" / "vms.csv"
    path.parent.mkdir()
    # h39b 19: Azure's layout has Generation, not AvailabilityZone (fetch_azure.py USEFUL_COLUMNS); a header with
    # AvailabilityZone under azure/ is now refused as another cloud's columns, so the file carries Azure's own
    head = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation\n"
    path.write_text(head + "Standard_NC24ads_A100_v4,A100-80GB,1,24,220,,3.67,1.0,eastus,V2\n"
                    "Standard_NC24ads_A100_v4,T4,1,24,220,,3.67,1.0,westus3,V2\n")
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    # h38b N3: an NC A100 v4 size carries A100s, so a row of it naming T4 is now left out with that reason (it
    # was read as a T4 and refused the file beside the A100 row); the A100 row is written
    assert code == 0, out
    assert "carries A100 GPUs, but AcceleratorName gives 'T4'" in " ".join(out.split()), out
    assert "gpu: a100-80gb-pcie" in (tmp_path / "o" / "cloud.yaml").read_text()


def test_a_symbolic_link_put_at_a_staged_reports_name_is_said_and_left(tmp_path: Path) -> None:
    """h35a N1: a link another program put at a staged report's name was said as a raw "cannot be read (Too many
    levels of symbolic links)", and, when the link reused the unlinked report's inode number, removed with the
    staging folder. A link is never a file planner made (stagerecord.unlink_same checks the file type too)."""
    import os

    from planner.core.atomic import write_text
    from planner.core.errors import OutputError
    from planner.core.reportset import ReportSet

    target = tmp_path / "userfile"
    target.write_text("user data\n")
    out = tmp_path / "o"
    with pytest.raises(OutputError) as info:
        with ReportSet(out, set_name="plan r") as rs:
            write_text(rs.path("r.md"), "# r\n")
            staged = rs.path("r.md")
            os.unlink(staged)
            os.symlink(target, staged)  # another program, before the moves
            rs.commit()
    said = str(info.value)
    assert said == (f"{staged}: changed in the staging folder after planner wrote it, by another program (it is now "
                    f"a symbolic link); it was left there, and nothing was changed in {out}. Check what writes there "
                    "and run again."), said
    assert os.path.islink(staged) and target.read_text() == "user data\n"
    assert not (out / "r.md").exists()


@pytest.mark.parametrize("out, said", [("$HOME.yaml", "would name a file '$HOME.yaml' in the current directory"),
                                       ("~x.yaml", "would name a file '~x.yaml' in the current directory"),
                                       ("~/x.yaml", "would name a folder '~' in the current directory")])
def test_calibrate_out_left_unexpanded_names_a_file_or_a_folder(out: str, said: str) -> None:
    """h35a m1: calibrate --out '$HOME.yaml' or '~x.yaml' (the file itself) was said to name a folder."""
    r = CliRunner().invoke(main, ["calibrate", "--out", out])
    assert r.exit_code == 2
    assert said in r.output, r.output
