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
@pytest.mark.parametrize("eol", ["\n", "\r\n"])  # CR alone: refused as old Mac line ends (test_safety15a)
def test_a_hidden_line_break_is_refused_at_the_line_an_editor_shows(char: str, named: str, eol: str) -> None:
    from planner.core.yamlio import YamlProblem, parse_yaml

    # the character sits in a comment on line 3 as an editor counts (LF or CR LF), after 'b: 1  # x'
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


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
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


# -- item 11: names with no glyph, mixed scripts, and names taken from --model or a file name ---------------------

def _plan_with_names(*names: str) -> str:
    from planner import plan

    workloads = [{"name": n, "model": "llama-2-7b", "task": "infer", "context": 512} for n in names]
    return _raises(InputError, plan, {"name": "lookalike", "workloads": workloads})


@pytest.mark.parametrize("name, shown, why", [
    ("\ue000", "'\\ue000' holds U+E000, a private-use character", "private use: Unicode 15.0, 23.5"),
    ("chat\U0001d159", "'chat\\U0001d159' holds U+1D159 (MUSICAL SYMBOL NULL NOTEHEAD), a musical symbol with no "
                       "visible glyph", "no glyph (Whistler, Unicode list, 2016-09-15)"),
    ("chat\ufffc", "'chat\\ufffc' holds U+FFFC (OBJECT REPLACEMENT CHARACTER), a placeholder for an embedded object",
     "a placeholder (Unicode 15.0, 23.8)"),
    ("\u0378x", "'\\u0378x' holds U+0378, a code point not assigned in Unicode", "unassigned in every version so far"),
])
def test_a_name_holding_a_character_with_no_glyph_is_refused(name: str, shown: str, why: str) -> None:
    # each was accepted: U+E000 alone printed as a blank name, 'chat' + U+1D159 beside 'chat' looked the same
    msg = _plan_with_names("chat", name)
    assert msg.startswith(f"workloads[1].name: {shown}"), (why, msg)
    assert msg.endswith("so the name looks like another or like none. Remove it; a name is letters, digits and '-', "
                        "e.g. 'chat-7b'."), msg


def test_a_word_mixing_cyrillic_and_latin_letters_is_refused() -> None:
    # Cyrillic 'с' U+0441 in Latin 'hat' looks like 'chat' (UTS #39, 5.2: no Latin with Cyrillic or Greek)
    msg = _plan_with_names("chat", "\u0441hat")
    assert msg == ("workloads[1].name: '\u0441hat' mixes Cyrillic and Latin letters in one word: U+0441 CYRILLIC "
                   "SMALL LETTER ES among Latin ones, so it looks like another name (Unicode TR39, 5.2: Latin, "
                   "Cyrillic and Greek letters look alike and are not mixed). Write the word in one script: type "
                   "'\u0441' in Latin letters."), msg
    # digits join a word (they are of no script): Cyrillic 'е' U+0435 before '2e'
    msg = _plan_with_names("\u04352e-test")
    assert msg.startswith("workloads[0].name: '\u04352e-test' mixes Cyrillic and Latin letters in one word "
                          "('\u04352e'): U+0435 CYRILLIC SMALL LETTER IE among Latin ones"), msg


def test_words_each_in_one_script_and_other_scripts_are_names() -> None:
    from planner.core.names import name_problem

    # per word, one script each; Latin with Han or Katakana is not a confusable mix (UTS #39, 5.2); accents are
    # Latin letters (or a Latin letter and a combining mark); a full-width 'ｃ' is Latin in NFKC
    for name in ("llama-2-7b \u0434\u043b\u044f \u0447\u0430\u0442\u0430", "\u6a21\u578b-chat", "caf\u00e9",
                 "cafe\u0301", "\uff43hat", "\u0391\u0392\u0393-test", "\u65e5\u672c\u8a9e\u30c6\u30b9\u30c8"):
        assert name_problem(name) is None, name


@pytest.mark.parametrize("model, where, fixed", [("\u00a0llama-2-7b", "starts with U+00A0 (NO-BREAK SPACE)",
                                                  "llama-2-7b"),
                                                 ("llama-2-7b ", "ends with U+0020 (SPACE)", "llama-2-7b")])
def test_a_workload_named_after_its_model_gets_the_blank_edge_rule(model: str, where: str, fixed: str) -> None:
    from planner import estimate

    # --model $'\u00a0llama-2-7b' gave the workload the name '\xa0llama-2-7b'; a written name: is refused so
    msg = _raises(InputError, estimate, model=model, task="infer")
    assert msg == (f"model: the workload is named after the model, and {model!r} {where}, drawn as blank space, "
                   f"so it looks like another name. Write it without the blank: {fixed!r}."), msg


def test_a_workload_or_scenario_named_after_its_file_gets_the_blank_edge_rule(tmp_path: Path) -> None:
    from planner import estimate, plan

    (tmp_path / " lead.yaml").write_text("model: llama-2-7b\ntask: infer\n")
    msg = _raises(InputError, estimate, workload=tmp_path / " lead.yaml")
    assert msg == (f"{tmp_path / ' lead.yaml'}: the workload is named after its file, and ' lead' starts with U+0020 "
                   "(SPACE), drawn as blank space, so it looks like another name. Write it without the blank: 'lead'. "
                   "Give the name in the file (name: ...), or rename the file."), msg
    (tmp_path / "trail .yaml").write_text("workloads:\n  - {model: llama-2-7b, task: infer}\n")
    msg = _raises(InputError, plan, tmp_path / "trail .yaml")
    assert msg.startswith(f"{tmp_path / 'trail .yaml'}: the scenario is named after its file, and 'trail ' ends with "
                          "U+0020 (SPACE)"), msg


# -- item 12: a scenario name composed and decomposed is one report set -------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_scenario_named_in_nfc_then_nfd_replaces_its_own_report_set(tmp_path: Path) -> None:
    import json

    from planner import plan

    wl = [{"name": "w", "model": "llama-2-7b", "task": "infer", "context": 512}]
    out = tmp_path / "o"
    first = plan({"name": "caf\u00e9", "workloads": wl}, out=out, format="json")
    assert first.outputs == {"json": out / "caf\u00e9.json"}  # the stem is NFC (planner.core.names.safe_stem)
    # 'cafe' + U+0301 is 'café' in NFKC (docs/commands.md: names compare in NFKC): the same set, replaced,
    # where it was refused as "a report of 'plan café'" of another set
    second = plan({"name": "cafe\u0301", "workloads": wl}, out=out, format="json")
    assert second.outputs == {"json": out / "caf\u00e9.json"}
    assert sorted(p.name for p in out.iterdir()) == [".planner-reports.json", "caf\u00e9.json"]
    manifest = json.loads((out / ".planner-reports.json").read_text(encoding="utf-8"))
    assert json.dumps(manifest, ensure_ascii=False).count("plan cafe\u0301") == 1, manifest
    # a scenario of another name whose reports get the same file name ('café?' -> 'café') is still refused
    msg = _raises(InputError, plan, {"name": "caf\u00e9?", "workloads": wl}, out=out, format="json")
    assert msg.startswith(f"{first.outputs['json']}: is a report of 'plan cafe\u0301', and 'plan caf\u00e9?' would "
                          "write a file of the same name"), msg


# -- item 15: a number or date YAML read where a text belongs gets the quote hint ------------------------------------

@pytest.mark.parametrize("written, shown, what", [("42", "42", "a number"), ("2026-12-01", "the date 2026-12-01", "a date")])
def test_a_description_read_as_a_number_or_date_gets_the_quote_hint(tmp_path: Path, written: str, shown: str,
                                                                     what: str) -> None:
    from planner import plan

    # YAML 1.1 reads an unquoted 42 as an int and 2026-12-01 as a date (yaml.org/type/int.html, timestamp.html)
    (tmp_path / "s.yaml").write_text(f"name: h\ndescription: {written}\nworkloads:\n"
                                     "  - {name: w, model: llama-2-7b, task: infer}\n")
    msg = _raises(InputError, plan, tmp_path / "s.yaml")
    assert msg == (f"{tmp_path / 's.yaml'}:2: description: must be a non-empty text, not {shown}. YAML reads an "
                   f"unquoted {written} as {what}: quote the text as written, e.g. description: '{written}'."), msg


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_numeric_workload_name_and_a_float_version_get_the_quote_hint(tmp_path: Path) -> None:
    from planner import estimate, plan

    (tmp_path / "s.yaml").write_text("name: h\nworkloads:\n  - {name: 2026, model: llama-2-7b, task: infer}\n")
    msg = _raises(InputError, plan, tmp_path / "s.yaml")
    assert msg.endswith("workloads[0].name: must be a non-empty text, not 2026. YAML reads an unquoted 2026 as a "
                        "number: quote the text as written, e.g. name: '2026'."), msg
    (tmp_path / "w.yaml").write_text("model: llama-2-7b\ntask: train\nmethod: qlora\nbnb_version: 0.42\n")
    msg = _raises(InputError, estimate, workload=tmp_path / "w.yaml")
    # the workload file's own number text is known (h17b #4 carries it through load_workload_mapping), so the hint
    # quotes it as written, without the caveat about trailing zeros a number read back would need
    assert msg.endswith(":4: bnb_version: must be a non-empty text, not 0.42. YAML reads an unquoted 0.42 as a number: "
                        "quote the text as written, e.g. bnb_version: '0.42'."), msg
    (tmp_path / "w.yaml").write_text("model: llama-2-7b\ntask: train\nmethod: qlora\nbnb_version: 0.420\n")
    msg = _raises(InputError, estimate, workload=tmp_path / "w.yaml")
    assert msg.endswith("quote the text as written, e.g. bnb_version: '0.420'."), msg


def test_a_discontinued_date_in_a_gpu_overlay_gets_the_quote_hint(tmp_path: Path) -> None:
    from planner.catalog.loader import load_catalog

    # docs/catalog.md: discontinued is "when and on whose word" (a text), so a bare date is what users write; an
    # overlay entry with a shipped id changes the fields it gives
    ov = _overlay(tmp_path, "schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    discontinued: 2024-08-01\n")
    msg = _raises(InputError, load_catalog, ov)
    assert msg == (f"{ov / 'gpus.yaml'}:4: gpus[0] (rtx-3060-12gb).discontinued: must be a non-empty text, not the date "
                   "2024-08-01. YAML reads an unquoted 2024-08-01 as a date: quote the text as written, e.g. "
                   "discontinued: '2024-08-01'."), msg


# -- item 17: a seq_len list that is not longest first ------------------------------------------------------------------

@pytest.mark.parametrize("lengths, later, shorter, ordered", [([512, 2048], 2048, 512, "2048, 512"),
                                                              ([4096, 1024, 2048], 2048, 1024, "4096, 2048, 1024")])
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_seq_len_list_not_longest_first_is_refused_with_the_sorted_list(lengths: list[int], later: int, shorter: int,
                                                                          ordered: str) -> None:
    from planner import plan

    # docs/scenarios.md: "a list, longest first". Variants are tried in the list's order and a shorter length fits
    # wherever a longer one does, so [512, 2048] trained at 512 and never tried 2048, without a word.
    wl = {"name": "q", "model": "llama-2-7b", "task": "train", "method": "qlora", "seq_len": lengths}
    msg = _raises(InputError, plan, {"name": "s", "workloads": [wl]})
    assert msg == (f"workloads[0].seq_len: lists {later} after the shorter {shorter}: a shorter length fits wherever a "
                   f"longer one does and is tried first, so {later} would never be used. List the lengths longest "
                   f"first: seq_len: [{ordered}]."), msg
    # longest first plans (the docs' own example)
    assert plan({"name": "s", "workloads": [{**wl, "seq_len": [4096, 2048]}]}).plan is not None


# -- item 18: import-skypilot and a region that is not ASCII ------------------------------------------------------------

_HEADER_AWS = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
               "AvailabilityZone,Arch\n")


def test_a_lookalike_region_is_not_imported_nor_picked_over_a_real_one(tmp_path: Path) -> None:
    from planner.catalog.skypilot import import_file

    # 'us-\u0435ast-1' (Cyrillic 'е' U+0435) counted as a US region and was imported under that name. g6.xlarge's
    # row is the real one (catalogs/v8/aws/vms.csv @00148f2a, as in tests/test_import_skypilot.py); g6.2xlarge's
    # lookalike row is cheaper than its real one, and must not win the cheapest-US-region pick.
    body = ("g6.xlarge,L4,1.0,4.0,16.0,L4,0.8048,0.2599,us-\u0435ast-1,us-east-1a,x86_64\n"
            "g6.2xlarge,L4,1.0,8.0,32.0,L4,0.5,0.2,us-\u0435ast-1,us-east-1a,x86_64\n"
            "g6.2xlarge,L4,1.0,8.0,32.0,L4,0.9776,0.3,us-east-2,use2-az2,x86_64\n")
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    path.write_text(_HEADER_AWS + body, encoding="utf-8")
    result = import_file(path, as_of="2026-01")
    assert result.skipped["g6.xlarge"] == ("line 2: the region 'us-\u0435ast-1' holds U+0435 CYRILLIC SMALL LETTER IE, not "
                                           "ASCII as the clouds' regions are (a lookalike of another region)")
    assert [(r.instance, r.region, r.usd_per_hour) for r in result.rows] == [("g6.2xlarge", "us-east-2", 0.9776)]
