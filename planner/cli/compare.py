"""The ``planner compare`` command: the plan's purchase against renting cloud instances.

Kept apart from planner.cli.main so that the command's module imports only click and
planner.core.errors at load time; everything heavy (the solver, pandas, scipy, openpyxl) is
imported inside the command. planner.cli.main registers it with ``main.add_command(compare)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from planner.cli.common import handle_errors


def load_scenario_and_costs(path: Path, catalog: Any, *, shown: str | None = None) -> tuple[Any, Any]:
    """The scenario and its ``costs:`` inputs (:class:`planner.cost.tco.CostInputs`).

    The file is read once; the ``costs`` mapping is read with :func:`planner.cost.tco.read_costs`,
    which checks provider and instance names against the catalog and ``batch_inference`` against
    the scenario's workloads.

    Raises:
        ScenarioError: as planner.plan.scenario.load_scenario, for invalid ``costs`` keys, and for
            request inputs compare cannot price (:func:`check_request_inputs`).
    """
    import hashlib

    from planner.core.errors import ScenarioError
    from planner.core.fields import Entry
    from planner.plan.scenario import read_scenario_file, scenario_from_mapping
    from planner.cost.tco import read_costs

    shown = shown or str(path)
    data, raw = read_scenario_file(path, shown)  # read once: the scenario and its costs: block
    scenario = scenario_from_mapping(data, catalog, file=shown, default_name=Path(path).stem,
                                     sha256=hashlib.sha256(raw).hexdigest(), base_dir=Path(path).parent)
    root = Entry(data, file=shown, path="", error=ScenarioError, line=1)
    check_request_inputs(root, scenario.workloads)
    costs = read_costs(root.child("costs", None), catalog, scenario.workloads)
    return scenario, costs


def check_request_inputs(root: Any, workloads: Any) -> None:
    """Refuse the request inputs compare cannot price, at the key's line of the scenario file.

    planner.workload.spec reads ``tokens_per_request`` (1 to the longest sequence) and
    ``requests_per_hour`` (0 or more) without relating them to anything; compare times them
    (planner.cost.timing), so it checks here, before any pricing:

    - ``requests_per_hour`` must be above 0: a service at 0 requests/h has no rate to keep up
      with (leave the key out for a service with no rate).
    - ``tokens_per_request`` (the tokens generated per request) must be below the context: the
      time model takes the prompt as the rest of the context (context - tokens_per_request, an
      assumption stated in the output), and a request needs at least one prompt token (vLLM
      refuses an empty prompt). The context is the workload's, given or its default.

    Args:
        root: the scenario file's top-level mapping as a planner.core.fields.Entry (file and lines).
        workloads: the validated scenario's workloads (planner.plan.scenario.ScenarioWorkload), in the
            order of the file's ``workloads:`` list.

    Raises:
        ScenarioError: either input out of range, at its key.
    """
    entries = root.children("workloads", None)
    for e, sw in zip(entries, workloads):
        for v in getattr(sw, "variants", ()):
            i = v.workload.infer
            if i is None:
                continue
            rph = i.requests_per_hour
            if rph is not None and rph <= 0:
                raise e.error(f"must be more than 0, not {e.raw('requests_per_hour', rph)!r}", "requests_per_hour",
                              "It is the requests the service must keep up with, per hour; give the rate (e.g. "
                              "requests_per_hour: 500), or leave the key out for a service with no rate to check.")
            n, ctx = i.tokens_per_request, i.context
            if n is not None and n >= ctx:
                given = "context" in e.data
                where = f"the context, {ctx:,} tokens" + ("" if given else " (the default; context is not given)")
                how = "is more than" if n > ctx else "equals"
                longest = v.workload.architecture.max_position_embeddings
                raise e.error(f"{n:,} {how} {where}, which holds a request's prompt and its generated tokens",
                              "tokens_per_request",
                              "tokens_per_request is the tokens generated per request, and compare takes the prompt "
                              "as the rest of the context (context - tokens_per_request, at least 1 token): give "
                              f"tokens_per_request: {ctx - 1} or less"
                              + (f", or context: {n + 1} or more." if n + 1 <= longest else
                                 f" (the model's longest sequence is {longest:,} tokens)."))


def write_comparison_workbook(comparison: Any, plan: Any, path: Path, *, scenario_text: str = "") -> Path:
    """The plan's workbook (planner.report.workbook) with the "Cloud vs Local" sheet added, written atomically.

    When a request rate needs several copies of the planned machine, the Quote lists every copy
    (each quantity x the copies) and the Summary's total price is their grand total: the capex
    the break-even rests on (planner.report.copies.workbook_data_for_copies).
    """
    from planner.report.copies import mark_copies, workbook_data_for_copies
    from planner.report.from_plan import workbook_data_from_plan
    from planner.report.sheets.cloud import add_cloud_sheet
    from planner.report.workbook import write_workbook

    import dataclasses

    from planner.catalog.loader import SourceRef

    data = workbook_data_from_plan(plan, scenario_text=scenario_text)
    # the cloud prices' sources join the catalog entries' on the Sources sheet
    seen = {s.id for s in data.sources}
    cloud = []
    for wc in comparison.workloads:
        for o in wc.cloud:
            if o.instance_id not in seen:
                seen.add(o.instance_id)
                cloud.append(SourceRef("cloud.yaml", o.instance_id, o.source, o.as_of))
    data = dataclasses.replace(data, sources=tuple(data.sources) + tuple(cloud))
    data = workbook_data_for_copies(data, comparison)

    def add(wb: Any) -> None:
        mark_copies(wb, comparison)
        add_cloud_sheet(wb, comparison, quote_copies=comparison.copies)

    return write_workbook(data, path, extra_sheets=[add])


@click.command()
@click.argument("scenario_file", metavar="SCENARIO", type=click.Path(dir_okay=False))
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as one JSON object.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Also write OUT/<scenario>-compare.json and OUT/<scenario>-compare.xlsx (with the "
                   "'Cloud vs Local' sheet).")
@click.option("--top", "top_k", default=5, show_default=True, type=click.IntRange(1, 1000),
              help="Cloud instances shown per workload (text output).")
@handle_errors
def compare(scenario_file: str, catalog_dir: str | None, as_json: bool, out_dir: str | None, top_k: int) -> None:
    """Compare buying the planned machine with renting cloud instances, for SCENARIO.

    Plans the scenario as 'planner plan' does, then times every workload on the local GPUs and
    on every cloud instance that fits it (same memory model), and prints per workload the time
    and cost per job and per million tokens, the local TCO, and the break-even in hours of use
    and in months at the scenario's utilization, on-demand and spot. The scenario's 'costs:'
    mapping sets electricity price, PUE, utilization, ownership period, residual value,
    support, cloud discount, providers and instances (defaults and their sources: planner.cost.tco).
    Training is priced as batch work (cloud hours shrink on a faster instance); inference as a
    service (the instance up for the local busy hours) unless 'costs: batch_inference' lists it.
    A service's requests_per_hour is met on both sides by one rule: ceil(rate / one copy's
    requests/h) copies of the planned machine, and of each instance (slower ones are scaled
    out, not dropped). tokens_per_request is the tokens generated per request, and the prompt is
    taken to be the rest of the context (an assumption, stated in the output), so it must be
    below the context; requests_per_hour must be above 0. The purchase price is paid at month 0
    and the resale value credited at
    the end of the ownership period. Each cloud price is shown with its region, date and source,
    and the capex with the plan's quote lines.

    \b
    Example:
      planner compare scenarios/compare-qlora-7b-12gb.yaml
      planner compare scenarios/compare-qlora-7b-12gb.yaml --json > compare.json
      planner compare scenarios/compare-qlora-7b-12gb.yaml --out reports/
    """
    from planner.catalog.loader import load_catalog
    from planner.cost.compare import compare as run_compare
    from planner.cost.compare import comparison_text, comparison_to_dict
    from planner.core.names import safe_stem
    from planner.report.export import jsonable
    from planner.plan.solver import plan as make_plan

    catalog = load_catalog(Path(catalog_dir) if catalog_dir else None)
    scenario, costs = load_scenario_and_costs(Path(scenario_file), catalog, shown=scenario_file)
    plan = make_plan(scenario, catalog, explain=False)
    comparison = run_compare(plan, scenario, catalog, costs)
    doc = jsonable(comparison_to_dict(comparison))
    doc["scenario"] = scenario.name
    written: list[Path] = []
    if out_dir is not None:
        from planner.core.atomic import ensure_dir, write_text

        out = ensure_dir(Path(out_dir))
        stem = safe_stem(scenario.name) + "-compare"
        written.append(write_text(out / f"{stem}.json", json.dumps(doc, indent=2, allow_nan=False) + "\n"))
        text = Path(scenario_file).read_text(encoding="utf-8", errors="replace")
        written.append(write_comparison_workbook(comparison, plan, out / f"{stem}.xlsx", scenario_text=text))
    if as_json:
        if written:
            doc["outputs"] = [str(p) for p in written]
        click.echo(json.dumps(doc, indent=2, allow_nan=False))
        return
    click.echo(comparison_text(comparison, top=top_k))
    if written:
        click.echo("")
        click.echo("Wrote " + " and ".join(str(p) for p in written))
        if comparison.copies > 1:
            click.echo(f"The workbook's Quote lists the {comparison.copies} copies of the planned machine (each "
                       f"quantity x {comparison.copies}); its grand total, ${comparison.capex_usd:,.2f}, is the "
                       "capex above.")
