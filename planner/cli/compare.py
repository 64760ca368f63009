"""The ``planner compare`` command: the plan's purchase against renting cloud instances
(planner.api.compare), printed as text or JSON.

The module imports only click at load time; everything heavy (the solver, pandas, scipy,
openpyxl) is imported inside the command. planner.cli.main registers it.
"""

from __future__ import annotations

import click

from planner.cli import options as opts
from planner.cli.common import (LineError, SingleValueCommand, echo, given_on_command_line, handle_errors,
                                input_file_option, joined, one_catalog, say_infeasible, verbose_option)
from planner.cli.outopt import out_dir_option
from planner.core.escape import json_text
from planner.core.names import escape_unsafe


def one_unnamed(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """--tokens-per-month given more than once without a workload name ('--tokens-per-month 1M --tokens-per-month
    2M'): refused in one line, as any option of one value given twice (planner.cli.common.SingleValueCommand);
    named ones (NAME=COUNT) may repeat, one per workload."""
    unnamed = [v for v in value if "=" not in v]
    if len(unnamed) > 1:
        shown = escape_unsafe(" ".join(f"--tokens-per-month {v}" for v in unnamed))
        raise LineError(f"--tokens-per-month: given {len(unnamed)} times without a workload name ({shown}); a count "
                        "without a name is for every workload, so give it once, or once per workload as NAME=COUNT.",
                        ctx)
    return value


@click.command(name="compare", cls=SingleValueCommand)
@click.argument("scenario_file", metavar="SCENARIO", type=opts.PathType(dir_okay=False), callback=input_file_option)
@click.option("--catalog", "catalog_dir", type=opts.PathType(file_okay=False), multiple=True,
              callback=one_catalog, help="Catalog overlay directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as one JSON object.")
@click.option("--out", "out_dir", type=opts.PathType(file_okay=False), default=None, callback=out_dir_option,
              help="Also write OUT/<scenario>-compare.json and OUT/<scenario>-compare.xlsx (with the "
                   "'Cloud vs Local' sheet).")
@click.option("--top", "top_k", default=5, show_default=True, type=opts.IntRange(1, 1000),
              help="Cloud instances shown per workload (text output).")
@click.option("--tokens-per-month", "tokens_per_month", multiple=True, metavar="[WORKLOAD=]COUNT", callback=one_unnamed,
              help="Tokens a workload processes a month (training: trained; inference: generated), e.g. 200M: "
                   "its busy hours are derived from it instead of the default utilization. Repeat as NAME=COUNT "
                   "for a scenario of several workloads; replaces the workloads' tokens_per_month.")
@verbose_option
@handle_errors
def compare(scenario_file: str, catalog_dir: str | None, as_json: bool, out_dir: str | None, top_k: int,
            verbose: bool, tokens_per_month: tuple[str, ...]) -> None:
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
    and the capex with the plan's quote lines. A workload's tokens_per_month (or --tokens-per-month)
    sets its busy hours: tokens / the planned machine's tokens per second; a volume that needs more
    hours than the month has is warned about (the machine cannot keep up).

    \b
    Example:
      planner compare scenarios/compare-qlora-7b-12gb.yaml
      planner compare scenarios/compare-qlora-7b-12gb.yaml --json > compare.json
      planner compare scenarios/compare-qlora-7b-12gb.yaml --out reports/
      planner compare scenarios/compare-qlora-7b-12gb.yaml --tokens-per-month 200M
    """
    from planner.api import compare as run_compare
    from planner.solve.solver import NoFeasiblePlan

    try:
        r = run_compare(scenario_file, catalog=opts.load_catalog_option(catalog_dir), out=out_dir,
                        tokens_per_month=list(tokens_per_month) or None, top=top_k)
    except NoFeasiblePlan as exc:  # as 'planner plan' says it: the JSON asked for, what was written and removed
        say_infeasible(exc, as_json, "comparison")
        raise
    comparison, written = r.comparison, list(r.outputs.values())
    if as_json:
        click.echo(json_text(r.to_dict(), indent=2, allow_nan=False))
        _say_notes(r.notes)
        if given_on_command_line("top_k"):  # said, not silently ignored (h40a N7); plan's JSON has no such list
            echo("Note: --top shapes the text output only; the JSON lists every cloud instance that fits each "
                 "workload.", err=True)
        return
    echo(r.text(verbose=verbose))
    if written:
        echo("")
        echo("Wrote " + joined(list(written)))
        if comparison.copies > 1:
            echo(f"The workbook's Quote lists the {comparison.copies} copies of the planned machine (each "
                       f"quantity x {comparison.copies}); its grand total, ${comparison.capex_usd:,.2f}, is the "
                       "capex above.")
    _say_notes(r.notes)


def _say_notes(notes: tuple[str, ...]) -> None:
    """What writing the reports did beside them (a stopped run's staging folder removed or left, a stale report
    kept: CompareResult.notes), one line each on standard error, as ``planner plan`` says them."""
    for note in notes:
        echo(note, err=True)
