"""The Excel report: a plan as a workbook a buyer can read, print, and edit.

:func:`write_workbook` turns a :class:`WorkbookData` into an ``.xlsx`` file with six sheets:

- **Summary**: per workload the chosen configuration and strategy, per-GPU memory need against
  the card's CUDA total and the capacity left after the scenario's reserve (headroom), host
  RAM, recipe and warnings; the quote's grand total (a formula over the Quote sheet); date and
  catalog version (schema and a SHA-256 of the catalog files' content, :func:`catalog_sha256`).
- **Quote**: a *budgetary estimate* from catalog prices, not a vendor's quote (a banner says so
  and asks for dated vendor quotes before ordering). The line items with unit price, quantity,
  line total, price kind, price status (:func:`price_status`: estimated prices and prices older
  than the plan's stale threshold are flagged on the line), price source and as-of date, the
  GPUs' memory (CUDA total, GiB), a few blank input rows inside the subtotal's range for items
  the buyer adds, then subtotal, discount, tax, shipping and grand total. Every total is a live
  formula over input cells (unit prices, quantities, rates, shipping), so a buyer who edits a
  quantity or a rate sees every total follow. The arithmetic, in order, every amount rounded to
  cents (Excel's ``ROUND``, half away from zero)::

      line total      = round(unit price x quantity)
      subtotal        = round(sum of line totals)
      discount        = round(subtotal x discount rate)     (shown negative)
      after discount  = round(subtotal - discount)
      tax             = round(after discount x tax rate)    (shipping is not taxed)
      grand total     = round(after discount + tax + shipping)

  :func:`quote_totals` does the same arithmetic in Python, in the same order.
- **Memory**: every workload's breakdown (component, GiB per GPU, host GiB, formula, source)
  and a native stacked bar chart of the per-GPU components live at the peak.
- **Alternatives**: the ranked runners-up and the infeasible candidates with the binding
  constraint, as the solver's tables give them; shown rows are numbered, the solver's rank has a
  column of its own and a note explains the ranks the sheet skips.
- **Assumptions**: per workload the bytes per value the memory model used (:class:`RecipeRow`:
  frozen base weights in their format, LoRA adapters with their gradients and optimizer states),
  the catalog entries used with their sources and dates, the workloads' notes, and the
  scenario file as given.
- **Sources**: every ``REF:<id>`` the quote's lines and the catalog entries used cite, with the
  document as the catalog's ``SOURCES.md`` gives it (:mod:`planner.catalog.sources`), where to find it,
  its links (hyperlinks), the quote lines and entries that cite it and the file and line that
  define it; an id that no ``SOURCES.md`` defines, or a ``SOURCES.md`` that could not be read, is
  said so there. So the workbook traces every price without the planner's files. A source text
  that cites ids keeps its text on the Quote and Assumptions sheets, followed by one line per id:
  the document's short title and its row on the Sources sheet (:func:`source_text`). Free text
  without ``REF:`` is shown unchanged.

Sizes are written in GiB (2**30 bytes) and every such header says "(GiB)"; money is USD with a
currency number format. Full dates (YYYY-MM-DD) are stored as dates; a month-only 'YYYY-MM'
stays text (the header says so). Every sheet has a print area (:func:`print_area`). Text that
comes from user files (names, notes, the scenario) is always stored as a text cell, so a value
starting with ``=``, ``+``, ``-`` or ``@`` never becomes a formula. The file is written with :mod:`planner.core.atomic` (a temporary file in the target
directory, renamed into place), so an interrupted run never leaves a broken report and an
existing report is replaced whole. The quote's key cells have workbook-level names
(:data:`NAME_GRAND_TOTAL` ...), so other sheets (``extra_sheets``) and buyers can refer to them.

This module does not import the solver: :func:`workbook_data_from_plan` reads a plan by its
documented attributes. openpyxl and pandas are imported inside the functions.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.catalog.loader import SourceRef
from planner.memory.breakdown import GPU, HOST, Component, Estimate
from planner.memory.quant import nf4_constant_bits
from planner.plan.quote import STALE_PRICE_MONTHS, LineItem
from planner.workload.recipes import OPTIMIZERS, RECIPES
from planner.catalog.sources import SourceDoc, SourceIndex, ref_ids
from planner.core.units import GiB

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

SHEETS = ("Summary", "Quote", "Memory", "Alternatives", "Assumptions", "Sources")

#: Number formats.
USD_FORMAT = '"$"#,##0.00;[Red]-"$"#,##0.00'
GIB_FORMAT = "#,##0.00"
PCT_FORMAT = "0.00%"
INT_FORMAT = "#,##0"
DATE_FORMAT = "yyyy-mm-dd"

#: Workbook-level names of the quote's key cells (Formulas > Name Manager in Excel).
NAME_SUBTOTAL = "QuoteSubtotal"
NAME_DISCOUNT_RATE = "QuoteDiscountRate"
NAME_TAX_RATE = "QuoteTaxRate"
NAME_SHIPPING = "QuoteShipping"
NAME_GRAND_TOTAL = "QuoteGrandTotal"

#: Characters that make a spreadsheet read a typed value as a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@")

_MAX_CELL_CHARS = 32_767  # Excel's limit for one cell
_ILLEGAL = re.compile(r"[\000-\010\013\014\016-\037]")  # control characters XML 1.0 cannot hold
_INPUT_FILL = "FFF2CC"  # light yellow: cells the buyer may edit
_FLAG_FILL = "F8CBAD"  # light red: a price to get a vendor quote for
_BANNER_COLOR = "C00000"  # dark red text: the Quote sheet's "not a vendor quote" banner
_HEADER_FILL = "DDEBF7"
_MAX_WIDTH = 60


# ----- data -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SummaryRow:
    """One workload's line on the Summary sheet.

    Attributes:
        workload: the workload's name (user text).
        task: 'train' or 'infer'.
        model: the model as the user named it.
        configuration: the chosen hardware in words, e.g. '2 x RTX 4090 24 GB on <platform>,
            4 x 32 GiB DDR5'.
        gpus: GPUs the workload runs on.
        gpu_need_bytes: peak memory one GPU needs, bytes.
        gpu_cuda_total_bytes: memory one card of the chosen GPU offers to processes (CUDA's total:
            nvidia-smi's less the driver's reservation), bytes.
        host_need_bytes: peak host RAM of one machine, bytes.
        host_ram_bytes: RAM installed per machine in the chosen configuration, bytes (None when
            the configuration has no host of its own, e.g. a cloud instance without the figure).
        recipe: the precision recipe (training) or weight format (inference).
        warnings: contradictions and risks for this workload.
        gpu_capacity_bytes: what the plan lets the workload use per GPU: the CUDA total less the
            scenario's reserve (``vram_headroom``), bytes; None means all of ``gpu_cuda_total_bytes``.
            Headroom is measured against it.
        strategy: how the workload runs on the machine, e.g. 'full mixed-bf16 adamw, ZeRO-2, ...'.
    """

    workload: str
    task: str
    model: str
    configuration: str
    gpus: int
    gpu_need_bytes: int
    gpu_cuda_total_bytes: int
    host_need_bytes: int
    host_ram_bytes: int | None
    recipe: str
    warnings: tuple[str, ...] = ()
    gpu_capacity_bytes: int | None = None
    strategy: str = ""

    @property
    def capacity_bytes(self) -> int:
        """Per-GPU bytes the workload may use (the reserve taken off the CUDA total)."""
        return self.gpu_cuda_total_bytes if self.gpu_capacity_bytes is None else self.gpu_capacity_bytes


@dataclass(frozen=True)
class QuoteSettings:
    """The header of the Quote sheet (a budgetary estimate) and its editable rates.

    Attributes:
        quote_number: the estimate's reference, e.g. 'Q-20250101-ab12cd' (user text allowed).
        quote_date: date of the estimate.
        validity_days: days after ``quote_date`` by which to re-check the prices ('re-check
            prices by' = date + days); no vendor has offered them for that long.
        discount_pct: discount in percent of the subtotal (5.0 means 5 %).
        tax_pct: tax in percent of the subtotal after discount (shipping is not taxed).
        shipping_usd: shipping and handling, USD, added after tax.
        customer: who the quote is for ('' when not given; user text).
    """

    quote_number: str
    quote_date: date
    validity_days: int = 30
    discount_pct: float = 0.0
    tax_pct: float = 0.0
    shipping_usd: float = 0.0
    customer: str = ""

    def __post_init__(self) -> None:
        for name in ("discount_pct", "tax_pct", "shipping_usd"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"QuoteSettings.{name} must be a finite number, got {value!r}")
            if value < 0:
                raise ValueError(f"QuoteSettings.{name} must not be negative, got {value!r}")
        if self.discount_pct > 100:
            raise ValueError(f"QuoteSettings.discount_pct is a percentage (0-100), got {self.discount_pct!r}")
        if isinstance(self.validity_days, bool) or not isinstance(self.validity_days, int) or self.validity_days < 0:
            raise ValueError(f"QuoteSettings.validity_days must be a whole number >= 0, got {self.validity_days!r}")


@dataclass(frozen=True)
class QuoteTotals:
    """The quote's totals in USD, computed in the workbook's order (see the module docstring)."""

    subtotal_usd: float
    discount_usd: float
    after_discount_usd: float
    tax_usd: float
    shipping_usd: float
    grand_total_usd: float


def cents(amount: float) -> float:
    """``amount`` rounded to cents as Excel's ``ROUND(amount, 2)`` does: half away from zero, on
    the value's 15 significant digits (so 135.795 computed as 135.79499999999999 gives 135.80)."""
    if not math.isfinite(amount):
        return amount
    return float(Decimal(f"{amount:.15g}").quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def quote_totals(items: Iterable[LineItem], settings: QuoteSettings) -> QuoteTotals:
    """The quote's totals, USD, with the same arithmetic (and order) as the Quote sheet's formulas.

    line = cents(unit price x quantity); subtotal = cents(sum of lines);
    discount = cents(subtotal x discount_pct / 100); after = cents(subtotal - discount);
    tax = cents(after x tax_pct / 100); grand total = cents(after + tax + shipping).
    Every amount is rounded to cents with :func:`cents`, as the workbook's ``ROUND`` does.
    """
    subtotal = 0.0
    for item in items:
        subtotal += cents(item.unit_price_usd * item.quantity)
    subtotal = cents(subtotal)
    discount = cents(subtotal * (settings.discount_pct / 100))
    after = cents(subtotal - discount)
    tax = cents(after * (settings.tax_pct / 100))
    grand = cents(after + tax + settings.shipping_usd)
    return QuoteTotals(subtotal, discount, after, tax, settings.shipping_usd, grand)


@dataclass(frozen=True)
class RecipeRow:
    """One workload's bytes per value as the memory model used them (the Assumptions sheet).

    A recipe's own bytes per parameter (:data:`planner.workload.recipes.RECIPES`) describe a full
    fine-tune. LoRA and QLoRA keep the base frozen in its format (the recipe's weight dtype, or
    NF4 for QLoRA) and train adapters whose gradients and optimizer states share the adapter
    dtype (fp32 by default), with no master copy: see :mod:`planner.memory.states`.

    Attributes:
        recipe: the recipe's name (training) or the weight format (inference).
        definition: the recipe as the estimate defines it, one sentence.
        workload: the workload's name (user text).
        method: 'full', 'lora', 'qlora', 'inference', or '' when not known.
        weights: bytes per parameter of the weights (the frozen base for LoRA/QLoRA); text when
            formats are mixed (NF4 linears, 16-bit embeddings); None when not known.
        adapters: bytes per parameter of the LoRA adapters (None: no adapters).
        gradients: bytes per trainable parameter of the gradients.
        master_weights: bytes per trainable parameter of an fp32 master copy (0: none).
        optimizer: the optimizer's name.
        optimizer_state: bytes per optimizer state value; text for 8-bit optimizers.
        activations: bytes per activation value (matmul outputs).
        autocast_copy: bytes per parameter of autocast's cached 16-bit weight copies.
    """

    recipe: str
    definition: str
    workload: str = ""
    method: str = ""
    weights: float | str | None = None
    adapters: float | None = None
    gradients: float | None = None
    master_weights: float | None = None
    optimizer: str = ""
    optimizer_state: float | str | None = None
    activations: float | None = None
    autocast_copy: float | None = None


def recipe_row(estimate: Estimate, training: Any = None) -> RecipeRow:
    """The bytes per value the memory model used for ``estimate``'s workload.

    Args:
        estimate: the workload's estimate (name, task, recipe and its definition).
        training: the workload's :class:`planner.workload.spec.Training` (method, optimizer, adapter
            dtype, QLoRA options), or None: then a training estimate whose trainable parameters
            are all its parameters is read as a full fine-tune with the recipe's bytes, and any
            other (adapters of an unknown method) gets no bytes, only its definition.
    """
    base = dict(recipe=estimate.recipe, definition=estimate.recipe_description, workload=estimate.workload_name)
    if estimate.task != "train":
        return RecipeRow(method="inference", **base)
    r = RECIPES.get(estimate.recipe)
    if training is None:
        if r is None or estimate.trainable_parameters != estimate.parameters:
            return RecipeRow(**base)
        return RecipeRow(method="full", weights=r.weight_bytes, gradients=r.grad_bytes, master_weights=r.master_bytes,
                         optimizer_state=r.state_bytes, activations=r.compute_bytes,
                         autocast_copy=r.autocast_copy_bytes, **base)
    if r is None:  # pragma: no cover - scenarios are validated against RECIPES
        return RecipeRow(method=training.method, optimizer=training.optimizer, **base)
    method = training.method
    activations = r.compute_bytes
    if method == "full":
        weights: float | str = r.weight_bytes
        adapters, grad_b, master_b, state_b = None, r.grad_bytes, r.master_bytes, r.state_bytes
    else:
        # planner.memory.states.model_state_components: adapters, their gradients and torch
        # optimizer states in the adapter dtype, no master copy.
        ab = 4 if training.adapter_dtype == "fp32" else 2
        adapters, grad_b, master_b, state_b = ab, ab, 0, ab
        if training.quantized_base:
            # planner.memory.quant.weight_bytes('nf4' / 'int8'): the quantized linears plus their constants;
            # the rest (embeddings, head, norms) 16-bit, or fp32 after prepare_model_for_kbit_training.
            other = 4 if training.prepare_kbit_training else 2
            if method == "qlora":
                weights = f"0.5 (NF4) + {nf4_constant_bits(training.double_quant) / 8:.3f} (constants)"
            else:
                weights = "1 (int8) + 4 B per output row (scales)"
            weights += f"; {other} for embeddings, head, norms"
            if training.prepare_kbit_training and not estimate.recipe.startswith("amp"):
                activations = 4  # planner.memory.estimate: fp32 residual stream, fp32 activations
        else:
            weights = r.weight_bytes
    opt = OPTIMIZERS.get(training.optimizer)
    state: float | str | None = state_b
    if opt is not None and opt.fixed_state_bytes:
        state = (f"{opt.fixed_state_bytes:.3f} B/param (8-bit states + fp32 absmax); {opt.states * 4} for "
                 f"nn.Embedding weights and tensors under {opt.min_8bit_size:,} values")
    elif opt is not None and opt.factored:
        state = f"{opt.state_value_bytes or state_b} B per factored value (rows + columns of each matrix)"
    elif opt is not None and opt.state_value_bytes:
        state = opt.state_value_bytes  # fp32 states whatever the recipe (bitsandbytes' 32-bit Lion)
    elif opt is not None and not opt.states and not opt.factored:
        state = 0  # no state (SGD without momentum)
    method = training.method_label
    return RecipeRow(method=method, weights=weights, adapters=adapters, gradients=grad_b, master_weights=master_b,
                     optimizer=training.optimizer, optimizer_state=state, activations=activations,
                     autocast_copy=r.autocast_copy_bytes, **base)


def price_status(item: LineItem, stale_ids: Collection[str] = (), stale_months: int = STALE_PRICE_MONTHS) -> str:
    """What the Quote sheet says about one line's price: flags first, in capitals.

    'ESTIMATE' when the price kind is 'estimate'; 'STALE' when the line's catalog id is one the
    plan calls stale (dated more than ``stale_months`` before the catalog's newest entry).
    Unflagged lines say what kind of price they carry; none of them is a vendor's offer.
    """
    flags = []
    if item.price_kind == "estimate":
        flags.append("ESTIMATE: not a list or vendor price; get a vendor quote")
    if item.catalog_id and item.catalog_id in stale_ids:
        flags.append(f"STALE: dated {item.as_of}, more than {stale_months} months before the catalog's newest "
                     "entry; get a current vendor quote")
    if flags:
        return "; ".join(flags)
    if item.price_kind == "quote":
        return "vendor quote: check that it is still valid"
    if item.price_kind == "msrp":
        return "list price (MSRP): get a vendor quote"
    if item.price_kind == "street":
        return "street price: get a vendor quote"
    return "catalog price: get a vendor quote"


def is_flagged(status: str) -> bool:
    """Whether a :func:`price_status` text flags the price (ESTIMATE or STALE)."""
    return status.startswith(("ESTIMATE", "STALE"))


def catalog_sha256(files: Iterable[str | Path]) -> str:
    """:func:`planner.catalog.loader.content_sha256` of ``files`` (for plans that do not carry it)."""
    from planner.catalog.loader import content_sha256

    return content_sha256(files)


@dataclass(frozen=True)
class WorkbookData:
    """Everything the workbook shows, independent of the solver's classes.

    Attributes:
        title: the document title (also the workbook's Title property).
        scenario_name: the scenario's name (user text).
        created: when the plan was made; the date is printed, the time goes to the properties.
        catalog_version: e.g. 'schema 1' or a catalog release name.
        catalog_files: the catalog files read (shipped first, then the overlay's).
        summary: one row per workload.
        line_items: the quote's lines.
        quote: quote number, date, validity and the editable rates.
        estimates: one memory estimate per workload (same order as ``summary``).
        alternatives: ranked runners-up, one row per candidate (None or empty when none).
            Columns ending in ``_bytes`` are shown in GiB, ``_usd`` as money.
        infeasible: infeasible candidates with the binding constraint (None or empty when none).
        recipe_definitions: (name, description) of each recipe the plan uses; the recipe table
            lists one that no row of ``recipe_rows`` (or estimate) names, without bytes (a
            recipe's bytes hold only for a full fine-tune, see :class:`RecipeRow`).
        sources: the catalog entries the plan uses, each with its source and date.
        scenario_text: the scenario file as given (user text, written line by line).
        scenario_file: the scenario's path as the user named it.
        warnings: plan-wide warnings (per-workload ones are in ``summary``).
        assumptions: plan-wide statements the result rests on, one sentence each.
        planner_version: the planner's version string.
        catalog_sha256: :func:`catalog_sha256` of ``catalog_files`` ('' when not known); with
            ``catalog_version`` it makes :attr:`catalog_label`.
        stale_price_ids: catalog ids whose prices the plan calls stale (dated more than
            ``stale_price_months`` before the catalog's newest entry); flagged on their lines.
        stale_price_months: the plan's stale threshold, months.
        gpu_cuda_total_bytes: per GPU catalog id, the memory one card offers to processes
            (CUDA's total: nvidia-smi's less the driver's reservation), bytes; shown on its line.
        recipe_rows: per workload the bytes per value the memory model used (:func:`recipe_row`);
            when empty they are derived from ``estimates`` (full fine-tunes get the recipe's bytes).
        references: the documents behind the ``REF:<id>`` citations in the line items' and
            ``sources``' texts, read from the catalog's ``SOURCES.md``
            (:func:`planner.catalog.sources.sources_for_catalog`); None when none was read: the Sources
            sheet then lists the cited ids and says that their documents are not available.
    """

    title: str
    scenario_name: str
    created: datetime
    catalog_version: str
    catalog_files: tuple[str, ...]
    summary: tuple[SummaryRow, ...]
    line_items: tuple[LineItem, ...]
    quote: QuoteSettings
    estimates: tuple[Estimate, ...] = ()
    alternatives: Any = None  # pandas.DataFrame or None
    infeasible: Any = None  # pandas.DataFrame or None
    recipe_definitions: tuple[tuple[str, str], ...] = ()
    sources: tuple[SourceRef, ...] = ()
    scenario_text: str = ""
    scenario_file: str = ""
    warnings: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    planner_version: str = ""
    catalog_sha256: str = ""
    stale_price_ids: tuple[str, ...] = ()
    stale_price_months: int = STALE_PRICE_MONTHS
    gpu_cuda_total_bytes: Mapping[str, int] = field(default_factory=dict)
    recipe_rows: tuple[RecipeRow, ...] = ()
    references: SourceIndex | None = None

    def totals(self) -> QuoteTotals:
        """The quote's totals as the workbook computes them, USD."""
        return quote_totals(self.line_items, self.quote)

    @property
    def catalog_label(self) -> str:
        """The catalog as the sheets name it: 'schema 1, content sha256 0123456789ab' (the digest's
        first 12 hex digits; the Assumptions sheet gives all of it)."""
        parts = [p for p in (self.catalog_version,
                             f"content sha256 {self.catalog_sha256[:12]}" if self.catalog_sha256 else "") if p]
        return ", ".join(parts)

    def price_statuses(self) -> tuple[str, ...]:
        """:func:`price_status` of each line item, in order."""
        return tuple(price_status(i, self.stale_price_ids, self.stale_price_months) for i in self.line_items)


# ----- safe cells ---------------------------------------------------------------------------------

def clean_text(value: object) -> str:
    """``value`` as text a workbook can hold: XML-illegal control characters removed, cut to Excel's
    32,767 characters per cell."""
    text = _ILLEGAL.sub("", str(value))
    if len(text) > _MAX_CELL_CHARS:
        text = text[: _MAX_CELL_CHARS - 1] + "\u2026"
    return text


def put_text(ws: Worksheet, row: int, col: int, value: object):
    """Write ``value`` as a text cell, never a formula, whatever its first character.

    openpyxl reads a str starting with '=' as a formula; forcing the cell's data type to 's'
    stores it as a shared string. Text starting with one of :data:`FORMULA_PREFIXES` also gets
    Excel's quote prefix, so editing the cell in Excel keeps it text.
    """
    text = clean_text(value)
    cell = ws.cell(row=row, column=col)
    cell.value = text
    cell.data_type = "s"
    if text.startswith(FORMULA_PREFIXES):
        cell.quotePrefix = True
    return cell


def put_value(ws: Worksheet, row: int, col: int, value: object, number_format: str | None = None):
    """Write a number, bool, date or text (text through :func:`put_text`); NaN and None stay empty."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return ws.cell(row=row, column=col)
    if isinstance(value, str):
        return put_text(ws, row, col, value)
    if isinstance(value, float) and not math.isfinite(value):
        return ws.cell(row=row, column=col)
    if isinstance(value, (bool, int, float, date, datetime)):
        cell = ws.cell(row=row, column=col, value=value)
    elif hasattr(value, "item") and not isinstance(value, (list, tuple)):  # numpy scalar
        return put_value(ws, row, col, value.item(), number_format)
    elif isinstance(value, (list, tuple, set, frozenset)):
        return put_text(ws, row, col, "; ".join(str(v) for v in value))
    else:
        return put_text(ws, row, col, value)
    if number_format:
        cell.number_format = number_format
    return cell


def put_formula(ws: Worksheet, row: int, col: int, formula: str, number_format: str | None = None):
    """Write a formula the planner built (never user text)."""
    if not formula.startswith("="):
        raise ValueError(f"not a formula: {formula!r}")
    cell = ws.cell(row=row, column=col, value=formula)
    if number_format:
        cell.number_format = number_format
    return cell


# ----- writing ------------------------------------------------------------------------------------

def write_workbook(data: WorkbookData, path: Path,
                   extra_sheets: Sequence[Callable[[Any], object]] = ()) -> Path:
    """Write the report to ``path`` (``.xlsx``), atomically; return ``path``.

    The workbook is serialized in memory and handed to :func:`planner.core.atomic.write_bytes`, which
    writes a temporary file in ``path``'s directory, flushes it and renames it over ``path``:
    readers see the old report whole or the new one whole, never a part.

    Args:
        data: what the workbook shows.
        path: the ``.xlsx`` file to create or replace; its directory must exist.
        extra_sheets: callables given the :class:`openpyxl.Workbook` after the six standard
            sheets are built (e.g. ``lambda wb: add_cloud_sheet(wb, comparison)``); the sheets
            they add get the same print setup. The quote's key cells are reachable by the
            workbook-level names :data:`NAME_GRAND_TOTAL` etc.

    Raises:
        OutputError: the directory does not exist or cannot be written, or ``path`` is a directory.
    """
    from planner.core.atomic import write_bytes

    wb = build_workbook(data, extra_sheets)
    buffer = io.BytesIO()
    wb.save(buffer)
    return write_bytes(Path(path), buffer.getvalue())


def build_workbook(data: WorkbookData, extra_sheets: Sequence[Callable[[Any], object]] = ()):
    """The :class:`openpyxl.Workbook` for ``data``, not yet saved (see :func:`write_workbook`)."""
    from openpyxl import Workbook
    from openpyxl.workbook.properties import CalcProperties

    wb = Workbook()
    wb.remove(wb.active)
    sheets = {name: wb.create_sheet(name) for name in SHEETS}
    cited = cited_sources(data)
    quote_cells = _quote_sheet(sheets["Quote"], data, cited)
    _summary_sheet(sheets["Summary"], data, quote_cells)
    _memory_sheet(sheets["Memory"], data)
    _alternatives_sheet(sheets["Alternatives"], data)
    _assumptions_sheet(sheets["Assumptions"], data, cited)
    _sources_sheet(sheets["Sources"], data, cited)
    _define_names(wb, quote_cells)
    for add in extra_sheets:
        add(wb)
    for ws in wb.worksheets:
        _print_setup(ws)
    wb.active = 0
    wb.calculation = CalcProperties(fullCalcOnLoad=True)
    props = wb.properties
    props.title = clean_text(data.title)
    props.subject = clean_text(f"Hardware plan for scenario {data.scenario_name}")
    props.creator = "planner" + (f" {data.planner_version}" if data.planner_version else "")
    props.lastModifiedBy = props.creator
    created = data.created.replace(tzinfo=None) if data.created.tzinfo else data.created
    props.created = created
    props.modified = created
    props.keywords = "hardware plan; quote; GPU memory"
    props.description = clean_text(f"Catalog {data.catalog_label}")
    return wb


# ----- sheet helpers --------------------------------------------------------------------------

def _styles():
    from openpyxl.styles import Alignment, Font, PatternFill

    return {
        "title": Font(bold=True, size=14),
        "bold": Font(bold=True),
        "section": Font(bold=True, size=12),
        "header_fill": PatternFill("solid", fgColor=_HEADER_FILL),
        "input_fill": PatternFill("solid", fgColor=_INPUT_FILL),
        "wrap": Alignment(wrap_text=True, vertical="top"),
        "top": Alignment(vertical="top"),
        "mono": Font(name="Courier New"),
    }


def _header(ws: Worksheet, row: int, headers: Sequence[str], col: int = 1) -> None:
    st = _styles()
    for i, h in enumerate(headers):
        cell = put_text(ws, row, col + i, h)
        cell.font = st["bold"]
        cell.fill = st["header_fill"]
        cell.alignment = st["wrap"]


def _title(ws: Worksheet, row: int, text: str) -> None:
    put_text(ws, row, 1, text).font = _styles()["title"]


def _section(ws: Worksheet, row: int, text: str) -> None:
    put_text(ws, row, 1, text).font = _styles()["section"]


def _label(ws: Worksheet, row: int, col: int, text: str) -> None:
    put_text(ws, row, col, text).font = _styles()["bold"]


def _mark_input(cell) -> None:
    cell.fill = _styles()["input_fill"]


def _widths(ws: Worksheet, fixed: dict[str, float] | None = None, wrap_cols: Iterable[str] = (),
            wrap_from: int = 1, cap: int = _MAX_WIDTH, wrap_to: int | None = None) -> None:
    """Column widths from the longest value in each column (formulas count as 14), capped at 60;
    ``fixed`` overrides; text in ``wrap_cols`` from row ``wrap_from`` on wraps, and rows grow to fit."""
    from openpyxl.utils import get_column_letter

    wrap = set(wrap_cols)
    best: dict[int, int] = {}
    for row in ws.iter_rows():
        for cell in row:
            if cell.value is None or (cell.font.sz or 11) > 11:  # titles spill right
                continue
            if cell.data_type == "f":
                n = 14
            elif isinstance(cell.value, float):
                n = 14
            elif isinstance(cell.value, (date, datetime)):
                n = 11
            else:
                n = max((len(line) for line in str(cell.value).split("\n")), default=0) + 2
            best[cell.column] = max(best.get(cell.column, 0), n)
    st = _styles()
    for col, n in best.items():
        letter = get_column_letter(col)
        ws.column_dimensions[letter].width = min(max(n, 8), cap)
        if letter in wrap:
            for cell in ws[letter]:
                if (cell.value is not None and wrap_from <= cell.row <= (wrap_to or cell.row)
                        and (cell.font.sz or 11) <= 11):
                    cell.alignment = st["wrap"]
    for letter, width in (fixed or {}).items():
        ws.column_dimensions[letter].width = width
    _fit_heights(ws)


def _fit_heights(ws: Worksheet, line_pt: float = 15.0) -> None:
    """Row heights for wrapped cells: lines needed at the column's width, 15 pt a line.

    Spreadsheet programs do not grow a row for wrapped text written by a library, so the height
    is set from an estimate: words wrapped at about the column width in characters (5 % more for
    plain text, 10 % fewer for bold). Cells of a grown row are aligned to the top.
    """
    from openpyxl.styles import Alignment

    need: dict[int, int] = {}
    for row in ws.iter_rows():
        for cell in row:
            if not isinstance(cell.value, str) or cell.data_type == "f" or not cell.alignment.wrap_text:
                continue
            width = ws.column_dimensions[cell.column_letter].width or 8.43
            per_line = max(1, int(width * (0.9 if cell.font.b else 1.05)) - 1)
            lines = sum(max(1, len(textwrap.wrap(part, per_line, break_on_hyphens=False)))
                        for part in str(cell.value).split("\n"))
            need[cell.row] = max(need.get(cell.row, 1), lines)
    for r, lines in need.items():
        if lines > 1:
            ws.row_dimensions[r].height = line_pt * lines
            for cell in ws[r]:
                if cell.value is not None and not cell.alignment.wrap_text:
                    cell.alignment = Alignment(horizontal=cell.alignment.horizontal, vertical="top")


def _chart_extent(ws: Worksheet, chart) -> tuple[int, int]:
    """(last row, last column) a chart anchored at a cell ('F12') covers, estimated from its size in
    cm: rows of the sheet's default 15 pt (0.53 cm), columns from their widths (7 px a character
    + 5 px, 96 px an inch)."""
    from openpyxl.utils import column_index_from_string, get_column_letter

    anchor = chart.anchor if isinstance(chart.anchor, str) else "A1"
    col_letters, row0 = _split(anchor)
    row_cm = 15 / 72 * 2.54
    last_row = row0 + math.ceil((chart.height or 7.5) / row_cm)
    col = column_index_from_string(col_letters)
    covered = 0.0
    while covered < (chart.width or 15):
        width = ws.column_dimensions[get_column_letter(col)].width or 8.43
        covered += (width * 7 + 5) / 96 * 2.54
        col += 1
    return last_row, col - 1


def print_area(ws: Worksheet) -> str:
    """The range that holds every value of ``ws`` and its charts, e.g. 'A1:L24'."""
    from openpyxl.utils import get_column_letter

    last_row, last_col = max(ws.max_row, 1), max(ws.max_column, 1)
    for chart in getattr(ws, "_charts", ()):
        r, c = _chart_extent(ws, chart)
        last_row, last_col = max(last_row, r), max(last_col, c)
    return f"A1:{get_column_letter(last_col)}{last_row}"


def _print_setup(ws: Worksheet) -> None:
    """Landscape, fit to one page wide (any number of pages tall), header rows repeated, and a
    print area over the sheet's content and charts (:func:`print_area`)."""
    ws.print_area = print_area(ws)
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_options.gridLines = False
    ws.page_margins.left = ws.page_margins.right = 0.5
    ws.oddFooter.center.text = "&A - page &P of &N"
    if ws.freeze_panes and not ws.print_title_rows:
        first_data_row = int(re.sub(r"[A-Z]+", "", ws.freeze_panes))
        if first_data_row > 1:
            ws.print_title_rows = f"1:{first_data_row - 1}"


def _define_names(wb, cells: dict[str, str]) -> None:
    from openpyxl.workbook.defined_name import DefinedName

    for name, key in ((NAME_SUBTOTAL, "subtotal"), (NAME_DISCOUNT_RATE, "discount_rate"),
                      (NAME_TAX_RATE, "tax_rate"), (NAME_SHIPPING, "shipping"),
                      (NAME_GRAND_TOTAL, "grand_total")):
        col, row = _split(cells[key])
        wb.defined_names[name] = DefinedName(name, attr_text=f"Quote!${col}${row}")


def _split(coord: str) -> tuple[str, int]:
    m = re.fullmatch(r"([A-Z]+)([0-9]+)", coord)
    if not m:  # pragma: no cover - internal
        raise ValueError(coord)
    return m.group(1), int(m.group(2))


def _gib(n_bytes: int | float | None) -> float | None:
    return None if n_bytes is None else n_bytes / GiB


# ----- Quote ------------------------------------------------------------------------------------

#: Quote table columns.
QUOTE_HEADERS = ("#", "Description", "Category", "Unit price (USD)", "Quantity", "Line total (USD)",
                 "Price kind", "Price status", "Price source", "Price as of (date, or YYYY-MM text)", "Catalog id",
                 "Memory per card: CUDA total (GiB)")
QUOTE_HEADER_ROW = 9
#: Blank input rows under the items, inside the subtotal's range: an item typed there counts.
QUOTE_BLANK_ROWS = 4
QUOTE_TITLE = "Budgetary estimate for scenario {name}"
QUOTE_BANNER = ("BUDGETARY ESTIMATE, NOT A VENDOR QUOTE: prices come from the planner's catalog "
                "(list, street and estimated prices, each with its date and source), not from an offer.")
QUOTE_BANNER_2 = ("Get dated quotes from vendors before ordering, first for the lines whose Price status "
                  "says ESTIMATE or STALE.")
QUOTE_SOURCES_NOTE = ("Price source: REF:<id> cites a document given in full, with its links, on the Sources sheet "
                      "(the lines under the source name it and its row).")
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def as_of_value(text: str) -> date | str:
    """A price's or source's as-of text as a cell value: a full date 'YYYY-MM-DD' becomes a
    :class:`datetime.date` (an Excel date), anything else (a month 'YYYY-MM') stays text."""
    if isinstance(text, str) and _ISO_DATE.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return text
    return text


def _put_as_of(ws: Worksheet, row: int, col: int, text: str):
    value = as_of_value(text)
    if isinstance(value, date):
        return put_value(ws, row, col, value, DATE_FORMAT)
    return put_text(ws, row, col, value)


def _quote_sheet(ws: Worksheet, data: WorkbookData, cited: Sequence[CitedSource] = ()) -> dict[str, str]:
    """Write the Quote sheet; return the coordinates of its key cells. ``cited``: the Sources
    sheet's ids (:func:`cited_sources`), for the price sources' pointers."""
    from openpyxl.styles import Font, PatternFill

    q = data.quote
    st = _styles()
    statuses = data.price_statuses()
    flag_fill = PatternFill("solid", fgColor=_FLAG_FILL)
    _title(ws, 1, QUOTE_TITLE.format(name=clean_text(data.scenario_name)))
    # Rows 2-7: the header block (B5 = B3 + B4 stays where other tools expect it).
    _label(ws, 2, 1, "Reference")
    _mark_input(put_text(ws, 2, 2, q.quote_number))
    _label(ws, 3, 1, "Estimate date")
    date_cell = put_value(ws, 3, 2, q.quote_date, DATE_FORMAT)
    _mark_input(date_cell)
    date_cell.alignment = st["top"]
    _label(ws, 4, 1, "Re-check after (days)")
    _mark_input(put_value(ws, 4, 2, q.validity_days, INT_FORMAT))
    _label(ws, 5, 1, "Re-check prices by")
    put_formula(ws, 5, 2, "=B3+B4", DATE_FORMAT)
    _label(ws, 6, 1, "Customer")
    _mark_input(put_text(ws, 6, 2, q.customer))
    _label(ws, 7, 1, "Catalog")
    put_text(ws, 7, 2, data.catalog_label)
    banner = Font(bold=True, color=_BANNER_COLOR)
    put_text(ws, 2, 4, QUOTE_BANNER).font = banner
    put_text(ws, 3, 4, QUOTE_BANNER_2).font = banner
    n_est = sum(1 for i in data.line_items if i.price_kind == "estimate")
    n_stale = sum(1 for s in statuses if "STALE" in s)
    put_text(ws, 4, 4, f"Flagged lines: {n_est} with an estimated price, {n_stale} with a price dated more than "
                       f"{data.stale_price_months} months before the catalog's newest entry (see Price status).")
    put_text(ws, 5, 4, "Yellow cells are inputs: change a unit price, a quantity or a rate and every total "
                       "follows; type added items into the yellow blank rows above the subtotal. Amounts in USD.")
    put_text(ws, 6, 4, "Totals, in order, each rounded to cents: subtotal; discount on the subtotal; tax on the "
                       "subtotal after discount; shipping (not taxed); grand total.")
    put_text(ws, 7, 4, "Price as of: a date, or YYYY-MM text where the source gives only the month. "
                       "Price status: as the planner found the catalog price.")
    if cited:
        put_text(ws, 8, 4, QUOTE_SOURCES_NOTE)
    by_id = {c.id: c for c in cited}

    _header(ws, QUOTE_HEADER_ROW, QUOTE_HEADERS)
    first = QUOTE_HEADER_ROW + 1
    row = first
    for n, (item, status) in enumerate(zip(data.line_items, statuses), start=1):
        put_value(ws, row, 1, n)
        put_text(ws, row, 2, item.description)
        put_text(ws, row, 3, item.category)
        _mark_input(put_value(ws, row, 4, float(item.unit_price_usd), USD_FORMAT))
        _mark_input(put_value(ws, row, 5, int(item.quantity), INT_FORMAT))
        put_formula(ws, row, 6, f"=ROUND(D{row}*E{row},2)", USD_FORMAT)
        put_text(ws, row, 7, item.price_kind)
        c = put_text(ws, row, 8, status)
        if is_flagged(status):
            c.fill = flag_fill
            c.font = st["bold"]
        _put_source(ws, row, 9, item.source, by_id, data.references)
        _put_as_of(ws, row, 10, item.as_of)
        put_text(ws, row, 11, item.catalog_id)
        cuda = data.gpu_cuda_total_bytes.get(item.catalog_id) if item.catalog_id else None
        if item.category == "gpu" and cuda:
            put_value(ws, row, 12, cuda / GiB, GIB_FORMAT)
        row += 1
    last_item = row - 1
    for _ in range(QUOTE_BLANK_ROWS):
        for col in (2, 3, 7, 9, 10):
            _mark_input(ws.cell(row=row, column=col))
        for col, fmt in ((4, USD_FORMAT), (5, INT_FORMAT)):
            cell = ws.cell(row=row, column=col)
            cell.number_format = fmt
            _mark_input(cell)
        put_formula(ws, row, 6, f"=ROUND(D{row}*E{row},2)", USD_FORMAT)
        row += 1
    last = row - 1

    row += 1
    cells: dict[str, str] = {}
    bold = st["bold"]

    def total_row(key: str, label: str, formula: str) -> int:
        nonlocal row
        _label(ws, row, 2, label)
        c = put_formula(ws, row, 6, formula, USD_FORMAT)
        c.font = bold
        cells[key] = f"F{row}"
        row += 1
        return row - 1

    sub = total_row("subtotal", "Subtotal (USD)", f"=ROUND(SUM(F{first}:F{last}),2)")

    def rate_row(key: str, text: str, pct: float, amount: str) -> int:
        """An input rate in column D and its amount in F (``amount`` formats the rate cell in)."""
        nonlocal row
        r = row
        _label(ws, r, 2, text)
        _mark_input(put_value(ws, r, 4, pct / 100, PCT_FORMAT))
        cells[f"{key}_rate"] = f"D{r}"
        put_formula(ws, r, 6, amount.format(rate=f"D{r}"), USD_FORMAT)
        cells[key] = f"F{r}"
        row += 1
        return r

    r = rate_row("discount", "Discount (% of subtotal)", q.discount_pct, f"=-ROUND(F{sub}*{{rate}},2)")
    after = total_row("after_discount", "Subtotal after discount (USD)", f"=ROUND(F{sub}+F{r},2)")
    rate_row("tax", "Tax (% of subtotal after discount)", q.tax_pct, f"=ROUND(F{after}*{{rate}},2)")
    r = row
    _label(ws, r, 2, "Shipping (USD, not taxed)")
    _mark_input(put_value(ws, r, 6, float(q.shipping_usd), USD_FORMAT))
    cells["shipping"] = f"F{r}"
    row += 1
    total_row("grand_total", "Grand total (USD)", f"=ROUND(F{after}+{cells['tax']}+{cells['shipping']},2)")

    ws.freeze_panes = f"A{QUOTE_HEADER_ROW + 1}"
    # fixed D: the notes in D2:D7 spill right and must not widen the price column
    _widths(ws, fixed={"A": 22, "B": 36, "D": 16, "F": 18, "H": 30, "I": 44, "J": 14, "L": 14},
            wrap_cols=("B", "H", "I"), wrap_from=QUOTE_HEADER_ROW, wrap_to=last_item)
    return cells


# ----- Summary ------------------------------------------------------------------------------------

SUMMARY_HEADERS = ("Workload", "Task", "Model", "Configuration", "Strategy", "GPUs used", "Per-GPU need (GiB)",
                   "CUDA total per GPU (GiB)", "Capacity after reserve (GiB)", "Headroom per GPU (GiB)",
                   "Headroom (% of capacity)", "Host RAM need per machine (GiB)", "RAM installed per machine (GiB)",
                   "Recipe", "Warnings")
SUMMARY_HEADER_ROW = 8


def _summary_sheet(ws: Worksheet, data: WorkbookData, quote_cells: dict[str, str]) -> None:
    _title(ws, 1, clean_text(data.title))
    _label(ws, 2, 1, "Scenario")
    put_text(ws, 2, 2, data.scenario_name)
    _label(ws, 3, 1, "Date")
    put_value(ws, 3, 2, data.created.date(), DATE_FORMAT).alignment = _styles()["top"]
    _label(ws, 4, 1, "Catalog version")
    put_text(ws, 4, 2, data.catalog_label)
    _label(ws, 5, 1, "Total price (USD)")
    c = put_formula(ws, 5, 2, f"=Quote!{quote_cells['grand_total']}", USD_FORMAT)
    c.font = _styles()["bold"]
    put_text(ws, 5, 3, "Grand total of the Quote sheet (follows its edits): a budgetary estimate from catalog "
                       "prices, not a vendor quote.")
    if data.planner_version:
        _label(ws, 6, 1, "Planner version")
        put_text(ws, 6, 2, data.planner_version)

    _header(ws, SUMMARY_HEADER_ROW, SUMMARY_HEADERS)
    row = SUMMARY_HEADER_ROW + 1
    for s in data.summary:
        put_text(ws, row, 1, s.workload)
        put_text(ws, row, 2, s.task)
        put_text(ws, row, 3, s.model)
        put_text(ws, row, 4, s.configuration)
        put_text(ws, row, 5, s.strategy)
        put_value(ws, row, 6, s.gpus, INT_FORMAT)
        put_value(ws, row, 7, _gib(s.gpu_need_bytes), GIB_FORMAT)
        put_value(ws, row, 8, _gib(s.gpu_cuda_total_bytes), GIB_FORMAT)
        put_value(ws, row, 9, _gib(s.capacity_bytes), GIB_FORMAT)
        put_formula(ws, row, 10, f"=I{row}-G{row}", GIB_FORMAT)
        put_formula(ws, row, 11, f'=IF(I{row}>0,J{row}/I{row},"")', PCT_FORMAT)
        put_value(ws, row, 12, _gib(s.host_need_bytes), GIB_FORMAT)
        put_value(ws, row, 13, _gib(s.host_ram_bytes), GIB_FORMAT)
        put_text(ws, row, 14, s.recipe)
        put_text(ws, row, 15, "\n".join(s.warnings))
        row += 1
    if data.warnings:
        row += 1
        _label(ws, row, 1, "Plan warnings")
        row += 1
        for w in data.warnings:
            put_text(ws, row, 1, w)
            row += 1
    ws.freeze_panes = f"B{SUMMARY_HEADER_ROW + 1}"
    widths = {"A": 20, "B": 13, "C": 18, "D": 34, "E": 40, "N": 14, "O": 44}
    widths.update({letter: 12 for letter in "FGHIJKLM"})
    _widths(ws, fixed=widths, wrap_cols=("C", "D", "E", "N", "O"), wrap_from=SUMMARY_HEADER_ROW)


# ----- Memory -----------------------------------------------------------------------------------

MEMORY_HEADERS = ("Workload", "Component", "When", "Kind", "Per-GPU (GiB)", "Host per machine (GiB)",
                  "Formula", "Source")
CHART_TITLE = "Per-GPU memory at the peak, by component (GiB)"
CHART_COMPONENT_HEADER = "Component (GiB per GPU at the peak)"


def peak_components(est: Estimate) -> list[Component]:
    """The GPU components live at the per-GPU peak: the always-live ones and the peak phase's."""
    return est.gpu_components_at_peak()


def _memory_sheet(ws: Worksheet, data: WorkbookData) -> None:
    from openpyxl.chart import BarChart, Reference
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.pagebreak import Break

    _header(ws, 1, MEMORY_HEADERS)
    row = 2
    for est in data.estimates:
        for c in est.components:
            put_text(ws, row, 1, est.workload_name)
            put_text(ws, row, 2, c.name)
            put_text(ws, row, 3, c.phase or "always")
            put_text(ws, row, 4, c.kind)
            if c.where == GPU:
                put_value(ws, row, 5, c.bytes / GiB, GIB_FORMAT)
            elif c.where == HOST:
                put_value(ws, row, 6, c.bytes / GiB, GIB_FORMAT)
            put_text(ws, row, 7, c.formula)
            put_text(ws, row, 8, c.source)
            row += 1
    ws.freeze_panes = "C2"
    if data.estimates:
        ws.auto_filter.ref = f"A1:H{row - 1}"

    # Chart data: one row per component live at a peak, one column per workload.
    row += 1
    _label(ws, row, 1, f"{CHART_TITLE}: chart data. A workload's peak is its always-live components plus "
                       "the components of its peak phase; components of other phases are left out.")
    row += 1
    names: list[str] = []
    per_workload: list[dict[str, float]] = []
    for est in data.estimates:
        sums: dict[str, float] = {}
        for c in peak_components(est):
            if c.name not in names:
                names.append(c.name)
            sums[c.name] = sums.get(c.name, 0.0) + c.bytes / GiB
        per_workload.append(sums)
    hdr = row
    _header(ws, hdr, ["Chart data", CHART_COMPONENT_HEADER] + [est.workload_name for est in data.estimates])
    put_text(ws, hdr + 1, 2, "Peak phase")
    for j, est in enumerate(data.estimates):
        put_text(ws, hdr + 1, 3 + j, est.peak_phase or "always")
    first_comp = hdr + 2
    for i, n in enumerate(names):
        put_text(ws, first_comp + i, 2, n)
        for j, sums in enumerate(per_workload):
            put_value(ws, first_comp + i, 3 + j, sums.get(n, 0.0), GIB_FORMAT)
    last_comp = first_comp + len(names) - 1
    total_row = last_comp + 1
    _label(ws, total_row, 2, "Peak per GPU (GiB)")
    _label(ws, total_row + 1, 2, "Host RAM peak per machine (GiB)")
    for j, est in enumerate(data.estimates):
        letter = get_column_letter(3 + j)
        if names:
            c = put_formula(ws, total_row, 3 + j, f"=SUM({letter}{first_comp}:{letter}{last_comp})", GIB_FORMAT)
        else:
            c = put_value(ws, total_row, 3 + j, 0.0, GIB_FORMAT)
        c.font = _styles()["bold"]
        put_value(ws, total_row + 1, 3 + j, est.host_total_bytes / GiB, GIB_FORMAT)
    end = total_row + 1

    _widths(ws, fixed={"A": 20, "B": 30, "C": 18, "D": 14, "E": 14, "F": 14, "G": 60, "H": 50},
            wrap_cols=("B", "C", "D", "E", "F", "G", "H"))

    if data.estimates and names:
        chart = BarChart()
        chart.type = "bar"
        chart.grouping = "stacked"
        chart.overlap = 100
        chart.title = CHART_TITLE
        chart.y_axis.title = "GiB per GPU"
        chart.x_axis.title = "Workload"
        chart.x_axis.delete = False
        chart.y_axis.delete = False
        chart.legend.position = "b"
        values = Reference(ws, min_col=2, max_col=2 + len(data.estimates), min_row=first_comp, max_row=last_comp)
        chart.add_data(values, titles_from_data=True, from_rows=True)
        chart.set_categories(Reference(ws, min_col=3, max_col=2 + len(data.estimates), min_row=hdr, max_row=hdr))
        chart.height = max(7.5, 5.0 + 1.2 * len(data.estimates) + 0.4 * len(names))
        chart.width = 24
        ws.add_chart(chart, f"A{end + 2}")
        ws.row_breaks.append(Break(id=end))  # the chart prints on a page of its own


# ----- Alternatives -----------------------------------------------------------------------------

def _column_header(name: str) -> tuple[str, str | None, float]:
    """(header, number format, divisor) for a DataFrame column named with its unit suffix."""
    base = str(name)
    if base.endswith("_bytes"):
        return base[: -len("_bytes")].replace("_", " ") + " (GiB)", GIB_FORMAT, GiB
    if base.endswith("_usd"):
        return base[: -len("_usd")].replace("_", " ") + " (USD)", USD_FORMAT, 1
    if base.endswith("_pct"):
        return base[: -len("_pct")].replace("_", " ") + " (%)", "0.00", 1
    return base.replace("_", " "), None, 1


def _write_frame(ws: Worksheet, row: int, df, empty_text: str) -> int:
    """Write a DataFrame with unit-bearing headers from ``row``; return the next free row."""
    if df is None or len(df) == 0:
        put_text(ws, row, 1, empty_text)
        return row + 1
    specs = [_column_header(c) for c in df.columns]
    _header(ws, row, [s[0] for s in specs])
    for values in df.itertuples(index=False, name=None):
        row += 1
        for j, (value, (_, fmt, div)) in enumerate(zip(values, specs), start=1):
            if div != 1 and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = value / div
            elif div != 1 and hasattr(value, "item"):
                value = value.item() / div
            put_value(ws, row, j, value, fmt)
    return row + 1


#: Header of the solver's rank on the Alternatives sheet (the shown rows are numbered in '#').
SOLVER_RANK_HEADER = "solver rank (1 = chosen)"
ALTERNATIVES_NOTE = (
    "#: the row's place on this sheet. Solver rank: the candidate's place among all candidates, cheapest "
    "feasible first (1 = the chosen machine). The sheet shows the best candidate of each other combination of "
    "GPU, platform, cards per node and nodes; the ranks it skips are costlier variants of a machine already "
    "shown or of the chosen one (another RAM configuration: DIMM size or count).")


def _numbered_alternatives(df: Any) -> Any:
    """The alternatives with a '#' column (1, 2, ...) first and 'rank' renamed to
    :data:`SOLVER_RANK_HEADER`; unchanged when there is no 'rank' column."""
    if df is None or len(df) == 0 or "rank" not in df.columns:
        return df
    out = df.rename(columns={"rank": SOLVER_RANK_HEADER})
    out.insert(0, "#", list(range(1, len(out) + 1)))
    return out


def _alternatives_sheet(ws: Worksheet, data: WorkbookData) -> None:
    _title(ws, 1, "Ranked alternatives (feasible, not chosen)")
    alts = _numbered_alternatives(data.alternatives)
    numbered = alts is not data.alternatives
    header = 3 if numbered else 2
    if numbered:
        put_text(ws, 2, 1, ALTERNATIVES_NOTE)
    end = _write_frame(ws, header, alts, "No feasible alternative: the chosen configuration is the only one.")
    ws.freeze_panes = f"A{header + 1}"
    row = end + 1
    _title(ws, row, "Infeasible candidates, with the binding constraint")
    _write_frame(ws, row + 1, data.infeasible, "No infeasible candidate.")
    from openpyxl.utils import get_column_letter

    # the note in A2 spills right and must not widen column A ('#', the binding constraint)
    _widths(ws, cap=40, wrap_cols=[get_column_letter(c) for c in range(1, ws.max_column + 1)], wrap_from=header,
            fixed={"A": 13} if numbered else None)


# ----- Assumptions ------------------------------------------------------------------------------

RECIPE_HEADERS = ("Recipe", "Definition", "Workload", "Method", "Weights (B/param)", "LoRA adapters (B/param)",
                  "Gradients (B/trainable param)", "Master weights (B/trainable param)", "Optimizer",
                  "Optimizer state (B/value)", "Activations (B/value)", "Autocast copy (B/param)")
RECIPE_NOTE = ("Bytes per value as the memory model used them, per workload (the Memory sheet has the formulas). "
               "A recipe's own bytes describe a full fine-tune; LoRA and QLoRA keep the base frozen in its format "
               "(NF4 for QLoRA) and the adapters, their gradients and optimizer states in the adapter dtype "
               "(fp32 by default), without a master copy.")
SOURCE_HEADERS = ("Entry id", "Source", "As of (date, or YYYY-MM text)", "Catalog file")
NOTE_HEADERS = ("Workload", "Text", "Kind")


def _recipe_rows(data: WorkbookData) -> list[RecipeRow]:
    """The Assumptions sheet's recipe table: ``data.recipe_rows``, else one row per estimate, then
    any recipe definition no row names (without bytes: its method is not known)."""
    rows = list(data.recipe_rows) or [recipe_row(est) for est in data.estimates]
    named = {r.recipe for r in rows}
    for name, description in data.recipe_definitions:
        if name not in named:
            rows.append(RecipeRow(name, description))
            named.add(name)
    return rows


def _assumptions_sheet(ws: Worksheet, data: WorkbookData, cited: Sequence[CitedSource] = ()) -> None:
    _title(ws, 1, "Assumptions and inputs")
    row = 3
    if data.assumptions:
        _section(ws, row, "Assumptions")
        row += 1
        for a in data.assumptions:
            put_text(ws, row, 1, a)
            row += 1
        row += 1

    _section(ws, row, "Recipes")
    row += 1
    put_text(ws, row, 1, RECIPE_NOTE)
    row += 1
    _header(ws, row, RECIPE_HEADERS)
    for r in _recipe_rows(data):
        row += 1
        for j, v in enumerate((r.recipe, r.definition, r.workload, r.method), start=1):
            put_text(ws, row, j, v)
        for j, v in enumerate((r.weights, r.adapters, r.gradients, r.master_weights), start=5):
            put_value(ws, row, j, v)
        put_text(ws, row, 9, r.optimizer)
        for j, v in enumerate((r.optimizer_state, r.activations, r.autocast_copy), start=10):
            put_value(ws, row, j, v)
    row += 2

    _section(ws, row, "Catalog entries used")
    row += 1
    put_text(ws, row, 1, f"Catalog version: {data.catalog_label}; files: {', '.join(data.catalog_files)}")
    row += 1
    if data.catalog_sha256:
        put_text(ws, row, 1, f"Catalog content sha256: {data.catalog_sha256} (the sha256 of what sha256sum prints "
                             "for the files above in that order, each named without its directory)")
        row += 1
    if cited:
        put_text(ws, row, 1, "Source: REF:<id> cites a document given in full on the Sources sheet (the lines under "
                             "the source name it and its row).")
        row += 1
    _header(ws, row, SOURCE_HEADERS)
    by_id = {c.id: c for c in cited}
    for ref in data.sources:
        row += 1
        put_text(ws, row, 1, ref.id)
        _put_source(ws, row, 2, ref.source, by_id, data.references)
        _put_as_of(ws, row, 3, ref.as_of)
        put_text(ws, row, 4, ref.file)
    row += 2

    notes = [(est.workload_name, n, "note") for est in data.estimates for n in est.notes]
    notes += [(est.workload_name, w, "warning") for est in data.estimates for w in est.warnings]
    notes += [(est.workload_name, f"{k.replace('_', ' ')}: {v:,}", "figure")
              for est in data.estimates for k, v in est.extra.items()]
    _section(ws, row, "Workload notes")
    row += 1
    _header(ws, row, NOTE_HEADERS)
    for values in notes:
        row += 1
        for j, v in enumerate(values, start=1):
            put_text(ws, row, j, v)
    row += 2

    _section(ws, row, "Scenario as given" + (f" ({clean_text(data.scenario_file)})" if data.scenario_file else ""))
    row += 1
    mono = _styles()["mono"]
    for line in data.scenario_text.splitlines():
        cell = put_text(ws, row, 1, line)
        cell.font = mono
        row += 1
    ws.freeze_panes = "A2"
    widths = {"A": 28, "B": 70}
    widths.update({letter: 13 for letter in "CDEFGHIJKL"})
    widths["E"] = 24  # QLoRA's weights are text (NF4 linears, 16-bit rest)
    _widths(ws, fixed=widths, wrap_cols=("B", "E"))


# ----- Sources ------------------------------------------------------------------------------------

SOURCES_HEADERS = ("REF id", "Document (as the catalog's SOURCES.md gives it)", "Where (as given)", "Link",
                   "Cited by", "Defined in")
SOURCES_HEADER_ROW = 4
SOURCES_TITLE = "Sources: the documents behind the REF: ids this workbook cites"
SOURCES_ABOUT = ("Catalog prices and figures cite documents as REF:<id> (Quote: Price source; Assumptions: "
                 "Catalog entries used). Every id cited there is listed below with the document as the catalog's "
                 "SOURCES.md describes it, where to find it and a link where one is given, so each price can be "
                 "traced from this workbook alone. Other source texts are given in full where they appear.")
SOURCES_NONE = "No REF: id is cited: every price source is given in full on the Quote and Assumptions sheets."
SOURCES_MORE_LINKS = "(another link of the document above)"
_LINK_COLOR = "0563C1"
_MAX_LINK_CHARS = 2000  # Excel refuses hyperlinks longer than 2,079 characters


@dataclass(frozen=True)
class CitedSource:
    """One ``REF:`` id the workbook cites, as the Sources sheet lists it.

    Attributes:
        id: the id, without 'REF:'.
        doc: its definition, or None when no ``SOURCES.md`` read defines it.
        quote_lines: the Quote's line numbers ('#') whose price source cites it.
        entries: the ids of the catalog entries (Assumptions) whose source cites it.
        row: its (first) row on the Sources sheet; a document with several links takes a row per link.
    """

    id: str
    doc: SourceDoc | None
    quote_lines: tuple[int, ...] = ()
    entries: tuple[str, ...] = ()
    row: int = 0

    @property
    def cited_by(self) -> str:
        """'Quote lines 1, 3; catalog entries a, b' (the Sources sheet's 'Cited by')."""
        parts = []
        if self.quote_lines:
            parts.append(("Quote line " if len(self.quote_lines) == 1 else "Quote lines ")
                         + ", ".join(str(n) for n in self.quote_lines))
        if self.entries:
            parts.append(("catalog entry " if len(self.entries) == 1 else "catalog entries ")
                         + ", ".join(self.entries))
        return "; ".join(parts)


def cited_sources(data: WorkbookData) -> tuple[CitedSource, ...]:
    """The ``REF:`` ids cited by ``data``'s line items, then by its catalog entries' sources, in
    order of first mention, each with its document (``data.references``) and Sources sheet row."""
    order: list[str] = []
    quote: dict[str, list[int]] = {}
    entries: dict[str, list[str]] = {}
    for n, item in enumerate(data.line_items, start=1):
        for ref in ref_ids(item.source):
            order += [ref] if ref not in order else []
            quote.setdefault(ref, []).append(n)
    for s in data.sources:
        for ref in ref_ids(s.source):
            order += [ref] if ref not in order else []
            ids = entries.setdefault(ref, [])
            ids += [s.id] if s.id not in ids else []
    out = []
    row = SOURCES_HEADER_ROW + 1
    for ref in order:
        doc = data.references.get(ref) if data.references is not None else None
        out.append(CitedSource(ref, doc, tuple(quote.get(ref, ())), tuple(entries.get(ref, ())), row))
        row += max(1, len(doc.urls)) if doc is not None else 1
    return tuple(out)


def source_text(text: str, cited: Mapping[str, CitedSource], references: SourceIndex | None = None) -> str:
    """A source text as the Quote and Assumptions sheets show it: ``text`` unchanged, then one line
    per ``REF:`` id it cites: 'REF:<id> = <document's short title> (Sources sheet, row <n>)', or that
    the id is not defined or no ``SOURCES.md`` was read. Text citing no id is returned unchanged.

    Args:
        text: the entry's or line's source, as the catalog gives it.
        cited: :func:`cited_sources` by id.
        references: the index the documents came from (its files are named for an undefined id).
    """
    refs = [r for r in ref_ids(text) if r in cited]
    if not refs:
        return text
    lines = [text]
    read = references.files if references is not None else ()
    for ref in refs:
        c = cited[ref]
        where = f"Sources sheet, row {c.row}"
        if c.doc is not None:
            lines.append(f"REF:{ref} = {c.doc.title} ({where})")
        elif read:
            lines.append(f"REF:{ref}: not defined in {', '.join(read)} ({where})")
        else:
            lines.append(f"REF:{ref}: document not available, no SOURCES.md was read ({where})")
    return "\n".join(lines)


def _put_source(ws: Worksheet, row: int, col: int, text: str, cited: Mapping[str, CitedSource],
                references: SourceIndex | None):
    """Write a source text with its ids' pointers (:func:`source_text`). The pointer is text, not
    a hyperlink: LibreOffice shows a hyperlinked cell on one line, cutting the wrapped text."""
    return put_text(ws, row, col, source_text(text, cited, references))


def _put_link(ws: Worksheet, row: int, col: int, url: str):
    """A URL as text with a hyperlink to it (text only when Excel could not hold the link)."""
    from openpyxl.styles import Font

    cell = put_text(ws, row, col, url)
    target = clean_text(url)
    if len(target) <= _MAX_LINK_CHARS and target.startswith(("http://", "https://")):
        cell.hyperlink = target
        cell.font = Font(color=_LINK_COLOR, underline="single")
    return cell


def _sources_read(index: SourceIndex | None, cited: Sequence[CitedSource]) -> tuple[str, bool]:
    """What the Sources sheet says about the SOURCES.md files read, and whether it is a problem
    (a file missing or unreadable, an id defined twice or not at all)."""
    if index is None:
        return ("No SOURCES.md was read for this workbook: the documents of the ids below are not available.",
                bool(cited))
    parts = []
    for f in index.files:
        n = sum(1 for d in index.docs.values() if d.file == f)
        parts.append(f"{f} ({n} id{'' if n == 1 else 's'} defined)")
    for m in index.missing:
        if not any(p.startswith(f"{m}:") for p in index.problems):
            parts.append(f"no {m} (an overlay without one cites the shipped ids only)")
    text = "; ".join(parts) or "no SOURCES.md could be read"
    undefined = [f"REF:{c.id}" for c in cited if c.doc is None]
    if index.problems:
        text += ". Problems: " + "; ".join(index.problems)
    if undefined:
        text += ". Not defined in any SOURCES.md read: " + ", ".join(undefined)
    return text + ("" if text.endswith(".") else "."), bool(index.problems or undefined)


def _sources_sheet(ws: Worksheet, data: WorkbookData, cited: Sequence[CitedSource]) -> None:
    from openpyxl.styles import PatternFill

    st = _styles()
    flag_fill = PatternFill("solid", fgColor=_FLAG_FILL)
    _title(ws, 1, SOURCES_TITLE)
    _label(ws, 2, 1, "About")
    put_text(ws, 2, 2, SOURCES_ABOUT)
    _label(ws, 3, 1, "SOURCES.md read")
    text, bad = _sources_read(data.references, cited)
    cell = put_text(ws, 3, 2, text)
    if bad:
        cell.fill = flag_fill
        cell.font = st["bold"]
    _header(ws, SOURCES_HEADER_ROW, SOURCES_HEADERS)
    row = SOURCES_HEADER_ROW + 1
    if not cited:
        put_text(ws, row, 1, SOURCES_NONE)
    read = data.references.files if data.references is not None else ()
    for c in cited:
        put_text(ws, row, 1, f"REF:{c.id}")
        put_text(ws, row, 5, c.cited_by)
        if c.doc is None:
            missing = (f"NOT DEFINED in {', '.join(read)}" if read else
                       "NOT AVAILABLE: no SOURCES.md could be read (see row 3)")
            cell = put_text(ws, row, 2, f"{missing}; ask the catalog's maintainer for this document.")
            cell.fill = flag_fill
            cell.font = st["bold"]
            row += 1
            continue
        put_text(ws, row, 2, c.doc.text)
        put_text(ws, row, 3, c.doc.where)
        put_text(ws, row, 6, f"{c.doc.file}, line {c.doc.line}" if c.doc.line else c.doc.file)
        for i, url in enumerate(c.doc.urls):
            if i:
                row += 1
                put_text(ws, row, 1, f"REF:{c.id}")
                put_text(ws, row, 2, SOURCES_MORE_LINKS)
            _put_link(ws, row, 4, url)
        row += 1
    ws.freeze_panes = f"A{SOURCES_HEADER_ROW + 1}"
    # Links stay on one line (LibreOffice does not wrap a hyperlinked cell): as wide as the longest,
    # within limits; a longer one is cut on screen and paper, its address is in full in B or C.
    urls = [u for c in cited if c.doc is not None for u in c.doc.urls]
    link_width = min(70, max([len(u) + 2 for u in urls] + [len(SOURCES_HEADERS[3]) + 4]))
    _widths(ws, fixed={"A": 22, "B": 70, "C": 40, "D": link_width, "E": 30, "F": 26},
            wrap_cols=("B", "C", "E", "F"), wrap_from=2)


# ----- from a plan --------------------------------------------------------------------------------

def _short_path(name: str) -> str:
    """A catalog path as people read it: relative to the current directory when inside it,
    else 'catalog/<file>' for the shipped catalog, else as given."""
    p = Path(name)
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        pass
    shipped = Path(__file__).resolve().parents[2] / "catalog"
    try:
        return "catalog/" + p.resolve().relative_to(shipped).as_posix()
    except (ValueError, OSError):
        return str(name)


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
    return text


def _infeasible_frame(summary: Any) -> Any:
    """The solver's per-rule closest-miss table with shortfalls in GiB where they are bytes."""
    import pandas as pd

    if summary is None or len(summary) == 0:
        return summary
    rows = []
    for r in summary.to_dict(orient="records"):
        unit = r.get("shortfall_unit", "")
        value = r.get("shortfall")
        if unit == "bytes" and value is not None:
            value, unit = round(float(value) / GiB, 3), "GiB"
        rows.append({"binding_constraint": r.get("binding", ""), "candidates_excluded": r.get("candidates"),
                     "closest_miss": r.get("closest", ""),
                     "shortfall": value if unit else None, "shortfall_unit": unit, "why_not": r.get("why_not", "")})
    return pd.DataFrame(rows)


def _alternatives_frame(alts: Any) -> Any:
    """The solver's alternatives with 'why_lost' before the long 'strategy' text."""
    if alts is None or "strategy" not in getattr(alts, "columns", ()):
        return alts
    cols = [c for c in alts.columns if c != "strategy"] + ["strategy"]
    return alts[cols]


def _assumption_lines(a: dict[str, Any]) -> tuple[str, ...]:
    out = []
    if a.get("objective"):
        out.append(f"Objective: {a['objective']}")
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


def workbook_data_from_plan(plan: Any, *, scenario_text: str = "", quote: QuoteSettings | None = None,
                            created: datetime | None = None, title: str | None = None,
                            references: SourceIndex | None = None) -> WorkbookData:
    """The workbook's data from a :class:`planner.plan.solver.Plan`, read by its documented attributes.

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
    stale (:func:`planner.plan.solver.stale_items`).

    Args:
        plan: the solver's plan.
        scenario_text: the scenario file's text, shown as given (the caller reads the file).
        quote: quote number, date, validity and rates; default: number 'Q-<yyyymmdd>-<sha256[:8]>',
            dated ``created``, valid 30 days, no discount, tax or shipping.
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
        number = f"Q-{created:%Y%m%d}" + (f"-{sha[:8]}" if sha else "")
        quote = QuoteSettings(number, created.date())
    names = [e.workload_name for e in plan.estimates]
    per_workload: dict[str, list[str]] = {n: [] for n in names}
    general: list[str] = []
    for w in plan.warnings:
        head, sep, rest = str(w).partition(": ")
        if sep and head in per_workload:
            per_workload[head].append(rest)
        else:
            general.append(str(w))
    machine = _machine_text(choice)
    strategies = list(getattr(plan, "strategies", ())) + [""] * len(plan.estimates)
    cuda_total = int(choice.get("gpu_cuda_total_bytes") or 0)
    from planner.plan.candidates import takes_headroom

    capacity = choice.get("gpu_capacity_bytes")
    workloads = list(getattr(plan, "workloads", ())) + [None] * len(plan.estimates)

    def capacity_of(i: int) -> int | None:
        # an engine: vllm workload is held against the whole CUDA total (gpu_memory_utilization is its margin)
        w = workloads[i]
        if w is not None and not takes_headroom(w) and cuda_total:
            return cuda_total
        return int(capacity) if capacity is not None else None

    summary = tuple(
        SummaryRow(workload=e.workload_name, task=e.task, model=e.model_id, configuration=machine,
                   gpus=e.gpus, gpu_need_bytes=e.per_gpu_total_bytes, gpu_cuda_total_bytes=cuda_total,
                   host_need_bytes=e.host_total_bytes,
                   host_ram_bytes=int(choice["ram_bytes"]) if choice.get("ram_bytes") else None,
                   recipe=e.recipe, warnings=tuple(per_workload[e.workload_name]),
                   gpu_capacity_bytes=capacity_of(i), strategy=strategies[i])
        for i, e in enumerate(plan.estimates))
    recipes: list[tuple[str, str]] = []
    for r in a.get("recipes") or ():
        pair = (str(r.get("recipe", "")), str(r.get("definition", "")))
        if pair[0] and pair not in recipes:
            recipes.append(pair)
    sources = tuple(SourceRef(_short_path(s["file"]), s["id"], s["source"], s["as_of"])
                    for s in a.get("sources") or ())
    version = a.get("catalog_schema_version")
    workloads = list(getattr(plan, "workloads", ()) or ())
    if len(workloads) == len(plan.estimates):
        recipe_rows = tuple(recipe_row(e, getattr(w, "train", None)) for e, w in zip(plan.estimates, workloads))
    else:
        recipe_rows = tuple(recipe_row(e) for e in plan.estimates)
    stale = a.get("stale_prices") or {}  # the solver's own list (planner.plan.solver.stale_items)
    stale_ids, stale_months = tuple(stale.get("catalog_ids") or ()), int(stale.get("months") or STALE_PRICE_MONTHS)
    gpu_memory = {str(choice["gpu_id"]): cuda_total} if choice.get("gpu_id") and cuda_total else {}
    return WorkbookData(
        title=title or f"Hardware plan: {plan.scenario}",
        scenario_name=plan.scenario,
        created=created,
        catalog_version=f"schema {version}" if version is not None else "",
        catalog_files=tuple(_short_path(f) for f in a.get("catalog_files") or ()),
        summary=summary,
        line_items=tuple(plan.line_items()),
        quote=quote,
        estimates=tuple(plan.estimates),
        alternatives=_alternatives_frame(plan.alternatives),
        infeasible=_infeasible_frame(plan.infeasible),
        recipe_definitions=tuple(recipes),
        sources=sources,
        scenario_text=scenario_text,
        scenario_file=str(a.get("scenario_file") or ""),
        warnings=tuple(general),
        assumptions=_assumption_lines(a),
        planner_version=str(a.get("planner_version") or ""),
        catalog_sha256=str(a.get("catalog_sha256") or "") or catalog_sha256(a.get("catalog_files") or ()),
        stale_price_ids=stale_ids,
        stale_price_months=stale_months,
        gpu_cuda_total_bytes=gpu_memory,
        recipe_rows=recipe_rows,
        references=references if references is not None else plan_references(a.get("catalog_files") or ()),
    )


def plan_references(catalog_files: Iterable[str | Path]) -> SourceIndex:
    """The documents the ``REF:`` ids of a plan's catalog stand for: the ``SOURCES.md`` beside the
    catalog's files, an overlay's first (:func:`planner.catalog.sources.sources_for_catalog`); the shipped
    catalog's when the plan names no files (a catalog built in code). Never raises: a missing or
    unreadable file is in the index's ``problems``, which the Sources sheet prints."""
    from planner.catalog.loader import default_catalog_dir
    from planner.catalog.sources import sources_for_catalog

    return sources_for_catalog(catalog_files, show=_short_path, default_dir=default_catalog_dir())
