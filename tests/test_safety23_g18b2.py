"""Hostile pass h18b, findings fixed on branch g18b2.

- 2: a cloud.yaml overlay that restates only source/as_of is told the cloud row's own price keys (usd_per_hour,
  spot_usd_per_hour, spot_usd_per_hour_range; cloud rows have no price_kind), with the shipped price as written
  (0.526, not 0.53) (planner.catalog.loader._check_overlay_prices).
- 3: an unknown id or name drawn alike with a known one (U+2010 in 'rtx‐4090', a Cyrillic 'о' in 'qlоra-7b') gets
  the one suggestion and the character named (planner.core.errors._drawn_alike).
- 6: another tool's key beside the planner's own ('max_model_len' beside 'context') is told to be removed, not to
  be rewritten as a duplicate key; vLLM's command-line spelling 'max-model-len' gets the same alias hint
  (planner.workload.othernames.explainer).
- 9: import-skypilot reads AcceleratorName case-blind, as SkyPilot does ('a10g' is A10G), and writes AWS/GCP
  instance types in lower case with a note ('G5.2XLARGE' -> 'g5.2xlarge') (planner.catalog.skypilot).
- 10: 'max' written in a --workload file for planner fit is refused at the file, line and key, with the option
  that searches it (planner.api.fits._no_max_written).
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from planner.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
COMPARE = str(ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml")


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


# -- #2: a cloud row's own price keys ------------------------------------------------------------------------------

def test_a_cloud_overlay_restating_only_as_of_is_told_the_cloud_price_keys(tmp_path: Path) -> None:
    (tmp_path / "cloud.yaml").write_text("schema_version: 1\ninstances:\n  - id: aws-g4dn-xlarge\n"
                                         "    source: my check\n    as_of: 2026-11\n")
    code, err = _run("compare", COMPARE, "--catalog", str(tmp_path))
    assert code == 2
    # catalog/cloud.yaml's aws-g4dn-xlarge: usd_per_hour 0.526 (3 decimals, shown as written), as_of 2026-08; it
    # has spot_usd_per_hour and spot_usd_per_hour_range too, and cloud rows have no price_kind
    assert ("the cost tables would show them for the shipped price (usd_per_hour 0.526 of 2026-08). Restate the "
            "price with your source and date (usd_per_hour, spot_usd_per_hour, spot_usd_per_hour_range)") in err, err
    assert "price_usd" not in err and "price_kind" not in err
    # the hint, followed (the shipped values restated with the new source), loads
    (tmp_path / "cloud.yaml").write_text("schema_version: 1\ninstances:\n  - id: aws-g4dn-xlarge\n"
                                         "    source: my check\n    as_of: 2026-11\n    usd_per_hour: 0.526\n"
                                         "    spot_usd_per_hour: 0.2\n    spot_usd_per_hour_range: [0.2, 0.216]\n"
                                         "    notes: restated from my check\n")
    code, out = _run("catalog", "cloud", "--catalog", str(tmp_path))
    assert code == 0, out


# -- #3: the lookalike character named -----------------------------------------------------------------------------

def test_an_unknown_gpu_drawn_alike_names_the_character(tmp_path: Path) -> None:
    p = tmp_path / "a.yaml"
    p.write_text("name: cs\nconstraints:\n  allowed_gpus: [rtx\u20104090]\nworkloads:\n  - name: a\n"
                 "    model: llama-2-7b\n    task: infer\n")
    code, err = _run("plan", str(p))
    assert code == 2
    # 'rtx‐4090': r, t, x, then U+2010 at character 4 where the catalog id 'rtx-4090' has '-' (U+002D)
    assert ("Did you mean 'rtx-4090'? The name given holds U+2010 (HYPHEN) at character 4 where 'rtx-4090' has '-', "
            "which look alike.") in err, err
    assert "rtx-5090" not in err  # one suggestion: the one drawn alike


def test_an_unknown_workload_with_a_cyrillic_letter_names_it() -> None:
    code, err = _run("compare", COMPARE, "--tokens-per-month", "ql\u043era-7b=200M")
    assert code == 2
    # 'qlоra-7b': q, l, then U+043E at character 3 where 'qlora-7b' has 'o'
    assert ("Did you mean 'qlora-7b'? The name given holds U+043E (CYRILLIC SMALL LETTER O) at character 3 where "
            "'qlora-7b' has 'o', which look alike.") in err, err


# -- #6: an alias beside the planner's own key; vLLM's dashed spelling ------------------------------------------------

def test_an_alias_beside_its_planner_key_is_told_to_be_removed(tmp_path: Path) -> None:
    p = tmp_path / "a.yaml"
    p.write_text("model: llama-2-7b\ntask: infer\ncontext: 2048\nmax_model_len: 4096\n")
    code, err = _run("estimate", "--workload", str(p))
    assert code == 2
    assert ("unknown key 'max_model_len' (the name in vLLM); the planner's key is 'context'. Remove max_model_len: "
            "the entry gives context: 2048 already; change that to context: 4096 if 4096 is meant.") in err, err
    assert "Write context" not in err  # that would make a duplicate key


def test_a_scenario_workload_alias_beside_its_key_is_told_to_be_removed(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text("name: s\nworkloads:\n  - name: a\n    model: llama-2-7b\n    task: infer\n    context: 2048\n"
                 "    max_model_len: 4096\n")
    code, err = _run("plan", str(p), "--out", str(tmp_path / "o"))
    assert code == 2
    assert ("Remove max_model_len: the entry gives context: 2048 already; change that to context: 4096 if 4096 is "
            "meant.") in err, err


def test_vllms_dashed_spelling_gets_the_alias_hint(tmp_path: Path) -> None:
    for key in ("max-model-len", "MAX_MODEL_LEN"):
        p = tmp_path / "c.yaml"
        p.write_text(f"model: llama-2-7b\ntask: infer\n{key}: 4096\n")
        code, err = _run("estimate", "--workload", str(p))
        assert code == 2
        # vllm serve --max-model-len is max_model_len (its engine argument), the planner's context
        assert (f"unknown key '{key}' (the name in vLLM); the planner's key is 'context'. Write context: 4096."
                in err), err


# -- #9: import-skypilot, case ---------------------------------------------------------------------------------------

_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
           "AvailabilityZone")
_INFO = ("\"{'Gpus': [{'Name': 'A10G', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}], "
         "'TotalGpuMemoryInMiB': 24576}\"")


def test_import_skypilot_reads_a_lower_case_accelerator_and_lowers_aws_instances(tmp_path: Path) -> None:
    d = tmp_path / "aws"
    d.mkdir()
    (d / "vms.csv").write_text(f"{_HEADER}\ng5.xlarge,a10g,1,4,16,{_INFO},1.006,0.4,us-east-1,us-east-1a\n"
                               f"G5.2XLARGE,A10G,1,8,32,{_INFO},1.212,0.5,us-east-1,us-east-1a\n")
    out = tmp_path / "o"
    code, text = _run("catalog", "import-skypilot", str(d / "vms.csv"), "--out", str(out))
    assert code == 0, text
    written = (out / "cloud.yaml").read_text()
    # SkyPilot canonicalizes accelerator names case-blind: 'a10g' is its A10G, the catalog's a10g
    assert 'instance: "g5.xlarge"' in written and "gpu: a10g" in written
    # AWS names instance types in lower case only (g5.2xlarge): the row's upper case is lowered, and said
    assert 'instance: "g5.2xlarge"' in written and "G5.2XLARGE" not in written
    assert "no gpus.yaml entry" not in text
    assert "instance type in upper case written in lower case, as the cloud names it: 1 row(s) (line 3)" in text, text


# -- #10: 'max' in a workload file for fit ---------------------------------------------------------------------------

def test_fit_refuses_max_in_the_workload_file_at_its_line(tmp_path: Path) -> None:
    p = tmp_path / "a.yaml"
    p.write_text("model: llama-2-7b\ntask: infer\ncontext: max\nconcurrency: 4\n")
    code, err = _run("fit", "--workload", str(p), "--gpu", "rtx-4090")
    assert code == 2
    # context is on line 3 of the file
    assert (f"{p}:3: context: 'max' is a value of planner fit's command line, not of a workload file. Give it on "
            "the command line: --context max (fit searches exactly one value), and write context: N (a whole "
            "number) in the file or remove context from it.") in err, err
    p.write_text("model: llama-2-7b\ntask: infer\ncontext: 2048\nconcurrency: max\n")
    code, err = _run("fit", "--workload", str(p), "--gpu", "rtx-4090", "--context", "max")
    assert code == 2
    assert (f"{p}:4: concurrency: 'max' is a value of planner fit's command line, not of a workload file. fit "
            "searches exactly one value, here --context max: write concurrency: N (a whole number) in the file, "
            "or remove concurrency from it.") in err, err
    # the option given for the key replaces the file's 'max': no refusal
    code, out = _run("fit", "--workload", str(p), "--gpu", "rtx-4090", "--concurrency", "max")
    assert code == 0, out
