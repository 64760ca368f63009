"""Probe (not a test): does Accelerate's prepared forward under mixed precision copy the 16-bit logits a model
returns to fp32 while its loss keeps them, as Unsloth's ``Fast_CrossEntropyLoss`` does (planner.memory.loss,
``returned_logits_copy``)?

A one-layer model (V 32,768, h 64, 512 tokens) returns bf16 logits; its loss saves them for backward and
makes no V-wide temporary of the whole batch (log-sum-exp in 8-row blocks, like the Triton kernel's row
programs). The peak of live storages over ``outputs = model(...); loss = outputs["loss"]; del outputs``
(Trainer.compute_loss) is counted with planner.validate.tracker, without and with
``Accelerator(mixed_precision="bf16", cpu=True).prepare(model)``. Measured with torch 2.14.1 and accelerate
0.30.1 on CPU (Accelerate sets native AMP on a CPU device for bf16):

    no accelerate:   43,094,016 B (returned logits bf16)
    accelerate bf16: 109,128,192 B (returned logits float32)
    difference:      66,034,176 B = 512 x 32,768 x 4 (67,108,864) less the baseline's own
                     transient, one 8-row fp32 block (1,048,576) and its reductions

Run with torch and accelerate installed, from the repository root:
    python tests/data/validation/accelerate_logits_probe.py
"""
import sys
from pathlib import Path

import torch
from accelerate import Accelerator

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from planner.validate.tracker import make_tracker  # noqa: E402

V, H, T = 32768, 64, 512


class KeepLogitsCE(torch.autograd.Function):
    """Saves the logits for backward and writes the gradient into them (as Unsloth's kernel does; the
    values are irrelevant here)."""

    @staticmethod
    def forward(ctx, logits, labels):
        lse = torch.cat([torch.logsumexp(logits[i:i + 8].float(), dim=-1) for i in range(0, logits.shape[0], 8)])
        loss = lse - logits.gather(1, labels[:, None]).squeeze(1).float()
        ctx.save_for_backward(logits, lse, labels)
        return loss

    @staticmethod
    def backward(ctx, dloss):
        logits, _lse, _labels = ctx.saved_tensors
        return logits, None


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(V, H)
        self.head = torch.nn.Linear(H, V, bias=False)

    def forward(self, input_ids, labels):
        logits = self.head(self.emb(input_ids)).to(torch.bfloat16)
        loss = KeepLogitsCE.apply(logits, labels).mean()
        return {"loss": loss, "logits": logits}


def peak(prepare: bool):
    torch.manual_seed(0)
    model = Tiny().to(torch.bfloat16)
    if prepare:
        model = Accelerator(mixed_precision="bf16", cpu=True).prepare(model)
    x, y = torch.randint(0, V, (T,)), torch.randint(0, V, (T,))
    tracker = make_tracker()
    with tracker:
        outputs = model(input_ids=x, labels=y)
        _loss = outputs["loss"]
        dtype = outputs["logits"].dtype
        del outputs
    return tracker.peak_bytes, dtype


if __name__ == "__main__":
    base, d0 = peak(False)
    acc, d1 = peak(True)
    print(f"no accelerate:   {base:,} B (returned logits {d0})")
    print(f"accelerate bf16: {acc:,} B (returned logits {d1})")
    print(f"difference:      {acc - base:,} B; T x V x 4 = {T * V * 4:,}")
