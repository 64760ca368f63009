"""Issue 28, hostile pass h12a (report /work/wt/reports/h12a.md), items 4-7 and the dangling --out link.

4. import-skypilot read the header's columns in quadratic time (a duplicate check against every earlier column):
   80,000 columns took 25 s, a million (8.9 MB, under the 32 MiB cap) over 2 minutes. The check is one dict pass
   now, a header over 256 columns is refused, and a row of more than 4,096 commas is refused before it is split.
5. Python's csv refuses a value over csv.field_size_limit() (131,072 characters unless changed, docs.python.org
   /3/library/csv.html#csv.field_size_limit); that was always blamed on an unclosed '"'. It is now said as what it
   is, at its line and column; a quote is blamed only when one is open.
6. An --out (or out=, or calibrate --out) with any folder named as planner's bookkeeping (the manifest, a staging
   folder, a temporary manifest) is refused: later runs into the folder above would fail or nag.
7. A relative --out, input or --catalog under a removed current folder is said to be that, not a standard output
   or missing-file problem; the API raises DestinationError / InputError, never a bare FileNotFoundError.
Minor: a dangling --out link is said to be one, with where it points (escaped).
"""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import ROOT, _scenario
from planner.catalog.skypilot import ImportProblem, import_file
from planner.cli.main import main
from planner.core.errors import DestinationError, InputError, OutputError

AWS_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
              "AvailabilityZone,Arch")
G6 = "g6.xlarge,L4,1,4,16,{gpu},0.8048,0.3,us-east-1,us-east-1a,x86_64"
G6_4X = "g6.4xlarge,L4,1,16,64,,1.3232,0.5,us-east-1,us-east-1a,x86_64"
SHIPPED_AWS = ROOT / "tests" / "data" / "skypilot" / "aws" / "vms.csv"
COMPARE = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"
WORKLOAD = ROOT / "scenarios" / "workloads" / "qlora-7b.yaml"
#: planner calibrate's own example (its --help), which it accepts up to the torch check
CALIBRATE = ["calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16", "--micro-batch", "2",
             "--seq-len", "512"]
GONE = "the current folder no longer exists (it was removed); cd to a folder and run again."


def _aws(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _refusal(path: Path) -> ImportProblem:
    try:
        import_file(path)
    except ImportProblem as exc:
        return exc
    raise AssertionError(f"{path} was imported")


# -- h12a #4: the header's width ------------------------------------------------------------------------------

def test_a_million_columns_are_refused_at_once(tmp_path: Path) -> None:
    # h12a's manycols.csv had 1,000,000 extra columns (the old reading ran past 2 minutes, quadratic in them); half
    # as many here (about 4.4 MB), as a million (about 8.9 MB) is over the 8 MiB cap since h33b N5/N6
    n = 500_000
    path = _aws(tmp_path, AWS_HEADER + "".join(f",c{i}" for i in range(n)) + "\n" + G6.format(gpu="") + "," * n + "\n")
    start = time.monotonic()
    exc = _refusal(path)
    took = time.monotonic() - start
    # AWS_HEADER has 10 commas, and each extra column one more
    assert str(exc) == (f"{path}: line 1: holds {10 + n:,} commas, more than the 4,096 a row of at most 256 "
                        "columns takes (a SkyPilot vms.csv's rows have 9 to 11 columns and a few commas inside quoted "
                        "values)")
    assert took < 10, took  # about 0.3 s on one core; generous for a loaded machine


def test_a_header_over_256_columns_is_refused_and_its_check_is_linear(tmp_path: Path) -> None:
    extra = 300  # 310 commas: under the comma cap, over the column cap
    path = _aws(tmp_path, AWS_HEADER + "".join(f",c{i}" for i in range(extra)) + "\n" + G6.format(gpu="") + "\n")
    exc = _refusal(path)
    assert str(exc) == (f"{path}: line 1: the header has {11 + extra} columns, more than the 256 the importer reads "
                        "(a SkyPilot vms.csv has 9 to 11: InstanceType, AcceleratorName, ...)")
    # a column named twice is still named with both places (the dict pass), at the cap's width
    cols = AWS_HEADER.split(",") + [f"c{i}" for i in range(244)] + ["Price"]
    assert len(cols) == 256
    path = _aws(tmp_path, ",".join(cols) + "\n")
    assert str(_refusal(path)) == (f"{path}: line 1: the header names column 'Price' twice (columns 7 and 256), so "
                                   "which one holds the value cannot be told")


def test_a_wider_row_is_left_out_or_refused_by_its_commas(tmp_path: Path) -> None:
    # 3 values past the last column: left out with its line, as before
    path = _aws(tmp_path, AWS_HEADER + "\n" + G6.format(gpu="") + ",,,\n" + G6_4X + "\n")
    res = import_file(path)
    assert [r.id for r in res.rows] == ["aws-g6-4xlarge"]
    assert res.skipped["g6.xlarge"] == ("line 2: 14 fields where the header has 11: 3 value(s) after the last column, "
                                        "Arch (a comma inside a value must be quoted)")
    # 5,000 on one row: refused before the csv module splits it
    path = _aws(tmp_path, AWS_HEADER + "\n" + G6_4X + "\n" + G6.format(gpu="") + "," * 5000 + "\n")
    assert str(_refusal(path)) == (f"{path}: line 3: holds 5,010 commas, more than the 4,096 a row of at most 256 "
                                   "columns takes (a SkyPilot vms.csv's rows have 9 to 11 columns and a few commas "
                                   "inside quoted values)")
    # a row that an open '"' runs on over lines is counted whole: line 2 holds 5 commas and leaves a '"' open,
    # lines 3-5 hold 2,001 each and two '"' (the row stays open): 5 + 2,001 = 2,006, 4,007, then 6,008 at line 5
    body = 'g6.xlarge,L4,1,4,16,"a\n' + ('",' + "," * 2000 + '"\n') * 3 + 'x"\n'
    path = _aws(tmp_path, AWS_HEADER + "\n" + body)
    assert str(_refusal(path)) == (f"{path}: lines 2 to 5 (one row: a '\"' on line 2 is open): holds 6,008 commas, "
                                   "more than the 4,096 a row of at most 256 columns takes (a SkyPilot vms.csv's rows "
                                   "have 9 to 11 columns and a few commas inside quoted values)")


def test_the_shipped_aws_sample_still_imports(tmp_path: Path) -> None:
    assert import_file(SHIPPED_AWS).rows  # quoted GpuInfo values with commas inside: under both caps


# -- h12a #5: a value over the csv module's limit -------------------------------------------------------------

LIMIT = 131_072  # csv.field_size_limit()'s default (the csv module's docs; checked below)


def test_the_limit_is_the_csv_default() -> None:
    assert csv.field_size_limit() == LIMIT


def test_a_closed_value_at_the_limit_imports_and_one_past_it_is_named_as_long(tmp_path: Path) -> None:
    def quoted(n: int) -> Path:
        return _aws(tmp_path, AWS_HEADER + "\n" + G6.format(gpu='"' + "x" * n + '"') + "\n" + G6_4X + "\n")

    assert len(import_file(quoted(LIMIT)).rows) == 2
    exc = _refusal(quoted(LIMIT + 1))
    message = str(exc)
    assert message == (f"{tmp_path / 'aws' / 'vms.csv'}: line 2, column GpuInfo: a value is longer than 128 KiB "
                       "(131,072 characters), the most the CSV reader takes in one value")
    assert exc.hint == "Give the provider's vms.csv itself, or shorten that value."
    assert "never closed" not in message and "'\"'" not in message


def test_an_unquoted_long_value_blames_no_quote(tmp_path: Path) -> None:
    # h12a's lf2.csv: 200,000 'x' and no '"' in the whole file
    path = _aws(tmp_path, AWS_HEADER + "\n" + G6.format(gpu="x" * 200_000) + "\n")
    exc = _refusal(path)
    assert str(exc) == (f"{path}: line 2, column GpuInfo: a value is longer than 128 KiB (131,072 characters), the "
                        "most the CSV reader takes in one value")
    # in the header: its column by number (no header to name it yet)
    path = _aws(tmp_path, AWS_HEADER + ',"' + "z" * 200_000 + '"\n' + G6.format(gpu="") + "\n")
    assert str(_refusal(path)) == (f"{path}: line 1, column 12: a value is longer than 128 KiB (131,072 characters), "
                                   "the most the CSV reader takes in one value")


def test_a_quote_is_blamed_when_one_is_open(tmp_path: Path) -> None:
    # open on its own line, and long there: both said
    path = _aws(tmp_path, AWS_HEADER + "\n" + G6.format(gpu='"' + "y" * 200_000) + "\n" + G6_4X + "\n")
    exc = _refusal(path)
    assert str(exc) == (f"{path}: line 2, column GpuInfo: a value is longer than 128 KiB (131,072 characters), the "
                        "most the CSV reader takes in one value; a '\"' there also opens a quoted value that is not "
                        "closed on that line")
    assert exc.hint is not None and exc.hint.startswith("Give the provider's vms.csv as SkyPilot publishes it")


def test_the_cli_says_it_in_one_line(tmp_path: Path) -> None:
    path = _aws(tmp_path, AWS_HEADER + "\n" + G6.format(gpu="x" * 200_000) + "\n")
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {path}: line 2, column GpuInfo: a value is longer than 128 KiB (131,072 characters), "
                        "the most the CSV reader takes in one value. Give the provider's vms.csv itself, or shorten "
                        "that value.\n"), r.stderr
    assert not (tmp_path / "o").exists()


# -- h12a #6: --out below a bookkeeping-named folder ------------------------------------------------------------

STAGING = "the name planner gives its staging folders (.planner-staging-...)"


@pytest.mark.parametrize("rel, part, what", [
    (".planner-reports.json", ".planner-reports.json",
     "the name of planner's report manifest, so a later run into {above} would take it for a manifest it cannot "
     "read and refuse to run"),
    (".planner-staging-abc/sub", ".planner-staging-abc",
     STAGING + ", so a later run into {above} would take it for one a stopped run left and say so each time"),
    ("..planner-reports.json.0123abcd.tmp/x", "..planner-reports.json.0123abcd.tmp",
     "the name planner gives a manifest while it writes it (..planner-reports.json.XXXXXXXX.tmp), so a later run "
     "into {above} would take it for one a stopped run left and say so each time"),
])
def test_plan_refuses_an_out_below_a_bookkeeping_name(tmp_path: Path, rel: str, part: str, what: str) -> None:
    out = tmp_path / "pd" / rel
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out), "--format",
                                  "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {out}: has the folder name '{part}', {what.format(above=tmp_path / 'pd')}. Give the "
                        "folder another name.\n"), r.stderr
    assert not (tmp_path / "pd").exists()


def test_compare_import_and_the_api_refuse_it_too(tmp_path: Path) -> None:
    import planner

    out = tmp_path / "ps" / ".planner-staging-x"
    line = (f"{out}: has the folder name '.planner-staging-x', {STAGING}, so a later run into {tmp_path / 'ps'} would "
            "take it for one a stopped run left and say so each time. Give the folder another name.")
    for args in (["compare", str(COMPARE), "--out", str(out)],
                 ["catalog", "import-skypilot", str(SHIPPED_AWS), "--out", str(out)]):
        r = CliRunner().invoke(main, args)
        assert (r.exit_code, r.stderr) == (2, f"Error: {line}\n"), (args, r.output)
    raised = None
    try:
        planner.plan(str(_scenario(tmp_path / "a.yaml", "x")), out=str(out), format="json")
    except DestinationError as exc:
        raised = exc
    assert isinstance(raised, InputError) and isinstance(raised, OutputError)
    assert str(raised) == line
    assert not (tmp_path / "ps").exists()


def test_a_link_into_a_staging_named_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real" / ".planner-staging-q"
    real.mkdir(parents=True)
    (tmp_path / "lnk").symlink_to(real)
    out = tmp_path / "lnk" / "sub"
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {out}: has the folder name '.planner-staging-q' (the links in it lead into {real}), "
                        f"{STAGING}, so a later run into {tmp_path / 'real'} would take it for one a stopped run left "
                        "and say so each time. Give the folder another name.\n"), r.stderr
    assert list(real.iterdir()) == []


def test_calibrate_refuses_a_bookkeeping_named_file_or_folder_before_it_measures(tmp_path: Path) -> None:
    cases = [(tmp_path / "cc" / ".planner-reports.json", "file", ".planner-reports.json",
              f"the name of planner's report manifest, so a later run into {tmp_path / 'cc'} would take it for a "
              "manifest it cannot read and refuse to run"),
             (tmp_path / ".planner-staging-1" / "c.yaml", "folder", ".planner-staging-1",
              f"{STAGING}, so a later run into {tmp_path} would take it for one a stopped run left and say so each "
              "time")]
    for out, kind, part, what in cases:
        r = CliRunner().invoke(main, [*CALIBRATE, "--out", str(out)])
        assert r.exit_code == 2, r.output
        # refused before the torch check (no "needs PyTorch" line)
        assert r.stderr == f"Error: {out}: has the {kind} name '{part}', {what}. Give the {kind} another name.\n", \
            r.stderr


def test_an_ordinary_out_beside_them_still_works(tmp_path: Path) -> None:
    out = tmp_path / "planner-staging-like" / ".planner-stage"  # near the names, not one of them
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", str(out), "--format",
                                  "json"])
    assert r.exit_code == 0, r.output
    assert (out / "x.json").is_file()


# -- h12a #7: the current folder removed ---------------------------------------------------------------------

@pytest.fixture
def gone_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder, removed (``mkdir d; cd d; rmdir ../d``); monkeypatch goes back afterwards."""
    d = tmp_path / "d"
    d.mkdir()
    monkeypatch.chdir(d)
    d.rmdir()
    with pytest.raises(FileNotFoundError):
        os.getcwd()
    return tmp_path


@pytest.mark.parametrize("args, path", [
    (["plan", "{S}", "--out", "o", "--format", "json"], "o"),
    (["plan", "{S}", "--format", "json"], "reports"),  # the default --out
    (["compare", str(COMPARE), "--out", "o"], "o"),
    (["catalog", "import-skypilot", str(SHIPPED_AWS), "--out", "o"], "o"),
    ([*CALIBRATE, "--out", "o/cal.yaml"], "o/cal.yaml"),
])
def test_a_relative_out_under_a_removed_folder_is_said_to_be_that(gone_cwd: Path, args: list[str],
                                                                   path: str) -> None:
    scenario = str(_scenario(gone_cwd / "a.yaml", "x"))
    r = CliRunner().invoke(main, [a.replace("{S}", scenario) for a in args])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"Error: {path}: {GONE}\n", r.stderr


@pytest.mark.parametrize("args, path", [
    (["plan", "a.yaml", "--out", "{T}/o"], "a.yaml"),
    (["estimate", "--workload", "w.yaml"], "w.yaml"),
    (["fit", "--workload", "w.yaml", "--gpu", "rtx-4090", "--micro-batch", "max"], "w.yaml"),
    (["catalog", "import-skypilot", "aws/vms.csv", "--out", "{T}/o"], "aws/vms.csv"),
])
def test_a_relative_input_under_a_removed_folder_is_said_to_be_that(gone_cwd: Path, args: list[str],
                                                                     path: str) -> None:
    # the user meant the files in the folder that was removed (nothing can be found in it any more)
    r = CliRunner().invoke(main, [a.replace("{T}", str(gone_cwd)) for a in args])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {path}: cannot be found: the current folder no longer exists (it was removed), and "
                        "the path is relative to it. cd to a folder and run again.\n"), r.stderr
    assert not (gone_cwd / "o").exists()


def test_a_relative_input_that_can_still_be_found_is_read(gone_cwd: Path) -> None:
    # '..' of a removed folder is still its old parent on Linux (the path walk follows the folder's own parent
    # link): such a path is read, and only a relative --out is refused
    _scenario(gone_cwd / "a.yaml", "x")
    r = CliRunner().invoke(main, ["plan", "../a.yaml", "--out", str(gone_cwd / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert (gone_cwd / "o" / "x.json").is_file()


def test_a_relative_catalog_under_a_removed_folder_is_said_to_be_that(gone_cwd: Path) -> None:
    r = CliRunner().invoke(main, ["estimate", "--workload", str(WORKLOAD), "--catalog", "cat"])
    assert r.exit_code == 2, r.output
    assert r.stderr == ("Error: cat: cannot be found: the current folder no longer exists (it was removed), and the "
                        "path is relative to it. cd to a folder and run again.\n"), r.stderr


def test_the_api_raises_planner_errors_under_a_removed_folder(gone_cwd: Path) -> None:
    import planner

    scenario = str(_scenario(gone_cwd / "a.yaml", "x"))
    raised: Exception | None = None
    try:
        planner.plan(scenario, out="o", format="json")
    except DestinationError as exc:
        raised = exc
    assert isinstance(raised, OutputError) and isinstance(raised, InputError)
    assert str(raised) == f"o: {GONE}"
    raised = None
    try:
        planner.plan("a.yaml")
    except InputError as exc:
        raised = exc
    assert raised is not None
    assert str(raised) == ("a.yaml: cannot be found: the current folder no longer exists (it was removed), and the "
                           "path is relative to it. cd to a folder and run again.")


def test_an_absolute_out_under_a_removed_folder_still_works(gone_cwd: Path) -> None:
    out = gone_cwd / "o"
    r = CliRunner().invoke(main, ["plan", str(_scenario(gone_cwd / "a.yaml", "x")), "--out", str(out), "--format",
                                  "json"])
    assert r.exit_code == 0, r.output
    assert (out / "x.json").is_file()


# -- minor: a dangling --out link ---------------------------------------------------------------------------------

@pytest.mark.parametrize("target, shown", [("missing/sub", "missing/sub"), ("miss\x1b]0;x\x07", "miss\\x1b]0;x\\x07")])
@pytest.mark.parametrize("below", ["", "/a/b"])
def test_a_dangling_out_link_is_said_to_be_one(tmp_path: Path, target: str, shown: str, below: str) -> None:
    link = tmp_path / "dl"
    link.symlink_to(target)
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", f"{link}{below}",
                                  "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {link}: is a link to a folder that does not exist ({link} -> {shown}). Create that "
                        "folder, or give --out a directory that exists or can be created.\n"), r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "dl"]  # nothing made where it points
