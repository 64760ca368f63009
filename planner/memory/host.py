"""Host RAM of one machine: baseline, model loading, DataLoader workers, pinned buffers, saves.

Sources and assumptions:
- OS and framework baseline: an OS with a desktop or server services uses a few GiB; each
  Python process that imports torch with CUDA maps the CUDA libraries (about 2-3 GiB resident).
  Assumption, stated in every result (DL workstation sizing guides name this baseline
  among host-RAM uses but give no figure).
- Model loading (Transformers ``from_pretrained`` docs, "Large model loading"): with
  ``low_cpu_mem_usage`` (the default when accelerate is installed) weights stream from the
  checkpoint into the model. A model that lands in host memory first (a training script that
  loads on the CPU and lets the Trainer move it) holds the whole checkpoint there; one loaded
  straight onto the GPU (``device_map``: bitsandbytes quantization, which quantizes as it moves
  weights to the card; inference with ``device_map="auto"``; vLLM's loader) holds one checkpoint
  shard at a time, at most ``max_shard_size`` (default 5 GB; safetensors shards are memory-mapped
  and larger ones are file-backed pages the kernel can reclaim). The model is built in the load
  dtype (``from_pretrained(torch_dtype=...)``, ``dtype=`` in Transformers 4.56 and 5; the
  workload's ``torch_dtype`` / ``dtype`` key, default the checkpoint's, as ``dtype="auto"``): with
  ``low_cpu_mem_usage`` it holds P x the load dtype's bytes. Without ``low_cpu_mem_usage`` the model
  is first built with random weights in the load dtype and the checkpoint's state dict is loaded
  beside it: P x (load bytes + checkpoint bytes), about twice the model when the two agree
  (huggingface/transformers#13466, GPT-J-6B: "To load GPT-J in float32 one would need at least 2x
  model size RAM: 1x for initial weights and another 1x to load the checkpoint", Transformers' GPT-J
  docs of 2021; fp16: 2 x 6.05 B x 2 B = 24.2 GB).
- DataLoader (PyTorch docs, torch.utils.data "Multi-process data loading"): each worker is a
  process holding its own copy of a dataset made of Python objects (copy-on-access of
  refcounts), while Arrow, NumPy memmap and memory-mapped files are shared via the page cache.
- Pinned memory: ``pin_memory=True`` keeps ``prefetch_factor`` (default 2) batches per worker in
  page-locked host memory.
- Saving: ``save_pretrained`` writes shards of at most ``max_shard_size`` (default 5 GB) built in
  host memory (Transformers docs, "Sharded checkpoints").
"""

from __future__ import annotations

from planner.model.architecture import Architecture
from planner.memory.breakdown import HOST, Component
from planner.core.units import GB, GiB

OS_BASELINE_BYTES = 4 * GiB
PROCESS_BASELINE_BYTES = 3 * GiB
WORKER_BASELINE_BYTES = GiB // 2
SHARD_BYTES = 5 * GB
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


def checkpoint_dtype(arch: Architecture, given: str | None) -> str:
    """The checkpoint's dtype: as given, else the config's ``torch_dtype``, else bf16."""
    if given:
        return given
    td = (arch.torch_dtype or "").replace("torch.", "")
    return {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}.get(td, "bf16")


def load_dtype(arch: Architecture, given: str | None, ckpt_dtype: str | None = None) -> str:
    """The dtype ``from_pretrained`` builds the model in: as given (the workload's ``torch_dtype`` or
    ``dtype`` key), else the checkpoint's (``ckpt_dtype``, else :func:`checkpoint_dtype`)."""
    return given or ckpt_dtype or checkpoint_dtype(arch, None)


def host_components(arch: Architecture, *, processes: int, loading_processes: int, load_fraction: float,
                    ckpt_dtype: str, low_cpu_mem_usage: bool, dataloader_workers: int, dataset_size: int,
                    dataset_format: str, pin_memory: bool, batch_tokens: int, save_bytes: int,
                    save_formula: str | None = None,
                    save_source: str = "Transformers docs, sharded checkpoints (one shard of <= 5 GB at a time)",
                    to_gpu: bool = False,
                    processes_text: str = "", load_dtype: str | None = None) -> list[Component]:
    """Host RAM components of one machine.

    Args:
        arch: the model.
        processes: GPU worker processes on the machine (one per GPU).
        loading_processes: processes that each load (their share of) the checkpoint.
        load_fraction: share of the checkpoint each loading process holds (1/t under TP, 1/N with ZeRO-3 init).
        ckpt_dtype: checkpoint dtype on disk.
        low_cpu_mem_usage: stream weights instead of building a random model (in the load dtype) first.
        dataloader_workers: DataLoader ``num_workers`` per process (0 for inference).
        dataset_size: bytes of the dataset object.
        dataset_format: 'python' (copied per worker) or a shared format.
        pin_memory: pinned batches.
        batch_tokens: tokens per micro-batch (for pinned buffers, 8-byte token ids and labels).
        save_bytes: bytes a checkpoint save builds in host memory (0 for inference).
        save_formula: how save_bytes was derived (default: the 16-bit model capped at one shard).
        save_source: where that rule comes from (peft's adapter-only save_pretrained for LoRA).
        to_gpu: weights are loaded straight onto the GPU (a device_map): with ``low_cpu_mem_usage``
            each process holds one checkpoint shard (<= 5 GB) at a time, not the whole checkpoint.
        processes_text: what the processes are, for the formulas (e.g. '4 replicas x tp 2 on this
            machine'); '' says nothing more.
        load_dtype: the dtype the model is built in ('fp32', 'fp16', 'bf16'); None: ``ckpt_dtype``.

    Returns:
        Components; 'load' and 'run' phases are not live at the same time.
    """
    P = arch.parameters
    out = [
        Component("OS baseline", HOST, OS_BASELINE_BYTES, "4 GiB (assumption)", "assumption from DL workstation sizing guides"),
        Component("framework per GPU process", HOST, PROCESS_BASELINE_BYTES * processes,
                  f"{processes} process(es){f' ({processes_text})' if processes_text else ''} x 3 GiB "
                  "(torch + CUDA libraries, assumption)",
                  "assumption: resident size of a torch + CUDA process"),
    ]
    ld = load_dtype or ckpt_dtype
    share = f" x {load_fraction:.3g} (share per process)" if load_fraction < 1 else ""
    if low_cpu_mem_usage:
        # the model, built in the load dtype, takes the checkpoint's tensors as they stream in
        ck = int(P * DTYPE_BYTES[ld] * load_fraction)
        text = (f"{loading_processes} process(es) x {P:,} params x {DTYPE_BYTES[ld]} B (the model in {ld}"
                + (f", converted from the {ckpt_dtype} checkpoint" if ld != ckpt_dtype else f", the {ckpt_dtype} checkpoint")
                + ")" + share)
        if to_gpu and ck > SHARD_BYTES:
            ck = SHARD_BYTES
            text = (f"{loading_processes} process(es) x one checkpoint shard of <= 5 GB (weights stream onto the GPU "
                    "with a device_map; safetensors max_shard_size default)")
        load = ck * loading_processes
    else:
        # randomly initialised model in the load dtype, then the whole state dict beside it
        init = int(P * DTYPE_BYTES[ld] * load_fraction)
        ck = int(P * DTYPE_BYTES[ckpt_dtype] * load_fraction)
        load = (init + ck) * loading_processes
        text = (f"{loading_processes} process(es) x {P:,} params x ({DTYPE_BYTES[ld]} B random init in {ld} + "
                f"{DTYPE_BYTES[ckpt_dtype]} B {ckpt_dtype} state dict){share} (low_cpu_mem_usage=False)")
    out.append(Component("model loading peak", HOST, load, text,
                         "Transformers from_pretrained docs (torch_dtype / dtype, low_cpu_mem_usage); "
                         "huggingface/transformers#13466", phase="load"))
    workers = dataloader_workers * processes
    if dataloader_workers:
        out.append(Component("DataLoader workers", HOST, workers * WORKER_BASELINE_BYTES,
                             f"{workers} workers x 0.5 GiB (assumption)", "PyTorch docs, multi-process data loading",
                             phase="run"))
    if dataset_size:
        # Python objects: each training process holds the dataset, and each of its workers ends up
        # with its own copy (reference counts touch every page); Arrow / memory-mapped data is shared.
        copies = processes * (1 + dataloader_workers) if dataset_format == "python" else 1
        why = (f"{processes} process(es) x (1 + {dataloader_workers} workers), Python objects copied into each"
               if dataset_format == "python" else f"shared ({dataset_format}, memory-mapped)")
        out.append(Component("dataset in RAM", HOST, dataset_size * copies, f"{dataset_size:,} B x {copies} ({why})",
                             "PyTorch docs, multi-process data loading", phase="run"))
    if dataloader_workers:
        if pin_memory:
            pinned = 2 * workers * batch_tokens * 8 * 2
            out.append(Component("pinned batch buffers", HOST, pinned,
                                 f"2 prefetched x {workers} workers x {batch_tokens:,} tokens x 8 B x 2 (ids, labels)",
                                 "PyTorch docs, DataLoader pin_memory", phase="run"))
    if save_bytes:
        out.append(Component("checkpoint save copy", HOST, save_bytes,
                             save_formula or f"min(model 16-bit weights, 5 GB shard) = {save_bytes:,} B",
                             save_source,
                             phase="run"))
    return out
