"""Write a plan (or the reasons nothing fits) as CSV and JSON into an output directory.

``<out>/<scenario>.csv`` is the ranked candidate table (feasible first; columns and units in
:data:`planner.solve.candidates.COLUMNS`). ``<out>/<scenario>.json`` is the plan: the choice, the
quote's line items and total, each workload's memory breakdown in bytes, the alternatives,
the closest misses per rule, the assumptions and warnings. Sizes stay integer bytes and money
USD, so scripts never have to parse units. Both files are written atomically
(:mod:`planner.core.atomic`). The scenario name becomes the file name only after
:func:`planner.core.names.safe_stem`, so it can never point outside the output directory.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Any

from planner.core.atomic import ensure_dir, write_text, write_text_chunks
from planner.core.escape import json_text
from planner.core.names import safe_stem
from planner.core.table import Table, as_table
from planner.core.clock import utc_today

#: Format version of the JSON written here.
JSON_FORMAT_VERSION = 1


def jsonable(value: Any) -> Any:
    """numpy scalars, tuples, tables (planner.core.table.Table, pandas DataFrames: a list of row
    objects) as plain JSON values (NaN -> None)."""
    if isinstance(value, Table):
        return [jsonable(r) for r in value.records()]
    if hasattr(value, "to_dict") and hasattr(value, "columns"):
        return [jsonable(r) for r in value.to_dict(orient="records")]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def plan_to_dict(plan: Any, today: date | None = None) -> dict[str, Any]:
    """The JSON form of a :class:`planner.solve.solver.Plan`.

    Each line item carries ``quote_expired``: whether its seller's quote (``quote_valid_until``) lapsed
    before ``today`` (default: today's date); a lapsed quote is also one of the ``warnings``.
    """
    from planner.report.render import estimate_to_dict
    from planner.solve.quote import expired, lapsed_quotes_warning

    today = today or utc_today()
    lapsed = lapsed_quotes_warning(plan.line_items(), today)
    warnings = list(plan.warnings) + ([lapsed] if lapsed else [])
    return jsonable({
        "format_version": JSON_FORMAT_VERSION,
        "scenario": plan.scenario,
        "feasible": True,
        "choice": plan.choice,
        "line_items": [{**asdict(i), "total_usd": i.total_usd, "quote_expired": expired(i, today)}
                       for i in plan.line_items()],
        "total_usd": plan.total_usd,
        "workloads": [
            {"strategy": s, "estimate": estimate_to_dict(e), **_priced_at_load(t, e.workload_name, plan.assumptions)}
            for s, e, t in zip(plan.strategies, plan.estimates,
                               list(getattr(plan, "targets", ()) or ()) + [{}] * len(plan.estimates))
        ],
        "alternatives": plan.alternatives,
        "infeasible_summary": plan.infeasible,
        "assumptions": plan.assumptions,
        "warnings": warnings,
        "price_sensitivity": (plan.price_sensitivity.to_dict()
                              if getattr(plan, "price_sensitivity", None) is not None else None),
        "ram_rule": plan.ram_rule.to_dict() if getattr(plan, "ram_rule", None) is not None else None,
    })


def _priced_at_load(targets: dict[str, Any], name: str, assumptions: Any) -> dict[str, Any]:
    """A workload's targets with, for an ``slo:``, ``slo.priced_at_load``: what one request costs
    at its load on the chosen machine (planner.cost.objective.job_arithmetic, from the plan's
    ``assumptions``: ``usd_per_request`` = cost per busy hour / requests served per hour,
    ``usd_per_million_generated_tokens``, ``seconds_per_request``, ``requests_per_s_served``,
    ``served_tokens_per_s``, ``basis`` in words), as ``planner compare`` prices it."""
    if not targets.get("slo"):
        return targets
    works = ((assumptions or {}).get("job_arithmetic") or {}).get("workloads") or ()
    item = next((w for w in works if w.get("workload") == name and w.get("priced_at")), None)
    if item is None:
        return targets
    at = item["priced_at"]
    priced = {"usd_per_request": item.get("usd_per_request"),
              "usd_per_million_generated_tokens": item.get("usd_per_million_generated_tokens"),
              "seconds_per_request": 1.0 / at["requests_per_s_served"],
              "requests_per_s_served": at["requests_per_s_served"], "served_tokens_per_s": at["served_tokens_per_s"],
              "basis": at["basis"]}
    return {**targets, "slo": {**targets["slo"], "priced_at_load": priced}}


def infeasible_to_dict(err: Any) -> dict[str, Any]:
    """The JSON form of a :class:`planner.solve.solver.NoFeasiblePlan`."""
    return jsonable({
        "format_version": JSON_FORMAT_VERSION,
        "scenario": err.scenario,
        "feasible": False,
        "message": str(err),
        "reasons": err.reasons,
        "suggestions": err.suggestions,
        "warnings": list(getattr(err, "warnings", [])),
        "infeasible_summary": err.summary,
        "assumptions": err.assumptions,
    })


#: First characters that make a spreadsheet read a CSV cell as a formula (OWASP "CSV Injection").
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_safe_text(value: Any) -> Any:
    """A text cell no spreadsheet reads as a formula, in any locale: :func:`planner.core.escape.csv_text`
    (a leading apostrophe before =, +, -, @, tab or CR at the start and after any separator)."""
    from planner.core.escape import csv_text

    return csv_text(value)


def candidates_csv(table: Any) -> str:
    """The ranked candidate table (a :class:`planner.core.table.Table` or a pandas DataFrame) as
    CSV text (columns as in planner.solve.candidates.COLUMNS), as pandas' ``to_csv(index=False)``
    writes it (:meth:`planner.core.table.Table.to_csv`).

    Text cells that start with =, +, -, @, tab or carriage return, and such characters after a
    separator inside a cell (``a;=cmd``: a spreadsheet of a ';' locale splits there), get an
    apostrophe before them (planner.core.escape.csv_text), so names from user files never become
    formulas when the CSV is opened in a spreadsheet; numbers are written as numbers.
    """
    return as_table(table).to_csv(text=csv_safe_text)


def candidates_csv_chunks(table: Any) -> Any:
    """:func:`candidates_csv`'s text in pieces of rows (:meth:`planner.core.table.Table.csv_chunks`),
    to write a large table without holding all its text (an iterator of str)."""
    return as_table(table).csv_chunks(text=csv_safe_text)


def write_outputs(name: str, table: Any, document: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write ``<out>/<stem>.csv`` and ``<out>/<stem>.json`` atomically; returns their paths.

    Raises:
        OutputError: an unsafe name, or a directory that cannot be created or written.
    """
    stem = safe_stem(name)
    out = ensure_dir(Path(out_dir))
    csv_path = write_text_chunks(out / f"{stem}.csv", candidates_csv_chunks(table))
    json_path = write_text(out / f"{stem}.json", json_text(document, indent=2, allow_nan=False) + "\n")
    return csv_path, json_path


def write_plan(plan: Any, out_dir: Path) -> tuple[Path, Path]:
    """Write a plan's candidate table (CSV) and the plan (JSON)."""
    return write_outputs(plan.scenario, plan.candidates, plan_to_dict(plan), out_dir)


def write_infeasible(err: Any, out_dir: Path) -> tuple[Path, Path]:
    """Write the candidate table (every row with its why_not) and the reasons (JSON)."""
    return write_outputs(err.scenario, err.candidates, infeasible_to_dict(err), out_dir)
