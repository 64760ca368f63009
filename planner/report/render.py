"""Text and JSON forms of an :class:`planner.memory.Estimate` and text of a plan for the terminal and scripts.

Only this module and the report writers turn bytes into GiB for people; every header says
its unit. The estimate's text imports no pandas; the plan's text imports it inside the function.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from planner.memory import Estimate
from planner.core.units import GiB, duration_text
from planner.core.clock import utc_today


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
        **({"stack": {k: v for k, v in est.stack}} if est.stack else {}),
        "per_gpu_total_bytes": est.per_gpu_total_bytes,
        "per_gpu_allocated_bytes": est.per_gpu_allocated_bytes,
        **({"per_gpu_unified_memory_bytes": est.per_gpu_unified_bytes} if est.per_gpu_unified_bytes else {}),
        "peak_phase": est.peak_phase or "always",
        "host_total_bytes": est.host_total_bytes,
        "host_peak_phase": est.host_peak_phase or "always",
        "ram_rule_of_thumb_bytes": {"low": lo, "high": hi, "rule": "6-8x VRAM (offload)" if est.offload
                                    else "2-4x VRAM"},
        "notes": list(est.notes),
        "warnings": list(est.warnings),
        **({"extra": dict(est.extra)} if est.extra else {}),
        **({"engine_version": est.engine_version} if est.engine_version else {}),
    }


def _float_cells(values: list[float]) -> list[str]:
    """Numbers as pandas' ``DataFrame.to_string`` writes a float column: fixed point with the fewest
    decimals that shows every value (at most 6, at least 1), the same for the whole column.

    Fixed point holds for the values shown here, sizes in GiB rounded to 3 decimals (pandas
    switches to exponents only above 1e6 or below 1e-6; pandas/io/formats/format.py,
    FloatArrayFormatter and _trim_zeros_float).
    """
    cells = [f"{v:.6f}" for v in values]
    while cells and all(c.endswith("0") for c in cells):
        cells = [c[:-1] for c in cells]
    return [c + "0" if c.endswith(".") else c for c in cells]


def _plain(value: object) -> str:
    """A text cell as pandas prints it: tabs and line breaks escaped (pandas.io.formats.printing.pprint_thing)."""
    return str(value).replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n")


def text_table(columns: list[str], rows: list[list[object]], numeric: Iterable[str] = (),
               width: int | None = None, *, integers: Iterable[str] = (), left: Iterable[str] = (),
               find_numbers: bool = False) -> str:
    """Rows as a right-aligned text table, laid out as pandas' ``DataFrame.to_string(index=False)``
    lays out the same frame, without importing pandas.

    Args:
        columns: the headers.
        rows: one list of cells per row, in ``columns``' order.
        numeric: the columns holding floats (no missing values): written by :func:`_float_cells`, and
            their headers with a leading space, as pandas writes a numeric column's header.
        width: the widest a line may be (characters); a table wider than that has its text cells
            wrapped inside their columns (:func:`planner.core.textfit.fit_table`, nothing cut).
            None: as wide as its cells.
        integers: the columns holding ints: written as they are, their headers with a leading space
            (pandas' IntArrayFormatter leaves room for a sign).
        left: text columns whose cells are padded on the right to the longest (a left-aligning
            ``formatters`` entry of to_string); the header is still right-aligned, as pandas does.
        find_numbers: when wrapping, let fit_table right-align every column whose cells all read as
            numbers (as :func:`frame_text` does), instead of only the ``numeric`` ones.
    """
    if not rows:
        return f"Empty DataFrame\nColumns: [{', '.join(columns)}]\nIndex: []"
    numeric, integers, left = set(numeric), set(integers), set(left)
    cols, texts = [], []
    for i, name in enumerate(columns):
        cells = [row[i] for row in rows]
        if name in numeric:
            text, head = _float_cells([float(c) for c in cells]), " " + name
        elif name in integers:
            text, head = [str(int(c)) for c in cells], " " + name
        else:
            text, head = [_plain(c) for c in cells], name
        texts.append(text)
        if name in left:
            pad = max(len(c) for c in text)
            text = [c.ljust(pad) for c in text]
        w = max(len(head), *(len(c) for c in text))
        cols.append([head.rjust(w)] + [c.rjust(w) for c in text])
    if width is not None and sum(len(col[0]) for col in cols) + len(cols) - 1 > width:
        from planner.core.textfit import fit_table

        right = [i for i, name in enumerate(columns) if name in numeric]
        return fit_table(columns, [list(r) for r in zip(*texts)], width,
                         right=None if find_numbers or not numeric else right)
    return "\n".join(" ".join(col[r] for col in cols) for r in range(len(rows) + 1))


def frame_text(frame: Any, width: int | None = None, **to_string: Any) -> str:
    """A pandas frame as ``frame.to_string(index=False, **to_string)`` writes it, or, when that is
    wider than ``width``, its cells (as to_string formats each column) wrapped inside their columns
    by :func:`planner.core.textfit.fit_table`."""
    text = frame.to_string(index=False, **to_string)
    if width is None or max((len(x) for x in text.splitlines()), default=0) <= width:
        return text
    from planner.core.textfit import fit_table

    na = to_string.get("na_rep", "NaN")
    cols = []
    for name in frame.columns:
        s = frame[name]
        if s.dtype.kind == "f" and s.notna().all():
            cols.append(_float_cells([float(v) for v in s]))
        else:
            cols.append([na if (v is None or (isinstance(v, float) and v != v)) else _plain(v) for v in s])
    return fit_table([str(c) for c in frame.columns], [list(r) for r in zip(*cols)], width)


def estimate_text(est: Estimate, *, width: int | None = None, verbose: bool = True) -> str:
    """The breakdown, the recipe and the totals as text for the terminal.

    The tables are laid out as pandas lays them out, without importing it (``planner estimate``
    prints this, and importing pandas would be most of its time; :func:`text_table`).

    Args:
        width: the widest a line may be (the terminal's; :func:`planner.core.textfit.terminal_width`):
            tables wrap their cells, sentences wrap with a hanging indent. None: lines as long as
            their text.
        verbose: the tables carry each component's formula and source, and the model's intermediate
            figures (``est.extra``) follow the totals (``planner estimate --verbose``; --json and the
            reports always have both).
    """
    lines = [
        f"Workload: {est.workload_name}   model: {est.model_id}   task: {est.task}   GPUs: {est.gpus}"
        f" ({est.gpus_per_node} per machine)",
        f"Parameters: {est.parameters:,}   trainable: {est.trainable_parameters:,}",
        f"Recipe: {est.recipe} - {est.recipe_description}",
        *([f"Stack: {est.stack_text}"] if est.stack else []),
        "",
    ]
    for where, title in (("gpu", "Per GPU"), ("host", "Host RAM (one machine)")):
        size = "per-GPU GiB" if where == "gpu" else "host GiB"
        rows = [[c.name, c.phase or "always", round(c.bytes / GiB, 3)] + ([c.formula, c.source] if verbose else [])
                for c in est.components if c.where == where]
        lines.append(f"{title}:")
        lines.append(text_table(["component", "when", size] + (["formula", "source"] if verbose else []), rows,
                                (size,), width=width))
        lines.append("")
    if not verbose:
        lines.append("Each component's formula and source: --verbose (or --json).")
        lines.append("")
    lo, hi = est.ram_rule_bytes()
    unified = est.per_gpu_unified_bytes
    lines.append(f"Per-GPU total: {est.per_gpu_total_bytes / GiB:,.2f} GiB"
                 f" (peak in {est.peak_phase or 'every phase'}; tensors {est.per_gpu_allocated_bytes / GiB:,.2f} GiB)"
                 + (f"; beside it {unified / GiB:,.2f} GiB of CUDA unified memory (paged optimizer states, evictable "
                    "to host RAM)" if unified else ""))
    lines.append(f"Host RAM total: {est.host_total_bytes / GiB:,.2f} GiB (peak in {est.host_peak_phase or 'every phase'});"
                 f" rule of thumb {'6-8x' if est.offload else '2-4x'} VRAM: {lo / GiB:,.0f}-{hi / GiB:,.0f} GiB")
    # the model's intermediate figures (KV bytes per token, llama.cpp's layer split...): for checking, so with
    # --verbose (--json always has them as 'extra')
    if verbose:
        for key, value in est.extra.items():
            lines.append(f"{key.replace('_', ' ')}: {value:,}")
    for n in est.notes:
        lines.append(f"Note: {n}")
    for w in est.warnings:
        lines.append(f"Warning: {w}")
    text = "\n".join(lines)
    if width is None:
        return text
    from planner.core.textfit import fit_text

    return fit_text(text, width)


def _gib_text(n: float) -> str:
    return f"{n / GiB:,.2f} GiB"


def prices_rule(plan: Any) -> str:
    """'price: street' (and ', used_ok: true'), from the plan's assumptions."""
    rule = ((plan.assumptions or {}).get("rules") or {}).get("prices", "")
    return rule.split(" (", 1)[0] if rule else "price: street"


def overlay_files(catalog_files: Sequence[str]) -> list[str]:
    """The overlay's files among a plan's catalog files: those outside the first folder
    (:func:`planner.catalog.sources.catalog_folders`: the shipped catalog's)."""
    from planner.catalog.sources import catalog_folders

    shipped = catalog_folders(catalog_files)[:1]
    return [f for f in catalog_files if Path(f).parent not in shipped]


def plan_text(plan: Any, width: int | None = None, today: date | None = None) -> str:
    """The recommendation for the terminal: machine, price, per-GPU need vs capacity, recipe, quote.

    ``width``: the widest a line may be (tables wrap their cells, sentences wrap with a hanging
    indent; :mod:`planner.core.textfit`); None: lines as long as their text (the Markdown report).
    ``today``: the date a seller's quote (``quote_valid_until``) is checked against (default: today).
    """
    c = plan.choice
    lines = [f"Scenario {plan.scenario}: {len(plan.estimates)} workload(s); {int(plan.candidates['represents_count'].sum()):,} candidates, "
             f"{int(plan.candidates['feasible'].sum()):,} feasible.", ""]
    nodes = int(c["nodes"])
    machine = f"{int(c['cards_per_node'])} x {c['gpu_id']} on {c['platform_id']}"
    if c["dimm_id"]:
        machine += f", {int(c['dimm_count'])} x {c['dimm_id']} ({_gib_text(c['ram_bytes'])} RAM)"
    if nodes > 1 and c["nic_id"]:
        machine = (f"{nodes} nodes of [{machine}] + {int(c['nic_count'])} x {c['nic_id']}"
                   + (f" + {c['switch_id']}" if c["switch_id"] else " (back-to-back, no switch)"))
    elif nodes > 1:  # served replicas only: no scale-out fabric (planner.solve.fabric)
        from planner.solve.fabric import ONBOARD_WORDS

        machine = f"{nodes} nodes of [{machine}], {ONBOARD_WORDS}"
    lines.append(f"Recommendation: {machine}")
    lines.append(f"Total: ${plan.total_usd:,.2f} (capex, USD)")
    lines.append(f"Objective: {(plan.assumptions or {}).get('objective', '')}")
    for text in (plan.assumptions or {}).get("objective_arithmetic", ())[1:]:
        lines.append(f"  {text}")
    gpu_line = next((i for i in plan.line_items() if i.category == "gpu"), None)
    if gpu_line is not None:
        from planner.catalog.prices import price_words

        lines.append(f"Priced at: {gpu_line.catalog_id} {price_words(gpu_line.price_kind, gpu_line.condition)} "
                     f"${gpu_line.unit_price_usd:,.2f} of {gpu_line.as_of} (the scenario's rule {prices_rule(plan)} picks it)")
    note = getattr(plan, "ram_rule", None)
    if note is not None:
        lines.append("RAM rule:")
        lines += [f"  {x}" for x in note.lines()]
    overlay = overlay_files((plan.assumptions or {}).get("catalog_files") or ())
    if overlay:
        lines.append(f"Catalog: the shipped catalog with the overlay {Path(overlay[0]).parent} "
                     f"({', '.join(Path(f).name for f in overlay)}) over it")
    lines.append("")
    from planner.solve.usages import takes_headroom

    from planner.solve.solver import target_lines

    targets = list(getattr(plan, "targets", ()) or ()) + [{}] * len(plan.estimates)
    for est, strat, w, tg in zip(plan.estimates, plan.strategies, plan.workloads, targets):
        lines.append(f"Workload {est.workload_name} ({est.task}, {est.model_id}): {strat}")
        for text in target_lines([tg], [est.workload_name]):
            lines.append("  target: " + text.split(": ", 1)[1])
        of = (f"{_gib_text(c['gpu_capacity_bytes'])} ({_gib_text(c['gpu_cuda_total_bytes'])} CUDA total less headroom)"
              if takes_headroom(w) else
              f"{_gib_text(c['gpu_cuda_total_bytes'])} (CUDA total; vLLM's gpu_memory_utilization "
              f"{w.infer.gpu_memory_utilization:g} is the margin)")
        lines.append(f"  needs {_gib_text(est.per_gpu_total_bytes)} per GPU of {of}; host RAM peak "
                     f"{_gib_text(est.host_total_bytes)} of {_gib_text(c['ram_bytes'])}")
        lines.append(f"  recipe {est.recipe}: {est.recipe_description}")
        if est.stack:
            lines.append(f"  stack: {est.stack_text}")
        if est.engine_release:
            lines.append(f"  engine release: {est.engine_release}")
    lines.append("")
    # a platform line's parts list goes below the table, which stays narrow
    from planner.solve.quote import PARTS_SEPARATOR

    parts = {i.catalog_id: i.description.split(PARTS_SEPARATOR, 1)[1] for i in plan.line_items()
             if PARTS_SEPARATOR in i.description}
    # the tables as pandas' to_string(index=False) lays them out (text_table), without pandas
    item_cols = ["item", "catalog id", "qty", "unit price (USD)", "total (USD)", "price kind", "condition", "as of"]
    item_rows = [[i.description.split(PARTS_SEPARATOR, 1)[0], i.catalog_id, i.quantity, f"{i.unit_price_usd:,.2f}",
                  f"{i.total_usd:,.2f}", i.price_kind, i.condition, i.as_of] for i in plan.line_items()]
    lines.append("Line items:")
    lines.append(text_table(item_cols, item_rows, width=width, integers={"qty"}, left={"item"}, find_numbers=True))
    for cid, text in parts.items():
        lines.append(f"  {cid} priced as: {text}")
    # what a purchasing office orders by (planner.solve.quote.LineItem: mpn, seller...), where the catalog says
    from planner.solve.quote import lapsed_quotes_warning, order_details

    ordered = [(i, order_details(i)) for i in plan.line_items()]
    if any(text for _, text in ordered):
        lines.append("  Order details (blank where the catalog does not say; the Quote sheet has a column):")
        lines += [f"    {i.description.split(PARTS_SEPARATOR, 1)[0]} ({i.category}): {text}" for i, text in ordered if text]
    # a seller's quote that lapsed before today cannot be ordered at (the Quote sheet flags it EXPIRED)
    lapsed = lapsed_quotes_warning(plan.line_items(), today or utc_today())
    if lapsed:
        lines.append(f"  {lapsed}")
    if len(plan.alternatives):
        # the DIMMs tell apart two machines of the same GPU, platform and RAM size (8 x 64 or 4 x 128 GiB)
        serving = job_tokens(plan)
        at = " at the slo: load" if slo_loads(plan) else ""
        alt_cols = ["GPU", "platform", "cards/node", "nodes", "RAM (GiB)", "DIMMs", "DIMM", "price (USD)",
                    f"machine time/request{at}" if serving else "time/job",
                    f"USD/M tokens{at}" if serving else "cost/job (USD)",
                    "need/GPU (GiB)", "capacity (GiB)", "why it lost"]
        import numpy as np

        a = plan.alternatives
        gib = {k: np.round(a[k] / 2**30, 2).tolist() for k in ("per_gpu_need_bytes", "gpu_capacity_bytes")}
        alt_rows = [[r["gpu_id"], r["platform_id"], r["cards_per_node"], r["nodes"], ram,
                     r["dimm_count"] if r["dimm_id"] else "", r["dimm_id"], f"{r['capex_usd']:,.2f}",
                     time_cell(r["hours_per_job"]), cost_cell(r["usd_per_job"], serving), need, cap,
                     r["why_lost"]]
                    for r, ram, need, cap in zip(a.records(), np.round(a["ram_bytes"] / 2**30, 0).astype(int).tolist(),
                                                 gib["per_gpu_need_bytes"], gib["gpu_capacity_bytes"])]
        if any(getattr(plan, "targets", ()) or ()):
            alt_cols.insert(-1, "target: achieved")
            for row, r in zip(alt_rows, a.records()):
                row.insert(-1, achieved_cell(r))
        lines.append("")
        lines.append("Alternatives:")
        lines.append(text_table(alt_cols, alt_rows, {"need/GPU (GiB)", "capacity (GiB)"}, width,
                                integers={"cards/node", "nodes", "RAM (GiB)"}, find_numbers=True))
    sens = getattr(plan, "price_sensitivity", None)
    if sens is not None:
        lines.append("")
        lines.append(f"Price sensitivity (re-pricing the {int(plan.candidates['feasible'].sum()):,} feasible "
                     "candidates, one price at a time):")
        lines += [f"  {x}" for x in sens.lines()]
    warnings = list(plan.warnings) + ([lapsed] if lapsed else [])
    if warnings:
        lines.append("")
        lines.append("Warnings:")
        lines += [f"  - {w}" for w in warnings]
    text = "\n".join(lines)
    if width is None:
        return text
    from planner.core.textfit import fit_text

    return fit_text(text, width)


def job_tokens(plan: Any) -> float | None:
    """Generated tokens of one job when every workload is served (the sum of their
    tokens_per_request), else None: the alternatives then show USD per million tokens."""
    ws = list(getattr(plan, "workloads", ()) or ())
    if not ws or any(w.infer is None or not w.infer.tokens_per_request for w in ws):
        return None
    return float(sum(w.infer.tokens_per_request for w in ws))


def slo_loads(plan: Any) -> str:
    """The loads of the plan's workloads with an ``slo:`` ('50 concurrent users'; each named by its
    workload when there are several), at which their time and cost per request and USD per million
    tokens are priced (planner.cost.slo_rent.at_load); '' when none has one."""
    names = [e.workload_name for e in getattr(plan, "estimates", ()) or ()]
    loads = [(n, t["slo"]["load"]) for n, t in zip(names, getattr(plan, "targets", ()) or ()) if t.get("slo")]
    if len(loads) == 1:
        return loads[0][1]
    return "; ".join(f"{n}: {load}" for n, load in loads)


def achieved_cell(r: Any) -> str:
    """A candidate row's deadline and SLO figures against their targets ('51.3 h of 72 h',
    'TTFT 0.44 s of 1 s, TPOT 28.2 ms of 50 ms'); '' when it has none. An alternative carries every
    workload's targets by name (``targets``, planner.solve.targets.targets_text): that text."""
    if r.get("targets"):
        return str(r["targets"])
    parts = []
    if r.get("deadline_hours") == r.get("deadline_hours") and r.get("deadline_hours") is not None:
        parts.append(f"{duration_text(r['run_hours'])} of {r['deadline_hours']:g} h")
    if r.get("target_ttft_s") == r.get("target_ttft_s") and r.get("target_ttft_s") is not None:
        parts.append(f"TTFT {r['ttft_s']:.3g} s of {r['target_ttft_s']:g} s")
    if r.get("target_tpot_s") == r.get("target_tpot_s") and r.get("target_tpot_s") is not None:
        parts.append(f"TPOT {r['tpot_s'] * 1e3:.3g} ms of {r['target_tpot_s'] * 1e3:.4g} ms")
    return ", ".join(parts)


def time_cell(hours: float) -> str:
    """Hours with their unit, or seconds below 0.01 h (a request): never '0.000 h'; '' when not timed."""
    if hours != hours:
        return ""
    return f"{hours:,.3f} h" if hours >= 0.01 else f"{hours * 3600:,.3g} s"


def cost_cell(usd: float, tokens: float | None = None) -> str:
    """USD per job (cents, or four significant digits below a cent), or with ``tokens`` (generated
    tokens per job) USD per million tokens; '' when not computed."""
    if usd != usd:
        return ""
    if tokens:
        return f"{usd / tokens * 1e6:,.4g}"
    return f"{usd:,.2f}" if abs(usd) >= 0.01 else f"{usd:.4g}"


def _md_cell(value: Any) -> str:
    """A table cell: Markdown's escaping layer (planner.core.escape.md_text; '|' escaped too)."""
    from planner.core.escape import md_text

    return md_text(value)


def plan_markdown(plan_text: str, estimates: Any) -> str:
    """A Markdown report: the recommendation as printed, then each workload's memory breakdown.

    Args:
        plan_text: the plan as the CLI prints it.
        estimates: the chosen configuration's estimates (a mapping name -> Estimate, or a list).
    """
    from planner.core.escape import md_fence, md_text

    items = list(estimates.values()) if hasattr(estimates, "values") else list(estimates)
    # every text from a file goes through Markdown's escaping layer: the plan in a fence nothing can
    # close, names and descriptions with HTML and link syntax escaped (planner.core.escape)
    lines = ["# Plan", "", *md_fence(plan_text), ""]
    for est in items:
        lines += [f"## Memory: {md_text(est.workload_name)} ({md_text(est.model_id)}, {md_text(est.task)})", "",
                  f"Recipe: {md_text(est.recipe)}: {md_text(est.recipe_description)}", "",
                  *([f"Stack: {md_text(est.stack_text)}", ""] if est.stack else []),
                  *([f"Engine release: {md_text(est.engine_release)}", ""] if est.engine_release else []),
                  "| component | where | when | GiB | formula | source |", "|---|---|---|---|---|---|"]
        for c in est.components:
            lines.append("| " + " | ".join(_md_cell(v) for v in (
                c.name, "per GPU" if c.where == "gpu" else "host", c.phase or "always", f"{c.bytes / GiB:,.3f}",
                c.formula, c.source)) + " |")
        lines += ["", f"Per-GPU total: {est.per_gpu_total_bytes / GiB:,.2f} GiB; host RAM total: "
                      f"{est.host_total_bytes / GiB:,.2f} GiB.", ""]
    return "\n".join(lines)
