"""The releases of each training framework that planner models, and where a modelled mechanism changed.

A training workload's ``framework_version`` names the release of its framework (for ``deepspeed`` and
``fsdp``, whose model code, loss and Trainer are Hugging Face Transformers', the Transformers release).
Left out, it is the release the planner's model of that framework was read from (:attr:`ReleaseLine.current`,
stated in every estimate's stack settings); a release older than :attr:`ReleaseLine.oldest` is refused,
naming the oldest one modelled. A release newer than ``current`` is modelled as ``current``.

Each :class:`~planner.core.versions.Change` below is a mechanism that switches at the release where its
source changed; the estimate reads it through :func:`framework_has` (planner.workload.frameworks.defaults,
planner.memory.loss.loss_spec). Sources, per framework:

- ``unsloth`` (github.com/unslothai/unsloth; the version is ``__version__`` in ``unsloth/models/_utils.py``):
  the offloaded gradient checkpointing the planner models (``use_gradient_checkpointing="unsloth"``,
  ``Unsloth_Offloaded_Gradient_Checkpointer``) first ships in 2024.4 (commit 4474e4bca4, 2024-04-08);
  cut cross-entropy (``fused_linear_cross_entropy`` from unsloth_zoo, which calls Apple's
  ``cut_cross_entropy`` when torch >= 2.4) replaces the full logits in ``CausalLM_fast_forward`` from
  commit fa8e59eb1b ("Cut Cross Entropy", 2024-11-17), first released in 2024.11.8 (PR 1315, 2024-11-21;
  2024.11.7, commit 892115606d, still computes ``self.lm_head(hidden_states)`` and
  ``Fast_CrossEntropyLoss`` on the whole logits); from 2024.12.4 (commit b9fe2588e5, 2024-12-10) a
  micro-batch of at most 1,024 tokens keeps the logits again (``if bsz*q_len <= 1024: RETURN_LOGITS =
  True``). Whenever the forward returns those 16-bit logits, the Trainer's Accelerate wrapper copies them to
  fp32 (``convert_outputs_to_fp32``, accelerate v0.30.1 accelerator.py L1356-1365) beside the ones the loss
  keeps: the same two switches decide it (planner.memory.loss ``returned_logits_copy``). The release
  modelled is 2025.1.5 (commit e3162dc5, 2025-01-14); later releases replace cut
  cross-entropy with ``unsloth_fused_ce_loss`` (unsloth/models/llama.py at 015bdef), which is not modelled.
- ``torchtune`` (github.com/pytorch/torchtune, tags v0.1.0 to v0.6.1): v0.1.0 and v0.1.1 pin torchao 0.1, whose
  ``NF4Tensor.from_tensor`` quantizes a whole weight at once (``quantize_tensor_nearest``: ``(value -
  nf4).abs()``, a 16-wide bf16 difference per value), and torchtune converts each bf16 weight on the GPU as it
  loads the checkpoint (``inplace_copy``: ``to_nf4(args[0][1].to(dest_tensor.device))``,
  torchtune/utils/_register_nf4_dispatch_ops.py): a load-time peak (planner.memory.load_peaks); v0.2.0 pins
  torchao 0.3.1, which quantizes in chunks of 1024**2 values (torchao PR 196). Through v0.2.1 (2024-07-25) the
  distributed recipes wrap the model with FSDP1 (``model = FSDP(...)``, recipes/full_finetune_distributed.py
  and lora_finetune_distributed.py) and every config's loss is ``torch.nn.CrossEntropyLoss`` over the
  model's whole fp32 output (``output = self.output(h).float()``, torchtune/modules/transformer.py);
  v0.3.0 (2024-09-17) shards with FSDP2 ``fully_shard`` (PR 1287, commit afd23fd0b, full fine-tune; PR
  1517, commit 6deeda92c, LoRA) and its configs use ``CEWithChunkedOutputLoss``. The release modelled is
  v0.5.0, the first with commit 1814feb17 (2024-11-18) that planner.workload.frameworks cites.
- ``litgpt`` (github.com/Lightning-AI/litgpt): the model and scripts at commit 00af8b0d (version
  0.4.13.dev1, pyproject.toml) and lit-gpt's resource tables of 2023 (commit 8641822, setup.py version
  0.1.0), both checked against their published runs (tests/test_published.py); no change between them is
  modelled.
- ``transformers`` (and ``deepspeed``, ``fsdp``): modelled from 4.31.0 (the first release with Llama 2's
  grouped K/V heads). The loss is ``ForCausalLMLoss`` (src/transformers/loss/loss_utils.py), added by PR 34191
  ("Fix Gradient Accumulation issue", 2024-10) and first released in 4.46.0; before, each model's forward
  computes it (``logits.float()``, a shifted contiguous copy, ``CrossEntropyLoss``), which holds the same
  12 B per token and vocabulary entry at its peak (planner.memory.train_cache), so nothing switches there.
  Llama attention is eager before 4.36.0 (``LlamaSdpaAttention`` from 4.36.0: TRANSFORMERS_SDPA; an older
  release defaults to eager and refuses sdpa). The validation grid runs 5.24.0 (reports/validation.md).
  The KV cache a training forward returns (``use_cache``, the config's default, True for Llama; Transformers
  forces it off only under its own gradient checkpointing, ``if self.gradient_checkpointing and
  self.training``) is modelled by planner.memory.train_cache: what it costs is not one release boundary
  but depends on who saves K and V. Measured on CPU (torch 2.13, a 4-layer Llama config, b 2, s 128;
  the cache's tensors whose storage autograd's saved-tensor hooks never see; the script is
  tests/data/validation/kv_cache_training_probe.py):
  4.35.2 (eager attention: ``torch.matmul`` saves reshaped copies of the transposed K and of V) the whole
  cache is extra with or without checkpointing; 4.36.0 (SDPA by default) none for full multi-head
  attention without checkpointing, all of it for grouped-query heads (``repeat_kv`` copies are saved
  instead); 5.17.0 none without checkpointing (SDPA ``enable_gqa``, from 4.54.0: TRANSFORMERS_SDPA_GQA).
  Under a checkpoint wrapper (FSDP's
  ``apply_activation_checkpointing``, as llama-recipes ran before commit 486b8809, PR 165, 2023-09-06:
  "saves ~4 GB" on LLaMA-7B; the key ``checkpoint_wrapper``) the whole cache is extra in all three, at the
  end of the forward (2 x layers x b x s x kv heads x head dim x 2 B; Llama-2-7B at the recipe's batch 4 of
  2,048-token chunks: 4.29 GB), and in 4.36.0 the backward then fails (CheckpointError: the recompute appends to the
  same DynamicCache; huggingface/transformers issue 28056).
"""

from __future__ import annotations

from typing import Any

from planner.core.versions import Change, ReleaseLine, prerelease_words, release_key

__all__ = ["FRAMEWORK_RELEASES", "TRANSFORMERS_LOSS_UTILS", "TRANSFORMERS_SDPA", "TRANSFORMERS_SDPA_GQA",
           "UNSLOTH_CUT_CE", "UNSLOTH_SHORT_LOGITS", "TORCHTUNE_CHUNKED_NF4", "TORCHTUNE_FSDP2",
           "framework_has",
           "framework_release_line", "modelled_as", "read_release", "release_text"]

#: Unsloth computes the loss with cut cross-entropy (no logits stored) from this release.
UNSLOTH_CUT_CE = Change(
    "2024.11.8", "cut cross-entropy (no full logits stored)",
    "https://github.com/unslothai/unsloth/commit/fa8e59eb1bf9f7db80dcb8cf11f37df217c1b0b3 (released in "
    "2024.11.8, PR 1315)")
#: ... and from this release keeps the logits (its own cross-entropy kernel) up to 1,024 tokens.
UNSLOTH_SHORT_LOGITS = Change(
    "2024.12.4", "logits kept for micro-batches of at most 1,024 tokens (Fast_CrossEntropyLoss)",
    "https://github.com/unslothai/unsloth/commit/b9fe2588e5 (unsloth/models/llama.py: if bsz*q_len <= 1024: "
    "RETURN_LOGITS = True; __version__ 2024.12.4)")
#: torchtune's distributed recipes shard with FSDP2 and its configs chunk the loss from this release.
TORCHTUNE_FSDP2 = Change(
    "0.3.0", "FSDP2 fully_shard in the distributed recipes (FSDP1 before) and the configs' "
             "CEWithChunkedOutputLoss (torch.nn.CrossEntropyLoss over the fp32 output before)",
    "https://github.com/pytorch/torchtune/pull/1287 (commit afd23fd0b), /pull/1517 (commit 6deeda92c); "
    "recipes/configs/*/*.yaml at v0.2.1 and v0.3.0")

#: torchtune's QLoRA base is quantized by torchao in chunks from this release (the whole weight at once before).
TORCHTUNE_CHUNKED_NF4 = Change(
    "0.2.0", "NF4 quantization at load in chunks of 1,048,576 values (torchao 0.3.1 pinned; torchao 0.1 before, "
             "which quantizes a whole weight at once)",
    "torchtune pyproject.toml: 'torchao==0.1' at v0.1.0 and v0.1.1, 'torchao==0.3.1' at v0.2.0; torchao "
    "https://github.com/pytorch/ao/pull/196 (commit 6081796bc, 'perform in chunks', first in torchao v0.2.0)")

#: Transformers' Llama runs ``LlamaSdpaAttention`` (torch SDPA) by default from this release (eager before).
TRANSFORMERS_SDPA = Change(
    "4.36.0", "SDPA attention by default (eager torch.matmul before; 'sdpa' unknown)",
    "huggingface/transformers v4.36.0 src/transformers/models/llama/modeling_llama.py L740 "
    "(LLAMA_ATTENTION_CLASSES 'sdpa': LlamaSdpaAttention), L951 (_use_sdpa)")
#: ... whose loss is ``ForCausalLMLoss`` from this release (computed in LlamaForCausalLM.forward before).
TRANSFORMERS_LOSS_UTILS = Change(
    "4.46.0", "the loss in loss_utils.py ForCausalLMLoss (in the model's forward before: the same peak, "
              "planner.memory.train_cache)",
    "https://github.com/huggingface/transformers/pull/34191 (first released in 4.46.0)")
#: ... and SDPA broadcasts grouped K/V heads itself (``enable_gqa``, no ``repeat_kv`` copies) without a mask.
TRANSFORMERS_SDPA_GQA = Change(
    "4.54.0", "SDPA enable_gqa for grouped K/V heads when there is no attention mask (repeat_kv copies before)",
    "https://github.com/huggingface/transformers/pull/39412 (v4.54.0 src/transformers/integrations/"
    "sdpa_attention.py L27-32 use_gqa_in_sdpa, L54-57; v4.53.3 L41-42 repeat_kv always)")

_TRANSFORMERS = ReleaseLine("transformers", current="5.24.0", oldest="4.31.0",
                            changes=(TRANSFORMERS_SDPA, TRANSFORMERS_LOSS_UTILS, TRANSFORMERS_SDPA_GQA))

#: The releases modelled per framework name of planner.workload.frameworks.FRAMEWORKS (``deepspeed`` and
#: ``fsdp`` run Transformers' model code and loss: their line is Transformers').
FRAMEWORK_RELEASES: dict[str, ReleaseLine] = {
    "transformers": _TRANSFORMERS,
    "deepspeed": _TRANSFORMERS,
    "fsdp": _TRANSFORMERS,
    "torchtune": ReleaseLine("torchtune", current="0.5.0", oldest="0.1.0", changes=(TORCHTUNE_CHUNKED_NF4, TORCHTUNE_FSDP2)),
    "litgpt": ReleaseLine("litgpt", current="0.4.13.dev1", oldest="0.1.0"),
    "unsloth": ReleaseLine("unsloth", current="2025.1.5", oldest="2024.4",
                           changes=(UNSLOTH_CUT_CE, UNSLOTH_SHORT_LOGITS), calendar=True),
}


def framework_release_line(framework: str) -> ReleaseLine:
    """The :class:`ReleaseLine` of a framework name (KeyError for a name not in FRAMEWORK_RELEASES)."""
    return FRAMEWORK_RELEASES[framework]


def framework_has(framework: str, release: str | None, change: Change) -> bool:
    """Whether ``framework`` at ``release`` (None: the current one) runs ``change``.

    Raises:
        ValueError: ``release`` is not a release string (planner.core.versions.parse_release).
    """
    line = FRAMEWORK_RELEASES[framework]
    return line.has(release or line.current, change.release)


def modelled_as(framework: str, release: str) -> str | None:
    """The release ``release`` is modelled as when it is newer than the current one modelled, else None."""
    line = FRAMEWORK_RELEASES[framework]
    return line.current if release_key(release) > release_key(line.current) else None


def release_text(framework: str, given: str | None) -> str:
    """The release an estimate models, in words, for its stack settings: the release and whose it is, whether
    it is the default, what a newer one is modelled as, and each change the release predates.

    Args:
        framework: a name of planner.workload.frameworks.FRAMEWORKS.
        given: ``framework_version`` as resolved (None: left out).
    """
    line = FRAMEWORK_RELEASES[framework]
    release = given or line.current
    text = f"{line.name} {release}"
    if given is None:
        text += " (default: the newest release modelled; set framework_version for another)"
    elif (cur := modelled_as(framework, release)) is not None:
        text += f" (newer than the newest release modelled: modelled as {cur})"
    text += prerelease_words(release)
    missing = [c for c in line.changes if not line.has(release, c.release)]
    if missing:
        text += "; predates " + "; predates ".join(f"{c.release}: {c.what}" for c in missing)
    return text


def _also_reads_as(given: str, lines: dict[str, ReleaseLine], own: ReleaseLine) -> list[str]:
    """The other release lines of ``lines`` that ``given`` is a plausible release of (no error from
    :meth:`ReleaseLine.resolve`), by key name, their own line once."""
    out: list[str] = []
    seen = {own.name}
    for name, line in lines.items():
        if line.name in seen:
            continue
        seen.add(line.name)
        try:
            line.resolve(given)
        except ValueError:
            continue
        out.append(name)
    return out


def read_release(entry: Any, key: str, line: ReleaseLine, *, lines: dict[str, ReleaseLine], key_name: str,
                 whose: str = "") -> str | None:
    """The release ``entry`` gives as ``key`` (``framework_version``, ``engine_version``), resolved against
    ``line`` (:meth:`ReleaseLine.resolve`); None when left out. One rule for both keys:

    - an empty value (YAML's null) is refused as 'not empty' (Entry.refuse_empty);
    - a text with blanks before or after it (a space, NBSP, U+3000) is refused, as bnb_version refuses it;
    - a number is refused: a YAML or Python float drops a release's trailing zeros (2024.10 reads as
      2024.1, 0.10 as 0.1), so only text names the release; the message speaks of YAML only when the value
      came from a file (``entry.file`` and a line for the key), and of a string otherwise (the Python API);
      a whole number (YAML ``2024``) is read as written;
    - text that is no release, another scheme, an older release than modelled (naming the oldest), or one
      past any release of the project (naming the newest modelled and, when ``given`` reads as a release of
      another line of ``lines``, that one: ``key_name`` is the key that chooses it, ``framework`` or
      ``engine``) is refused with one line and a hint.

    ``whose``: words put before the problem, such as deepspeed's "with framework deepspeed,
    framework_version names the Transformers release". Raises the entry's InputError.
    """
    lead = f"{whose}, and " if whose else ""
    if key not in entry.data:
        return None
    article = "an" if line.name[:1].lower() in "aeiou" else "a"  # 'an unsloth release'
    entry.refuse_empty(key, f"{article} {line.name} release such as {line.current!r}")  # YAML's null: 'not empty'
    raw = entry.data[key]
    if isinstance(raw, float):
        from_file = entry.file is not None and key in (getattr(entry.data, "lines", None) or {})
        if from_file:
            raise entry.error(f"{lead}YAML read the unquoted {key} as the number {raw!r}, which drops a release's "
                              "trailing zeros (2024.10 reads as 2024.1)", key,
                              f"Quote it as its project writes it, e.g. {key}: '{line.current}'.")
        raise entry.error(f"{lead}{key} is the number {raw!r}, and a number drops a release's trailing zeros (0.10 "
                          "is 0.1, 2024.10 is 2024.1)", key,
                          f"Pass the release as a string, as its project writes it, e.g. '{line.current}'.")
    if isinstance(raw, str) and raw.strip() and raw != raw.strip():
        # '5.24.0 ', NBSP, U+3000, U+2007 (str.isspace): no release has blanks, and bnb_version refuses them
        # as no release number, so both release keys do too (h18b #7)
        raise entry.error(f"{lead}{raw!r} is not {article} {line.name} release number: it has blanks before or "
                          "after it", key, f"Write it without them: {key}: '{raw.strip()}'.")
    try:
        return line.resolve(raw)
    except ValueError as exc:
        problem = str(exc)
    if " past any " in problem or " is no " in problem:
        others = _also_reads_as(str(raw).strip(), lines, line)
        hint = (f"Give {article} {line.name} release up to the newest modelled, {line.current} (the default)"
                + (f"; {str(raw).strip()} reads as a release of {' or '.join(others)} ({key_name}: "
                   f"{others[0]})" if others else "") + ".")
    elif "older than" in problem:
        hint = f"Leave {key} out for the newest release modelled ({line.current})."
    else:
        hint = f"Write it as {line.name} writes it, e.g. '{line.current}'."
    raise entry.error(lead + problem, key, hint)
