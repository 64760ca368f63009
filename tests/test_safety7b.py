"""Hostile pass 5B (reports/h5b.md items 7, 10, 11, 14): names compared in Unicode NFC, blank-looking names,
joiners in free texts, hints that work, model configs checked where they are written, empty tokens_per_month."""
from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import pytest

import planner
from planner.core.errors import CatalogError, InputError, ScenarioError
from tests.cli_helpers import _cli

ROOT = Path(__file__).resolve().parents[1]
NFC = "caf\u00e9"  # 'café' with U+00E9 LATIN SMALL LETTER E WITH ACUTE (composed)
NFD = "cafe\u0301"  # 'café' as 'e' + U+0301 COMBINING ACUTE ACCENT: canonically equivalent (UAX #15, 1.1)
ALLOWED = {"allowed_gpus": ["rtx-4090"]}


def _infer(name: str, **extra: object) -> dict:
    return {"name": name, "model": "llama-2-7b", "task": "infer", "context": 1024, **extra}


def _error_of(call) -> InputError:
    """The InputError ``call()`` raises (its message is checked by the caller, outside pytest.raises)."""
    with pytest.raises(InputError) as info:
        call()
    return info.value


# ----- 1. names: NFC comparison, blank-looking edges -----------------------------------------------------------

def test_nfc_and_nfd_spellings_of_one_workload_name_clash() -> None:
    assert NFC != NFD  # two code point sequences...
    err = _error_of(lambda: planner.plan({"name": "n", "workloads": [_infer(NFC), _infer(NFD)], "constraints": ALLOWED}))
    # ...one name: the second entry is refused, naming the first and both spellings (letters as they are, the
    # combining mark escaped so that the two differ on the screen: h10b #17)
    assert isinstance(err, ScenarioError)
    assert str(err).startswith(f"workloads[1].name: duplicate workload name {NFD!r} (also workloads[0], the same "
                               "name: 'cafe\\u0301' and 'caf\u00e9' are two Unicode spellings of it"), str(err)
    assert str(err).endswith("Give each workload its own name."), str(err)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_nfc_clash_from_a_file_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(f"name: n\nworkloads:\n  - {{name: \"{NFC}\", model: llama-2-7b, task: infer}}\n"
                                     f"  - {{name: \"{NFD}\", model: llama-2-7b, task: infer}}\n", encoding="utf-8")
    r = _cli("plan", "s.yaml", "--out", "o", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: s.yaml:4: workloads[1].name: duplicate workload name"), lines
    assert "(also workloads[0], the same name" in lines[0], lines
    assert not (tmp_path / "o").exists()


def test_an_nfd_spelling_in_costs_names_the_workload() -> None:
    from planner.core.fields import Entry
    from planner.cost.tco import read_costs

    wl = [types.SimpleNamespace(name=NFC, task="infer", infer=types.SimpleNamespace(requests_per_hour=None)),
          types.SimpleNamespace(name="th\u00e9", task="infer", infer=types.SimpleNamespace(requests_per_hour=None))]
    costs = read_costs(Entry({"mfu": {NFD: 0.05}, "batch_inference": ["the\u0301"]}, file=None, path="costs",
                             error=ScenarioError), None, wl)
    # resolved to the workloads' own spellings, so every lookup by workload name finds them
    assert costs.mfu == {NFC: 0.05}
    assert costs.mfu_for(NFC) == 0.05 and costs.mfu_for(NFD) == 0.05
    assert costs.batch_inference == ("th\u00e9",)


def test_an_nfd_spelling_in_costs_mfu_is_used_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        f"name: mfu-nfd\nworkloads:\n  - {{name: \"{NFC}\", model: llama-2-7b, task: train, method: qlora, "
        "seq_len: 512, dataset_tokens: 1000000}\nconstraints: {allowed_gpus: [rtx-4090]}\n"
        f"costs: {{mfu: {{\"{NFD}\": 0.05}}}}\n", encoding="utf-8")
    d = planner.compare(tmp_path / "s.yaml").to_dict()
    local = d["workloads"][0]["local"]
    # the pinned MFU, not the speed model's: 0.05 as written, and the reason says where it came from
    assert local["mfu"] == 0.05
    assert local["mfu_reason"] == "given in the scenario (costs.mfu)"


def test_tokens_per_month_in_another_spelling_names_the_workload() -> None:
    from planner.api.comparisons import volume_overrides

    # '5M' = 5 x 10^6 tokens (parse_token_count's decimal suffix)
    assert volume_overrides({NFD: "5M"}, [NFC]) == {NFC: 5_000_000.0}
    err = _error_of(lambda: volume_overrides({NFD: "5M", NFC: "6M"}, [NFC]))
    assert str(err) == f"tokens_per_month: names workload {NFC!r} twice (as 'caf\\xe9' too). Give each workload once."


@pytest.mark.parametrize("name, problem, hint", [
    ("chat ", "'chat ' ends with U+0020 (SPACE)", "Write it without the blank: 'chat'."),
    ("\u00a0chat", "'\\xa0chat' starts with U+00A0 (NO-BREAK SPACE)", "Write it without the blank: 'chat'."),
    ("chat\u202f", "'chat\\u202f' ends with U+202F (NARROW NO-BREAK SPACE)", "Write it without the blank: 'chat'."),
    ("chat\u2800", "'chat\u2800' ends with U+2800 (BRAILLE PATTERN BLANK)", "Write it without the blank: 'chat'."),
])
def test_a_name_with_a_blank_looking_edge_is_refused(name: str, problem: str, hint: str) -> None:
    err = _error_of(lambda: planner.plan({"name": "n", "workloads": [_infer(name)], "constraints": ALLOWED}))
    assert str(err) == (f"workloads[0].name: {problem}, drawn as blank space, so it looks like another name. {hint}")


@pytest.mark.parametrize("name, shown", [("\u2800", "'\u2800'"), ("\u00a0\u202f", "'\\xa0\\u202f'")])
def test_a_blank_only_name_is_refused(name: str, shown: str) -> None:
    err = _error_of(lambda: planner.plan({"name": name, "workloads": [_infer("w")], "constraints": ALLOWED}))
    assert str(err).startswith(f"name: {shown} is blank: it holds only "), str(err)
    assert str(err).endswith("drawn as blank space. Give a name of letters or digits, e.g. 'chat-7b'."), str(err)


# ----- 2. joiners: allowed between letters or emoji in free texts, never in names ---------------------------------

PERSIAN = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # 'می‌خواهم' (I want): ZWNJ between two letters
TECHNOLOGIST = "\U0001f469\u200d\U0001f4bb"  # 👩‍💻: WOMAN, ZWJ, PERSONAL COMPUTER (UTS #51 ZWJ sequence)
RAINBOW_FLAG = "\U0001f3f3\ufe0f\u200d\U0001f308"  # 🏳️‍🌈: WHITE FLAG, VS16, ZWJ, RAINBOW
DEVANAGARI = "\u0915\u094d\u200d\u0937"  # क्‍ष: KA, VIRAMA (a mark), ZWJ, SSA: the half form of ka


@pytest.mark.parametrize("text", [PERSIAN, TECHNOLOGIST, RAINBOW_FLAG, DEVANAGARI])
def test_joiners_in_free_texts_are_kept(text: str) -> None:
    from planner.core.names import escape_unsafe, unsafe_char

    assert unsafe_char(f"notes: {text}.", newlines=True) is None
    assert escape_unsafe(f"notes: {text}.", newlines=True) == f"notes: {text}."  # written as it is
    sc = planner.plan({"name": "n", "description": text, "workloads": [_infer("w", notes=text)],
                       "constraints": ALLOWED})
    assert sc.to_dict()["scenario"] == "n"


@pytest.mark.parametrize("text, ch", [("\u200dchat", "\u200d"), ("chat\u200c", "\u200c"), ("a\u200d\u200db", "\u200d"),
                                      ("a \u200db", "\u200d"), ("chat\ufe0f", "\ufe0f")])
def test_a_joiner_that_joins_nothing_is_refused_in_texts(text: str, ch: str) -> None:
    from planner.core.names import escape_unsafe, unsafe_char

    assert unsafe_char(text, newlines=True) == ch
    assert f"\\u{ord(ch):04x}" in escape_unsafe(text, newlines=True)  # shown as an escape, never raw
    err = _error_of(lambda: planner.plan({"name": "n", "description": text, "workloads": [_infer("w")],
                                          "constraints": ALLOWED}))
    assert str(err).startswith(f"description: holds U+{ord(ch):04X}"), str(err)


def test_a_joiner_in_a_name_is_refused_with_the_reason() -> None:
    err = _error_of(lambda: planner.plan({"name": "n", "workloads": [_infer(TECHNOLOGIST)], "constraints": ALLOWED}))
    assert str(err).startswith("workloads[0].name: holds U+200D (ZERO WIDTH JOINER), shown as \\u200d: a name may "
                               "not hold a joiner, since names become file names and must compare as one text only "
                               "(description and notes may hold one between two letters or emoji)."), str(err)


def test_the_docs_say_where_joiners_are_allowed() -> None:
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    assert "ZWNJ U+200C and ZWJ U+200D" in text and "Names are compared in Unicode NFKC" in text


# ----- 3. hints that work -----------------------------------------------------------------------------------------

def _workload_file(tmp_path: Path, body: str) -> str:
    (tmp_path / "s.yaml").write_text("name: s\nworkloads:\n  - {name: w, model: llama-2-7b, " + body + "}\n",
                                     encoding="utf-8")
    r = _cli("plan", "s.yaml", "--out", "o", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_zero_off_names_the_zero_stage(tmp_path: Path) -> None:
    # YAML 1.1 reads an unquoted off as false (yaml.org/type/bool.html); zero is the ZeRO stage, 0 to 3
    said = _workload_file(tmp_path, "task: train, method: full, gpus: 2, zero: off")
    assert said == ("Error: s.yaml:3: workloads[0].zero: must be a whole number, not false. YAML reads an unquoted "
                    "yes, no, on, off, true or false as a boolean, and quoted it is a text: zero takes the ZeRO stage, "
                    "a whole number from 0 to 3; for off, write zero: 0."), said
    said = _workload_file(tmp_path, "task: train, method: full, gpus: 2, zero: 'off'")
    assert said == ("Error: s.yaml:3: workloads[0].zero: must be a whole number, not 'off'. 'off' is a yes/no word, "
                    "not a number: zero takes the ZeRO stage, a whole number from 0 to 3; for off, write zero: 0."), said


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_boolean_on_a_count_field_names_the_range(tmp_path: Path) -> None:
    # micro_batch runs from 1: 'on' names no count, so no example is offered
    said = _workload_file(tmp_path, "task: train, method: qlora, micro_batch: on")
    assert said.endswith("quoted it is a text: micro_batch takes a whole number from 1 to 65536."), said


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_number_too_long_to_read_is_shown_short(tmp_path: Path) -> None:
    said = _workload_file(tmp_path, "task: infer, notes: " + "9" * 4400)
    # Python reads at most 4,300 digits (sys.get_int_max_str_digits): 4,400 nines are refused, shown as 20
    assert said == ("Error: s.yaml:3: workloads[0].notes: the number 99999999999999999999...(4,400 digits) is too long "
                    "to read. No count, size or price planner reads is that long: check the value, or quote it if it "
                    "is a text."), said
    assert "tag" not in said


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_leading_zero_context_hint_is_the_decimal(tmp_path: Path) -> None:
    # 02048 is no YAML 1.1 octal (8 is no octal digit), so PyYAML gives the text '02048'
    said = _workload_file(tmp_path, "task: infer, context: 02048")
    assert said == ("Error: s.yaml:3: workloads[0].context: must be a whole number, not '02048'. Write the number "
                    "without the leading zero: context: 2048."), said


@pytest.mark.parametrize("given, example", [("\uff52\uff54\uff58-4090", "rtx-4090"),  # full-width r, t, x
                                            ("RTX 4090", "rtx-4090"), ("\u00e9-4090", "e-4090"), ("--", "my-entry")])
def test_an_invalid_id_gets_the_id_it_stands_for(tmp_path: Path, given: str, example: str) -> None:
    (tmp_path / "gpus.yaml").write_text(f"schema_version: 1\ngpus:\n  - id: '{given}'\n", encoding="utf-8")
    err = _error_of(lambda: planner.load_catalog(tmp_path))
    assert str(err).endswith(f"gpus[0].id: id {given!r} must be lower-case letters and digits joined by '.' or '-'. "
                             f"For example {example!r}."), str(err)


# ----- 4. a model's config: lists as config.json gives them, errors at the key ---------------------------------------

def test_a_config_error_names_the_key_line_and_entry(tmp_path: Path) -> None:
    lines = ["schema_version: 1", "models:", "  - id: evil-7b", "    hf_id: acme/evil-7b",
             "    source: https://example.com/evil-7b", "    as_of: 2026-11-29", "    config:",
             "      architectures: [LlamaForCausalLM]", "      model_type: llama", "      hidden_size: 0",
             "      intermediate_size: 11008", "      num_attention_heads: 32", "      num_hidden_layers: 32",
             "      vocab_size: 32000"]
    (tmp_path / "models.yaml").write_text("\n".join(lines) + "\n")
    assert lines[9] == "      hidden_size: 0"  # line 10 of the file (index 9); config: is line 7
    r = _cli("estimate", "--model", "evil-7b", "--catalog", str(tmp_path), "--task", "infer")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == (f"Error: {tmp_path}/models.yaml:10: models[0] (evil-7b).config.hidden_size: "
                                "hidden_size must be at least 1, not 0."), r.stderr


def _with_config(change: dict) -> object:
    cat = planner.load_catalog()
    m = next(x for x in cat.models if x.id == "llama-2-7b")
    i = cat.models.index(m)
    cfg = {**dict(m.config), **change}
    return dataclasses.replace(cat, models=cat.models[:i] + (dataclasses.replace(m, config=cfg),) + cat.models[i + 1:]), i


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_catalog_object_config_with_a_list_is_accepted() -> None:
    # config.json spells architectures as a JSON list; the loader keeps it as a tuple: the same value
    cat, _ = _with_config({"architectures": ["LlamaForCausalLM"]})
    plain = planner.estimate(model="llama-2-7b", task="infer").per_gpu_total_bytes
    assert planner.estimate(model="llama-2-7b", task="infer", catalog=cat).per_gpu_total_bytes == plain


def test_a_catalog_object_config_error_names_the_entry() -> None:
    cat, i = _with_config({"hidden_size": 0})
    err = _error_of(lambda: planner.estimate(model="llama-2-7b", task="infer", catalog=cat))
    assert isinstance(err, CatalogError)
    assert str(err) == (f"the Catalog given: models[{i}] (llama-2-7b).config.hidden_size: hidden_size must be at "
                        "least 1, not 0."), str(err)


# ----- 5. an empty tokens_per_month is refused, as other wrong values are -------------------------------------------

@pytest.mark.parametrize("empty", [{}, [], ()])
def test_an_empty_tokens_per_month_is_refused(empty: object) -> None:
    scenario = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"
    err = _error_of(lambda: planner.compare(scenario, tokens_per_month=empty))
    assert str(err) == (f"tokens_per_month: is empty ({type(empty).__name__}). Leave tokens_per_month out (or None) "
                        "to use the scenario's own, or give counts: {'NAME': '200M'}, or '200M' for a one-workload "
                        "scenario."), str(err)
