"""Issue 28, hostile pass 9 leftovers (reports h9a #5, h9b #5-#8 and its minor list).

1. Names that differ only in case clash (planner.core.names.clash_key): two workloads of one scenario, and two
   report sets in one --out, since a case-insensitive file system (macOS, Windows) stores 'chat.json' and
   'Chat.json' as one file. A scenario named as a Windows device ('con', 'NUL', 'lpt1') is refused.
2. import-skypilot writes an upper-case AWS/GCP/Azure/Lambda region in lower case and says so; a spot price at
   or above on-demand, read as no spot offer, is said too. A hand-written cloud overlay's upper-case region of
   those clouds is refused.
3. A base-60 value's hint reads the field's unit: hours and minutes for an '_hours' field, seconds for an '_s'
   field, no clock reading for a count.
4. Locale spellings get hints: thousands grouped by a space, no-break space or apostrophe ('16 384', "16'384"),
   a '.' grouping thousands ('16.384' where a count belongs), a fraction where a count belongs, '.5 GiB',
   full-width units, units written out ('6000 MT/s', '0.165 kW'), and dates in other orders ('15.01.2026',
   20260115).
5. budget_usd in fractions of a cent, an upper-case quant_method, a blank overlay path, and an --out so long
   that the temporary path is over PATH_MAX each get their own line.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import _scenario
from planner.cli.main import main
from test_safety10 import LLAMA_7B, _refusal
from test_safety7c import _aws

SCENARIO = "name: s\nworkloads:\n  - model: llama-3.1-8b\n    task: train\n    {line}\n"


def _error(tmp_path: Path, text: str, *args: str) -> str:
    """The stderr of planning the scenario ``text``: exit 2 required."""
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(path), "--out", str(tmp_path / "out"), *args])
    assert r.exit_code == 2, r.output
    return r.stderr


# -- 1. names that differ only in case -----------------------------------------------------------------------

def test_two_workloads_whose_names_differ_only_in_case_clash(tmp_path: Path) -> None:
    err = _error(tmp_path, "name: s\nworkloads:\n  - {name: chat, model: llama-3.1-8b, task: infer}\n"
                           "  - {name: Chat, model: llama-3.1-8b, task: infer}\n")
    assert err == (f"Error: {tmp_path / 's.yaml'}:4: workloads[1].name: duplicate workload name 'Chat' (also "
                   "workloads[0], the same name in another case: 'Chat' and 'chat' differ only in upper and lower "
                   "case, so they read as one name). Give each workload its own name.\n"), err


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_set_whose_name_differs_only_in_case_from_another_sets_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    r = runner.invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "chat")), "--out", str(out)])
    assert r.exit_code == 0, r.output
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for name in ("Chat", "CHAT"):  # 'straße' and 'STRASSE' casefold alike too (clash_key)
        r = runner.invoke(main, ["plan", str(_scenario(tmp_path / "b.yaml", name)), "--out", str(out)])
        assert r.exit_code == 2, r.output
        assert f"{out / name}." in r.stderr and ", a report of 'plan chat', and the two names differ only in upper " \
            "and lower case, which a case-insensitive file system (macOS, Windows) stores as one file." in r.stderr, \
            r.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing written, nothing removed
    r = runner.invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "chat")), "--out", str(out)])
    assert r.exit_code == 0, r.output  # the same set is replaced as before


def test_clash_key_folds_case_after_nfkc() -> None:
    from planner.core.names import clash_key

    assert clash_key("straße") == clash_key("STRASSE") == "strasse"  # Unicode CaseFolding.txt: U+00DF -> 'ss'
    assert clash_key("ｃｈａｔ") == clash_key("Chat")  # full-width letters: NFKC first
    assert clash_key("chat-1") != clash_key("chat-2")


@pytest.mark.parametrize("name, device", [("con", "CON"), ("NUL", "NUL"), ("lpt1", "LPT1"), ("Aux.v2", "AUX"),
                                          ("com\u00b9", "COM1")])
def test_a_scenario_named_as_a_windows_device_is_refused(tmp_path: Path, name: str, device: str) -> None:
    err = _error(tmp_path, f"name: '{name}'\nworkloads:\n  - {{model: llama-3.1-8b, task: infer}}\n")
    assert f"s.yaml:1: name: name {name!r} gives the report names " in err, err
    assert f"which Windows reserves for the device {device} (a report folder copied there loses them)" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["console", "com10", "nul-test", "aux_x"])
def test_names_that_only_begin_as_a_device_are_kept(name: str) -> None:
    from planner.core.names import safe_stem, windows_reserved

    assert windows_reserved(name) == "" and safe_stem(name) == name


# -- 2. import-skypilot: region case, spot above on-demand ---------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_import_lowers_an_upper_case_region_and_says_spot_above_on_demand(tmp_path: Path) -> None:
    # g6.xlarge priced as in catalogs/v8/aws/vms.csv; its spot raised above on-demand, its region in capitals
    path = _aws(tmp_path, "g6.xlarge,L4,1.0,4.0,16.0,L4,0.8048,0.9,US-EAST-1,use1-az1,x86_64\n"
                          "g6.2xlarge,L4,1.0,8.0,32.0,L4,0.9776,0.4,us-east-1,use1-az1,x86_64\n")
    out = tmp_path / "ov"
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(path), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "  spot price at or above on-demand read as no spot offer: 1 row(s) (line 2)\n" in r.stderr, r.stderr
    assert "  region in upper case written in lower case, as the cloud names it: 1 row(s) (line 2)\n" in r.stderr
    text = (out / "cloud.yaml").read_text()
    assert 'region: "US-EAST-1"' not in text and text.count('region: "us-east-1"') == 2, text
    r = CliRunner().invoke(main, ["catalog", "cloud", "--catalog", str(out)])
    assert r.exit_code == 0, r.output  # the overlay written loads


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_hand_written_upper_case_aws_region_is_refused(tmp_path: Path) -> None:
    path = _aws(tmp_path, "g6.xlarge,L4,1.0,4.0,16.0,L4,0.8048,0.26,us-east-1,use1-az1,x86_64\n")
    out = tmp_path / "ov"
    assert CliRunner().invoke(main, ["catalog", "import-skypilot", str(path), "--out", str(out)]).exit_code == 0
    (tmp_path / "ov2").mkdir()
    (tmp_path / "ov2" / "cloud.yaml").write_text((out / "cloud.yaml").read_text().replace('"us-east-1"',
                                                                                        '"US-East-1"'))
    r = CliRunner().invoke(main, ["catalog", "cloud", "--catalog", str(tmp_path / "ov2")])
    assert r.exit_code == 2, r.output
    assert ".region: region 'US-East-1' has upper-case letters, and aws names its regions in lower case. Write " \
        "region: 'us-east-1'.\n" in r.stderr, r.stderr


def test_runpod_keeps_its_upper_case_country_regions() -> None:
    from planner.catalog.loader import load_catalog

    assert {i.region for i in load_catalog().instances if i.provider == "runpod"} == {"US"}  # catalog/cloud.yaml


# -- 3. base-60 hints by the field's unit ----------------------------------------------------------------------

@pytest.mark.parametrize("line, hint", [
    ("deadline_hours: 1:30", "Write the hours as one plain number (1:30 as hours and minutes is 1.5)"),
    ("seq_len: 1:00", "Write the value as one plain number, without ':'"),
    ("seq_len: [4096, 1:00]", "Write the value as one plain number, without ':'"),
])
def test_a_base_60_hint_reads_the_fields_unit(tmp_path: Path, line: str, hint: str) -> None:
    err = _error(tmp_path, SCENARIO.format(line=line))
    assert "is a base-60 number in YAML 1.1" in err and hint in err, err
    assert "hours and minutes" not in err or "_hours" in line, err


def test_a_base_60_seconds_field_gets_minutes_and_seconds(tmp_path: Path) -> None:
    from planner.core.yamlio import YamlProblem, parse_yaml

    raised = None
    try:
        parse_yaml("slo:\n  ttft_s: 1:30\n")
    except YamlProblem as exc:
        raised = exc
    assert raised is not None and raised.path == "slo.ttft_s"
    assert raised.hint == "Write the seconds as one plain number (1:30 as minutes and seconds is 90 s), or quote it " \
        "if it is a text ('1:30')."


# -- 4. locale spellings ------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, hint, followed", [
    ("seq_len: 16 384", "Write the number without separators: seq_len: 16384.", "seq_len: 16384"),
    ("seq_len: 16\u00a0384", "Write the number without separators: seq_len: 16384.", "seq_len: 16384"),
    ("seq_len: 16\u202f384", "Write the number without separators: seq_len: 16384.", "seq_len: 16384"),
    ("seq_len: \"16'384\"", "Write the number without separators: seq_len: 16384.", "seq_len: 16384"),
    ("seq_len: 16.384", "If the '.' separates thousands, write the number without it: seq_len: 16384; planner "
                        "reads '.' as a decimal point.", "seq_len: 16384"),
    ("micro_batch: 2.5", "Write a whole number: micro_batch: 3 (rounded up) or micro_batch: 2.", "micro_batch: 3"),
    ("dataset_size: .5 GiB", "Write a digit on both sides of the point, or none: '0.5 GiB'.", "dataset_size: 0.5 GiB"),
    ("dataset_size: 5. GiB", "Write a digit on both sides of the point, or none: '5 GiB'.", "dataset_size: 5 GiB"),
    ("dataset_size: 24 \uff27\uff49\uff22", "Write it in ASCII letters and digits: '24 GiB'.", "dataset_size: 24 GiB"),
    ("dataset_size: 16 380 MiB", "Write the number without separators: '16380 MiB'.", "dataset_size: 16380 MiB"),
])
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_locale_spellings_get_a_hint_that_works(tmp_path: Path, line: str, hint: str, followed: str) -> None:
    err = _error(tmp_path, SCENARIO.format(line=line))
    assert err.rstrip("\n").endswith(hint), err
    key = line.split(":")[0]
    (tmp_path / "f.yaml").write_text(SCENARIO.format(line=followed), encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "f.yaml"), "--out", str(tmp_path / "out")])
    assert f".{key}:" not in r.stderr, r.stderr  # the hint, followed, is read (whatever else the plan says)


def test_a_group_that_is_no_thousands_gets_no_reading(tmp_path: Path) -> None:
    err = _error(tmp_path, SCENARIO.format(line="seq_len: 1 2"))
    assert err.endswith("seq_len: must be a whole number, not '1 2'. Write a whole number in digits, without "
                        "separators.\n"), err


def test_the_command_line_gets_the_same_locale_hints() -> None:
    for given, hint in (("8'192", "Write the number without separators: --context 8192."),
                        ("16.384", "If the '.' separates thousands, write the number without it: --context 16384"),
                        ("0.512", None)):
        r = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--context", given])
        assert r.exit_code == 2, r.output
        if hint is None:
            assert "thousands" not in r.stderr, r.stderr  # 0.512 is no grouped number
        else:
            assert hint in r.stderr, r.stderr


@pytest.mark.parametrize("kind, entry, line, hint", [
    ("gpus", "id: rtx-4090", "tdp_w: 0.165 kW", "Write the number in W, without a prefix: tdp_w: 165."),
    ("gpus", "id: rtx-4090", "slot_width: 2.5", "Write a whole number: slot_width: 3 (rounded up) or slot_width: 2."),
    ("ram", "id: ddr4-udimm-16g", "speed_mts: 6000 MT/s", "Write the number alone, without 'MT/s': speed_mts: 6000."),
    ("gpus", "id: rtx-4090", "as_of: 15.01.2026", "Write it as YYYY-MM-DD: as_of: 2026-01-15."),
    ("gpus", "id: rtx-4090", "as_of: 20260115", "Write it as YYYY-MM-DD: as_of: 2026-01-15."),
    ("gpus", "id: rtx-4090", "as_of: 2026/1/15", "Write it as YYYY-MM-DD: as_of: 2026-01-15."),
    ("gpus", "id: rtx-4090", "as_of: 02/01/2026", "Write it as YYYY-MM-DD: as_of: 2026-01-02 if the day comes "
                                                  "first, as_of: 2026-02-01 if the month does."),
])
def test_catalog_overlays_get_unit_and_date_hints(tmp_path: Path, kind: str, entry: str, line: str,
                                                  hint: str) -> None:
    top = {"gpus": "gpus", "ram": "dimms"}[kind]
    (tmp_path / "ov").mkdir()
    (tmp_path / "ov" / f"{kind}.yaml").write_text(f"schema_version: 1\n{top}:\n  - {entry}\n    {line}\n",
                                                  encoding="utf-8")
    r = CliRunner().invoke(main, ["catalog", kind, "--catalog", str(tmp_path / "ov")])
    assert r.exit_code == 2, r.output
    assert r.stderr.rstrip("\n").endswith(hint), r.stderr


# -- 5. smaller items ---------------------------------------------------------------------------------------

def test_budget_usd_in_fractions_of_a_cent_is_refused(tmp_path: Path) -> None:
    err = _error(tmp_path, "name: s\nconstraints:\n  budget_usd: 6000.001\nworkloads:\n"
                           "  - {model: llama-3.1-8b, task: infer}\n")
    assert "constraints.budget_usd: 6000.001 USD has a fraction of a cent. A quote adds prices up in whole cents: " \
        "write budget_usd: 6000.00 or 6000.01." in err, err


def test_an_upper_case_quant_method_is_refused_as_transformers_refuses_it() -> None:
    err = _refusal({**LLAMA_7B, "quantization_config": {"quant_method": "GPTQ", "bits": 4}})
    assert err == ("config.json: quantization_config: quantization_config.quant_method 'GPTQ' is not lower case, and "
                   "transformers loads no checkpoint whose method it does not know by its lower-case name. "
                   'transformers writes its methods in lower case: "quant_method": "gptq".'), err


def test_a_blank_overlay_path_is_said_to_be_blank() -> None:
    import planner
    from planner.core.errors import InputError

    raised = None
    try:
        planner.load_catalog(" ")
    except InputError as exc:
        raised = str(exc)
    assert raised is not None and raised.startswith("overlay: is blank (' '): a path of spaces alone."), raised


def test_an_out_whose_temporary_path_is_over_path_max_says_so(tmp_path: Path) -> None:
    base = str(tmp_path)
    parts, length = [], len(base)
    while length < 4068:  # reports' paths fit (+7 bytes, the manifest's +22), the staging temporary's (+47) not
        part = "d" * min(200, 4068 - length - 1)
        parts.append(part)
        length += len(part) + 1
    out = os.path.join(base, *parts)
    r = CliRunner().invoke(main, ["plan", str(_scenario(tmp_path / "a.yaml", "x")), "--out", out])
    assert r.exit_code == 2, r.output
    assert "cannot write (File name too long): planner writes each report first under a temporary path up to about " \
        "60 bytes longer (a staging folder and a random name), and that path is over the system's limit of 4,096 " \
        "bytes. Give a shorter path: cd into the folder and write there (--out .).\n" in r.stderr, r.stderr
    assert "disk has room" not in r.stderr
    assert not any(p.is_file() for p in Path(out).iterdir()) if Path(out).is_dir() else True
