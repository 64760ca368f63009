"""The ``planner plan`` command: the cheapest machine for a scenario, its quote and reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from planner.cli import options as opts
from planner.cli.common import gib_text, handle_errors, joined


def with_undefined_sources(result: Any, index: Any) -> Any:
    """The plan with a warning naming the REF ids its quote lines cite that ``index`` (the
    :class:`planner.catalog.sources.SourceIndex` of the catalog's SOURCES.md, :func:`planner.report.from_plan.plan_references`)
    does not define (the workbook's Sources sheet marks them too; the console and JSON say it here)."""
    import dataclasses

    from planner.catalog.sources import ref_ids

    missing: dict[str, list[str]] = {}
    for item in result.items:
        for ref in ref_ids(item.source):
            if ref not in index:
                missing.setdefault(ref, []).append(item.catalog_id or item.description)
    if not missing:
        return result
    text = "; ".join(f"REF:{ref} ({', '.join(dict.fromkeys(ids))})" for ref, ids in missing.items())
    return dataclasses.replace(result, warnings=tuple(result.warnings) + (
        f"price sources cited but defined in no SOURCES.md beside the catalog: {text}; add them to the overlay's "
        "SOURCES.md so the quote can be traced",))




def plan_text(plan: Any, width: int = 200) -> str:
    """The recommendation for the terminal: machine, price, per-GPU need vs capacity, recipe, quote."""
    import pandas as pd

    c = plan.choice
    lines = [f"Scenario {plan.scenario}: {len(plan.estimates)} workload(s); {len(plan.candidates):,} candidates, "
             f"{int(plan.candidates['feasible'].sum()):,} feasible.", ""]
    nodes = int(c["nodes"])
    machine = f"{int(c['cards_per_node'])} x {c['gpu_id']} on {c['platform_id']}"
    if c["dimm_id"]:
        machine += f", {int(c['dimm_count'])} x {c['dimm_id']} ({gib_text(c['ram_bytes'])} RAM)"
    if nodes > 1:
        machine = (f"{nodes} nodes of [{machine}] + {int(c['nic_count'])} x {c['nic_id']}"
                   + (f" + {c['switch_id']}" if c["switch_id"] else " (back-to-back, no switch)"))
    lines.append(f"Recommendation: {machine}")
    lines.append(f"Total: ${plan.total_usd:,.2f} (capex, USD)")
    lines.append("")
    from planner.plan.candidates import takes_headroom

    for est, strat, w in zip(plan.estimates, plan.strategies, plan.workloads):
        lines.append(f"Workload {est.workload_name} ({est.task}, {est.model_id}): {strat}")
        of = (f"{gib_text(c['gpu_capacity_bytes'])} ({gib_text(c['gpu_cuda_total_bytes'])} CUDA total less headroom)"
              if takes_headroom(w) else
              f"{gib_text(c['gpu_cuda_total_bytes'])} (CUDA total; vLLM's gpu_memory_utilization "
              f"{w.infer.gpu_memory_utilization:g} is the margin)")
        lines.append(f"  needs {gib_text(est.per_gpu_total_bytes)} per GPU of {of}; host RAM peak "
                     f"{gib_text(est.host_total_bytes)} of {gib_text(c['ram_bytes'])}")
        lines.append(f"  recipe {est.recipe}: {est.recipe_description}")
    lines.append("")
    # a platform line's parts list goes below the table, which stays narrow
    from planner.plan.quote import PARTS_SEPARATOR

    parts = {i.catalog_id: i.description.split(PARTS_SEPARATOR, 1)[1] for i in plan.line_items()
             if PARTS_SEPARATOR in i.description}
    items = pd.DataFrame([{"item": i.description.split(PARTS_SEPARATOR, 1)[0], "catalog id": i.catalog_id,
                           "qty": i.quantity, "unit price (USD)": f"{i.unit_price_usd:,.2f}",
                           "total (USD)": f"{i.total_usd:,.2f}", "price kind": i.price_kind, "as of": i.as_of}
                          for i in plan.line_items()])
    with pd.option_context("display.width", width, "display.max_colwidth", 80, "display.max_columns", 20):
        lines.append("Line items:")
        wide = max((len(x) for x in items["item"]), default=4)
        lines.append(items.to_string(index=False,
                                     formatters={"item": lambda x: f"{x:<{wide}}"}))
        for cid, text in parts.items():
            lines.append(f"  {cid} priced as: {text}")
        if len(plan.alternatives):
            a = plan.alternatives
            alt = pd.DataFrame({
                "GPU": a["gpu_id"], "platform": a["platform_id"], "cards/node": a["cards_per_node"],
                "nodes": a["nodes"], "RAM (GiB)": (a["ram_bytes"] / 2**30).round(0).astype(int),
                "price (USD)": a["capex_usd"].map(lambda x: f"{x:,.2f}"),
                "need/GPU (GiB)": (a["per_gpu_need_bytes"] / 2**30).round(2),
                "capacity (GiB)": (a["gpu_capacity_bytes"] / 2**30).round(2), "why it lost": a["why_lost"]})
            lines.append("")
            lines.append("Alternatives:")
            lines.append(alt.to_string(index=False))
    if plan.warnings:
        lines.append("")
        lines.append("Warnings:")
        lines += [f"  - {w}" for w in plan.warnings]
    return "\n".join(lines)


#: Report formats `planner plan --format` writes.
PLAN_FORMATS = ("xlsx", "csv", "json", "md")


def plan_formats(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    """'xlsx,csv' -> ('xlsx', 'csv'); unknown or empty names are a usage error (exit 2)."""
    from planner.core.errors import did_you_mean

    parts = [p.strip().lower() for p in value.split(",") if p.strip()]
    valid = f"give a comma-separated list of {', '.join(PLAN_FORMATS)}"
    if not parts:
        raise click.BadParameter(f"the list of report formats is empty; {valid}, e.g. --format xlsx,csv",
                                 ctx=ctx, param=param)
    bad = [p for p in parts if p not in PLAN_FORMATS]
    if bad:
        guess = did_you_mean(bad[0], PLAN_FORMATS) or ""
        what = f"{bad[0]!r} is not a report format" if len(bad) == 1 else \
            f"{', '.join(map(repr, bad))} are not report formats"
        raise click.BadParameter(f"{what}; {valid}" + (f". {guess}" if guess.startswith("Did you mean") else ""),
                                 ctx=ctx, param=param)
    return tuple(dict.fromkeys(parts))




@click.command(name="plan")
@click.argument("scenario_file", metavar="SCENARIO", type=click.Path(dir_okay=False))
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--out", "out_dir", default="reports", show_default=True, type=click.Path(),
              help="Directory for the reports, OUT/<scenario>.<format>.")
@click.option("--format", "formats", default="xlsx,csv,json", show_default=True, callback=plan_formats,
              help="Reports to write, comma-separated: xlsx (workbook with a live quote), csv (every "
                   "candidate, ranked), json (the plan), md (the recommendation and memory breakdowns).")
@click.option("--top", "top_k", default=5, show_default=True, type=click.IntRange(0, 1000),
              help="Alternatives to keep.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as one JSON object.")
@handle_errors
def plan(scenario_file: str, catalog_dir: str | None, out_dir: str, formats: tuple[str, ...], top_k: int,
         as_json: bool) -> None:
    """Recommend the cheapest machine that runs every workload of SCENARIO.

    Prints the choice (GPU, count, platform, DIMMs, price, per-GPU need vs capacity, recipe),
    the quote's line items and the alternatives, and writes the reports --format names into
    OUT: <scenario>.xlsx (Summary, Quote with live totals, Memory with a chart, Alternatives,
    Assumptions, Sources), <scenario>.csv (every candidate, ranked, with why_not), <scenario>.json (the
    plan). Each file is written to a temporary file and renamed into place. Exits 1 with the
    reasons and what would fit when nothing does (the csv and json are still written when asked).

    \b
    Example:
      planner plan scenarios/qlora-7b-12gb.yaml
      planner plan scenarios/ft-70b-cluster.yaml --top 10 --out reports/cluster --format xlsx,csv,json
      planner plan scenarios/serve-7b-2k-16users.yaml --json --format json > plan.json
    """
    from planner.core.atomic import ensure_dir, write_text
    from planner.core.names import safe_stem
    from planner.report.export import candidates_csv, infeasible_to_dict, plan_to_dict
    from planner.plan.scenario import load_scenario
    from planner.plan.solver import NoFeasiblePlan
    from planner.plan.solver import plan as make_plan

    catalog = opts.load_catalog_option(catalog_dir)
    scenario = load_scenario(Path(scenario_file), catalog, shown=scenario_file)
    if scenario.costs is not None:
        from planner.cost.tco import read_costs

        # plan does not use the rent-or-buy inputs, but a mistake in them is still the user's to see
        read_costs(scenario.costs, catalog, scenario.workloads)

    def write(name: str, table: Any, document: dict[str, Any]) -> list[Path]:
        paths: list[Path] = []
        if "csv" not in formats and "json" not in formats:
            return paths  # nothing to write: do not even create the directory
        out = ensure_dir(Path(out_dir))
        stem = safe_stem(name)
        if "csv" in formats:
            paths.append(write_text(out / f"{stem}.csv", candidates_csv(table)))
        if "json" in formats:
            paths.append(write_text(out / f"{stem}.json", json.dumps(document, indent=2, allow_nan=False) + "\n"))
        return paths

    if safe_stem(scenario.name) != scenario.name:
        click.echo(f"Note: the reports are named {safe_stem(scenario.name)!r}: the scenario name {scenario.name!r} "
                   "holds characters a file name cannot (path separators, spaces, symbols).", err=True)
    try:
        result = make_plan(scenario, catalog, top_k=top_k)
    except NoFeasiblePlan as exc:
        doc = infeasible_to_dict(exc)
        paths = write(exc.scenario, exc.candidates, doc)
        # A quote or report from an earlier, feasible run of this scenario would now be stale.
        stale = [Path(out_dir) / f"{safe_stem(exc.scenario)}.{ext}" for ext in ("xlsx", "md")]
        removed = [p for p in stale if p.is_file()]
        for p in removed:
            p.unlink()
        if as_json:
            doc["outputs"] = {p.suffix[1:]: str(p) for p in paths}
            click.echo(json.dumps(doc, indent=2))
        if paths:
            click.echo(f"Wrote {joined(paths)}", err=True)
        if removed:
            click.echo(f"Removed the stale {joined(removed)} of an earlier plan: nothing fits now.", err=True)
        raise
    from planner.report.from_plan import plan_references

    # the catalog's SOURCES.md, read once: for the undefined-REF warning and the workbook's Sources sheet
    references = plan_references((result.assumptions or {}).get("catalog_files") or ())
    result = with_undefined_sources(result, references)
    doc = plan_to_dict(result)
    paths = write(result.scenario, result.candidates, doc)
    if "xlsx" in formats:
        from planner.report.from_plan import workbook_data_from_plan
        from planner.report.workbook import write_workbook

        text = Path(scenario_file).read_text(encoding="utf-8", errors="replace")
        data = workbook_data_from_plan(result, scenario_text=text, references=references)
        paths.append(write_workbook(data, ensure_dir(Path(out_dir)) / f"{safe_stem(result.scenario)}.xlsx"))
    if "md" in formats:
        from planner.report.render import plan_markdown

        md = plan_markdown(plan_text(result), result.estimates)
        paths.append(write_text(ensure_dir(Path(out_dir)) / f"{safe_stem(result.scenario)}.md", md))
    if as_json:
        doc["outputs"] = {p.suffix[1:]: str(p) for p in paths}
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(plan_text(result))
    click.echo("")
    click.echo(f"Wrote {joined(paths)}")
