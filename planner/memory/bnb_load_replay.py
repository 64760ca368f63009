"""Unsloth's 4-bit load of a 16-bit checkpoint (Transformers + bitsandbytes), replayed through the allocator.

What ``FastLanguageModel.from_pretrained(..., load_in_4bit=True)`` then ``get_peft_model`` put on the GPU,
in order, for Unsloth 2024.8 to 2024.10.0 on Transformers 4.44.2 (the version the Unsloth notebooks' load
banners print: 'Unsloth 2024.10.0: Fast Llama patching. Transformers = 4.44.2.'), bitsandbytes 0.43.3 to
0.44.1 (Unsloth's pyproject.toml: 'bitsandbytes>=0.43.3'; ``Params4bit`` and ``quantize_4bit`` are the same
in all three) and Accelerate 0.34.2 / 1.0.1 (what the replay uses is the same in both; the notebooks print neither the
Accelerate nor the peft version: peft 0.13.2 was read, the release of October 2024). Code read (file,
function, where):

1. Model construction. unsloth/models/llama.py ``FastLlamaModel.pre_patch`` (Unsloth d2a032e117,
   2024.10.0; the same at e6159e0279 and 74c2141bb3 (2024.8), 89ada9ef0b (2024.9), b41c182296
   (2024.9.post2), 248c27d205 (2024.9.post4)) swaps Transformers' ``LlamaRotaryEmbedding`` for its own
   and rewrites ``LlamaAttention.__init__`` (unsloth/models/_utils.py ``patch_llama_rope_scaling``;
   Qwen2: unsloth/models/qwen2.py ``pre_patch`` with ``patch_linear_scaling``) so that every attention
   layer builds ``LlamaRotaryEmbedding`` / ``LlamaExtendedRotaryEmbedding`` (rope_type 'llama3') from
   ``dim``, ``max_position_embeddings`` and ``base``, without ``config``: ``device`` stays None.
   Their ``__init__`` sets ``current_rope_size = min(4 * 8192, max_position_embeddings)`` and
   ``_set_cos_sin_cache`` registers ``cos_cached`` and ``sin_cached`` of (current_rope_size, dim) in
   ``torch.get_default_dtype()``, which ``from_pretrained`` has set to the load dtype
   (transformers 4.44.2 modeling_utils.py ``PreTrainedModel.from_pretrained``:
   ``dtype_orig = cls._set_default_torch_dtype(torch_dtype)`` before ``cls(config, ...)``): fp16 on a T4.
   The per-layer caches are made on the CPU (``.to(dtype=dtype, device=None)``); ``init_empty_weights``
   puts parameters, not buffers, on the meta device (accelerate big_modeling.py). Transformers 4.44.2's
   ``LlamaModel.__init__`` also builds ``self.rotary_emb = LlamaRotaryEmbedding(config=config)``, which
   is now Unsloth's class: with ``config`` it sets ``device = "cuda"`` (the "[TODO] Hack to pass in
   config"), so that one model-level cache pair is made on the GPU here, before any weight.
   (``Qwen2Model`` in 4.44.2 has no model-level rotary embedding.)
2. Weights. ``from_pretrained`` with ``device_map="sequential"`` loads each safetensors shard on the CPU
   (modeling_utils.py ``load_state_dict``: ``safe_load_file(checkpoint_file)``; safetensors' ``load_file``
   walks ``safe_open.keys()``, sorted by name) and ``_load_state_dict_into_meta_model`` casts each
   floating tensor to the load dtype on the CPU (``param = param.to(dtype)``), then:

   - a weight kept in 16-bit (the embedding, an untied ``lm_head``, the norms): accelerate
     utils/modeling.py ``set_module_tensor_to_device``: ``new_value = value.to(device)`` (a GPU copy),
     then ``clear_device_cache()`` (``torch.cuda.empty_cache()``), as every call with a device other
     than 'cpu' ends;
   - a ``Linear4bit`` weight: transformers quantizers/quantizer_bnb_4bit.py ``create_quantized_param``:
     ``bnb.nn.Params4bit(param_value.to("cpu"), ...).to(target_device)``; bitsandbytes nn/modules.py
     ``Params4bit._quantize``: ``w = self.data.contiguous().to(device)`` (2 B per value), then
     functional.py ``quantize_4bit`` (blocksize 64, ``compress_statistics`` = Unsloth's
     ``bnb_4bit_use_double_quant=True``): ``absmax`` zeros (fp32, one per 64 values), ``out`` zeros
     ((n + 1) // 2 uint8), the kernel, ``get_4bit_type('nf4')`` (``torch.tensor`` of 16 fp32 levels,
     kept in the quant state; ``data.div_(data.abs().max())``: a 16-value abs and a one-value max,
     freed), ``offset = absmax.mean()`` (kept), ``absmax -= offset`` (in place), ``quantize_blockwise
     (absmax, blocksize=256)``: the shared 256-value fp32 'dynamic' code the first time
     (``name2qmap["dynamic"] = create_dynamic_map().to(A.device)``, kept), ``absmax`` zeros (fp32, one
     per 256 blocks) and ``out = torch.zeros_like(A, dtype=torch.uint8)`` (one per block), both kept;
     ``del absmax`` frees the fp32 absmax and ``_quantize``'s return frees ``w``;
   - a ``Linear4bit`` bias (Qwen2's q/k/v): ``create_quantized_param``'s bias branch,
     ``param_value.to(target_device)``, no cache clearing.

   The replay loads the embedding, then the layers (keys sorted within each: ``input_layernorm``,
   ``mlp.down/gate/up_proj``, ``post_attention_layernorm``, ``self_attn.k/o/q/v_proj``, each bias
   before its weight), then an untied ``lm_head``, then ``model.norm``. Not replayed: how the shards
   split the layers and where ``lm_head.weight`` sorts inside its shard (an ``empty_cache`` follows
   every 16-bit weight, so the order of whole layers changes little), and the few-KiB reduction
   workspaces of ``mean`` and ``max``.
3. Dispatch. ``from_pretrained`` ends with accelerate big_modeling.py ``dispatch_model``; a
   bitsandbytes model always gets hooks (``is_bnb_quantized``): hooks.py
   ``attach_align_device_hook_on_blocks`` -> ``AlignDevicesHook(place_submodules=True).init_hook``,
   which calls ``set_module_tensor_to_device`` for every parameter (already on the GPU: no copy, but
   an ``empty_cache`` each), then every buffer in module order: each layer's rotary ``inv_freq``
   (``LlamaExtendedRotaryEmbedding`` only, fp32, head_dim / 2 values), ``cos_cached`` and
   ``sin_cached`` are copied from the CPU to the GPU, each followed by ``empty_cache``.
4. ``FastLlamaModel.post_patch`` (Unsloth d2a032e117): ``Embedding.from_pretrained`` and the new
   ``lm_head`` reuse the loaded weights (no copy); the rotary caches are already in the load dtype (no
   ``.to``); then ``torch.cuda.empty_cache()`` x 3.
5. ``FastLlamaModel.get_peft_model``: ``empty_cache`` x 6 (use_gradient_checkpointing 'unsloth'), then
   peft's ``get_peft_model`` (peft 0.13.2 tuners/lora/layer.py ``LoraLayer.update_layer``: ``lora_A``
   ``nn.Linear(in, r)`` and ``lora_B`` ``nn.Linear(r, out)`` in fp32 on the CPU, then
   tuners_utils.py ``_move_adapter_to_device_of_base_layer``: ``.to(device)``, no dtype for a uint8
   base: A then B, module by module in model order), then ``empty_cache`` x 3.

The notebooks' 'memory reserved' figure is ``torch.cuda.max_memory_reserved()`` after this (and after
the trainer's construction, which moves nothing: the model has an ``hf_device_map``): the replay's
``peak_reserved``. The allocator's rules: planner.memory.caching_allocator (PyTorch 2.4.1 in the banners).

No work at import time and no module state.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.memory.caching_allocator import AllocationTrace as _Trace, CachingAllocator

BNB_LOAD_SRC = ("Unsloth d2a032e117 (2024.10.0) unsloth/models/llama.py LlamaRotaryEmbedding, "
                "LlamaExtendedRotaryEmbedding, FastLlamaModel.pre_patch/from_pretrained/post_patch/get_peft_model, "
                "_utils.py patch_llama_rope_scaling; transformers v4.44.2 modeling_utils.py "
                "_load_state_dict_into_meta_model, quantizers/quantizer_bnb_4bit.py create_quantized_param, "
                "models/llama/modeling_llama.py LlamaModel.__init__; bitsandbytes 0.44.1 nn/modules.py "
                "Params4bit._quantize, functional.py quantize_4bit/quantize_blockwise; accelerate 1.0.1 "
                "utils/modeling.py set_module_tensor_to_device, hooks.py AlignDevicesHook.init_hook; peft 0.13.2 "
                "tuners_utils.py _move_adapter_to_device_of_base_layer; c10/cuda/CUDACachingAllocator.cpp")

#: Unsloth's rotary caches start at ``min(4 * 8192, max_position_embeddings)`` positions
#: (unsloth/models/llama.py at d2a032e117, LlamaRotaryEmbedding.__init__: "Dynamic RoPE we first set it
#: to a max of 4 * 8192 tokens then we iteratively grow this").
UNSLOTH_ROPE_START = 4 * 8192
#: bitsandbytes' 4-bit blocksize (Params4bit default 64) and the nested quantization's (quantize_4bit:
#: ``quantize_blockwise(absmax, blocksize=256)``); the 'dynamic' map has 256 fp32 values
#: (create_dynamic_map, total_bits=8).
BNB_BLOCK, BNB_NESTED_BLOCK, BNB_DYNAMIC_MAP_BYTES = 64, 256, 256 * 4


@dataclass(frozen=True)
class UnslothLoadShapes:
    """What the load allocates, in values (not bytes) unless named ``*_bytes``.

    hidden: hidden_size; vocab: vocab_size; layers: decoder layers; head_dim: the rotary dim;
    rope_positions: the rows of each rotary cache (:data:`UNSLOTH_ROPE_START` or fewer);
    model_rope: the model-level rotary cache on the GPU (Transformers 4.44.2's ``LlamaModel``);
    rope_inv_freq: each layer's rotary module has an ``inv_freq`` buffer (``LlamaExtendedRotaryEmbedding``);
    tied: the head shares the embedding; linears: per layer ``(key, in, out, bias)`` with key
    'self_attn.q_proj' and so on; lora_rank and lora_targets (module names), in the layer's module
    order; norms: the 16-bit norm weights per layer, by key; load_bytes: bytes per value of the load
    dtype (2: fp16 or bf16).
    """

    hidden: int
    vocab: int
    layers: int
    head_dim: int
    rope_positions: int
    model_rope: bool
    rope_inv_freq: bool
    tied: bool
    linears: tuple
    lora_rank: int
    lora_targets: tuple
    norms: tuple = ("input_layernorm", "post_attention_layernorm")
    load_bytes: int = 2


def quantize_4bit_nested(t: _Trace, n: int, *, first: bool, load_bytes: int = 2) -> list[int]:
    """``Params4bit._quantize`` of a weight of ``n`` values (bitsandbytes 0.43.3-0.44.1, module docstring
    step 2), the 16-bit copy included; ``first``: the shared 'dynamic' map is made now. Returns the
    ids kept: packed values, 16-level code, offset, nested absmax, quantized absmax (and the map)."""
    blocks = -(-n // BNB_BLOCK)
    w = t.alloc(load_bytes * n)                 # self.data.contiguous().to(device)
    absmax = t.alloc(4 * blocks)                # torch.zeros((blocks,), float32)
    out = t.alloc((n + 1) // 2)                 # torch.zeros(((n + 1) // 2, 1), uint8)
    code = t.alloc(16 * 4)                      # get_4bit_type: torch.tensor(16 levels, device)
    a, m = t.alloc(16 * 4), t.alloc(4)          # data.abs(), .max()
    t.free(a, m)
    offset = t.alloc(4)                         # absmax.mean()
    kept = [out, code, offset]
    if first:
        kept.append(t.alloc(BNB_DYNAMIC_MAP_BYTES))  # name2qmap["dynamic"] = create_dynamic_map().to(device)
    kept.append(t.alloc(4 * -(-blocks // BNB_NESTED_BLOCK)))  # quantize_blockwise: absmax zeros (fp32)
    kept.append(t.alloc(blocks))                # torch.zeros_like(absmax, dtype=uint8)
    t.free(absmax)                              # del absmax
    t.free(w)                                   # _quantize returns: w dropped
    return kept


def _load_order(s: UnslothLoadShapes) -> list[tuple[str, int]]:
    """One layer's checkpoint tensors in key order: ('norm', bytes), ('bias', bytes) or ('4bit', values)."""
    keys = [(f"{name}.weight", ("norm", s.load_bytes * s.hidden)) for name in s.norms]
    for key, d_in, d_out, bias in s.linears:
        keys.append((f"{key}.weight", ("4bit", d_in * d_out)))
        if bias:
            keys.append((f"{key}.bias", ("bias", s.load_bytes * d_out)))
    return [v for _, v in sorted(keys)]


@dataclass(frozen=True)
class LoadReplay:
    """Bytes (integers) of the replayed load: ``peak_reserved`` (``max_memory_reserved``, what the
    notebooks print), ``reserved`` and ``allocated`` at the end, ``rope_bytes`` (the rotary caches
    allocated), the segments left, the allocator calls, and ``reserved_after_weights`` (before the
    dispatch moves the caches)."""

    peak_reserved: int
    reserved: int
    allocated: int
    peak_allocated: int
    rope_bytes: int
    segments: int
    calls: int
    reserved_after_weights: int


def replay_unsloth_load(s: UnslothLoadShapes) -> LoadReplay:
    """Replay steps 1-5 of the module docstring on one GPU.

    Returns:
        :class:`LoadReplay`.
    """
    alloc = CachingAllocator()
    t = _Trace(alloc)
    cache = s.load_bytes * s.rope_positions * s.head_dim      # one of cos_cached / sin_cached
    rope = 0
    # 1. transformers v4.44.2 modeling_llama.py LlamaModel.__init__: rotary_emb = (Unsloth's) LlamaRotaryEmbedding
    #    (config=config): device "cuda" (unsloth/models/llama.py at d2a032e117, LlamaRotaryEmbedding.__init__)
    if s.model_rope:
        t.alloc(cache)
        t.alloc(cache)
        rope += 2 * cache
    # 2. modeling_utils.py _load_state_dict_into_meta_model, keys sorted (safetensors load_file); a 16-bit tensor:
    #    accelerate utils/modeling.py set_module_tensor_to_device (value.to(device), then clear_device_cache)
    t.alloc(s.load_bytes * s.vocab * s.hidden)                # model.embed_tokens.weight
    alloc.empty_cache()
    first = True
    for _ in range(s.layers):
        for kind, size in _load_order(s):
            if kind == "4bit":
                # quantizer_bnb_4bit.py create_quantized_param -> bitsandbytes Params4bit._quantize
                quantize_4bit_nested(t, size, first=first, load_bytes=s.load_bytes)
                first = False
            else:
                t.alloc(size)                                 # norm: set_module_tensor_to_device; bias:
                if kind == "norm":                            # create_quantized_param's bias branch (no clearing)
                    alloc.empty_cache()
    if not s.tied:
        t.alloc(s.load_bytes * s.vocab * s.hidden)            # lm_head.weight (kept in 16-bit)
        alloc.empty_cache()
    t.alloc(s.load_bytes * s.hidden)                          # model.norm.weight
    alloc.empty_cache()
    after_weights = alloc.reserved
    # 3. accelerate big_modeling.py dispatch_model (is_bnb_quantized) -> hooks.py AlignDevicesHook.init_hook:
    #    set_module_tensor_to_device for the parameters (on the GPU: no copy, an empty_cache each) ...
    alloc.empty_cache()
    for _ in range(s.layers):                                 # ... then the buffers in module order, CPU -> GPU
        if s.rope_inv_freq:
            t.alloc(4 * (s.head_dim // 2))
            alloc.empty_cache()
        for _ in ("cos_cached", "sin_cached"):
            t.alloc(cache)
            rope += cache
            alloc.empty_cache()
    # 4. unsloth/models/llama.py FastLlamaModel.post_patch: torch.cuda.empty_cache() x 3 (nothing allocated);
    # 5. FastLlamaModel.get_peft_model: empty_cache x 6, then peft 0.13.2 LoraLayer.update_layer ->
    #    _move_adapter_to_device_of_base_layer per target module in model order, then empty_cache x 3
    alloc.empty_cache()
    modules = {key.rsplit(".", 1)[-1]: (d_in, d_out) for key, d_in, d_out, _ in s.linears}
    for _ in range(s.layers):
        for name in s.lora_targets:
            d_in, d_out = modules[name]
            t.alloc(4 * s.lora_rank * d_in)                   # lora_A (fp32) .to(device)
            t.alloc(4 * d_out * s.lora_rank)                  # lora_B
    alloc.empty_cache()
    return LoadReplay(alloc.peak_reserved, alloc.reserved, alloc.allocated, alloc.peak_allocated, rope,
                      alloc.segments, t.calls, after_weights)
