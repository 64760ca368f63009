"""Findings of the h7b hostile trial on issue 28 (names, YAML keys and line breaks; branch safety10b).

Each test fails on the main it was found on (805a9af). Message checks stand outside ``pytest.raises``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


def _raises(exc: type[BaseException], fn, *args, **kw) -> str:
    """The message of the ``exc`` that ``fn(*args, **kw)`` raises (checked by the caller, outside raises)."""
    with pytest.raises(exc) as info:
        fn(*args, **kw)
    return str(info.value)


# -- item 2: U+0085, U+2028, U+2029 are line breaks to YAML 1.1, not to editors ------------------------------

_HIDDEN = [("\u2028", "U+2028 (LINE SEPARATOR)"), ("\u2029", "U+2029 (PARAGRAPH SEPARATOR)"),
           ("\x85", "U+0085 (NEXT LINE)")]


@pytest.mark.parametrize("char, named", _HIDDEN)
@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_a_hidden_line_break_is_refused_at_the_line_an_editor_shows(char: str, named: str, eol: str) -> None:
    from planner.core.yamlio import YamlProblem, parse_yaml

    # the character sits in a comment on line 3 as an editor counts (LF, CR LF or CR), after 'b: 1  # x'
    # (9 characters), so at column 10; PyYAML would read 'seq_len: 64' after it as a live key
    text = eol.join(["a: 1", "# two", f"b: 1  # x{char}seq_len: 64", "c: 3", ""])
    with pytest.raises(YamlProblem) as info:
        parse_yaml(text)
    exc = info.value
    assert exc.line == 3
    assert str(exc) == (f"holds {named} at line 3 column 10, which YAML 1.1 reads as a line break though editors "
                        "show none (what follows it would be read as a new line)")
    assert exc.hint == "Remove it, or use a real line break."


def test_a_quoted_next_line_is_refused_not_folded_into_a_space(tmp_path: Path) -> None:
    # PyYAML folds a raw U+0085 inside double quotes into a space: 'x<NEL>y' became the name 'x y'
    from planner import estimate

    (tmp_path / "w.yaml").write_text('model: llama-2-7b\ntask: infer\nname: "x\x85y"\n', encoding="utf-8")
    msg = _raises(InputError, estimate, workload=tmp_path / "w.yaml")
    assert msg.startswith(f"{tmp_path / 'w.yaml'}:3: holds U+0085 (NEXT LINE) at line 3 column 9,"), msg


def _overlay(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "ov"
    d.mkdir()
    (d / "gpus.yaml").write_text(text, encoding="utf-8")
    return d


def test_every_yaml_file_kind_refuses_a_hidden_line_break(tmp_path: Path) -> None:
    from planner import estimate, plan
    from planner.catalog.loader import load_catalog
    from planner.validate.calibrate import load_calibrations

    # a paragraph separator inside a quoted description on line 2 moved every later line number down one
    (tmp_path / "s.yaml").write_text('name: t\ndescription: "abc\u2029def"\nworkloads:\n  - name: w\n'
                                     '    model: llama-2-7b\n    task: infer\n    context: 40x\n', encoding="utf-8")
    msg = _raises(InputError, plan, tmp_path / "s.yaml")
    assert msg.startswith(f"{tmp_path / 's.yaml'}:2: holds U+2029 (PARAGRAPH SEPARATOR) at line 2 column 18"), msg
    (tmp_path / "w.yaml").write_text("model: llama-2-7b\ntask: train\nmethod: qlora\n"
                                     "# old setting:\u2028micro_batch: 64\nseq_len: 512\n", encoding="utf-8")
    msg = _raises(InputError, estimate, workload=tmp_path / "w.yaml", gpu="rtx-4090")
    assert msg.startswith(f"{tmp_path / 'w.yaml'}:4: holds U+2028 (LINE SEPARATOR) at line 4 column 15"), msg
    ov = _overlay(tmp_path, "schema_version: 1\n# quote was\u2028    price_usd: 99\ngpus: []\n")
    msg = _raises(InputError, load_catalog, ov)
    assert msg.startswith(f"{ov / 'gpus.yaml'}:2: holds U+2028 (LINE SEPARATOR) at line 2 column 12"), msg
    (tmp_path / "cal.yaml").write_text("schema_version: 1\r\ngpus: []  # \x85\r\n", encoding="utf-8")
    msg = _raises(InputError, load_calibrations, tmp_path / "cal.yaml", given=True)
    assert msg.startswith(f"{tmp_path / 'cal.yaml'}:2: holds U+0085 (NEXT LINE) at line 2 column 13"), msg


# -- item 8: keys YAML 1.1 reads as booleans, numbers, null or dates ------------------------------------------

_QLORA_WORKLOAD = ("  - name: {name}\n    model: llama-2-7b\n    task: train\n    method: qlora\n    micro_batch: 1\n"
                   "    seq_len: 512\n    dataset_tokens: 100000000\n")


@pytest.mark.parametrize("name, key, read_as", [('"on"', "on", "a boolean (true)"), ('"2026"', "2026", "a number"),
                                                ("off-peak", "off", "a boolean (false)")])
def test_a_key_read_as_no_text_is_named_as_written_with_the_quoted_key(tmp_path: Path, name: str, key: str,
                                                                       read_as: str) -> None:
    from planner import compare

    # costs.mfu: {on: 0.3} was "missing required key 'True'"; {2026: 0.3} "missing required key '2026'" though
    # the workload '2026' exists. The key is on line 11 (2 lines of head, 7 of workload, 'costs:').
    text = "name: keys\nworkloads:\n" + _QLORA_WORKLOAD.format(name=name) + f"costs:\n  mfu: {{{key}: 0.3}}\n"
    (tmp_path / "s.yaml").write_text(text)
    msg = _raises(InputError, compare, tmp_path / "s.yaml")
    assert msg == (f"{tmp_path / 's.yaml'}:11: costs.mfu: key {key} is read as {read_as} in YAML 1.1, not as a text. "
                   f"Quote it: '{key}': 0.3 (every key planner reads is a text)."), msg


@pytest.mark.parametrize("line, shown, read_as", [("on: 1", "'on': 1", "a boolean (true)"),
                                                  ("~: 1", "'~': 1", "null"),
                                                  ("2026-01-01: x", "'2026-01-01': x", "a date"),
                                                  ("1.5:\n  a: 1", "'1.5':", "a number")])
def test_a_top_level_key_read_as_no_text_gets_the_same_message(tmp_path: Path, line: str, shown: str,
                                                                read_as: str) -> None:
    from planner import estimate

    # 'on: 1' at the top of a workload file was "key True is not a name. Keys are names such as 'memory'."
    (tmp_path / "w.yaml").write_text(f"model: llama-2-7b\ntask: infer\n{line}\n")
    msg = _raises(InputError, estimate, workload=tmp_path / "w.yaml")
    key = line.split(":")[0]
    assert msg == (f"{tmp_path / 'w.yaml'}:3: key {key} is read as {read_as} in YAML 1.1, not as a text. "
                   f"Quote it: {shown} (every key planner reads is a text)."), msg


# -- item 10: an empty cloud filter in costs allows nothing; it did mean "all" -----------------------------------

_SCENARIO = {"name": "empty", "workloads": [{"name": "q", "model": "llama-2-7b", "task": "train", "method": "qlora",
                                             "micro_batch": 1, "seq_len": 512, "dataset_tokens": 100_000_000}]}


@pytest.mark.parametrize("key, what", [("providers", "provider"), ("instances", "instance"), ("regions", "region")])
def test_an_empty_cloud_filter_is_refused_as_allowed_gpus_is(tmp_path: Path, key: str, what: str) -> None:
    from planner import compare

    # 'providers: []' compared every cloud instance, as if the key were absent (allowed_gpus: [] is refused)
    (tmp_path / "s.yaml").write_text("name: empty\nworkloads:\n" + _QLORA_WORKLOAD.format(name="q")
                                     + f"costs: {{{key}: []}}\n")
    msg = _raises(InputError, compare, tmp_path / "s.yaml")
    assert msg == (f"{tmp_path / 's.yaml'}:10: costs.{key}: an empty list allows no {what}. List at least one "
                   f"{what}, or leave {key} out to compare every {what}."), msg
    msg = _raises(InputError, compare, {**_SCENARIO, "costs": {key: []}})
    assert msg.startswith(f"costs.{key}: an empty list allows no {what}."), msg


def test_a_cloud_provider_listed_twice_is_refused_as_a_gpu_listed_twice_is() -> None:
    from planner import compare

    msg = _raises(InputError, compare, {**_SCENARIO, "costs": {"providers": ["aws", "aws"]}})
    assert msg == "costs.providers: lists 'aws' twice. Give each provider once.", msg
