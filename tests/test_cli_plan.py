"""The `plan`, `fit` and `catalog` commands (CliRunner: exact output pieces and exit codes), the
report writers and atomic writes, and start-up cost (`planner --help` imports nothing heavy).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.core.atomic import write_text
from planner.solve.candidates import COLUMNS
from planner.cli.main import main
from planner.core.errors import OutputError
from planner.core.names import safe_stem

ROOT = Path(__file__).resolve().parents[1]
SCEN = ROOT / "scenarios"


@pytest.fixture
def runner():
    return CliRunner()


def run(runner, *args):
    return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)


# ----- plan -----------------------------------------------------------------------------------------

def test_plan_prints_the_recommendation_and_writes_reports(runner, tmp_path):
    r = run(runner, "plan", SCEN / "qlora-7b-12gb.yaml", "--out", tmp_path, "--top", 3, "--format", "csv,json")
    assert r.exit_code == 0, r.output
    out = r.output
    assert "Recommendation: 1 x rtx-3060-12gb on am5-desktop, 2 x ddr5-udimm-16g (32.00 GiB RAM)" in out
    assert "Total: $2,169.00 (capex, USD)" in out
    # the card at its dated street price (insiderllm.com, Feb 2026), not its 2021 launch MSRP ($329)
    assert "Priced at: rtx-3060-12gb street price (new) $280.00 of 2026-02 (the scenario's rule price: street picks it)" in out
    assert "Workload qlora-7b (train, llama-2-7b): qlora pure-bf16 adamw, ZeRO-0, checkpointing full" in out
    # rtx-3060-12gb: nvidia-smi 12,288 MiB less the 430 MiB driver reservation = 11,858 MiB (11.58 GiB)
    # CUDA total; less ceil(5 %) = 11,812,313,497 B (11.00 GiB) for the workload.
    assert "per GPU of 11.00 GiB (11.58 GiB CUDA total less headroom)" in out
    assert "recipe pure-bf16: QLoRA r=16" in out
    assert out.rstrip().endswith(f"Wrote {tmp_path / 'qlora-7b-12gb.csv'} and {tmp_path / 'qlora-7b-12gb.json'}")
    with open(tmp_path / "qlora-7b-12gb.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0].keys()) == list(COLUMNS)
    assert rows[0]["feasible"] == "True" and rows[0]["rank"] == "1"
    seen_infeasible = False
    for row in rows:  # feasible first
        if row["feasible"] == "False":
            seen_infeasible = True
            assert row["why_not"]
        else:
            assert not seen_infeasible
    doc = json.loads((tmp_path / "qlora-7b-12gb.json").read_text())
    assert doc["feasible"] is True and doc["scenario"] == "qlora-7b-12gb"
    assert doc["total_usd"] == sum(i["total_usd"] for i in doc["line_items"]) == doc["choice"]["capex_usd"]
    assert len(doc["alternatives"]) == 3
    comps = doc["workloads"][0]["estimate"]["components"]
    assert all(isinstance(c["bytes"], int) for c in comps)
    assert doc["assumptions"]["scenario_sha256"]


def test_plan_json_to_stdout(runner, tmp_path):
    r = run(runner, "plan", SCEN / "serve-7b-2k-1user.yaml", "--out", tmp_path, "--json", "--format", "csv,json")
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert doc["feasible"] is True
    assert doc["outputs"] == {"csv": str(tmp_path / "serve-7b-2k-1user.csv"),
                              "json": str(tmp_path / "serve-7b-2k-1user.json")}


def test_plan_infeasible_exits_1_with_the_explanation(runner, tmp_path):
    r = runner.invoke(main, ["plan", str(SCEN / "ft-13b-2x24gb-zero2.yaml"), "--out", str(tmp_path),
                             "--format", "csv,json"])
    assert r.exit_code == 1
    assert "No machine fits scenario 'ft-13b-2x24gb-zero2'" in r.output
    assert "not the parameters: each GPU holds all 24.24 GiB of 16-bit weights" in r.output
    assert "QLoRA (method: qlora) on 1 x " in r.output
    doc = json.loads((tmp_path / "ft-13b-2x24gb-zero2.json").read_text())
    assert doc["feasible"] is False and doc["reasons"] and doc["suggestions"]
    assert (tmp_path / "ft-13b-2x24gb-zero2.csv").exists()


def test_plan_bad_scenario_exits_2_with_one_line(runner, tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("workloads:\n  - {model: llama-2-7b, task: infer}\nconstraints:\n  allowed_gpus: [rtx-4900]\n")
    r = runner.invoke(main, ["plan", str(p), "--out", str(tmp_path)])
    assert r.exit_code == 2
    assert r.output == (f"Error: {p}:4: constraints.allowed_gpus: unknown GPU 'rtx-4900'. "
                        "Did you mean 'rtx-4090' or 'rtx-4080' or 'rtx-a4000'?\n")


def test_plan_unwritable_output_is_one_line(runner, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = runner.invoke(main, ["plan", str(SCEN / "qlora-7b-12gb.yaml"), "--out", str(blocker)])
    assert r.exit_code == 2
    assert r.output == (f"Error: {blocker}: is a file, not a directory. "
                        "Give --out a directory (it is created if missing).\n")
    r2 = runner.invoke(main, ["plan", str(SCEN / "qlora-7b-12gb.yaml"), "--out", str(blocker / "sub")])
    assert r2.exit_code == 2
    assert r2.output == (f"Error: {blocker / 'sub'}: cannot create the output directory (Not a directory). "
                         "Give --out a directory that can be created and written.\n")


def test_scenario_name_cannot_leave_the_output_directory(runner, tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text("name: ../../escape/me\nworkloads:\n  - {model: llama-2-7b, task: infer, weights: fp16, "
                 "kv_dtype: fp16, context: 512}\nconstraints: {allowed_gpus: [rtx-4090]}\n")
    out = tmp_path / "out"
    r = runner.invoke(main, ["plan", str(p), "--out", str(out), "--format", "csv,json"])
    assert r.exit_code == 0, r.output
    assert sorted(x.name for x in out.iterdir()) == [".planner-reports.json", "escape-me.csv", "escape-me.json"]
    assert not (tmp_path.parent / "escape").exists()
    # the renaming is said, not silent
    assert ("Note: the reports are named 'escape-me': the scenario name '../../escape/me' holds characters a file "
            "name cannot (path separators, spaces, symbols).") in r.output


@pytest.mark.parametrize("name,stem", [("ft-7b", "ft-7b"), ("../x", "x"), ("a/b", "a-b"), ("a\\..\\b", "a-b"),
                                       (".hidden", "hidden"), ("sp ace$", "sp-ace"), ("über", "über"),
                                       ("Große Planung", "Große-Planung")])
def test_safe_stem(name, stem):
    assert safe_stem(name) == stem


@pytest.mark.parametrize("name", ["", "..", "/", "...", "./."])
def test_safe_stem_refuses_empty(name):
    with pytest.raises(OutputError) as e:
        safe_stem(name)
    assert str(e.value) == (f"scenario name {name!r} gives no usable file name. Give the scenario a name such as "
                            "'ft-7b-workstation'.")


def test_atomic_write_replaces_and_leaves_no_temp_files(tmp_path):
    p = tmp_path / "r.json"
    write_text(p, "one")
    write_text(p, "two")
    assert p.read_text() == "two"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.json"]
    assert (p.stat().st_mode & 0o777) == 0o666 & ~_umask()
    with pytest.raises(OutputError) as e:
        write_text(tmp_path / "missing" / "r.json", "x")
    assert str(e.value) == (f"{tmp_path / 'missing' / 'r.json'}: cannot write (No such file or directory): the "
                            f"folder {tmp_path / 'missing'} is not there (removed or moved away during the run). "
                            "Check where it went and run again.")


def _umask():
    m = os.umask(0o022)
    os.umask(m)
    return m


# ----- fit ------------------------------------------------------------------------------------------

def test_fit_micro_batch(runner):
    r = run(runner, "fit", "--model", "llama-2-7b", "--gpu", "rtx-4090", "--task", "train", "--method", "qlora",
            "--seq-len", 512, "--checkpointing", "full", "--micro-batch", "max", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["target"] == "micro_batch" and d["max_value"] >= 1
    assert d["need_bytes"] <= d["capacity_bytes"] < (d["next_need_bytes"] or float("inf"))
    # the answer is the one the library gives
    from planner.solve.candidates import capacity_bytes
    from planner.catalog.loader import load_catalog
    from planner.workload.inputs import workload_from_options
    from planner.memory import estimate

    cat = load_catalog()
    w = workload_from_options({"model": "llama-2-7b", "task": "train", "method": "qlora", "seq_len": 512,
                               "checkpointing": "full", "micro_batch": d["max_value"], "gpus": 1}, cat)
    assert estimate(w).per_gpu_total_bytes == d["need_bytes"]
    assert d["capacity_bytes"] == capacity_bytes(cat.gpu("rtx-4090").cuda_total_bytes, 0.05)
    # the CUDA total: nvidia-smi's 24,564 MiB less the 430 MiB driver reservation
    assert d["cuda_total_bytes"] == (24564 - 430) * 2**20


def test_fit_text_and_context(runner):
    r = run(runner, "fit", "--model", "llama-3.1-8b", "--gpu", "l4", "--context", 8192, "--concurrency", "max")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("Largest concurrency that fits 1 x l4 (")
    r2 = run(runner, "fit", "--model", "qwen2.5-0.5b", "--gpu", "h100-sxm", "--concurrency", 1, "--context", "max")
    assert r2.exit_code == 0
    assert "That is the limit searched (the model's max_position_embeddings)." in r2.output


def test_fit_needs_exactly_one_max(runner):
    r = runner.invoke(main, ["fit", "--model", "llama-2-7b", "--gpu", "l4", "--context", "max", "--concurrency", "max"])
    assert r.exit_code == 2
    assert ("give exactly one of --micro-batch, --seq-len, --context, --concurrency, --gpu-layers the value 'max'"
            in r.output)
    r2 = runner.invoke(main, ["fit", "--model", "llama-2-7b", "--gpu", "l4", "--context", "many", "--concurrency",
                              "max"])
    assert r2.exit_code == 2
    assert r2.output == "Error: --context: must be a whole number or 'max', not 'many'.\n"


def test_fit_nothing_fits_exits_1(runner):
    r = runner.invoke(main, ["fit", "--model", "llama-2-13b", "--gpu", "rtx-3060-12gb", "--micro-batch", "max"])
    assert r.exit_code == 1
    assert r.output.startswith("Nothing fits: at micro_batch=1 the workload needs ")
    r2 = runner.invoke(main, ["fit", "--model", "llama-2-7b", "--gpu", "t4", "--context", "max"])
    assert r2.exit_code == 1
    assert r2.output.startswith("t4 (turing) has no bf16 support")


# ----- catalog --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,header", [("gpus", "memory (GiB)"), ("platforms", "max memory (GiB)"),
                                         ("ram", "size (GiB)"), ("models", "parameters (B)"),
                                         ("network", "rate (Gb/s)"), ("cloud", "price (USD/h)")])
def test_catalog_lists_with_units(runner, kind, header):
    r = run(runner, "catalog", kind)
    assert r.exit_code == 0
    first = r.output.splitlines()[0]
    assert header in first and "as of" in first
    r2 = run(runner, "catalog", kind, "--json")
    data = json.loads(r2.output)
    assert isinstance(data, list) and data and "id" in data[0]


def test_catalog_json_keeps_units_in_keys(runner):
    data = json.loads(run(runner, "catalog", "gpus", "--json").output)
    g = next(x for x in data if x["id"] == "rtx-4090")
    assert g["memory_bytes"] == 24 * 2**30 and g["price_usd"] == 1800  # the May 2026 street price
    # every dated price kept: the launch msrp, the May 2026 street and used prices, the June 2026 used price
    assert [(p["kind"], p["usd"]) for p in g["prices"]] == [("msrp", 1599), ("street", 1800), ("used", 1400),
                                                           ("used", 2000)]


def test_catalog_cloud_shows_the_spot_range(runner):
    # cloud.yaml records aws-g4dn-xlarge's zones at 0.2 to 0.216 USD/h (spot_usd_per_hour_range, kept
    # spot 0.2); gcp-g2-standard-4 has a spot price (0.28181, us-east4: both zones 0.05851 + 0.2233) but no
    # range: its cell is empty.
    lines = run(runner, "catalog", "cloud").output.splitlines()
    header = lines[0].split()
    assert "range" in header and "spot range (USD/h)" in lines[0]
    g4dn = next(x for x in lines if x.split()[0] == "aws-g4dn-xlarge").split()
    # the spot column prints as many decimals as its longest figure needs: compare numbers, not text
    i = g4dn.index("0.2-0.216")
    assert float(g4dn[i - 1]) == 0.2
    g2 = next(x for x in lines if x.split()[0] == "gcp-g2-standard-4").split()
    j = next(k for k, v in enumerate(g2) if v.replace(".", "").isdigit() and float(v) == 0.28181)
    assert g2[j + 1] == "us-east4"  # the empty range cell, then the region
    # the JSON already had the field, as a [low, high] pair
    data = {x["id"]: x for x in json.loads(run(runner, "catalog", "cloud", "--json").output)}
    assert data["aws-g4dn-xlarge"]["spot_usd_per_hour_range"] == [0.2, 0.216]
    assert data["gcp-g2-standard-4"]["spot_usd_per_hour_range"] is None


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_catalog_cloud_warns_about_a_spot_price_above_on_demand(runner, tmp_path):
    # The shipped catalog has none. An overlay pricing aws-g5-xlarge at 0.4 USD/h on demand, below its
    # 0.4246 spot price (line 5 of the overlay), loads, and 'planner catalog cloud' says so under the table
    # (on stderr with --json, whose stdout stays the document); 'catalog gpus' lists no instances to warn about.
    assert "Warning:" not in run(runner, "catalog", "cloud").output
    overlay = tmp_path / "mine"
    overlay.mkdir()
    (overlay / "cloud.yaml").write_text(
        "schema_version: 1\ninstances:\n  - id: aws-g5-xlarge\n    usd_per_hour: 0.4\n    spot_usd_per_hour: 0.4246\n"
        "    spot_usd_per_hour_range: [0.4246, 0.4507]\n    source: my quote\n    as_of: 2026-02-01\n")
    warning = (f"Warning: {overlay}/cloud.yaml:5: instances[0] (aws-g5-xlarge).spot_usd_per_hour: spot_usd_per_hour "
               "0.4246 USD/h is above the on-demand usd_per_hour 0.4 USD/h of instance 'aws-g5-xlarge'; spot above "
               "on-demand is rare and more often a typo: check both prices against the source")
    r = run(runner, "catalog", "cloud", "--catalog", str(overlay))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1] == warning
    j = run(runner, "catalog", "cloud", "--catalog", str(overlay), "--json")
    assert j.exit_code == 0 and j.stderr.splitlines() == [warning]
    assert next(x for x in json.loads(j.stdout) if x["id"] == "aws-g5-xlarge")["usd_per_hour"] == 0.4
    assert "Warning:" not in run(runner, "catalog", "gpus", "--catalog", str(overlay)).output


# ----- help and start-up ---------------------------------------------------------------------------

@pytest.mark.parametrize("cmd", ["plan", "fit", "catalog"])
def test_every_command_has_help_with_an_example(runner, cmd):
    r = run(runner, cmd, "--help")
    assert r.exit_code == 0
    assert "Example:" in r.output


def test_cli_imports_nothing_heavy():
    code = ("import sys, planner.cli.main; heavy = [m for m in ('pandas', 'numpy', 'scipy', 'openpyxl', 'yaml', "
            "'planner.solve.solver', 'planner.solve.candidates') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_csv_text_never_becomes_a_formula():
    # A workload named '=1+1' (from a user file) is written as "'=1+1" in the CSV; numbers stay numbers.
    import pandas as pd

    from planner.report.export import candidates_csv

    text = candidates_csv(pd.DataFrame({"workload": ["=1+1", "@SUM(A1)", "ok", "-2"], "capex_usd": [1.0, 2.0, 3.0, -4.0]}))
    assert text.splitlines() == ["workload,capex_usd", "'=1+1,1.0", "'@SUM(A1),2.0", "ok,3.0", "'-2,-4.0"]


def test_fit_json_prints_a_document_when_nothing_fits():
    # Llama-2-70B in bf16 needs ~140 GB of weights alone: nothing fits one 12 GB card (exit 1).
    import json

    from click.testing import CliRunner

    from planner.cli.main import main

    result = CliRunner().invoke(main, ["fit", "--model", "llama-2-70b", "--gpu", "rtx-3060-12gb", "--task", "infer",
                                       "--concurrency", "max", "--json"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["fits"] is False and doc["max_value"] is None and doc["need_bytes"] > doc["capacity_bytes"]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_fit_and_estimate_agree_with_vllms_own_kv_arithmetic_on_a_large_card(runner):
    # On an H100 vllm serve defaults to 8,192 batched tokens and 1,024 sequences; the need that
    # `fit` searches with and the KV budget `estimate --gpu` prints both use them, and a vLLM workload
    # takes no planning headroom (gpu_memory_utilization is its margin), so the largest concurrency
    # that fits is the number of whole 4,096-token sequences the KV budget holds.
    common = ("--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm", "--context", 4096,
              "--gpu", "h100-sxm")
    r = run(runner, "fit", *common, "--concurrency", "max", "--json")
    assert r.exit_code == 0, r.output
    best = json.loads(r.output)["max_value"]
    e = run(runner, "estimate", *common, "--concurrency", best, "--json")
    assert e.exit_code == 0, e.output
    v = json.loads(e.output)["gpu"]["vllm"]
    assert (v["max_num_batched_tokens"], v["max_num_seqs"]) == (8192, 1024)
    assert best == v["kv_tokens"] // 4096
    assert json.loads(e.output)["gpu"]["fits"] is True
    over = run(runner, "estimate", *common, "--concurrency", best + 1, "--json")
    assert json.loads(over.output)["gpu"]["fits"] is False
    # a planning headroom on top of vLLM's own margin is refused, not silently stacked
    h = run(runner, "fit", *common, "--concurrency", "max", "--headroom", 0.05)
    assert h.exit_code == 2
    assert "--headroom: does not apply to engine vllm" in h.output


def test_plan_checks_the_costs_section_it_does_not_use(runner, tmp_path):
    # costs: feeds `compare`; `plan` ignores the values but not a typo in them (nothing the user
    # gave is silently ignored): exit 2, one line naming file, line, entry and a close match.
    path = tmp_path / "s.yaml"
    path.write_text("name: s\nworkloads:\n  - name: w\n    model: llama-2-7b\n    task: infer\n"
                    "costs:\n  utilisation: 0.5\n")
    r = run(runner, "plan", path, "--out", tmp_path / "out")
    assert r.exit_code == 2
    assert r.output.strip() == (f"Error: {path}:7: costs.utilisation: unknown key 'utilisation'. "
                                "Did you mean 'utilization'?")
    assert not (tmp_path / "out").exists()


def test_estimate_refuses_headroom_without_a_card(runner):
    # --headroom only changes the fit verdict on --gpu's card; given alone it would be ignored.
    r = run(runner, "estimate", "--model", "llama-2-7b", "--task", "train", "--headroom", 0.5)
    assert r.exit_code == 2
    assert "--headroom applies to the fit check on a card: give --gpu ID with it" in r.output
    ok = run(runner, "estimate", "--model", "llama-2-7b", "--task", "train", "--headroom", 0.5, "--gpu", "rtx-4090")
    assert ok.exit_code == 0, ok.output
    assert "after 50% headroom" in ok.output


def test_hf_chunked_prefill_is_named_as_transformers_spells_it(runner):
    # engine hf with max_num_batched_tokens: Transformers' generate prefills in chunks of
    # GenerationConfig.prefill_chunk_size tokens per sequence: 2,048 tokens / 4 sequences = 512.
    # engine hf pinned: 4 sequences and no engine would be sized for vLLM (default_engine)
    r = run(runner, "estimate", "--model", "llama-2-7b", "--task", "infer", "--context", 4096, "--concurrency", 4,
            "--max-num-batched-tokens", 2048, "--engine", "hf")
    assert r.exit_code == 0, r.output
    assert ("chunked prefill of 2,048 tokens per forward pass (Transformers: GenerationConfig("
            "prefill_chunk_size=512) for 4 sequence(s))") in r.output


def test_estimate_names_the_keys_it_leaves_to_compare(runner, tmp_path):
    # dataset_tokens and epochs time the job in `compare`; the memory estimate says so rather than
    # dropping them silently.
    path = tmp_path / "w.yaml"
    path.write_text("model: llama-2-7b\ntask: train\ndataset_tokens: 1000000\nepochs: 2\n")
    r = run(runner, "estimate", "--workload", path)
    assert r.exit_code == 0, r.output
    assert ("Note: dataset_tokens, epochs feed 'planner compare' (job time and cost), not the memory estimate."
            in r.output)
    j = run(runner, "estimate", "--workload", path, "--json")
    assert json.loads(j.output)["notes_for_compare"] == ["dataset_tokens", "epochs"]


def test_fit_caps_vllm_concurrency_at_max_num_seqs(runner):
    # vLLM runs at most max_num_seqs sequences at once: fit does not offer more, and says why.
    r = run(runner, "fit", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm", "--gpu", "h100-sxm",
            "--max-num-seqs", 4, "--context", 1024, "--concurrency", "max", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["max_value"] == 4 and d["limited_by"] == "vLLM's max_num_seqs (4)"


def test_plan_warns_about_price_sources_no_sources_file_defines(runner, tmp_path):
    # An overlay re-prices the chosen card citing REF:NOPE-404, which no SOURCES.md defines: the console
    # and the JSON say so (the workbook's Sources sheet marks it as well).
    overlay = tmp_path / "mine"
    overlay.mkdir()
    (overlay / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    price_usd: 289\n"
                                       "    price_kind: quote\n    source: \"REF:NOPE-404 vendor listing\"\n"
                                       "    as_of: 2026-11-20\n")
    out = tmp_path / "out"
    r = run(runner, "plan", str(SCEN / "qlora-7b-12gb.yaml"), "--catalog", str(overlay), "--out", str(out),
            "--format", "json")
    assert r.exit_code == 0, r.output
    said = ("price sources cited but defined in no SOURCES.md beside the catalog: REF:NOPE-404 (rtx-3060-12gb); add "
            "them to the overlay's SOURCES.md so the quote can be traced")
    assert f"  - {said}" in r.output
    assert said in json.loads((out / "qlora-7b-12gb.json").read_text())["warnings"]


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_plan_says_an_overlay_is_in_use(runner, tmp_path):
    # A newcomer's price overlay changed nothing visible (the card it re-priced was not chosen): the text
    # says which overlay the plan read; without one it says nothing of overlays.
    overlay = tmp_path / "mine"
    overlay.mkdir()
    (overlay / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-4090\n    price_usd: 1899\n"
                                       "    price_kind: quote\n    source: vendor quote\n    as_of: 2026-11-20\n")
    with_overlay = run(runner, "plan", str(SCEN / "qlora-7b-12gb.yaml"), "--catalog", str(overlay), "--out",
                       str(tmp_path / "a"), "--format", "json")
    assert with_overlay.exit_code == 0, with_overlay.output
    assert f"Catalog: the shipped catalog with the overlay {overlay} (gpus.yaml) over it" in with_overlay.output
    plain = run(runner, "plan", str(SCEN / "qlora-7b-12gb.yaml"), "--out", str(tmp_path / "b"), "--format", "json")
    assert plain.exit_code == 0, plain.output
    assert "Catalog:" not in plain.output and "with the overlay" not in plain.output


def test_plan_reads_each_sources_file_once(runner, tmp_path, monkeypatch):
    # The console's undefined-REF warning and the workbook's Sources sheet share one index: with an
    # overlay, the overlay's SOURCES.md (absent) and the shipped one are each read once per plan.
    import planner.catalog.sources

    overlay = tmp_path / "mine"
    overlay.mkdir()
    (overlay / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    price_usd: 289\n"
                                       "    price_kind: quote\n    source: \"REF:NOPE-404 vendor listing\"\n"
                                       "    as_of: 2026-11-20\n")
    read = []
    real = planner.catalog.sources.read_sources

    def counting(path, shown=None):
        read.append(Path(path))
        return real(path, shown)

    monkeypatch.setattr(planner.catalog.sources, "read_sources", counting)
    out = tmp_path / "out"
    r = run(runner, "plan", str(SCEN / "qlora-7b-12gb.yaml"), "--catalog", str(overlay), "--out", str(out),
            "--format", "xlsx,json")
    assert r.exit_code == 0, r.output
    assert "REF:NOPE-404 (rtx-3060-12gb)" in r.output
    assert (out / "qlora-7b-12gb.xlsx").is_file()
    assert sorted(read) == sorted([overlay / "SOURCES.md", ROOT / "catalog" / "SOURCES.md"])


def test_the_alternatives_text_tells_every_row_apart():
    # ft-7b-workstation's 40 runners-up hold two machines of the same GPU, platform, cards and RAM size
    # that differ in their DIMMs (and price): the text table shows the DIMM count and id, so no two rows
    # read the same (they did without them)
    from planner.api import plan
    from planner.report.render import plan_text

    text = plan_text(plan(str(ROOT / "scenarios" / "ft-7b-workstation.yaml"), top=40).plan)
    table = text.split("Alternatives:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table[0].split()[:8] == ["GPU", "platform", "cards/node", "nodes", "RAM", "(GiB)", "DIMMs", "DIMM"]
    rows = table[1:]
    assert len(rows) == 40 and len(set(rows)) == 40
