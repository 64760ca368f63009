"""Issue 28, hostile pass 11B (items 1, 6, 7, 8, 12, 13): YAML readings editors and users do not see.

1. A CR not followed by LF is a line break to YAML (1.1 and 1.2, section 5.4) but not to grep or an editor on
   Unix: refused anywhere in a file, at the line and column counted at LF. CR LF files are read; a file of
   CR line ends alone is refused with the hint to save it with LF.
6. A decimal comma inside '{...}' or '[...]' ('{utilization: 0,5}') is split by YAML into two items (YAML 1.1,
   section 7.4): refused with the decimal-point form as the hint.
7. An explicit tag that makes a value of a text the plain reading would not ('!!int' on Arabic-Indic digits,
   '!!float 1e1') is refused, so every number rule holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def _plan(tmp_path: Path, text: str) -> tuple[int, str, Path]:
    s = tmp_path / "s.yaml"
    s.write_bytes(text.encode())
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    return r.exit_code, r.stderr, s


# ---- 1: a lone CR

def test_a_lone_cr_that_hides_a_key_in_a_comment_is_refused_at_the_editor_line(tmp_path: Path) -> None:
    code, err, s = _plan(tmp_path, "name: lonecr\nworkloads:\n  - name: w    # tuned by hand\r    micro_batch: 64\n"
                                   "    model: llama-2-7b\n    task: train\n    seq_len: 512\n")
    assert code == 2
    # line 3 (grep -n counts LF only); column 31: the 30 characters '  - name: w    # tuned by hand' come first
    assert err == (f"Error: {s}:3: holds a CARRIAGE RETURN (CR, U+000D) not followed by LF at line 3 column 31, which "
                   "YAML reads as a line break though grep and editors show none (what follows it would be read as a "
                   "new line). Remove it, or save the file with LF (or CR LF) line ends throughout.\n")


def test_a_lone_cr_in_an_overlay_is_refused(tmp_path: Path) -> None:
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "gpus.yaml").write_bytes(b"schema_version: 1\ngpus:\n  - id: rtx-3060-12gb   # price checked 2026-11\r"
                                   b"    price_usd: 25\n    price_kind: quote\n    source: q\n    as_of: 2026-11-20\n")
    r = CliRunner().invoke(main, ["plan", str(ROOT / "scenarios" / "qlora-7b-12gb.yaml"), "--catalog", str(ov),
                                  "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1].endswith(
        "gpus.yaml:3: holds a CARRIAGE RETURN (CR, U+000D) not followed by LF at line 3 column 48, which YAML reads as "
        "a line break though grep and editors show none (what follows it would be read as a new line). Remove it, "
        "or save the file with LF (or CR LF) line ends throughout.")


def test_crlf_line_ends_are_read(tmp_path: Path) -> None:
    code, err, _ = _plan(tmp_path, "name: crlf\r\nworkloads:\r\n  - name: w\r\n    model: llama-2-7b\r\n"
                                   "    task: infer\r\n")
    assert (code, err) == (0, "")
    assert (tmp_path / "o" / "crlf.json").is_file()


def test_a_file_of_cr_line_ends_alone_is_refused_with_the_lf_hint(tmp_path: Path) -> None:
    code, err, s = _plan(tmp_path, "name: mac\rworkloads:\r  - name: w\r    model: llama-2-7b\r    task: infer\r")
    assert code == 2
    assert err == (f"Error: {s}:1: has old Mac line ends (CR alone, no LF), which YAML reads as line breaks but grep, "
                   "git and editors on Unix do not. Save the file with LF line ends (or CR LF), e.g. "
                   "tr '\\r' '\\n' < old.yaml > new.yaml.\n")


def test_the_pure_parser_refuses_a_lone_cr_as_well() -> None:
    from planner.core import yamlio

    raised = None
    try:
        yamlio._parse_pure("a: 1\nb: 2 # x\rc: 3\n")
    except yamlio.YamlProblem as exc:
        raised = (exc.problem, exc.line)
    assert raised == ("holds a CARRIAGE RETURN (CR, U+000D) not followed by LF at line 2 column 9, which YAML reads "
                      "as a line break though grep and editors show none (what follows it would be read as a new "
                      "line)", 2)


# ---- 6: a decimal comma in a flow collection

_SCEN = "name: h\nworkloads:\n  - name: w\n    model: llama-2-7b\n    task: train\n    method: qlora\n    seq_len: 512\n"


# the entry is named before the message since h15b minor d (tests/test_safety20c.py)
@pytest.mark.parametrize("line, written, a, b, fixed", [
    ("costs: {utilization: 0,5}", "costs.utilization: 0,5", "0", "5", "costs: {utilization: 0.5}"),
    ("costs: {pue: 1,25}", "costs.pue: 1,25", "1", "25", "costs: {pue: 1.25}"),
    ("costs: {residual_fraction: 0,05}", "costs.residual_fraction: 0,05", "0", "05",
     "costs: {residual_fraction: 0.05}"),
    ("constraints: {budget_usd: 1,5}", "constraints.budget_usd: 1,5", "1", "5", "constraints: {budget_usd: 1.5}"),
])
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_decimal_comma_in_a_flow_mapping_gets_the_decimal_point_hint(tmp_path: Path, line: str, written: str,
                                                                       a: str, b: str, fixed: str) -> None:
    code, err, s = _plan(tmp_path, _SCEN + line + "\n")
    assert code == 2
    assert err == (f"Error: {s}:8: {written} inside [...] or {{...}} is read by YAML as two items, {a} and {b} (a "
                   f"comma separates the items there), not as a decimal comma. Write the decimal with a point: "
                   f"{fixed}.\n")
    # the hint, followed, is read (a budget of $1.50 leaves no option, exit 1, but the file is read)
    code, err, _ = _plan(tmp_path, _SCEN + fixed + "\n")
    assert code in (0, 1) and "Error" not in err, err


def test_a_decimal_comma_in_a_flow_list_is_refused_and_the_hint_loads(tmp_path: Path) -> None:
    ov = tmp_path / "ov"
    ov.mkdir()
    head = ("schema_version: 1\ninstances:\n  - id: my-l4\n    provider: aws\n    instance: g6.xlarge\n    gpu: l4\n"
            "    gpu_count: 1\n    vcpus: 4\n    memory: 16 GiB\n    region: us-east-1\n    source: x\n"
            "    as_of: 2026-11-01\n    usd_per_hour: 0.8\n    spot_usd_per_hour: 0.3\n")
    (ov / "cloud.yaml").write_text(head + "    spot_usd_per_hour_range: [0,25, 0,35]\n")
    r = CliRunner().invoke(main, ["catalog", "cloud", "--catalog", str(ov)])
    assert r.exit_code == 2
    assert r.stderr == (f"Error: {ov / 'cloud.yaml'}:15: instances[0] (my-l4).spot_usd_per_hour_range: 0,25 inside [...] or {{...}} is read by YAML as two items, 0 "
                        "and 25 (a comma separates the items there), not as a decimal comma. Write the decimal with "
                        "a point: spot_usd_per_hour_range: [0.25, 0.35].\n")
    (ov / "cloud.yaml").write_text(head + "    spot_usd_per_hour_range: [0.25, 0.35]\n")
    r = CliRunner().invoke(main, ["catalog", "cloud", "--catalog", str(ov)])
    assert (r.exit_code, r.stderr) == (0, "")


def test_lists_written_without_blanks_stay_lists() -> None:
    from planner.core.yamlio import parse_yaml

    assert parse_yaml("a: [1,2,4]\nb: [2048,1024]\nc: [0, 5]\n") == {"a": [1, 2, 4], "b": [2048, 1024], "c": [0, 5]}


# ---- 7: explicit tags

@pytest.mark.parametrize("value, shown", [
    ("!!int '١٠'", "'١٠'"), ("!!int '１０'", "'１０'"), ("!!float '1e1'", "'1e1'"), ("!!float '１e1'", "'１e1'"),
])
def test_a_tag_that_makes_a_number_of_what_plain_yaml_would_not_is_refused(tmp_path: Path, value: str,
                                                                            shown: str) -> None:
    w = tmp_path / "w.yaml"
    w.write_text(f"model: llama-2-7b\ntask: train\nseq_len: 512\nmicro_batch: {value}\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["estimate", "--workload", str(w)])
    assert r.exit_code == 2
    assert r.stderr == (f"Error: {w}:4: micro_batch: the YAML tag '!!{value[2:value.index(' ')]}' on {shown} is not "
                        "read (a planner file is plain YAML, no tags). Remove the tag and write the value plainly (a "
                        "number in ASCII digits, a boolean as true or false), or quote it if it is a text.\n")


def test_a_tag_that_changes_nothing_is_refused_too() -> None:
    # read since h10, refused since h15b #4: every tag a file writes is refused alike (tests/test_safety20b.py)
    from planner.core.yamlio import YamlProblem, parse_yaml

    for text in ("a: !!int 4\n", "b: !!float 0.5\n", "c: !!bool true\n"):
        with pytest.raises(YamlProblem):
            parse_yaml(text)


# ---- 8: common YAML slips get their own line and a fix

@pytest.mark.parametrize("body, line, problem, hint", [
    ("  - name: w\n    model:llama-2-7b\n    task: infer\n", 4,
     "could not find expected ':' at line 5 column 5", "Write a space after ':': model: llama-2-7b."),
    ("  - name:w\n    model: llama-2-7b\n    task: infer\n", 3,
     "mapping values are not allowed here at line 4 column 10", "Write a space after ':': name: w."),
])
def test_a_key_glued_to_its_value_is_named_at_its_line(tmp_path: Path, body: str, line: int, problem: str,
                                                      hint: str) -> None:
    code, err, s = _plan(tmp_path, "name: s\nworkloads:\n" + body)
    assert code == 2
    assert err == f"Error: {s}:{line}: YAML syntax error: {problem}. {hint}\n"


_PART = "The value starts with a quote or bracket and text goes on after its close: quote the whole text: "
_RESERVED = "unquoted (YAML reserves it): quote the text: "


@pytest.mark.parametrize("value, problem, hint, fixed", [
    ('"QLoRA" on one card', "expected <block end>, but found '<scalar>' at line 2 column 22",
     _PART + "description: '\"QLoRA\" on one card'.", "'\"QLoRA\" on one card'"),
    ("'it's fine'", "expected <block end>, but found '<scalar>' at line 2 column 18",
     _PART + "description: 'it''s fine'.", "'it''s fine'"),
    ("[draft] plan for the lab", "expected <block end>, but found '<scalar>' at line 2 column 22",
     _PART + "description: '[draft] plan for the lab'.", "'[draft] plan for the lab'"),
    ("@nlp-team plan", "found character '@' that cannot start any token at line 2 column 14",
     "A value cannot start with '@' " + _RESERVED + "description: '@nlp-team plan'.", "'@nlp-team plan'"),
    ("`make plan` output", "found character '`' that cannot start any token at line 2 column 14",
     "A value cannot start with '`' " + _RESERVED + "description: '`make plan` output'.", "'`make plan` output'"),
    ("%50 of the budget", "found character '%' that cannot start any token at line 2 column 14",
     "A value cannot start with '%' " + _RESERVED + "description: '%50 of the budget'.", "'%50 of the budget'"),
    ("| two GPUs", "expected a comment or a line break, but found 't' at line 2 column 16",
     "A value cannot start with '|' " + _RESERVED + "description: '| two GPUs'.", "'| two GPUs'"),
])
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_partly_quoted_or_reserved_value_gets_the_quote_hint_which_works(tmp_path: Path, value: str, problem: str,
                                                                           hint: str, fixed: str) -> None:
    tail = "workloads:\n  - {name: w, model: llama-2-7b, task: infer}\n"
    code, err, s = _plan(tmp_path, f"name: s\ndescription: {value}\n{tail}")
    assert code == 2
    assert err == f"Error: {s}:2: YAML syntax error: {problem}. {hint}\n"
    code, err, _ = _plan(tmp_path, f"name: s\ndescription: {fixed}\n{tail}")  # the hint, followed
    assert (code, err) == (0, "")


# ---- 12: hints that, followed, are accepted

def _models_overlay(tmp_path: Path, line: str) -> Path:
    ov = tmp_path / "ov"
    ov.mkdir(exist_ok=True)
    (ov / "models.yaml").write_text(
        "schema_version: 1\nmodels:\n  - id: my-llama\n    hf_id: me/my-llama\n    source: x\n    as_of: 2026-01-01\n"
        "    config:\n      architectures: [LlamaForCausalLM]\n      model_type: llama\n      hidden_size: 4096\n"
        "      intermediate_size: 11008\n      num_attention_heads: 32\n      num_hidden_layers: 32\n"
        "      num_key_value_heads: 32\n      vocab_size: 32000\n      max_position_embeddings: 4096\n"
        f"      torch_dtype: float16\n{line}\n")
    return ov


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("key, written, meant", [("head_dim", "0128", "128"), ("sliding_window", "04096", "4096")])
def test_a_models_config_leading_zero_gets_the_leading_zero_hint(tmp_path: Path, key: str, written: str,
                                                                 meant: str) -> None:
    ov = _models_overlay(tmp_path, f"      {key}: {written}")
    args = ["estimate", "--model", "my-llama", "--task", "infer", "--context", "1024", "--catalog", str(ov)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == (
        f"Error: {ov / 'models.yaml'}:18: models[0] (my-llama).config.{key}: {key} must be a whole number, not "
        f'"{written}". Write the number without the leading zero: {key}: {meant}.')
    _models_overlay(tmp_path, f"      {key}: {meant}")  # the hint, followed
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output


_INFER = "name: y\nworkloads:\n  - name: w\n    model: llama-2-7b\n"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_split_mode_no_hints_none_which_is_read(tmp_path: Path) -> None:
    body = _INFER + "    task: infer\n    engine: llama.cpp\n    weights: Q4_K_M\n    split_mode: "
    code, err, s = _plan(tmp_path, body + "no\n")
    assert code == 2
    assert err == (f"Error: {s}:8: workloads[0].split_mode: must be one of the choices, not false. Valid: layer, row, "
                   "none. YAML reads an unquoted no or off as false: for none, write split_mode: none.\n")
    code, err, _ = _plan(tmp_path, body + "none\n")
    assert (code, err) == (0, "")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_checkpointing_no_in_a_list_names_no_false_to_remove(tmp_path: Path) -> None:
    body = _INFER + "    task: train\n    method: qlora\n    seq_len: 512\n    checkpointing: "
    code, err, s = _plan(tmp_path, body + "[no, full]\n")
    assert code == 2
    assert err == (f"Error: {s}:8: workloads[0].checkpointing: must be one of the choices, not false (in the "
                   "checkpointing list). Valid: none, full. YAML reads an unquoted no or off as false: for none, write "
                   "checkpointing: none.\n")
    assert "False" not in err
    code, err, _ = _plan(tmp_path, body + "none\n")
    assert (code, err) == (0, "")
    code, err, _ = _plan(tmp_path, body + "[none, full]\n")
    assert (code, err) == (0, "")


def test_a_leading_zero_part_number_gets_only_the_quote_hint(tmp_path: Path) -> None:
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-4090\n    mpn: 0123\n")
    r = CliRunner().invoke(main, ["catalog", "gpus", "--catalog", str(ov)])
    assert r.exit_code == 2
    assert r.stderr == (f"Error: {ov / 'gpus.yaml'}:4: gpus[0] (rtx-4090).mpn: 0123 is an octal number in YAML 1.1 (it reads as "
                        "83), not what it looks like. Quote it: mpn: '0123' (mpn is a text, not a number).\n")
    (ov / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-4090\n    mpn: '0123'\n")
    r = CliRunner().invoke(main, ["catalog", "gpus", "--catalog", str(ov)])
    assert (r.exit_code, r.stderr) == (0, "")


# ---- 13: values that are probably typos

def _dataset(tmp_path: Path, size: str) -> tuple[int, str, Path]:
    w = tmp_path / "w.yaml"
    w.write_text(f'model: llama-2-7b\ntask: train\nseq_len: 512\ndataset_format: python\ndataset_size: "{size}"\n')
    r = CliRunner().invoke(main, ["estimate", "--workload", str(w)])
    return r.exit_code, r.stderr, w


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_upper_case_kb_is_refused_with_both_readings(tmp_path: Path) -> None:
    code, err, w = _dataset(tmp_path, "10000000 KB")
    assert code == 2
    assert err == (f"Error: {w}:5: dataset_size: the unit 'KB' in '10000000 KB' means 1000 B to some and 1024 B to "
                   "others (JEDEC). Write kB (1000 B) or KiB (1024 B): '10000000 kB' or '10000000 KiB'.\n")
    for followed in ("10000000 kB", "10000000 KiB"):  # each hint, followed, is read
        assert _dataset(tmp_path, followed)[:2] == (0, "")


def test_kilobits_get_a_kilo_hint(tmp_path: Path) -> None:
    code, err, w = _dataset(tmp_path, "10 Kb")
    assert code == 2
    assert err == (f"Error: {w}:5: dataset_size: '10 Kb' is in bits (Kb), but a size is written in bytes. Did you mean "
                   "'10 kB' or '10 KiB'? Kb is kilobits; kB is 10^3 bytes, KiB 2^10 bytes.\n")


def _calibration(tmp_path: Path, context: str, fraction: str) -> tuple[int, str, Path]:
    c = tmp_path / "c.yaml"
    c.write_text(f'schema_version: 1\ngpus:\n  - gpu_name: "NVIDIA L4"\n    cuda_context: {context}\n'
                 f"    allocator_fraction: {fraction}\n    measured_on: 2026-11-01\n    versions: {{}}\n")
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4",
                                  "--calibration", str(c)])
    return r.exit_code, r.stderr, c


def test_a_calibration_of_no_cuda_context_is_refused(tmp_path: Path) -> None:
    code, err, c = _calibration(tmp_path, "0 MiB", "0.05")
    assert code == 2
    assert err == (f"Error: {c}:4: gpus[0].cuda_context: must be more than 0 B: every CUDA context holds device memory "
                   "(its kernels and data), so 0 is no measurement. Run 'planner calibrate' again on the GPU, or remove the "
                   "entry (the estimate then uses the default CUDA context).\n")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_allocator_fraction_above_one_is_refused(tmp_path: Path) -> None:
    code, err, c = _calibration(tmp_path, "600 MiB", "1.5")
    assert code == 2
    assert err == (f"Error: {c}:5: gpus[0].allocator_fraction: 1.5 is no allocator overhead: the fraction is "
                   "max_memory_reserved / max_memory_allocated - 1 ('planner calibrate'), and above 1 the allocator "
                   "would hold over twice what the tensors use. Write the fraction (0.05 for 5 %), or run 'planner "
                   "calibrate' again.\n")
    for fraction in ("0.95", "1", "0"):  # reserved up to twice the allocated peak is read
        assert _calibration(tmp_path, "600 MiB", fraction)[0] == 0


@pytest.mark.parametrize("word", ["y", "Y", "n", " true", "off "])
def test_on_off_options_refuse_what_files_refuse(word: str) -> None:
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--engine", "llama.cpp",
                                  "--weights", "Q4_K_M", "--flash-attention", word])
    assert r.exit_code == 2
    assert r.stderr == (f"Error: --flash-attention: {word!r} is not on or off. Give --flash-attention or "
                        "--no-flash-attention alone, or --flash-attention true/false (also yes/no, on/off, 1/0).\n")


@pytest.mark.parametrize("word", ["true", "OFF", "Yes", "0"])
def test_on_off_options_take_the_file_words_in_any_case(word: str) -> None:
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--engine", "llama.cpp",
                                  "--weights", "Q4_K_M", "--flash-attention", word])
    assert (r.exit_code, r.stderr) == (0, "")
