"""estimate --gpu on a card the workload does not fit points at 'planner fit', which names what would fit."""

from __future__ import annotations

from click.testing import CliRunner

from planner.cli.main import main

#: A full fine-tune of a 7B model in mixed precision: about 16 bytes a parameter before activations
#: (fp32 master, gradients and two AdamW moments; ZeRO paper, Rajbhandari et al. 2020, section 3), far past
#: a 12 GB card.
FULL_7B = ["--model", "llama-2-7b", "--task", "train", "--method", "full", "--recipe", "mixed-bf16",
           "--seq-len", "512"]


def _run(*args: str):
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "10000"})


def test_a_workload_that_does_not_fit_gets_the_fit_command_as_a_hint():
    r = _run("estimate", *FULL_7B, "--micro-batch", "1", "--gpu", "rtx-3060-12gb")
    assert r.exit_code == 0, r.output
    assert "does NOT fit" in r.output
    assert ("Hint: 'planner fit' with these options and --micro-batch max names the settings that would fit "
            "rtx-3060-12gb") in r.output
    # the hint is true: fit, given those options, names settings
    f = _run("fit", *FULL_7B, "--micro-batch", "max", "--gpu", "rtx-3060-12gb")
    assert f.exit_code == 1, f.output
    assert "What would fit (each checked with the memory model):" in f.output


def test_a_workload_that_fits_gets_no_hint():
    r = _run("estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora", "--micro-batch", "1",
             "--seq-len", "512", "--gpu", "rtx-4090")
    assert r.exit_code == 0, r.output
    assert "fits" in r.output and "does NOT fit" not in r.output
    assert "Hint:" not in r.output
