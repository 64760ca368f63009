"""planner calibrate: one clear line without a GPU or torch; saved calibrations feed estimates."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.validate.calibrate import Calibration, load_calibrations, overheads_for_gpu, save_calibration
from planner.cli.main import main

ARGS = ["calibrate", "--model", "gpt2", "--task", "train", "--recipe", "fp32", "--micro-batch", "1", "--seq-len", "64"]


def _install_command() -> str:
    # the source folder planner runs from, by its path (h36a 8: '.[validate]' named whatever the current folder
    # held), quoted as a shell word ('[' is a pattern character)
    from pathlib import Path

    import planner
    from planner.core.names import shell_word

    import sys

    # this interpreter's pip, editable (h38a 8: the first pip on PATH was another Python's, and -e was dropped)
    return (f"{shell_word(sys.executable)} -m pip install -e "
            f"{shell_word(str(Path(planner.__file__).resolve().parents[1]) + '[validate]')}")


_INSTALL = _install_command()


def test_without_torch_it_says_so_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    result = CliRunner().invoke(main, ARGS)
    assert result.exit_code == 2
    assert result.output == ("Error: planner calibrate needs PyTorch with CUDA (the Python package 'torch' is not "
                             f"installed); install it with: {_INSTALL}\n")


def test_without_transformers_it_says_which_package_in_one_line(monkeypatch):
    import types

    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))  # torch there
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers -> ModuleNotFoundError
    result = CliRunner().invoke(main, ARGS)
    assert result.exit_code == 2
    assert result.output == ("Error: planner calibrate needs Hugging Face Transformers (the Python package "
                             f"'transformers' is not installed); install it with: {_INSTALL}\n")


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_linked_calibration_file_is_refused_before_the_run(tmp_path: Path, monkeypatch, kind: str):
    monkeypatch.setitem(sys.modules, "torch", None)  # the refusal comes before torch is needed
    target = tmp_path / "real.yaml"
    target.write_text("schema_version: 1\ngpus: []\n")
    link = tmp_path / "link.yaml"
    (link.symlink_to if kind == "symlink" else link.hardlink_to)(target)
    result = CliRunner().invoke(main, ARGS + ["--out", str(link)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert ("is a symbolic link, and planner does not replace a link" if kind == "symlink" else
            "has 2 hard links, and replacing it would leave the other names") in result.output
    assert link.is_symlink() == (kind == "symlink") and target.read_text() == "schema_version: 1\ngpus: []\n"


@pytest.mark.torch
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
    save_calibration(Calibration("NVIDIA GeForce RTX 4090", 420 * 2**20, 0.12, "2026-11-29", {"torch": "2.5.1"}), path)
    cals = load_calibrations(path)
    assert list(cals) == ["geforce rtx 4090"]
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
    assert result.output == (f"Error: {path}:3: gpus[0].cuda_context: the size 400 has no unit; write it with the "
                             "unit it counts, e.g. '400 GiB', '400 MiB' or '400 GB'.\n")


# ----- what calibrate takes, and what the run cannot reproduce ----------------------------------------

def test_options_of_a_card_check_are_refused_with_the_reason():
    # calibrate measures the GPU it runs on: a catalog card, its headroom or a file to read do not apply
    cases = {
        "--gpu": ["--gpu", "h100-sxm"],
        "--headroom": ["--headroom", "0.1"],
        "--calibration": ["--calibration", "x.yaml"],
    }
    out = {k: CliRunner().invoke(main, ARGS + v) for k, v in cases.items()}
    assert all(r.exit_code == 2 for r in out.values())
    assert out["--gpu"].output == (
        "Error: --gpu: 'planner calibrate' takes no --gpu: it measures the GPU it runs on rather than a catalog card. "
        "Pick the card with CUDA_VISIBLE_DEVICES=N; 'planner estimate --gpu ID' then uses the saved calibration for "
        "that GPU model.\n")
    assert out["--headroom"].output == (
        "Error: --headroom: 'planner calibrate' takes no --headroom: it measures what the run uses; the planning "
        "headroom belongs to the fit check on a catalog card. Give --headroom to 'planner estimate --gpu ID' or "
        "'planner fit'.\n")
    assert out["--calibration"].output == (
        "Error: --calibration: 'planner calibrate' takes no --calibration: it writes the calibration file rather than "
        "reading one. Name the file with --out FILE.\n")


def test_json_is_an_option(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    result = CliRunner().invoke(main, ARGS + ["--json"])
    assert result.exit_code == 2  # the torch message, not 'No such option'
    assert result.output.startswith("Error: planner calibrate needs PyTorch")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_settings_the_run_cannot_reproduce_are_refused_before_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # refused for what they are, not for the missing torch
    run = lambda *a: CliRunner().invoke(main, ["calibrate", "--model", "gpt2", *a])  # noqa: E731
    r = run("--task", "train")
    assert r.exit_code == 2
    assert r.output == ("Error: --recipe: recipe mixed-bf16 keeps fp32 master weights beside 16-bit ones, which the "
                        "calibration run does not; that is the default, as --recipe was not given. Use --recipe fp32, "
                        "amp-bf16, amp-fp16, pure-bf16 or pure-fp16.\n")
    r = run("--task", "train", "--recipe", "fp32", "--optimizer", "sgd")
    assert r.output == ("Error: --optimizer: the calibration run steps torch.optim.AdamW, not sgd. Give --optimizer "
                        "adamw (the runtime overheads it measures apply to every optimizer).\n")
    r = run("--task", "infer", "--engine", "vllm")
    assert r.output == ("Error: --engine: planner calibrate runs Transformers generate, not vllm. Give --engine hf; "
                        "vLLM's budget is its own start-up arithmetic ('planner estimate --engine vllm --gpu ID').\n")
    # (a model Transformers can run tensor parallel; GPT-2 at tp 2 is refused for that first)
    r = CliRunner().invoke(main, ["calibrate", "--model", "llama-3.2-1b", "--task", "infer", "--gpus", "2"])
    assert r.output == ("Error: --gpus: planner calibrate runs on one GPU, not tensor parallel over 2. Leave --gpus out "
                        "(the overheads it measures are per GPU).\n")
    r = run("--task", "infer", "--kv-dtype", "fp8")
    assert r.output == ("Error: --kv-dtype: Transformers generate keeps the KV cache in the model dtype (bf16), not "
                        "fp8. Give --kv-dtype bf16, or leave it out.\n")


def test_a_refused_key_of_a_workload_file_is_located_in_the_file(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    path = tmp_path / "w.yaml"
    path.write_text("model: gpt2\ntask: train\nrecipe: fp32\noptimizer: lion\n")
    r = CliRunner().invoke(main, ["calibrate", "--workload", str(path)])
    assert r.exit_code == 2
    assert r.output == (f"Error: {path}:4: optimizer: the calibration run steps torch.optim.AdamW, not lion. Give "
                        "optimizer: adamw (the runtime overheads it measures apply to every optimizer).\n")


def test_the_memory_model_doc_says_which_options_calibrate_takes():
    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / "memory-model.md").read_text(encoding="utf-8").split())
    assert "same options as `planner estimate`" not in text
    assert "not `--gpu`, `--headroom` or `--calibration`" in text


# ----- which GPU a calibration applies to; where the file is without HOME ------------------------------

def test_a_calibration_applies_to_its_exact_gpu_model_only(tmp_path: Path):
    from planner.catalog.loader import load_catalog
    from planner.validate.calibrate import TORCH_DEVICE_NAMES, calibration_applies

    catalog = load_catalog()
    gpus = {g.id: g for g in catalog.gpus}
    assert set(TORCH_DEVICE_NAMES.values()) <= set(gpus), "every id of the table is a catalog GPU"
    for device, gid in TORCH_DEVICE_NAMES.items():
        # each name torch reports applies to its card, and to no other catalog card
        assert [g for g in gpus if calibration_applies(device, gpus[g])] == [gid], device
    # the cases: an A10 is not an A100; the A100 SXM and H100 SXM names match their cards
    assert not any(calibration_applies("NVIDIA A10", gpus[g]) for g in gpus if g.startswith("a100"))
    assert calibration_applies("NVIDIA A100-SXM4-80GB", gpus["a100-80gb-sxm"])
    assert not calibration_applies("NVIDIA A100-SXM4-80GB", gpus["a100-40gb-sxm"])
    assert calibration_applies("NVIDIA H100 80GB HBM3", gpus["h100-sxm"])
    assert not calibration_applies("NVIDIA H100 80GB HBM3", gpus["h100-pcie"])
    assert calibration_applies("GeForce RTX 4090", gpus["rtx-4090"])  # a driver before R470: no 'NVIDIA '

    path = tmp_path / "calibration.yaml"
    save_calibration(Calibration("NVIDIA A10", 300 * 2**20, 0.05, "2026-11-29", {}), path)
    assert overheads_for_gpu(gpus["a10"], path) is not None
    assert overheads_for_gpu(gpus["a100-80gb-sxm"], path) is None
    assert overheads_for_gpu(gpus["a10g"], path) is None


def test_a_card_an_overlay_adds_matches_by_its_exact_name(tmp_path: Path):
    from types import SimpleNamespace

    from planner.validate.calibrate import calibration_applies

    card = SimpleNamespace(id="rtx-4070", name="NVIDIA GeForce RTX 4070")
    assert calibration_applies("NVIDIA GeForce RTX 4070", card)
    assert not calibration_applies("NVIDIA GeForce RTX 4070 Ti", card)  # no substring matching


def test_without_home_the_default_path_falls_back_or_is_none(monkeypatch):
    import pwd

    from planner.validate.calibrate import default_path

    assert default_path({"XDG_CONFIG_HOME": "/cfg", "HOME": "/h"}) == Path("/cfg/planner/calibration.yaml")
    assert default_path({"XDG_CONFIG_HOME": "rel", "HOME": "/h"}) == Path("/h/.config/planner/calibration.yaml")
    assert default_path({"HOME": "/h"}) == Path("/h/.config/planner/calibration.yaml")

    def no_entry(uid):
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", no_entry)  # a container's user id with no passwd entry
    assert default_path({}) is None


def test_without_home_estimate_runs_and_calibrate_asks_for_out(monkeypatch):
    import pwd

    def no_entry(uid):
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    with pytest.raises(RuntimeError):
        Path("~").expanduser()  # what Path.home() does in such a container
    est = CliRunner().invoke(main, ["estimate", "--model", "gpt2", "--task", "infer", "--gpu", "rtx-4090"])
    assert est.exit_code == 0, est.output
    # a hub id is looked up in the Hugging Face cache under ~, which cannot be found: unknown, in one line
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    hub = CliRunner().invoke(main, ["estimate", "--model", "someorg/somemodel", "--task", "infer"])
    assert hub.exit_code == 2 and hub.output.startswith("Error: --model: 'someorg/somemodel' is not in the catalog")
    cal = CliRunner().invoke(main, ARGS)
    assert cal.exit_code == 2
    assert cal.output == ("Error: planner calibrate has nowhere to save the calibration: XDG_CONFIG_HOME and HOME "
                          "are not set and the user has no home directory. Give --out FILE (e.g. --out "
                          "./calibration.yaml; 'planner estimate --calibration FILE' reads it), or set "
                          "XDG_CONFIG_HOME.\n")
