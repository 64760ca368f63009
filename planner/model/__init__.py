"""Stage 1, model: what a network is, from its Hugging Face ``config.json``.

``architecture`` turns a config into an :class:`~planner.model.architecture.Architecture` (shapes,
exact parameter counts as PyTorch counts them, per-family flags); ``models`` resolves what a user
names (a catalog id, a config path, a cached hub id) to a config; ``gguf`` lays a model out as the
tensors of its GGUF file with the ggml type llama-quantize gives each under a preset (the file llama.cpp
loads). Imports only ``planner.core``.
"""
