"""Names that reach reports are not confusable and hold no invisible character (issue #28, hostile pass h12b).

1. More than 4 nonspacing marks on one character are refused (UTS #39, 5.4 "Optional Detection": "Forbid sequences
   of more than 4 nonspacing marks (gc=Mn or gc=Me)"), counted in NFD; the message names the count and position.
2. Two workload names drawn alike by UTS #39's confusables.txt (skeleton, section 4) clash; a word mixing Latin
   with Armenian or Lisu letters is refused as one mixing Latin with Cyrillic or Greek is.
3. The 200-character limit counts a name in Unicode NFC (UAX #15): composed and decomposed spellings alike.
4. U+16FE4 KHITAN SMALL SCRIPT FILLER is refused in names and texts, as the Hangul fillers are.
5. A duplicate-name message says what the names differ in (case and compatibility forms); a workload is named
   by the same rule (planner.core.names.resolve_name: NFKC, then clash_key) in costs.mfu, costs.batch_inference
   and --tokens-per-month.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.errors import InputError
from planner.core.names import name_problem, resolve_name, spelling_note, unsafe_char, unsafe_problem


def _run(args: list[str]):
    return CliRunner().invoke(main, args)


@pytest.fixture(scope="module")
def catalog():
    from planner.catalog.loader import load_catalog

    return load_catalog()


def _scenario(catalog, names: list[str], costs: dict | None = None):
    from planner.solve.scenario import scenario_from_mapping

    data = {"name": "s", "workloads": [{"name": n, "model": "llama-2-7b", "task": "infer", "context": 1024}
                                       for n in names]}
    if costs is not None:
        data["costs"] = costs
    return scenario_from_mapping(data, catalog, file="s.yaml")


def _error(fn, *args) -> str:
    with pytest.raises(InputError) as caught:
        fn(*args)
    return str(caught.value)


# -- 1. stacked combining marks --------------------------------------------------------------------------------------

def test_forty_different_marks_on_one_letter_are_refused_with_count_and_position() -> None:
    # h12b #4: 'c' + U+0300..U+0327 (40 marks, all Mn, all different, so the doubled-mark rule missed them) + 'hat'
    name = "c" + "".join(chr(0x300 + i) for i in range(40)) + "hat"
    assert all(unicodedata.category(chr(0x300 + i)) == "Mn" for i in range(40))
    told = name_problem(name)
    assert told is not None
    assert "stacks 40 combining marks on 'c' (character 1): more than 4 nonspacing marks in a row" in told[0]
    assert "(Unicode TR39, 5.4)" in told[0] and told[1].startswith("Write at most 4 marks on one letter")


def test_four_marks_are_taken_and_five_refused_counted_in_nfd() -> None:
    four = "ab" + "\u0300\u0301\u0302\u0303" + "c"  # TR39: "more than 4" is refused, 4 is not
    assert name_problem(four) is None
    five = "ab" + "\u0300\u0301\u0302\u0303\u0304" + "c"
    told = name_problem(five)
    assert told is not None and "stacks 5 combining marks on 'b' (character 2)" in told[0]
    # U+1EC7 'ệ' is 'e' + U+0323 + U+0302 in NFD (UnicodeData.txt decomposition): 2 marks + 3 written = 5
    assert unicodedata.normalize("NFD", "\u1ec7") == "e\u0323\u0302"
    told = name_problem("vi\u1ec7" + "\u0300\u0301\u0304" + "t")
    assert told is not None and "stacks 5 combining marks on 'e' (character 3)" in told[0]


@pytest.mark.parametrize("name", ["Tiếng Việt", "café", "नमस्ते", "שָׁלוֹם"])
def test_real_words_with_marks_are_taken(name: str) -> None:
    assert name_problem(name) is None


def test_the_cli_refuses_the_zalgo_workload(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    name = "c" + "".join(chr(0x300 + i) for i in range(40)) + "hat"
    s.write_text(f'name: z\nworkloads:\n  - {{name: "{name}", model: llama-2-7b, task: infer}}\n', encoding="utf-8")
    r = _run(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {s}:3: workloads[0].name: 'c\\u0300\\u0301"), r.stderr
    assert "stacks 40 combining marks on 'c' (character 1)" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


# -- 2. lookalike names ------------------------------------------------------------------------------------------------

# Each pair: the ASCII name, its lookalike, and the confusables.txt line that maps the odd character to ASCII.
LOOKALIKES = [
    ("a/b", "a\u2215b", "U+2215 (DIVISION SLASH) looks like '/'"),  # 2215 ; 002F ; MA
    ("a/b", "a\u2044b", "U+2044 (FRACTION SLASH) looks like '/'"),  # 2044 ; 002F ; MA
    ("model", "rnodel", "U+006D (LATIN SMALL LETTER M) looks like 'rn'"),  # 006D ; 0072 006E ; MA
    ("a:b", "a\u0589b", "U+0589 (ARMENIAN FULL STOP) looks like ':'"),  # 0589 ; 003A ; MA
    ("chat", "ch\u0251t", "U+0251 (LATIN SMALL LETTER ALPHA) looks like 'a'"),  # 0251 ; 0061 ; MA
    ("all", "al\u01c0", "U+01C0 (LATIN LETTER DENTAL CLICK) looks like 'l'"),  # 01C0 ; 006C ; MA
    ("team-I", "team-\ua4f2", "U+A4F2 (LISU LETTER I) looks like 'l'"),  # A4F2 ; 006C ; MA, and 0049 ; 006C ; MA
]


# confusables.txt 17.0.0, the lines the table must hold (quoted from the file, "source ; prototype ; MA"):
CONFUSABLES_LINES = [
    "2215 ;\t002F ;\tMA\t#* ( ∕ → / ) DIVISION SLASH → SOLIDUS",
    "2044 ;\t002F ;\tMA\t#* ( ⁄ → / ) FRACTION SLASH → SOLIDUS",
    "0589 ;\t003A ;\tMA\t#* ( ։ → : ) ARMENIAN FULL STOP → COLON",
    "0251 ;\t0061 ;\tMA\t# ( ɑ → a ) LATIN SMALL LETTER ALPHA → LATIN SMALL LETTER A",
    "01C0 ;\t006C ;\tMA\t# ( ǀ → l ) LATIN LETTER DENTAL CLICK → LATIN SMALL LETTER L",
    "0585 ;\t006F ;\tMA\t# ( օ → o ) ARMENIAN SMALL LETTER OH → LATIN SMALL LETTER O",
    "A4F2 ;\t006C ;\tMA\t# ( ꓲ → l ) LISU LETTER I → LATIN SMALL LETTER L",
    "0049 ;\t006C ;\tMA\t# ( I → l ) LATIN CAPITAL LETTER I → LATIN SMALL LETTER L",
    "006D ;\t0072 006E ;\tMA\t# ( m → rn ) LATIN SMALL LETTER M → LATIN SMALL LETTER R, LATIN SMALL LETTER N",
]


@pytest.mark.parametrize("line", CONFUSABLES_LINES)
def test_the_table_holds_the_confusables_lines(line: str) -> None:
    from planner.core.lookalike import PROTOTYPES

    source, prototype = (field.strip() for field in line.split(";")[:2])
    assert PROTOTYPES[chr(int(source, 16))] == "".join(chr(int(h, 16)) for h in prototype.split())


def test_the_table_keeps_only_ascii_prototypes_of_nfkc_stable_sources() -> None:
    from planner.core.lookalike import PROTOTYPES

    assert all(p.isascii() for p in PROTOTYPES.values())
    assert all(unicodedata.normalize("NFKC", ch) == ch for ch in PROTOTYPES)
    assert "\uff41" not in PROTOTYPES  # FULLWIDTH 'a': NFKC makes it 'a' before the table is read


@pytest.mark.parametrize("plain, alike, why", LOOKALIKES)
def test_two_workloads_drawn_alike_clash(catalog, plain: str, alike: str, why: str) -> None:
    from planner.core.lookalike import skeleton

    assert skeleton(plain) == skeleton(alike)
    said = _error(_scenario, catalog, [plain, alike])
    assert said.startswith(f"s.yaml:1: workloads[1].name: duplicate workload name {alike!r} (also workloads[0], a "
                           f"name drawn alike: '{alike}' and '{plain}' differ only in characters that look the same ("), said
    assert why in said and "Unicode TR39, confusables.txt), so they read as one name)" in said, said
    assert said.endswith("Give each workload a name that looks unlike the others."), said


def test_a_lookalike_in_another_case_clashes_too(catalog) -> None:
    # 'Team-ꓲ' skeleton 'Team-l' (A4F2 ; 006C), case-folded 'team-l'; 'team-I' skeleton 'team-l' (0049 ; 006C)
    said = _error(_scenario, catalog, ["team-I", "Team-\ua4f2"])
    assert "a name drawn alike" in said, said


def test_distinct_names_do_not_clash(catalog) -> None:
    sc = _scenario(catalog, ["chat", "chad", "café", "cafe", "a-b", "a/c"])
    assert [w.name for w in sc.workloads] == ["chat", "chad", "café", "cafe", "a-b", "a/c"]


def test_armenian_in_a_latin_word_is_refused() -> None:
    # h12b #5: 'chat-օk' alone; U+0585 ARMENIAN SMALL LETTER OH (0585 ; 006F ; MA: drawn as 'o')
    told = name_problem("chat-\u0585k")
    assert told is not None
    assert told[0].startswith("'chat-\u0585k' mixes Armenian and Latin letters in one word ('\u0585k'): U+0585 "
                              "ARMENIAN SMALL LETTER OH among Latin ones"), told
    assert name_problem("\u0570\u0561\u0575\u0565\u0580\u0565\u0576 chat") is None  # an Armenian word beside a Latin one


def test_the_cli_refuses_two_workloads_drawn_alike(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_text('name: p\nworkloads:\n  - {name: chat, model: llama-2-7b, task: infer}\n'
                 '  - {name: "ch\u0251t", model: llama-2-13b, task: infer}\n', encoding="utf-8")
    r = _run(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {s}:4: workloads[1].name: duplicate workload name 'ch\u0251t'"), r.stderr
    assert not (tmp_path / "o").exists()


# -- 3. the 200-character limit counts in NFC --------------------------------------------------------------------------

def test_a_decomposed_name_is_as_long_as_its_composed_spelling() -> None:
    composed = "\u00e9" * 150
    decomposed = unicodedata.normalize("NFD", composed)
    assert len(decomposed) == 300  # 'e' + U+0301 each (UnicodeData.txt: 00E9 decomposes to 0065 0301)
    assert name_problem(composed) is None and name_problem(decomposed) is None
    told = name_problem(unicodedata.normalize("NFD", "\u00e9" * 201))
    assert told is not None and "is 201 characters long (counted composed, Unicode NFC); a name is at most 200" \
        in told[0], told


def test_conjoining_hangul_counts_one_syllable_as_one() -> None:
    # U+1100 HANGUL CHOSEONG KIYEOK + U+1161 JUNGSEONG A compose to U+AC00 (Unicode Standard, 3.12 "Conjoining Jamo
    # Behavior", Hangul syllable composition)
    assert unicodedata.normalize("NFC", "\u1100\u1161") == "\uac00"
    assert name_problem("\u1100\u1161" * 120) is None
    told = name_problem("\u1100\u1161" * 201)
    assert told is not None and "is 201 characters long (counted composed" in told[0]


def test_the_cli_takes_a_decomposed_name_of_150_letters(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    name = unicodedata.normalize("NFD", "\u00e9" * 150)
    s.write_text(f'name: l\nworkloads:\n  - {{name: "{name}", model: llama-2-7b, task: infer}}\n', encoding="utf-8")
    r = _run(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output


# -- 4. the Khitan filler ----------------------------------------------------------------------------------------------

def test_the_khitan_filler_is_refused_in_names_and_texts() -> None:
    filler = "\U00016fe4"
    assert unicodedata.name(filler) == "KHITAN SMALL SCRIPT FILLER"
    assert unsafe_char("ab" + filler + "cd") == filler
    assert unsafe_char("QLoRA" + filler + " on one card", newlines=True) == filler
    told = unsafe_problem("ab" + filler + "cd")
    assert told == ("holds U+16FE4 (KHITAN SMALL SCRIPT FILLER), shown as \\U00016fe4, an invisible character, which "
                    "makes the text look like another")


def test_the_cli_refuses_the_khitan_filler_in_a_description(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_text('name: kd\ndescription: "QLoRA\U00016fe4 on one card"\n'
                 'workloads:\n  - {name: w, model: llama-2-7b, task: infer}\n', encoding="utf-8")
    r = _run(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {s}:2: description: holds U+16FE4 (KHITAN SMALL SCRIPT FILLER)"), r.stderr


# -- 5. duplicate-name messages and one naming rule ---------------------------------------------------------------------

def test_a_duplicate_in_case_and_a_compatibility_form_says_both() -> None:
    # U+2024 ONE DOT LEADER is '.' in NFKC (UnicodeData.txt: <compat> 002E)
    assert unicodedata.normalize("NFKC", "\u2024") == "."
    note = spelling_note("www\u2024evil.com", "WWW.EVIL.COM")
    assert note == (", the same name: 'www\u2024evil.com' and 'WWW.EVIL.COM' differ in upper and lower case and in "
                    "compatibility forms (U+2024 (ONE DOT LEADER) is '.' in Unicode NFKC), so they read as one name")
    # one kind alone keeps its own words
    assert "differ only in upper and lower case" in spelling_note("Chat", "chat")


@pytest.mark.parametrize("given", ["qlora-7b", "QLORA-7B", "qlora\u20107b", "\uff51lora-7b"])
def test_one_rule_names_a_workload(given: str) -> None:
    # as written; in another case (clash_key casefolds); with U+2010 HYPHEN (a dash lookalike); full-width 'ｑ' (NFKC)
    assert resolve_name(given, ["qlora-7b", "chat"]) == "qlora-7b"
    assert resolve_name("qlora-13b", ["qlora-7b", "chat"]) is None


def test_costs_mfu_and_batch_inference_name_a_workload_in_another_case(catalog) -> None:
    from planner.cost.tco import read_costs

    sc = _scenario(catalog, ["chat-7b", "chat-13b"], {"mfu": {"CHAT-7B": 0.3}, "batch_inference": ["Chat\u20117b"]})
    costs = read_costs(sc.costs, catalog, sc.workloads)
    assert dict(costs.mfu) == {"chat-7b": 0.3}
    assert tuple(costs.batch_inference) == ("chat-7b",)


def test_costs_mfu_still_refuses_a_name_of_no_workload(catalog) -> None:
    from planner.cost.tco import read_costs

    sc = _scenario(catalog, ["chat-7b"], {"mfu": {"chat-70b": 0.3}})
    said = _error(read_costs, sc.costs, catalog, sc.workloads)
    assert "no workload 'chat-70b' in the scenario" in said and "Did you mean" in said, said
