"""Issue 28, hostile pass 35's open minors, mended in the next stop.

- 35B: zones of one region at different on-demand prices wrote the lowest on-demand price beside a zone's spot price
  that was below its own zone's on-demand price but above the written one ($1 on-demand, $5 spot).
- 35B: a GCP VM row of a machine type planner's table does not list was said to have "no GPU" though it named one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.skypilot import import_file
from tests.sky_helpers import aws_csv

GCP_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
              "AvailabilityZone")


def _gcp_csv(tmp_path: Path, *rows: str) -> Path:
    """A gcp/vms.csv of ``rows`` under the GCP header."""
    from tests.sky_helpers import vms_csv

    return vms_csv(tmp_path, "gcp", GCP_HEADER, *rows)


def test_a_spot_price_above_the_written_on_demand_price_is_no_offer(tmp_path: Path) -> None:
    # zone a: $1 on demand, no spot; zone b: $10 on demand, $5 spot (below its own $10). The region's price is its
    # cheapest zone's, $1 (docs/catalog.md), so a $5 spot is no discount on what is written
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,,us-east-1,us-east-1a,x86_64",
                   "g5.xlarge,A10G,1,4,16,,10.0,5.0,us-east-1,us-east-1b,x86_64")
    row = import_file(path).rows[0]
    assert row.usd_per_hour == 1.0
    assert row.spot_usd_per_hour is None
    assert row.spot_usd_per_hour_range is None
    assert "Spot prices not below the written on-demand $1 left out (zone 'us-east-1b')." in row.notes, row.notes


def test_a_spot_below_the_written_on_demand_price_stays_beside_one_that_is_not(tmp_path: Path) -> None:
    # zone c's $0.5 spot is below the written $1: kept, and the range holds it alone (zone b's $5 left out)
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,,us-east-1,us-east-1a,x86_64",
                   "g5.xlarge,A10G,1,4,16,,10.0,5.0,us-east-1,us-east-1b,x86_64",
                   "g5.xlarge,A10G,1,4,16,,2.0,0.5,us-east-1,us-east-1c,x86_64")
    row = import_file(path).rows[0]
    assert (row.usd_per_hour, row.spot_usd_per_hour, row.spot_usd_per_hour_range) == (1.0, 0.5, None)
    assert "'us-east-1b'" in row.notes, row.notes


def test_an_unknown_gcp_machine_type_naming_gpus_is_not_said_to_have_none(tmp_path: Path) -> None:
    path = _gcp_csv(tmp_path, "zz9-gpu-8g,B300,8,224,3968,,50,,us-central1,us-central1-a",
                    "a2-highgpu-1g,A100,1,12,85,,1,,us-central1,us-central1-a",
                    ",A100,1,,,,2,,us-central1,us-central1-a")
    result = import_file(path)
    why = result.skipped["zz9-gpu-8g"]
    assert why.startswith("line 2: the row names 'B300' GPUs, but machine type zz9-gpu-8g is not one planner knows "
                          "the GPUs of"), why
    assert "no GPU" not in why


def test_a_comma_list_of_tokens_per_month_gets_the_repeated_option_as_the_hint() -> None:
    # h35b: 'a=100M,a=200M' was read as workload 'a=100M,a' with a count of 200M, hinted with the valid names only
    from click.testing import CliRunner

    from planner import compare
    from planner.cli.main import main
    from planner.core.errors import InputError

    scenario = str(Path(__file__).resolve().parent.parent / "scenarios" / "compare-qlora-7b-12gb.yaml")
    # h37a 3: the split is offered only where it would pass; 'x y' is no workload of the scenario (its one workload
    # is qlora-7b), so the workloads are listed instead (the split pasted was refused: "no workload 'x y'")
    r = CliRunner().invoke(main, ["compare", scenario, "--tokens-per-month", "qlora-7b=100M,x y=200M"])
    assert r.exit_code == 2
    assert r.output.strip().endswith(
        "'qlora-7b=100M,x y=200M' is a list of 2 counts in one value, separated by commas. A list is given as one "
        "--tokens-per-month NAME=COUNT per workload, e.g. --tokens-per-month qlora-7b=200M. Valid: qlora-7b."), r.output
    try:
        compare(scenario, tokens_per_month="qlora-7b=100M,x y=2M")
    except InputError as exc:
        said = str(exc)
    assert said.endswith("Give a mapping, one key per workload, e.g. {'qlora-7b': '200M'}. Valid: qlora-7b."), said


# -- 35A m2-m12: an --out hint is the path meant, pastes into bash as that path, and is not refused in turn --------

def _hint_of(out: str, tmp_path: Path, monkeypatch) -> str:
    import re

    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    scenario = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")
    r = CliRunner().invoke(main, ["plan", scenario, "--out", out, "--format", "json"])
    assert r.exit_code == 2, r.output
    m = re.search(r"Write (?:it unquoted \()?--out (.*?)(?:\), or give the path itself| without it)?\.\n$", r.output)
    assert m is not None, r.output
    return m.group(1)


def _bash_reads(word: str, home: str) -> str:
    import subprocess

    # what bash makes of the hint as one argument: printf prints it back; HOME set so '~' and "$HOME" are known
    return subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True, check=True,
                          env={"HOME": home, "PATH": "/usr/bin:/bin"}).stdout


@pytest.mark.parametrize("out, reads", [
    ("$'a'$'b'", "ab"),            # bash reads "$'a'$'b'" as 'ab' (bash(1), QUOTING): was hinted 'a'"'"'$'"'"'b'
    ("'a'/'b'", "a/b"),            # was hinted "a'/'b"
    ("$' lead'", "lead"),          # ' lead' would be refused in turn (a blank at the folder's start)
    ("$'-'", "./-"),               # '-' would be refused in turn (standard output's name)
    ("$'x'/-y", "x/-y"),
    ("~/x y", "{home}/x y"),       # was hinted '--out ~/x y', two words to bash
    ("$HOME/a b", "{home}/a b"),
    ("$'~'/x", "{home}/x"),        # '~/x' quoted would be refused as an unexpanded '~'
])
def test_an_out_hint_pastes_as_the_path_meant(tmp_path: Path, monkeypatch, out: str, reads: str) -> None:
    from planner.core.outhint import settled

    home = str(tmp_path / "home")
    hint = _hint_of(out, tmp_path, monkeypatch)
    got = _bash_reads(hint, home)
    assert got == reads.format(home=home), (out, hint, got)
    if not reads.startswith("{home}"):  # the path the hint names passes the same checks (no further hint)
        assert settled(got) is not None and _bash_reads(settled(got), home) == got


def test_a_hint_with_no_start_bash_expands_gives_none() -> None:
    from planner.core.outhint import settled

    # "~'": a quote left in the first folder; bash expands no such start, and no name can be told
    assert settled("~'; rm -rf ~") is None


def test_the_manifest_records_the_scenario_file_a_link_points_to(tmp_path: Path) -> None:
    # h35a m4: 'from' was the link's path, so a link retargeted to another file of the same name went unsaid
    import json

    from planner.core.atomic import write_text
    from planner.core.reportset import ReportSet

    (tmp_path / "a.yaml").write_text("name: lab\n")
    (tmp_path / "b.yaml").write_text("name: lab\n")
    link = tmp_path / "scenario.yaml"
    out = tmp_path / "o"
    said = []
    for target in ("a.yaml", "b.yaml"):
        if link.is_symlink():
            link.unlink()
        link.symlink_to(target)
        with ReportSet(out, set_name="plan lab", origin=link) as rs:
            write_text(rs.path("lab.md"), f"# from {target}\n")
            rs.commit()
        said.append(list(rs.notes))
        entry = json.loads((out / ".planner-reports.json").read_text())["files"]["lab.md"]
        assert entry["from"] == str(tmp_path / target)
    assert said[0] == [] and len(said[1]) == 1 and "planned from another scenario file" in said[1][0], said


def test_an_error_about_standard_output_carries_a_removed_leftover(tmp_path: Path) -> None:
    """h35a m7: with standard output failing, "Removed <a stopped run's staging folder> ..." was lost (only
    "Left"/"Kept" notes were carried); every note of the set is now said with the Error line."""
    import hashlib
    import json

    from planner.cli.common import files_done
    from planner.core import reportset
    from planner.core.atomic import write_text
    from planner.core.interrupt import SignalGuard
    from planner.core.reportset import ReportSet

    out = tmp_path / "o"
    with ReportSet(out, set_name="plan r") as rs:
        write_text(rs.path("r.json"), "{}\n")
        rs.commit()
    assert hashlib.sha256(b"{}\n").hexdigest() in json.dumps(json.loads((out / ".planner-reports.json").read_text()))
    dead = out / (reportset.STAGING_PREFIX + "dead5678")  # a run killed during its moves: '0.old', listed, kept
    dead.mkdir(mode=0o700)
    (dead / "0.old").write_bytes(b"{}\n")  # whose SHA-256 the manifest lists
    (dead / reportset.STAGING_MARK).write_bytes(reportset.MARK_HEADER + b'"0.old"\n')
    guard = SignalGuard()
    with ReportSet(out, set_name="plan r", guard=guard) as rs:
        write_text(rs.path("r.json"), "{}\n")
        rs.commit()
    assert not dead.exists()
    said = files_done(guard)
    assert said.startswith(f" The reports were written, whole: {out / 'r.json'}. Removed {dead}, which a stopped "
                           "planner run left"), said


def test_one_skypilot_file_given_by_two_paths_is_refused_before_reading(tmp_path: Path) -> None:
    # h35b: 'vms.csv link.csv' read the file twice, then refused it as two files giving one instance
    from tests.sky_helpers import run_cli

    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,,us-east-1,us-east-1a,x86_64")
    link = tmp_path / "link.csv"
    link.symlink_to(path)
    code, out = run_cli("catalog", "import-skypilot", str(path), str(link), "--provider", "aws", "--out",
                        str(tmp_path / "o"))
    assert code == 2
    assert " ".join(out.split()) == (f"Error: FILE...: {link} is {path}, given by another path (a link or another "
                                     "spelling). Give each file once."), out
    assert not (tmp_path / "o").exists()


def test_a_gcp_vm_row_in_a_zone_without_its_gpu_row_is_counted(tmp_path: Path) -> None:
    # h35b: the zone b row (no A100 row in zone b) was dropped without a word; the machine is written from zone a
    from tests.sky_helpers import run_cli

    path = _gcp_csv(tmp_path, "a2-highgpu-1g,A100,1,12,85,,1,,us-central1,us-central1-a",
                    ",A100,1,,,,2,,us-central1,us-central1-a",
                    "a2-highgpu-1g,A100,1,12,85,,0.5,,us-central1,us-central1-b")
    result = import_file(path)
    assert [r.usd_per_hour for r in result.rows] == [3.0]
    assert result.no_gpu_row_lines == ["4"]
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 0, out
    assert "GCP VM row in a zone with no row of its GPUs (not offered there): not priced there" in " ".join(
        out.split()), out


@pytest.mark.parametrize("region", ["us-isob-east-1", "us-iso-east-1", "us-isof-south-1", "us-gov-west-1"])
def test_aws_isolated_and_govcloud_regions_are_not_us_list_prices(region: str) -> None:
    # h34b m8: us-isob-east-1 was taken as a US region anyone can rent in (AWS's isolated regions, like GovCloud,
    # sell to cleared accounts only)
    from planner.catalog.skypilot import is_us

    assert not is_us("aws", region)
    assert is_us("aws", "us-east-1") and is_us("gcp", "us-central1")


def test_a_zone_in_the_region_column_is_said_to_be_one(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,,us-east-1a,us-east-1,x86_64")
    why = import_file(path).skipped["g5.xlarge"]
    assert why == ("line 2: the region 'us-east-1a' is an availability zone's name (a zone of us-east-1), not a "
                   "region's: are the Region and AvailabilityZone columns swapped?"), why


# -- h36b 3: UTF-32 text was called UTF-16, with an iconv hint that made a file of NULs; a BOM was "byte 0xff" ------

@pytest.mark.parametrize("codec, said, iconv", [
    ("utf-32-le", "UTF-32 (little-endian) text (3 of every 4 bytes are NUL)", "UTF-32LE"),
    ("utf-32-be", "UTF-32 (big-endian) text (3 of every 4 bytes are NUL)", "UTF-32BE"),
    ("utf-16-le", "UTF-16 (little-endian) text (every other byte is NUL)", "UTF-16LE"),
    ("utf-16-be", "UTF-16 (big-endian) text (every other byte is NUL)", "UTF-16BE"),
    ("utf-16", "UTF-16 (little-endian) text, by its byte order mark", "UTF-16"),  # Python writes the BOM, LE
    ("utf-32", "UTF-32 (little-endian) text, by its byte order mark", "UTF-32"),
])
def test_utf16_and_utf32_files_are_named_with_an_iconv_that_reads_them(tmp_path: Path, monkeypatch, codec: str,
                                                                        said: str, iconv: str) -> None:
    import shutil
    import subprocess

    from click.testing import CliRunner

    from planner.cli.main import main

    text = "name: a\nworkloads: []\n"
    (tmp_path / "u.yaml").write_bytes(text.encode(codec))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", "u.yaml"])
    assert r.exit_code == 2
    assert r.output == (f"Error: u.yaml: is {said}, not UTF-8. Save it as UTF-8 (e.g. iconv -f {iconv} -t UTF-8 FILE > "
                        "NEW); a planner file is plain UTF-8 text.\n"), r.output
    if shutil.which("iconv"):  # the hint, run: it gives the text back, no NULs
        out = subprocess.run(["iconv", "-f", iconv, "-t", "UTF-8", "u.yaml"], capture_output=True, check=True).stdout
        assert out == text.encode()


# -- h36b 4, 5: config.json nesting capped at the 200 the message states; a noncharacter's reason -------------------

@pytest.mark.parametrize("depth, refused", [(200, False), (201, True), (500, True)])
def test_a_config_json_nested_past_200_is_refused_as_said(tmp_path: Path, depth: int, refused: bool) -> None:
    # depth counts the top object: '{"a": [[...]]}' with depth - 1 lists; json itself reads about 1,000 levels
    from planner.core.jsonio import load_json_mapping
    from planner.core.yamlrules import YamlProblem

    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama",\n "a": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}")
    try:
        load_json_mapping(path)
        said = None
    except YamlProblem as exc:
        said = (exc.problem, exc.line)
    if refused:
        assert said == ("is nested too deeply (more than 200 mappings or lists one inside another)", 2), said
    else:
        assert said is None


def test_a_noncharacter_in_a_config_json_is_not_said_to_be_unwritable_as_utf8(tmp_path: Path) -> None:
    from planner.core.jsonio import load_json_mapping
    from planner.core.yamlrules import YamlProblem

    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama", "torch_dtype": "a\\ufffeb"}')
    try:
        load_json_mapping(path)
    except YamlProblem as exc:
        said = exc.problem
    # f40c (h39b 13): the reason every reader now gives for any of the 66 noncharacters (names.NONCHARACTER_WHY),
    # still not "cannot be written as UTF-8"
    assert said == ("invalid text at key 'torch_dtype': it holds U+FFFE, a Unicode noncharacter, which no text planner "
                    "reads may hold: it is no character for text that is exchanged (The Unicode Standard, 23.7), and "
                    "the workbook's XML forbids U+FFFE and U+FFFF and discourages the others (XML 1.0, 2.2)"), said


def test_a_skypilot_csv_in_utf16_without_a_bom_is_named_so(tmp_path: Path) -> None:
    # h36b 3 (related): said as "line 1 column 2: holds U+0000 (NUL) ... Remove it"
    from tests.sky_helpers import run_cli

    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,,us-east-1,us-east-1a,x86_64")
    path.write_bytes(path.read_text().encode("utf-16-le"))
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert " ".join(out.split()) == (f"Error: {path}: not UTF-8: it is UTF-16 (little-endian) text (every other byte is "
                                     "NUL). Save it as UTF-8 (e.g. iconv -f UTF-16LE -t UTF-8 FILE > NEW), or give "
                                     "the provider's vms.csv as SkyPilot publishes it, then import it again."), out


@pytest.mark.parametrize("out, hint", [
    ("$'-'", "Give out='./-'."),                          # '-' is refused in turn (options), was hinted
    ("$' lead'", "Give out='lead'."),                     # ' lead' is refused in turn (a blank), was hinted
    ("$'~'/x", "Give out=os.path.expanduser('~/x')."),    # '~/x' is refused in turn (Python expands no '~')
])
def test_an_api_out_hint_is_not_refused_in_turn(tmp_path: Path, monkeypatch, out: str, hint: str) -> None:
    from planner import plan
    from planner.core.errors import InputError

    monkeypatch.chdir(tmp_path)
    scenario = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")
    try:
        plan(scenario, out=out)
        said = None
    except InputError as exc:
        said = str(exc)
    assert said is not None and said.endswith(hint), said
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind, shown", [("link", "a symbolic link"), ("file", "a file")])
def test_a_link_or_file_named_like_a_staging_folder_is_said_and_kept(tmp_path: Path, kind: str, shown: str) -> None:
    # h35a: a symlink named '.planner-staging-x' was passed over without a word
    from planner.core.atomic import write_text
    from planner.core.reportset import ReportSet
    from planner.core.stagerecord import STAGING_PREFIX

    out = tmp_path / "o"
    out.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    odd = out / (STAGING_PREFIX + "linked01")
    if kind == "link":
        odd.symlink_to(target)
    else:
        odd.write_text("mine\n")
    with ReportSet(out, set_name="plan r") as rs:
        write_text(rs.path("r.json"), "{}\n")
        rs.commit()
    assert odd.is_symlink() if kind == "link" else odd.read_text() == "mine\n"
    assert target.is_dir() and list(target.iterdir()) == []
    assert rs.notes == [f"Kept {odd}: it is named like planner's staging folders but is {shown}, which planner never "
                        "makes there; planner leaves it."], rs.notes


@pytest.mark.slow  # a few seconds (a bash per hint): CI's second step runs it (pyproject addopts)
def test_every_out_hint_pastes_into_bash_as_a_path_the_checks_take(tmp_path: Path, monkeypatch) -> None:
    """Fuzz: --out texts built of quotes, '$', '~', '-', blanks, escapes and letters. Each refusal's hint ("Write
    --out X") is given to bash as one word; what bash makes of it must pass every check (no hint refused in turn,
    h35a m2-m12), with the hint's variables and '~' expanded as bash does. The seed is fixed: the same texts each run."""
    import random
    import re
    import subprocess

    import click

    from planner.cli.outopt import out_dir_option
    from planner.cli.plan import plan as plan_cmd

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OLDPWD", raising=False)  # so '~-' is no expandable start here, as in the bash below
    home = str(tmp_path / "home")
    monkeypatch.setenv("HOME", home)
    param = next(p for p in plan_cmd.params if p.name == "out_dir")
    ctx = click.Context(plan_cmd)

    def refusal(text: str) -> str | None:
        try:
            out_dir_option(ctx, param, text)
        except click.exceptions.ClickException as exc:
            return exc.format_message()
        return None

    pieces = ["'", '"', "$", "$'", "~", "-", " ", "/", "a", "b", "\\", "\u201c", "\u201d", ".", "\t", "x y", "*",
              "{a,b}", "\\x41", "\\t", "\\'", "$HOME"]
    rng = random.Random(36)
    hints, wrong = 0, []
    for _ in range(600):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        said = refusal(text)
        m = re.search(r"Write (?:it unquoted \()?--out (.*?)(?:\), or give the path itself| without it(?: \(and the "
                      r"others of its kind\))?)?\.$", said or "")
        if m is None:
            continue
        hints += 1
        got = subprocess.run(["bash", "-c", f"printf %s {m.group(1)}"], capture_output=True, text=True,
                             env={"HOME": home, "PATH": "/usr/bin:/bin"})
        if got.returncode != 0 or refusal(got.stdout) is not None:
            wrong.append((text, m.group(1), got.stdout, got.stderr))
    assert hints > 100  # the texts make hints at all
    assert wrong == []
