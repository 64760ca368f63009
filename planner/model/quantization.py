"""A checkpoint's ``quantization_config``, read into the storage layout of its linear weights.

:func:`weight_scheme` reads the two layouts whose storage is more than "bits per value":

- ``quant_method: compressed-tensors`` (the format of the ``compressed-tensors`` library, written by
  llm-compressor; neuralmagic / RedHatAI checkpoints such as Llama-3.1-8B-Instruct-FP8): one
  ``config_groups`` entry targeting ``Linear`` whose ``weights`` give ``num_bits``, ``type`` (int or
  float), ``strategy`` (tensor, channel, group, block), ``group_size`` or ``block_structure`` and
  ``symmetric``; ``input_activations`` (None for weight-only schemes; ``dynamic: false`` keeps a
  static input scale per module); ``ignore`` lists the modules left unquantized (``lm_head``, or
  ``re:`` regular expressions over module paths). Three schemes are sized: FP8 W8A8 (8-bit float
  weights), INT8 W8A8 (8-bit int weights, int8 activations) and WNA16 (4- or 8-bit int weights
  packed into int32, 16-bit activations, group or channel scales: "w4a16").
- ``quant_method: fp8`` with ``weight_block_size`` (DeepSeek-V3 and R1 ship fp8 weights with one
  fp32 ``weight_scale_inv`` per 128 x 128 block).

The bytes each scheme takes on the GPU are those of vLLM's loaders, which keep the layout of the
checkpoint (vllm/model_executor/layers/quantization/compressed_tensors/schemes/: W8A8 FP8 keeps
fp8 weights and fp32 scales, one per tensor, output row or block, ``create_fp8_scale_parameter``;
W8A8 INT8 int8 weights and fp32 scales per tensor or row, ``compressed_tensors_w8a8_int8.py``;
WNA16 int32-packed weights, group scales in the model dtype (``params_dtype``) and a 2-value int64
``weight_shape`` per module, ``compressed_tensors_wNa16.py``; static input scales are one fp32 each;
an asymmetric scheme's zero points are packed like the weights). Transformers' compressed-tensors
integration loads the same tensors.

Schemes outside these (NVFP4, 2:4 sparsity, W4A8, several config_groups of different schemes) are
returned as ``None`` with a description, and sized as the user's ``weights`` then (with a warning).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class WeightScheme:
    """How a checkpoint stores its quantized linear weights.

    Attributes:
        method: 'compressed-tensors' or 'fp8'.
        name: the scheme in words ('FP8 W8A8', 'INT8 W8A8', 'W4A16', ...).
        bits: bits per stored weight value (8 or 4).
        kind: 'float' or 'int'.
        strategy: 'tensor', 'channel', 'group' or 'block'.
        group_size: values per scale for 'group' (None otherwise).
        block: (rows, columns) of a 'block' scale (None otherwise).
        symmetric: no zero points (an asymmetric scheme stores one per scale, packed like the weights).
        static_input_scale: one fp32 input scale per module (activations quantized with a static scale).
        packed: weights packed into int32 words (the pack-quantized format).
        scale_bytes: bytes of one scale (4: fp32, as vLLM keeps W8A8 scales; 2: the model dtype,
            WNA16's group scales).
        ignore: module names or ``re:`` patterns left unquantized.
        activations: the activations' dtype the kernels compute in ('fp8', 'int8' or '16-bit'),
            which the GPU must support.
    """

    method: str
    name: str
    bits: int
    kind: str
    strategy: str
    group_size: int | None = None
    block: tuple[int, int] | None = None
    symmetric: bool = True
    static_input_scale: bool = False
    packed: bool = False
    scale_bytes: int = 4
    ignore: tuple[str, ...] = field(default_factory=tuple)
    activations: str = "16-bit"

    @property
    def weight_format(self) -> str:
        """The planner's weight format name for a checkpoint of this scheme."""
        return "fp8" if self.method == "fp8" else "compressed-tensors"

    def ignores(self, path: str) -> bool:
        """Whether the module at ``path`` (e.g. ``model.layers.0.mlp.gate``) stays unquantized:
        an ``ignore`` entry equal to it or to its last component, or an ``re:`` pattern that
        matches it (compressed-tensors ``is_match``: ``re.match`` on the module name)."""
        return self.ignorer()(path)

    def ignorer(self) -> Callable[[str], bool]:
        """:meth:`ignores` as a function that compiles the ``re:`` entries once, joined into one RE2 pattern
        (planner.model.linearre: linear time, h30b N1), and matches each path once (a memo of its own, per
        call of this method: h29b N2, a long list against a deep model). An ``re:`` entry RE2 cannot read
        as Python does is left out (config.json's checks refuse it, planner.model.quant_checks)."""
        if self.method == "fp8":  # Transformers' FineGrainedFP8 reads modules_to_not_convert
            return KeptModules("modules_to_not_convert", self.ignore).matcher()
        from planner.model.linearre import joined

        names = frozenset(e for e in self.ignore if not e.startswith("re:"))
        patterns = joined(e[3:] for e in self.ignore if e.startswith("re:"))
        memo: dict[str, bool] = {}

        def ignores(path: str) -> bool:
            if path not in memo:
                memo[path] = (path in names or path.rpartition(".")[2] in names
                              or any(p.match(path) is not None for p in patterns))
            return memo[path]
        return ignores

    def describe(self) -> str:
        """The scheme in words, for formulas and descriptions."""
        if self.strategy == "group":
            how = f"group scales of {self.group_size}"
        elif self.strategy == "block":
            how = f"{self.block[0]} x {self.block[1]} block scales" if self.block else "block scales"
        else:
            how = f"per-{self.strategy} scales"
        return f"{self.method} {self.name} ({how}{'' if self.symmetric else ', zero points'})"


@dataclass(frozen=True)
class KeptModules:
    """The linear modules a quantized checkpoint leaves in 16-bit, as its ``quantization_config`` lists them.

    Attributes:
        key: the config key (``modules_to_not_convert`` for AWQ, FP8 and MXFP4, ``llm_int8_skip_modules``
            for bitsandbytes, ``modules_in_block_to_quantize`` for GPTQ).
        names: the entries (GPTQ's nested lists flattened).
        only: the names are the modules quantized inside each block, every other is kept (GPTQ:
            optimum's ``GPTQQuantizer.convert_model`` keeps a layer's module only when its name ends with
            one of them, ``name.endswith(layer)``; Transformers' GPTQ loading goes through it).
    """

    key: str
    names: tuple[str, ...]
    only: bool = False

    def keeps(self, path: str) -> bool:
        """Whether the module at ``path`` (``model.layers.0.mlp.up_proj``) stays 16-bit: one path; the memory
        model asks of many through :meth:`matcher`."""
        return self.matcher()(path)

    def matcher(self) -> Callable[[str], bool]:
        """:meth:`keeps` as a function that compiles the entries once (RE2, planner.model.linearre: linear time,
        h30b N1, N3) and matches each path once (a memo of its own, per call of this method: h29b N2, 1,000 names
        overflowed ``re``'s cache when each name and path was compiled and matched alone).

        The rule, entry by entry (GPTQ's ``only`` aside: a module is kept unless its path ends with an entry,
        optimum ``GPTQQuantizer.convert_model``'s ``name.endswith(layer)``): an entry names the module when it is
        a part of the path (Transformers 4's ``_replace_with_bnb_linear``, ``replace_with_awq_linear`` and
        ``replace_with_fp8_linear``: ``key in ".".join(current_key_name)``, so ``mlp`` names every MLP
        projection), or a regular expression matching the path from its start (Transformers 5
        quantizers_utils ``should_convert_module``: ``re.match(key, full_name)``, so
        ``model.layers.*.self_attn`` names the attention of every layer); an entry that is no regular
        expression is read as text only."""
        if self.only:
            ends = tuple(self.names)
            return lambda path: not path.endswith(ends)
        # one search for any name as a part of the path; one match from the start for the patterns, joined
        # into one RE2 (linear time, h30b N1, N3); an entry with no special character is no pattern, one
        # that Python's re does not compile is read as text only, one RE2 cannot read as Python does is
        # left out (config.json's checks refuse it, planner.model.quant_checks)
        if not self.names:
            return lambda path: False
        from planner.model.linearre import any_part, joined

        part = any_part(self.names)
        alone = joined(n for n in self.names if re.escape(n) != n)
        memo: dict[str, bool] = {}

        def keeps(path: str) -> bool:
            if path not in memo:
                memo[path] = part.search(path) is not None or any(p.match(path) is not None for p in alone)
            return memo[path]
        return keeps


#: The key listing a checkpoint's unquantized modules, by quant_method.
KEPT_KEYS = {"awq": "modules_to_not_convert", "fp8": "modules_to_not_convert", "mxfp4": "modules_to_not_convert",
             "bitsandbytes": "llm_int8_skip_modules", "gptq": "modules_in_block_to_quantize"}


def kept_modules(qcfg: Mapping[str, Any]) -> KeptModules | None:
    """The modules a ``quantization_config`` of AWQ, GPTQ, bitsandbytes, FP8 or MXFP4 leaves unquantized
    (:class:`KeptModules`), or None when it lists none (a list of texts: config.json's checks refuse
    others, planner.model.quant_checks)."""
    method = str(qcfg.get("quant_method", "")).lower()
    key = KEPT_KEYS.get(method)
    value = qcfg.get(key) if key else None
    if not isinstance(value, (list, tuple)) or not value:
        return None
    names: list[str] = []
    for item in value:
        names.extend(item if isinstance(item, (list, tuple)) else [item])
    names = [n for n in names if isinstance(n, str) and n]
    return KeptModules(key, tuple(names), only=method == "gptq") if names or method == "gptq" else None


#: compressed-tensors weight strategies the schemes above size.
_STRATEGIES = ("tensor", "channel", "group", "block")


def _unsupported(words: str) -> tuple[None, str]:
    return None, words


def weight_scheme(qcfg: Mapping[str, Any]) -> tuple[WeightScheme | None, str]:
    """The storage scheme of a ``quantization_config``, with the config in words.

    Returns (scheme or None, words): None for a method that is not one of the two above (the caller
    handles AWQ, GPTQ, bitsandbytes and MXFP4) or for a compressed-tensors scheme outside the sized
    ones, whose words then say what it is.
    """
    method = str(qcfg.get("quant_method", "")).lower()
    if method == "fp8":
        block = qcfg.get("weight_block_size")
        if isinstance(block, (list, tuple)) and len(block) == 2 and all(isinstance(b, int) for b in block):
            scheme = WeightScheme("fp8", "FP8 block", 8, "float", "block", block=(int(block[0]), int(block[1])),
                                  ignore=tuple(str(x) for x in (qcfg.get("modules_to_not_convert")
                                                                or qcfg.get("ignored_layers") or ())),
                                  activations="fp8")
            return scheme, f"quant_method fp8, weight_block_size {list(block)}"
        return None, "quant_method fp8"
    if method != "compressed-tensors":
        return None, f"quant_method {method or '?'}"
    groups = qcfg.get("config_groups")
    fmt = qcfg.get("format")
    words = f"quant_method compressed-tensors, format {fmt}"
    if not isinstance(groups, Mapping) or len(groups) != 1:
        return _unsupported(words + (f", {len(groups)} config_groups" if isinstance(groups, Mapping) else
                                     ", no config_groups"))
    group = next(iter(groups.values()))
    if not isinstance(group, Mapping):
        return _unsupported(words)
    targets = group.get("targets")
    if list(targets or []) != ["Linear"]:
        return _unsupported(words + f", targets {_few(targets)}")
    w = group.get("weights")
    if not isinstance(w, Mapping):
        return _unsupported(words + ", no weights scheme")
    bits, kind, strategy = w.get("num_bits"), str(w.get("type", "int")), str(w.get("strategy", "tensor"))
    if fmt in ("marlin-24", "sparse-24", "sparse-24-bitmask", "nvfp4-pack-quantized", "mxfp4-pack-quantized") \
            or strategy not in _STRATEGIES:
        return _unsupported(words + f", {bits}-bit {kind} weights, strategy {strategy}")
    a = group.get("input_activations")
    ignore = tuple(str(x) for x in (qcfg.get("ignore") or ()))
    symmetric = bool(w.get("symmetric", True))
    group_size = w.get("group_size") if strategy == "group" else None
    block = w.get("block_structure") if strategy == "block" else None
    if strategy == "group" and not (isinstance(group_size, int) and group_size > 0):
        return _unsupported(words + ", group strategy without a group_size")
    if strategy == "block":
        if isinstance(block, str) and "x" in block:  # older configs write "128x128"
            block = [int(x) for x in block.split("x")]
        if not (isinstance(block, (list, tuple)) and len(block) == 2):
            return _unsupported(words + ", block strategy without a block_structure")
        block = (int(block[0]), int(block[1]))
    static = isinstance(a, Mapping) and a.get("dynamic") is False
    common = dict(strategy=strategy, group_size=group_size, block=block, symmetric=symmetric, ignore=ignore,
                  static_input_scale=static)
    if bits == 8 and kind == "float" and isinstance(a, Mapping) and a.get("num_bits") == 8:
        return WeightScheme("compressed-tensors", "FP8 W8A8", 8, "float", activations="fp8", **common), \
            words + ", FP8 W8A8"
    if bits == 8 and kind == "int" and isinstance(a, Mapping) and a.get("num_bits") == 8:
        if strategy not in ("tensor", "channel"):
            return _unsupported(words + f", INT8 W8A8 with {strategy} scales")
        return WeightScheme("compressed-tensors", "INT8 W8A8", 8, "int", activations="int8", **common), \
            words + ", INT8 W8A8"
    if bits in (4, 8) and kind == "int" and a is None and strategy in ("group", "channel"):
        return WeightScheme("compressed-tensors", f"W{bits}A16", bits, "int", packed=True, scale_bytes=2,
                            **common), words + f", W{bits}A16"
    if bits == 8 and kind == "float" and a is None:
        return WeightScheme("compressed-tensors", "FP8 W8A16", 8, "float", **common), words + ", FP8 W8A16"
    return _unsupported(words + f", {bits}-bit {kind} weights" + (", activations quantized" if a else ""))


def _few(values: Any, most: int = 3) -> str:
    """A config value as a warning quotes it: a list by its first ``most`` entries (each clipped) and how many
    there are, so that a group targeting 224 module names is one line, not 100 (h33b m8); anything else clipped."""
    from planner.core.names import clip_text

    if isinstance(values, (list, tuple)) and len(values) > most:
        shown = ", ".join(repr(clip_text(str(v), 60)) for v in values[:most])
        return f"[{shown}, ... ({len(values):,} entries)]"
    return clip_text(str(values), 200)
