"""The ``planner plan`` command: the cheapest machine for a scenario, its quote and reports."""

from __future__ import annotations

import click

from planner.cli import options as opts
from planner.cli.common import (LineError, SingleValueCommand, echo, handle_errors, input_file_option, joined,
                                one_catalog, say_infeasible)
from planner.cli.outopt import out_dir_option
from planner.core.escape import json_text


def plan_formats(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    """'xlsx,csv' -> ('xlsx', 'csv'); unknown or empty names are a usage error (exit 2)
    (planner.api.plans.report_formats reads the list)."""
    from planner.api.plans import report_formats
    from planner.core.errors import InputError

    try:
        return report_formats(value)
    except InputError as exc:
        hint = f" {exc.hint}" if exc.hint else ""  # planner's '--format: ...' line, as --top's (h21b M3)
        problem = exc.problem if exc.problem.endswith(("?", ".")) else exc.problem + "."
        raise LineError(f"{opts.param_name(param)}: {problem}{hint}", ctx) from None


@click.command(name="plan", cls=SingleValueCommand)
@click.argument("scenario_file", metavar="SCENARIO", type=opts.PathType(dir_okay=False), callback=input_file_option)
@click.option("--catalog", "catalog_dir", type=opts.PathType(file_okay=False), multiple=True,
              callback=one_catalog, help="Catalog overlay directory.")
@click.option("--out", "out_dir", default="reports", show_default=True, type=opts.PathType(), callback=out_dir_option,
              help="Directory for the reports, OUT/<scenario>.<format>.")
@click.option("--format", "formats", default="xlsx,csv,json", show_default=True, callback=plan_formats,
              help="Reports to write, comma-separated: xlsx (workbook with a live quote), csv (every "
                   "candidate, ranked), json (the plan), md (the recommendation and memory breakdowns).")
@click.option("--top", "top_k", default=5, show_default=True, type=opts.IntRange(0, 1000),
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
    plan). The files are written into a staging folder inside OUT and moved into place together,
    so OUT holds the previous set or the new one, whole, even when the run is stopped (SIGINT,
    SIGTERM, SIGHUP: exit 130, 143, 129); a second run on the same OUT at the same time fails with
    one line, and a read-only report is refused, not replaced. Exits 1 with the reasons and what
    would fit when nothing does (the csv and json are still written when asked, and a stale xlsx
    and md of an earlier plan are removed with them). A report of an earlier plan of the same
    scenario in a format not written this time is removed with the new set, and said.

    \b
    Example:
      planner plan scenarios/qlora-7b-12gb.yaml
      planner plan scenarios/ft-70b-cluster.yaml --top 10 --out reports/cluster --format xlsx,csv,json
      planner plan scenarios/serve-7b-2k-16users.yaml --json --format json > plan.json
    """
    from planner.api import plan as run_plan
    from planner.solve.solver import NoFeasiblePlan
    from planner.report.render import plan_text

    if click.get_current_context().get_parameter_source("out_dir") == click.core.ParameterSource.DEFAULT:
        refuse_default_out(out_dir)
    try:
        r = run_plan(scenario_file, catalog=opts.load_catalog_option(catalog_dir), out=out_dir, format=formats,
                     top=top_k)
    except NoFeasiblePlan as exc:
        _name_note(exc.scenario)
        say_infeasible(exc, as_json, "plan")
        raise
    _name_note(r.scenario)
    if as_json:
        click.echo(json_text(r.to_dict(), indent=2))
        for note in r.notes:  # on standard error, as without --json
            echo(note, err=True)
        return
    from planner.core.textfit import terminal_width

    echo(plan_text(r.plan, width=terminal_width()))
    echo("")
    echo(f"Wrote {joined(list(r.outputs.values()))}")
    if r.removed:
        echo(f"Removed the stale {joined(list(r.removed))} of an earlier plan (a format not written this time: "
             "left beside the new reports, it could disagree with them).")  # h36a 5: not "another plan"
    for note in r.notes:
        echo(note, err=True)


def _name_note(name: str) -> None:
    """Say so on stderr when the reports' file name is not the scenario's name (planner.core.names.safe_stem): it
    holds symbols, it is cut, or it is written with compatibility characters (a ligature 'ﬁ', 'Ⅻ', 'ǅ', U+2024),
    which the file name holds in their Unicode NFKC form (h17b #5e). A decomposed accent is no change: the file
    name holds it composed (NFC), drawn the same."""
    import unicodedata

    from planner.core.names import MAX_STEM_BYTES, compatibility_forms, safe_stem

    composed = unicodedata.normalize("NFC", name)
    stem, whole = safe_stem(name), safe_stem(name, max_bytes=None)
    if stem == composed:
        return
    why = []
    forms = compatibility_forms(name)
    if forms:
        why.append(f"is written with characters the file name holds in their plain form (Unicode NFKC: {forms})")
    plain = unicodedata.normalize("NFKC", name)
    if whole != plain:
        bare = plain.lstrip(".")  # safe_stem drops leading dots: a file name that starts with one is hidden (ls)
        dotted = bare != plain and not bare.startswith(("/", "\\"))  # '../x' is a path part, said below
        if dotted:
            why.append("starts with a dot, which is dropped (a file name that starts with a dot is hidden)")
        if whole != (bare if dotted else plain):
            why.append("holds characters a file name cannot (path separators, spaces, symbols)")
    if stem != whole:
        why.append(f"is longer than the {MAX_STEM_BYTES} bytes (UTF-8) a report's name is cut to")
    echo(f"Note: the reports are named {stem!r}: the scenario name {name!r} {' and '.join(why)}.", err=True)


def refuse_default_out(out_dir: str) -> None:
    """Refuse --out's default (``reports`` in the current folder, no --out given) inside planner's catalog or
    package, or on a pseudo file system (/proc, /sys), saying that it is the default and where it comes from, as
    calibrate says of its default file (h23a m3).

    Raises:
        DestinationError: the refusal of planner.core.protected.refuse_protected or
            planner.core.pseudofs.refuse_pseudo_fs, its hint replaced by what to change.
    """
    import os
    from pathlib import Path

    from planner.core.errors import DestinationError
    from planner.core.names import escape_unsafe
    from planner.core.pseudofs import refuse_pseudo_fs
    from planner.core.reportset import refuse_protected

    for check, cut, fit in ((refuse_protected, " Give another --out", "outside it"),
                            (refuse_pseudo_fs, " Give --out", "on a disk")):
        try:
            check(Path(out_dir))
        except DestinationError as exc:
            try:
                here = escape_unsafe(os.getcwd())
            except OSError:  # the current folder was removed: said by the checks that follow
                raise exc from None
            raise DestinationError(exc.cli_line().split(cut, 1)[0] + f" That is --out's default, {out_dir} in the "
                                   f"current folder ({here}): cd to a folder {fit}, or give --out a folder {fit}."
                                   ) from None
    _refuse_default_unwritable(out_dir)


def _refuse_default_unwritable(out_dir: str) -> None:
    """Refuse --out's default (``reports`` in the current folder) where it cannot be made or written: the folder (or,
    while it does not exist, the current folder) on a read-only file system (``statvfs``: ST_RDONLY) or without
    write and search permission for this user (``access(2)``), saying that it is the default (h25a m5). Anything
    else (a file in the way, an ACL) is left to the checks of --out that follow.

    Raises:
        DestinationError: naming the folder, the cause, and that it is --out's default.
    """
    import os

    from planner.core.errors import DestinationError
    from planner.core.names import escape_unsafe

    made = os.path.isdir(out_dir)
    if not made and os.path.lexists(out_dir):
        return
    try:
        here = os.getcwd()
        where = out_dir if made else here
        read_only = bool(os.statvfs(where).f_flag & os.ST_RDONLY)
        denied = not os.access(where, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids)
    except (OSError, ValueError):
        return  # a removed current folder and the like: said by the checks that follow
    if read_only or denied:
        from planner.core.outpath import is_immutable

        why = "Read-only file system" if read_only else \
            "Operation not permitted: an immutable attribute, lsattr -d" if is_immutable(where) else "Permission denied"
        what = "write into" if made else "create"
        raise DestinationError(f"{out_dir}: cannot {what} the output directory ({why}). That is --out's default, "
                               f"{out_dir} in the current folder ({escape_unsafe(here)}): cd to a folder you can "
                               "write, or give --out a folder you can write.")
