"""Text and JSON forms of an :class:`planner.memory.Estimate` for the terminal and scripts.

Only this module and the report writers turn bytes into GiB for people; every header says
its unit. pandas is imported inside the functions, so importing this module costs nothing.
"""

from __future__ import annotations

from typing import Any

from planner.memory import Estimate
from planner.core.units import GiB


def estimate_to_dict(est: Estimate) -> dict[str, Any]:
    """A JSON-ready dict: sizes are integer bytes, every component with its formula and source."""
    lo, hi = est.ram_rule_bytes()
    return {
        "workload": est.workload_name,
        "model": est.model_id,
        "task": est.task,
        "parameters": est.parameters,
        "trainable_parameters": est.trainable_parameters,
        "recipe": est.recipe,
        "recipe_description": est.recipe_description,
        "gpus": est.gpus,
        "gpus_per_node": est.gpus_per_node,
        "components": [
            {"name": c.name, "where": c.where, "bytes": c.bytes, "phase": c.phase or "always", "kind": c.kind,
             "formula": c.formula, "source": c.source}
            for c in est.components
        ],
        "per_gpu_total_bytes": est.per_gpu_total_bytes,
        "per_gpu_allocated_bytes": est.per_gpu_allocated_bytes,
        "peak_phase": est.peak_phase or "always",
        "host_total_bytes": est.host_total_bytes,
        "host_peak_phase": est.host_peak_phase or "always",
        "ram_rule_of_thumb_bytes": {"low": lo, "high": hi, "rule": "6-8x VRAM (offload)" if est.offload
                                    else "2-4x VRAM"},
        "notes": list(est.notes),
        "warnings": list(est.warnings),
        **({"extra": dict(est.extra)} if est.extra else {}),
    }


def estimate_table(est: Estimate):
    """The breakdown as a pandas DataFrame with unit-bearing headers."""
    import pandas as pd

    rows = []
    for c in est.components:
        rows.append({
            "component": c.name,
            "when": c.phase or "always",
            "per-GPU GiB": round(c.bytes / GiB, 3) if c.where == "gpu" else None,
            "host GiB": round(c.bytes / GiB, 3) if c.where == "host" else None,
            "formula": c.formula,
            "source": c.source,
        })
    return pd.DataFrame(rows)


def estimate_text(est: Estimate, *, width: int = 200) -> str:
    """The breakdown, the recipe and the totals as text for the terminal."""
    import pandas as pd

    df = estimate_table(est)
    lines = [
        f"Workload: {est.workload_name}   model: {est.model_id}   task: {est.task}   GPUs: {est.gpus}"
        f" ({est.gpus_per_node} per machine)",
        f"Parameters: {est.parameters:,}   trainable: {est.trainable_parameters:,}",
        f"Recipe: {est.recipe} - {est.recipe_description}",
        "",
    ]
    with pd.option_context("display.max_colwidth", 90, "display.width", width, "display.max_rows", 500):
        for where, title in (("gpu", "Per GPU"), ("host", "Host RAM (one machine)")):
            part = df[[c.where == where for c in est.components]]
            cols = ["component", "when", "per-GPU GiB" if where == "gpu" else "host GiB", "formula", "source"]
            lines.append(f"{title}:")
            lines.append(part[cols].to_string(index=False, na_rep=""))
            lines.append("")
    lo, hi = est.ram_rule_bytes()
    lines.append(f"Per-GPU total: {est.per_gpu_total_bytes / GiB:,.2f} GiB"
                 f" (peak in {est.peak_phase or 'every phase'}; tensors {est.per_gpu_allocated_bytes / GiB:,.2f} GiB)")
    lines.append(f"Host RAM total: {est.host_total_bytes / GiB:,.2f} GiB (peak in {est.host_peak_phase or 'every phase'});"
                 f" rule of thumb {'6-8x' if est.offload else '2-4x'} VRAM: {lo / GiB:,.0f}-{hi / GiB:,.0f} GiB")
    for key, value in est.extra.items():
        lines.append(f"{key.replace('_', ' ')}: {value:,}")
    for n in est.notes:
        lines.append(f"Note: {n}")
    for w in est.warnings:
        lines.append(f"Warning: {w}")
    return "\n".join(lines)


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def plan_markdown(plan_text: str, estimates: Any) -> str:
    """A Markdown report: the recommendation as printed, then each workload's memory breakdown.

    Args:
        plan_text: the plan as the CLI prints it.
        estimates: the chosen configuration's estimates (a mapping name -> Estimate, or a list).
    """
    items = list(estimates.values()) if hasattr(estimates, "values") else list(estimates)
    lines = ["# Plan", "", "```text", plan_text, "```", ""]
    for est in items:
        lines += [f"## Memory: {est.workload_name} ({est.model_id}, {est.task})", "",
                  f"Recipe: {est.recipe}: {est.recipe_description}", "",
                  "| component | where | when | GiB | formula | source |", "|---|---|---|---|---|---|"]
        for c in est.components:
            lines.append("| " + " | ".join(_md_cell(v) for v in (
                c.name, "per GPU" if c.where == "gpu" else "host", c.phase or "always", f"{c.bytes / GiB:,.3f}",
                c.formula, c.source)) + " |")
        lines += ["", f"Per-GPU total: {est.per_gpu_total_bytes / GiB:,.2f} GiB; host RAM total: "
                      f"{est.host_total_bytes / GiB:,.2f} GiB.", ""]
    return "\n".join(lines)
