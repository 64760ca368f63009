"""The speed model's results: seconds by mechanism, each with its formula and source.

Importing this module does no work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Union


def _finite(x: float) -> float | None:
    return x if x == x and abs(x) != float("inf") else None


@dataclass(frozen=True)
class Part:
    """One mechanism's share of a step.

    Attributes:
        name: the mechanism ('gemm', 'attention', 'memory-bound ops', 'optimizer step', ...).
        seconds: its time per step (training: one optimizer step; decode: one token step;
            prefill: one request's prompt), seconds. Exposed time: communication hidden behind
            compute counts only its excess.
        text: the arithmetic, with the numbers, or a function that writes it (:attr:`formula` reads it).
        source: where the rate or the rule comes from.
        assumed: the rate is an assumption, not a published measurement.
    """

    name: str
    seconds: float
    text: Union[str, Callable[[], str]]
    source: str
    assumed: bool = False

    @property
    def formula(self) -> str:
        """The arithmetic in words (built when first read: the solver times thousands of rows and
        reads the words of one)."""
        return self.text() if callable(self.text) else self.text

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": self.seconds, "formula": self.formula, "source": self.source,
                "assumed": self.assumed}

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        """Pickled (and deep-copied) with its formula written out: a :attr:`text` function is a closure, which
        pickle cannot send to another process (h10b #8)."""
        return (Part, (self.name, self.seconds, self.formula, self.source, self.assumed))


@dataclass(frozen=True)
class TrainingSpeed:
    """Training speed of a workload on a set of GPUs.

    Attributes:
        tokens_per_s: training tokens per second, all GPUs together.
        step_s: seconds per optimizer step (every micro-batch of every data-parallel rank).
        tokens_per_step: tokens one optimizer step trains (micro-batch x seq_len x grad_accum x
            data-parallel ranks).
        mfu: model FLOPs utilization: 6 x P x tokens (frozen base: 4 x P) plus attention, over
            the step time and the cards' dense peak of the recipe's dtype (PaLM, Chowdhery et al.
            2022, appendix B).
        model_flops_per_token: the FLOPs MFU counts per token.
        parts: seconds per step by mechanism.
        assumed: some rate it rests on is an assumption.
        notes: what the model assumed about the run (overlap, kernels).
    """

    tokens_per_s: float
    step_s: float
    tokens_per_step: float
    mfu: float
    model_flops_per_token: float
    parts: tuple[Part, ...]
    assumed: bool = False
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The ``speed`` object of ``planner estimate --json`` for training."""
        return {"task": "train", "tokens_per_s": self.tokens_per_s, "step_s": self.step_s,
                "tokens_per_step": self.tokens_per_step, "mfu": self.mfu,
                "model_flops_per_token": self.model_flops_per_token, "assumed": self.assumed,
                "parts": [p.to_dict() for p in self.parts], "notes": list(self.notes)}


@dataclass(frozen=True)
class InferenceSpeed:
    """Serving speed of a workload on one replica (tp GPUs) at a given concurrency.

    Attributes:
        prefill_tokens_per_s: prompt tokens per second one replica processes in prefill.
        ttft_s: time to first token of a request of ``prompt_tokens``, arriving with
            ``concurrency`` - 1 others (their prompts are prefilled in the same batch).
        tpot_s: one decode step at ``concurrency`` sequences (time per output token).
        output_tokens_per_s: decode tokens per second over all sequences of all replicas.
        request_s: ttft_s + output_tokens x tpot_s.
        prompt_tokens, output_tokens, concurrency, replicas: the request and load timed.
        parts: prefill and decode-step seconds by mechanism (names start 'prefill: ' or 'decode: ').
        assumed: some rate it rests on is an assumption.
        notes: what the model assumed.
        batch_prefill_s: prefill of ``concurrency`` prompts together (a static batch's start).
        steady_tpot_s, steady_request_s, prefill_share: the steady state of ``concurrency`` users, each
            starting a new request as the last ends: the other users' prompts are prefilled between
            (vLLM: inside) the decode steps and take ``prefill_share`` of the time, so a token takes
            tpot_s / (1 - prefill_share) (planner.speed.inference.under_arrivals; what ``plan`` checks an
            ``slo:`` TPOT with). At concurrency 1 they equal tpot_s and request_s.
        prompt_wait_s: in that steady state, the mean wait of a prompt for the prompts queued ahead of
            it (planner.speed.inference.prompt_wait, M/D/1); steady_ttft_s = ttft_s + prompt_wait_s is
            the TTFT ``plan`` checks an ``slo:`` with, and steady_request_s includes it.
    """

    prefill_tokens_per_s: float
    ttft_s: float
    tpot_s: float
    output_tokens_per_s: float
    request_s: float
    prompt_tokens: int
    output_tokens: int
    concurrency: int
    replicas: int
    parts: tuple[Part, ...]
    assumed: bool = False
    notes: tuple[str, ...] = field(default=())
    batch_prefill_s: float = 0.0
    steady_tpot_s: float = 0.0
    steady_request_s: float = 0.0
    prefill_share: float = 0.0
    prompt_wait_s: float = 0.0

    @property
    def steady_ttft_s(self) -> float:
        """Time to first token in the steady state: ttft_s + prompt_wait_s, seconds."""
        return self.ttft_s + self.prompt_wait_s

    @property
    def batch_tokens_per_s(self) -> float:
        """Output tokens per second of a static batch, prefill included: replicas x concurrency x
        output_tokens / (batch prefill + output_tokens x TPOT)."""
        return (self.replicas * self.concurrency * self.output_tokens
                / (self.batch_prefill_s + self.output_tokens * self.tpot_s))

    def to_dict(self) -> dict[str, Any]:
        """The ``speed`` object of ``planner estimate --json`` for inference."""
        return {"task": "infer", "prefill_tokens_per_s": self.prefill_tokens_per_s, "ttft_s": self.ttft_s,
                "tpot_s": self.tpot_s, "output_tokens_per_s": self.output_tokens_per_s, "request_s": self.request_s,
                "prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens,
                "concurrency": self.concurrency, "replicas": self.replicas,
                # None where the replica cannot keep up (the share of prefill reaches 1)
                "steady_tpot_s": _finite(self.steady_tpot_s), "steady_request_s": _finite(self.steady_request_s),
                "prompt_wait_s": _finite(self.prompt_wait_s), "steady_ttft_s": _finite(self.steady_ttft_s),
                "prefill_share": self.prefill_share, "batch_prefill_s": self.batch_prefill_s,
                "batch_output_tokens_per_s": self.batch_tokens_per_s, "assumed": self.assumed,
                "parts": [p.to_dict() for p in self.parts], "notes": list(self.notes)}
