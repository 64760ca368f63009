"""A request the time model cannot shape is refused at its key by plan, as compare refuses it (found by fixer
f24c beside pass 24: plan stopped with "internal error (ValueError: tokens_per_request 1024 leaves no prompt token
...)" and the API raised a bare ValueError).

The time model takes a request's prompt as the rest of the context (context - tokens_per_request, at least one
token: planner.speed.timing), so tokens_per_request must be below the context (planner.cost.tco.
check_request_inputs, which compare already ran).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner import plan
from planner.cli.main import main
from planner.core.errors import ScenarioError


def _scenario(tmp_path: Path, context: int, tokens: int) -> Path:
    s = tmp_path / "s.yaml"
    s.write_text(f"name: tpr\nworkloads:\n  - name: chat\n    model: llama-3.1-8b\n    task: infer\n"
                 f"    context: {context}\n    tokens_per_request: {tokens}\n")
    return s


@pytest.mark.parametrize("context, tokens, how", [(512, 1024, "is more than"), (512, 512, "equals")])
def test_plan_refuses_tokens_per_request_at_or_above_the_context(tmp_path: Path, context: int, tokens: int,
                                                                  how: str) -> None:
    s = _scenario(tmp_path, context, tokens)
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    # the line compare gives: the key's line (7), the context and the least and largest values that work
    assert r.stderr.strip() == (
        f"Error: {s}:7: workloads[0].tokens_per_request: {tokens:,} {how} the context, {context} tokens, which holds "
        "a request's prompt and its generated tokens. tokens_per_request is the tokens generated per request, and "
        "planner takes the prompt as the rest of the context (context - tokens_per_request, at least 1 token): give "
        f"tokens_per_request: {context - 1} or less, or context: {tokens + 1} or more."), r.stderr
    assert "internal error" not in r.output
    assert not (tmp_path / "o").exists()


def test_the_api_raises_the_scenario_error_not_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        plan(_scenario(tmp_path, 1, 1))
    assert "tokens_per_request: 1 equals the context, 1 tokens" in str(caught.value)


def test_a_request_below_the_context_still_plans(tmp_path: Path) -> None:
    p = plan(_scenario(tmp_path, 512, 100))
    assert p.choice["gpu_id"]


def test_estimate_names_the_workloads_tokens_per_request(tmp_path: Path) -> None:
    from planner import estimate
    from planner.core.errors import InputError

    w = tmp_path / "w.yaml"
    w.write_text("model: llama-3.1-8b\ntask: infer\ncontext: 512\ntokens_per_request: 1024\n")
    with pytest.raises(InputError) as caught:
        estimate(workload=str(w), gpu="rtx-4090")
    # was "--context 512 leaves no room for a prompt token and an output token ... Give --context 2 or more"
    assert str(caught.value) == ("tokens_per_request: tokens_per_request 1,024 leaves no prompt token in the context "
                                 "of 512 tokens (a request's prompt and its output share the context). Give "
                                 "tokens_per_request 511 or less, or a context of 1025 or more.")
