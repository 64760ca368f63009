"""Issue 28, hostile pass 29: a quantized checkpoint's lists of unquantized modules, bounded.

Covers h29b N1 (an entry read as a regular expression that could take exponential time to match, ``(.|.)*!``,
``(a+)+``, or more than two repeats, in AWQ / FP8 / MXFP4 ``modules_to_not_convert``, bitsandbytes
``llm_int8_skip_modules`` or compressed-tensors ``ignore`` / ``targets`` ``re:`` entries: pass 29 refused them;
since h30b N1 they are matched with RE2 in linear time, so they are taken and estimate finishes at once; a
look-around, which RE2 lacks, is refused), N2 (at most 1,000 entries a list, 200
characters an entry; the matching compiles each entry once and matches each module path once, so 1,000 names on a
model of 128 layers take well under a second, and gives what the one-by-one rule gives) and M4 (an AWQ / FP8 /
bitsandbytes entry that is no regular expression, which Transformers 5's ``should_convert_module`` passes to
``re.match``, is refused like a compressed-tensors ``re:`` one).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planner.core.errors import InputError, ModelConfigError
from planner.memory.quant import _module_paths, _placed, kept_linear
from planner.model.architecture import from_hf_config
from planner.model.quant_checks import MAX_NAME_CHARS, MAX_NAMES, _pattern_problem
from planner.model.quantization import KeptModules, WeightScheme, kept_modules
from tests.test_safety30_f28c import estimate_refused

ROOT = Path(__file__).resolve().parents[1]

# A small Llama (2 layers, width 512); _deep() gives it 128 layers.
_LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512, "num_hidden_layers": 2,
          "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 1536, "vocab_size": 1000,
          "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "hidden_act": "silu", "torch_dtype": "bfloat16",
          "tie_word_embeddings": False}
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
BNB = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}
FP8 = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
REDOS = "(.|.)*!"  # 2^n steps on a path of n characters without a '!'


def _ct(ignore, targets=("Linear",)) -> dict:
    w = {"num_bits": 4, "type": "int", "symmetric": True, "strategy": "group", "group_size": 128}
    return {"quant_method": "compressed-tensors", "format": "pack-quantized",
            "config_groups": {"group_0": {"targets": list(targets), "weights": w}}, "ignore": ignore}


def _refusal(q: dict) -> str:
    """The ModelConfigError's text from_hf_config gives for the small Llama with ``q`` (fails if taken)."""
    with pytest.raises(ModelConfigError) as got:
        from_hf_config(dict(_LLAMA, quantization_config=q), "m/config.json")
    assert isinstance(got.value, InputError)
    return str(got.value)


# ----- N1: patterns that could take exponential time (h30b N1: matched by RE2 now, in linear time) ---------------------

SLOW = {
    "awq": (dict(AWQ, modules_to_not_convert=["lm_head", REDOS]), "quantization_config.modules_to_not_convert[1]: "),
    "bnb": (dict(BNB, llm_int8_skip_modules=[REDOS]), "quantization_config.llm_int8_skip_modules[0]: "),
    "fp8": (dict(FP8, modules_to_not_convert=[REDOS]), "quantization_config.modules_to_not_convert[0]: "),
    "ct_ignore": (_ct(["lm_head", "re:" + REDOS]), "quantization_config.ignore[1]: "),
    "ct_targets": (_ct(["lm_head"], ("Linear", "re:" + REDOS)), "quantization_config.config_groups.group_0.targets[1]: "),
}


@pytest.mark.parametrize("name", sorted(SLOW))
def test_a_backtracking_pattern_is_taken_since_re2_matches_it(name: str) -> None:
    """Pass 29 refused these; pass 30 (h30b N1) matches them with RE2, which has no backtracking."""
    q, _where = SLOW[name]
    arch = from_hf_config(dict(_LLAMA, quantization_config=q), "m/config.json")
    assert arch.extra["quantization_config"] == q


@pytest.mark.parametrize("pattern", ["(.|.)*!", "(a+)+", "(a*)*", "(?:x+){2,}", ".*.*.*!", "model.layers.*.self_attn",
                                     ".*vision.*", "(a|b)*", "(ab)+", "model.layers.[0-9]{1,2}.mlp", "x{2}"])
def test_nested_and_many_repeats_pass_the_check(pattern: str) -> None:
    assert _pattern_problem([pattern], "") is None


def test_a_look_around_is_refused_as_python_only() -> None:
    said = _pattern_problem(["(?=(a+)+)x"], "")
    assert said is not None and said.startswith('[0]: "(?=(a+)+)x" uses a look-ahead, which planner'), said


def estimate_child(tmp_path: Path, cfg: dict) -> tuple[subprocess.CompletedProcess, float]:
    """``planner estimate`` of the model ``cfg`` (written to tmp_path/m/config.json) in a child process (60 s limit:
    a hang fails the test), with its result and its wall time in seconds."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    got = subprocess.run([sys.executable, "-m", "planner", "estimate", "--model", "./m", "--task", "infer",
                          "--context", "1024", "--gpu", "h100-sxm"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=60)
    return got, time.perf_counter() - start


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_the_cli_matches_the_pattern_at_once(tmp_path: Path) -> None:
    """Before pass 29 this estimate ran past 30 s; with RE2 it runs; a time limit fails instead of hanging."""
    got, took = estimate_child(tmp_path, dict(_LLAMA, quantization_config=SLOW["awq"][0]))
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr
    assert took < 30  # a start-up and an estimate, not a match of 2^30 steps a module


# ----- N2: caps, and matching that costs names x paths ---------------------------------------------------------------

def test_a_list_of_more_than_1000_names_is_refused() -> None:
    names = [f"zz{i}" for i in range(MAX_NAMES + 1)]
    text = _refusal(dict(AWQ, modules_to_not_convert=names))
    assert f"quantization_config.modules_to_not_convert lists {MAX_NAMES + 1:,} names, more than the 1,000 read" in text
    from_hf_config(dict(_LLAMA, quantization_config=dict(AWQ, modules_to_not_convert=names[:MAX_NAMES])), "m")
    half = [[f"zz{i}" for i in range(501)], [f"yy{i}" for i in range(500)]]  # GPTQ: 1,001 in all
    assert "modules_in_block_to_quantize lists 1,001 names" in _refusal(dict(GPTQ, modules_in_block_to_quantize=half))
    assert "ignore lists 1,001 names" in _refusal(_ct(names))


def test_an_entry_of_more_than_200_characters_is_refused() -> None:
    text = _refusal(dict(BNB, llm_int8_skip_modules=["lm_head", "x" * (MAX_NAME_CHARS + 1)]))
    assert "quantization_config.llm_int8_skip_modules[1] is 201 characters long, more than the 200 read" in text
    from_hf_config(dict(_LLAMA, quantization_config=dict(BNB, llm_int8_skip_modules=["x" * MAX_NAME_CHARS])), "m")


def _deep(layers: int = 128) -> dict:
    return dict(_LLAMA, num_hidden_layers=layers)


def test_1000_names_on_128_layers_are_matched_quickly() -> None:
    names = [f"zz{i}" for i in range(500)] + [f"model.layers.{i}.*zz" for i in range(499)] + ["mlp.down_proj"]
    arch = from_hf_config(dict(_deep(), quantization_config=dict(AWQ, modules_to_not_convert=names)), "m")
    keep = kept_modules(arch.extra["quantization_config"])
    start = time.perf_counter()
    kept = kept_linear(arch, keep, 1, ("attention", "mlp"))
    took = time.perf_counter() - start
    assert kept.tensors == 128  # down_proj of every layer, nothing else
    assert kept.values == 128 * 1536 * 512
    assert took < 1.0, took  # about 0.1 s; one compile per name and path pair took 20 s for 5,000 names


@pytest.mark.parametrize("names", [
    ("mlp",), ("model.layers.*.self_attn",), ("model.layers.1.mlp",), ("lm_head",), ("re:[", "("), ("",),
    ("layers.1", "self_attn.q"), (), ("model.layers.1[0-9].mlp", "down_proj"), ("lm-head", "model.layers.1.mlp.up"),
    ("model.layers.(1|3).mlp", "x|model.layers.2", ".*k_proj$", "(?i)MODEL.LAYERS.4", r"(m)odel.layers.5\1"),
    ("a\\", "model.layers.[67].mlp.gate", "o_proj$|up_proj$"),
])
def test_the_matcher_gives_what_the_rule_gives(names: tuple) -> None:
    arch = from_hf_config(_deep(12), "m")
    paths = [_module_paths(arch, m, k) for m, indices in _placed(arch) for k in indices]
    for keep in (KeptModules("modules_to_not_convert", names), KeptModules("x", names, only=True)):
        match = keep.matcher()
        expected = [_rule(keep, p) for p in paths]
        assert [match(p) for p in paths] == expected
        assert [match(p) for p in paths] == expected  # the memo gives the same again
        assert [keep.keeps(p) for p in paths] == expected


def _rule(keep: KeptModules, path: str) -> bool:
    """The rule of KeptModules.matcher's docstring, entry by entry, compiled anew each time (the reference)."""
    if keep.only:  # optimum GPTQQuantizer.convert_model: name.endswith(layer)
        return not any(path.endswith(n) for n in keep.names)

    def skips(entry: str) -> bool:  # Transformers 4: key in name; Transformers 5: re.match(key, name)
        if entry in path:
            return True
        try:
            return re.match(entry, path) is not None
        except re.error:
            return False
    return any(skips(n) for n in keep.names)


def test_the_scheme_ignorer_gives_what_the_rule_gives() -> None:
    arch = from_hf_config(_deep(12), "m")
    paths = [_module_paths(arch, m, k) for m, indices in _placed(arch) for k in indices]
    scheme = WeightScheme("compressed-tensors", "W4A16", 4, "int", "group", group_size=128,
                          ignore=("down_proj", "re:model.layers.1[0-9].self_attn", "model.layers.3.mlp.up_proj"))
    got = [scheme.ignorer()(p) for p in paths]
    last = [p.rpartition(".")[2] == "down_proj" or p.startswith(("model.layers.10.self_attn",
                                                                 "model.layers.11.self_attn"))
            or p == "model.layers.3.mlp.up_proj" for p in paths]
    assert got == last and sum(got) == 12 + 2 * 4 + 1  # 12 down_proj, 4 attention projections twice, 1 up_proj


# ----- M4: an entry Transformers 5 cannot compile ---------------------------------------------------------------------

@pytest.mark.parametrize("q, where", [
    (dict(AWQ, modules_to_not_convert=["lm_head", "("]), 'modules_to_not_convert[1]: "(" is not a regular expression'),
    (dict(BNB, llm_int8_skip_modules=["?"]), 'llm_int8_skip_modules[0]: "?" is not a regular expression'),
    (dict(FP8, modules_to_not_convert=["[a-"]), 'modules_to_not_convert[0]: "[a-" is not a regular expression'),
])
def test_an_entry_that_is_no_regular_expression_is_refused(tmp_path: Path, monkeypatch, capsys, q: dict,
                                                          where: str) -> None:
    code, err = estimate_refused(tmp_path, monkeypatch, capsys, dict(_LLAMA, quantization_config=q))
    assert code == 2
    assert err.startswith("Error: m/config.json:1: quantization_config: quantization_config."), err
    assert where in err and err.count("\n") == 1 and "Traceback" not in err


def test_gptq_names_are_suffixes_not_patterns() -> None:
    """GPTQ's names are matched as ends of paths (optimum), never compiled: '(' is no pattern there."""
    from_hf_config(dict(_LLAMA, quantization_config=dict(GPTQ, modules_in_block_to_quantize=[["("]])), "m")
