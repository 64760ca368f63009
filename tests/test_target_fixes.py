"""New-user findings on deadline and SLO planning (issue 29, items 3 and 4): `compare` rents only
instances that meet the training deadline; "What would fit" offers `used_ok: true` only as the
solver checks it, keeps its levers for used-only cards, names pinned keys it changes, counts GPUs
the solver can build, offers the serving levers; `estimate --gpu-layers max` with `--gpu`.

Expected values are the tool's own models read back (the time model's hours per run, the memory
model's need) or derivations written beside each assertion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from planner import load_catalog, plan
from planner.solve.solver import NoFeasiblePlan

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _mapping(name: str) -> dict:
    return yaml.safe_load((SCENARIOS / name).read_text())


def _d23() -> dict:
    """The shipped 72 h fine-tune at a 2.3 h deadline and at most 2 nodes (the new user's d23.yaml)."""
    data = _mapping("finetune-72h-deadline.yaml")
    data["name"] = "d23"
    data["workloads"][0]["deadline_hours"] = 2.3
    data["constraints"]["max_nodes"] = 2
    return data


def test_compare_rents_only_instances_that_meet_the_deadline(catalog, tmp_path):
    import openpyxl

    from planner import compare

    r = compare(_d23(), catalog=catalog, out=tmp_path)
    wc = r.comparison.workloads[0]
    assert wc.deadline_hours == 2.3
    # the local machine meets it (the solver keeps only such machines)
    assert wc.local.hours_per_job <= 2.3
    rented = [o for o in wc.cloud if o.feasible]
    assert all(o.time.hours_per_job <= 2.3 for o in rented)
    late = [o for o in wc.cloud if o.hours_over_deadline is not None]
    assert late and all(not o.feasible for o in late)
    for o in late:
        # hours over = the instance's hours per run (same time model) - 2.3
        assert o.hours_over_deadline == pytest.approx(o.time.hours_per_job - 2.3)
        assert o.why_not == (f"misses the deadline: {o.time.hours_per_job:,.2f} h per run, "
                             f"{o.hours_over_deadline:,.2f} h over the 2.3 h deadline")
    # the verdict no longer rests on lambda 8 x B200 at 2.35 h, nor on A100 / spot p4d runs of 18-98 h
    b200 = wc.option("lambda-gpu-8x-b200-sxm6")
    assert not b200.feasible and b200.time.hours_per_job > 2.3
    for iid in ("runpod-1x-a100-80gb-secure", "aws-p4d-24xlarge"):
        o = wc.option(iid)
        assert o is not None and not o.feasible, iid
    assert wc.best_on_demand is None or wc.option(wc.best_on_demand).time.hours_per_job <= 2.3
    assert wc.best_spot is None or wc.option(wc.best_spot).time.hours_per_job <= 2.3
    # the deadline misses come first among the misses, closest first
    misses = [o for o in wc.cloud if not o.feasible]
    assert misses[:len(late)] == late
    assert [o.hours_over_deadline for o in late] == sorted(o.hours_over_deadline for o in late)
    # JSON, the frame (CSV) and the workbook's Cloud vs Local sheet say it too
    doc = r.to_dict()
    row = next(o for o in doc["workloads"][0]["cloud"] if o["instance_id"] == "lambda-gpu-8x-b200-sxm6")
    assert row["feasible"] is False and row["hours_over_deadline"] == pytest.approx(b200.hours_over_deadline)
    assert doc["workloads"][0]["deadline_hours"] == 2.3
    df = r.to_frame()
    assert df.set_index("instance_id").loc["lambda-gpu-8x-b200-sxm6", "hours_over_deadline"] == \
        pytest.approx(b200.hours_over_deadline)
    wb = openpyxl.load_workbook(next(p for p in r.outputs.values() if str(p).endswith(".xlsx")))
    text = "\n".join(str(c.value) for row in wb["Cloud vs Local"].iter_rows() for c in row if c.value is not None)
    assert "misses the deadline" in text


def test_compare_text_flags_the_deadline_misses(catalog, tmp_path):
    from click.testing import CliRunner

    from planner.cli.main import main

    f = tmp_path / "d23.yaml"
    f.write_text(yaml.safe_dump(_d23()))
    res = CliRunner().invoke(main, ["compare", str(f)], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    assert "deadline: one run within 2.3 h (the scenario's), which the local machine meets" in res.output
    assert ("does not fit: lambda-gpu-8x-b200-sxm6 (8 x b200, $53.52/h (us-east-1, as of 2026-08)): misses the "
            "deadline: 2.35 h per run, 0.05 h over the 2.3 h deadline") in res.output
    assert "no cloud instance in the selection runs this workload within the 2.3 h deadline" in res.output


def _q70(**changes) -> dict:
    """The shipped QLoRA-70B on 2 x RTX 3090 scenario, without used_ok, with workload changes."""
    data = _mapping("qlora-70b-2x3090.yaml")
    del data["constraints"]["used_ok"]
    data["workloads"][0].update(changes)
    return data


def _no_plan(data: dict, catalog) -> NoFeasiblePlan:
    with pytest.raises(NoFeasiblePlan) as e:
        plan(data, catalog=catalog)
    return e.value


def test_used_ok_is_offered_only_as_the_solver_finds_it_deadline(catalog):
    # Case A: a 10 h deadline. With used_ok the scenario is still infeasible (the time model: 2 x rtx-3090 with
    # the parameters offloaded take some 46 h); the line says so, and what else it needs
    e = _no_plan(_q70(deadline_hours=10), catalog)
    s = e.suggestions
    assert not any(x.startswith("set used_ok: true") for x in s), s
    head = s[0]
    assert head.startswith("rtx-3090 is sold used only (out of production; used price of 2026-06-20, $850.00): "
                           "used_ok: true buys it, but re-planned with it no machine fits either (closest miss, "
                           "deadline: 2 x rtx-3090")
    # the hours in it are the re-plan's own: plan the scenario with used_ok and read the deadline miss back
    again = _q70(deadline_hours=10)
    again["constraints"]["used_ok"] = True
    e2 = _no_plan(again, catalog)
    deadline = next(r for r in e2.reasons if r.startswith("deadline"))
    assert deadline.split(": ", 1)[1] in head
    # what else it needs: the re-plan's suggestions, each with used_ok
    assert s[1:] == [x if x.startswith(("a larger card", "another card")) else f"used_ok: true and {x}"
                     for x in e2.suggestions]
    assert "Nothing simple would fit" not in str(e)


def test_used_ok_is_offered_only_as_the_solver_finds_it_serving(catalog):
    # Case B: llama-3.1-70b served on rtx-3090 at 4 users. The memory model alone said "w fits 8 x rtx-3090 ...
    # tp 8", but a node holds at most 2 of them and a replica stays in one node: re-planned with used_ok, nothing
    data = {"name": "s3090", "workloads": [{"name": "w", "model": "llama-3.1-70b", "task": "infer", "context": 4096,
                                            "slo": {"ttft_s": 2, "tpot_s": 0.05, "concurrency": 4,
                                                    "output_tokens": 256}}],
            "constraints": {"allowed_gpus": ["rtx-3090"]}}
    s = _no_plan(data, catalog).suggestions
    assert not any(x.startswith("set used_ok: true") for x in s), s
    assert "used_ok: true buys it, but re-planned with it no machine fits either (closest miss, vram: " in s[0]
    assert any("a node holds at most 2 rtx-3090 cards" in x for x in s)


def test_used_ok_that_makes_the_plan_feasible_names_the_machine(catalog):
    # the shipped scenario without used_ok: re-planned with it, the solver buys the shipped machine
    e = _no_plan(_q70(), catalog)
    full = _mapping("qlora-70b-2x3090.yaml")
    p = plan(full, catalog=catalog)
    line = e.suggestions[0]
    ch = p.choice
    assert line.startswith(f"set used_ok: true: rtx-3090 is sold used only (out of production; used price of "
                           f"2026-06-20, $850.00); re-planned with it, the solver buys {ch['cards_total']} x rtx-3090 "
                           f"on {ch['platform_id']} for ${p.plan.total_usd:,.2f}, and qlora-70b fits 2 x rtx-3090 at "
                           f"{p.plan.estimates[0].per_gpu_total_bytes / 2**30:,.2f} GiB per GPU")


def test_a_used_only_card_keeps_its_what_would_fit_levers(catalog):
    # Case C: no parameter offload and no used_ok. With used_ok kept the same scenario offers fsdp +
    # offload_params (6.24 GiB/GPU, the shipped recipe), a shorter seq_len and ZeRO-3 across 4; without it the
    # plan said "Nothing simple would fit". Now: the used-only line, then the same levers with used_ok.
    e = _no_plan(_q70(offload_params=False), catalog)
    kept = _q70(offload_params=False)
    kept["constraints"]["used_ok"] = True
    levers = _no_plan(kept, catalog).suggestions
    assert any(x.startswith("framework: fsdp with offload_params") for x in levers)
    s = e.suggestions
    assert s[0].startswith("rtx-3090 is sold used only") and "closest miss, vram: " in s[0]
    for x in levers:
        assert (x if x.startswith(("a larger card", "another card")) else f"used_ok: true and {x}") in s
    assert "Nothing simple would fit" not in str(e)
    text = str(e)
    assert "used_ok: true and framework: fsdp with offload_params (FSDP CPU offload) on 2 x rtx-3090" in text


def test_estimate_gpu_layers_max_with_a_card_takes_the_most_that_fit():
    # G: `estimate ... --gpu-layers max --gpu rtx-4090` failed with "...needs a card" although --gpu was given.
    from click.testing import CliRunner

    from planner import estimate, fit
    from planner.cli.main import main

    args = dict(model="llama-3.1-70b", task="infer", engine="llama.cpp", weights="Q4_K_M")
    most = fit(gpu="rtx-4090", gpu_layers="max", **args)  # the exact scan planner fit runs
    r = estimate(gpu="rtx-4090", gpu_layers="max", **args)
    assert 0 < most.max_value < 81  # llama-3.1-70b: 80 blocks + the output layer do not all fit 24 GB
    assert r.workload.infer.gpu_layers == most.max_value
    assert r.fits and r.per_gpu_total_bytes == most.need_bytes
    assert r.layers_note == (f"--gpu-layers max: {most.max_value} of 81 layers (counting the output layer) fit "
                             "rtx-4090, the most that fit (as 'planner fit --gpu rtx-4090 --gpu-layers max' finds)")
    res = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "llama.cpp",
                                    "--weights", "Q4_K_M", "--gpu-layers", "max", "--gpu", "rtx-4090"],
                             env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    # llama-3.1-8b: 32 blocks + the output layer, all on a 24 GB card at Q4_K_M
    assert "--gpu-layers max: 33 of 33 layers (counting the output layer, all of them) fit rtx-4090" in res.output
    # without a card it still explains what max needs
    res = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "llama.cpp",
                                    "--weights", "Q4_K_M", "--gpu-layers", "max"])
    assert res.exit_code == 2 and "which needs a card" in res.output
