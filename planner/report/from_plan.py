"""The workbook's data from a solver's plan (:func:`workbook_data_from_plan`).

This module does not import the solver: it reads a :class:`planner.solve.solver.Plan` by its
documented attributes and turns it into :class:`planner.report.workbook_data.WorkbookData`
(sizes stay integer bytes, money USD); :func:`plan_references` reads the ``SOURCES.md`` beside
the plan's catalog files for the Sources sheet. Its tables are :class:`planner.core.table.Table`
(no pandas).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from planner.catalog.loader import SourceRef
from planner.catalog.sources import SourceIndex, shown_catalog_path as _short_path
from planner.core.table import Table
from planner.core.units import GiB
from planner.solve.quote import STALE_PRICE_MONTHS
from planner.solve.solver import target_lines
from planner.report.render import job_tokens, slo_loads
from planner.report.workbook_data import (
    QuoteSettings,
    RecipeRow,
    SummaryRow,
    WorkbookData,
    catalog_sha256,
    recipe_row,
)


def _machine_text(choice: dict[str, Any]) -> str:
    """'1 x rtx-a6000 on am5-desktop, 2 x ddr5-udimm-48g (96 GiB RAM)' from a candidate row."""
    text = f"{int(choice['cards_per_node'])} x {choice['gpu_id']} on {choice['platform_id']}"
    if choice.get("dimm_id"):
        text += f", {int(choice['dimm_count'])} x {choice['dimm_id']} ({choice['ram_bytes'] / GiB:,.0f} GiB RAM)"
    nodes = int(choice.get("nodes", 1) or 1)
    if nodes > 1:
        text = f"{nodes} nodes of [{text}]"
        if choice.get("nic_id"):
            text += f" + {int(choice['nic_count'])} x {choice['nic_id']}"
        if choice.get("switch_id"):
            text += f" + {int(choice.get('switch_count', 1))} x {choice['switch_id']}"
        elif choice.get("nic_id"):
            text += " (back-to-back, no switch)"
        else:  # served replicas only: no scale-out fabric (planner.solve.fabric)
            from planner.solve.fabric import ONBOARD_WORDS

            text += f", {ONBOARD_WORDS}"
    return text


def _infeasible_table(summary: Any) -> Any:
    """The solver's per-rule closest-miss table with shortfalls in GiB where they are bytes."""
    if summary is None or len(summary) == 0:
        return summary
    rows = []
    for r in summary.records():
        unit = r.get("shortfall_unit", "")
        value = r.get("shortfall")
        if unit == "bytes" and value is not None:
            value, unit = round(float(value) / GiB, 3), "GiB"
        rows.append({"binding_constraint": r.get("binding", ""), "candidates_excluded": r.get("candidates"),
                     "closest_miss": r.get("closest", ""),
                     "shortfall": value if unit else None, "shortfall_unit": unit, "why_not": r.get("why_not", "")})
    return Table.from_records(rows, INFEASIBLE_COLUMNS)


#: Columns of the workbook's infeasible table (:func:`_infeasible_table`).
INFEASIBLE_COLUMNS = ("binding_constraint", "candidates_excluded", "closest_miss", "shortfall", "shortfall_unit",
                      "why_not")


def _alternatives_table(alts: Any, serving_tokens: float | None = None, at_load: bool = False) -> Any:
    """The solver's alternatives with 'why_lost' before the long 'strategy' text; when every
    workload is served (``serving_tokens``: generated tokens per job), time per job as seconds per
    request and cost per job as USD per million generated tokens (a request's hours and cents
    round to 0.000 h and $0.00), named '..._at_load' when ``at_load`` (a workload with an ``slo:``
    is priced at its load: planner.cost.slo_rent.at_load)."""
    if alts is None or "strategy" not in getattr(alts, "columns", ()):
        return alts
    cols = [c for c in alts.columns if c != "strategy"] + ["strategy"]
    out = alts.select(cols)
    if serving_tokens and "hours_per_job" in out.columns:
        out = out.copy()
        out["hours_per_job"] = out["hours_per_job"] * 3600.0
        out["usd_per_job"] = out["usd_per_job"] / serving_tokens * 1e6
        tail = "_at_load" if at_load else ""
        out = out.renamed({"hours_per_job": f"seconds_per_request{tail}",
                           "usd_per_job": f"usd_per_million_tokens{tail}"})
    return out


def _assumption_lines(a: dict[str, Any]) -> tuple[str, ...]:
    out = []
    if a.get("objective"):
        out.append(f"Objective: {a['objective']}")
    for line in a.get("objective_arithmetic") or ():
        out.append(f"Objective arithmetic: {line}")
    job = a.get("job_arithmetic") or {}
    for w in job.get("workloads") or ():  # the time model's every step (planner.cost.objective.job_arithmetic)
        for step in w.get("steps") or ():
            out.append(f"Time per job, {w.get('workload')}: {step}")
        if w.get("mfu_reason"):
            out.append(f"Time per job, {w.get('workload')}: MFU {w.get('mfu'):g}: {w['mfu_reason']}")
        if w.get("unit"):
            out.append(f"Cost per job, {w.get('workload')}: unit {w['unit']}; scaling {w.get('scaling')}")
    if job.get("cost_per_busy_hour"):
        out.append(f"Cost per busy hour: {job['cost_per_busy_hour']['formula']}")
    if job.get("formula"):
        out.append(f"Cost per job: {job['formula']}")
    for rule, text in (a.get("rules") or {}).items():
        out.append(f"Rule {rule}: {text}")
    overheads = a.get("runtime_overheads") or {}
    if overheads:
        parts = []
        for k, v in overheads.items():
            if k.endswith("_bytes") and isinstance(v, (int, float)):
                parts.append(f"{k[:-len('_bytes')].replace('_', ' ')} {v / GiB:,.3f} GiB")
            else:
                parts.append(f"{k.replace('_', ' ')} {v}")
        out.append("Runtime overheads per GPU: " + "; ".join(parts))
    if a.get("scenario_sha256"):
        out.append(f"Scenario file sha256: {a['scenario_sha256']}")
    return tuple(out)


def quote_reference(created: datetime, scenario_sha256: str, items: Iterable[Any]) -> str:
    """The estimate's reference, 'Q-<yyyymmdd>-<8 hex digits>': the digits are the first of a SHA-256
    over the scenario file's digest and every line (catalog id, description, quantity, unit price, price
    kind, date and ordering keys), so two estimates with other lines or prices never share a reference."""
    import hashlib

    h = hashlib.sha256(scenario_sha256.encode())
    for i in items:
        fields = (i.catalog_id, i.description, i.quantity, f"{i.unit_price_usd:.2f}", i.price_kind, i.as_of,
                  getattr(i, "mpn", None), getattr(i, "seller", None), getattr(i, "quote_valid_until", None))
        h.update(("\x1f".join(map(str, fields)) + "\x1e").encode())
    return f"Q-{created:%Y%m%d}-{h.hexdigest()[:8]}"


def workbook_data_from_plan(plan: Any, *, scenario_text: str = "", quote: QuoteSettings | None = None,
                            created: datetime | None = None, title: str | None = None,
                            references: SourceIndex | None = None) -> WorkbookData:
    """The workbook's data from a :class:`planner.solve.solver.Plan`, read by its documented attributes.

    Uses ``plan.scenario``, ``choice`` (the chosen candidate row: ``gpu_id``, ``platform_id``,
    ``cards_per_node``, ``nodes``, ``dimm_id``, ``dimm_count``, ``ram_bytes``,
    ``gpu_cuda_total_bytes``, ``gpu_capacity_bytes``), ``estimates``, ``workloads`` (each
    ``train``'s method and dtypes, for the recipe table), ``strategies``, ``line_items()``,
    ``alternatives``, ``infeasible``, ``assumptions`` (``planner_version``, ``scenario_file``,
    ``scenario_sha256``, ``catalog_schema_version``, ``catalog_files`` (read again here for
    :func:`catalog_sha256`; the ``SOURCES.md`` beside them is read for the Sources sheet,
    :func:`plan_references`, unless ``references`` is given), ``sources``, ``recipes``, ``objective``, ``rules``,
    ``runtime_overheads``) and ``warnings`` (a warning starting '<workload>: ' goes to that
    workload's row); ``assumptions['stale_prices']`` names the lines whose prices the solver calls
    stale (:func:`planner.solve.warnings.stale_items`); ``ram_rule`` (optional) the RAM rule's note.

    Args:
        plan: the solver's plan.
        scenario_text: the scenario file's text, shown as given (the caller reads the file).
        quote: quote number, date, validity and rates; default: number :func:`quote_reference`, dated
            ``created``, valid 30 days, no discount, tax or shipping.
        created: when the plan was made (default now, local time, to the second).
        title: the document title (default 'Hardware plan: <scenario>').
        references: the ``REF:`` index of the plan's catalog when the caller has read it already
            (:func:`plan_references` of ``assumptions['catalog_files']``, e.g. for the CLI's
            undefined-REF warning), so ``SOURCES.md`` is read once per plan; None: read here.
    """
    created = created or datetime.now().replace(microsecond=0)
    a = dict(plan.assumptions or {})
    choice = dict(plan.choice)
    sha = str(a.get("scenario_sha256") or "")
    if quote is None:
        quote = QuoteSettings(quote_reference(created, sha, plan.line_items()), created.date())
    per_workload, general = _split_warnings(plan)
    from planner.solve.quote import lapsed_quotes_warning

    lapsed = lapsed_quotes_warning(plan.line_items(), created.date())  # on the Summary's plan warnings too
    general = [*general, *([lapsed] if lapsed else [])]
    cuda_total = int(choice.get("gpu_cuda_total_bytes") or 0)
    sources = tuple(SourceRef(_short_path(s["file"]), s["id"], s["source"], s["as_of"])
                    for s in a.get("sources") or ())
    version = a.get("catalog_schema_version")
    stale = a.get("stale_prices") or {}  # the solver's own list (planner.solve.warnings.stale_items)
    stale_ids, stale_months = tuple(stale.get("catalog_ids") or ()), int(stale.get("months") or STALE_PRICE_MONTHS)
    gpu_memory = {str(choice["gpu_id"]): cuda_total} if choice.get("gpu_id") and cuda_total else {}
    return WorkbookData(
        title=title or f"Hardware plan: {plan.scenario}",
        scenario_name=plan.scenario,
        created=created,
        catalog_version=f"schema {version}" if version is not None else "",
        catalog_files=tuple(_short_path(f) for f in a.get("catalog_files") or ()),
        summary=_summary_rows(plan, choice, per_workload),
        line_items=tuple(plan.line_items()),
        quote=quote,
        estimates=tuple(plan.estimates),
        alternatives=_alternatives_table(plan.alternatives, job_tokens(plan), bool(slo_loads(plan))),
        infeasible=_infeasible_table(plan.infeasible),
        recipe_definitions=_recipe_definitions(a),
        sources=sources,
        scenario_text=scenario_text,
        scenario_file=str(a.get("scenario_file") or ""),
        warnings=tuple(general),
        assumptions=_assumption_lines(a),
        planner_version=str(a.get("planner_version") or ""),
        catalog_sha256=str(a.get("catalog_sha256") or "") or catalog_sha256(a.get("catalog_files") or ()),
        stale_price_ids=stale_ids,
        ram_rule=tuple(plan.ram_rule.lines()) if getattr(plan, "ram_rule", None) is not None else (),
        stale_price_months=stale_months,
        gpu_cuda_total_bytes=gpu_memory,
        recipe_rows=_recipe_rows(plan),
        references=references if references is not None else plan_references(a.get("catalog_files") or ()),
        hours_per_job=_number(choice.get("hours_per_job")),
        usd_per_job=_number(choice.get("usd_per_job")),
        per_job_note="; ".join(str(x) for x in (a.get("objective_arithmetic") or ())[1:]),
        price_sensitivity=(tuple(plan.price_sensitivity.lines())
                           if getattr(plan, "price_sensitivity", None) is not None else ()),
        serving_tokens=job_tokens(plan),
        serving_load=slo_loads(plan),
        targets=tuple(target_lines(getattr(plan, "targets", ()) or (), [e.workload_name for e in plan.estimates])),
    )


def _number(value: Any) -> float | None:
    """A candidate column's value as a float, None when blank (NaN) or absent."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if x != x else x


def _split_warnings(plan: Any) -> tuple[dict[str, list[str]], list[str]]:
    """The plan's warnings as (per workload name: the texts after '<workload>: ', the others)."""
    per_workload: dict[str, list[str]] = {e.workload_name: [] for e in plan.estimates}
    general: list[str] = []
    for w in plan.warnings:
        head, sep, rest = str(w).partition(": ")
        if sep and head in per_workload:
            per_workload[head].append(rest)
        else:
            general.append(str(w))
    return per_workload, general


def _summary_rows(plan: Any, choice: dict[str, Any], per_workload: dict[str, list[str]]) -> tuple[SummaryRow, ...]:
    """One Summary row per estimate: the chosen machine, the workload's strategy, its need against
    the per-GPU capacity it is held to, and its warnings."""
    from planner.solve.usages import takes_headroom

    machine = _machine_text(choice)
    strategies = list(getattr(plan, "strategies", ())) + [""] * len(plan.estimates)
    cuda_total = int(choice.get("gpu_cuda_total_bytes") or 0)
    capacity = choice.get("gpu_capacity_bytes")
    workloads = list(getattr(plan, "workloads", ())) + [None] * len(plan.estimates)

    def capacity_of(i: int) -> int | None:
        # an engine: vllm workload is held against the whole CUDA total (gpu_memory_utilization is its margin)
        w = workloads[i]
        if w is not None and not takes_headroom(w) and cuda_total:
            return cuda_total
        return int(capacity) if capacity is not None else None

    return tuple(
        SummaryRow(workload=e.workload_name, task=e.task, model=e.model_id, configuration=machine,
                   gpus=e.gpus, gpu_need_bytes=e.per_gpu_total_bytes, gpu_cuda_total_bytes=cuda_total,
                   host_need_bytes=e.host_total_bytes,
                   host_ram_bytes=int(choice["ram_bytes"]) if choice.get("ram_bytes") else None,
                   recipe=e.recipe, warnings=tuple(per_workload[e.workload_name]),
                   gpu_capacity_bytes=capacity_of(i), strategy=strategies[i],
                   stack=e.stack_text if e.stack else
                   f"engine release: {e.engine_release}" if e.engine_release else "")
        for i, e in enumerate(plan.estimates))


def _recipe_definitions(a: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """(name, definition) of each recipe the plan's assumptions list, once each, in order."""
    recipes: list[tuple[str, str]] = []
    for r in a.get("recipes") or ():
        pair = (str(r.get("recipe", "")), str(r.get("definition", "")))
        if pair[0] and pair not in recipes:
            recipes.append(pair)
    return tuple(recipes)


def _recipe_rows(plan: Any) -> tuple[RecipeRow, ...]:
    """Per estimate the bytes per value the memory model used (:func:`recipe_row`), with the
    workload's training options when the plan gives one workload per estimate."""
    workloads = list(getattr(plan, "workloads", ()) or ())
    if len(workloads) == len(plan.estimates):
        return tuple(recipe_row(e, getattr(w, "train", None)) for e, w in zip(plan.estimates, workloads))
    return tuple(recipe_row(e) for e in plan.estimates)


def plan_references(catalog_files: Iterable[str | Path]) -> SourceIndex:
    """The documents the ``REF:`` ids of a plan's catalog stand for: the ``SOURCES.md`` beside the
    catalog's files, an overlay's first (:func:`planner.catalog.sources.sources_for_catalog`); the shipped
    catalog's when the plan names no files (a catalog built in code). Never raises: a missing or
    unreadable file is in the index's ``problems``, which the Sources sheet prints."""
    from planner.catalog.loader import default_catalog_dir
    from planner.catalog.sources import sources_for_catalog

    return sources_for_catalog(catalog_files, show=_short_path, default_dir=default_catalog_dir())
