"""What the workbook shows, as plain data independent of the solver's classes.

:class:`WorkbookData` holds a plan's figures for the sheets (:mod:`planner.report.workbook` writes
them; :func:`planner.report.from_plan.workbook_data_from_plan` fills them from a plan): one
:class:`SummaryRow` per workload, the quote's lines and :class:`QuoteSettings`, one
:class:`RecipeRow` per workload (bytes per value as the memory model used them). The quote's
arithmetic lives here too (:func:`quote_totals`, in the order of the Quote sheet's formulas, see
:mod:`planner.report.sheets.quote`), and the price status a line is flagged with (:func:`price_status`).
Sizes are integer bytes; money USD.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from planner.catalog.loader import SourceRef
from planner.catalog.sources import SourceIndex
from planner.memory.breakdown import Estimate
from planner.memory.quant import nf4_constant_bits
from planner.solve.quote import INCLUDED, STALE_PRICE_MONTHS, LineItem
from planner.workload.recipes import OPTIMIZERS, RECIPES

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
        stack: training: the framework and the lever settings the estimate assumed, in words
            (:attr:`planner.memory.breakdown.Estimate.stack_text`); inference: 'engine release: ' and
            :attr:`planner.memory.breakdown.Estimate.engine_release` ('' for an engine without releases).
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
    stack: str = ""

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
    """The quote's totals in USD, computed in the workbook's order (see :func:`quote_totals`)."""

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
            if training.quantized_base == "nf4":
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


#: What the Quote sheet says about a line priced by a ``quote-range`` (a part sold only on quotes).
QUOTE_RANGE_STATUS = ("sold on quotes only: ask for a quote (the price is one figure within the range published "
                      "figures give)")


def price_status(item: LineItem, stale_ids: Collection[str] = (), stale_months: int = STALE_PRICE_MONTHS,
                 on: date | None = None) -> str:
    """What the Quote sheet says about one line's price: flags first, in capitals.

    'EXPIRED' when the line's vendor quote (``quote_valid_until``) lapsed before ``on`` (the
    estimate's date; None: not checked); 'ESTIMATE' when the price kind is 'estimate'; 'STALE' when
    the line's catalog id is one the plan calls stale (dated more than ``stale_months`` before the
    catalog's newest entry). Unflagged lines say what kind of price they carry; only a 'quote' line
    within its validity is a vendor's offer.
    """
    from planner.solve.quote import expired

    if item.price_kind == INCLUDED:
        return "part of the platform line above, whose price includes it"
    flags = []
    if on is not None and expired(item, on):
        flags.append(f"EXPIRED: the seller's quote held until {item.quote_valid_until}, before this estimate's "
                     f"date {on.isoformat()}; get a new quote")
    if item.price_kind == "estimate":
        flags.append("ESTIMATE: not a list or vendor price; get a vendor quote")
    if item.catalog_id and item.catalog_id in stale_ids:
        flags.append(f"STALE: dated {item.as_of}, more than {stale_months} months before the catalog's newest "
                     "entry; get a current vendor quote")
    if flags:
        return "; ".join(flags)
    if item.price_kind == "quote-range":
        return QUOTE_RANGE_STATUS
    if item.price_kind == "quote":
        held = getattr(item, "quote_valid_until", None)
        return f"vendor quote, valid until {held}" if held else "vendor quote: check that it is still valid"
    if item.price_kind == "msrp":
        return "list price (MSRP): get a vendor quote"
    if item.price_kind == "street":
        return "street price: get a vendor quote"
    if item.price_kind == "used" or getattr(item, "condition", "new") == "used":
        return "USED unit: check its condition and warranty; get the seller's price"
    return "catalog price: get a vendor quote"


def is_flagged(status: str) -> bool:
    """Whether a :func:`price_status` text flags the price (EXPIRED, ESTIMATE or STALE)."""
    return status.startswith(("EXPIRED", "ESTIMATE", "STALE"))


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
        hours_per_job, usd_per_job: one run of every workload on the chosen machine by the time
            model, hours, and what it costs owning the machine, USD (planner.cost.objective;
            None when a workload gives no size); ``per_job_note`` says how they were computed.
        serving_tokens: generated tokens per job when every workload is served (the Summary then
            gives seconds per request and USD per million tokens), else None.
        serving_load: the load of the workloads with an ``slo:`` ('50 concurrent users'), at which
            those figures are priced (planner.cost.slo_rent.at_load: cost per hour / requests served
            per hour at the load); '' when none has one.
        targets: per workload with a deadline or an slo:, the target and what the machine achieves
            (planner.solve.solver.target_lines).
        references: the documents behind the ``REF:<id>`` citations in the line items' and
            ``sources``' texts, read from the catalog's ``SOURCES.md``
            (:func:`planner.catalog.sources.sources_for_catalog`); None when none was read: the Sources
            sheet then lists the cited ids and says that their documents are not available.
        price_sensitivity: the plan's price sensitivity in sentences (which prices decide the choice,
            their break-even prices, whether the choice holds across the price ranges:
            planner.solve.sensitivity); the Summary sheet lists them. Empty when not known.
        ram_rule: where the RAM rule of thumb, not the memory model, sets the RAM or excludes a
            cheaper machine: the planned RAM and the need-sized alternative with their prices, in
            sentences (planner.solve.ramrule.RamRuleNote.lines); empty where the rule costs nothing.
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
    alternatives: Any = None  # planner.core.table.Table or None
    infeasible: Any = None  # planner.core.table.Table or None
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
    hours_per_job: float | None = None
    usd_per_job: float | None = None
    per_job_note: str = ""
    price_sensitivity: tuple[str, ...] = ()
    serving_tokens: float | None = None
    serving_load: str = ""
    targets: tuple[str, ...] = ()
    ram_rule: tuple[str, ...] = ()

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
        return tuple(price_status(i, self.stale_price_ids, self.stale_price_months, self.quote.quote_date)
                     for i in self.line_items)
