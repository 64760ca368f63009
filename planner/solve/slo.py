"""A scenario workload's targets: a training ``deadline_hours`` and a serving ``slo:`` block.

planner.solve.scenario reads each workload through :func:`_targets` before the workload reader
sees it; planner.solve.targets times a machine against them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from planner.core.errors import ScenarioError
from planner.core.fields import Entry
from planner.solve.choices import _with
from planner.workload.options import MAX_SEQ_LEN


#: Keys a scenario workload takes beyond those of a workload file: the targets the machine must meet.
SCENARIO_WORKLOAD_KEYS = ("deadline_hours", "slo")
#: Keys of a workload's ``slo:`` block (serving targets and the load they hold under).
SLO_KEYS = ("ttft_s", "tpot_s", "output_tokens_per_s", "concurrency", "requests_per_s", "prompt_tokens",
            "output_tokens")
#: Largest deadline read, hours (ten years): anything above is a typo, not a deadline.
MAX_DEADLINE_HOURS = 87_600.0
#: Most concurrent users (sequences) an ``slo:`` load may size a service for.
MAX_SLO_USERS = 65_536


@dataclass(frozen=True)
class Slo:
    """A serving workload's service level: latency targets and the load they must hold under.

    Attributes:
        ttft_s: most seconds from a request's arrival to its first output token (None: no target).
        tpot_s: most seconds per output token after the first, per user (None: no target); an
            ``output_tokens_per_s`` target is read as ``tpot_s = 1 / output_tokens_per_s``.
        output_tokens_per_s: the per-user decode rate as written (None when ``tpot_s`` was given).
        concurrency: users (sequences) served at once, all replicas together (None with
            ``requests_per_s``).
        requests_per_s: requests arriving per second (None with ``concurrency``).
        prompt_tokens, output_tokens: the request the targets are for.
    """

    ttft_s: float | None
    tpot_s: float | None
    output_tokens_per_s: float | None
    concurrency: int | None
    requests_per_s: float | None
    prompt_tokens: int
    output_tokens: int

    @property
    def request_bound_s(self) -> float | None:
        """The longest a request may take when the targets are met: ttft_s + output_tokens x tpot_s
        (None without both targets)."""
        if self.ttft_s is None or self.tpot_s is None:
            return None
        return self.ttft_s + self.output_tokens * self.tpot_s

    @property
    def users(self) -> int:
        """Sequences in flight the service is sized for: ``concurrency``, or by Little's law
        (Little 1961, L = lambda x W) requests_per_s x the longest request the targets allow,
        rounded up: a machine that meets the targets holds at most that many requests at once.
        Under ``requests_per_s`` this is only the load's bound (its words, the most replicas tried):
        the solver sizes each replica's memory for the sequences in flight on the card
        (planner.solve.inflight), so a looser target never asks for more memory."""
        if self.concurrency is not None:
            return self.concurrency
        assert self.requests_per_s is not None and self.request_bound_s is not None
        return max(1, min(MAX_SLO_USERS, math.ceil(self.requests_per_s * self.request_bound_s - 1e-9)))

    def load_text(self) -> str:
        """The load in words: '50 users' or '2 requests/s (at most 37 in flight by Little's law)'."""
        if self.concurrency is not None:
            return f"{self.concurrency:,} concurrent user{'s' if self.concurrency != 1 else ''}"
        return f"{self.requests_per_s:g} requests/s (at most {self.users:,} in flight by Little's law)"

    def targets_text(self) -> str:
        """The targets in words, e.g. 'TTFT <= 1 s, TPOT <= 0.05 s (20 tokens/s per user)'."""
        parts = []
        if self.ttft_s is not None:
            parts.append(f"TTFT <= {self.ttft_s:g} s")
        if self.tpot_s is not None:
            parts.append(f"TPOT <= {self.tpot_s:.4g} s ({1 / self.tpot_s:.4g} tokens/s per user)")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"ttft_s": self.ttft_s, "tpot_s": self.tpot_s, "output_tokens_per_s": self.output_tokens_per_s,
                "concurrency": self.concurrency, "requests_per_s": self.requests_per_s, "users": self.users,
                "prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens}


def _targets(e: Entry, task: str | None) -> tuple[Entry, float | None, Slo | None]:
    """Read a scenario workload's targets (:data:`SCENARIO_WORKLOAD_KEYS`) and return the entry
    without them (what the workload reader validates), the deadline and the SLO.

    An ``slo: {concurrency}`` load becomes the workload's ``concurrency`` (``requests_per_s``: one
    sequence, which the solver replaces by those in flight on each card, planner.solve.inflight) and
    its ``output_tokens`` the ``tokens_per_request`` the time model times.
    """
    if not any(k in e.data for k in SCENARIO_WORKLOAD_KEYS):
        return e, None, None
    deadline = slo = None
    updates: dict[str, Any] = {}
    if "deadline_hours" in e.data:
        if task != "train":
            raise e.error("deadline_hours is the time one training run may take; this workload is not training",
                          "deadline_hours", "Give a serving workload an slo: block (ttft_s, tpot_s, concurrency) "
                          "instead, or remove deadline_hours.")
        deadline = e.number("deadline_hours", min=0, max=MAX_DEADLINE_HOURS, min_exclusive=True)
    if "slo" in e.data:
        if task != "infer":
            raise e.error("slo: is a serving target; this workload is not inference", "slo",
                          "Give a training workload deadline_hours (or constraints.max_hours_per_job) instead.")
        se = e.child("slo")
        assert se is not None
        se.check_keys(SLO_KEYS)
        ttft = se.number("ttft_s", None, min=0, max=3600, min_exclusive=True)
        tpot = se.number("tpot_s", None, min=0, max=3600, min_exclusive=True)
        otps = se.number("output_tokens_per_s", None, min=0, max=1e6, min_exclusive=True)
        if tpot is not None and otps is not None:
            raise se.error("gives both tpot_s and output_tokens_per_s, one target twice", "output_tokens_per_s",
                           "Keep one: output_tokens_per_s: 20 is tpot_s: 0.05.")
        if ttft is None and tpot is None and otps is None:
            raise se.error("sets no target", None, "Give ttft_s (seconds to the first token) and tpot_s (seconds "
                           "per output token) or output_tokens_per_s (per user), e.g. {ttft_s: 1, tpot_s: 0.05}.")
        users = se.int("concurrency", None, min=1, max=MAX_SLO_USERS)
        rps = se.number("requests_per_s", None, min=0, max=1e6, min_exclusive=True)
        if users is not None and rps is not None:
            raise se.error("gives both concurrency and requests_per_s", "requests_per_s",
                           "Give one load: users at once (concurrency), or arrivals per second (requests_per_s; "
                           "Little's law turns it into users: requests_per_s x the time of a request).")
        if (users is not None or rps is not None) and "concurrency" in e.data:
            raise e.error("gives the load twice: concurrency here and in slo:", "concurrency",
                          "Remove the workload's concurrency: the slo: load sizes the service.")
        if users is None and rps is None:
            users = e.int("concurrency", 1, min=1, max=MAX_SLO_USERS)
        if rps is not None and (ttft is None or (tpot is None and otps is None)):
            raise se.error("requests_per_s needs ttft_s and tpot_s (or output_tokens_per_s)", "requests_per_s",
                           "Little's law sizes the users in flight from the longest request the targets allow "
                           "(ttft_s + output_tokens x tpot_s); give both targets, or the load as concurrency.")
        context = e.data.get("context", 4096)
        context = context if isinstance(context, int) and not isinstance(context, bool) and context > 1 else 4096
        gen = e.data.get("tokens_per_request")
        out_default = gen if isinstance(gen, int) and not isinstance(gen, bool) and gen >= 1 else None
        output = se.int("output_tokens", out_default, min=1, max=MAX_SEQ_LEN)
        if output is None:
            raise se.error("gives no output_tokens", None, "Give output_tokens (tokens generated per request, e.g. "
                           "256) here or tokens_per_request in the workload.")
        if out_default is not None and output != out_default:
            raise se.error(f"output_tokens {output} differs from the workload's tokens_per_request {out_default}",
                           "output_tokens", "Give the request's length once.")
        prompt = se.int("prompt_tokens", context - output, min=1, max=MAX_SEQ_LEN)
        if prompt < 1 or prompt + output > context:
            raise se.error(f"a request of {prompt:,} prompt + {output:,} output tokens does not fit the "
                           f"workload's context of {context:,} tokens", "prompt_tokens" if "prompt_tokens" in se.data
                           else "output_tokens", "Raise the workload's context, or shorten the request.")
        slo = Slo(ttft_s=ttft, tpot_s=tpot if tpot is not None else (1.0 / otps if otps else None),
                  output_tokens_per_s=otps, concurrency=users, requests_per_s=rps, prompt_tokens=prompt,
                  output_tokens=output)
        # under requests_per_s the solver sizes each replica for the sequences in flight on its card
        # (planner.solve.inflight): the workload holds one until then, so the bound (which a looser
        # target raises) never trips the engine's own cap on concurrency
        updates = {"concurrency": slo.users if rps is None else 1, "tokens_per_request": output}
    data = _with(e.data, updates)
    for k in SCENARIO_WORKLOAD_KEYS:
        data.pop(k, None)
        data.lines.pop(k, None)
    return (Entry(data, file=e.file, path=e.path, error=ScenarioError, line=e.line_of(None), via=e.via), deadline,
            slo)
