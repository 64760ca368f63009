"""Issue 28, minors of hostile pass 32 (tester B): M5, 'us--east-1' and 'us-east-1.' were taken as US regions (the
importer's test was a 'us-' prefix); M1, rows the catalog loader refuses for one reason were each a kind of their
own in the left-out summary, as the reason named the row's id (one line per row, unlike every other reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.skypilot import is_us
from tests.sky_helpers import aws_csv, run_cli


@pytest.mark.parametrize("region", ["us-east-1", "us-west-2", "us-central1", "us-east4", "us-midwest-1", "US-EAST-1"])
def test_us_regions_as_the_clouds_name_them(region: str) -> None:
    # AWS (us-east-1), GCP (us-central1, us-east4) and Lambda (us-midwest-1) name their US regions so
    assert is_us("aws", region)


@pytest.mark.parametrize("region", ["us--east-1", "us-east-1.", "us-", "us-east", "us-east-1a", "us-gov-west-1",
                                    "us-east-1,", "us_east_1", "usa-east-1"])
def test_no_us_region(region: str) -> None:
    assert not is_us("aws", region)


def test_a_malformed_us_region_is_said_so(tmp_path: Path) -> None:
    csv = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us--east-1,us-east-1a,x86_64",
                  "g5.2xlarge,A10G,1,8,32,,1.212,0.5,us-east-1.,us-east-1a,x86_64",
                  "p4d.24xlarge,A100,8,96,1152,,32.77,10,us-east-1,us-east-1a,x86_64")
    code, out = run_cli("catalog", "import-skypilot", str(csv), "--out", str(tmp_path / "o"))
    assert code == 0, out
    text = " ".join(out.split())
    # the reason ends in a question, so the same reason is a sentence of its own (h40b m5: it was '?, and the')
    assert ("left out 2: the region 'us--east-1' is no region name (the clouds write them in letters, digits and "
            "'-', e.g. us-east-1); did the file mean 'us-east-1'? The same reason with other values in 1 row "
            "(line 2: g5.xlarge, line 3: g5.2xlarge 'us-east-1.')") in text
    written = (tmp_path / "o" / "cloud.yaml").read_text()
    assert "us--east-1" not in written and "us-east-1." not in written


def test_rows_the_loader_refuses_alike_are_one_kind(tmp_path: Path) -> None:
    # six instance types of 300 characters: ids of 304 ('aws-' + the type), over the loader's 200
    rows = [f"g{c * 299},A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64" for c in "abcdef"]
    csv = aws_csv(tmp_path, *rows, "p4d.24xlarge,A100,8,96,1152,,32.77,10,us-east-1,us-east-1a,x86_64")
    code, out = run_cli("catalog", "import-skypilot", str(csv), "--out", str(tmp_path / "o"))
    assert code == 0, out
    text = " ".join(out.split())
    # one line for the six rows, naming the field the loader refuses, and the first rows (before: six lines,
    # one per row, as each reason named its row's id)
    assert text.count("left out") == 1, out
    assert "left out 6: the catalog would refuse its id: 'aws-gaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is 304 " \
           "characters long" in text
    # the loader's reason ends with its hint's full stop, so the rest is a sentence of its own (h40b m5)
    assert "characters). The same reason with other values in 5 rows (line 2: gaaaa" in text, text
    assert "(aws-g" not in text  # the id is not in the reason; the row is named beside it


# -- h32b M2: a key holding a backslash was quoted as repr writes it (two backslashes); an empty key was
# worded "key  is read as null" ----------------------------------------------------------------------------------

_SCENARIO = "name: x\nworkloads:\n  - name: a\n    model: llama-2-7b\n    task: infer\n"


@pytest.mark.parametrize("written, said", [
    ('"mi\\\\cro": 3', "unknown key 'mi\\cro'."),  # the file's YAML escape '\\' is one backslash in the key
    ("\"a\\\"b'c\": 3", "unknown key 'a\"b''c'."),  # a quote doubled, as YAML writes it in single quotes
    ('"micro\\tbatch": 3', "unknown key 'micro\\tbatch'."),  # a tab: repr's escape, the only backslash
])
def test_an_unknown_key_is_quoted_as_the_file_holds_it(tmp_path: Path, written: str, said: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(_SCENARIO + "    " + written + "\n")
    code, out = run_cli("plan", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert said in out, out


def test_an_empty_key_is_said_to_be_empty(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(_SCENARIO + "    ? \n    : 3\n")  # an explicit key with nothing after '?': YAML's null
    code, out = run_cli("plan", str(path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert f"Error: {path}:6: workloads[0]: an empty key is read as null in YAML 1.1, not as a text." in out


# -- h32b M3: the API's allowed_gpus as a numpy array or a generator got guesses at a name; a Fraction budget was
# shown as a float ------------------------------------------------------------------------------------------------

_API_SCENARIO = {"name": "x", "workloads": [{"name": "a", "model": "llama-2-7b", "task": "infer", "context": 512}]}


def _api_error(constraints: dict) -> str:
    from planner import plan
    from planner.core.errors import InputError

    with pytest.raises(InputError) as info:
        plan(dict(_API_SCENARIO, constraints=constraints))
    return str(info.value)


@pytest.mark.parametrize("make, kind", [(lambda: (g for g in ["l4"]), "generator"), (lambda: iter(["l4"]), "list_iterator")])
def test_an_iterable_that_is_no_list_is_told_to_be_one(make, kind: str) -> None:
    said = _api_error({"allowed_gpus": make()})
    assert said == (f"constraints.allowed_gpus: must be a name (text) or a list of names, not a {kind} (planner reads "
                    "lists). Give a list of names, e.g. ['l4', 'l40s'] (an array's .tolist(), a generator's list(...)).")


def test_a_numpy_array_is_told_to_be_a_list() -> None:
    np = pytest.importorskip("numpy")
    said = _api_error({"allowed_gpus": np.array(["l4", "l40s"])})
    assert "not a ndarray (planner reads lists). Give a list of names" in said
    assert "valid names" not in said


def test_a_fraction_budget_is_shown_as_given() -> None:
    from fractions import Fraction

    said = _api_error({"budget_usd": Fraction(1, 3)})
    assert said == ("constraints.budget_usd: 1/3 (0.3333333333333333) USD has a fraction of a cent. A quote adds "
                    "prices up in whole cents: write budget_usd: 0.33 or 0.34.")


# -- h32a m2: a report with a second hard link was replaced without a word (calibrate refuses such a file) ------------

def test_a_replaced_report_with_another_hard_link_is_said(tmp_path: Path) -> None:
    import os

    from planner.core.atomic import write_text
    from planner.core.reportset import ReportSet

    out = tmp_path / "o"
    for text in ("# first\n", "# second\n"):
        with ReportSet(out, set_name="plan r") as rs:
            write_text(rs.path("r.md"), text)
            rs.commit()
        if text == "# first\n":
            os.link(out / "r.md", tmp_path / "backup.md")  # the user's second name of the report
            assert rs.notes == []
    assert (out / "r.md").read_text() == "# second\n"
    assert (tmp_path / "backup.md").read_text() == "# first\n"  # the other name keeps the earlier report
    assert rs.notes == [f"{out / 'r.md'} had 1 other hard link(s): the new report is a new file, so the other names "
                        "keep the earlier report."], rs.notes


# -- h32a m4: a report the set gained, swapped for a symbolic link during the moves, was said as "Too many levels of
# symbolic links" (O_NOFOLLOW's ELOOP) ---------------------------------------------------------------------------------

def test_a_gained_report_swapped_for_a_link_is_said_to_be_one(tmp_path: Path) -> None:
    import errno
    import os

    from planner.core.access import recheck_gained

    template = tmp_path / "r.csv"
    template.write_text("a\n")
    new = tmp_path / "r.md"
    new.write_text("# r\n")
    ino = new.stat().st_ino
    new.unlink()
    new.symlink_to(template)  # another program swaps planner's new report for a link
    with pytest.raises(OSError) as info:
        recheck_gained(new, ino, [template])
    assert info.value.errno == errno.ELOOP
    assert info.value.strerror == ("it is now a symbolic link, not the file planner put there: another program "
                                   "replaced it")
    assert os.readlink(new) == str(template)  # left as it is


# -- h29a m1: two scenario files of one name replaced each other's reports in one --out without a word -------------

def test_a_set_planned_from_another_scenario_file_of_the_same_name_is_said(tmp_path: Path) -> None:
    import json

    from planner.core.atomic import write_text
    from planner.core.reportset import ReportSet

    out = tmp_path / "o"
    said = []
    for origin in ("a.yaml", "b.yaml", "b.yaml"):
        with ReportSet(out, set_name="plan lab", origin=tmp_path / origin) as rs:
            write_text(rs.path("lab.md"), f"# from {origin}\n")
            rs.commit()
        said.append(list(rs.notes))
        entry = json.loads((out / ".planner-reports.json").read_text())["files"]["lab.md"]
        assert entry["from"] == str(tmp_path / origin)  # the manifest records the file the set came from
    # the first run from b.yaml replaces a.yaml's reports, and says so; b.yaml again is its own set
    assert said == [[], [f"Replaced {out / 'lab.md'}, planned from another scenario file, {tmp_path / 'a.yaml'}, of "
                         "the same name (lab): reports are named by the scenario's name, so give one of the two files "
                         "another 'name:' to keep both sets."], []], said
    assert (out / "lab.md").read_text() == "# from b.yaml\n"


def test_a_set_from_the_api_records_no_file(tmp_path: Path) -> None:
    import json

    from planner.core.atomic import write_text
    from planner.core.reportset import ReportSet

    out = tmp_path / "o"
    with ReportSet(out, set_name="plan lab", origin=tmp_path / "a.yaml") as rs:
        write_text(rs.path("lab.md"), "# a\n")
        rs.commit()
    with ReportSet(out, set_name="plan lab") as rs:  # a scenario given as a mapping: no file to compare
        write_text(rs.path("lab.md"), "# mapping\n")
        rs.commit()
    assert rs.notes == []
    assert "from" not in json.loads((out / ".planner-reports.json").read_text())["files"]["lab.md"]


def test_a_row_named_by_its_instance_type_is_not_quoted_again(tmp_path: Path) -> None:
    """h33b N1's file: 81 instance types the loader refuses, one kind; each row named 'line 4: g2!x1', not
    'line 4: g2!x1 'g2!x1'' (the value that differs is the instance type itself, named already)."""
    rows = [f"g{i}!x{i},A10G,1,4,16,,1.5,0.4,us-east-1,us-east-1a,x86_64" for i in range(1, 4)]
    csv = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64", *rows)
    code, out = run_cli("catalog", "import-skypilot", str(csv), "--out", str(tmp_path / "o"))
    assert code == 0, out
    text = " ".join(out.split())
    assert "left out 3: the catalog would refuse its instance: 'g1!x1' holds '!';" in text
    assert "(line 3: g1!x1, line 4: g2!x2, line 5: g3!x3)" in text, text
