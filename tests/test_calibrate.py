"""planner calibrate: one clear line without a GPU or torch; saved calibrations feed estimates."""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

from planner.calibrate import Calibration, load_calibrations, overheads_for_gpu, save_calibration
from planner.cli import main

ARGS = ["calibrate", "--model", "gpt2", "--task", "train", "--recipe", "fp32", "--micro-batch", "1", "--seq-len", "64"]


def test_without_torch_it_says_so_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    result = CliRunner().invoke(main, ARGS)
    assert result.exit_code == 2
    assert result.output == ("Error: planner calibrate needs PyTorch with CUDA; install it with: "
                             "pip install '.[validate]'\n")


def test_without_a_gpu_it_says_so_in_one_line():
    try:
        import torch
    except ImportError:
        return  # covered by the test above
    if torch.cuda.is_available():
        return
    result = CliRunner().invoke(main, ARGS)
    assert result.exit_code == 2
    assert result.output.startswith("Error: planner calibrate needs an NVIDIA GPU, and PyTorch sees none")
    assert result.output.count("\n") == 1


def test_saved_calibration_is_used_by_estimate_for_that_gpu(tmp_path: Path):
    path = tmp_path / "calibration.yaml"
    # An RTX 4090 measured with a 420 MiB context and reserved 12 % above allocated.
    save_calibration(Calibration("NVIDIA GeForce RTX 4090", 420 * 2**20, 0.12, "2026-11-29", {"torch": "x"}), path)
    cals = load_calibrations(path)
    assert list(cals) == ["rtx4090"]
    over = overheads_for_gpu("NVIDIA GeForce RTX 4090", path)
    assert over is not None and over.cuda_context_bytes == 420 * 2**20 and over.allocator_fraction == 0.12
    assert overheads_for_gpu("NVIDIA H100 SXM5 80GB", path) is None

    import json

    args = ["estimate", "--model", "gpt2", "--task", "infer", "--weights", "fp16", "--json", "--gpu", "rtx-4090",
            "--calibration", str(path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    comps = {c["name"]: c for c in json.loads(result.output)["components"]}
    assert comps["CUDA context"]["bytes"] == 420 * 2**20
    assert "calibration" in comps["CUDA context"]["formula"]
    assert comps["allocator headroom (fragmentation)"]["formula"].startswith("12%")


def test_a_broken_calibration_file_is_one_clear_error(tmp_path: Path):
    path = tmp_path / "calibration.yaml"
    path.write_text("gpus:\n  - gpu_name: X\n    cuda_context: 400\n    allocator_fraction: 0.1\n"
                    "    measured_on: 2026-11-29\n")
    result = CliRunner().invoke(main, ["estimate", "--model", "gpt2", "--task", "infer", "--gpu", "rtx-4090",
                                       "--calibration", str(path)])
    assert result.exit_code == 2
    assert result.output == (f"Error: {path}:3: gpus[0].cuda_context: the size 400 has no unit; write e.g. "
                             f"'400 GiB' or '400 GB'.\n")
