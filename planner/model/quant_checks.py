"""Checks of a config.json ``quantization_config``'s module lists and block sizes (h28b N2, N3).

:func:`check_quant_lists` refuses what the sizing code reads from a ``quantization_config`` and cannot
take: the lists of modules a checkpoint leaves unquantized that are no lists of names (AWQ, FP8 and
MXFP4 ``modules_to_not_convert``, bitsandbytes ``llm_int8_skip_modules``, compressed-tensors
``ignore``; GPTQ's ``modules_in_block_to_quantize`` lists the quantized ones, a list of lists),
lists of more than :data:`MAX_NAMES` entries or an entry of more than :data:`MAX_NAME_CHARS` characters
(h29b N2), entries read as regular expressions (compressed-tensors ``re:`` patterns; every AWQ / FP8 / MXFP4 /
bitsandbytes entry, as Transformers 5 reads them) that are none (h29b M4) or that planner's linear-time
matcher (RE2; h30b N1 and N3 replaced the pass-29 "exponential time" heuristic) cannot read as Python does
(a back-reference, a look-around: :func:`_pattern_problem`), ``config_groups`` ``targets``
that are no list of names, an FP8 ``weight_block_size`` that is not two whole numbers of at least 1,
a 4-bit AWQ / GPTQ ``group_size`` that does not divide the model's width, and AWQ / GPTQ settings of
the wrong kind (:func:`_check_settings`). Transformers and
compressed-tensors iterate these lists (a text would be read letter by letter) and compile the
``re:`` patterns (``re.match``), so no such checkpoint loads as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: The largest fp8 ``weight_block_size`` side read (DeepSeek-V3 uses 128; the group-size bound).
MAX_BLOCK = 1_000_000
#: The most entries a module list may hold (h29b N2: each is matched against every module path; real
#: checkpoints list a handful, DeepSeek-V3's fp8 and gpt-oss's MXFP4 lists a few dozen to a few hundred).
MAX_NAMES = 1_000
#: The longest entry of a module list, in characters (a module path is well under 100).
MAX_NAME_CHARS = 200
#: The most compressed-tensors ``config_groups`` read (h31b N1: each group's ``targets`` list is checked; real
#: checkpoints have one to three, one per scheme: e.g. attention and MLP quantized differently; 64 leaves room
#: for a scheme per kind of module of any model planner sizes).
MAX_GROUPS = 64


def _names_problem(value: Any, nested: bool, example: str = "lm_head") -> str | None:
    """What is wrong with a list of module names (None: nothing), the words starting with the index
    of a bad item ('[2] must be ...') or a space; ``nested``: a list of such lists may stand for it
    (GPTQ's blocks)."""
    if not isinstance(value, (list, tuple)):
        return f" must be a list of names such as [\"{example}\"], not {_shown(value)}"
    count = sum(len(x) if nested and isinstance(x, (list, tuple)) else 1 for x in value)
    if count > MAX_NAMES:
        return (f" lists {count:,} names, more than the {MAX_NAMES:,} read (each is matched against every module "
                "of the model, which has far fewer kinds)")
    for k, item in enumerate(value):
        if nested and isinstance(item, (list, tuple)):
            inner = _names_problem(item, False, example)
            if inner:
                return f"[{k}]{inner}"
            continue
        if not isinstance(item, str) or not item.strip():
            return f"[{k}] must be a name such as \"{example}\", not {_shown(item)}"
        if len(item) > MAX_NAME_CHARS:
            return (f"[{k}] is {len(item):,} characters long, more than the {MAX_NAME_CHARS} read (a module path "
                    "is far shorter)")
    return None


def _shown(value: Any) -> str:
    from planner.model.config_errors import _shown as shown

    return shown(value)


def _pattern_problem(names: Any, prefix: str = "re:", spent: list[int] | None = None,
                     matched: bool = True) -> str | None:
    """The first entry of ``names`` read as a regular expression (those starting with ``prefix``: the
    compressed-tensors ``re:`` entries; ``prefix`` "": every entry, as Transformers 5 reads
    ``modules_to_not_convert``) that does not compile, that Python's ``re`` would warn about (a set operation
    or nested set inside a class, planner.model.linearre.set_operation: told before Python compiles it, h31b
    N2), or that Python compiles and planner's linear-time matcher (RE2, planner.model.linearre: h30b N1, N3)
    cannot read as Python does (a back-reference, a look-around), in words; or the entry that brings the
    patterns over :data:`MAX_PIECES` pieces (planner.model.linearre.pieces) counted in ``spent`` (one item,
    the pieces of the lists checked before: the budget is config.json's, all lists and config_groups together,
    h31b N1), or the list when they compile over its memory budget. ``matched`` False: the list is one the
    memory model never matches (a ``config_groups`` ``targets`` list, a compressed-tensors scheme it does not
    size), so RE2 does not read it and its pieces do not count (Python's checks still apply). An entry with no special
    character is a name as written."""
    from planner.model.linearre import MAX_MEM, MAX_PIECES, fits, pieces, posix_class, set_operation, unsupported

    spent = [0] if spent is None else spent
    bodies: list[tuple[int, str]] = []
    for k, item in enumerate(names):
        body = item[len(prefix):] if isinstance(item, str) and item.startswith(prefix) else None
        if body is not None and re.escape(body) != body:
            # before Python compiles it, which would warn "Possible nested set" (a FutureWarning: h31b N2)
            posix = posix_class(body) or set_operation(body)
            if posix:
                return f"[{k}]: {_shown(item)} {posix}"
            try:
                re.compile(body)
            except (re.error, RecursionError, OverflowError) as exc:
                why = exc.msg if isinstance(exc, re.error) else type(exc).__name__
                return f"[{k}]: {_shown(item)} is not a regular expression ({why})"
            if matched:  # a list RE2 reads (h33b m8: a targets list, never read by RE2, counted too)
                spent[0] += pieces(body)  # before RE2 reads it: RE2 writes the repeats out first
            if spent[0] > MAX_PIECES:
                return (f"[{k}]: {_shown(item)} brings the quantization_config's patterns (all lists and "
                        f"config_groups together) to {spent[0]:,} pieces with their counted repeats written out, "
                        f"more than the {MAX_PIECES:,} planner's linear-time matcher (RE2) takes (write fewer or "
                        "shorter repeats)")
            problem = unsupported(body) if matched else None
            if problem:
                return f"[{k}]: {_shown(item)} {problem}"
            bodies.append((k, body))
    if matched and bodies and not fits([body for _, body in bodies]):
        which = (f"[{bodies[0][0]}]: {_shown(names[bodies[0][0]])} compiles" if len(bodies) == 1
                 else f" holds {len(bodies):,} patterns that together compile")
        return (f"{which} larger than the {MAX_MEM >> 20} MiB planner's linear-time matcher (RE2) gives a list "
                "(write fewer or shorter repeats)")
    return None


def check_quant_lists(cfg: Mapping[str, Any], where: str | None, q: Mapping[str, Any]) -> None:
    """Refuse a ``quantization_config`` ``q`` whose module lists or fp8 block size cannot be read (module
    docstring), at config.json's ``quantization_config`` key.

    Raises:
        ModelConfigError: one line naming the field and what it takes.
    """
    from planner.model.config_errors import _error
    from planner.model.quantization import KEPT_KEYS

    method = str(q.get("quant_method", "")).lower()
    keys = {KEPT_KEYS[method]} if method in KEPT_KEYS else set()
    keys |= {"modules_to_not_convert"} if "modules_to_not_convert" in q else set()
    spent = [0]  # the pieces of config.json's patterns so far: one budget for all lists and groups (h31b N1)
    for key in sorted(keys):
        value = q.get(key)
        gptq = key == "modules_in_block_to_quantize"  # names matched as suffixes; the others also as patterns
        problem = None if value is None else (_names_problem(value, gptq, "self_attn.q_proj" if gptq else "lm_head")
                                              or (None if gptq else _pattern_problem(value, "", spent)))
        if problem:
            raise _error(cfg, where, f"quantization_config.{key}{problem}", "quantization_config",
                         f"Copy the checkpoint's value, e.g. \"{key}\": "
                         + ('[["self_attn.q_proj", "self_attn.k_proj"]].' if gptq else '["lm_head"]; an entry is a '
                            'part of a module path or a Python regular expression matching it from the start, e.g. '
                            '"model.layers.*.self_attn".'))
    if method in ("awq", "gptq"):
        _check_settings(cfg, where, q, method, _error)
    if method in ("awq", "gptq") and q.get("bits", q.get("w_bit")) == 4:
        _check_group(cfg, where, q, _error)
    if method == "fp8":
        _check_block(cfg, where, q.get("weight_block_size"), _error)
    if method == "compressed-tensors":
        _check_compressed(cfg, where, q, _error, spent)


#: AWQ kernel versions Transformers loads (AwqConfig ``version``: AWQLinearVersion gemm, gemv, exllama, ipex;
#: AutoAWQ writes them in capitals, "GEMM", which Transformers lower-cases).
AWQ_VERSIONS = ("gemm", "gemv", "exllama", "ipex")
#: The true-or-false settings of AWQ (``zero_point``) and GPTQ (``desc_act``, ``sym``, ``true_sequential``).
_FLAGS = {"awq": ("zero_point",), "gptq": ("desc_act", "sym", "true_sequential")}


def _check_settings(cfg: Mapping[str, Any], where: str | None, q: Mapping[str, Any], method: str,
                    error: Any) -> None:
    """AWQ / GPTQ settings that cannot be so (h28b M3): a flag of :data:`_FLAGS` that is not true or
    false, an AWQ ``version`` that is none of :data:`AWQ_VERSIONS` (Transformers' AwqConfig refuses
    others), a GPTQ ``checkpoint_format`` that is no name ("gptq", "gptq_v2", "marlin")."""
    from planner.model.config_errors import _bool_hint, _is_json

    for flag in _FLAGS[method]:
        value = q.get(flag)
        if value is not None and not isinstance(value, bool):
            raise error(cfg, where, f"quantization_config.{flag} must be true or false, not {_shown(value)}",
                        "quantization_config", _bool_hint(flag, value, _is_json(where)))
    version = q.get("version") if method == "awq" else None
    if version is not None and not (isinstance(version, str) and version.lower() in AWQ_VERSIONS):
        raise error(cfg, where, f"quantization_config.version must be one of {', '.join(AWQ_VERSIONS)} (the AWQ "
                    f"kernels Transformers loads), not {_shown(version)}", "quantization_config",
                    "Copy the checkpoint's value; AutoAWQ writes \"version\": \"gemm\" for most checkpoints.")
    fmt = q.get("checkpoint_format") if method == "gptq" else None
    if fmt is not None and not (isinstance(fmt, str) and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,39}", fmt)):
        raise error(cfg, where, f"quantization_config.checkpoint_format must be the name of a GPTQ format such as "
                    f"\"gptq\" or \"gptq_v2\", not {_shown(fmt)}", "quantization_config",
                    "Copy the checkpoint's value (\"gptq\" unless the checkpoint says otherwise).")


def _check_group(cfg: Mapping[str, Any], where: str | None, q: Mapping[str, Any], error: Any) -> None:
    """A 4-bit AWQ / GPTQ ``group_size`` (AWQ's ``q_group_size``) that does not divide the model's width
    (``hidden_size``; GPT-2's ``n_embd``): each row would end in a part of a group, which the int4 sizing
    does not take (planner.workload.inference refuses such a ``group_size`` given by the user too) (h28b M7: told at config.json's key, not at the
    workload's ``group_size``, which the user did not give). A value that is no whole number is told
    before (planner.model.config_keys.check_declared)."""
    width = next((cfg.get(k) for k in ("hidden_size", "n_embd") if cfg.get(k) is not None), None)
    for key in ("group_size", "q_group_size"):
        group = q.get(key)
        if isinstance(group, float) and group.is_integer():
            group = int(group)
        if (isinstance(width, int) and not isinstance(width, bool) and width > 0 and isinstance(group, int)
                and not isinstance(group, bool) and group > 0 and width % group):
            fits = [g for g in (32, 64, 128, 256) if width % g == 0]
            raise error(cfg, where, f"quantization_config.{key} {group} does not divide the model's width "
                        f"(hidden_size {width}): each row of weights would end in a part of a group, which the int4 "
                        "sizing does not take",
                        "quantization_config", "Copy the checkpoint's value"
                        + (f" ({' or '.join(map(str, fits))}; most GPTQ and AWQ checkpoints use 128)." if fits else "."))
        if group is not None:
            return


def _check_block(cfg: Mapping[str, Any], where: str | None, block: Any, error: Any) -> None:
    """An fp8 ``weight_block_size``: absent/null (one scale per tensor) or two whole numbers from 1 to
    :data:`MAX_BLOCK` (rows, columns per fp32 scale; Transformers' FineGrainedFP8Config asks for two
    positive integers)."""
    if block is None:
        return
    ok = (isinstance(block, (list, tuple)) and len(block) == 2
          and all(isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= MAX_BLOCK for b in block))
    if not ok:
        raise error(cfg, where, "quantization_config.weight_block_size must be two whole numbers from 1 to "
                    f"{MAX_BLOCK:,} (rows and columns per scale), not {_shown(block)}", "quantization_config",
                    "Copy the checkpoint's value, e.g. \"weight_block_size\": [128, 128] (DeepSeek-V3); "
                    "without block scales, leave the key out.")


def _check_compressed(cfg: Mapping[str, Any], where: str | None, q: Mapping[str, Any], error: Any,
                      spent: list[int]) -> None:
    """compressed-tensors ``ignore`` and each ``config_groups`` entry's ``targets``: lists of module names
    or class names, whose ``re:`` entries are regular expressions (compressed-tensors ``is_match``
    compiles them); at most :data:`MAX_GROUPS` groups. Only the ``ignore`` of a scheme the memory model sizes
    is read by RE2 (planner.model.quantization.weight_scheme: one group targeting ``Linear``); ``targets``
    patterns are never matched (h31b N1), but their pieces count in config.json's budget (``spent``)."""
    from planner.model.quantization import weight_scheme

    groups = q.get("config_groups")
    if isinstance(groups, Mapping) and len(groups) > MAX_GROUPS:
        raise error(cfg, where, f"quantization_config.config_groups holds {len(groups):,} groups, more than the "
                    f"{MAX_GROUPS} read (a checkpoint has one to three: one scheme per kind of layer)",
                    "quantization_config", "Copy the config_groups as the checkpoint publishes them.")
    ignore = q.get("ignore")
    if ignore is not None:
        try:
            sized = weight_scheme(q)[0] is not None
        except (TypeError, ValueError):  # a scheme it cannot read is not sized
            sized = False
        problem = _names_problem(ignore, False) or _pattern_problem(ignore, spent=spent, matched=sized)
        if problem:
            raise error(cfg, where, f"quantization_config.ignore{problem}",
                        "quantization_config", "Copy the list as the checkpoint publishes it, e.g. \"ignore\": "
                        "[\"lm_head\"]; a pattern is written \"re:\" and a Python regular expression, "
                        "e.g. \"re:.*mlp.gate$\".")
    if not isinstance(groups, Mapping):
        return
    for name, group in groups.items():
        targets = group.get("targets") if isinstance(group, Mapping) else None
        if targets is None:
            continue
        problem = _names_problem(targets, False, "Linear") or _pattern_problem(targets, spent=spent, matched=False)
        if problem:
            raise error(cfg, where, f"quantization_config.config_groups.{name}.targets{problem}",
                        "quantization_config", "Copy the list as the checkpoint publishes it, e.g. "
                        "\"targets\": [\"Linear\"].")
