"""Scenario files: workloads to run on one purchase, the constraints on it, and the objective.

A scenario (``scenarios/<name>.yaml``) holds:

``name`` (optional, default the file's stem), ``description``, ``notes``;
``workloads``: a list of workload mappings with the same keys as ``planner estimate --workload``;
``constraints``: which hardware the solver may choose (below);
``extras``: quote lines the scenario adds to every plan (``description``, ``unit_price_usd``,
``quantity``, ``source``, ``as_of`` not after today, ``price_kind``: msrp, street, quote or
estimate, the default: a price nobody labelled is not a vendor's quote), e.g. storage, support or
installation;
``objective``: what the plan minimises among the machines that run every workload:
``capex`` (the purchase price, USD; the default), ``cost_per_job`` (what one run of every workload
costs on the machine owned over the ownership period: the hours the time model
(planner.speed.timing) gives it x the local cost per busy hour, capex less resale plus support
spread over the busy hours, plus energy), ``time_to_result`` (the hours one run of every workload
takes), ``tco`` (the total cost of owning the machine over the ownership period: capex less
resale, support, energy for the busy hours). The three beyond capex are computed by
planner.cost.objective from ``costs:``; ``cost_per_job`` and ``time_to_result`` need each workload's
size (training ``dataset_tokens``, inference ``tokens_per_request``);
``costs``: inputs of the rent-or-buy comparison and of the objectives beyond capex, kept as written
and validated by :func:`planner.cost.tco.read_costs`.

Defaults that follow the question. A training workload that leaves ``zero``, ``offload_optimizer`` or
``checkpointing`` out (and names no ``framework``, whose recipes set them) has them read as ``auto``
(:data:`UNPINNED_AUTO_KEYS`): the solver chooses, the written defaults (ZeRO-0, no offload, no
checkpointing) first, and the strategy names the keys it chose. An inference workload that names no
``engine`` is sized for ``vllm`` when its ``concurrency`` is above 1, else ``hf``
(planner.workload.inference.default_engine); the strategy says so.

Workload keys for ``planner compare`` (time and cost; see planner.cost.compare):

======================  ====================================================================
dataset_tokens, epochs  training: tokens per epoch and epochs of one run
tokens_per_request      inference: tokens generated per request
requests_per_hour       inference: the rate a service must keep up with
hours_per_month         busy hours a month the workload takes (0.0833-744: at least one busy hour a year)
tokens_per_month        tokens the workload processes a month (training: trained, inference:
                        generated), a number or ``200M`` / ``1.5B`` (k, M, B, T); the busy hours
                        are derived from it (tokens / the machine's tokens per second), and a
                        volume the machine cannot process in a month is warned about. Not with
                        hours_per_month. ``planner compare --tokens-per-month [NAME=]COUNT``
                        sets it from the command line
======================  ====================================================================

Strategy choices. In a scenario workload the keys ``zero``, ``offload_optimizer``,
``checkpointing``, ``tp`` and ``gpus`` (training) and ``weights``, ``kv_dtype`` and ``tp``
(inference) may be a list of allowed values, or ``auto`` for every valid value. Each
combination becomes a fixed *variant*, validated by :func:`planner.workload.spec.workload_from_entry`
exactly as a workload file would be. Combinations that contradict each other (offload with
ZeRO-0, a ``gpus`` that is not a multiple of ``tp``) are simply not generated; a value the user
wrote that no valid combination uses is an error (with the reason of the first combination that
used it), as is a single fixed workload that is invalid. Lists are in order of preference: on a
given machine the solver reports the first variant, in that order, that fits.

``auto`` expands to (preference order):

======================  ====================================================================
zero                    0, 1, 2, 3
offload_optimizer       false, true
offload_params          false, true (ZeRO-3 / FSDP only: parameters in host RAM)
framework               transformers, deepspeed, fsdp, torchtune, litgpt, unsloth (the ones that
                        run the workload; each with its recipes' defaults)
seq_len                 no ``auto``: a list of the lengths you accept, longest first (a
                        shorter sequence is a last resort: it varies slowest)
offload_activations     false, true
checkpointing           none, full
optimizer_in_backward   false, true
loss_chunks             0, 8 (whole, then torchtune's 8 chunks)
fused_linear_loss       false, true
fsdp_version            1, 2 (with a framework that shards with FSDP)
tp                      training: the degrees that split the heads evenly (as
                        :func:`planner.workload.checks.check_tp` decides), ascending; inference: the
                        same, descending (a replica uses every card it is given); QLoRA
                        training: 1 only (Transformers/peft do not shard 4-bit layers). Engine
                        llama.cpp: the GPUs one replica splits its layers over (``--split-mode
                        layer``), 8 down to 1, unless ``gpus`` fixes it
weights                 bf16, fp16, fp8, int8, int4-awq, int4-gptq, nf4 (not fp32: it never fits
                        where bf16 does not); engine llama.cpp: the GGUF presets Q8_0, Q6_K, Q5_K_M,
                        Q4_K_M, IQ4_XS, Q3_K_M (:data:`LLAMACPP_AUTO_VALUES` says why these)
kv_dtype                bf16, fp16, fp8; engine llama.cpp: f16, q8_0, q4_0 (the quantized ones with
                        flash attention only)
gpu_layers              (engine llama.cpp; ``max`` means the same) n_layer + 1 down to 0: on each
                        card the most GPU layers that fit; the rest must fit the machine's RAM. A
                        list (``[81, 60, 40]``, ``all`` allowed) tries those counts in its order
gpus                    free: the candidate machine decides (same as leaving ``gpus`` out)
======================  ====================================================================

Card counts. For training, ``gpus`` (data parallel x tensor parallel) is free unless the
scenario fixes it: the workload may run on 1 up to all the cards of one machine, or, with
several nodes, on every card of every node. For inference ``tp`` is the number of cards of one
replica and is free (``auto``) unless the scenario fixes it; a replica runs inside one node.
Variants are searched with the most GPUs first (training) so that a machine's cards are used.
``gpus_per_node``, when given, fixes the GPUs per machine.

Variants are expanded in this key order, the first key varying slowest: training ``seq_len``,
``framework``, ``offload_optimizer``, ``offload_params``, ``offload_activations``, ``checkpointing``, ``optimizer_in_backward``,
``loss_chunks``, ``fused_linear_loss``, ``fsdp_version``, ``zero``, ``tp``; inference ``weights``,
``kv_dtype``, ``tp``. So no offload is preferred over offload, no checkpointing over checkpointing,
the step after backward over the step in it, a whole loss over a chunked one, and a lower ZeRO stage
over a higher one. The levers of a framework (``framework``) default to its recipes' settings; a
choice key given as a list or ``auto`` replaces that default. With ``gpu_layers: max`` (llama.cpp) the
variants that put every layer on the GPU come first, in that order, and then those that leave blocks
in host RAM, again in that order with the most layers first: on a card where Q4_K_M fits whole and
Q8_0 only in part, Q4_K_M with every layer is reported (host blocks cut decode speed by the ratio of
the two bandwidths).

Under the default objective (capex) the solver buys the cheapest machine on which any variant fits and reports
the first variant that fits there. So a list of weights or KV types lets it buy a cheaper machine
for a smaller quantization; the plan then warns, naming the first-listed weights and KV type and
the price of the cheapest machine that runs them. List only the types whose quality you accept.

Constraints (all optional):

=====================  ==================================================================
allowed_gpus           GPU ids the solver may buy (default: every GPU of the catalog)
excluded_gpus          GPU ids it may not buy
vendors                GPU vendors allowed (nvidia, amd, intel)
allowed_platforms      platform ids it may buy (default: every platform)
max_cards              most GPUs per node (default: the largest any platform takes)
max_nodes              most identical nodes (default 1; more adds NICs, cables and a switch)
budget_usd             most the purchase may cost, extras included, USD
min_decode_tokens_per_s  tokens per second each sequence of every inference workload must
                       get in decode on the machine: 1 / the speed model's decode step at the
                       workload's concurrency (planner.speed.inference.decode_step: weights and
                       KV reads, llama.cpp's host blocks at the platform's RAM bandwidth,
                       per-layer costs, TP all-reduces); for a workload with an ``slo:``,
                       1 / the TPOT its SLO is checked with (the step stretched by the other
                       users' prefills). A floor, not an objective:
                       it rules out e.g. a card that holds a third of a llama.cpp model
max_hours_per_job      every training workload without a ``deadline_hours`` of its own must
                       finish one run (dataset_tokens x epochs) within this many hours on the
                       machine by the time model (planner.solve.targets)
vram_headroom          fraction of each GPU's CUDA total kept free (default 0.05)
ram_vram_min           RAM per node at least this many times the node's installed VRAM (default
                       2, the 2-4x rule of thumb; 0 sizes RAM by the memory model's host peak
                       alone)
ram_vram_min_offload   the same with CPU offload (default 6, the 6-8x rule of thumb)
price                  which of a part's dated prices (catalog ``prices:``, planner.catalog.prices)
                       a plan pays: ``street`` (the default): a new unit at its best-founded current
                       price, a quote before a street price before an estimate before the list price
                       (the only price some parts have), the newest of the first kind present;
                       ``msrp``: the list price where there is one (else as street). ``list``,
                       the former name of the default, reads as ``street``.
used_ok                ``true``: a used unit's newest price is paid where it is below the new one
                       (a discontinued card's used price); the quote line says "used"
                       (default false: new units only)
network                for multi-node plans: ``kind`` (infiniband or roce; default either),
                       ``nics_per_node`` (``per-gpu``, the default, or a whole number), ``nic``
                       (a NIC id; default the cheapest that matches), ``min_rate`` (slowest NIC
                       port allowed, e.g. ``400 Gb/s``), ``switch`` (``auto``, the default: two
                       nodes are cabled back-to-back without a switch, more nodes get one;
                       ``always``: a switch for two nodes too, e.g. to add nodes later)
=====================  ==================================================================

Targets (:data:`SCENARIO_WORKLOAD_KEYS`, read here and removed before the workload reader sees the
workload): a training workload's ``deadline_hours`` (it needs ``dataset_tokens``) and an inference
workload's ``slo:`` block (:data:`SLO_KEYS`: ``ttft_s``, ``tpot_s`` or ``output_tokens_per_s``, the
load as ``concurrency`` or ``requests_per_s``, ``prompt_tokens``, ``output_tokens``). The SLO's load
becomes the workload's ``concurrency`` (a rate's: planner.solve.inflight), and an slo: workload that names no
engine is served by vLLM whatever its user count (a latency target is a service's: one user included)
and its ``output_tokens`` the ``tokens_per_request``; the solver then splits the users over
replicas (planner.solve.usages) and keeps the machines that meet the targets
(planner.solve.targets).

Model paths. A workload's ``model`` may be a path to a config.json or to a directory holding
one (as for ``planner estimate --model``). A relative path in a scenario file is read from the
scenario file's directory, not from the directory the planner runs in, so a scenario and the
model directories beside it can be moved together or run from anywhere: ``model:
models/llama31-8b`` in ``scenarios/mine.yaml`` reads ``scenarios/models/llama31-8b/config.json``.
A catalog id still comes first, and a value that names no path there is tried as a Hugging Face
hub id as before; when that fails too the message says where the path was looked for.
(A scenario names no other files.)

GPU and platform names are checked against the catalog, with a did-you-mean. Errors are
:class:`planner.core.errors.ScenarioError` naming the file, line, entry path, problem and a hint.
This module keeps no state and does no work at import time.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from planner.model.architecture import Architecture
from planner.catalog.devices import device_name_hint
from planner.catalog.gpus import GPU_VENDORS
from planner.catalog.loader import Catalog, purchasable_gpus, removal_hint
from planner.catalog.network import NETWORK_KINDS
from planner.catalog.prices import priced_catalog, whole_cents
from planner.core.errors import InputError, OutputError, ScenarioError, did_you_mean
from planner.core.names import (clip_text, clash_key, escape_unsafe, lookalike_key, lookalike_note, safe_stem,
                                 spelling_note, windows_reserved)
from planner.core.fields import Entry
from planner.core.list_hints import bracket_hint
from planner.workload.inputs import make_resolver
from planner.workload.relative import relative_model_resolver
from planner.workload.othernames import explainer
from planner.workload.options import COMMON_KEYS, HOST_KEYS, INFER_KEYS, MAX_GPUS, TRAIN_KEYS
from planner.workload.inference import HF_ONLY_KEYS
from planner.workload.spec import Workload, check_derived_name, workload_from_entry
from planner.core.yamlio import YamlProblem, read_mapping
from planner.solve.choices import CHOICE_KEYS, UNPINNED_AUTO_KEYS, _choice_values, _task_of, _with
from planner.solve.price_mode import price_mode
from planner.solve.extras import EXTRA_KEYS, Extra, _extra  # noqa: F401 (EXTRA_KEYS: re-exported)
from planner.solve.slo import MAX_DEADLINE_HOURS, SCENARIO_WORKLOAD_KEYS, SLO_KEYS, Slo, _targets

OBJECTIVES = ("capex", "cost_per_job", "time_to_result", "tco")
#: Objectives that time one run of every workload (each needs its job size).
TIMED_OBJECTIVES = ("cost_per_job", "time_to_result")
SCENARIO_KEYS = ("name", "description", "notes", "workloads", "constraints", "extras", "objective", "costs")
#: RAM per node at least this many times the node's installed VRAM unless the scenario says otherwise
#: (``ram_vram_min`` / ``ram_vram_min_offload``): a rule of thumb from DL workstation sizing guides,
#: an assumption (2-4x, 6-8x with CPU offload).
RAM_VRAM_MIN = 2.0
RAM_VRAM_MIN_OFFLOAD = 6.0

CONSTRAINT_KEYS = ("allowed_gpus", "excluded_gpus", "vendors", "allowed_platforms", "max_cards", "max_nodes",
                   "budget_usd", "vram_headroom", "ram_vram_min", "ram_vram_min_offload", "price", "used_ok",
                   "network", "min_decode_tokens_per_s", "max_hours_per_job")
NETWORK_KEYS = ("kind", "nics_per_node", "nic", "min_rate", "switch")
NETWORK_SWITCH = ("auto", "always")
#: Keys of a workload (``planner estimate --workload``) that are no scenario keys.
WORKLOAD_ONLY_KEYS = tuple(dict.fromkeys(k for k in COMMON_KEYS + TRAIN_KEYS + INFER_KEYS + HOST_KEYS
                                         if k not in SCENARIO_KEYS))

#: What a scenario file holds, for the messages about an empty file or a top level that is not a mapping.
SCENARIO_FILE_HINT = ("A scenario is a mapping with a 'workloads:' list (each workload with 'model:' and "
                      "'task:') and optional 'name:', 'constraints:' and 'extras:'; see scenarios/README.md.")

#: Most nodes a scenario may ask for (a larger cluster needs a fabric design this planner lacks).
MAX_NODES = 64

#: Largest ``constraints.budget_usd``, USD (a trillion): far above any machine the solver builds (64 nodes of
#: cards at most 10,000,000 USD each, planner.catalog.schema.MAX_PRICE_USD), and low enough that the budget in
#: whole cents and the price-sensitivity figures stay ordinary numbers (1e307 overflowed them, h28b N4).
MAX_BUDGET_USD = 1_000_000_000_000

#: Most workloads a scenario may list (h23b N2). One machine runs every workload in turn, and each costs the
#: solver a pass over the candidate machines: on 2 shared cores about 0.05 s an inference workload and 0.15 s a
#: training one with its strategy choices (and some 60 KB of CSV), so 50 plan in about 5 to 10 s, where 5,000 took
#: 3 minutes and 1 GB. A lab's mix is a handful; more are split into scenarios.
MAX_WORKLOADS = 50
#: Most strategy combinations a scenario may ask the solver to validate: the product of each workload's choice
#: list lengths (auto counted as its values), summed over the workloads (h23b N2). Every training key left to
#: ``auto`` on one workload is 36,864 (about 12 s to validate, 1,188 variants to plan, 17 s in all); each is
#: validated as a workload file, so this bounds the work the lists ask for (a 500-length seq_len list with the
#: defaults' 16 took 90 s and 700 MB).
MAX_COMBINATIONS = 100_000
#: Most extras lines a scenario may add to its quote (h23b N2): storage, support, installation are a few; each is a
#: quote line in every report (5,000 took 13 s and wrote 4 MB).
MAX_EXTRAS = 200


@dataclass(frozen=True)
class Variant:
    """One fixed combination of a workload's strategy choices, validated.

    Attributes:
        workload: the validated workload. For training with free ``gpus`` its ``train.gpus`` is a
            placeholder (the smallest valid count); the solver replaces it per machine.
        choices: the values of the choice keys, as (key, value) pairs in expansion order.
        data: the mapping it was validated from, to validate again with the final card count.
        solver_keys: the keys the scenario left out that the solver chose (:data:`UNPINNED_AUTO_KEYS`).
    """

    workload: Workload
    choices: tuple[tuple[str, Any], ...]
    data: Mapping[str, Any] = field(compare=False, repr=False)
    solver_keys: tuple[str, ...] = field(default=(), compare=False)

    @property
    def tp(self) -> int:
        return self.workload.tp

    def solver_note(self) -> str:
        """'' or, when the solver chose keys the scenario left out (:data:`UNPINNED_AUTO_KEYS`), what it
        chose as the scenario would write it, e.g. '; solver chose zero: 2, offload_optimizer: false,
        checkpointing: full (left out of the scenario; write them to pin)'."""
        if not self.solver_keys or self.workload.train is None:
            return ""
        t = self.workload.train
        values = {"zero": t.zero, "offload_optimizer": "true" if t.offload_optimizer else "false",
                  "checkpointing": t.checkpointing}
        chosen = ", ".join(f"{k}: {values[k]}" for k in self.solver_keys if k in values)
        them = "them" if len(self.solver_keys) > 1 else "it"
        return f"; solver chose {chosen} (left out of the scenario; write {them} to pin)"

    def label(self) -> str:
        """The strategy in words, e.g. 'full mixed-bf16 adamw, ZeRO-3, offload, checkpointing full, tp 1'."""
        w = self.workload
        if w.train is not None:
            t = w.train
            parts = [f"{t.method_label} {t.recipe} {t.optimizer}",
                     f"FSDP{t.fsdp} {'FULL_SHARD' if t.zero == 3 else 'SHARD_GRAD_OP'}" if t.fsdp else f"ZeRO-{t.zero}"]
            if t.framework != "transformers":
                parts.insert(0, t.framework)
            if t.offload_optimizer:
                parts.append("offload optimizer")
            if t.offload_params:
                parts.append("offload params")
            parts.append(f"checkpointing {t.checkpointing}")
            if t.offload_activations:
                parts.append("offload activations")
            if t.optimizer_in_backward:
                parts.append("optimizer in backward")
            if t.fused_linear_loss:
                parts.append("fused linear loss")
            elif t.loss_chunks > 1:
                parts.append(f"loss in {t.loss_chunks} chunks")
            if t.compile:
                parts.append("torch.compile")
            parts.append(f"tp {t.tp}")
            parts.append(f"micro-batch {t.micro_batch} x {t.seq_len} tokens")
            return ", ".join(parts)
        i = w.infer
        assert i is not None
        par = (f"layers split over {i.tp} GPUs" if i.tp > 1 else "1 GPU") if i.engine == "llama.cpp" else f"tp {i.tp}"
        return (f"weights {i.weights}, KV {i.kv_dtype}, {par}, {i.concurrency} x {i.context:,} tokens"
                + (f", {i.engine}" if i.engine != "hf" else "")
                + (" (engine: vllm is the default for an slo: or concurrency > 1; pin engine: hf to change)"
                   if i.engine_defaulted else "")
                + (f", {i.gpu_layers} GPU layers" if i.engine == "llama.cpp" and i.gpu_layers is not None else ""))



@dataclass(frozen=True)
class ScenarioWorkload:
    """A workload of a scenario with the variants the solver may choose from.

    Attributes:
        name: the workload's name.
        task: 'train' or 'infer'.
        variants: valid variants in order of preference (at least one).
        gpus: the allowed total GPU counts for training, in order of preference, or None when
            the machine decides (free). Always None for inference (``tp`` is the count).
        gpus_per_node: GPUs per machine when the workload fixes it, else None.
        where: '<file>:<line>: workloads[i]' for messages.
        deadline_hours: training: the most hours one run (``dataset_tokens`` x ``epochs``) may take
            on the machine (the workload's ``deadline_hours``, else ``constraints.max_hours_per_job``;
            None: no deadline).
        slo: inference: the service level the machine must meet (None: sized by memory alone).
    """

    name: str
    task: str
    variants: tuple[Variant, ...]
    gpus: tuple[int, ...] | None
    gpus_per_node: int | None
    where: str
    deadline_hours: float | None = None
    slo: Slo | None = None

    @property
    def architecture(self) -> Architecture:
        return self.variants[0].workload.architecture

    @property
    def model_id(self) -> str:
        return self.variants[0].workload.model_id


@dataclass(frozen=True)
class Network:
    """Scale-out network choices for multi-node plans.

    Attributes:
        kind: 'infiniband', 'roce', or None for either.
        nics_per_node: NICs per node, or None for one per GPU (the rail-optimised layout of
            NVIDIA's DGX/HGX reference designs, each GPU paired with its own NIC).
        nic: a catalog NIC id to use, or None for the cheapest that matches.
        min_rate_bytes_per_s: slowest NIC port allowed, bytes/s (``min_rate: 400 Gb/s``).
        switch: 'auto' (two nodes back-to-back, each NIC cabled to its peer, no switch; more
            nodes through one switch) or 'always' (a switch for two nodes too).
    """

    kind: str | None = None
    nics_per_node: int | None = None
    nic: str | None = None
    min_rate_bytes_per_s: float = 0.0
    switch: str = "auto"


@dataclass(frozen=True)
class Constraints:
    """What the solver may buy. See the module docstring for each key.

    Attributes:
        allowed_gpus, excluded_gpus, vendors, allowed_platforms: id filters (None: no filter).
        max_cards: most GPUs per node (None: the largest any platform takes).
        max_nodes: most identical nodes.
        budget_usd: most the purchase may cost, USD (None: no limit).
        vram_headroom: fraction of each GPU's CUDA total (nvidia-smi's less the driver's
            reservation) kept free, 0 <= x < 1.
        ram_vram_min, ram_vram_min_offload: RAM per node at least this many times the node's
            installed VRAM, without and with CPU offload (rules of thumb, 2 and 6 by default).
        price: which dated price a plan pays: 'street' (a new unit's best-founded current price) or 'msrp'.
        used_ok: a used unit's price may be paid where it is lower.
        network: multi-node network choices.
        min_decode_tokens_per_s: every inference workload must decode at least this many tokens
            per second per sequence on the machine (None: no speed floor).
        max_hours_per_job: every training workload without a ``deadline_hours`` of its own must
            finish one run on the machine within this many hours (None: no deadline).
    """

    allowed_gpus: tuple[str, ...] | None = None
    excluded_gpus: tuple[str, ...] = ()
    vendors: tuple[str, ...] | None = None
    allowed_platforms: tuple[str, ...] | None = None
    max_cards: int | None = None
    max_nodes: int = 1
    budget_usd: float | None = None
    vram_headroom: float = 0.05
    ram_vram_min: float = RAM_VRAM_MIN
    ram_vram_min_offload: float = RAM_VRAM_MIN_OFFLOAD
    price: str = "street"
    used_ok: bool = False
    network: Network = field(default_factory=Network)
    min_decode_tokens_per_s: float | None = None
    max_hours_per_job: float | None = None


@dataclass(frozen=True)
class Scenario:
    """A validated scenario.

    Attributes:
        name: scenario name (file stem unless the file says otherwise); reports use it as a
            file name after :func:`planner.report.export.safe_stem`.
        file: the path as the user named it ('' when built from a mapping).
        sha256: hex digest of the file's bytes ('' when built from a mapping).
        workloads: one or more workloads; one machine must run each of them, one at a time.
        constraints, extras, objective: as in the module docstring.
        costs: the ``costs:`` mapping as an Entry (file and line kept), for the total-cost-of-
            ownership comparison, which validates it (:func:`planner.cost.tco.read_costs`); the
            capex plan does not use it. None when absent.
        text: the file's text as read (the one read that ``sha256`` is the digest of), for the
            workbook's copy of it; '' when built from a mapping.
    """

    name: str
    file: str
    sha256: str
    workloads: tuple[ScenarioWorkload, ...]
    constraints: Constraints = field(default_factory=Constraints)
    extras: tuple[Extra, ...] = ()
    objective: str = "capex"
    description: str | None = None
    notes: str | None = None
    costs: Entry | None = field(default=None, compare=False, repr=False)
    text: str = field(default="", compare=False, repr=False)


# ----- loading --------------------------------------------------------------------------------

def load_scenario(path: Path, catalog: Catalog, *, shown: str | None = None) -> Scenario:
    """Read and validate a scenario file against ``catalog``.

    Args:
        path: the YAML file.
        catalog: the loaded catalog (models, GPU and platform ids are checked against it).
        shown: the path as the user wrote it, for messages (default ``str(path)``).

    Raises:
        ScenarioError: an unreadable file, YAML problems, unknown keys (with did-you-mean),
            invalid workloads or strategy choices, unknown GPU or platform ids, bad constraints.
    """
    shown = shown or str(path)
    data, raw = read_scenario_file(path, shown)
    return scenario_from_mapping(data, catalog, file=shown, default_name=default_scenario_name(path),
                                 sha256=hashlib.sha256(raw).hexdigest(), base_dir=Path(path).parent,
                                 text=raw.decode("utf-8", errors="replace").removeprefix("\ufeff"))


def stemless(path: Path | str) -> bool:
    """Whether ``path`` has no file name to name a scenario by: a shell pipe (``<(...)`` passes /dev/fd/63, whose
    stem '63' names nothing), ``/dev/stdin``, a ``/proc`` path."""
    return str(Path(path)).startswith(("/dev/fd/", "/proc/")) or str(Path(path)) == "/dev/stdin"


def default_scenario_name(path: Path | str) -> str:
    """The scenario name when the file gives none: the file's stem; 'scenario' where it has none
    (:func:`stemless`), which planner.api refuses when reports are written. The stem is taken as it is: a control
    or invisible character in it is refused (planner.workload.spec.check_derived_name), not escaped, since the
    escape 'x\\u200by' is also the stem of a file literally named so, whose reports would replace the first's
    (h16b #5)."""
    return "scenario" if stemless(path) else Path(path).stem


def read_scenario_file(path: Path | str, shown: str) -> tuple[Mapping[str, Any], bytes]:
    """A scenario file's YAML mapping (with lines) and its bytes (for its SHA-256 and text), read
    once (:func:`planner.core.yamlio.read_mapping`; a pipe such as ``<(...)`` can be read only once).

    Raises:
        ScenarioError: an unreadable file or YAML problems, named as ``shown``.
    """
    try:
        data, source = read_mapping(Path(path), hint=SCENARIO_FILE_HINT)
        raw = source.data
    except YamlProblem as exc:
        hint = exc.hint or ("Check the path; the shipped scenarios are in scenarios/." if exc.problem == "no such file"
                            else None)
        raise ScenarioError(exc.problem, file=shown, line=exc.line, entry=exc.path, hint=hint) from None
    return data, raw


def scenario_from_mapping(data: Mapping[str, Any], catalog: Catalog, *, file: str | None = None,
                          default_name: str = "scenario", sha256: str = "",
                          base_dir: Path | str | None = None, text: str = "") -> Scenario:
    """Validate a scenario given as a mapping (what :func:`load_scenario` reads from YAML).

    Args:
        base_dir: the directory relative ``model`` paths are read from: the scenario file's
            (:func:`load_scenario` passes it); None for the current directory.
        text: the file's text, kept as :attr:`Scenario.text`.

    Raises:
        ScenarioError: as :func:`load_scenario`.
    """
    root = Entry(data, file=file, path="", error=ScenarioError, line=1)
    _refuse_workload_keys(root)
    root.check_keys(SCENARIO_KEYS, required=("workloads",), explain=explainer("scenario"))
    name = root.name("name", default_name)
    if "name" not in root.data:
        check_derived_name(root, name, "scenario")
    try:
        stem = safe_stem(name, max_bytes=None, check_reserved=False)
    except OutputError:
        stem = ""
    if not stem:
        raise root.error(f"name {name!r} leaves nothing to name the report files with", "name",
                         # a name of only '.' and '-' is cut to nothing (safe_stem strips them at the ends), so the
                         # hint asks for what a file name keeps (h17b #5c)
                         "Give it a letter, a digit or '_' (a file name drops the dots and dashes at its ends and "
                         "makes other symbols and spaces dashes), e.g. name: ft-7b-workstation.")
    if windows_reserved(stem):
        raise root.error(f"name {name!r} gives the report names {stem}.json, {stem}.xlsx, ..., which Windows reserves "
                         f"for the device {windows_reserved(stem)} (a report folder copied there loses them)", "name",
                         "Give the scenario another name, e.g. name: ft-7b-workstation.")
    objective = root.str("objective", "capex", choices=OBJECTIVES)
    _check_list_length(root, "workloads", MAX_WORKLOADS, "Split them into scenarios of at most "
                       f"{MAX_WORKLOADS} workloads (one machine runs every workload of a scenario in turn).")
    _check_list_length(root, "extras", MAX_EXTRAS, "Give the lines that differ by quote and fold the rest into "
                       "one line with its quantity or total price (quantity: 4).")
    entries = root.children("workloads")
    if not entries:
        raise root.error("lists no workloads", "workloads", "Give at least one workload (model, task, ...).")
    resolver = make_resolver(catalog)
    if base_dir is not None:
        resolver = relative_model_resolver(resolver, catalog, Path(base_dir))
    workloads = []
    names: dict[str, tuple[str, str]] = {}  # clash_key (NFKC, case-folded) -> (the entry, the name as written)
    drawn: dict[str, tuple[str, str]] = {}  # lookalike_key (UTS #39 skeleton, then clash_key) -> the same
    combinations = [0]  # the strategy combinations asked for so far, against MAX_COMBINATIONS
    for i, e in enumerate(entries):
        sw = _scenario_workload(e, resolver, default_name=f"workload-{i + 1}", combinations=combinations)
        if clash_key(sw.name) in names:
            where, other = names[clash_key(sw.name)]
            raise e.error(f"duplicate workload name {sw.name!r} (also {where}{spelling_note(sw.name, other)})", "name",
                          "Give each workload its own name.")
        if lookalike_key(sw.name) in drawn:
            where, other = drawn[lookalike_key(sw.name)]
            raise e.error(f"duplicate workload name {sw.name!r} (also {where}{lookalike_note(sw.name, other)})", "name",
                          "Give each workload a name that looks unlike the others.")
        names[clash_key(sw.name)] = drawn[lookalike_key(sw.name)] = (e.key_path(None) or "", sw.name)
        workloads.append(sw)
    constraints = _constraints(root.child("constraints", None), catalog)
    if constraints.max_hours_per_job is not None:
        for i, (e, sw) in enumerate(zip(entries, workloads)):
            if sw.task != "train" or sw.deadline_hours is not None:
                continue
            if sw.variants[0].workload.train.dataset_tokens is None:  # type: ignore[union-attr]
                raise e.error(f"constraints.max_hours_per_job times one run of every training workload, but "
                              f"{sw.name!r} gives no dataset_tokens", None,
                              "Add dataset_tokens (tokens per epoch) and epochs to the workload.")
            workloads[i] = replace(sw, deadline_hours=constraints.max_hours_per_job)
    extras = tuple(_extra(e) for e in root.children("extras", None))
    costs = root.child("costs", None)
    if objective in TIMED_OBJECTIVES:
        _check_job_sizes(root, entries, workloads, objective)
    return Scenario(name=name, file=file or "", sha256=sha256, workloads=tuple(workloads), constraints=constraints,
                    extras=extras, objective=objective, description=root.str("description", None, multiline=True),
                    notes=root.str("notes", None, multiline=True), costs=costs, text=text)


def _refuse_workload_keys(root: Entry) -> None:
    """Refuse workload and constraint keys at the top level, saying where they belong.

    A workload file given to ``planner plan`` has ``model:`` and ``task:`` at the top level; a
    scenario lists its workloads under ``workloads:``. Without ``workloads:`` the file is taken
    for a workload file; with it, the key is taken for a workload key indented too little.
    """
    key = next((k for k in root.data if k not in SCENARIO_KEYS), None)
    if key in CONSTRAINT_KEYS:  # a constraint written at the top level: it belongs under constraints:
        raise root.error(f"unknown key {key!r}", key,
                         f"{key!r} is a constraint: indent it under 'constraints:' (constraints: {{{key}: ...}}; "
                         "see docs/scenarios.md).")
    if key not in WORKLOAD_ONLY_KEYS:
        return  # no unknown key, or one check_keys explains (with a did-you-mean)
    if "workloads" in root.data:
        raise root.error(f"unknown key {key!r}", key,
                         f"{key!r} is a workload key: indent it under an entry of 'workloads:' (see "
                         "scenarios/README.md).")
    shown = root.file or "FILE"
    raise root.error(f"unknown key {key!r}", key,
                     "This looks like a workload file (workload keys such as model: and task: at the top "
                     "level); a scenario lists its workloads under 'workloads:' (see scenarios/README.md). "
                     f"To estimate this workload, run 'planner estimate --workload {shown}'.")


def _check_list_length(root: Entry, key: str, most: int, hint: str) -> None:
    """Refuse a top-level list ``key`` longer than ``most`` before any of it is read (h23b N2).

    Raises:
        ScenarioError: at the key, naming the count and the ceiling, with ``hint``.
    """
    value = root.data.get(key)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) > most:
        raise root.error(f"lists {len(value):,} entries, more than the {most:,} a scenario may hold", key, hint)


def _count_combinations(e: Entry, choices: Sequence[tuple[str, tuple[Any, ...], bool]],
                        combinations: list[int]) -> None:
    """Add the workload's strategy combinations to ``combinations[0]`` (the scenario's count so far) and refuse the
    workload that takes it past :data:`MAX_COMBINATIONS`, before any is validated (h23b N2).

    Raises:
        ScenarioError: at the workload, naming its count, its longest lists and the ceiling.
    """
    count = math.prod(len(values) for _, values, _ in choices)
    combinations[0] += count
    if combinations[0] <= MAX_COMBINATIONS:
        return
    sizes = " x ".join(f"{k} {len(v)}" for k, v, _ in sorted(choices, key=lambda c: -len(c[1]))[:4])
    before = combinations[0] - count
    so_far = f" (with the {before:,} of the workloads before it)" if before else ""
    raise e.error(f"its strategy choices give {count:,} combinations ({sizes}{', ...' if len(choices) > 4 else ''})"
                  f"{so_far}, more than the {MAX_COMBINATIONS:,} a scenario may try", None,
                  "Pin some keys to one value (framework: deepspeed, zero: 2) or list fewer values "
                  "(seq_len: [4096, 2048]).")


def _scenario_workload(e: Entry, resolver: Any, *, default_name: str,
                       combinations: list[int] | None = None) -> ScenarioWorkload:
    task = _task_of(e)
    e, deadline, slo = _targets(e, task)
    # a latency target is served by a serving engine: an slo: workload that names no engine (and sets
    # no hf-only key) gets vLLM whatever its user count, as concurrency > 1 does
    # (planner.workload.inference.default_engine)
    slo_engine = slo is not None and "engine" not in e.data and not any(k in e.data for k in HF_ONLY_KEYS)
    if slo_engine:
        e = Entry(_with(e.data, {"engine": "vllm"}), file=e.file, path=e.path, error=ScenarioError,
                  line=e.line_of(None), via=e.via)
    if task not in CHOICE_KEYS:
        # Let the workload reader produce its usual message for a missing or bad task.
        workload_from_entry(e, resolver, default_name=default_name)
        raise e.error("cannot tell the task", "task", "Write task: train or task: infer.")  # pragma: no cover
    model = e.data.get("model")
    if not isinstance(model, str) or not model.strip():
        workload_from_entry(e, resolver, default_name=default_name)  # reports the missing/bad model
    _, _, arch = resolver(e.str("model"), e)
    choices: list[tuple[str, tuple[Any, ...], bool]] = []
    for key in CHOICE_KEYS[task]:
        got = _choice_values(e, key, task, arch)
        if got is not None:
            values, is_auto = got
            if key == "gpus" and is_auto:
                continue  # gpus: auto = free
            choices.append((key, values, is_auto))
    gpus_free = task == "train" and not any(k == "gpus" for k, _, _ in choices) and (
        "gpus" not in e.data or e.data.get("gpus") == "auto")
    gpn = e.data.get("gpus_per_node")
    gpn = gpn if isinstance(gpn, int) and not isinstance(gpn, bool) and gpn > 0 else None

    keys = [k for k, _, _ in choices]
    unpinned = tuple(k for k in UNPINNED_AUTO_KEYS if task == "train" and k in keys and k not in e.data)
    _count_combinations(e, choices, combinations if combinations is not None else [0])
    combos = list(itertools.product(*[vals for _, vals, _ in choices])) if choices else [()]
    if any(k == "gpu_layers" and auto for k, _, auto in choices):
        # gpu_layers: max: every variant with all layers on the GPU (in weights, kv_dtype order) before
        # any that leaves blocks in host RAM, whose decode reads them at RAM bandwidth (an order of
        # magnitude below a GPU's); then the weights order again, most layers first
        i_layers, all_layers = keys.index("gpu_layers"), arch.num_hidden_layers + 1
        combos.sort(key=lambda c: c[i_layers] != all_layers)
    variants: list[Variant] = []
    first_error: dict[tuple[str, Any], InputError] = {}
    used: set[tuple[str, Any]] = set()
    seen_workloads: set[Any] = set()
    single_error: InputError | None = None
    for combo in combos:
        updates = dict(zip(keys, combo))
        if e.data.get("engine") == "llama.cpp" and "tp" in updates:
            updates["gpus"] = updates.pop("tp")  # llama.cpp: one replica with its layers over that many GPUs
        if gpus_free:
            tp = updates.get("tp", e.data.get("tp", 1))
            tp = tp if isinstance(tp, int) and not isinstance(tp, bool) and tp > 0 else 1
            updates["gpus"] = math.lcm(tp, gpn or 1)
        data = _with(e.data, updates)
        entry = Entry(data, file=e.file, path=e.path, error=ScenarioError, line=e.line_of(None), via=e.via)
        try:
            w = workload_from_entry(entry, resolver, default_name=default_name)
            if slo_engine and w.infer is not None:
                w = replace(w, infer=replace(w.infer, engine_defaulted=True))
        except InputError as exc:
            if single_error is None:
                single_error = exc
            for kv in zip(keys, combo):
                first_error.setdefault(kv, exc)
            continue
        # Variants that differ only in the listed gpus are one strategy; the solver sets the count.
        signature = (replace(w.train, gpus=0) if w.train is not None else None, w.infer)
        if signature in seen_workloads:
            used.update(zip(keys, combo))
            continue
        seen_workloads.add(signature)
        used.update(zip(keys, combo))
        variants.append(Variant(w, tuple(zip(keys, combo)), data, solver_keys=unpinned))
    if not variants:
        assert single_error is not None
        raise single_error
    if slo is not None:  # the request the slo: block describes is the one timed and priced everywhere
        variants = [replace(v, workload=replace(v.workload, infer=replace(v.workload.infer, prompt_tokens=slo.prompt_tokens)))
                    for v in variants]
    # a left-out key with one valid value was not the solver's choice: only that value runs
    # (QLoRA has no ZeRO stage or offload to choose from), so the strategy does not say it chose it
    taken = {k: {dict(v.choices).get(k) for v in variants} for k in unpinned}
    chosen = tuple(k for k in unpinned if len(taken[k]) > 1)
    if chosen != unpinned:
        variants = [replace(v, solver_keys=chosen) for v in variants]
    for key, values, is_auto in choices:
        if is_auto:
            continue
        for v in values:
            if (key, v) not in used:
                exc = first_error.get((key, v))
                if exc is None:  # pragma: no cover - every unused value failed somewhere
                    raise e.error(f"value {v!r} is never valid", key)
                if isinstance(v, bool):  # an unquoted no/off read as false: the file holds no 'False' to remove
                    raise ScenarioError(exc.problem + f" (in the {key} list)", file=exc.file, line=exc.line,
                                        entry=exc.entry, hint=exc.hint)
                raise ScenarioError(
                    exc.problem + f" (with {key}: {v!r})", file=exc.file, line=exc.line, entry=exc.entry,
                    hint=(exc.hint + " " if exc.hint else "") + f"Remove {v!r} from the {key} list.")
    gpus: tuple[int, ...] | None = None
    if task == "train" and not gpus_free:
        listed = [vals for k, vals, _ in choices if k == "gpus"]
        if listed:
            gpus = tuple(int(v) for v in listed[0])
        else:
            gpus = (variants[0].workload.train.gpus,)  # type: ignore[union-attr]
    where = f"{e.file}:{e.line_of(None)}: {e.path}" if e.file else e.path
    if deadline is not None and variants[0].workload.train.dataset_tokens is None:  # type: ignore[union-attr]
        raise e.error("deadline_hours times one run, but the workload gives no dataset_tokens", None,
                      "Add dataset_tokens (tokens per epoch, e.g. 2000000000) and epochs.")
    return ScenarioWorkload(name=variants[0].workload.name, task=task, variants=tuple(variants), gpus=gpus,
                            gpus_per_node=variants[0].workload.gpus_per_node, where=where, deadline_hours=deadline,
                            slo=slo)


# ----- constraints ------------------------------------------------------------------------------

def _ids(e: Entry, key: str, known: Sequence[str], what: str,
         removed: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    values = e.str_list(key, None, names=known)
    if values is None:
        return None
    for v in values:
        if v not in known:
            listing = "gpus" if what == "GPU" else "platforms"  # the two lists constraints name ids from
            removal = removal_hint(removed or {}, v, f"{listing}.yaml")
            if removal is not None:
                raise e.error(f"unknown {what} {clip_text(v)!r}", key, removal)
            # the name nvidia-smi and torch print, 'NVIDIA H100 80GB HBM3': its id (h26b M2)
            driver = device_name_hint(v, known) if what == "GPU" else None
            raise e.error(f"unknown {what} {clip_text(v)!r}", key,  # its first 80 (h24b M6)
                          bracket_hint(key, v, known) or driver or did_you_mean(v, known, listing=listing))
    if len(set(values)) != len(values):
        dup = next(v for v in values if values.count(v) > 1)
        raise e.error(f"lists {dup!r} twice", key, "Give each id once.")
    return tuple(values)


def _constraints(e: Entry | None, catalog: Catalog) -> Constraints:
    if e is None:
        return Constraints()
    e.check_keys(CONSTRAINT_KEYS, explain=explainer("constraints"))  # gpus, num_nodes: other tools' names
    gpu_ids = [g.id for g in catalog.gpus]
    plat_ids = [p.id for p in catalog.platforms]
    allowed = _ids(e, "allowed_gpus", gpu_ids, "GPU", catalog.removed)
    if allowed is not None and not allowed:
        raise e.error("an empty list allows no GPU", "allowed_gpus", "List GPU ids, or leave the key out.")
    excluded = _ids(e, "excluded_gpus", gpu_ids, "GPU", catalog.removed) or ()
    vendors = e.str_list("vendors", None, choices=GPU_VENDORS)
    if vendors is not None and not vendors:
        raise e.error("an empty list allows no GPU", "vendors",
                      f"List vendors ({', '.join(GPU_VENDORS)}), or leave the key out.")
    platforms = _ids(e, "allowed_platforms", plat_ids, "platform", catalog.removed)
    if platforms is not None and not platforms:
        raise e.error("an empty list allows no platform", "allowed_platforms",
                      "List platform ids, or leave the key out.")
    max_cards = e.int("max_cards", None, min=1, max=MAX_GPUS)
    max_nodes = e.int("max_nodes", 1, min=1, max=MAX_NODES)
    budget = e.number("budget_usd", None, min=0, max=MAX_BUDGET_USD, min_exclusive=True)
    if budget is not None:  # compared with the quote's total, which is in whole cents
        budget = whole_cents(e, "budget_usd", budget)
    min_tps = e.number("min_decode_tokens_per_s", None, min=0, max=1e6, min_exclusive=True)
    max_hours = e.number("max_hours_per_job", None, min=0, max=MAX_DEADLINE_HOURS, min_exclusive=True)
    headroom = e.number("vram_headroom", 0.05, min=0, max=0.95)
    ram_min = e.number("ram_vram_min", RAM_VRAM_MIN, min=0, max=16)
    ram_min_off = e.number("ram_vram_min_offload", RAM_VRAM_MIN_OFFLOAD, min=0, max=16)
    price = price_mode(e)
    used_ok = e.bool("used_ok", False)
    net = Network()
    ne = e.child("network", None)
    if ne is not None:
        ne.check_keys(NETWORK_KEYS)
        kind = ne.str("kind", None, choices=NETWORK_KINDS)
        raw = ne.raw("nics_per_node", "per-gpu")
        if raw == "per-gpu":
            nics = None
        elif isinstance(raw, str):
            raise ne.error(f"{raw!r} is not a NIC count", "nics_per_node",
                           "Write per-gpu (one NIC per GPU, the default) or a whole number such as 1 or 2.")
        else:
            nics = ne.int("nics_per_node", min=1, max=64)
        nic = ne.str("nic", None)
        if nic is not None and nic not in [n.id for n in catalog.nics]:
            raise ne.error(f"unknown NIC {clip_text(nic)!r}", "nic", did_you_mean(nic, [n.id for n in catalog.nics]))
        min_rate = ne.rate("min_rate", 0.0)
        chosen = next((n for n in catalog.nics if n.id == nic), None)
        if chosen is not None and kind is not None and chosen.kind != kind:
            same = ", ".join(n.id for n in catalog.nics if n.kind == kind) or "none in the catalog"
            raise ne.error(f"NIC {nic!r} is {chosen.kind}, not {kind}", "nic",
                           f"Name a {kind} NIC ({same}) or leave kind out.")
        fast = [n for n in catalog.nics if (kind is None or n.kind == kind) and (nic is None or n.id == nic)]
        if min_rate and fast and not any(n.rate_bytes_per_s >= min_rate for n in fast):
            top = max(fast, key=lambda n: n.rate_bytes_per_s)
            raw_rate = str(ne.raw("min_rate", ""))
            units = (f"'{raw_rate}' is bytes per second ({min_rate * 8 / 1e9:g} Gb/s); network rates are usually "
                     "written in bits: Gb/s. " if "GB/s" in raw_rate or "GB/S" in raw_rate else "")
            raise ne.error(f"no {'NIC ' + repr(nic) if nic else 'NIC' + (' of kind ' + kind if kind else '')} "
                           f"runs at {min_rate * 8 / 1e9:g} Gb/s or more", "min_rate",
                           f"{units}The fastest is {top.id} at {top.rate_bytes_per_s * 8 / 1e9:g} Gb/s; lower "
                           "min_rate or add a faster NIC in a catalog overlay (--catalog DIR).")
        net = Network(kind=kind, nics_per_node=nics, nic=nic, min_rate_bytes_per_s=min_rate,
                      switch=ne.str("switch", "auto", choices=NETWORK_SWITCH))
    # Filters that leave nothing are input errors, not infeasible plans.
    gpus = [g for g in purchasable_gpus(priced_catalog(catalog, price, used_ok), allowed, excluded, vendors)
            if g.price_usd is not None or allowed is not None]
    if not gpus:
        key = "allowed_gpus" if allowed is not None else ("vendors" if vendors is not None else "excluded_gpus")
        raise e.error("allowed_gpus, excluded_gpus and vendors together leave no GPU with a purchase price", key,
                      "Loosen one of them.")
    return Constraints(allowed_gpus=allowed, excluded_gpus=tuple(excluded), vendors=tuple(vendors) if vendors else None,
                       allowed_platforms=platforms, max_cards=max_cards, max_nodes=max_nodes, budget_usd=budget,
                       vram_headroom=headroom, ram_vram_min=float(ram_min), ram_vram_min_offload=float(ram_min_off),
                       price=price, used_ok=used_ok, network=net, min_decode_tokens_per_s=min_tps,
                       max_hours_per_job=max_hours)


def _check_job_sizes(root: Entry, entries: Sequence[Entry], workloads: Sequence[ScenarioWorkload],
                     objective: str) -> None:
    """``cost_per_job`` and ``time_to_result`` time one run of every workload: each needs its size."""
    for e, sw in zip(entries, workloads):
        w = sw.variants[0].workload
        if w.task == "train" and w.train.dataset_tokens is None:
            raise e.error(f"objective {objective} times one run of every workload, but {sw.name!r} gives no "
                          "dataset_tokens", None,
                          "Add dataset_tokens (tokens per epoch, e.g. 100000000) and epochs to the workload, or use "
                          "objective: capex or tco.")
        if w.task == "infer" and w.infer.tokens_per_request is None:
            raise e.error(f"objective {objective} times one request of every inference workload, but {sw.name!r} "
                          "gives no tokens_per_request", None,
                          "Add tokens_per_request (tokens generated per request) to the workload, or use "
                          "objective: capex or tco.")


__all__ = ["Constraints", "Extra", "Network", "SLO_KEYS", "SCENARIO_WORKLOAD_KEYS", "Scenario", "Slo",
           "ScenarioWorkload", "Variant", "default_scenario_name", "stemless", "load_scenario", "relative_model_resolver",
           "scenario_from_mapping"]
