"""Reading the keys of a config.json: whole numbers, flags and texts with their limits, one clear error each.

Shared by the readers of planner.model.architecture and planner.model.families. Errors name the
file (or catalog entry), the key and, for a config.json file, its line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from planner.core.errors import ModelConfigError
from planner.core.fieldhints import ascii_digits_hint
from planner.model.config_errors import _bool_hint, _error, _is_json, _shown  # noqa: F401  (were defined here)


#: Largest value of each size key that a real model could have; larger is a typo (an extra digit).
MAX_CONFIG_VALUES: dict[str, int] = {
    "hidden_size": 262_144, "n_embd": 262_144,
    "num_hidden_layers": 10_000, "n_layer": 10_000,
    "num_attention_heads": 16_384, "n_head": 16_384, "num_key_value_heads": 16_384,
    "head_dim": 65_536,
    "intermediate_size": 4_194_304, "n_inner": 4_194_304,
    "vocab_size": 16_777_216,
    "max_position_embeddings": 2**30, "n_positions": 2**30, "sliding_window": 2**30,
    "num_local_experts": 65_536, "num_experts": 65_536, "num_experts_per_tok": 65_536, "max_window_layers": 10_000,
    "moe_intermediate_size": 4_194_304,
}


#: Numeric config keys planner does not size with, that Transformers computes with as numbers (a text breaks the
#: model's build: LlamaRMSNorm adds ``variance_epsilon`` to a tensor, the rotary embedding raises ``rope_theta`` to a
#: power), each with its value in a published config.json for the hint: rms_norm_eps 1e-05 and
#: initializer_range 0.02 (meta-llama/Llama-2-7b-hf), rope_theta 500000.0 (meta-llama/Llama-3.1-8B),
#: layer_norm_epsilon 1e-05 (openai-community/gpt2), layer_norm_eps 1e-12 (google-bert/bert-base-uncased),
#: attention_dropout 0.0 (LlamaConfig's default), partial_rotary_factor 0.4 (microsoft/phi-2). Read as numbers:
#: a text is refused, with the YAML 1.1 hint where a models.yaml ``config:`` value YAML read as text ('1e-05').
FLOAT_CONFIG_KEYS: dict[str, str] = {
    "rms_norm_eps": "1e-05", "rope_theta": "500000.0", "initializer_range": "0.02", "layer_norm_eps": "1e-12",
    "layer_norm_epsilon": "1e-05", "attention_dropout": "0.0", "partial_rotary_factor": "0.4",
}


def _yaml_number(text: str, whole: bool) -> str | None:
    """How a models.yaml ``config:`` writes the number a text such as '1e-05', '5e5' or '4e3' stands for, so YAML
    1.1 reads it as one (PyYAML reads a float only with a '.' and a signed exponent: '1e-05' is text): a whole
    number in digits ('4000') where ``whole``, else a decimal ('500000.0', '10.0') or, below 0.001, the exponent
    form YAML reads ('1.0e-05'); None when ``text`` is no finite number."""
    try:
        f = float(text)
    except ValueError:
        return None
    if not math.isfinite(f) or "_" in text:
        return None
    if whole:
        return str(int(f)) if f.is_integer() and abs(f) < 1e15 else None
    if f == 0 or 1e-3 <= abs(f) < 1e15 or "e" not in text.lower():
        return repr(f) if "e" not in repr(f) else text
    mant, _, exp = text.lower().partition("e")
    return f"{mant if '.' in mant else mant + '.0'}e{'' if exp[:1] in '+-' else '+'}{exp}"


def text_number_hint(key: str, value: Any, json: bool, whole: bool = False, shown_key: str | None = None) -> str | None:
    """The hint for a number given as text in a config: in a config.json, the number without quotes; in a
    models.yaml ``config:``, that YAML 1.1 read it as text, and the spelling it reads as the number (h15b #7);
    None when ``value`` is no number's text. ``shown_key``: the key as the hint writes it (``factor``)."""
    if not isinstance(value, str):
        return None
    text, name = value.strip(), shown_key or key
    number = _yaml_number(text, whole)
    if number is None:
        return None
    if json:
        return f'Write the number without quotes: "{name}": {text}.'
    if re.fullmatch(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+", text):
        return f"YAML reads {text} as text; write {name}: {number}."
    return f"Write the number without quotes: {name}: {number}."


#: The quantization_config methods planner sizes, as transformers names them (QuantizationMethod in
#: transformers/utils/quantization_config.py): another spelling of one of them is refused, not sized.
QUANT_METHODS = ("awq", "gptq", "bitsandbytes", "fp8", "mxfp4", "compressed-tensors")


def _get(cfg: Mapping[str, Any], key: str, where: str | None, *, default: Any = ..., kind: type = int,
         min_value: int | None = 1) -> Any:
    if key not in cfg or cfg[key] is None:
        if default is ...:
            model_type = cfg.get("model_type")
            a_config = f"A {model_type if isinstance(model_type, str) else 'model'} config.json"
            if key in cfg:  # '"hidden_size": null': there, at its line, but without a value (h19b M8)
                what = {int: "a whole number", bool: "true or false", str: "a text"}.get(kind, "a value")
                raise _error(cfg, where, f"{key} is null", key, f"{a_config} gives it as {what}: write the "
                             "value the model's published config.json has in place of null.")
            raise ModelConfigError(f"missing required key {key!r}", file=where,
                                   hint=f"{a_config} has it; copy the full file.")
        return default
    value = cfg[key]
    if kind is int:
        if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
            # 32.0 is a float to json.load and YAML, and so to Transformers, whose range(num_hidden_layers) and
            # nn.Linear(hidden_size, ...) raise TypeError on it: the config would not load (h14b minor e)
            shown = f'"{key}": {int(value)}' if _is_json(where) else f"{key}: {int(value)}"
            raise _error(cfg, where, f"{key} must be a whole number written without a decimal point or exponent, "
                         f"not {_shown(value)}, which Transformers reads as a float (range() and nn.Linear refuse it)", key,
                         f"Write the whole number: {shown}.")
        if isinstance(value, bool) or not isinstance(value, int):
            quoted = isinstance(value, str) and value.strip().isdigit()
            zero = quoted and len(value.strip()) > 1 and value.strip().startswith("0")  # 0128: YAML 1.1 reads a text
            foreign = ascii_digits_hint(value, (lambda n: f'"{key}": {n}') if _is_json(where) else
                                        (lambda n: f"{key}: {n}"), whole=True)  # '３２': int() reads it, JSON, YAML not
            raise _error(cfg, where, f"{key} must be a whole number, not {_shown(value)}", key,
                         foreign if foreign else
                         f"Write the number without the leading zero: {key}: {int(value)}." if zero else
                         f"Write the number without quotes: {value.strip()}." if quoted else
                         text_number_hint(key, value, _is_json(where), whole=True))
        if min_value is not None and value < min_value:
            raise _error(cfg, where, f"{key} must be at least {min_value}, not {value}", key)
        hi = MAX_CONFIG_VALUES.get(key)
        if hi is not None and value > hi:
            raise _error(cfg, where, f"{key} is {value:,}, more than any real model has ({hi:,})", key,
                         "Check the value for an extra digit; copy the model's config.json as published.")
    elif kind is bool:
        if not isinstance(value, bool):  # JSON's true and false, unquoted; "false" is a text, 0 a number
            raise _error(cfg, where, f"{key} must be true or false, not {_shown(value)}", key,
                         _bool_hint(key, value, _is_json(where)))
    elif kind is str:
        if not isinstance(value, str):
            raise _error(cfg, where, f"{key} must be a text, not {_shown(value)}", key)
    return value


def check_architectures(cfg: Mapping[str, Any], where: str | None) -> None:
    """Refuse an ``architectures`` that is not a list of class-name texts (``["LlamaForCausalLM"]``, as
    Transformers writes it: PretrainedConfig.architectures is a list of str); null or no key is left alone.

    Raises:
        ModelConfigError: at the key's line, with the value written as a list in the file's syntax.
    """
    heads = cfg.get("architectures")
    if heads is None:
        return
    json_file = _is_json(where)

    def listed(name: str) -> str:
        return f'"architectures": ["{name}"]' if json_file else f"architectures: [{name}]"

    if isinstance(heads, str):  # a bare class name: Transformers' architectures[0] would be its first letter
        name = heads.strip() if heads.strip().isidentifier() else "LlamaForCausalLM"
        raise _error(cfg, where, f"architectures must be a list of class names, not the text {_shown(heads)}",
                     "architectures", f"Write it as a list: {listed(name)}.")
    if not isinstance(heads, (list, tuple)):  # a catalog entry's config holds its lists as tuples (frozen)
        raise _error(cfg, where, f"architectures must be a list of class names, not {_shown(heads)}",
                     "architectures", f"Write the model's class in a list, e.g. {listed('LlamaForCausalLM')}.")
    bad = next((h for h in heads if not isinstance(h, str) or not h.isascii() or not h.isidentifier()), None)
    if bad is not None:
        raise _error(cfg, where, f"architectures must be a list of class names (texts such as LlamaForCausalLM), "
                     f"but it holds {_shown(bad)}", "architectures",
                     f"Write the model's class name, quoted, e.g. {listed('LlamaForCausalLM')}, as the model's "
                     "published config.json has it.")


def _checkpoint_dtype(cfg: Mapping[str, Any]) -> str | None:
    """The checkpoint's dtype as config.json states it, in torch's canonical name (float32, float16 or
    bfloat16: ``float`` and ``half`` are torch's other names of the first two, :data:`CONFIG_DTYPES`):
    ``dtype``, the key Transformers writes since 4.56, or ``torch_dtype``, its older name (the two agree,
    :func:`check_declared`); None if neither is a dtype name (or the value is 'auto')."""
    for key in ("dtype", "torch_dtype"):  # Transformers 4.56+ reads dtype first; torch_dtype is its old name
        value = cfg.get(key)
        if isinstance(value, str):
            return CONFIG_DTYPES.get(value.removeprefix("torch."))
    return None


#: The dtypes a config.json's ``torch_dtype`` / ``dtype`` is read in, by every name torch gives them, to the
#: canonical name. Transformers turns the text into the dtype with ``getattr(torch, name)``
#: (``PretrainedConfig.__init__``, transformers 4.56+ configuration_utils.py), and torch names float32
#: ``float`` and float16 ``half`` as well (torch docs, "torch.dtype": torch.float32 or torch.float, torch.float16
#: or torch.half). A checkpoint whose unquantized weights are in another dtype is refused
#: (:data:`OTHER_TORCH_DTYPES`); 'auto' states no dtype, as if the key were absent.
CONFIG_DTYPES = {"float32": "float32", "float": "float32", "float16": "float16", "half": "float16",
                 "bfloat16": "bfloat16", "auto": None}
#: torch's other dtypes by name, with their bytes per element (torch docs, "torch.dtype"): valid torch names
#: that the planner does not size a checkpoint's weights in, each refused with what it is.
OTHER_TORCH_DTYPES = {"float64": 8, "double": 8, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1,
                      "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1, "float4_e2m1fn_x2": 1, "complex32": 4,
                      "chalf": 4, "complex64": 8, "cfloat": 8, "complex128": 16, "cdouble": 16, "int8": 1,
                      "uint8": 1, "int16": 2, "short": 2, "int32": 4, "int": 4, "int64": 8, "long": 8, "bool": 1,
                      "uint16": 2, "uint32": 4, "uint64": 8}
#: Kept for callers that test membership: every name a config's dtype is read in.
FLOAT_DTYPES = frozenset(CONFIG_DTYPES)


def _dtype_problem(key: str, value: Any, name: str, json: bool) -> tuple[str, str]:
    """(problem, hint) for a config dtype name :data:`CONFIG_DTYPES` does not read."""
    accepted = "float32 (or float), float16 (or half) and bfloat16"
    size = OTHER_TORCH_DTYPES.get(name)
    shown = f'"{key}": "bfloat16"' if json else f"{key}: bfloat16"
    if name.startswith(("float8", "float4")):
        return (f"{key} {value!r} is a {size}-byte torch dtype that planner does not read as a checkpoint's dtype; it "
                f"reads {accepted}",
                f"An FP8 checkpoint keeps {shown} (the dtype of its unquantized layers) and declares its format in "
                "quantization_config (quant_method: fp8), as DeepSeek-V3's and Llama 3.1 FP8 configs do.")
    if name in ("float64", "double"):
        return (f"{key} {value!r} is torch's 8-byte float64, which planner does not size weights in; it reads "
                f"{accepted}", "Write the dtype the weights are stored in; a float64 checkpoint is converted "
                "(model.to(torch.float32)) before training or serving.")
    if size is not None:
        return (f"{key} {value!r} is not a floating-point dtype Transformers loads a model's weights in; planner "
                f"reads {accepted}", "Write the dtype the unquantized weights are stored in; a quantized checkpoint "
                "declares its format in quantization_config.")
    return (f"{key} {value!r} is not a torch dtype; planner reads {accepted}",
            f"Write the dtype the weights are stored in, e.g. {shown}.")


#: Bits a quantization_config may give per weight (1-bit to 16-bit formats exist; 0 or 64 is a typo).
MAX_QUANT_BITS = 16
#: The largest group size read from a quantization_config (the workload's group_size bound, 1,000,000).
MAX_QUANT_GROUP = 1_000_000
#: quantization_config booleans of Transformers' BitsAndBytesConfig (utils/quantization_config.py).
QUANT_FLAGS = ("load_in_4bit", "load_in_8bit", "bnb_4bit_use_double_quant", "llm_int8_has_fp16_weight")


#: The RoPE types Transformers builds (modeling_rope_utils.py ROPE_INIT_FUNCTIONS: default, linear, dynamic, yarn,
#: longrope, llama3), and two older names configs still carry: Phi-3's 'su' (LongRoPE before its rename, which
#: Phi3Config took) and Qwen2-VL's 'mrope' (Qwen2VLConfig reads it as default). Any other is refused: Transformers
#: raises on it ("Unrecognized RoPE type" / a KeyError), so no such checkpoint loads.
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "su", "mrope")

#: The activation names Transformers builds (activations.py ACT2CLS, Transformers 4.5x): a config naming another
#: fails at ACT2FN[name] (a KeyError). New releases add names, so another name is warned about
#: (planner.workload.checks.architecture_warnings), not refused; one that is no name at all is refused.
ACTIVATIONS = ("gelu", "gelu_10", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh", "gelu_accurate",
               "laplace", "leaky_relu", "linear", "mish", "quick_gelu", "relu", "relu2", "relu6", "sigmoid", "silu",
               "swish", "tanh", "prelu", "xielu")

#: The keys that name a model's MLP activation (Falcon's ``activation``, GPT-2's ``activation_function``,
#: Gemma's ``hidden_activation``, the others' ``hidden_act``).
ACTIVATION_KEYS = ("hidden_act", "hidden_activation", "activation_function")

#: A name as Transformers' registries spell theirs: a letter, then letters, digits and '_'.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _check_names(cfg: Mapping[str, Any], where: str | None, json: bool) -> None:
    """Refuse a ``rope_scaling`` type (``rope_type``, or the older ``type``) that is no text or not one of
    :data:`ROPE_TYPES`, and an activation (:data:`ACTIVATION_KEYS`; Falcon's ``activation``) that is no text or
    no name ('=1+1', 'x*sigmoid(x)'), each with the close matches (planner.core.errors.did_you_mean).

    Raises:
        ModelConfigError: at the key, with its line in a config.json file.
    """
    from planner.core.errors import did_you_mean

    rs = cfg.get("rope_scaling")
    for sub in ("rope_type", "type") if isinstance(rs, Mapping) else ():
        kind = rs.get(sub)
        if kind is None or (isinstance(kind, str) and kind in ROPE_TYPES):
            continue
        guess = did_you_mean(kind, ROPE_TYPES, name_lookalike=False) if isinstance(kind, str) else None
        example = f'"{sub}": "linear"' if json else f"{sub}: linear"
        raise _error(cfg, where, f"rope_scaling.{sub} {_shown(kind)} is not a RoPE type Transformers builds "
                     f"({', '.join(ROPE_TYPES[:6])}; {ROPE_TYPES[6]!r} and {ROPE_TYPES[7]!r} in older configs)",
                     "rope_scaling", (guess + " " if guess and guess.startswith("Did you mean") else "")
                     + f"Copy the model's published value, e.g. {example}; without scaling, write "
                     + ('"rope_scaling": null.' if json else "rope_scaling: null."))
    keys = ACTIVATION_KEYS + (("activation",) if cfg.get("model_type") == "falcon" else ())
    for key in keys:
        act = cfg.get(key)
        if act is None or (isinstance(act, str) and _NAME.fullmatch(act)):
            continue
        guess = did_you_mean(act, ACTIVATIONS, name_lookalike=False) if isinstance(act, str) else None
        raise _error(cfg, where, f"{key} must be the name of an activation function such as 'silu', not "
                     f"{_shown(act)}", key, (guess + " " if guess and guess.startswith("Did you mean") else "")
                     + "Copy the model's published value, as Transformers' activations.py names it: silu, gelu, "
                     "gelu_new, gelu_pytorch_tanh, relu, ...")


def check_declared(cfg: Mapping[str, Any], where: str | None) -> None:
    """Refuse what a config.json declares about its storage and positions that cannot be so:
    ``torch_dtype`` / ``dtype`` that is no text or no floating-point dtype ('int8', 5);
    ``quantization_config`` that is no mapping, a ``quant_method`` that is no text, ``bits`` (or AWQ's
    ``w_bit``) that is no whole number from 1 to 16; ``rope_scaling`` that is no mapping, or whose
    ``factor`` is no finite number of at least 1 (Transformers' rope validation asks for a float >= 1:
    the trained context is stretched ``factor`` times, modeling_rope_utils.py), or whose type is none Transformers
    builds; an activation that is no name (:func:`_check_names`); module lists, ``re:`` patterns and an fp8
    ``weight_block_size`` that cannot be read (planner.model.quant_checks).

    Raises:
        ModelConfigError: at the key, with its line in a config.json file.
    """
    json = _is_json(where)
    for key in ("torch_dtype", "dtype"):
        value = cfg.get(key)
        if value is None:
            continue
        name = value[len("torch."):] if isinstance(value, str) and value.startswith("torch.") else value
        if not isinstance(name, str):
            raise _error(cfg, where, f"{key} must be a dtype name such as 'bfloat16', not {_shown(value)}", key,
                         f'Write the dtype the weights are stored in, e.g. "{key}": "bfloat16".' if json else
                         f"Write the dtype the weights are stored in, e.g. {key}: bfloat16.")
        if name not in CONFIG_DTYPES:
            problem, hint = _dtype_problem(key, value, name, json)
            raise _error(cfg, where, problem, key, hint)
    both = [cfg.get(k) for k in ("torch_dtype", "dtype")]
    if all(isinstance(v, str) for v in both):
        read = [CONFIG_DTYPES[v.removeprefix("torch.")] for v in both]
        if read[0] != read[1]:
            # Transformers 4.56+ keeps dtype and drops torch_dtype without a word ("If both are provided, keep
            # `dtype`", PretrainedConfig.__init__): which one the weights are stored in cannot be told
            raise _error(cfg, where, f"torch_dtype {both[0]!r} and dtype {both[1]!r} disagree; Transformers 4.56 and "
                         "later read dtype and drop torch_dtype, older releases read torch_dtype", "dtype",
                         "Keep the one the weights are stored in (dtype is its name since Transformers 4.56) and "
                         "remove the other.")
    q = cfg.get("quantization_config")
    if q is not None:
        if not isinstance(q, Mapping):
            raise _error(cfg, where, f"quantization_config must be a mapping of settings (a JSON object), not "
                         f"{type(q).__name__ if not isinstance(q, (list, tuple)) else 'a list'}", "quantization_config",
                         'Copy it as the checkpoint publishes it, e.g. {"quant_method": "awq", "bits": 4, ...}.')
        method = q.get("quant_method")
        if method is not None and not isinstance(method, str):
            raise _error(cfg, where, f"quantization_config.quant_method must be a text such as 'awq', not {_shown(method)}",
                         "quantization_config")
        if isinstance(method, str) and method != method.lower() and method.lower() in QUANT_METHODS:
            # transformers looks the method up as written among its lower-case names, and refuses any other
            # ("Unknown quantization type, got GPTQ": AutoQuantizationConfig.from_dict, quantizers/auto.py)
            raise _error(cfg, where, f"quantization_config.quant_method {method!r} is not lower case, and transformers "
                         "loads no checkpoint whose method it does not know by its lower-case name",
                         "quantization_config",
                         f'transformers writes its methods in lower case: "quant_method": "{method.lower()}".')
        for bits_key in ("bits", "w_bit"):
            bits = q.get(bits_key)
            if bits is None:
                continue
            if isinstance(bits, bool) or not isinstance(bits, int) or not 1 <= bits <= MAX_QUANT_BITS:
                raise _error(cfg, where, f"quantization_config.{bits_key} must be a whole number of bits from 1 to "
                             f"{MAX_QUANT_BITS}, not {_shown(bits)}", "quantization_config",
                             "Copy the checkpoint's value (AWQ and most GPTQ checkpoints store 4 bits per weight).")
        for flag in QUANT_FLAGS:  # bitsandbytes' BitsAndBytesConfig booleans: a text "false" would read as true
            value = q.get(flag)
            if value is not None and not isinstance(value, bool):
                raise _error(cfg, where, f"quantization_config.{flag} must be true or false, not {_shown(value)}",
                             "quantization_config", _bool_hint(flag, value, json))
        if q.get("load_in_4bit") is True and q.get("load_in_8bit") is True:  # BitsAndBytesConfig refuses both
            raise _error(cfg, where, "quantization_config sets both load_in_4bit and load_in_8bit, which Transformers "
                         "refuses (BitsAndBytesConfig: they cannot both be true)", "quantization_config",
                         "Keep the one the checkpoint was saved with (load_in_4bit for NF4, load_in_8bit for int8).")
        for group_key in ("group_size", "q_group_size"):  # GPTQ's desc (-1: one group per column), AWQ's q_group_size
            group = q.get(group_key)
            if group is None:
                continue
            whole = isinstance(group, int) or (isinstance(group, float) and group.is_integer())
            if isinstance(group, bool) or not whole or not (group == -1 or 1 <= group <= MAX_QUANT_GROUP):
                quoted = isinstance(group, str) and group.strip().lstrip("-").isdigit()
                foreign = ascii_digits_hint(group, (lambda n: f'"{group_key}": {n}') if json else
                                            (lambda n: f"{group_key}: {n}"), whole=True)
                raise _error(cfg, where, f"quantization_config.{group_key} must be a whole number of weights per "
                             f"scale (or -1, one group per output column), not {_shown(group)}", "quantization_config",
                             foreign if foreign else
                             f"Write the number without quotes: {group.strip()}." if quoted else
                             "Copy the checkpoint's value (most GPTQ and AWQ checkpoints use 128).")
        from planner.model.quant_checks import check_quant_lists

        check_quant_lists(cfg, where, q)
    rs = cfg.get("rope_scaling")
    if rs is not None:
        if not isinstance(rs, Mapping):
            raise _error(cfg, where, "rope_scaling must be a mapping (a JSON object) or null, not "
                         f"{'a list' if isinstance(rs, (list, tuple)) else repr(rs)}", "rope_scaling")
        factor = rs.get("factor")
        if factor is not None and (isinstance(factor, bool) or not isinstance(factor, (int, float))
                                   or not math.isfinite(factor) or factor < 1):
            raise _error(cfg, where, f"rope_scaling.factor must be a number of at least 1 (how many times the "
                         f"trained context is stretched), not {_shown(factor)}", "rope_scaling",
                         text_number_hint("factor", factor, json) or
                         "Copy the model's published value, e.g. 8.0 for Llama 3.1; without scaling, write "
                         '"rope_scaling": null.')
    _check_names(cfg, where, json)
    for key, example in FLOAT_CONFIG_KEYS.items():
        value = cfg.get(key)
        if value is None or (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)):
            continue
        raise _error(cfg, where, f"{key} must be a number, not {_shown(value)} (Transformers computes with it as one)", key,
                     text_number_hint(key, value, json) or "Copy the model's published value, e.g. "
                     + (f'"{key}": {example}.' if json else f"{key}: {_yaml_number(example, False)}."))
    if not json:
        _refuse_yaml_text_numbers(cfg, where)


#: A number in the exponent form that YAML 1.1 (PyYAML) reads as text: no '.' in the mantissa, or no sign in the
#: exponent ('1e-05', '5e5', '1.5e5'); YAML 1.1's float needs both (yaml.org/type/float.html).
_YAML_TEXT_EXPONENT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+")


def _refuse_yaml_text_numbers(cfg: Mapping[str, Any], where: str | None) -> None:
    """Refuse, in a models.yaml ``config:``, a value at any depth that is a number in exponent form YAML 1.1 read
    as text (:data:`_YAML_TEXT_EXPONENT`): copied from a config.json, where it is a number, it would reach
    Transformers as a text (h15b #7: ``initializer_range: 2e-2``). A value quoted on purpose is refused too: no
    published config holds such a text.

    Raises:
        ModelConfigError: at the top-level key that holds it, with the spelling YAML reads as the number.
    """
    def walk(value: Any, path: str) -> tuple[str, str] | None:
        if isinstance(value, str) and _YAML_TEXT_EXPONENT.fullmatch(value.strip()):
            return path, value
        items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list) else ()
        for k, v in items:
            found = walk(v, f"{path}.{k}" if isinstance(k, str) else f"{path}[{k}]")
            if found:
                return found
        return None

    for key, value in cfg.items():
        found = walk(value, str(key))
        if found and found[0] in MAX_CONFIG_VALUES:  # a size key: the whole number its reader asks for
            raise _error(cfg, where, f"{key} must be a whole number, not {_shown(found[1])}", key,
                         text_number_hint(key, found[1], False, whole=True))
        if found:
            path, text = found
            raise _error(cfg, where, f"{path} is the text {text!r}, not a number", key,
                         text_number_hint(path.rsplit(".", 1)[-1], text, False))


def _check_heads(cfg: Mapping[str, Any], h: int, a: int, kv: int, head_dim: int | None, where: str | None,
                 hidden_key: str = "hidden_size") -> int:
    if kv > a or a % kv:
        # the divisors of a nearest kv, as the hint (h18b minor c): a typo'd 5 for 32 heads offers 4 and 8
        divisors = [d for d in range(1, a + 1) if a % d == 0]
        near = sorted({max((d for d in divisors if d < kv), default=a), min((d for d in divisors if d > kv), default=a)})
        raise _error(cfg, where, f"num_key_value_heads ({kv}) must divide num_attention_heads ({a})",
                     "num_key_value_heads", "Grouped-query attention shares each KV head among "
                     f"num_attention_heads / num_key_value_heads query heads; the nearest that divide {a}: "
                     + " or ".join(str(d) for d in sorted(near)) + ". Check the model's published config.json.")
    if head_dim is None:
        if h % a:
            if hidden_key == "n_embd":  # GPT-2's and GPTBigCode's configs have no head_dim key
                raise _error(cfg, where, f"n_embd ({h}) is not divisible by n_head ({a})", hidden_key,
                             "Check both against the model's published config.json.")
            raise _error(cfg, where,
                         f"{hidden_key} ({h}) is not divisible by num_attention_heads ({a}) and there is no head_dim",
                         hidden_key, "Add the model's head_dim to the config.")
        head_dim = h // a
    return head_dim


def layer_indices(cfg: Mapping[str, Any], where: str | None, key: str, layers: int) -> frozenset[int]:
    """The layer indices a config lists under ``key`` (Qwen2-/Qwen3-MoE ``mlp_only_layers``), each a whole
    number from 0 to ``layers`` - 1 (Transformers tests ``layer_idx in mlp_only_layers`` for layer_idx in
    range(num_hidden_layers): any other index matches no layer) and listed once. A missing, null or empty
    list is no layer.

    Raises:
        ModelConfigError: not a list of whole numbers; an index outside the model (999, -1: likely a typo for a
            real index, which would be silently ignored); an index listed twice (h26b M1).
    """
    given = cfg.get(key) or []
    if not isinstance(given, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in given):
        raise _error(cfg, where, f"{key} must be a list of layer indices, not {_shown(given)}", key)
    last = layers - 1
    for i in given:
        if not 0 <= i <= last:
            raise _error(cfg, where, f"{key} holds {i}, which is no layer of this model: the layers are 0 to {last} "
                         f"(num_hidden_layers {layers})", key,
                         f"List indices from 0 to {last}; check {i} against the model's published config.json.")
    seen: set[int] = set()
    for i in given:
        if i in seen:
            raise _error(cfg, where, f"{key} lists layer {i} more than once", key,
                         f"List each layer once: {_shown(sorted(seen | set(given)))}.")
        seen.add(i)
    return frozenset(given)


class _Merged(dict):
    """A config mapping with defaults filled in that keeps the file's line numbers for errors."""

    def __init__(self, defaults: Mapping[str, Any], given: Mapping[str, Any]):
        super().__init__({**defaults, **given})
        self.lines = getattr(given, "lines", None) or {}
