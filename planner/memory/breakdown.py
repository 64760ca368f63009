"""The result of the memory model: named components, each with its formula and source.

A peak is a moment in time. Each :class:`Component` is either live for the whole step
(``phase`` empty) or only in one phase (``'forward-backward'``, ``'optimizer step'``,
``'prefill'``, ``'load'``, ...). A total is the sum of the always-live components plus the
largest phase: ``total = sum(always) + max over phases of sum(phase)``. The breakdown shows
every component, so the arithmetic can be followed by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

GPU = "gpu"
HOST = "host"
#: The component kinds a GPU total adds up ('unified' memory is shown beside it).
GPU_TOTAL_KINDS = ("allocated", "runtime", "headroom")


@dataclass(frozen=True)
class Component:
    """One named part of the memory need.

    Attributes:
        name: e.g. 'weights', 'gradients', 'optimizer states', 'activations', 'KV cache'.
        where: 'gpu' (bytes per GPU) or 'host' (bytes of host RAM per machine).
        bytes: integer bytes.
        formula: the arithmetic with the workload's numbers, e.g. '6,738,415,616 params x 2 B'.
        source: paper and section, or documentation page, behind the formula.
        phase: '' when live through the whole step, else the phase(s) it is live in, joined
            by ', ' (e.g. 'loss, recompute').
        kind: 'allocated' (tensors), 'runtime' (CUDA context, workspaces), 'headroom', or
            'unified' (CUDA unified memory: bitsandbytes' paged optimizer states, which PyTorch's
            allocator does not count and the driver evicts to host RAM when the GPU is full; shown,
            and left out of every GPU total).
    """

    name: str
    where: str
    bytes: int
    formula: str
    source: str
    phase: str = ""
    kind: str = "allocated"


def phase_total(components: Iterable[Component], where: str, kinds: Iterable[str] | None = None) -> tuple[int, str]:
    """Peak bytes of the components at ``where``: always-live plus the largest phase.

    Returns:
        (bytes, name of the phase where the peak happens, or '' when no phase components).
    """
    kinds = set(kinds) if kinds is not None else None
    always = 0
    phases: dict[str, int] = {}
    for c in components:
        if c.where != where or (kinds is not None and c.kind not in kinds):
            continue
        if c.phase:
            for name in c.phase.split(", "):
                phases[name] = phases.get(name, 0) + c.bytes
        else:
            always += c.bytes
    if not phases:
        return always, ""
    peak_phase = max(sorted(phases), key=lambda p: phases[p])
    return always + phases[peak_phase], peak_phase


@dataclass(frozen=True)
class Estimate:
    """Memory need of one workload, per GPU and per machine's host RAM.

    Attributes:
        workload_name: the workload's name.
        model_id: the model as the user named it.
        task: 'train' or 'infer'.
        parameters: total parameters (int).
        trainable_parameters: parameters that receive gradients (int; 0 for inference).
        recipe: recipe name (training) or weight format (inference).
        recipe_description: one sentence that defines the recipe.
        components: the breakdown.
        gpus: GPUs the workload runs on; gpus_per_node: GPUs per machine.
        notes: statements that hold for this result (e.g. gradient accumulation).
        warnings: contradictions and risks.
        offload: whether states or parameters live in host RAM (changes the RAM rule).
        extra: task-specific figures, e.g. vLLM KV tokens that fit (name -> int).
        stack: training only: the framework and the setting of each memory lever the estimate
            assumed, as (lever, setting in words) pairs, first ('framework', its name and stack).
        engine_version: inference with an engine that has a release line (vLLM, llama.cpp): the
            release modelled, given or the current one ('' otherwise; planner.workload.engine_releases).
        engine_release: with ``engine_version``, the statement of that release (whether it was given
            or is the default, and each change it predates, with sources): the note the estimate also
            carries, for the outputs that state the release apart from the notes (``planner plan``).
    """

    workload_name: str
    model_id: str
    task: str
    parameters: int
    trainable_parameters: int
    recipe: str
    recipe_description: str
    components: tuple[Component, ...]
    gpus: int
    gpus_per_node: int
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    offload: bool = False
    extra: dict[str, int] = field(default_factory=dict)
    stack: tuple[tuple[str, str], ...] = ()
    engine_version: str = ""
    engine_release: str = ""

    @property
    def stack_text(self) -> str:
        """The stack settings in one line ('' for inference)."""
        return "; ".join(f"{k}: {v}" for k, v in self.stack)

    @property
    def per_gpu_total_bytes(self) -> int:
        """Peak bytes one GPU needs, runtime overheads and allocator headroom included (CUDA unified
        memory, which can be evicted to host RAM, is not; see :attr:`per_gpu_unified_bytes`)."""
        return phase_total(self.components, GPU, kinds=GPU_TOTAL_KINDS)[0]

    @property
    def per_gpu_unified_bytes(self) -> int:
        """Bytes of CUDA unified memory per GPU (paged optimizer states): on the GPU while it has
        room, in host RAM otherwise; outside :attr:`per_gpu_total_bytes`."""
        return sum(c.bytes for c in self.components if c.where == GPU and c.kind == "unified")

    @property
    def per_gpu_allocated_bytes(self) -> int:
        """Peak bytes of tensors on one GPU (what ``torch.cuda.max_memory_allocated`` measures)."""
        return phase_total(self.components, GPU, kinds=("allocated",))[0]

    @property
    def peak_phase(self) -> str:
        """Phase in which the GPU peak happens ('' when everything is live at once)."""
        return phase_total(self.components, GPU, kinds=GPU_TOTAL_KINDS)[1]

    @property
    def host_total_bytes(self) -> int:
        """Peak host RAM of one machine, in bytes."""
        return phase_total(self.components, HOST)[0]

    @property
    def host_peak_phase(self) -> str:
        return phase_total(self.components, HOST)[1]

    def ram_rule_bytes(self) -> tuple[int, int]:
        """The rule of thumb for system RAM per machine: 2-4x its total VRAM need (6-8x with offload).

        Source: a rule of thumb from DL workstation sizing guides (assumption). Applied to the
        per-GPU need times the GPUs in one machine.
        """
        vram = self.per_gpu_total_bytes * self.gpus_per_node
        lo, hi = (6, 8) if self.offload else (2, 4)
        return lo * vram, hi * vram

    def gpu_components_at_peak(self) -> list[Component]:
        """The GPU components live at the per-GPU peak (always-live ones and the peak phase's)."""
        phase = self.peak_phase
        return [c for c in self.gpu_components() if not c.phase or phase in c.phase.split(", ")]

    def gpu_components(self) -> list[Component]:
        return [c for c in self.components if c.where == GPU]

    def host_components(self) -> list[Component]:
        return [c for c in self.components if c.where == HOST]
