"""DoRA (peft ``LoraConfig(use_dora=True)``): trainable magnitudes, the tensors each adapted module
keeps for backward, and the temporaries of every forward.

Each expected value is derived beside it from the shapes; the op-by-op trace of peft's DoRA forward
(test_dora_temporaries_match_an_op_by_op_trace) needs torch and peft and is skipped without them.
The whole-step accuracy of the model is in reports/validation.md (the grid's dora/qdora runs) and
tests/test_published.py (the PEFT MetaMathQA DoRA run).
"""

from __future__ import annotations


import pytest
from click.testing import CliRunner

from planner.model.architecture import from_hf_config
from planner.cli.main import main
from planner.core.errors import InputError
from planner.memory import estimate
from planner.memory.dora import dora_temporaries
from planner.memory.layer import LayerOptions, layer_saved_tensors
from planner.memory.saved import regime_for
from planner.memory.states import lora_parameters
from planner.workload.spec import workload_from_mapping
from tests.catalog_yaml import catalog_models



def catalog_arch(model_id: str):
    models = catalog_models()
    return from_hf_config(models[model_id]["config"], model_id)


def workload(arch, **keys):
    return workload_from_mapping({"model": "m", **keys}, lambda name, entry: (name, "test", arch))


#: A wide-MLP toy model: down_proj is 2048 -> 512, q_proj 512 -> 512.
WIDE = {"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 2, "num_attention_heads": 8,
        "num_key_value_heads": 2, "intermediate_size": 2048, "vocab_size": 1000}


def test_dora_trainable_parameters_match_the_peft_benchmark():
    # Llama-3.2-3B, r=32 on q_proj (3072 -> 3072) and v_proj (3072 -> 1024), 28 layers:
    # LoRA: 28 x 32 x ((3072 + 3072) + (3072 + 1024)) = 9,175,040; DoRA adds one magnitude per
    # output feature: 28 x (3072 + 1024) = 114,688. The PEFT MetaMathQA DoRA run reports
    # trainable_params 9,289,728 (shared/reference/published-measurements.yaml).
    arch = catalog_arch("llama-3.2-3b")
    assert lora_parameters(arch, 32, ("q_proj", "v_proj")) == 9_175_040
    assert lora_parameters(arch, 32, ("q_proj", "v_proj"), use_dora=True) == 9_289_728


def test_dora_keeps_the_base_and_adapter_outputs_per_token():
    # DoRA's output (m / ||W + sBA|| - 1) * base + (m / ||W + sBA||) * lora: the magnitude m trains,
    # so both products keep their other operand. Llama-3.2-3B, pure bf16 activations (2 B), fp32
    # adapters (4 B): q_proj and v_proj keep 3072 and 1024 outputs of each, (2 + 4) B per value.
    arch = catalog_arch("llama-3.2-3b")
    kw = dict(attention="sdpa", full=False, lora_targets=("q_proj", "v_proj"), lora_rank=32, adapter_bytes=4)
    lora = layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(**kw))
    dora = layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(use_dora=True, **kw))
    extra = sum(t.bytes_per_token for t in dora) - sum(t.bytes_per_token for t in lora)
    assert extra == (2 + 4) * (3072 + 1024)
    assert not any(t.per_layer for t in dora)


def test_dora_with_dropout_keeps_a_cast_weight_copy_except_below_a_frozen_embedding():
    # lora_dropout > 0: peft recomputes F.linear(dropout(x), W.to(fp32)); the linear keeps the fp32
    # copy of W (in x out x 4 B) for the input gradient when its input requires grad. In the
    # first layer q_proj's input (the frozen embedding's output) does not; down_proj's does once
    # q_proj is adapted. WIDE: q 512 x 512, down 2048 x 512.
    arch = from_hf_config(WIDE, "wide")
    kw = dict(attention="sdpa", full=False, lora_targets=("q_proj", "down_proj"), lora_rank=8, adapter_bytes=4,
              lora_dropout=0.1, use_dora=True, weight_cast=True)

    def copies(**more):
        saved = layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(**kw, **more))
        return sum(t.bytes_per_token for t in saved if t.per_layer)

    assert copies() == 4 * (512 * 512 + 2048 * 512)
    assert copies(input_requires_grad=False) == 4 * 2048 * 512
    # An fp32 base under fp32 adapters needs no cast: no copy.
    saved = layer_saved_tensors(arch, regime_for("fp32"), LayerOptions(**{**kw, "weight_cast": False}))
    assert not any(t.per_layer for t in saved)


def test_dora_temporaries_formula():
    # pure bf16 base, fp32 adapters, r=8: peft's get_lora_weight runs the adapters on eye(in) (fp32),
    # get_weight_norm sums W.to(fp32) and s x BA. down_proj (in 2048, out 512) has the largest:
    # 2048^2 x 4 + 2048 x 8 x 4 + 4 x 2048 x 512 x 4 = 16,777,216 + 65,536 + 16,777,216.
    arch = from_hf_config(WIDE, "wide")
    n, text = dora_temporaries(arch, regime_for("pure-bf16"), ("q_proj", "down_proj"), lora_rank=8,
                               adapter_bytes=4, weight_cast=True)
    assert n == 33_619_968
    assert text.startswith("down_proj:")
    # fp32 weights: W.to(fp32) is the weight itself, one in x out tensor fewer.
    n32, _ = dora_temporaries(arch, regime_for("fp32"), ("q_proj", "down_proj"), lora_rank=8, adapter_bytes=4,
                              weight_cast=False)
    assert n32 == 33_619_968 - 2048 * 512 * 4
    # With dropout the cast copy outlives the step and is counted with the saved tensors instead.
    nd, _ = dora_temporaries(arch, regime_for("pure-bf16"), ("q_proj", "down_proj"), lora_rank=8, adapter_bytes=4,
                             weight_cast=True, lora_dropout=0.1)
    assert nd == n - 2048 * 512 * 4


@pytest.mark.torch
def test_dora_temporaries_match_an_op_by_op_trace():
    # One DoRA-adapted down_proj (2048 -> 512, bf16 base, fp32 adapters) run forward under the
    # grid's storage tracker: the peak above the parameters is the temporaries plus the module's
    # own forward tensors: its input cast to fp32 (32 x 2048 x 4 = 262,144 B) and the base output
    # (32 x 512 x 2 = 32,768 B).
    torch = pytest.importorskip("torch")
    peft = pytest.importorskip("peft")
    from planner.validate.tracker import make_tracker

    torch.manual_seed(0)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.down_proj = torch.nn.Linear(2048, 512, bias=False)

        def forward(self, x):
            return self.down_proj(x)

    m = peft.get_peft_model(M().to(torch.bfloat16),
                            peft.LoraConfig(r=8, lora_alpha=16, target_modules=["down_proj"], use_dora=True))
    m.train()
    x = torch.randn(32, 2048, dtype=torch.bfloat16, requires_grad=True)
    tracker = make_tracker()
    with tracker:
        tracker.track_existing(list(m.parameters()) + [x])
        window = tracker.begin_window()
        start = tracker.live_bytes
        m(x)
        window = tracker.end_window()
    arch = from_hf_config(WIDE, "wide")
    n, _ = dora_temporaries(arch, regime_for("pure-bf16"), ("down_proj",), lora_rank=8, adapter_bytes=4,
                            weight_cast=True)
    assert window.peak - start == n + 262_144 + 32_768


def test_dora_estimate_puts_the_temporaries_in_the_forward_not_beside_the_logits():
    # Without checkpointing the temporaries exist inside a layer's forward, before the logits: the
    # peak is the larger of (activations + temporaries) and (activations + logits), not their sum.
    arch = from_hf_config(WIDE, "wide")
    keys = dict(task="train", method="lora", recipe="pure-bf16", lora_rank=8, lora_targets=["q_proj", "down_proj"],
                micro_batch=1, seq_len=32)
    est = estimate(workload(arch, use_dora=True, **keys))
    comps = {c.name: c for c in est.components if c.where == "gpu"}
    temp = comps["DoRA weight-norm temporaries"]
    assert temp.bytes == 33_619_968 and temp.phase == "forward"
    assert "forward" in comps["activations"].phase.split(", ")
    assert "forward" not in comps["logits and loss"].phase.split(", ")
    # With checkpointing they come back while a layer is recomputed.
    ck = estimate(workload(arch, use_dora=True, checkpointing="full", **keys))
    assert {c.name: c.phase for c in ck.components}["DoRA weight-norm temporaries"] == "recompute"
    # Plain LoRA has none of it.
    assert "DoRA weight-norm temporaries" not in {c.name for c in estimate(workload(arch, **keys)).components}
    assert est.trainable_parameters == lora_parameters(arch, 8, ("q_proj", "down_proj")) + 2 * (512 + 512)


def test_use_dora_needs_an_adapter_method():
    arch = from_hf_config(WIDE, "wide")
    with pytest.raises(InputError) as e:
        workload(arch, task="train", method="full", use_dora=True)
    assert "use_dora is set but method is full" in str(e.value)
    assert "Set method: lora or qlora" in str(e.value)


def test_cli_use_dora_flag():
    # Llama-3.2-3B, r=32 on q/v: the estimate names DoRA's temporaries and counts the magnitudes.
    args = ["estimate", "--model", "llama-3.2-3b", "--task", "train", "--method", "lora", "--lora-rank", "32",
            "--lora-targets", "q_proj,v_proj", "--recipe", "pure-bf16", "--micro-batch", "4", "--seq-len", "768"]
    with_dora = CliRunner().invoke(main, args + ["--use-dora"])
    without = CliRunner().invoke(main, args)
    assert with_dora.exit_code == 0, with_dora.output
    assert without.exit_code == 0, without.output
    assert "DoRA weight-norm temporaries" in with_dora.output
    assert "DoRA" not in without.output
    assert "9,289,728" in with_dora.output


def test_dora_with_dropout_says_what_the_weight_copies_cost():
    # WIDE, pure bf16, fp32 adapters, lora_dropout 0.1 on q_proj and down_proj, 2 layers: fp32
    # copies of both weights in each layer, except the first layer's q_proj (its input, the
    # frozen embedding's output, needs no gradient): 4 x (2 x (512^2 + 2048 x 512) - 512^2)
    # = 9,437,184 B = 0.01 GiB.
    arch = from_hf_config(WIDE, "wide")
    est = estimate(workload(arch, task="train", method="lora", recipe="pure-bf16", lora_rank=8,
                            lora_targets=["q_proj", "down_proj"], micro_batch=1, seq_len=32, use_dora=True,
                            lora_dropout=0.1))
    note = next(n for n in est.notes if n.startswith("DoRA"))
    assert "keeps a 4-byte copy of the module's weight for backward, 0.01 GiB" in note
    assert "with lora_dropout 0 it reuses the base output" in note
    no_dropout = estimate(workload(arch, task="train", method="lora", recipe="pure-bf16", lora_rank=8,
                                   lora_targets=["q_proj", "down_proj"], micro_batch=1, seq_len=32, use_dora=True))
    assert not any(n.startswith("DoRA") for n in no_dropout.notes)


@pytest.mark.torch
def test_dora_temporaries_under_autocast_match_an_op_by_op_trace():
    # Under autocast (fp32 weights and adapters, bf16 matmuls) peft's DoRA forward casts eye(in) to
    # bf16 for the adapters, then writes BA in fp32, s x BA and the sum: for a 512 -> 2,048
    # module (r=8) the second step is the larger, in^2 x 2 + in x r x 2 + 3 x in x out x 4 B.
    # Beside it the trace holds the base layer's autocast weight copy (in x out x 2 B), the base
    # output (32 x 2,048 x 2 B), the input cast to fp32 (32 x 512 x 4 B) and autocast's cached bf16
    # copies of lora_A and lora_B ((8 x 512 + 2,048 x 8) x 2 B).
    torch = pytest.importorskip("torch")
    peft = pytest.importorskip("peft")
    from planner.validate.tracker import make_tracker

    i, o, r, tokens = 512, 2048, 8, 32
    torch.manual_seed(0)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(i, o, bias=False)

        def forward(self, x):
            return self.proj(x)

    m = peft.get_peft_model(M(), peft.LoraConfig(r=r, lora_alpha=2 * r, target_modules=["proj"], use_dora=True))
    m.train()
    x = torch.randn(tokens, i, dtype=torch.bfloat16, requires_grad=True)
    tracker = make_tracker()
    with tracker:
        tracker.track_existing(list(m.parameters()) + [x])
        window = tracker.begin_window()
        start = tracker.live_bytes
        with torch.autocast("cpu", dtype=torch.bfloat16):
            m(x)
        window = tracker.end_window()
    arch = from_hf_config({"model_type": "llama", "hidden_size": i, "num_hidden_layers": 1, "num_attention_heads": 8,
                           "intermediate_size": o, "vocab_size": 100}, "t")
    n, text = dora_temporaries(arch, regime_for("amp-bf16"), ("up_proj",), lora_rank=r, adapter_bytes=4,
                               weight_cast=False)
    assert n == i * i * 2 + i * r * 2 + 3 * i * o * 4
    beside = i * o * 2 + tokens * o * 2 + tokens * i * 4 + (r * i + o * r) * 2
    assert window.peak - start == n + beside


def test_dora_with_tensor_parallel_is_refused():
    # peft's tensor-parallel LoRA layer raises "does not support DoRA yet" (tuners/lora/tp_layer.py).
    arch = catalog_arch("llama-3.2-3b")
    with pytest.raises(InputError) as e:
        workload(arch, task="train", method="lora", use_dora=True, tp=2, gpus=2)
    assert "DoRA does not run tensor parallel (tp 2)" in str(e.value)
    assert "leave DoRA out (plain LoRA runs tensor parallel)" in str(e.value)


def test_dora_weight_copies_follow_the_dtype_not_the_width():
    # A bf16 base with fp16 adapters: peft's W.to(fp16) is a new tensor although both are 2 bytes,
    # and with lora_dropout the recomputed base linear keeps it: (the model's 2 layers) WIDE's
    # q_proj and down_proj copies at 2 B, less the first layer's q_proj (input needs no gradient).
    arch = from_hf_config(WIDE, "wide")
    keys = dict(task="train", method="lora", recipe="pure-bf16", lora_rank=8, lora_targets=["q_proj", "down_proj"],
                micro_batch=1, seq_len=32, use_dora=True, lora_dropout=0.1)
    fp16 = estimate(workload(arch, adapter_dtype="fp16", **keys))
    note = next(n for n in fp16.notes if n.startswith("DoRA"))
    copies = 2 * (2 * (512 * 512 + 2048 * 512) - 512 * 512)
    assert f"keeps a 2-byte copy of the module's weight for backward, {copies / 2**30:,.2f} GiB" in note
    same = estimate(workload(arch, adapter_dtype="bf16", **keys))
    assert not any(n.startswith("DoRA") for n in same.notes)


def test_dora_with_dropout_costs_a_second_base_forward_and_its_input_gradient():
    # peft recomputes F.linear(dropout(x), W) for every adapted module under lora_dropout: 2 x D
    # FLOPs forward and 2 x D for its input gradient per token, D = the adapted weights.
    from planner.speed.timing import training_flops

    p, a, d = 8e9, 4e7, 7e9
    assert training_flops(params=p, tokens=1, method="lora", adapter_params=a) == 4 * p + 6 * a
    assert training_flops(params=p, tokens=1, method="lora", adapter_params=a, recomputed_base_params=d) == (
        4 * p + 6 * a + 4 * d)
    assert training_flops(params=p, tokens=1, method="lora", adapter_params=a, recomputed_base_params=d,
                          checkpointing="full") == 4 * p + 6 * a + 4 * d + 2 * (p + a + d)


def test_fit_reports_the_notes_estimate_gives():
    args = ["fit", "--model", "llama-3.2-3b", "--gpu", "rtx-4090", "--task", "train", "--method", "lora",
            "--use-dora", "--lora-dropout", "0.05", "--lora-targets", "all-linear", "--recipe", "pure-bf16",
            "--checkpointing", "full", "--seq-len", "max"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert any(line.startswith("Note: DoRA with lora_dropout 0.05") for line in r.output.splitlines())
