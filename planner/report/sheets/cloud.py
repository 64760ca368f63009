"""The "Cloud vs Local" sheet: the comparison as live formulas over editable inputs.

:func:`add_cloud_sheet` adds the sheet to an openpyxl workbook (the report writer calls it). The
yellow cells are inputs: utilization, electricity price, PUE, ownership (depreciation) period,
cloud discount, residual value, support, GPU power fraction, capex, and each workload's share
and instance prices. Every other figure is a formula over them, in the order of
:mod:`planner.cost.tco`:

    busy hours per month  h  = utilization x 730
    capex                    = the Quote's grand total, which lists every copy bought (in the plan's
                               workbook); else capex of one planned machine x copies bought (copies > 1
                               only when a request rate needs them: planner.cost.compare)
    energy per busy hour  e  = (GPUs x TDP x power fraction + platform W) / 1000 x $/kWh x PUE
                               x copies busy on average (SUMPRODUCT(share, copies))
    net capex             F  = capex x (1 - residual)
    cloud per local hour  c  = SUMPRODUCT(share, list $/h, k) x (1 - discount)
    local per month          = support / 12 + e x h
    cloud per month          = c x h
    busy hours in period     = h x 12 x D
    lines cross at month  M* = capex / (cloud per month - local per month)
    break-even month         = M* when M* <= 12 x D; else 12 x D (the sale) when the TCO is no
                               more than the rent over the period; else none
    break-even hours      H* = (F + support x D) / (c - e), when H* <= the busy hours in the period

The purchase price is paid at month 0 and the resale value credited when the machine is sold at
the end of the ownership period (planner.cost.tco), so the month and busy-hour rows agree: both give a
break-even exactly when the TCO over the period is no more than the rent. Every cost line is
linear in the hours of use, so the sheet solves the break-even in closed form; the planner solves
the same equations with scipy's brentq, and the two agree (the LibreOffice test recalculates this
sheet and compares). The cumulative-cost table gives local, cloud on-demand and cloud spot cost by
month over the ownership period (local drops by the resale value at the sale), and a line chart
draws them with a marker at each break-even month within the period; a break-even that falls
outside it is stated in words under the markers, not drawn.

Several copies. When a request rate needs more than one copy of the planned machine
(:attr:`planner.cost.compare.Comparison.copies`), the comparison's capex is the copies x the plan's
quote, and the purchase must match it: :func:`planner.report.copies.workbook_data_for_copies`
scales the plan's workbook to every copy (each Quote quantity is one copy's x the copies, extras
included, so the Quote's grand total and the Summary's total price are the capex the break-even
rests on; the title, the Summary's configuration, plan warnings and assumptions say so),
:func:`planner.report.copies.mark_copies` states the copies beside the Summary's total and in the
Quote's title, and ``add_cloud_sheet(..., quote_copies=copies)`` takes the capex straight from the
Quote's grand total (the capex of one copy is that / the copies). A purchasing office ordering
from the Quote thus buys what the comparison priced.

Workbook-level names point at the key results (see :data:`NAMES`). openpyxl is imported
inside the functions.
"""

from __future__ import annotations

from typing import Any

from planner.cost.compare import TIME_MODEL_NOTE
from planner.cost.tco import HOURS_PER_MONTH
from planner.report.cells import fit_heights, merge_across, put_formula, put_sentence, put_text, put_value
from planner.report.sheets.cloud_base import (
    INT,
    NOTE_WORD,
    NUM2,
    NUM4,
    PAGE_LAST_COL,
    PCT,
    USD,
    USD4,
    WIDTHS,
    CloudSheet,
)
from planner.report.sheets.cloud_chart import break_even_markers, cost_chart, cumulative_table

SHEET = "Cloud vs Local"

#: Workbook-level defined names of the sheet's key cells.
NAMES = {
    "utilization": "CloudUtilization",
    "usd_per_kwh": "CloudUsdPerKwh",
    "pue": "CloudPue",
    "years": "CloudDepreciationYears",
    "discount": "CloudDiscount",
    "hours_per_month": "CloudHoursPerMonth",
    "energy": "CloudLocalEnergyPerHour",
    "net_capex": "CloudNetCapex",
    "cloud_per_hour": "CloudOnDemandPerLocalHour",
    "spot_per_hour": "CloudSpotPerLocalHour",
    "be_months": "CloudBreakEvenMonths",
    "be_hours": "CloudBreakEvenHours",
    "be_months_any": "CloudBreakEvenMonthsClosedForm",
    "be_hours_any": "CloudBreakEvenHoursClosedForm",
    "spot_be_months": "CloudSpotBreakEvenMonths",
    "spot_be_hours": "CloudSpotBreakEvenHours",
    "spot_be_months_any": "CloudSpotBreakEvenMonthsClosedForm",
    "spot_be_hours_any": "CloudSpotBreakEvenHoursClosedForm",
    "tco": "CloudLocalTco",
}

def add_cloud_sheet(workbook: Any, comparison: Any, *, title: str = SHEET,
                    quote_copies: int = 1) -> dict[str, str]:
    """Add the "Cloud vs Local" sheet for ``comparison`` (a :class:`planner.cost.compare.Comparison`).

    Args:
        workbook: an openpyxl workbook; when it has the plan's Quote sheet (the workbook name
            ``QuoteGrandTotal``), the capex follows the Quote's grand total.
        comparison: the comparison.
        title: the sheet's name.
        quote_copies: copies of the planned machine the Quote's quantities cover (the
            comparison's copies after :func:`planner.report.copies.workbook_data_for_copies`; 1 for
            a plan's quote of one machine). With a Quote covering every copy, capex = the grand
            total itself.

    Returns:
        Key -> cell coordinate ('B20') of the sheet's inputs and results (keys of :data:`NAMES`).
    """
    from openpyxl.styles import Font

    comp = comparison
    ws = workbook.create_sheet(title)
    s = CloudSheet(ws)
    put_text(ws, 1, 1, "Cloud vs Local").font = Font(bold=True, size=14)
    put_sentence(ws, 2, 1, "Yellow cells are inputs; every other figure is a formula over them. Money in USD. "
                       "A month is 730 hours (8,760 / 12). The purchase price is paid at month 0; the residual "
                       "(resale) value is credited only when the machine is sold at the end of the ownership "
                       "period. Every cost line is linear in the hours of use, so the break-even is solved in "
                       "closed form here (the planner finds the same root with scipy's brentq).", PAGE_LAST_COL)
    put_sentence(ws, 3, 1, f"Local: {comp.copies} copies of [{comp.machine.description}], to keep up with "
                           "requests_per_hour" if comp.copies > 1 else f"Local: {comp.machine.description}",
                 PAGE_LAST_COL)
    r = _inputs(s, comp, quote_copies)
    first_wl, last_wl = _workload_table(s, comp, r + 2)
    r, has_od, has_spot = _results(s, comp, first_wl, last_wl)
    _workload_cost_formulas(s, first_wl, last_wl, comp)
    r = _notes(s, _instance_table(s, comp, r + 2))
    head, last = cumulative_table(s, comp, r + 2, has_od, has_spot)
    under_chart = cost_chart(s, comp, head, last, has_od, has_spot, break_even_markers(s, head, last))
    _arithmetic(s, comp, under_chart)
    _layout(ws)
    _define_names(workbook, s.cells, title)
    return s.cells


def _inputs(s: CloudSheet, comp: Any, quote_copies: int) -> int:
    """The yellow inputs from row 5 (utilization ... capex, the machine's power); return the last row."""
    c, m, line = comp.costs, comp.machine, s.line
    r = 5
    s.label(r, "Inputs")
    r += 1
    line(r, "utilization", "Utilization (share of calendar hours busy)", comp.utilization, PCT,
         f"{comp.hours_source}; {c.source_of('utilization') if c.utilization is not None else ''}".rstrip("; "),
         editable=True)
    r += 1
    line(r, "usd_per_kwh", "Electricity price (USD/kWh)", c.usd_per_kwh, USD4, c.source_of("usd_per_kwh"), editable=True)
    r += 1
    line(r, "pue", "PUE (facility / IT power)", c.pue, NUM2, c.source_of("pue"), editable=True)
    r += 1
    line(r, "years", "Ownership (depreciation) period (years)", c.depreciation_years, NUM2,
         c.source_of("depreciation_years"), editable=True)
    r += 1
    line(r, "discount", "Discount on cloud list prices", c.cloud_discount, PCT, c.source_of("cloud_discount"),
         editable=True)
    r += 1
    line(r, "residual", "Residual value (share of capex at the end)", c.residual_fraction, PCT,
         "credited when the machine is sold at the end of the ownership period, not at the purchase; "
         + c.source_of("residual_fraction"), editable=True)
    r += 1
    line(r, "support", "Support and maintenance (USD/year)", c.support_usd_per_year, USD,
         c.source_of("support_usd_per_year"), editable=True)
    r += 1
    line(r, "power_fraction", "GPU power while busy (share of TDP)", c.gpu_power_fraction, PCT,
         c.source_of("gpu_power_fraction"), editable=True)
    r = _capex(s, comp, quote_copies, r + 1)
    r += 1
    line(r, "gpus", "GPUs (count, one copy, all its machines)", m.gpu_count, INT, f"{m.gpu.id}")
    r += 1
    line(r, "tdp", "GPU board power, TDP (W)", m.gpu.tdp_w, INT, f"catalog gpus.yaml {m.gpu.id}")
    r += 1
    line(r, "platform_w", "Platform power under load (W, one copy, all its machines)", m.platform_w * m.nodes, INT,
         "catalog platforms.yaml platform_w x machines")
    r += 1
    line(r, "month_hours", "Hours in a month", HOURS_PER_MONTH, NUM2, "8,760 / 12")
    return r


def _capex(s: CloudSheet, comp: Any, quote_copies: int, r: int) -> int:
    """Capex of one copy, the copies bought and the capex, from row ``r``; return the last row.

    With the plan's Quote covering every copy the capex is its grand total; with a Quote for
    ``quote_copies`` copies one copy's capex is the grand total / that; without a Quote it is the
    plan's purchase price, an input."""
    m, cells, line = comp.machine, s.cells, s.line
    dates = sorted({str(i.as_of) for i in m.capex_items})
    dated = (f"; prices dated {dates[0]}" + (f" to {dates[-1]}" if len(dates) > 1 else "")) if dates else ""
    copies_note = ("ceil(requests_per_hour / one machine's requests/h), the most any workload needs (planner); 1 "
                   "without a rate the machine cannot keep up with")
    has_quote = "QuoteGrandTotal" in s.ws.parent.defined_names
    if has_quote and quote_copies == comp.copies:
        # The Quote lists every copy: the capex is its grand total (edit a quantity or a rate there).
        whole = f"B{r + 2}"
        line(r, "capex_one", "Capex of one planned machine (USD)", f"={whole}/B{r + 1}", USD,
             "capex / copies", formula=True)
        r += 1
        line(r, "copies", "Copies of the planned machine bought", comp.copies, INT,
             copies_note + ("; the Quote lists them all (each quantity is one copy's x this count)"
                            if comp.copies > 1 else ""))
        r += 1
        line(r, "capex", "Capex (USD)", "=QuoteGrandTotal", USD,
             ("the Quote sheet's grand total, every copy (follows edits there)" if comp.copies > 1 else
              "the Quote sheet's grand total (follows edits there)") + dated, formula=True)
        return r
    if has_quote:
        # The Quote is for quote_copies copies: one copy's capex is its grand total / that.
        per = f"/{quote_copies}" if quote_copies != 1 else ""
        line(r, "capex_one", "Capex of one planned machine (USD)", f"=QuoteGrandTotal{per}", USD,
             f"the Quote sheet's grand total{' / ' + str(quote_copies) if per else ''} (follows edits there)"
             f"{dated}", formula=True)
    else:
        line(r, "capex_one", "Capex of one planned machine (USD)", m.capex_usd, USD,
             f"the plan's purchase price{dated}", editable=True)
    r += 1
    line(r, "copies", "Copies of the planned machine bought", comp.copies, INT, copies_note)
    r += 1
    line(r, "capex", "Capex (USD)", f"={cells['capex_one']}*{cells['copies']}", USD,
         "capex of one machine x copies", formula=True)
    return r


_WORKLOAD_HEADER = ["Workload", "Share of busy hours", "Instance (on-demand)", "List USD/h", "Instance (spot)",
                    "Spot list USD/h", "k on-demand (cloud h per local h)", "k spot",
                    "Local tokens/s (one copy; an slo: service: served at its load)",
                    "Local hours per job", "Cloud hours per job (on-demand instance)", "Local cost per job (USD)",
                    "Cloud cost per job, on-demand (USD)", "Local USD per M tokens",
                    "Cloud USD per M tokens, on-demand",
                    "Cloud USD/h per local h, spot where cheaper (before discount)", "Priced as",
                    "Local copies busy while it runs", "Local strategy", "On-demand instance's strategy",
                    "Like-for-like (same precision as local)"]


def _workload_table(s: CloudSheet, comp: Any, r: int) -> tuple[int, int]:
    """Per workload its cheapest instances, share and k (the table that drives c), from row ``r``;
    return (first workload row, last workload row: the header's when there is none)."""
    ws = s.ws
    s.label(r, "Workloads: the cheapest instance of each, and the share of busy hours each takes")
    r += 1
    put_text(ws, r, 1, "Time model (assumption): " + TIME_MODEL_NOTE + " k = cloud hours per local busy hour: "
             "local tokens/s / cloud tokens/s for batch work (training; inference listed in "
             "costs.batch_inference), 1 for a service (other inference: the instance is up as long as the local "
             "machine, whatever its speed); for a service with requests_per_hour, the instance copies that keep up, "
             "ceil(rate / one instance's requests/h), as the local copies are ceil(rate / one machine's "
             "requests/h).").alignment = s.wrap
    merge_across(ws, r, 1, PAGE_LAST_COL)
    r += 1
    s.header(r, _WORKLOAD_HEADER)
    first_wl = r + 1
    for wc in comp.workloads:
        r += 1
        _workload_row(s, wc, r)
    return first_wl, r


def _workload_row(s: CloudSheet, wc: Any, r: int) -> None:
    """One workload's row of the workload table."""
    ws, input_fill = s.ws, s.input_fill
    od = wc.option(wc.best_on_demand)
    sp = wc.option(wc.best_spot)
    put_text(ws, r, 1, wc.name)
    put_value(ws, r, 2, wc.share, PCT).fill = input_fill
    put_text(ws, r, 3, od.instance_id if od else "none fits")
    if od:
        put_value(ws, r, 4, od.usd_per_hour, USD4).fill = input_fill
        put_value(ws, r, 7, od.hours_per_local_hour, NUM4)
    put_text(ws, r, 5, sp.instance_id if sp else "none")
    if sp:
        put_value(ws, r, 6, sp.spot_usd_per_hour, USD4).fill = input_fill
        put_value(ws, r, 8, sp.hours_per_local_hour, NUM4)
    if od:
        # A renter who can use spot takes the cheaper of the best spot and on-demand offers.
        put_formula(ws, r, 16, f"=MIN(D{r}*G{r},F{r}*H{r})" if sp else f"=D{r}*G{r}", USD4)
    # a service to an slo:: the tokens/s its load receives locally, the rate both sides are priced at
    put_value(ws, r, 9, wc.local.tokens_per_s if wc.slo_served_tokens_per_s is None else wc.slo_served_tokens_per_s,
              NUM2)
    rated = wc.service and wc.requests_per_hour is not None
    priced = ((f"service at {wc.requests_per_hour:,.0f} requests/h (k = instance copies)" if rated
               else f"service to its slo: (k = the instances that meet it; per M tokens at its load, {wc.slo_basis})"
               if wc.service and wc.slo_served_tokens_per_s is not None
               else "service (k = 1)" if wc.service else "batch work (k = local / cloud tokens/s)")
              + (", assumed: see the notes" if wc.pricing_assumed else ""))
    put_text(ws, r, 17, s.short(priced, 17))
    put_value(ws, r, 18, wc.copies, INT)
    put_text(ws, r, 19, s.short(wc.strategy, 19))
    if od:
        put_text(ws, r, 20, s.short(od.strategy, 20))
        put_text(ws, r, 21, s.short(f"no: {od.differs_from_local}" if od.differs_from_local else "yes", 21))
    if wc.local.hours_per_job is not None:
        put_value(ws, r, 10, wc.local.hours_per_job, NUM4)
    if od and od.time is not None and od.time.hours_per_job is not None:
        put_value(ws, r, 11, od.time.hours_per_job, NUM4)
        put_formula(ws, r, 13, f"=D{r}*(1-{s.absolute('discount')})*K{r}", USD)


def _results(s: CloudSheet, comp: Any, first_wl: int, last_wl: int) -> tuple[int, bool, bool]:
    """The results from row ``last_wl`` + 2: h, e, F, c, the monthly costs, the break-evens, the
    TCO; return (last row, whether there is an on-demand and a spot comparison)."""
    c, cells, line = comp.costs, s.cells, s.line
    r = last_wl + 2
    s.label(r, "Results")
    r += 1
    line(r, "hours_per_month", "Busy hours per month, h", f"={cells['utilization']}*{cells['month_hours']}", NUM2,
         "utilization x hours in a month", formula=True)
    r += 1
    line(r, "copies_busy", "Copies busy on average while busy",
         f"=SUMPRODUCT(B{first_wl}:B{last_wl},R{first_wl}:R{last_wl})" if comp.workloads else 1, NUM4,
         "SUMPRODUCT(share, local copies busy while it runs)", formula=bool(comp.workloads))
    r += 1
    line(r, "energy", "Local energy per busy hour, e (USD)",
         f"=({cells['gpus']}*{cells['tdp']}*{cells['power_fraction']}+{cells['platform_w']})/1000"
         f"*{cells['usd_per_kwh']}*{cells['pue']}*{cells['copies_busy']}", USD4,
         "(GPUs x TDP x power fraction + platform W) / 1000 x USD/kWh x PUE x copies busy on average", formula=True)
    r += 1
    line(r, "net_capex", "Net capex, F (USD)", f"={cells['capex']}*(1-{cells['residual']})", USD,
         "capex x (1 - residual value): what owning costs over the whole period, the resale credited at its "
         "end", formula=True)
    r += 1
    rows = f"{first_wl}:{last_wl}" if comp.workloads else None
    all_od = all(wc.best_on_demand for wc in comp.workloads)
    all_spot = c.spot and all_od and any(wc.best_spot for wc in comp.workloads)
    if all_od and rows:
        f_od = (f"=SUMPRODUCT(B{first_wl}:B{last_wl},D{first_wl}:D{last_wl},G{first_wl}:G{last_wl})"
                f"*(1-{cells['discount']})")
        line(r, "cloud_per_hour", "Cloud on-demand per local busy hour, c (USD)", f_od, USD4,
             "SUMPRODUCT(share, list USD/h, k) x (1 - discount)", formula=True)
    else:
        line(r, "cloud_per_hour", "Cloud on-demand per local busy hour, c (USD)", "no instance fits every workload",
             None, "")
    r += 1
    if all_spot and rows:
        f_sp = f"=SUMPRODUCT(B{first_wl}:B{last_wl},P{first_wl}:P{last_wl})*(1-{cells['discount']})"
        line(r, "spot_per_hour", "Cloud spot per local busy hour (USD)", f_sp, USD4,
             "SUMPRODUCT(share, MIN(spot USD/h x k spot, list USD/h x k)) x (1 - discount)", formula=True)
    else:
        line(r, "spot_per_hour", "Cloud spot per local busy hour (USD)", "no spot comparison", None, "")
    r += 1
    line(r, "local_pm", "Local running cost per month (USD)",
         f"={cells['support']}/12+{cells['energy']}*{cells['hours_per_month']}", USD, "support / 12 + e x h",
         formula=True)
    r += 1
    has_od = bool("cloud_per_hour" in cells and all_od and rows)
    has_spot = bool(all_spot and rows)
    if has_od:
        line(r, "cloud_pm", "Cloud on-demand per month (USD)", f"={cells['cloud_per_hour']}*{cells['hours_per_month']}",
             USD, "c x h", formula=True)
    r += 1
    if has_spot:
        line(r, "spot_pm", "Cloud spot per month (USD)", f"={cells['spot_per_hour']}*{cells['hours_per_month']}",
             USD, "c spot x h", formula=True)
    r += 1
    line(r, "busy_hours", "Busy hours in the ownership period", f"={cells['hours_per_month']}*12*{cells['years']}",
         NUM2, "h x 12 x D", formula=True)
    r = _break_evens(s, has_od, has_spot, r + 1)
    return _totals(s, has_od, r), has_od, has_spot


def _break_evens(s: CloudSheet, has_od: bool, has_spot: bool, r: int) -> int:
    """Four break-even rows (month and busy hours, closed form and within the period) for on-demand,
    then for spot, from row ``r`` (rows left empty without the comparison); return the next row."""
    cells, line = s.cells, s.line
    yrs, F, S, e = cells["years"], cells["net_capex"], cells["support"], cells["energy"]
    capex, busy = cells["capex"], cells["busy_hours"]
    # TCO over the period (resale included) and the rent for the same work, inline so that each
    # break-even row reads on its own.
    tco_expr = f"{F}+{S}*{yrs}+{e}*{busy}"
    for kind, ok, per_hour, pm in (("", has_od, "cloud_per_hour", "cloud_pm"),
                                   ("spot_", has_spot, "spot_per_hour", "spot_pm")):
        name = "on-demand" if not kind else "spot"
        if not ok:
            r += 4
            continue
        line(r, f"{kind}be_months_any", f"Month the cumulative lines cross before the sale, {name} (closed form)",
             f'=IF({cells[pm]}>{cells["local_pm"]},{capex}/({cells[pm]}-{cells["local_pm"]}),"never")', NUM2,
             "capex / (cloud per month - local per month): the full price paid at month 0; 'never' when renting "
             "costs no more per month", formula=True)
        r += 1
        any_m = cells[f"{kind}be_months_any"]
        line(r, f"{kind}be_months", f"Break-even month within the ownership period, {name}",
             f'=IF(AND(ISNUMBER({any_m}),{any_m}<=12*{yrs}),{any_m},'
             f'IF({tco_expr}<={cells[per_hour]}*{busy},12*{yrs},"none: cloud cheaper throughout"))', NUM2,
             "the crossing when it falls within 12 x D months; else 12 x D (local breaks even only at the sale, "
             "when the resale value is credited) when the TCO is no more than the rent. There is a month exactly "
             "when the busy-hours row below has a number; the two differ because this row credits the resale only "
             "at the sale and that row counts it over the whole period", formula=True)
        r += 1
        line(r, f"{kind}be_hours_any", f"Busy hours over the period at which owning pays off, {name} (closed form)",
             f'=IF({cells[per_hour]}>{e},({F}+{S}*{yrs})/({cells[per_hour]}-{e}),"never")', NUM2,
             "(F + support x D) / (c - e): local TCO over D years, resale included = rent for the same work",
             formula=True)
        r += 1
        any_h = cells[f"{kind}be_hours_any"]
        line(r, f"{kind}be_hours", f"Break-even busy hours within the period's busy hours, {name}",
             f'=IF(AND(ISNUMBER({any_h}),{any_h}<={busy}),{any_h},"none: cloud cheaper throughout")',
             NUM2, "the whole-period break-even (resale included) when the busy hours in the period (h x 12 x D) "
             "reach it; a number here exactly when the month row has one, not the same point in time (see there)",
             formula=True)
        r += 1
    return r


def _totals(s: CloudSheet, has_od: bool, r: int) -> int:
    """Local TCO, cloud total and local cost per busy hour from row ``r``; return the last row."""
    cells, line = s.cells, s.line
    yrs, F, S, e = cells["years"], cells["net_capex"], cells["support"], cells["energy"]
    line(r, "tco", "Local TCO over the ownership period (USD)",
         f"={F}+{S}*{yrs}+{e}*{cells['hours_per_month']}*12*{yrs}", USD, "F + support x D + e x h x 12 x D",
         formula=True)
    r += 1
    if has_od:
        line(r, "cloud_total", "Cloud on-demand over the ownership period (USD)",
             f"={cells['cloud_per_hour']}*{cells['hours_per_month']}*12*{yrs}", USD, "c x h x 12 x D", formula=True)
    r += 1
    line(r, "local_per_hour", "Local cost per busy hour (USD)",
         f'=IF({cells["hours_per_month"]}>0,({F}+{S}*{yrs})/({cells["hours_per_month"]}*12*{yrs})+{e},"")', USD4,
         "(F + support x D) / (h x 12 x D) + e", formula=True)
    r += 1
    line(r, "local_per_copy_hour", "Local cost per busy hour of one copy (USD)",
         f'=IF(ISNUMBER({cells["local_per_hour"]}),{cells["local_per_hour"]}/{cells["copies_busy"]},"")', USD4,
         "local cost per busy hour / copies busy on average (the job times are one copy's)", formula=True)
    return r


def _workload_cost_formulas(s: CloudSheet, first_wl: int, last_wl: int, comp: Any = None) -> None:
    """The workload table's local cost per job and per M tokens, and the cloud's per M tokens: they
    follow the local cost per copy-hour, a result."""
    ws = s.ws
    local_h = s.cells["local_per_copy_hour"]
    discount = s.absolute("discount")
    for row in range(first_wl, last_wl + 1):
        put_formula(ws, row, 12, f'=IF(ISNUMBER(J{row}),{local_h}*J{row},"")', USD)
        put_formula(ws, row, 14, f'=IF(I{row}>0,{local_h}/(I{row}*3600)*1000000,"")', USD4)
        # the cloud's cost of what the local copies produce in a busy hour: price x k / (copies x local tokens/s)
        wc = comp.workloads[row - first_wl] if comp is not None else None
        od = wc.option(wc.best_on_demand) if wc is not None else None
        if od is not None and od.slo is not None and wc.slo_served_tokens_per_s is not None and wc.service:
            # an slo: service: its k instances' price over the tokens the load receives on them (slo_rent)
            put_formula(ws, row, 15, f"=D{row}*(1-{discount})*G{row}/({od.slo.served_tokens_per_s!r}*3600)*1000000",
                        USD4)
            continue
        put_formula(ws, row, 15, f'=IF(AND(ISNUMBER(D{row}),ISNUMBER(G{row}),I{row}>0),'
                                 f'D{row}*(1-{discount})*G{row}/(I{row}*R{row}*3600)*1000000,"")', USD4)


_INSTANCE_HEADER = ["Workload", "Instance", "Provider", "GPUs", "List USD/h", "Spot list USD/h", "Fits",
                    "Why not", "Hours per job", "Tokens/s (an slo: service: served at its load)",
                    "k (cloud h per local h)", "Cost per job (USD)",
                    "Spot cost per job (USD)", "USD per M tokens", "Spot USD per M tokens", "Price as of",
                    "Region", "Price source", "Spot range across the region's zones (USD/h)", "Spot figure kept",
                    "Copies (instances rented for requests_per_hour or the slo: load)", "Strategy on the instance",
                    "Like-for-like (same precision as local)"]


def _instance_table(s: CloudSheet, comp: Any, r: int) -> int:
    """Every instance considered per workload, from row ``r``; return the last row."""
    s.label(r, "Every instance considered, per workload (cost per job and per M tokens at list price less the "
               "discount)")
    r += 1
    s.header(r, _INSTANCE_HEADER)
    for wc in comp.workloads:
        for o in wc.cloud:
            r += 1
            _instance_row(s, wc, o, r)
    return r


def _instance_row(s: CloudSheet, wc: Any, o: Any, r: int) -> None:
    """One cloud option of one workload."""
    ws = s.ws
    discount = s.absolute("discount")
    put_text(ws, r, 1, wc.name)
    put_text(ws, r, 2, o.instance_id)
    put_text(ws, r, 3, o.provider)
    put_value(ws, r, 4, o.gpu_count, INT)
    put_value(ws, r, 5, o.usd_per_hour, USD4)
    put_value(ws, r, 6, o.spot_usd_per_hour, USD4)
    put_text(ws, r, 7, "yes" if o.feasible else "no")
    put_text(ws, r, 8, s.short(o.why_not, 8))
    put_text(ws, r, 16, o.as_of)
    put_text(ws, r, 17, o.region)
    put_text(ws, r, 18, s.short(s.short_source(o.source), 18))
    if o.spot_range_usd_per_hour is not None:
        put_text(ws, r, 19, f"{o.spot_range_usd_per_hour[0]:g}-{o.spot_range_usd_per_hour[1]:g}")
    put_text(ws, r, 20, s.short(o.spot_basis, 20))
    if o.feasible:
        put_value(ws, r, 21, o.copies, INT)
        put_text(ws, r, 22, s.short(o.strategy, 22))
        put_text(ws, r, 23, s.short(f"no: {o.differs_from_local}" if o.differs_from_local else "yes", 23))
    if not o.feasible and o.time is not None and o.hours_over_deadline is not None:
        # a training deadline's miss holds the workload: its time says by how much it misses (Why not)
        put_value(ws, r, 9, o.time.hours_per_job, NUM4)
        put_value(ws, r, 10, o.time.tokens_per_s, NUM2)
        return
    if not o.feasible or o.time is None:
        return
    if o.time.hours_per_job is not None:
        put_value(ws, r, 9, o.time.hours_per_job, NUM4)
        put_formula(ws, r, 12, f"=E{r}*(1-{discount})*I{r}", USD)
        if o.spot_usd_per_hour is not None:
            put_formula(ws, r, 13, f"=F{r}*(1-{discount})*I{r}", USD)
    # a service to an slo:: the tokens/s its load receives on the instances rented (U of them), the rate
    # its USD per M tokens is at (planner.cost.slo_rent); else one instance's tokens/s
    slo = o.slo is not None and wc.slo_served_tokens_per_s is not None and wc.service
    put_value(ws, r, 10, o.slo.served_tokens_per_s if slo else o.time.tokens_per_s, NUM2)
    put_value(ws, r, 11, o.hours_per_local_hour, NUM4)
    n = f"*U{r}" if slo else ""
    put_formula(ws, r, 14, f"=E{r}*(1-{discount}){n}/(J{r}*3600)*1000000", USD4)
    if o.spot_usd_per_hour is not None:
        put_formula(ws, r, 15, f"=F{r}*(1-{discount}){n}/(J{r}*3600)*1000000", USD4)


def _notes(s: CloudSheet, r: int) -> int:
    """The notes the workload and instance tables point at ('note 3', :meth:`CloudSheet.short`),
    one wrapped sentence each (merged across the first printed page's columns), from row ``r`` + 2;
    return the last row (``r`` where there is none)."""
    if not s.notes:
        return r
    r += 2
    s.label(r, f"Notes to the tables above: a cell showing '{NOTE_WORD} <n>' holds the text of note n")
    for text, n in s.notes.items():
        r += 1
        put_sentence(s.ws, r, 1, f"{NOTE_WORD} {n}: {text}", PAGE_LAST_COL)
    return r


def note_texts(ws: Any) -> dict[str, str]:
    """The notes of a written sheet: 'note 3' -> its text (for readers of the workbook and tests)."""
    out = {}
    for cell in ws["A"]:
        value = cell.value
        if isinstance(value, str) and value.startswith(f"{NOTE_WORD} ") and ": " in value:
            key, text = value.split(": ", 1)
            if key[len(NOTE_WORD) + 1:].isdigit():
                out[key] = text
    return out


def _arithmetic(s: CloudSheet, comp: Any, r: int) -> None:
    """The planner's arithmetic, notes and warnings, one wrapped sentence each (merged across the
    first printed page's columns), from row ``r``."""
    ws = s.ws
    s.label(r, "The planner's arithmetic (at the inputs above as first written)")
    texts = list(comp.lines)
    for wc in comp.workloads:
        texts.append(f"{wc.name}: {wc.local.job}")
        texts.extend(f"  local: {t}" for t in wc.local.lines)
        od = wc.option(wc.best_on_demand)
        if od and od.time:
            texts.extend(f"  {od.instance_id}: {t}" for t in od.time.lines)
    texts.append("")
    texts.extend(f"Note: {n}" for n in comp.notes)
    texts.extend(f"Warning: {w}" for w in comp.warnings)
    for text in texts:
        r += 1
        if not text:
            continue
        put_sentence(ws, r, 1, text, PAGE_LAST_COL)


def _layout(ws: Any) -> None:
    """Column widths, the rows of wrapped text grown to hold it, the inputs' rows frozen on screen.

    The workload and instance tables are wider than a page at 70 %: the sheet prints at 70 %
    (planner.report.workbook), its pages across then down, column A (the labels and workload
    names) repeated on each page and row 1 at the top; its sentences wrap within A-I, the first
    page's width.
    """
    # the tables' long texts are notes (CloudSheet.short): their columns narrow, a row a line
    for col, w in WIDTHS.items():
        ws.column_dimensions[col].width = w
    fit_heights(ws)
    ws.freeze_panes = "A5"
    ws.print_title_rows = "1:1"
    ws.print_title_cols = "A:A"


def _define_names(workbook: Any, cells: dict[str, str], title: str) -> None:
    """The workbook-level names of :data:`NAMES` for the key cells the sheet has."""
    from openpyxl.workbook.defined_name import DefinedName

    for name_key, defined in NAMES.items():
        ref = cells.get(name_key)
        if ref is None:
            continue
        col = "".join(ch for ch in ref if ch.isalpha())
        row = "".join(ch for ch in ref if ch.isdigit())
        quoted = f"'{title}'" if " " in title else title
        workbook.defined_names[defined] = DefinedName(defined, attr_text=f"{quoted}!${col}${row}")
