"""framework_version: the release each training framework's mechanisms follow (issue 32, training half).

Each mechanism switch is tested twice: against the source where it changed (the derivation beside the
test) and, where one is published, against a run of that release (RELEASE_RUNS, with the source and the
quote beside it; reports/validation.md lists them by framework and release).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main as cli
from planner.core.errors import InputError
from planner.memory import estimate
from planner.memory.load_peaks import load_pool
from planner.memory.loss import RETURNED_LOGITS_NAME, loss_bytes, loss_spec, returned_logits_copy
from planner.memory.overheads import RuntimeOverheads, allocator_component
from planner.memory.saved import regime_for
from planner.workload.releases import FRAMEWORK_RELEASES, release_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_frameworks import arch_of, comp, workload  # noqa: E402

GB = 10**9


def _stack(est) -> dict[str, str]:
    return dict(est.stack)


# ----- the key: default stated, refusals --------------------------------------------------------------

@pytest.mark.parametrize("framework, current", [("unsloth", "2025.1.5"), ("torchtune", "0.5.0"),
                                                ("litgpt", "0.4.13.dev1"), ("transformers", "5.24.0"),
                                                ("fsdp", "5.24.0")])
def test_the_default_is_the_current_release_and_is_stated(framework, current):
    w = workload(framework=framework, method="lora")
    text = _stack(estimate(w))["framework release"]
    assert text.startswith(f"{FRAMEWORK_RELEASES[framework].name} {current} (default: the newest release modelled")
    assert w.train.framework_version is None


def test_json_states_the_release():
    res = CliRunner().invoke(cli, ["estimate", "--model", "llama-3.2-1b", "--task", "train", "--framework", "unsloth",
                                   "--method", "qlora", "--framework-version", "2024.10.1", "--json"])
    assert res.exit_code == 0, res.output
    import json
    stack = json.loads(res.output)["stack"]
    assert stack["framework release"].startswith("unsloth 2024.10.1; predates 2024.11.8: cut cross-entropy")


def _one_line(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stdout == "", result.output
    return lines[0]


def test_an_older_release_is_refused_naming_the_oldest_supported():
    line = _one_line(["estimate", "--model", "llama-3.2-1b", "--task", "train", "--framework", "unsloth",
                      "--method", "qlora", "--framework-version", "2024.3"])
    assert "unsloth 2024.3 is older than the oldest release planner models (2024.4)" in line
    line = _one_line(["estimate", "--model", "llama-3.2-1b", "--task", "train", "--framework", "transformers",
                      "--framework-version", "4.30.2"])
    # 4.31.0 is the first release with Llama 2's grouped K/V heads (num_key_value_heads) and the oldest modelled
    assert "transformers 4.30.2 is older than the oldest release planner models (4.31.0)" in line


def test_a_release_that_is_not_one_is_refused():
    line = _one_line(["estimate", "--model", "llama-3.2-1b", "--task", "train", "--framework-version", "latest"])
    assert "'latest' is not a release" in line and "e.g. '5.24.0'" in line


def test_a_yaml_number_is_refused_because_it_loses_trailing_zeros(tmp_path):
    # YAML reads 2024.10 as the float 2024.1: only quoted text names the release
    f = tmp_path / "w.yaml"
    f.write_text("model: llama-3.2-1b\ntask: train\nmethod: qlora\nframework: unsloth\nframework_version: 2024.10\n")
    msg = _one_line(["estimate", "--workload", str(f)])
    assert "read the unquoted framework_version as the number 2024.1" in msg and "framework_version: '2025.1.5'" in msg


def test_a_newer_release_is_modelled_as_the_current_one_and_says_so():
    assert release_text("unsloth", "2026.8.19") == ("unsloth 2026.8.19 (newer than the newest release modelled: "
                                                    "modelled as 2025.1.5)")


def test_workload_files_take_the_key(tmp_path):
    f = tmp_path / "w.yaml"
    f.write_text("name: old-unsloth\nmodel: llama-3.2-1b\ntask: train\nmethod: qlora\nframework: unsloth\n"
                 "framework_version: '2024.10.1'\nseq_len: 2048\n")
    res = CliRunner().invoke(cli, ["estimate", "--workload", str(f), "--json"])
    assert res.exit_code == 0, res.output
    assert "unsloth 2024.10.1; predates 2024.11.8" in res.output


# ----- Unsloth: the loss by release --------------------------------------------------------------------
#
# unsloth/models/llama.py CausalLM_fast_forward: 2024.11.7 (commit 892115606d) computes
# self.lm_head(hidden_states) and Fast_CrossEntropyLoss on the whole logits; 2024.11.8 (commit fa8e59eb1b,
# PR 1315) calls unsloth_zoo's fused_linear_cross_entropy (Apple's cut cross-entropy) whenever labels are
# given; 2024.12.4 (commit b9fe2588e5) keeps the logits again for bsz*q_len <= 1024.

@pytest.mark.parametrize("release, seq_len, impl", [
    ("2024.11.7", 512, "unsloth"), ("2024.11.7", 4096, "unsloth"),
    ("2024.11.8", 512, "cut"), ("2024.11.8", 4096, "cut"),
    ("2024.12.4", 512, "unsloth"), ("2024.12.4", 4096, "cut"),
    (None, 512, "unsloth"), (None, 4096, "cut"),
])
def test_unsloth_loss_follows_the_release(release, seq_len, impl):
    keys = {"framework_version": release} if release else {}
    t = workload(framework="unsloth", method="qlora", seq_len=seq_len, **keys).train
    assert loss_spec(t).impl == impl


def test_unsloth_before_cut_cross_entropy_keeps_the_whole_logits():
    # Fast_CrossEntropyLoss keeps the c-byte logits (it writes their gradient in place) and an fp32
    # log-sum-exp per token: T x (V x 2 + 4) bytes at least; Llama-3.1-8B, 4,096 tokens, V 128,256:
    # 4,096 x 256,516 = 1,050,689,536 B.
    arch = arch_of("llama-3.1-8b")
    old = workload("llama-3.1-8b", framework="unsloth", method="qlora", seq_len=4096, framework_version="2024.11.7")
    new = workload("llama-3.1-8b", framework="unsloth", method="qlora", seq_len=4096)
    regime = regime_for(old.train.recipe)
    b_old, _, _ = loss_bytes(arch, regime, loss_spec(old.train), tokens=4096)
    b_new, _, _ = loss_bytes(arch, regime, loss_spec(new.train), tokens=4096)
    assert b_old >= 4096 * (128_256 * 2 + 4)
    assert b_new < 4096 * 128_256 * 2 / 10  # no V-wide tensor per token


# Accelerate (prepare_model under the Trainer's fp16/bf16 flag, accelerate v0.30.1 accelerator.py L1356-1365)
# wraps the forward in convert_outputs_to_fp32: the returned 16-bit logits get a .float() copy while
# Fast_CrossEntropyLoss keeps them (planner.memory.loss module docstring). Llama-3.1-8B, 4,096 tokens:
# 4,096 x 128,256 x 4 B = 2,101,346,304 B; cut cross-entropy returns EMPTY_LOGITS (nothing to copy), and from
# 2024.12.4 a micro-batch of at most 1,024 tokens returns its logits again: 1,024 x 128,256 x 4 = 525,336,576 B.
@pytest.mark.parametrize("release, seq_len, expected", [
    ("2024.5", 2048, 4096 * 128_256 * 4), ("2024.11.7", 2048, 4096 * 128_256 * 4),
    ("2024.11.8", 2048, 0), ("2024.12.4", 2048, 0), (None, 2048, 0),
    (None, 512, 1024 * 128_256 * 4),
])
def test_unsloth_returned_logits_get_accelerates_fp32_copy(release, seq_len, expected):
    keys = {"framework_version": release} if release else {}
    est = estimate(workload("llama-3.1-8b", framework="unsloth", method="qlora", micro_batch=2, seq_len=seq_len,
                            **keys))
    got = [c for c in est.components if c.name == RETURNED_LOGITS_NAME]
    assert sum(c.bytes for c in got) == expected
    if expected:
        (c,) = got
        assert c.phase == "loss" and "convert_outputs_to_fp32" in c.source
    assert 4096 * 128_256 * 4 == 2_101_346_304 and 1024 * 128_256 * 4 == 525_336_576


def test_only_unsloths_own_loss_returns_logits_through_accelerate():
    arch = arch_of("llama-3.1-8b")
    for framework in ("transformers", "torchtune", "litgpt"):
        spec = loss_spec(workload("llama-3.1-8b", framework=framework, method="lora").train)
        assert returned_logits_copy(arch, spec, tokens=4096) is None, framework


# ----- torchtune: FSDP1 and the unchunked loss before 0.3.0 -------------------------------------------
#
# recipes/lora_finetune_distributed.py at v0.2.1: model = FSDP(module=model, auto_wrap_policy=
# utils.lora_fsdp_wrap_policy(...), sharding_strategy=FULL_SHARD, ...); recipes/configs/*.yaml at v0.2.1:
# loss: _component_: torch.nn.CrossEntropyLoss. v0.3.0: training.shard_model (fully_shard, PRs 1287 and
# 1517) and CEWithChunkedOutputLoss.

def test_torchtune_before_0_3_runs_fsdp1_and_the_whole_loss():
    t = workload(framework="torchtune", method="lora", gpus=2, framework_version="0.2.1").train
    assert (t.fsdp_version, t.zero, t.fsdp, t.loss_chunks) == (1, 3, 1, 0)
    assert loss_spec(t).impl == "model-upcast"
    t = workload(framework="torchtune", method="lora", gpus=2, framework_version="0.2.1", fsdp_version=1).train
    assert t.fsdp == 1


def test_torchtune_from_0_3_refuses_fsdp1_and_before_refuses_fsdp2():
    with pytest.raises(InputError) as err:
        workload(framework="torchtune", method="lora", gpus=2, fsdp_version=1)
    assert "not FSDP1, from release 0.3.0 on" in str(err.value)
    assert "framework_version: '0.2.1' (FSDP1)" in str(err.value)
    with pytest.raises(InputError) as err:
        workload(framework="torchtune", method="lora", gpus=2, fsdp_version=2, framework_version="0.2.1")
    assert "FSDP2 (fully_shard) came with 0.3.0" in str(err.value)
    current = workload(framework="torchtune", method="lora", gpus=2).train
    assert (current.fsdp_version, current.loss_chunks) == (2, 8)


# ----- published runs of a release ---------------------------------------------------------------------

UNSLOTH_LLAMA33_BLOG = (
    "https://unsloth.ai/blog/llama3-3 (December 2024), table 'Llama 3.3 (70B) max. context length': "
    "'GPU VRAM | Unsloth (+ Apple CCE) | Unsloth (Old) | Hugging Face+FA2 / 48 GB | 12,106 | 7,385 | OOM / 80 GB | "
    "89,389 | 48,447 | 6,916'; 'We tested Llama 3.3 (70B) Instruct on a 80GB A100 and did 4bit QLoRA on all linear "
    "layers (Q, K, V, O, gate, up and down) with rank = 32 with a batch size of 1. We padded all sequences to a "
    "certain maximum sequence length'")
UNSLOTH_LLAMA3_BLOG = (
    "https://unsloth.ai/blog/llama3 (April 23, 2024; Unsloth 2024.4, __version__ at commit 4a88539991): 'Llama-3 70b "
    "can now easily fit on a 48GB GPU card, allowing you to finetune on ~7K context lengths'; 'On a A100 80GB SXM "
    "machine, Unsloth allows 6x longer context lengths ... allowing you finetune on 48K sequence lengths vs 7.5K "
    "lengths. We can see below the VRAM vs context length data we experimentally gathered'")
#: github.com/unslothai/unsloth README.md at e3162dc5 (2025-01-14), 'Llama 3.1 (8B) max. context length' (the
#: Llama 3.3 blog's 8B table): (GPU VRAM in GB, Unsloth context length, Hugging Face + FA2 context length; None: OOM).
UNSLOTH_8B_CONTEXT_TABLE = [(8, 2_972, None), (12, 21_848, 932), (16, 40_724, 2_551), (24, 78_475, 5_789),
                            (40, 153_977, 12_264), (48, 191_728, 15_502), (80, 342_733, 28_454)]


def test_unsloths_context_tables_are_a_line_in_the_vram_column():
    # How the '48 GB' rows were obtained: each column of the 8B table lies within one token of the straight line
    # through its end rows (Unsloth 4,718.9 tokens per GB, HF + FA2 404.7), so every row is one line read at its
    # nominal VRAM, not a limit measured on a card of that size: the cards' CUDA totals are not a line in their
    # nominal sizes (A100 40GB 39.58 GiB, L40S 44.57 GiB, A100 80GB 79.58 GiB: 0.62 GiB per nominal GB from 40 to
    # 48, 1.00 from 40 to 80). The 70B table says it ran on an 80GB A100 (UNSLOTH_LLAMA33_BLOG).
    for col in (1, 2):
        rows = [(r[0], r[col]) for r in UNSLOTH_8B_CONTEXT_TABLE if r[col] is not None]
        (x0, n0), (x1, n1) = rows[0], rows[-1]
        for x, n in rows:
            assert abs(n - (n0 + (n1 - n0) * (x - x0) / (x1 - x0))) <= 1, (col, x)
    totals = {g: _catalog().gpu(g).cuda_total_bytes for g in ("a100-40gb-sxm", "l40s", "a100-80gb-sxm")}
    per_gb_to_48 = (totals["l40s"] - totals["a100-40gb-sxm"]) / 8
    per_gb_to_80 = (totals["a100-80gb-sxm"] - totals["a100-40gb-sxm"]) / 40
    assert per_gb_to_48 < 0.7 * per_gb_to_80


@dataclass(frozen=True)
class ReleaseRun:
    """A published largest context that trained on a card, for one framework release.

    release: the framework_version the run is predicted with; model: a catalog id (Llama-3.3-70B has
    Llama-3.1-70B's config.json: hidden 8192, 80 layers, 64 heads, 8 KV heads, MLP 28,672, vocab 128,256).
    """

    id: str
    framework: str
    release: str
    source: str
    model: str
    workload: dict
    gpu: str
    published_tokens: int
    xfail: str | None = None


RELEASE_RUNS = [
    # "Unsloth (Old)" is the release before cut cross-entropy (the blog contrasts the two): 2024.11.7. The same
    # figures appear, rounded, in the April 2024 Llama 3 blog (UNSLOTH_LLAMA3_BLOG: '~7K' on a 48GB card, '48K' on
    # an A100 80GB, for 2024.4), which the planner predicts alike (2024.4 has the same logits and loss).
    # Predicted 47,394 tokens (-2.2 %): at that length the end of the forward holds the NF4 base, the bf16
    # logits of 2024.11.7 and Accelerate's fp32 copy of them (planner.memory.loss returned_logits_copy),
    # 6 B x 128,256 per token.
    # The '48 GB' rows are compared with an L40S's CUDA total (44.57 GiB = 47.86e9 B), but no L40S ran them: the
    # blog ran on an 80GB A100 and its tables are a line in the VRAM column read at 48
    # (test_unsloths_context_tables_are_a_line_in_the_vram_column). Through the two published points of each
    # column (the unit taken as 1e9 B) the lines are 414,063 B per token above 40.04 GiB (cut cross-entropy) and
    # 779,309 B per token above 39.34 GiB (Old); the planner's are 423,817 and 882,543 B per token (the 10 %
    # allocator headroom included) above 40.62 GiB. At 48 GB, 10 % of the context is 0.47 GiB (cut cross-entropy)
    # and 0.54 GiB (Old) of the lines' memory, so the bound there holds the fixed memory to about 1 % of the card.
    # The unit is not settled: the same blog's 'Llama 3.3 (70B) finetuning fits in 41GB' (Alpaca, batch 2) is
    # below what the planner counts before any activation if read as 41e9 B (38.18 GiB; the NF4 base and the fp32
    # adapters are 38.35 GiB) and above its 40.67 GiB allocated at 2 x 512 tokens if read as GiB, while the lines
    # read as GiB would put 1.7-2.4 GiB more than the planner at no tokens; at 1,024 tokens the lines are 1.9-2.4
    # GiB above '41GB' under either unit, so these rows cannot pin a fixed-memory mechanism.
    ReleaseRun("unsloth-old-llama33-70b-80gb", "unsloth", "2024.11.7", UNSLOTH_LLAMA33_BLOG, "llama-3.1-70b",
               {"method": "qlora", "lora_rank": 32, "micro_batch": 1}, "a100-80gb-sxm", 48_447),
    ReleaseRun("unsloth-old-llama33-70b-48gb", "unsloth", "2024.11.7", UNSLOTH_LLAMA33_BLOG, "llama-3.1-70b",
               {"method": "qlora", "lora_rank": 32, "micro_batch": 1}, "l40s", 7_385,
               xfail="predicted largest context 4,797 tokens vs 7,385 published (-35 %) on the L40S's 44.57 GiB; "
                     "the row was not run on a 48 GB card: the blog tested on an 80GB A100 and its context tables "
                     "are a line in the VRAM column read at 48 GB. Read as 48e9 B the prediction is 4,962 tokens "
                     "(-33 %), as 48 GiB (Unsloth's banner prints GiB as 'GB': llama.py L1549 at 400d9955) 8,972 "
                     "(+21 %). Against the line through the published points the planner counts 1.28 GiB more at "
                     "no tokens and 13 % more per token (882,543 vs 779,309 B: 6 B x 128,256 for the logits and "
                     "Accelerate's fp32 copy, plus the 10 % allocator headroom). No Unsloth mechanism that frees "
                     "memory for this run was found: the embeddings and lm_head go to disk only when trained "
                     "(get_peft_model, llama.py L2151-2176 at 400d9955), the LoRA adapters are not cast (fp32 from "
                     "peft), the NF4 base is double-quantized (L1628) as counted"),
    ReleaseRun("unsloth-cce-llama33-70b-80gb", "unsloth", "2025.1.5", UNSLOTH_LLAMA33_BLOG, "llama-3.1-70b",
               {"method": "qlora", "lora_rank": 32, "micro_batch": 1}, "a100-80gb-sxm", 89_389,
               xfail="predicted largest context 98,693 tokens vs 89,389 published (+10.4 %) on the A100's 79.58 GiB: "
                     "just past the bound; the release's Llama 3.1 8B runs (tests/test_published.py) are 7.7-8.6 % "
                     "above the published contexts too. The blog's tables are a line in the VRAM column: read as "
                     "80e9 B this row predicts 85,837 tokens (-4.0 %) and the 8B rows +0.2 to +0.9 % (24-80 GB), "
                     "but the Old row at 80 GB then predicts 41,221 (-14.9 %); as 80 GiB, 99,757 (+11.6 %)"),
    ReleaseRun("unsloth-cce-llama33-70b-48gb", "unsloth", "2025.1.5", UNSLOTH_LLAMA33_BLOG, "llama-3.1-70b",
               {"method": "qlora", "lora_rank": 32, "micro_batch": 1}, "l40s", 12_106,
               xfail="predicted largest context 9,990 tokens vs 12,106 published (-17 %) on the L40S's 44.57 GiB; "
                     "the row was not run on a 48 GB card (the blog tested on an 80GB A100; its tables are a line "
                     "in the VRAM column read at 48 GB). Read as 48e9 B the prediction is 10,333 tokens (-14.6 %), "
                     "as 48 GiB 18,685 (+54 %). Against the line through the published points the planner counts "
                     "0.59 GiB more at no tokens and 2.4 % more per token (423,817 vs 414,063 B); no Unsloth "
                     "mechanism that frees memory for this run was found (unsloth-old-llama33-70b-48gb)"),
]
#: A published largest context is held to this bound (the Unsloth context table's runs, tests/test_published.py,
#: are within 9 %).
RELEASE_TOLERANCE = 0.10


def _catalog():
    from test_published import _catalog as cat
    return cat()


def predicted_largest_context(run: ReleaseRun, lo: int = 256, hi: int = 400_000, total: int | None = None) -> int:
    """The largest seq_len whose per-GPU total fits the card's CUDA total, or ``total`` bytes when given
    (bisection; fits is monotone in seq_len)."""
    total = _catalog().gpu(run.gpu).cuda_total_bytes if total is None else total

    def fits(n: int) -> bool:
        w = workload(run.model, framework=run.framework, framework_version=run.release, seq_len=n, **run.workload)
        return estimate(w).per_gpu_total_bytes <= total

    assert fits(lo)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _params():
    return [pytest.param(r, id=r.id, marks=[pytest.mark.xfail(strict=True, reason=r.xfail)] if r.xfail else [])
            for r in RELEASE_RUNS]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("run", _params())
def test_release_run_largest_context(run: ReleaseRun):
    got = predicted_largest_context(run)
    err = got / run.published_tokens - 1
    assert abs(err) <= RELEASE_TOLERANCE, (f"{run.id} ({run.source}): published {run.published_tokens:,} tokens, "
                                           f"predicted {got:,} ({err:+.1%})")


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_release_run_reasons_give_the_current_numbers():
    for run in RELEASE_RUNS:
        if run.xfail:
            assert f"{predicted_largest_context(run):,} tokens" in run.xfail, run.id
    for peak in RELEASE_PEAKS:
        if peak.xfail:
            unit = {"GB": GB, "GiB": 2**30}[peak.unit]
            assert f"{predicted_peak_bytes(peak) / unit:.2f} {peak.unit}" in peak.xfail, peak.id


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_release_run_reasons_give_the_nominal_vram_readings():
    # the Llama 3.3 rows' reasons quote the prediction with the table's 'X GB' read as X x 1e9 B and as X GiB
    # (test_unsloths_context_tables_are_a_line_in_the_vram_column); the 80 GB cut cross-entropy row also quotes
    # the Old 80 GB row read as 80e9 B
    runs = {r.id: r for r in RELEASE_RUNS}
    quoted = [("unsloth-old-llama33-70b-48gb", "unsloth-old-llama33-70b-48gb", 48, (GB, 2**30)),
              ("unsloth-cce-llama33-70b-48gb", "unsloth-cce-llama33-70b-48gb", 48, (GB, 2**30)),
              ("unsloth-cce-llama33-70b-80gb", "unsloth-cce-llama33-70b-80gb", 80, (GB, 2**30)),
              ("unsloth-cce-llama33-70b-80gb", "unsloth-old-llama33-70b-80gb", 80, (GB,))]
    for reason_of, run_id, nominal, units in quoted:
        for unit in units:
            got = predicted_largest_context(runs[run_id], total=nominal * unit)
            assert f"{got:,}" in runs[reason_of].xfail, (reason_of, run_id, unit)


# ----- torchtune 0.1: NF4 conversion of the whole weight at load ----------------------------------------
#
# planner.memory.load_peaks: torchao 0.1 (pinned by torchtune v0.1.0 and v0.1.1) quantizes a whole weight at
# once: per value 2 B (bf16 copy on the GPU) + 2 B (scaled) + 32 B ((value - nf4): 16 bf16 levels) + 32 B
# (its abs). Llama-2-7B's largest layer weight is the MLP's, 11,008 x 4,096 = 45,088,768 values:
# 68 x 45,088,768 = 3,066,036,224 B while the model loads.

def test_torchtune_0_1_qlora_has_the_whole_weight_nf4_load_peak():
    def load(release):
        est = estimate(workload("llama-2-7b", framework="torchtune", method="qlora", framework_version=release))
        return [c for c in est.components if c.phase == "load" and c.where == "gpu"]
    (old,) = load("0.1.0")
    assert old.bytes == 68 * 11_008 * 4_096 == 3_066_036_224
    assert load("0.2.0") == [] and load("0.5.0") == []
    lora = estimate(workload("llama-2-7b", framework="torchtune", method="lora", framework_version="0.1.0"))
    assert not [c for c in lora.components if c.phase == "load" and c.where == "gpu"]


TORCHTUNE_QLORA_TUTORIAL = (
    "github.com/pytorch/torchtune docs/source/tutorials/qlora_finetune.rst at v0.1.0 (commit 9e2c9c06f, "
    "2024-04-15; torchao==0.1): 'Memory Stats after model init:: GPU peak memory allocation: 13.96 GB / GPU "
    "peak memory reserved: 13.98 GB / GPU peak memory active: 13.96 GB' (LoRA) and the table 'Finetuning method "
    "| Peak memory reserved, model init | Peak memory reserved, training / LoRA 13.98 GB 15.57 GB / QLoRA 9.13 GB "
    "9.29 GB'; configs recipes/configs/llama2/7B_lora_single_device.yaml (q, v; r 8) and 7B_qlora_single_device."
    "yaml (q, k, v, output projections and the MLP; r 8; torch AdamW; activation checkpointing); GB = 1e9 B "
    "(torchtune utils/memory.py memory_stats_log)")


@dataclass(frozen=True)
class ReleasePeak:
    """A published memory figure of one framework release.

    quantity: 'init' (the peak while the model is built and loaded: every always-live tensor but the
    optimizer's states, with the load-phase components) or 'peak' (the run's peak).
    published_gb: GB (1e9 B); kind: what the publication measured ('allocated' or 'reserved'; a reserved
    figure is compared with the predicted allocated bytes plus the allocator headroom, predicted_peak_bytes).
    """

    id: str
    framework: str
    release: str
    source: str
    model: str
    workload: dict
    quantity: str
    published_gb: float
    kind: str
    xfail: str | None = None
    unit: str = "GB"

    @property
    def published_bytes(self) -> float:
        return self.published_gb * {"GB": GB, "GiB": 2**30}[self.unit]


_TT_QLORA = {"method": "qlora", "lora_rank": 8, "lora_targets": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                                                 "up_proj", "down_proj"], "optimizer": "adamw",
             "micro_batch": 2, "seq_len": 512}
RELEASE_PEAKS = [
    ReleasePeak("torchtune-0.1-tutorial-lora-init", "torchtune", "0.1.0", TORCHTUNE_QLORA_TUTORIAL, "llama-2-7b",
                {"method": "lora", "lora_rank": 8, "lora_targets": ["q_proj", "v_proj"]}, "init", 13.96, "allocated"),
    # Reserved by mechanism: planner.memory.nf4_replay replays the build (one layer converted to NF4, then
    # deep-copied 32 times: each copy dequantizes and re-quantizes every NF4 weight, torchtune's NF4 clone)
    # and the load (inplace_copy quantizes each checkpoint weight again) through the caching allocator's
    # rules (planner.memory.caching_allocator): 9,133,096,960 B reserved in 116 segments (9.13 GB, +0.0 %),
    # peak allocated 7.35 GB, no fitted factor. The same replay of the LoRA build gives 13.96 GB allocated,
    # 13.98 GB reserved (the row above's published log). The pool is set during the build: the load adds
    # no segment.
    ReleasePeak("torchtune-0.1-tutorial-qlora-init", "torchtune", "0.1.0", TORCHTUNE_QLORA_TUTORIAL, "llama-2-7b",
                _TT_QLORA, "init", 9.13, "reserved"),
    # The step (batch 2, checkpointing, at most 4.76 GB allocated up to alpaca_dataset's max_seq_len of 512)
    # fits the pool the load left, which the allocator never releases: 9.13 GB reserved predicted (-1.7 %);
    # the run's extra 0.16 GB (segments the step's requests found no cached block for) is not replayed.
    ReleasePeak("torchtune-0.1-tutorial-qlora-train", "torchtune", "0.1.0", TORCHTUNE_QLORA_TUTORIAL, "llama-2-7b",
                _TT_QLORA, "peak", 9.29, "reserved"),
]
UNSLOTH_NOTEBOOKS = (
    "github.com/unslothai/notebooks nb/{} at bdda2efc (2026-08-18), the outputs committed with it: 'Unsloth {}' in "
    "the load cell's banner, 'GPU = Tesla T4', '{} GB of memory reserved.' before trainer.train() and 'Peak reserved "
    "memory = {} GB.' after it (torch.cuda.max_memory_reserved() / 1024**3: GiB); model {}, max_seq_length 2048, "
    "load_in_4bit, dtype None (fp16 on a T4), get_peft_model r 16 on q/k/v/o/gate/up/down, dropout 0, "
    "use_gradient_checkpointing 'unsloth', per_device_train_batch_size 2, packing False, optim 'adamw_8bit'")
_NB = {"method": "qlora", "recipe": "pure-fp16", "lora_rank": 16, "micro_batch": 2, "optimizer": "adamw-8bit"}
#: (notebook, release, catalog model (Llama-3-8B has Llama-3.1-8B's shapes), model id, start GiB, peak GiB)
_NOTEBOOK_RUNS = [
    ("Llama3.1_(8B)-Alpaca.ipynb", "2024.8", "llama-3.1-8b", "unsloth/Llama-3.1-8B", 5.984, 7.922),
    ("Llama3_(8B)-Alpaca.ipynb", "2024.5", "llama-3.1-8b", "unsloth/llama-3-8b-bnb-4bit", 5.594, 7.535),
    ("Llama3_(8B)-Conversational.ipynb", "2024.5", "llama-3.1-8b", "unsloth/llama-3-8b-Instruct-bnb-4bit", 5.594,
     9.549),
    ("Qwen2.5_(7B)-Alpaca.ipynb", "2024.9", "qwen2.5-7b", "unsloth/Qwen2.5-7B", 5.764, 7.893),
    ("Llama3.2_(1B_and_3B)-Conversational.ipynb", "2024.10.0", "llama-3.2-3b", "unsloth/Llama-3.2-3B-Instruct",
     2.635, 6.531),
]
#: Why each notebook run's figures miss by more than 10 % (numbers as predicted; the first two of each tuple:
#: the init row, then the peak row; None: within 10 %). Each peak counts the release's whole 16-bit logits and
#: Accelerate's fp32 copy of them (planner.memory.loss returned_logits_copy: the Trainer's fp16 flag wraps the
#: forward in convert_outputs_to_fp32), 6 B per token and vocabulary entry at the end of the forward.
_NOTEBOOK_MISSES = {
    # within 10 % (-5.9 %) at the 2,048-token bound: the guanaco turns reach max_seq_length
    "Llama3_(8B)-Conversational.ipynb": (None, None),
    # Unsloth 2024.8-2024.10.0 on Transformers 4.44.2 (the load banners of these three notebooks in the outputs
    # committed at c011de37, 2025-01-10; at bdda2efc the Llama3.2 load cell has no output, and its release is in
    # get_peft_model's 'Unsloth 2024.10.0 patched 28 layers') (planner.memory.bnb_load_replay): each init row
    # is the replayed 4-bit load's max_memory_reserved (the weights, one 16-bit RoPE cos/sin pair per layer in a
    # 20 MiB segment each, the LoRA adapters): Llama3.2-3B 2.768 GiB (+5.0 %; 2.19 GiB, -17 %, before the caches were counted),
    # Llama3.1-8B 6.113 (+2.2 %), Qwen2.5-7B 5.857 (+1.6 %). The caches (0.45 GiB for the 3B) stay
    # allocated through training: the 3B's peak is then 6.07 GiB (-7.1 %; 5.57 GiB, -15 %, before)
    "Llama3.2_(1B_and_3B)-Conversational.ipynb": (None, None),
    "Llama3.1_(8B)-Alpaca.ipynb": (None, "predicted 9.56 GiB"),
    "Qwen2.5_(7B)-Alpaca.ipynb": (None, "predicted 9.92 GiB"),
    "Llama3_(8B)-Alpaca.ipynb": (None, "predicted 8.99 GiB"),
}
_NB_INIT_WHY = ("{pred} reserved (allocated plus the allocator headroom) vs {pub} GiB reserved after loading ({err}): the load leaves {gap:.2f} GiB more "
                "in PyTorch's pool than the model's tensors (the 4-bit load is replayed only for Unsloth "
                "2024.8-2024.10.0: planner.memory.bnb_load_replay)")
_NB_PEAK_WHY = ("{pred} reserved (allocated plus the allocator headroom) at the 2,048-token bound vs {pub} GiB "
                "reserved ({err}): the padded batch lengths are not published, so the prediction is at "
                "max_seq_length, an upper bound (with packing False each batch of 2 is padded to its longer "
                "sequence, at most max_seq_length): the run's real lengths can only lower the "
                "prediction, so the gap is a mechanism not modelled, not the inputs; this release's whole 16-bit "
                "logits and Accelerate's fp32 copy of them are counted, the run's pool after loading adds "
                "{gap:.2f} GiB (the init row; the model is quantized from its 16-bit checkpoint as it loads), with "
                "which the prediction would be {with_pool:.2f} GiB ({err_pool}), and the rest is not explained")
_NB_BOUND_WHY = ("{pred} reserved (allocated plus the allocator headroom) at the 2,048-token bound vs {pub} GiB "
                 "reserved ({err}): above the measurement, as a bound at max_seq_length must be "
                 "(test_a_notebook_bound_is_not_below_its_run checks that): the run's Alpaca batches (packing "
                 "False, each batch of 2 padded to its longer sequence) are shorter, and their lengths are not "
                 "published; at the bound the 16-bit logits and Accelerate's fp32 copy of them are {logits:.2f} "
                 "GiB of the prediction and scale with the batch's length. The same model and release on the "
                 "Conversational notebook, whose turns reach the bound, is within 6 %")


def _notebook_peaks() -> list[ReleasePeak]:
    out = []
    for nb, release, model, hub, start, peak in _NOTEBOOK_RUNS:
        src = UNSLOTH_NOTEBOOKS.format(nb, release, start, peak, hub)
        stem = nb.removesuffix(".ipynb")
        init_miss, peak_miss = _NOTEBOOK_MISSES[nb]
        init = ReleasePeak(f"unsloth-{release}-nb-{stem}-init", "unsloth", release, src, model,
                           {**_NB, "seq_len": 2048}, "init", start, "reserved", unit="GiB")
        pred_init = predicted_peak_bytes(init) / 2**30
        gap = start - pred_init
        fill = dict(gap=gap)
        if init_miss:
            init = replace(init, xfail=_NB_INIT_WHY.format(pred=init_miss, pub=start, err=f"{pred_init / start - 1:+.0%}",
                                                           **fill))
        row = ReleasePeak(f"unsloth-{release}-nb-{stem}-peak", "unsloth", release, src, model,
                          {**_NB, "seq_len": 2048}, "peak", peak, "reserved", unit="GiB")
        if peak_miss:
            pred = predicted_peak_bytes(row) / 2**30
            err = f"{pred / peak - 1:+.0%}"
            if pred > peak:
                row = replace(row, xfail=_NB_BOUND_WHY.format(pred=peak_miss, pub=peak, err=err,
                                                              logits=_logits_gib(row)))
            else:
                row = replace(row, xfail=_NB_PEAK_WHY.format(pred=peak_miss, pub=peak, err=err, with_pool=pred + gap,
                                                             err_pool=f"{(pred + gap) / peak - 1:+.0%}", **fill))
        out += [init, row]
    return out


def _logits_gib(peak: ReleasePeak) -> float:
    """GiB of the logits and Accelerate's fp32 copy of them in ``peak``'s estimate."""
    est = estimate(workload(peak.model, framework=peak.framework, framework_version=peak.release, **peak.workload))
    return sum(c.bytes for c in est.components if c.name in ("logits and loss", RETURNED_LOGITS_NAME)) / 2**30


#: A published figure is held to this bound (tests/test_published.py's bound for framework runs).
PEAK_TOLERANCE = 0.10


def predicted_peak_bytes(peak: ReleasePeak) -> int:
    """The predicted bytes per GPU of ``peak``'s quantity, as the publication measured it: allocated
    (``torch.cuda.max_memory_allocated``), or reserved (``max_memory_reserved``: the allocated peak plus the
    caching allocator's headroom, planner.memory.overheads.allocator_component, the estimate's own rule: its
    default fraction of the allocated bytes beyond the weights; and at least the pool a replayed load leaves,
    planner.memory.load_peaks.load_pool: torchtune 0.1's NF4 build and load, Unsloth 2024.8-2024.10.0's 4-bit
    load, since the allocator releases nothing afterwards)."""
    w = workload(peak.model, framework=peak.framework, framework_version=peak.release, **peak.workload)
    est = estimate(w)
    weights = sum(c.bytes for c in est.gpu_components() if c.kind == "allocated"
                  and c.name.startswith(("weights", "gathered parameters")))
    if peak.quantity == "init":
        got = sum(c.bytes for c in est.gpu_components() if c.kind == "allocated" and (
            c.phase == "load" or (not c.phase and c.name.startswith(("weights", "LoRA adapter weights",
                                                                     "model buffers")))))
    else:
        got = est.per_gpu_allocated_bytes
    if peak.kind == "reserved":
        got += allocator_component(RuntimeOverheads(), got, weights).bytes
        pool = load_pool(w.architecture, w.train)
        got = max(got, pool.reserved if pool else 0)
    return got


RELEASE_PEAKS += _notebook_peaks()

# ----- torchtune before 0.3.0: the FSDP1 distributed recipes' published peaks ----------------------------
# The README shipped with each release (the wheel's METADATA on PyPI) has a table of peak memory per GPU of
# the distributed recipes, which ran on FSDP1 (FULL_SHARD) before 0.3.0 (planner.workload.releases; the LoRA
# recipe moved to FSDP2 in PR #1517). Neither table names the allocator statistic; torchtune's README before
# 0.1.0 said "Peak memory per GPU is as reported by torch.cuda.max_memory_reserved()", so both are compared as
# reserved. Every row misses by more than 10 % and none is explained: each is a strict xfail that quotes the
# prediction, and reports/validation.md lists them under "past 10 %".
TT_README_021 = (
    "torchtune 0.2.1 README (PyPI torchtune-0.2.1 wheel METADATA; the table of PR #955, 'Tokens/sec and Peak Memory "
    "Usage for Llama2 7B models for a BS of 4 and Seq Length of 2048 ... Llama2 70B models for a BS of 4 and Seq "
    "Length of 4096'): '| 2 x RTX 4090 | LoRA | Llama2-7B | Batch Size = 4, Seq Length = 2048 | 16.2 GB | 2768 |', "
    "'| 4 x RTX 4090 | Full finetune | Llama2-7B | Batch Size = 4, Seq Length = 2048 | 24.1 GB | 1388 |', "
    "'| 8 x A100 | LoRA | Llama2-70B | Batch Size = 4, Seq Length = 4096 | 26.4 GB | 3384 |'; configs at 0.2.1: "
    "llama2/7B_lora.yaml (q, v; r 8; torch AdamW; bf16; enable_activation_checkpointing False), 7B_full.yaml "
    "(AdamW, bf16, checkpointing True), 70B_lora.yaml (q, k, v; r 16; AdamW; checkpointing True); GB = 1e9 B "
    "(torchtune utils/memory.py: max_memory_reserved(device) / 1e9)")
TT_README_011 = (
    "torchtune 0.1.1 README (PyPI torchtune-0.1.1 wheel METADATA), 'This table captures the minimum memory "
    "requirements for our different recipes using the associated configs': '| 2 x RTX 4090 | LoRA | "
    "lora_finetune_distributed (recipes/configs/llama2/7B_lora.yaml) | Llama2-7B | 20.95 GB |' and '| 4 x RTX 4090 "
    "| Full finetune | full_finetune_distributed (recipes/configs/llama2/7B_full.yaml) | Llama2-7B | 22.9 GB |'; "
    "configs at 0.1.1: 7B_lora (q, v; r 8; AdamW; bf16; batch_size 2; checkpointing False; alpaca_cleaned_dataset), "
    "7B_full (AdamW; bf16; batch_size 2; checkpointing True; alpaca_dataset); both datasets cut at max_seq_len 512 "
    "(torchtune/datasets/_alpaca.py at 0.1.1), batches padded to their longest sample")
_TT_LORA7 = {"method": "lora", "lora_rank": 8, "lora_targets": ["q_proj", "v_proj"], "optimizer": "adamw"}
#: (id, release, source, model, workload, published GB, why it is not held to 10 % ({pred}, {err} filled in))
_TT_FSDP1_ROWS = [
    ("torchtune-0.2.1-readme-lora-2x4090-peak", "0.2.1", TT_README_021, "llama-2-7b",
     {**_TT_LORA7, "gpus": 2, "micro_batch": 4, "seq_len": 2048, "checkpointing": "full"}, 16.2,
     "predicted {pred} reserved vs 16.2 GB published ({err}). The README gives only batch 4 x 2,048 tokens: the "
     "config's checkpointing is off, which the estimate puts at 52.05 GB reserved, past the RTX 4090's 24 GB, so "
     "the row is sized with it on; the loss path (whole fp32 logits before 0.3.0) and FSDP1's buffers are counted. "
     "The remaining gap is not attributed"),
    ("torchtune-0.2.1-readme-full-4x4090-peak", "0.2.1", TT_README_021, "llama-2-7b",
     {"method": "full", "optimizer": "adamw", "gpus": 4, "micro_batch": 4, "seq_len": 2048, "checkpointing": "full"},
     24.1, "predicted {pred} reserved vs 24.1 GB published ({err}), the same figure as the README's single-GPU "
     "full finetune with a paged 8-bit optimizer, and close to the card's 24 GB: FSDP1 full finetuning's own "
     "memory beyond sharded weights, gradients and AdamW states (flat-parameter copies, fragmentation) is not "
     "attributed"),
    ("torchtune-0.2.1-readme-lora70b-8xa100-peak", "0.2.1", TT_README_021, "llama-2-70b",
     {"method": "lora", "lora_rank": 16, "lora_targets": ["q_proj", "k_proj", "v_proj"], "optimizer": "adamw",
      "gpus": 8, "micro_batch": 4, "seq_len": 4096, "checkpointing": "full"}, 26.4,
     "predicted {pred} reserved vs 26.4 GB published ({err}): the weight shard (70B x 2 B / 8, 17.2 GB) and the "
     "layer checkpoints of 4 x 4,096 tokens (80 layers x 8,192 x 2 B each, 21.5 GB) already exceed the figure, so "
     "the run cannot have held 4 x 4,096 tokens per GPU as the estimate sizes them (unless 'Batch Size = 4' is the "
     "global batch over the 8 GPUs, which the README does not say); it states no more of the run (packing, "
     "sequence lengths reached). Not explained"),
    ("torchtune-0.1.1-readme-lora-2x4090-peak", "0.1.1", TT_README_011, "llama-2-7b",
     {**_TT_LORA7, "gpus": 2, "micro_batch": 2, "seq_len": 512, "checkpointing": "none"}, 20.95,
     "predicted {pred} reserved vs 20.95 GB published ({err}), at the 512-token bound of the config's batches "
     "(an upper bound for the activations and logits): the 7.4 GB the run held beyond it is not attributed (0.1.x "
     "initialises the model on rank 0's CPU and broadcasts it through FSDP1's sync_module_states, PR #514; that "
     "load is not replayed)"),
    ("torchtune-0.1.1-readme-full-4x4090-peak", "0.1.1", TT_README_011, "llama-2-7b",
     {"method": "full", "optimizer": "adamw", "gpus": 4, "micro_batch": 2, "seq_len": 512, "checkpointing": "full"},
     22.9, "predicted {pred} reserved vs 22.9 GB published ({err}) at the 512-token bound: FSDP1 full "
     "finetuning's memory beyond sharded weights, gradients and AdamW states is not attributed"),
]


def _tt_fsdp1_peaks() -> list[ReleasePeak]:
    out = []
    for rid, release, src, model, wl, pub, why in _TT_FSDP1_ROWS:
        row = ReleasePeak(rid, "torchtune", release, src, model, wl, "peak", pub, "reserved")
        pred = predicted_peak_bytes(row) / GB
        out.append(replace(row, xfail=why.format(pred=f"{pred:.2f} GB", err=f"{pred / pub - 1:+.0%}")))
    return out


RELEASE_PEAKS += _tt_fsdp1_peaks()

#: llama-recipes (now llama-cookbook) PR 41, 2023-07-25 (Transformers 4.31.0 of 2023-07-18, the first with Llama 2,
#: was the newest release then), a run with use_cache on (the config's default; PR 165 turned it off six weeks
#: later). The recipe's defaults as read at llama-recipes commit 4767f09 (configs/peft.py, fsdp.py, training.py).
PR41 = ("https://github.com/meta-llama/llama-cookbook/pull/41 ('Improve FSDP LoRA Memory Usage', 2023-07-25): "
        "'torchrun --nnodes 1 --nproc_per_node 4 llama_finetuning.py --enable_fsdp --use_peft --peft_method lora "
        "--model_name llama-2-7b-hf/ --pure_bf16' ... 'In the end, this only uses 15.22 GB peak active memory' "
        "(4 40 GB A100s; 'loss = model(*batch).loss' drops the logits and past_key_values after forward); "
        "llama-recipes configs: lora_config r 8, q_proj and v_proj, dropout 0.05; fsdp_config "
        "fsdp_activation_checkpointing True (apply_fsdp_checkpointing: torch checkpoint_wrapper per decoder layer), "
        "FULL_SHARD; batch_size_training 4; samsum concatenated in 2,048-token chunks (Concatenator)")
RELEASE_PEAKS.append(ReleasePeak(
    "llama-recipes-pr41-fsdp-lora-peak", "fsdp", "4.31.0", PR41, "llama-2-7b",
    {"method": "lora", "lora_rank": 8, "lora_targets": ["q_proj", "v_proj"], "lora_dropout": 0.05,
     "recipe": "pure-bf16", "gpus": 4, "zero": 3, "micro_batch": 4, "seq_len": 2048, "checkpointing": "full",
     "checkpoint_wrapper": True},
    # 'peak active' counts the allocated blocks (PyTorch memory stats 'active_bytes'): compared as allocated.
    # Predicted 14.44 GB (-5.1 %), 4.29 GB of it the returned KV cache; with use_cache off 11.57 GB (-24 %).
    "peak", 15.22, "allocated"))


@pytest.mark.parametrize("peak", [pytest.param(p, id=p.id, marks=[pytest.mark.xfail(strict=True, reason=p.xfail)]
                                               if p.xfail else []) for p in RELEASE_PEAKS])
def test_release_peak(peak: ReleasePeak):
    got = predicted_peak_bytes(peak)
    err = got / peak.published_bytes - 1
    assert abs(err) <= PEAK_TOLERANCE, (f"{peak.id} ({peak.source}): published {peak.published_gb} {peak.unit} "
                                        f"{peak.kind}, predicted {got / GB:.2f} GB ({err:+.1%})")


def test_a_notebook_bound_is_not_below_its_run():
    # A peak predicted at max_seq_length for a run whose padded lengths are shorter and unpublished is an
    # upper bound: it must not be below the measurement (the Alpaca rows, whose two-sided check is an xfail).
    rows = [p for p in RELEASE_PEAKS if p.id.startswith("unsloth-") and "Alpaca-peak" in p.id]
    assert len(rows) == 3
    for p in rows:
        assert predicted_peak_bytes(p) >= p.published_bytes, p.id


def test_an_old_torchtunes_own_fsdp1_gives_no_warning_on_one_gpu():
    # torchtune 0.2.1 shards with FSDP1 by its own code (the release's default, not a user's choice): one GPU
    # runs no sharding, and nothing the user set is worth a warning
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "train", "--method", "qlora",
                                  "--framework", "torchtune", "--framework-version", "0.2.1"])
    assert r.exit_code == 0, r.output
    assert "shards nothing" not in r.output


# ----- Transformers: the KV cache a training forward returns (use_cache), 4.31.0 on ---------------------
# The rule and its sources: planner/memory/train_cache.py (modeling_llama.py at v4.31.0, v4.35.2, v4.36.0;
# integrations/sdpa_attention.py at v4.53.3 and v4.54.0; the CPU probe tests/data/validation/
# kv_cache_training_probe.py).

CACHE = "KV cache returned by forward (use_cache)"


def _cache_bytes(est) -> int:
    return sum(c.bytes for c in est.components if c.name == CACHE)


def _llama_cache(model: str, **keys):
    return estimate(workload(model, framework=keys.pop("framework", "transformers"), micro_batch=2, seq_len=1024,
                             **keys))


# Llama-2-7B: 32 layers, 32 K/V heads (no grouping) of 128; Llama-3.2-1B: 16 layers, 8 K/V heads of 64
# under 32 query heads. 2 (K, V) x L x b 2 x s 1,024 x kv x head_dim x 2 B (bf16 compute):
L2_CACHE = 2 * 32 * 2 * 1024 * 32 * 128 * 2
L32_CACHE = 2 * 16 * 2 * 1024 * 8 * 64 * 2


@pytest.mark.parametrize("model, release, attention, ckpt, wrapper, expected", [
    # eager (the default before 4.36.0): torch.matmul saves reshaped copies, the whole cache is extra
    ("llama-2-7b", "4.35.2", None, "none", False, L2_CACHE),
    ("llama-3.2-1b", "4.35.2", None, "none", False, L32_CACHE),
    # Transformers' own gradient checkpointing turns use_cache off (v4.35.2 L893-898)
    ("llama-2-7b", "4.35.2", None, "full", False, 0),
    # a checkpoint wrapper leaves it on and saves only the layers' inputs: all extra, every release
    ("llama-2-7b", "4.35.2", None, "full", True, L2_CACHE),
    ("llama-2-7b", "5.24.0", None, "full", True, L2_CACHE),
    # SDPA from 4.36.0: full multi-head attention saves the cache's own K and V; grouped heads save
    # repeat_kv's copies until SDPA's enable_gqa (4.54.0)
    ("llama-2-7b", "4.36.0", None, "none", False, 0),
    ("llama-3.2-1b", "4.36.0", None, "none", False, L32_CACHE),
    ("llama-3.2-1b", "4.53.3", None, "none", False, L32_CACHE),
    ("llama-3.2-1b", "4.54.0", None, "none", False, 0),
    ("llama-3.2-1b", "5.24.0", None, "none", False, 0),
    # eager in a current release: still reshaped copies
    ("llama-3.2-1b", "5.24.0", "eager", "none", False, L32_CACHE),
])
def test_the_training_kv_cache_is_counted_where_autograd_does_not_hold_it(model, release, attention, ckpt, wrapper,
                                                                          expected):
    keys = {"framework_version": release, "checkpointing": ckpt, "method": "lora"}
    if attention:
        keys["attention"] = attention
    if wrapper:
        keys["checkpoint_wrapper"] = True
    est = _llama_cache(model, **keys)
    assert _cache_bytes(est) == expected
    if expected:
        # alive at the end of forward, with the loss; freed with the model's output before backward
        c = [c for c in est.components if c.name == CACHE][0]
        assert c.phase == ("loss" if ckpt == "full" else "forward-backward")
    off = _llama_cache(model, use_cache=False, **keys)
    assert _cache_bytes(off) == 0
    assert off.per_gpu_allocated_bytes <= est.per_gpu_allocated_bytes


def test_use_cache_is_stated_and_defaults_per_framework():
    est = _llama_cache("llama-2-7b", method="lora")
    assert _stack(est)["use_cache (KV cache returned by forward)"].startswith("returned, but sdpa attention saves")
    est = _llama_cache("llama-2-7b", method="lora", framework_version="4.35.2")
    assert _stack(est)["use_cache (KV cache returned by forward)"].startswith("on, counted: eager attention saves reshaped")
    assert workload(framework="unsloth", method="lora").train.use_cache is False
    assert workload(framework="fsdp", method="lora").train.use_cache is True


def test_old_transformers_default_to_eager_and_refuse_sdpa():
    assert workload(framework_version="4.35.2").train.attention == "eager"
    assert workload(framework_version="4.36.0").train.attention == "sdpa"
    line = _one_line(["estimate", "--model", "llama-3.2-1b", "--task", "train", "--framework-version", "4.35.2",
                      "--attention", "sdpa"])
    assert "Transformers 4.35.2 has no SDPA attention" in line and "4.36.0" in line


def test_use_cache_and_the_wrapper_are_refused_where_they_mean_nothing():
    with pytest.raises(InputError) as exc:
        workload(framework="unsloth", method="lora", use_cache=True)
    msg = str(exc.value)
    assert "model returns no KV cache in training" in msg
    with pytest.raises(InputError) as exc:
        workload(checkpoint_wrapper=True)
    msg = str(exc.value)
    assert "checkpointing is none" in msg


def test_the_loss_in_the_model_before_4_46_has_the_same_peak():
    # v4.35.2 L1053-1066: fp32 logits (4 B) + their shifted contiguous copy (4 B) + log-softmax (4 B) = 12 B per
    # token and vocabulary entry at the end of forward, the same 12 B at the start of backward; ForCausalLMLoss
    # holds max(c + 8, 12) = 12 B (planner.memory.train_cache): the 'logits and loss' term does not change
    for recipe in ("pure-bf16", "fp32"):
        old = estimate(workload("llama-3.2-1b", framework_version="4.45.2", recipe=recipe, use_cache=False))
        new = estimate(workload("llama-3.2-1b", framework_version="4.46.0", recipe=recipe, use_cache=False))
        vocab_tokens = 128_256 * 2048  # V x b*s
        assert comp(old, "logits and loss").bytes == comp(new, "logits and loss").bytes == 12 * vocab_tokens


#: llama-recipes (now llama-cookbook) PR 165, commit 486b8809 (2023-09-06), "Pass `use_cache=False` when training
#: with FSDP": "For the LLaMA-7B run, this saves ~4 GB in activation memory and avoids peak memory from being at
#: the end of the forward pass ... Note the peak memory at the end of forward. This happens because we are saving
#: past key/value states that are not needed for gradient computation." (8 GPUs, 'snapshot_7b_perparam_8gpus').
#: The recipe then: FSDP FULL_SHARD, apply_fsdp_checkpointing (torch checkpoint_wrapper per LlamaDecoderLayer),
#: batch_size_training 4, samsum concatenated into 2,048-token chunks, requirements transformers>=4.31.0.
PR165 = ("https://github.com/meta-llama/llama-cookbook/pull/165 (commit 486b8809, 2023-09-06): 'For the LLaMA-7B "
         "run, this saves ~4 GB in activation memory and avoids peak memory from being at the end of the forward "
         "pass'")


@dataclass(frozen=True)
class ReleaseDifference:
    """A published memory difference between two settings of one framework release: the bytes at the moment
    ``phase`` (always-live components plus that phase's) with ``workload`` minus those with ``workload`` and
    ``change`` applied, against ``published_gb`` (GB, 1e9 B)."""

    id: str
    framework: str
    release: str
    source: str
    model: str
    workload: dict
    change: dict
    phase: str
    published_gb: float
    xfail: str | None = None


RELEASE_DIFFS = [
    ReleaseDifference("llama-recipes-pr165-use-cache", "fsdp", "4.31.0", PR165, "llama-2-7b",
                      {"method": "full", "gpus": 8, "zero": 3, "micro_batch": 4, "seq_len": 2048,
                       "checkpointing": "full", "checkpoint_wrapper": True, "use_cache": True},
                      {"use_cache": False}, "loss", 4.0),
]


def predicted_difference_bytes(diff: ReleaseDifference) -> int:
    """The predicted bytes at ``diff.phase`` with ``diff.workload`` minus those with ``diff.change`` applied."""
    def at_phase(keys: dict) -> int:
        est = estimate(workload(diff.model, framework=diff.framework, framework_version=diff.release, **keys))
        return sum(c.bytes for c in est.gpu_components() if c.kind == "allocated"
                   and (not c.phase or diff.phase in c.phase.split(", ")))
    return at_phase(diff.workload) - at_phase({**diff.workload, **diff.change})


@pytest.mark.parametrize("diff", [pytest.param(d, id=d.id, marks=[pytest.mark.xfail(strict=True, reason=d.xfail)]
                                               if d.xfail else []) for d in RELEASE_DIFFS])
def test_release_difference(diff: ReleaseDifference):
    # the end of forward with use_cache on minus off: 2 x 32 layers x 4 x 2,048 x 32 K/V heads x 128 x 2 B
    # = 4,294,967,296 B, against '~4 GB' (+7.4 %)
    got = predicted_difference_bytes(diff)
    assert got == 2 * 32 * 4 * 2048 * 32 * 128 * 2
    err = got / (diff.published_gb * GB) - 1
    assert abs(err) <= PEAK_TOLERANCE, f"{diff.id} ({diff.source}): predicted {got / GB:.2f} GB ({err:+.1%})"


def test_the_wrapper_with_the_cache_on_warns_from_4_36():
    # issues 28056 and 34928: the recompute appends to the returned DynamicCache (CheckpointError)
    keys = dict(framework="fsdp", checkpointing="full", checkpoint_wrapper=True)
    new = workload(framework_version="4.36.0", **keys)
    assert any("CheckpointError" in w for w in new.warnings)
    assert not any("CheckpointError" in w for w in workload(framework_version="4.35.2", **keys).warnings)
    assert not any("CheckpointError" in w for w in workload(framework_version="4.36.0", use_cache=False,
                                                            **keys).warnings)
