"""The ``planner catalog`` commands: list entries with units (``planner catalog KIND``), check the
catalog's figures (``planner catalog check``), import SkyPilot cloud rows (``planner catalog
import-skypilot``)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from planner.cli import options as opts
from planner.cli.common import (LineError, SingleValueCommand, echo, handle_errors, one_catalog,
                                pasteable_word, signal_guard)
from planner.cli.outopt import out_dir_option
from planner.core.clock import utc_today
from planner.core.escape import json_text
from planner.core.names import line_path, path_word, shell_word


CATALOG_KINDS = ("gpus", "platforms", "ram", "models", "network", "cloud")


class Kind(click.Choice):
    """A click.Choice whose refusal is one plain sentence with a did-you-mean ('gpu' -> 'gpus').

    Click's own message names the argument by its ``{a|b|...}`` metavar and lists every choice;
    with ``metavar`` set on the argument it reads "Invalid value for 'KIND': 'gpu' is not a
    catalog kind. Did you mean 'gpus'?".
    """

    def __init__(self, choices: tuple[str, ...], what: str) -> None:
        super().__init__(choices)
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in self.choices:
            return value
        from planner.core.errors import close_matches

        close = close_matches(str(value), [str(c) for c in self.choices])
        hint = ("Did you mean " + " or ".join(map(repr, close)) + "?") if close else \
            "Valid: " + ", ".join(map(str, self.choices)) + "."
        self.fail(f"{value!r} is not a {self.what}. {hint}", param, ctx)


def catalog_rows(catalog: Any, kind: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows for people with unit-bearing headers, records for --json with unit-suffixed keys)."""
    import dataclasses

    gib = 2**30
    human: list[dict[str, Any]] = []
    raw: list[dict[str, Any]] = []

    def plain(v: Any) -> Any:
        if dataclasses.is_dataclass(v):
            return {f.name: plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if hasattr(v, "items"):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v

    def rec(x: Any) -> dict[str, Any]:
        return {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x) if f.name not in ("file", "where")}

    if kind == "gpus":
        for g in catalog.gpus:
            raw.append(rec(g))
            used = _used(g)
            human.append({"id": g.id, "vendor": g.vendor, "arch": g.architecture,
                          "memory (GiB)": round(g.memory_bytes / gib, 2),
                          "usable (GiB)": round(g.memory_usable_bytes / gib, 2),
                          "CUDA total (GiB)": round(g.cuda_total_bytes / gib, 2),
                          "bandwidth (GB/s)": round(g.memory_bandwidth_bytes_per_s / 1e9),
                          "bf16 (TFLOPS)": g.bf16_tflops, "bf16": g.bf16, "fp8": g.fp8, "int8": g.int8, "form": g.form_factor,
                          "cooling": g.cooling or "", "slots": g.slot_width or 0, "TDP (W)": g.tdp_w,
                          "price (USD)": g.price_usd,
                          "price kind": g.price_kind or ("none: discontinued" if g.discontinued else ""),
                          "price as of": g.price.as_of if g.price is not None else "",
                          "used (USD)": used.usd if used else "", "used as of": used.as_of if used else "",
                          "as of": g.as_of})
    elif kind == "platforms":
        for p in catalog.platforms:
            raw.append(rec(p))
            human.append({"id": p.id, "memory": p.memory_kind, "channels": p.memory_channels,
                          "DIMM slots": p.dimm_slots, "max memory (GiB)": round(p.max_memory_bytes / gib),
                          "GPU lanes": p.gpu_lanes,
                          "GPU slots": " or ".join(f"{s.count}x{s.width}-slot" for s in p.gpu_slots)
                          or f"{p.fixed_gpu_count} x {p.fixed_gpu}",
                          "max GPUs": p.max_gpus, "PSU (W)": p.psu_w, "platform (W)": p.platform_w,
                          "form factors": ",".join(p.form_factors),
                          "GPU cooling": ",".join(p.gpu_cooling or ()), "base price (USD)": p.base_price_usd,
                          "price kind": p.price_kind, "price as of": p.price.as_of if p.price is not None else "",
                          "as of": p.as_of})
    elif kind == "ram":
        for d in catalog.dimms:
            raw.append(rec(d))
            human.append({"id": d.id, "kind": d.kind, "size (GiB)": round(d.size_bytes / gib, 2),
                          "speed (MT/s)": d.speed_mts, "price (USD)": d.price_usd,
                          "USD per GiB": round(d.price_usd / (d.size_bytes / gib), 2), "price kind": d.price_kind,
                          "price as of": d.price.as_of if d.price is not None else "", "as of": d.as_of})
    elif kind == "models":
        from planner.model.architecture import from_hf_config

        for m in catalog.models:
            arch = from_hf_config(m.config, m.where or None)
            r = rec(m)
            r["parameters"] = arch.parameters
            raw.append(r)
            human.append({"id": m.id, "Hugging Face id": m.hf_id, "parameters (B)": round(arch.parameters / 1e9, 3),
                          "layers": arch.num_hidden_layers, "hidden": arch.hidden_size,
                          "heads": arch.num_attention_heads, "KV heads": arch.num_key_value_heads,
                          "vocab": arch.vocab_size, "max context (tokens)": arch.max_position_embeddings,
                          "as of": m.as_of})
    elif kind == "network":
        for n in catalog.nics:
            raw.append({"type": "nic", **rec(n)})
            human.append({"id": n.id, "type": "NIC", "kind": n.kind, "rate (Gb/s)": n.rate_bytes_per_s * 8 / 1e9,
                          "ports": 1, "price (USD)": n.price_usd, "cable (USD)": n.cable_price_usd,
                          "price kind": n.price_kind, "as of": n.as_of})
        for s in catalog.switches:
            raw.append({"type": "switch", **rec(s)})
            human.append({"id": s.id, "type": "switch", "kind": s.kind, "rate (Gb/s)": s.rate_bytes_per_s * 8 / 1e9,
                          "ports": s.ports, "price (USD)": s.price_usd, "cable (USD)": None,
                          "price kind": s.price_kind, "as of": s.as_of})
    else:
        from planner.cost.cloud import stale_instances

        stale = {i.id for i in stale_instances(catalog.instances)}
        for c in catalog.instances:
            raw.append(rec(c))
            human.append({"id": c.id, "provider": c.provider, "instance": c.instance, "GPU": c.gpu,
                          "GPUs": c.gpu_count,
                          # the provider's per-GPU figure where the catalog has one, else the GPU's own
                          "GPU memory, driver total (GiB)": round(
                              (c.gpu_memory_usable_bytes or catalog.gpu(c.gpu).memory_usable_bytes) / gib, 2),
                          "host memory (GiB)": round(c.memory_bytes / gib), "vCPUs": c.vcpus,
                          "price (USD/h)": c.usd_per_hour, "spot (USD/h)": c.spot_usd_per_hour,
                          # the zones' spot prices, lowest to highest, where cloud.yaml records them
                          "spot range (USD/h)": (f"{c.spot_usd_per_hour_range[0]:g}-{c.spot_usd_per_hour_range[1]:g}"
                                                 if c.spot_usd_per_hour_range else ""),
                          "region": c.region, "as of": c.as_of + (" (old)" if c.id in stale else "")})
            raw[-1]["older_than_12_months"] = c.id in stale
    return human, raw


def _used(g: Any) -> Any:
    """The used price ``used_ok: true`` would pay for a GPU, or None (planner.catalog.prices.used_price)."""
    from planner.catalog.prices import used_price

    return used_price(g.prices)


class CatalogGroup(click.Group):
    """``planner catalog KIND`` lists entries; ``planner catalog check`` and ``import-skypilot`` are
    subcommands. A first argument that names no subcommand (or none at all) is the KIND of the
    listing, which reports its errors as 'planner catalog' did before it had subcommands. Its subcommands
    refuse an option of one value given twice (:class:`planner.cli.common.SingleValueCommand`)."""

    command_class = SingleValueCommand

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ctx.help_option_names):
            args = ["list", *args]
        return super().parse_args(ctx, args)


class _ListingContext(click.Context):
    """The listing's context: it reads as 'planner catalog' in messages ('See planner catalog --help')."""

    @property
    def command_path(self) -> str:
        return self.parent.command_path if self.parent is not None else super().command_path

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "KIND [OPTIONS] | check [OPTIONS] | import-skypilot FILE... --out DIR")


@click.group(name="catalog", cls=CatalogGroup, invoke_without_command=False, no_args_is_help=False)
def catalog_command() -> None:
    """List catalog entries (planner catalog KIND: gpus, platforms, ram, models, network, cloud) with
    units, check the catalog's figures (planner catalog check) or import SkyPilot cloud rows
    (planner catalog import-skypilot).

    \b
    Example:
      planner catalog gpus
      planner catalog platforms --catalog my-overlay/
      planner catalog check
      planner catalog import-skypilot vms.csv --out my-overlay/
    """


@catalog_command.command(name="list", hidden=True)
@click.argument("kind", metavar="KIND", type=Kind(CATALOG_KINDS, "catalog kind"))
@click.option("--catalog", "catalog_dir", type=opts.PathType(file_okay=False), multiple=True,
              callback=one_catalog, help="Catalog overlay directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON (sizes in bytes, money in USD).")
@handle_errors
def list_command(kind: str, catalog_dir: str | None, as_json: bool) -> None:  # noqa: D417
    """List catalog entries (gpus, platforms, ram, models, network, cloud) with units.

    Headers name their units ('memory (GiB)', 'price (USD)'); --json prints every field with
    unit-suffixed keys (bytes, bytes/s, USD, W) for scripts.

    \b
    Example:
      planner catalog gpus
      planner catalog platforms --catalog my-overlay/
      planner catalog ram --json
    """
    import pandas as pd

    catalog = opts.load_catalog_option(catalog_dir)
    human, raw = catalog_rows(catalog, kind)
    # values that load but look like typos, for the entries listed (Catalog.warnings)
    lists = {"gpus": ("gpus",), "platforms": ("platforms",), "ram": ("dimms",), "models": ("models",),
             "network": ("nics", "switches"), "cloud": ("instances",)}[kind]
    warnings = [w.text for w in catalog.warnings if w.kind in lists]
    if as_json:
        click.echo(json_text(raw, indent=2, default=str))
        for w in warnings:  # stdout stays the JSON document
            echo(f"Warning: {w}", err=True)
        return
    if not human:
        echo(f"The catalog has no {kind} entries.")
        return
    from planner.core.textfit import terminal_width
    from planner.report.render import frame_text

    with pd.option_context("display.width", 250, "display.max_columns", 40, "display.max_rows", 1000):
        echo(frame_text(pd.DataFrame(human), terminal_width(), na_rep=""))
    if kind == "cloud":
        from planner.cost.cloud import stale_instances, stale_text

        text = stale_text(stale_instances(catalog.instances))
        if text:
            echo(f"Note: {text}.")
    for w in warnings:
        echo(f"Warning: {w}")


@catalog_command.command(name="check")
@click.option("--catalog", "catalog_dir", type=opts.PathType(file_okay=False), multiple=True,
              callback=one_catalog, help="Catalog overlay directory.")
@click.option("--today", default=None, metavar="YYYY-MM[-DD]",
              help="Count ages from this date (default: today's date); not before the month of the "
                   "catalog's newest price.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@handle_errors
def check_command(catalog_dir: str | None, today: str | None, as_json: bool) -> None:
    """Check the catalog's figures: stale prices, estimates without a range, sources without a location,
    TFLOPS above the vendor's dense figure.

    A price is stale when a plan may pay it (price: street, price: msrp, used_ok) and it is dated
    more than 12 months (street, used, quote, estimate) or 24 months (msrp) before the reference
    date: today's date, or --today (the output's first line names the one used). A finding the catalog states an exception for (a price item's exempt:) is listed with its
    reason and does not fail. Exits 1 when a check fails.

    \b
    Example:
      planner catalog check
      planner catalog check --catalog my-overlay/ --today 2027-06-01
    """
    from planner.catalog.check import check_catalog, failures, reference_date_problem
    from planner.core.written import date_option_problem

    # only the two forms the help names: Python 3.11's fromisoformat also takes 20261202 and 2026-W49-3, which the
    # check's own date arithmetic does not; said in planner's one line with a file date's hint (h23b M6)
    spelling = date_option_problem("--today", today) if today is not None else None
    if spelling is not None:
        raise LineError(spelling)
    catalog = opts.load_catalog_option(catalog_dir)
    problem = reference_date_problem(catalog, today) if today is not None else None
    if problem is not None:  # before the catalog's newest date: 0 failed would say nothing
        raise LineError(_option_line("--today", problem))
    findings, ref = check_catalog(catalog, today=today)
    failed = failures(findings)
    if as_json:
        click.echo(json_text({"reference_date": ref, "passed": not failed,
                               "findings": [{"check": f.check, "file": f.file, "id": f.id, "text": f.text,
                                             "exempt": f.exempt, "fails": f.fails} for f in findings]}, indent=2))
    else:
        echo(f"Catalog check: ages counted from {ref}"
                   + (" (--today)" if today else " (today's date; --today DATE counts from another)"))
        for f in sorted(findings, key=lambda f: (not f.fails, f.check == "note", f.file, f.id)):
            echo(f.line())
        exempt = sum(1 for f in findings if f.exempt)
        notes = sum(1 for f in findings if f.check == "note")
        echo(f"{len(failed)} failed, {exempt} stated exception(s), {notes} note(s).")
    if failed:
        sys.exit(1)


@catalog_command.command(name="import-skypilot")
@click.argument("files", metavar="FILE...", nargs=-1, required=True, type=opts.PathType(dir_okay=False))
@click.option("--out", "out_dir", required=True, type=opts.PathType(file_okay=False), callback=out_dir_option,
              help="Overlay directory to write cloud.yaml into (use it with --catalog DIR).")
@click.option("--provider", type=opts.Choice(["aws", "gcp", "azure", "lambda", "runpod"]), default=None,
              help="The files' provider (default: a path component named after it, else the header's layout).")
@click.option("--region", default=None, help="Take this region rather than the cheapest US one.")
@click.option("--as-of", "as_of", default=None, metavar="YYYY-MM[-DD]",
              help="The rows' date (default: today; the files carry none).")
@click.option("--source", "source_text", default=None,
              help="Where the files come from, for each row's source (default: the file path and the schema).")
@click.option("--catalog", "catalog_dir", type=opts.PathType(file_okay=False), multiple=True,
              callback=one_catalog,
              help="Catalog overlay whose own GPUs (ids the shipped catalog lacks) rows may name by id or name; "
                   "give --out a folder holding its gpus.yaml.")
@handle_errors
def import_skypilot_command(files: tuple[str, ...], out_dir: str, provider: str | None, region: str | None,
                            as_of: str | None, source_text: str | None, catalog_dir: str | None) -> None:
    """Build a dated cloud overlay (OUT/cloud.yaml) from SkyPilot catalog files (v8 vms.csv of aws, gcp,
    azure, lambda, runpod; github.com/skypilot-org/skypilot-catalog).

    One row per instance type with a GPU the catalog knows, in the cheapest US region (or --region):
    on-demand price, the lowest regular zone's spot price and the zones' range; GCP instances are
    their VM row plus the GPU row of the same zone. Rows left out are listed with why. Pass the
    directory to other commands with --catalog DIR; its entries replace shipped rows of the same id.

    \b
    Example:
      planner catalog import-skypilot catalogs/v8/gcp/vms.csv catalogs/v8/aws/vms.csv --out my-cloud/
      planner compare scenarios/compare-qlora-7b-12gb.yaml --catalog my-cloud/
    """
    import datetime as dt
    import re
    from pathlib import Path

    from planner.catalog.skypilot import overlay_gpu_names
    from planner.core.written import date_option_problem
    from planner.core.atomic import write_text
    from planner.core.errors import CatalogError, InputError, PlannerError
    from planner.core.names import escape_unsafe, unsafe_problem
    from planner.core.reportset import ReportSet, check_destinations

    if as_of is not None and not as_of.strip():  # an unset shell variable ('--as-of "$DATE"'): not today (h22b M5)
        raise LineError(f"--as-of: {_empty(as_of)}; give the date the file was read, YYYY-MM or YYYY-MM-DD (e.g. "
                        f"--as-of {utc_today().isoformat()}), or leave --as-of out for today.")
    date = as_of or utc_today().isoformat()
    # YYYY-MM or YYYY-MM-DD only: Python reads '20250101' too, which the catalog then refuses; said in planner's
    # one line with a file date's hint (h23b M6)
    spelling = date_option_problem("--as-of", date)
    if spelling is not None:
        raise LineError(spelling)
    parsed = dt.date.fromisoformat(date if len(date) > 7 else date + "-01")
    if parsed > utc_today():
        raise LineError(f"--as-of: {date} is after today ({utc_today().isoformat()}, UTC): a price's date says when "
                        f"it was read. Give the date the file was read, e.g. --as-of {utc_today().isoformat()}.")
    if parsed.year < 2000:  # no cloud GPU instance was priced before 2010 (AWS cg1.4xlarge, November 2010)
        raise LineError(f"--as-of: {date} is before 2000, older than any cloud GPU price (the first GPU instance, "
                        "AWS cg1.4xlarge, launched in November 2010); give the date the file was read.")
    if region is not None and (unsafe_problem(region) or not region.strip()):
        raise click.BadParameter(f"{unsafe_problem(region) or _empty(region)}; give a region as the file writes it, e.g. "
                                 "--region us-east-1", param_hint="--region")
    if source_text is not None:
        problem = unsafe_problem(source_text) or (_empty(source_text) if not source_text.strip() else None)
        if problem is not None:
            raise click.BadParameter(f"{problem}; give one line of text, e.g. --source 'SkyPilot catalog, "
                                     f"{date}'", param_hint="--source")
        _check_source_option(source_text, date)
    # a pipe ('<(curl ...)', /dev/stdin) gives each row a source that names nothing once the run is over (h29a m2)
    piped = [f for f in files if source_text is None and _not_a_file(f)]
    twice = next((f for i, f in enumerate(files) if f in files[:i]), None)
    if twice is not None:  # '/dev/stdin /dev/stdin': a pipe read once is empty the second time (h21a m3)
        raise InputError(f"FILE...: {escape_unsafe(twice)} is given twice", hint="Give each file once (a pipe such "
                         "as /dev/stdin can be read only once).")
    same = next(((a, b) for i, b in enumerate(files) for a in files[:i] if _same_dir(a, b)), None)
    if same is not None:  # 'vms.csv link.csv', one file by two paths: read twice before (h35b)
        raise InputError(f"FILE...: {escape_unsafe(same[1])} is {escape_unsafe(same[0])}, given by another path (a "
                         "link or another spelling)", hint="Give each file once.")
    out = Path(out_dir)
    # the shipped catalog and the package are never written; a cloud.yaml planner did not write is not replaced
    # the run's inputs: the files read and the --catalog overlay's files (never replaced by its output)
    inputs = [Path(f) for f in files] + _overlay_files(catalog_dir)
    if catalog_dir is not None and _same_dir(catalog_dir, out):
        raise InputError(f"--out {out_dir} is the --catalog overlay this run reads, and an import never "
                         "replaces its own input", hint=_own_overlay_hint(catalog_dir))
    check_destinations(out, ["cloud.yaml"], set_name="import-skypilot", inputs=inputs)
    if source_text is not None:
        _check_source_refs(source_text, out)
    _before_import(out, catalog_dir)
    catalog = opts.load_catalog_option(catalog_dir)
    # the --catalog overlay's own GPUs (ids the shipped catalog lacks) are matched by id and name too (h21a m5)
    gpu_names = None if catalog_dir is None else overlay_gpu_names(
        catalog.gpus, [g.id for g in opts.load_catalog_option(None).gpus])
    # first without the loader's check of each row: the whole overlay is loaded with the loader before it is
    # written (check_overlay), which reads each entry once. Only when that load fails is the import run again
    # with each row checked, so that a row the loader refuses is left out with its reason rather than the whole
    # import refused over it (about 15 % less time for a large file; the same outcome)
    said: list[str] = []
    try:
        text, count = _import_overlay(files, out=out, catalog=catalog, provider=provider, region=region, date=date,
                                      source_text=source_text, check_rows=False, say=said.append,
                                      gpu_names=gpu_names)
    except CatalogError:
        try:
            text, count = _import_overlay(files, out=out, catalog=catalog, provider=provider, region=region,
                                          date=date, source_text=source_text, check_rows=True,
                                          say=lambda line: echo(line, err=True), gpu_names=gpu_names)
        except CatalogError as exc:
            gone = sorted(g for g in set(gpu_names.values() if gpu_names else ()) if f"unknown GPU '{g}'" in str(exc))
            if gone:  # rows name the overlay's own GPUs, which --out lacks (h21a m5)
                # the paths as a shell word each, so that the step can be pasted (h30b M1); no valid name is close
                # since the GPU is the overlay's, which the hint says
                # each path kept as given (os.path.join, not Path: './-t' keeps its './') and never read as an
                # option: './' before one starting with '-', and '--' before the paths (h33b m4)
                gpus, into = path_word(os.path.join(str(catalog_dir), "gpus.yaml")), path_word(str(out_dir))
                problem = re.sub(r" None of the [0-9,]+ valid names is close\.", "", str(exc))
                copy = path_word(os.path.join(str(out_dir), "gpus.yaml"))
                if os.path.lexists(os.path.join(str(out_dir), "gpus.yaml")):  # a cp would replace the user's own
                    raise CatalogError(problem, hint=escape_unsafe(  # (h41b 17)
                        f"The rows name {', '.join(gone)} of {gpus}; {copy} has no entry for "
                        f"{'it' if len(gone) == 1 else 'them'}: add {'its entry' if len(gone) == 1 else 'their entries'}"
                        f" from {gpus} to {copy} and import again, then give --catalog {into} alone.")) from None
                raise CatalogError(problem, hint=escape_unsafe(
                    f"The rows name {', '.join(gone)} of {gpus}, which {into} lacks: copy it there (mkdir -p -- "
                    f"{into} && cp -- {gpus} {copy}) and import again, then give --catalog {into} alone.")) from None
            raise
    except PlannerError:  # a file refused, nothing kept: what was read is said first, as it was read
        for line in said:
            echo(line, err=True)
        raise
    else:
        for line in said:
            echo(line, err=True)
    _before_import(out, catalog_dir)  # again, after the reading: said now
    with ReportSet(out, guard=signal_guard(), set_name="import-skypilot", inputs=inputs) as rs:
        write_text(rs.path("cloud.yaml"), text)
        path = rs.commit()[0]
    for note in rs.notes:
        echo(note, err=True)
    if piped:
        echo(escape_unsafe(f"Note: each row's source names {piped[0]}, a pipe, not the file it carried; give "
                           "--source to say where the rows come from, e.g."), err=True,
             command=f"--source 'SkyPilot catalog v8, github.com/skypilot-org/skypilot-catalog, read {date}'")
    echo(escape_unsafe(f"Wrote {path} ({count} instance(s)); use it with"),
         command=f"--catalog {pasteable_word(str(out_dir))}")  # a line of its own, never wrapped (h37b m9)


def _not_a_file(path: str) -> bool:
    """True when ``path`` is a pipe, socket or device (``/dev/stdin``, a shell's ``<(...)``): what it names is
    gone once it is read, so a row's default source (the path) would say nothing. False for a regular file
    or one that cannot be looked at (reading it says why)."""
    import os
    import stat

    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _own_overlay_hint(catalog_dir: str) -> str:
    """What to do when ``--out`` is the ``--catalog`` overlay (h16b #12): a run reads one overlay folder
    (``--catalog`` is given once), so the imported rows go into a new folder holding the overlay's other files,
    whose GPU ids the rows may name, and that folder is used alone; a ``cloud.yaml`` already in the overlay is not
    carried over, its entries are to be added by hand."""
    from pathlib import Path

    from planner.core.names import escape_unsafe

    folder = Path(catalog_dir)
    names = [p.name for p in _overlay_files(catalog_dir) if p.name != "cloud.yaml" and p.is_file()]
    names += ["SOURCES.md"] if (folder / "SOURCES.md").is_file() else []
    shown = escape_unsafe(str(catalog_dir))
    copy = (f"Copy {shown}'s other files ({', '.join(names)}) into a new folder NEW, import into it with --out NEW "
            f"--catalog {shell_word(shown)}" if names else f"Import with --out NEW (a new folder) --catalog {shell_word(shown)}")
    own = (f"; {shown}/cloud.yaml's own entries are not in it: add them to NEW/cloud.yaml by hand"
           if (folder / "cloud.yaml").is_file() else "")
    return f"{copy}, then give --catalog NEW alone (a run reads one overlay folder){own}."


def _before_import(out: Any, catalog_dir: str | None) -> None:
    """Refuse an import whose ``cloud.yaml`` would make ``out`` an overlay whose source list is a plan report there
    (planner.catalog.report_sources), or whose check copy would go into ``out`` or the ``--catalog`` overlay
    folder (TMPDIR set to either; planner.core.tempdir.refuse_temp_in).

    Raises:
        DestinationError: naming the file or the variable, and what to do.
    """
    from pathlib import Path

    from planner.catalog.report_sources import refuse_overlay_beside_report
    from planner.core.tempdir import refuse_temp_in

    refuse_overlay_beside_report(Path(out))
    refuse_temp_in(Path(out), [Path(catalog_dir)] if catalog_dir else [])


def _import_overlay(files: tuple[str, ...], *, out: Any, catalog: Any, provider: str | None, region: str | None,
                    date: str, source_text: str | None, check_rows: bool, say: Any,
                    gpu_names: Any = None) -> tuple[str, int]:
    """The overlay text of ``files`` and its number of instances, checked by loading it as ``--catalog OUT``
    would (:func:`check_overlay`); what each file gave and left out told to ``say``, a line at a time.
    ``check_rows``, ``gpu_names``: planner.catalog.skypilot.import_file's per-row check and overlay GPU names.

    Raises:
        InputError: a file the importer refuses, no instance kept, one instance from two files.
        CatalogError: the overlay would not load.
    """
    from pathlib import Path

    from planner.catalog.import_summary import left_out_lines, noted_lines
    from planner.catalog.cloud import MIN_USD_PER_HOUR
    from planner.catalog.skypilot import ImportProblem, import_file, overlay_yaml, stale_keys
    from planner.core.errors import InputError
    from planner.core.names import escape_unsafe

    rows = []
    rows_from: list[tuple[str, Any]] = []  # (the file, a row of it)
    sources: dict[str, str] = {}
    from planner.core.infile import MAX_FILE_BYTES

    used = 0  # the overlay's bytes from the files read so far, at the least: all of them share the loader's cap
    region_notes: list[str] = []  # a --region naming no region of a file, with what to give (h19b M4)
    unsaid: list[str] = []  # those of files that kept nothing
    header_only: list[str] = []  # files of a header and no rows (h22b M3: nothing is listed for them)
    for f in files:
        try:
            result = import_file(Path(f), provider=provider, region=region, gpu_ids=[g.id for g in catalog.gpus],
                                 gpu_names=gpu_names,
                                 max_bytes=MAX_FILE_BYTES - used, source=source_text or _default_source(f, date),
                                 as_of=date, check_rows=check_rows,
                                 gpu_memory={g.id: g.memory_bytes / 2**30 for g in catalog.gpus})
        except ImportProblem as exc:
            raise InputError(str(exc), hint=exc.hint or "Give a SkyPilot vms.csv (catalogs/v8/<provider>/vms.csv).") \
                from None
        for r in result.rows:
            sources.setdefault(r.provider, source_text or _default_source(f, date))
        used += result.entry_bytes
        rows += result.rows
        rows_from += [(str(f), r) for r in result.rows]
        if not result.rows_read:
            header_only.append(str(f))
        say(escape_unsafe(f"{f}: {len(result.rows)} instance(s)" + ("" if result.rows_read else
                                                                    " (a header and no rows)")))
        if result.region_note is not None:
            region_notes.append(escape_unsafe(f"{f}: {result.region_note}"))
            if result.rows:  # else said once, after the files: in the error's hint if nothing is kept (h20b M6)
                say("  " + escape_unsafe(result.region_note))
            else:
                unsaid.append("  " + region_notes[-1])
        for line in left_out_lines(result.skipped):  # a few lines: counts by reason, the first names
            say("  " + escape_unsafe(line))
        if result.unread_note is not None:  # columns read for nothing (h39b 7)
            say("  " + escape_unsafe(result.unread_note))
        for line in noted_lines(((result.no_spot_lines, "spot price 0 read as no spot offer"),
                                 (sorted(result.spot_floor_lines, key=int), f"spot price below the catalog's floor "
                                                           f"({MIN_USD_PER_HOUR:g} USD/h) read as no spot offer"),
                                 (result.spot_above_lines, "spot price at or above on-demand read as no spot offer"),
                                 (result.region_case_lines, "region in upper case written in lower case, as the "
                                                            "cloud names it"),
                                 (result.region_upper_lines, "region in lower case written in upper case, as the "
                                                             "cloud names its country codes"),
                                 (result.instance_case_lines, "instance type in upper case written in lower case, "
                                                              "as the cloud names it"),
                                 (result.no_gpu_row_lines, "GCP VM row in a zone with no row of its GPUs (not "
                                                           "offered there): not priced there"))):
            say("  " + line)
    if rows:
        for line in unsaid:
            say(line)
    else:  # an overlay of nothing would replace a good one: refused, nothing written
        raise _nothing_kept(files, header_only, region_notes, out / "cloud.yaml")
    seen: dict[str, str] = {}
    for f, r in rows_from:
        if r.id in seen:
            raise InputError(f"instance {r.id} comes from two files ({seen[r.id]} and {f})",
                             hint="Import each provider's file once.")
        seen[r.id] = f
    # a shipped key the import does not write would survive the key-by-key merge onto another machine (h36b N8)
    cleared = stale_keys(rows, opts.load_catalog_option(None).instances)
    text = overlay_yaml(sorted(rows, key=lambda r: (r.provider, r.id)), source=sources, as_of=date,
                        generated=f"{len(files)} file(s), {date}", cleared=cleared)
    check_overlay(out, text)  # what --catalog OUT will read loads, else nothing is written
    return text, len(rows)


def _nothing_kept(files: tuple[str, ...], header_only: list[str], region_notes: list[str], path: Any) -> Exception:
    """The error of an import that kept no instance from ``files`` (nothing is written to ``path``): what was left
    out is listed above it, and a file of a header and no rows (``header_only``) is said to be one, since nothing is
    listed for it (h22b M3); the hint is ``region_notes`` where ``--region`` named no region of a file."""
    from planner.core.errors import InputError

    if len(header_only) == len(files):
        holds = "holds" if len(files) == 1 else "each hold"
        return InputError(f"{', '.join(files)} {holds} a header and no rows, so no instance was kept and nothing "
                          f"was written to {path}", hint="Give the provider's vms.csv with its rows "
                          "(catalogs/v8/<provider>/vms.csv); a download cut short can hold the header alone.")
    empty = f"; {', '.join(header_only)}: a header and no rows" if header_only else ""
    return InputError(f"no instance was kept from {', '.join(files)} (left out as listed above{empty}), so nothing "
                      f"was written to {path}", hint=" ".join(region_notes) if region_notes else
                      "Check --provider and --region, and that the file lists GPUs the catalog knows.")


def _option_line(opt: str, problem: str) -> str:
    """``problem`` about option ``opt`` as planner's one line ('--today: ... .'), not click's 'Invalid value'."""
    return f"{opt}: {problem}" + ("" if problem.endswith((".", "?", "!")) else ".")


def _empty(text: str) -> str:
    """'is empty' for '', 'is blank (white space alone)' for a text of blanks."""
    return "is empty" if not text else "is blank (white space alone)"


def _check_source_option(source_text: str, date: str) -> None:
    """Refuse a ``--source`` the catalog loader would refuse in the overlay (planner.catalog.skypilot.source_problem:
    a private-use character, a byte that is not UTF-8, more than 4,000 characters, ...), naming the option, with a
    hint a command line can follow (h16b 13l, 13m).

    Raises:
        click.BadParameter: naming --source.
    """
    from planner.catalog.skypilot import source_problem
    from planner.catalog.texts import MAX_FREE_TEXT_CHARS

    example = f"--source 'SkyPilot catalog, {date}'"
    byte = next((c for c in source_text if "\udc80" <= c <= "\udcff"), None)
    if byte is not None:  # PEP 383: a byte of the argument that is not UTF-8
        raise click.BadParameter(f"holds the byte 0x{ord(byte) - 0xDC00:02x}, which is not UTF-8, so no catalog file "
                                 f"can hold the text; type it in UTF-8, e.g. {example}", param_hint="--source")
    told = source_problem(source_text)
    if told is None:
        return
    if told[0].startswith("is "):  # its length
        raise click.BadParameter(f"{told[0]}; give a short one (at most {MAX_FREE_TEXT_CHARS:,} characters) saying "
                                 f"where the files come from, e.g. {example} or the catalog's URL and commit",
                                 param_hint="--source")
    problem = told[0].replace("than the file says", "than typed")  # the loader's words are about a file
    raise click.BadParameter(f"{problem}; give it without that character, e.g. {example}", param_hint="--source")


def _check_source_refs(source_text: str, out: Any) -> None:
    """Refuse a ``--source`` citing a ``REF:`` id that neither the shipped catalog's SOURCES.md nor OUT/SOURCES.md
    defines: ``planner catalog check --catalog OUT`` reads those two files (planner.catalog.sources.
    sources_for_catalog) and would fail the overlay written over it (h31b M1). Checked before anything is written.

    Raises:
        click.BadParameter: naming --source, the id, the ids close to it and OUT/SOURCES.md.
    """
    from pathlib import Path

    from planner.catalog.loader import default_catalog_dir
    from planner.catalog.sources import SOURCES_FILE, ref_ids, sources_for_catalog
    from planner.core.errors import close_matches
    from planner.core.names import clip_text, escape_unsafe

    cited = ref_ids(source_text)
    if not cited:
        return
    known = sources_for_catalog([default_catalog_dir() / "cloud.yaml", Path(out) / "cloud.yaml"])
    ref = next((r for r in cited if r not in known), None)
    if ref is None:
        return
    where = escape_unsafe(str(Path(out) / SOURCES_FILE))
    skipped = known.skipped.get(ref)
    if skipped is not None:  # a row defines it but is skipped: said, with why (h33b m3), as plan's warning says it
        raise click.BadParameter(f"cites REF:{clip_text(ref, 40)}, whose row is skipped, so nothing defines it and "
                                 f"'planner catalog check' would fail it: {escape_unsafe(skipped)}",
                                 param_hint="--source")
    close = close_matches(ref, list(known.docs))
    near = f"did you mean REF:{close[0]}? Otherwise " if close else ""
    raise click.BadParameter(f"cites REF:{clip_text(ref, 40)}, which neither the shipped catalog's SOURCES.md nor "
                             f"{where} defines, so 'planner catalog check' would fail it; {near}"
                             f"add a row defining it to {where} first, or give the source as plain text",
                             param_hint="--source")


def _default_source(path: str, date: str) -> str:
    """The source text an imported row gets without --source.

    Raises:
        InputError: the path is too long for a source even escaped (over 4,000 characters), or it holds 'REF:'
            (a citation to catalog check); the hint is --source.
    """
    from planner.catalog.skypilot import source_problem
    from planner.core.errors import InputError
    from planner.core.names import escape_unsafe

    from planner.catalog.sources import ref_ids

    cited = ref_ids(_shown_path(path))
    if cited:  # 'g/REF:NOPE/aws/vms.csv': catalog check would read it as a citation of reference NOPE (h32b N1)
        raise InputError(f"{escape_unsafe(_shown_path(path))}: the default source of its rows names the file's path, "
                         f"which holds 'REF:{escape_unsafe(cited[0][:40])}': 'planner catalog check' would read it as "
                         "a citation of a reference", hint=f"Give the rows a source of your own, e.g. --source "
                         f"'SkyPilot catalog, {date}'.")
    text = f"SkyPilot catalog file {_shown_path(path)} (schema v8, REF:SKY-SCHEMA-v8), read {date}"
    told = source_problem(text)
    if told is not None:
        raise InputError(f"{escape_unsafe(_shown_path(path))}: the default source of its rows, which names the file's "
                         f"path, would be refused by the catalog loader: it {told[0]}",
                         hint=f"Give the rows a source of your own, e.g. --source 'SkyPilot catalog, {date}'.")
    return text


def _shown_path(path: str) -> str:
    """A path as text the catalog accepts in a source: :func:`planner.core.names.path_text` (control,
    bidirectional and invisible characters, bytes that are not UTF-8 escaped: '\\x1b', '\\u202e', '\\xff'), with
    each character the loader refuses in a text for having no glyph of its own escaped too
    (:func:`planner.core.names.text_glyph_problem`: a private-use character, such as the U+F022 that macOS's SMB
    client writes for a ':' in a Windows share's file name, '\\uf022'; an unassigned code point; U+FFFC, U+1D159,
    U+2800)."""
    from planner.core.names import path_text, text_glyph_problem

    text = path_text(path)
    if text_glyph_problem(text) is None:
        return text
    return "".join(c if text_glyph_problem(c) is None else
                   (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}") for c in text)


def _overlay_files(catalog_dir: str | None) -> list[Any]:
    """The catalog files of the --catalog overlay (inputs of the run), those that exist."""
    from pathlib import Path

    from planner.catalog.loader import CATALOG_FILES

    if not catalog_dir:
        return []
    return [Path(catalog_dir) / name for name in CATALOG_FILES]


def _same_dir(a: str, b: Any) -> bool:
    """Whether two paths name one directory (both exist), or the same path once resolved."""
    import os

    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        try:
            return os.path.realpath(a) == os.path.realpath(b)
        except (OSError, ValueError):
            return False


def check_overlay(out: Any, cloud_yaml: str) -> None:
    """Load ``out`` as ``--catalog`` would read it once ``cloud.yaml`` holds ``cloud_yaml`` (the overlay's other
    catalog files as they are), in a temporary copy; nothing is written into ``out``.

    Raises:
        CatalogError: the catalog loader's one line (paths named as in ``out``), saying nothing was written.
    """
    from pathlib import Path

    from planner.catalog.loader import CATALOG_FILES, load_catalog, overlay_files
    from planner.core.errors import CatalogError

    from planner.core.tempdir import refuse_protected_temp, refuse_unusable_temp

    refuse_protected_temp()  # the check copy never goes into the shipped catalog or the package
    refuse_unusable_temp()  # a TMPDIR set but unusable: said, not passed over
    import os

    from planner.core.infile import FileProblem, read_input

    if os.path.isdir(out):  # its file names as the loader reads them: a 'gpus.yml' or 'GPUS.yaml' is refused there
        try:
            overlay_files(Path(out))
        except CatalogError as exc:
            raise CatalogError(f"the overlay would not load, so nothing was written: {exc.one_line()}") from None
    from planner.core.checkcopy import make_check_dir, remove_check_dir, write_check_file
    from planner.core.interrupt import held

    tmp = None
    try:
        try:
            with held():  # made whole, with its mark: a stop signal cannot leave an unmarked folder (h26a m1)
                tmp = make_check_dir()
        except OSError as exc:  # no usable temporary folder (all full or read-only, ulimit -f 0): the check copy's
            from planner.core.errors import OutputError

            raise OutputError(f"the overlay's check copy could not be made in a temporary folder "
                              f"({exc.strerror or exc}), so nothing was written to {line_path(out / 'cloud.yaml')}. Free space "
                              "in the temporary folder (TMPDIR, else /tmp) or raise the file-size limit (ulimit -f)."
                              ) from None
        _sweep_check_copies(tmp)
        copied = {"cloud.yaml"}  # the names this run put in the check copy
        try:
            for name in CATALOG_FILES:
                if name == "cloud.yaml" or not os.path.lexists(out / name):
                    continue
                copied.add(name)
                try:  # read as the loader reads it: a folder, a FIFO or a broken link under that name is refused
                    data = read_input(out / name).data
                except FileProblem as problem:
                    raise CatalogError(f"the overlay would not load, so nothing was written: {out / name}: "
                                       f"{problem.problem}", hint=problem.hint) from None
                write_check_file(tmp, name, data)
            write_check_file(tmp, "cloud.yaml", cloud_yaml.encode("utf-8"))
        except OSError as exc:  # a file-size limit, a full /tmp: the check copy, not standard output
            import errno

            from planner.core.errors import OutputError

            if exc.errno == errno.EEXIST:  # a file another program put at a name of the check copy (h38a 11)
                raise OutputError(f"the overlay's check copy {tmp} holds {exc.filename and Path(exc.filename).name or 'a file'} "
                                  "that this run did not put there (another program wrote it during the run), so "
                                  f"nothing was written to {line_path(out / 'cloud.yaml')}. Check what writes in the temporary "
                                  "folder (TMPDIR) and run again.") from None
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ESTALE):  # a link or another folder at its name
                raise OutputError(f"the overlay's check copy {tmp} was replaced by a link or another folder during "
                                  f"the run (by another program), so nothing was written there or to "
                                  f"{line_path(out / 'cloud.yaml')}. Check what writes in the temporary folder (TMPDIR) and "
                                  "run again.") from None
            raise OutputError(f"the overlay's check copy in {tmp} could not be written ({exc.strerror or exc}), "
                              f"so nothing was written to {line_path(out / 'cloud.yaml')}. Free space in the temporary "
                              "folder (TMPDIR) or raise the file-size limit (ulimit -f).") from None
        try:
            load_catalog(Path(tmp))
        except CatalogError as exc:
            if exc.file and Path(exc.file).parent == Path(tmp) and Path(exc.file).name not in copied:
                # a file another program put in the check copy (h36a 10: named as if it were in --out)
                from planner.core.errors import OutputError
                from planner.core.names import escape_unsafe

                raise OutputError(escape_unsafe(
                    f"the overlay's check copy {tmp} holds {Path(exc.file).name}, which this run did not put there "
                    f"(another program changed it during the run), so nothing was written to {line_path(out / 'cloud.yaml')}. "
                    "Check what writes in the temporary folder (TMPDIR) and run again.")) from None
            if exc.file and Path(exc.file).parent == Path(tmp) and Path(exc.file).name == "cloud.yaml":
                # never a line of a file that was not written: the file it would be, the entry and its problem
                exc = CatalogError(exc.problem, entry=exc.entry, hint=exc.hint)
                exc = CatalogError(f"{line_path(out / 'cloud.yaml')} (as it would be written): {exc.one_line()}")
            line = exc.one_line().replace(str(Path(tmp)), str(out))
            raise CatalogError(f"the overlay would not load, so nothing was written: {line}") from None
    finally:
        if tmp is not None:
            with held():  # removed whole: a stop signal landing here waits for it (h26a m1)
                left = remove_check_dir(tmp)
            if left is not None:  # swapped for a link or another folder meanwhile: nothing there removed (h34a N3)
                echo(f"Note: {left}", err=True)


def _sweep_check_copies(mine: Any) -> None:
    """Remove the check copies stopped import-skypilot runs left beside this run's (``mine``), those
    planner.core.checkcopy.sweep_stale proves are theirs, each said in a note on standard error."""
    from planner.catalog.loader import CATALOG_FILES
    from planner.core.checkcopy import sweep_stale
    from planner.core.names import escape_unsafe

    for path in sweep_stale(mine.parent, CATALOG_FILES, keep=mine):
        echo(escape_unsafe(f"Note: removed {path}, the check copy of an import-skypilot run that was stopped (its "
                           "process is gone)."), err=True)


list_command.context_class = _ListingContext
