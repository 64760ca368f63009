"""The inference engines' releases planner models, and the releases at which a mechanism changed.

An inference workload's ``engine_version`` (CLI ``--engine-version``) names the release of its engine:
a vLLM release (``0.6.5``, ``v0.8.5.post1``) or a llama.cpp build (``b1792``). Left out, the current
release of :data:`ENGINE_RELEASES` is modelled, and the outputs say so. A release older than the
oldest modelled one is refused, naming it. Engine hf (Transformers ``generate``) has no release line
here: its mechanism is the Transformers release the planner models (planner.memory.estimate).

The mechanisms switched by release (each :class:`planner.core.versions.Change` cites where it changed):

- vLLM's start-up profile. Releases before 0.8.0 run the V0 engine (``vllm/worker/model_runner.py``
  ``profile_run``: ``max_num_seqs`` prompts sampled with top_k = vocabulary - 1 and top_p = 0.99,
  whose sampler sorts every row of fp32 logits; planner.memory.vllm.V0_SAMPLER_BYTES_PER_ENTRY), with
  ``vllm serve``'s V0 defaults (256 sequences; ``max(max_model_len, 2048)`` batched tokens, 2,048 when
  chunked prefill is on, as it is by default above 32K tokens). From 0.8.0 V1 is the default engine
  (vLLM v0.8.0 release, docs/source/getting_started/v1_user_guide.md: "V1 is now enabled by default
  for all supported use cases", PR #15064) and the planner's V1 arithmetic applies.
- llama.cpp's Q2_K preset. Builds up to b1792 (commit dd5ae06, 2024-01-08) write the mix of PR #2707
  (commit bac66994, 2023-08-22: "mostly Q3_K except for tok_embeddings, attention.wq, attention.wk,
  which are Q2_K"); by b1828 (commit 469e75d, 2024-01-11) Q2_K is the 2-bit mix of today (ffn_gate and
  ffn_up in Q2_K too; PR #5060: "Q2_K has become an actual 2-bit quantization"). The ggml-org/ci logs
  of the two builds list the types (open_llama_3b_v2 Q2_K: 53 q2_K + 130 q3_K tensors at b1792, 105 +
  78 at b1828). Builds b1793-b1827 are read as the new mix (the change landed between the two logged
  builds; which commit is not pinned here).
- vLLM's LoRA slots (``enable_lora``): the ``max_lora_rank`` values ``LoRAConfig`` accepts and the extra
  vocabulary rows every adapter slot carries (:func:`vllm_lora_ranks`, :func:`vllm_lora_extra_vocab`).
  Read in the releases' own source (the PyPI sdists): ``vllm/config.py`` ``LoRAConfig.__post_init__`` at
  v0.6.0, v0.7.0, v0.7.2 and v0.7.3 has ``possible_max_ranks = (8, 16, 32, 64, 128, 256)`` and
  ``possible_lora_extra_vocab_size = (0, 256, 512)``; at v0.8.0 ``(8, 16, 32, 64, 128, 256, 320, 512)`` and
  ``(256, 512)``; ``vllm/config/lora.py`` at v0.11.0 the same, at v0.11.1 ``MaxLoRARanks = Literal[1, 8, ...,
  512]`` (rank 1: PR #26461, "[Core] Relax the LoRA max rank") with ``lora_extra_vocab_size`` "deprecated and
  will be removed in v0.12.0"; v0.12.0 has no ``lora_extra_vocab_size`` field (PRs #28382 and #28545, "Remove
  LoRA extra vocab"). The default ``lora_extra_vocab_size`` is 256 up to v0.11.1.
- vLLM's LoRA slots and the KV budget (:func:`vllm_lora_outside_budget`). The V0 worker builds the LoRA
  layers after it measures the model load (``vllm/worker/model_runner.py`` ``load_model``:
  ``self.model_memory_usage = m.consumed_memory`` comes before ``create_lora_manager``, at v0.6.0-v0.7.3).
  v0.6.0-v0.6.4 subtract the profiling run's absolute ``allocated_bytes.all.peak`` (slots included); v0.6.5
  and v0.6.6 count everything on the card beyond the weights and the profile as ``non_torch`` (slots
  included; ``vllm/utils.py`` ``memory_profiling``: ``current_cuda_memory_bytes - baseline_memory_in_bytes -
  weights_memory_in_bytes - diff.torch_memory_in_bytes``); v0.7.0-v0.7.3 take ``non_torch`` as the CUDA
  memory beyond ``torch.cuda.memory_reserved()`` since start-up and the torch peak as its increase during
  the profile (``MemorySnapshot``, PR #11809), so slots allocated before the profile are in no term and the KV
  cache is sized as if they were not there: vllm issue #14450 (2025-03-07, V0): "using different LoRa Rank
  and Max LoRas did not affect the number of kv cache blocks", answered "This is a bug, V1 of LoRA should
  not have this issue." From v0.8.0 (V1) ``load_lora_model`` runs inside the profiled load
  (``vllm/v1/worker/gpu_model_runner.py``), so the slots count as weights.
"""

from __future__ import annotations

from planner.core.versions import Change, ReleaseLine, prerelease_words, release_key

#: vLLM's first release with V1 as the default engine.
VLLM_V1_DEFAULT = "0.8.0"
#: The first llama.cpp build with a logged run of today's Q2_K mix (see the module docstring).
LLAMACPP_Q2K_2BIT = "b1828"
#: A llama.cpp build known to have flash attention (PR #5021 merged 2024-04-30, a few builds before).
LLAMACPP_FA_KNOWN = "b2797"
#: The llama.cpp build where flash attention's default became 'auto' (flash_attn_type); off before it.
LLAMACPP_FA_AUTO = "b6327"

#: The first vLLM release whose LoRAConfig accepts max_lora_rank 320 and 512 (and no longer a
#: lora_extra_vocab_size of 0): v0.8.0's vllm/config.py; v0.7.3's allows 8-256 (module docstring).
VLLM_LORA_RANKS_512 = "0.8.0"
#: The first vLLM release accepting max_lora_rank 1 (vllm/config/lora.py MaxLoRARanks at v0.11.1; PR #26461).
VLLM_LORA_RANK_1 = "0.11.1"
#: The first vLLM release without LoRA extra vocabulary (v0.12.0: no lora_extra_vocab_size; PRs #28382, #28545).
VLLM_LORA_NO_EXTRA_VOCAB = "0.12.0"
#: The first vLLM release whose KV budget leaves the LoRA slots out (MemorySnapshot profiling, PR #11809),
#: and the release that counts them again (V1 by default); module docstring.
VLLM_LORA_OUTSIDE_FROM = "0.7.0"
#: LoRAConfig.lora_extra_vocab_size's default before :data:`VLLM_LORA_NO_EXTRA_VOCAB` (vllm/config.py at
#: v0.6.0-v0.7.3, vllm/config/lora.py at v0.11.1: ``lora_extra_vocab_size ... = 256``).
VLLM_LORA_EXTRA_VOCAB = 256

ENGINE_RELEASES: dict[str, ReleaseLine] = {
    "vllm": ReleaseLine(
        "vllm",
        # the newest release whose start-up log the V1 arithmetic is checked against (vllm#33155, 0.14.1)
        current="0.14.1",
        # V0's profile (sampler sort of max_num_seqs rows) is modelled from the 0.6 series on
        oldest="0.6.0",
        changes=(
            Change(VLLM_V1_DEFAULT,
                   "V1 became the default engine; this release runs V0, whose profiling run sorts max_num_seqs "
                   "rows of fp32 logits in its sampler (36 B per vocabulary entry beside the logits) with vllm "
                   "serve's V0 defaults (256 sequences, max(context, 2048) batched tokens)",
                   "https://github.com/vllm-project/vllm/releases/tag/v0.8.0; PR #15064 (v1_user_guide: 'V1 is "
                   "now enabled by default')"),
        ),
    ),
    "llama.cpp": ReleaseLine(
        "llama.cpp",
        # the llama.cpp the planner's GGUF and buffer tables were read at: commit 0c1e5709 (vendored by
        # llama-cpp-python 0.3.36), build b11312 of 2026-10-01 (projects pinning it write "llama.cpp b11312,
        # commit 0c1e57098bba43ac29e6e3b677cdceebdd22334f")
        current="b11312",
        # the GGUF era's first logged Q2_K run: build 1022 (commit bac6699, ggml-org/ci, 2023-08-22)
        oldest="b1022",
        changes=(
            Change(LLAMACPP_FA_KNOWN,
                   "builds are known to have flash attention (-fa, ggml-org/llama.cpp PR #5021, commit 9c67c27 of "
                   "2024-04-30; the first build with it is not pinned here): check that this build has --flash-attn "
                   "before sizing with flash_attention: true",
                   "https://github.com/ggml-org/llama.cpp/pull/5021; b2797 with flash attention: "
                   "https://github.com/kherud/java-llama.cpp/pull/60 ('Upgrade to llama.cpp b2797 ... Adds flash "
                   "attention', 2024-05-06)"),
            Change(LLAMACPP_FA_AUTO,
                   "flash attention became 'auto' by default (flash_attn_type: on where the backend runs it); before "
                   "it -fa was off unless given, so flash_attention defaults to false for this build",
                   "llama.cpp b6327 (2025-08-31): flash_attn deprecated for flash_attn_type auto|on|off "
                   "(https://github.com/mybigday/llama.node/pull/102, https://github.com/WasmEdge/WasmEdge/pull/4343)"),
            Change(LLAMACPP_Q2K_2BIT,
                   "Q2_K became a 2-bit mix (ffn_gate and ffn_up in Q2_K); this build's Q2_K is Q3_K for every "
                   "tensor but token_embd, attn_q and attn_k (output Q6_K), about 12 % larger",
                   "ggml-org/ci llama.cpp/dd/5ae06405/ggml-2-x86-cpu/open_llama_3b_v2-tg-q2_k.log (build 1792) "
                   "and llama.cpp/46/9e75d0a3/... (build 1828); ggml-org/llama.cpp PR #2707, PR #5060"),
        ),
    ),
}


def engine_line(engine: str) -> ReleaseLine | None:
    """The release line of ``engine`` ('vllm', 'llama.cpp'), or None for an engine without one ('hf')."""
    return ENGINE_RELEASES.get(engine)


def is_v0(release: str | None) -> bool:
    """Whether vLLM ``release`` runs the V0 engine by default (before :data:`VLLM_V1_DEFAULT`).

    None is the current release (V1). Raises ValueError for a string that is not a release."""
    return release is not None and not ENGINE_RELEASES["vllm"].has(release, VLLM_V1_DEFAULT)


def llamacpp_fa_default(release: str | None) -> bool:
    """llama.cpp's flash attention when -fa is not given: 'auto' (on where the backend runs it) from
    :data:`LLAMACPP_FA_AUTO`, off before it. None is the current build."""
    return release is None or ENGINE_RELEASES["llama.cpp"].has(release, LLAMACPP_FA_AUTO)


def legacy_q2k(release: str | None) -> bool:
    """Whether llama.cpp build ``release`` writes the Q2_K mix of PR #2707 (before :data:`LLAMACPP_Q2K_2BIT`)."""
    return release is not None and not ENGINE_RELEASES["llama.cpp"].has(release, LLAMACPP_Q2K_2BIT)


def version_note(engine: str, release: str | None, given: bool) -> str | None:
    """The output's statement of the release modelled, with the changes that apply to it; None for an
    engine without a release line."""
    line = engine_line(engine)
    if line is None:
        return None
    release = release or line.current
    how = "as given (engine_version)" if given else "the current release modelled (default; set engine_version, " \
                                                    "--engine-version, to size another)"
    older = [c for c in line.changes if not line.has(release, c.release)]
    text = f"{engine} {release}: {how}" + prerelease_words(release)
    if given and release_key(release) > release_key(line.current):
        text += f"; newer than the newest release modelled ({line.current}), sized as that one"
    for c in older:
        text += f"; it predates {c.release}, where {c.what} ({c.source})"
    return text + "."


def vllm_lora_ranks(release: str | None) -> tuple[int, ...]:
    """The ``max_lora_rank`` values vLLM ``release`` accepts (None: the current release), from its
    LoRAConfig (module docstring): 8-256 before :data:`VLLM_LORA_RANKS_512`, then 320 and 512 too, and 1
    from :data:`VLLM_LORA_RANK_1`. Raises ValueError for a string that is not a release."""
    line = ENGINE_RELEASES["vllm"]
    release = release or line.current
    ranks = (8, 16, 32, 64, 128, 256)
    if line.has(release, VLLM_LORA_RANKS_512):
        ranks += (320, 512)
    if line.has(release, VLLM_LORA_RANK_1):
        ranks = (1,) + ranks
    return ranks


def vllm_lora_extra_vocab(release: str | None) -> int:
    """The extra vocabulary rows (``lora_extra_vocab_size``, default) per LoRA slot in vLLM ``release``
    (None: the current release): :data:`VLLM_LORA_EXTRA_VOCAB` before :data:`VLLM_LORA_NO_EXTRA_VOCAB`, 0 from
    it. Raises ValueError for a string that is not a release."""
    line = ENGINE_RELEASES["vllm"]
    return 0 if line.has(release or line.current, VLLM_LORA_NO_EXTRA_VOCAB) else VLLM_LORA_EXTRA_VOCAB


def vllm_lora_outside_budget(release: str | None) -> bool:
    """Whether vLLM ``release`` sizes its KV cache without the LoRA slots (v0.7.0 to v0.7.x, V0; module
    docstring): they then take memory outside ``gpu_memory_utilization``. None is the current release
    (False). Raises ValueError for a string that is not a release."""
    line = ENGINE_RELEASES["vllm"]
    return release is not None and line.has(release, VLLM_LORA_OUTSIDE_FROM) and not line.has(release, VLLM_V1_DEFAULT)
