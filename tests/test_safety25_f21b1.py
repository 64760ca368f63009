"""Issue 28, hostile pass 21B: findings of report h21b fixed on branch f21b1.

N3. A ``numpy.timedelta64`` (an integer type to numpy) or ``datetime64`` given for a numeric keyword, a
    scenario's number or a Catalog's number is refused with the error naming the keyword or field ("must be a
    whole number, not timedelta64"), whatever its unit: no bare TypeError (seconds), and 512 ns is no 512
    tokens nor 1000 ns a $1,000 budget.
N1. A ``str`` subclass given to the API (a scenario's or workload's name, model, task, a list item, a key, the
    ``out=``, ``gpu=`` and path arguments, compare's ``tokens_per_month``) is read as the plain text it holds
    (``str.__str__``), so what is checked is what is written: its own ``__str__``, ``__format__``,
    ``__repr__``, ``__add__``, ``__radd__``, ``__getitem__`` and ``__iter__`` never reach a report or a
    message (no ESC / OSC-8 hyperlink in the CSV, file names from the name checked).
M2. A config.json text holding a lone surrogate U+DC80-U+DCFF (the JSON escape "\\udc80") is named as U+DC80,
    not as '\\x80', the byte a path's surrogate escape stands for (a file decoded as UTF-8 holds no such byte).
"""

from __future__ import annotations

import dataclasses

import pytest

from planner import estimate, fit, plan
from planner.catalog.loader import load_catalog
from planner.core.errors import CatalogError, InputError
from planner.api.inputs import plain_text, plain_texts
from planner.core.fields import plain_number

np = pytest.importorskip("numpy")

W = dict(model="llama-2-7b", task="train", method="qlora", micro_batch=1, seq_len=512)


def _scenario(**extra):
    return {"name": "t", "workloads": [{"name": "w", **W}], **extra}


DURATIONS = [np.timedelta64(512, "ns"), np.timedelta64(512, "s"), np.timedelta64(3, "m"), np.datetime64(512, "s")]


@pytest.mark.parametrize("value", DURATIONS, ids=str)
def test_plain_number_leaves_a_duration_as_given(value):
    assert plain_number(value) is value  # not int(value): 512 for ns, a TypeError for seconds
    assert plain_number(np.int64(512)) == 512 and type(plain_number(np.int64(512))) is int  # numbers as before


@pytest.mark.parametrize("value", DURATIONS, ids=str)
@pytest.mark.parametrize("key", ["seq_len", "micro_batch"])
def test_estimate_refuses_a_duration_naming_the_keyword(key, value):
    with pytest.raises(InputError) as got:
        estimate(**{**W, key: value})
    said = str(got.value)
    assert said.startswith(f"{key}: must be a whole number, not {type(value).__name__}"), said


@pytest.mark.parametrize("value", DURATIONS, ids=str)
def test_fit_refuses_a_duration_seq_len(value):
    with pytest.raises(InputError) as got:
        fit(model="llama-2-7b", task="train", method="qlora", gpu="rtx-4090", micro_batch="max", seq_len=value)
    assert str(got.value).startswith("seq_len: must be a whole number"), str(got.value)


def test_headroom_and_top_refuse_a_duration():
    with pytest.raises(InputError) as got:
        estimate(model="llama-2-7b", task="infer", context=512, gpu="rtx-4090", headroom=np.timedelta64(0, "s"))
    assert str(got.value).startswith("headroom: must be a fraction"), str(got.value)
    with pytest.raises(InputError) as got:
        plan(_scenario(), top=np.timedelta64(3, "ns"))
    assert str(got.value).startswith("top: must be a whole number"), str(got.value)


@pytest.mark.parametrize("value", [np.timedelta64(1000, "ns"), np.timedelta64(10, "s")], ids=str)
def test_scenario_numbers_refuse_a_duration(value):
    with pytest.raises(InputError) as got:
        plan(_scenario(constraints={"budget_usd": value}))
    said = str(got.value)
    assert "constraints.budget_usd: must be a number, not timedelta64" in said, said
    extra = {"description": "d", "unit_price_usd": value, "source": "s", "as_of": "2026-01-15"}
    with pytest.raises(InputError) as got:
        plan(_scenario(extras=[extra]))
    said = str(got.value)
    assert "extras[0].unit_price_usd: must be a number, not timedelta64" in said, said


@pytest.mark.parametrize("value", [np.timedelta64(2, "ns"), np.timedelta64(2, "s")], ids=str)
def test_catalog_refuses_a_duration_price(value):
    cat = load_catalog()
    first = cat.instances[0]
    given = dataclasses.replace(cat, instances=(dataclasses.replace(first, usd_per_hour=value),) + cat.instances[1:])
    with pytest.raises(CatalogError) as got:
        plan(_scenario(), catalog=given)
    said = str(got.value)
    assert f"instances[0] ({first.id}).usd_per_hour: must be a number, not timedelta64" in said, said


#: what every overridable method of the evil text gives: an OSC-8 hyperlink to a foreign site
EVIL = "w\x1b]8;;http://evil.example\x07click\x1b]8;;\x07"


class Evil(str):
    """A text whose every way of being shown or combined gives :data:`EVIL`, not the value it holds."""

    def __str__(self):
        return EVIL

    def __format__(self, spec):
        return EVIL

    def __repr__(self):
        return EVIL

    def __add__(self, other):
        return EVIL

    def __radd__(self, other):
        return EVIL

    def __getitem__(self, index):
        return EVIL

    def __iter__(self):
        return iter(EVIL)


def test_plain_text_gives_the_value_held():
    for made in (plain_text(Evil("w")), plain_number(Evil("w"))):
        assert type(made) is str and made == "w"
        assert f"{made}" == "w" and str(made) == "w"  # str's own formatting now, not Evil's
    assert f"{Evil('w')}" == EVIL  # the subclass itself would write its hyperlink
    plain = {"a": [1, ("b",)]}
    assert plain_texts(plain) is plain  # nothing to change: the same object
    made = plain_texts({Evil("k"): [Evil("x"), (Evil("y"), 2)], "n": 3})
    assert made == {"k": ["x", ("y", 2)], "n": 3}
    assert all(type(t) is str for t in (*made, made["k"][0], made["k"][1][0]))
    loop = []
    loop.append(loop)
    assert plain_texts(loop) is loop  # left for the checks that refuse it


def _all_bytes(folder):
    """Every file planner wrote under ``folder``, the workbook's XML unzipped."""
    import zipfile

    out = b""
    for path in sorted(folder.iterdir()):
        if path.suffix == ".xlsx":
            with zipfile.ZipFile(path) as z:
                out += b"".join(z.read(n) for n in z.namelist())
        else:
            out += path.read_bytes()
    return out


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_writes_the_text_a_str_subclass_holds(tmp_path):
    out = tmp_path / "o"
    workload = {"name": Evil("w"), "model": Evil("llama-2-7b"), "task": Evil("train"), "method": Evil("qlora"),
                "micro_batch": 1, "seq_len": 512, "lora_targets": [Evil("q_proj")]}
    plan({"name": Evil("s5"), "workloads": [workload]}, out=Evil(str(out)), format="xlsx,csv,json,md")
    names = sorted(p.name for p in out.iterdir())
    assert names == [".planner-reports.json", "s5.csv", "s5.json", "s5.md", "s5.xlsx"]  # named by the value
    written = _all_bytes(out)
    assert b"evil" not in written and b"\x1b" not in written
    assert b"workload w (" in (out / "s5.csv").read_bytes()  # the why_not cells name the workload as checked


def test_estimate_reads_the_text_a_str_subclass_holds():
    got = estimate(model=Evil("llama-2-7b"), task=Evil("train"), method=Evil("qlora"), micro_batch=1, seq_len=512,
                   name=Evil("w1"), gpu=Evil("rtx-4090"))
    shown = str(got) + repr(got) + str(got.to_dict())
    assert "evil" not in shown and "w1" in shown
    got = estimate(workload={"model": Evil("llama-2-7b"), "task": Evil("infer"), "context": 512, "name": Evil("w2")})
    shown = str(got) + repr(got) + str(got.to_dict())
    assert "evil" not in shown and "w2" in shown


def test_a_str_subclass_name_is_checked_as_written():
    bad = Evil("=3+3\x1b[2J")  # its value is what is checked and refused, whatever its __str__ says
    with pytest.raises(InputError) as got:
        plan({"name": bad, "workloads": [{"name": "w", **W}]})
    said = str(got.value)
    assert "U+001B" in said and "evil" not in said, said


def test_compare_volumes_read_the_text_a_str_subclass_holds():
    from planner.api.comparisons import volume_overrides

    assert volume_overrides({Evil("chat"): Evil("200M")}, ["chat"]) == {"chat": 200e6}
    assert volume_overrides([Evil("chat=200M")], ["chat"]) == {"chat": 200e6}
    with pytest.raises(InputError) as got:
        volume_overrides({Evil("chta"): "200M"}, ["chat"])
    said = str(got.value)
    assert "'chta'" in said and "evil" not in said, said


def test_a_config_json_surrogate_is_named_as_the_character(tmp_path):
    import json

    from click.testing import CliRunner

    from planner.cli.main import main

    config = {"architectures": ["LlamaQMForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 96,
              "vocab_size": 100}
    (tmp_path / "m").mkdir()
    # the file holds the six characters \udc80 (JSON's escape), not the byte 0x80
    (tmp_path / "m" / "config.json").write_text(json.dumps(config).replace("QM", "\\udc80"))
    got = CliRunner().invoke(main, ["estimate", "--model", str(tmp_path / "m"), "--task", "infer", "--context", "512"])
    assert got.exit_code == 2, got.output
    err = got.stderr
    assert "invalid text at key 'architectures': it holds U+DC80, a lone surrogate" in err, err
    assert "\\x80" not in err and err.count("\n") == 1
