"""Hostile pass h15b (issue #28): findings 5, 6, 8 and minors b, c, d.

5. A calibration file's ``gpu_name`` follows the name rule for blanks (U+3000, two spaces, a blank at an end),
   with the single-spaced ASCII name as the hint, so 'NVIDIA<U+3000>L4' no longer matches 'NVIDIA L4' silently.
6. Names refuse an enclosing mark (category Me), U+0332/U+0333 (drawn as '_') and an emoji skin tone modifier
   with no emoji before it, with one line naming the character.
8. A word mixing Latin and Cyrillic or Greek letters (UTS #39, 5.2; the names' rule) is refused in an extras
   description and category and in catalog labels (a GPU's name, a platform part's mpn); a word all in one
   script passes.
b. Full-width ids get "Did you mean" (close names are compared in Unicode NFKC).
c. A size over its field's limit names the limit.
d. A thousands comma inside a flow mapping or list names the entry.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.names import name_problem

REPO = Path(__file__).resolve().parent.parent


def _cli_error(*args: str) -> str:
    """The last stderr line of ``planner *args``: exit 2 required."""
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 2, r.output
    return r.stderr.strip().splitlines()[-1]


def _calibration(path: Path, name: str) -> Path:
    path.write_text(f'schema_version: 1\ngpus:\n  - gpu_name: "{name}"\n    cuda_context: 600 MiB\n'
                    "    allocator_fraction: 0.05\n    measured_on: 2026-11-01\n", encoding="utf-8")
    return path


# -- 5. calibration gpu_name -------------------------------------------------------------------------------------

@pytest.mark.parametrize("written, told", [
    ("NVIDIA\\u3000L4", "'NVIDIA\\u3000L4' holds U+3000 (IDEOGRAPHIC SPACE) at character 7, drawn as blank space "
                        "like an ordinary space, so the GPU name looks like another"),
    ("NVIDIA  L4", "'NVIDIA  L4' holds a run of 2 blanks at character 7: a name may hold single spaces only, since a "
                   "run of them looks like one and lets the terminal start a line with the text after it"),
    ("NVIDIA L4 ", "'NVIDIA L4 ' ends with U+0020 (SPACE), drawn as blank space, so it looks like another GPU name"),
])
def test_a_calibration_gpu_name_with_odd_blanks_is_refused_with_the_ascii_name(tmp_path: Path, written: str,
                                                                                told: str) -> None:
    path = _calibration(tmp_path / "c.yaml", written)
    err = _cli_error("estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4", "--calibration", str(path))
    assert err == (f"Error: {path}:3: gpus[0].gpu_name: {told}. Write gpu_name: 'NVIDIA L4', with single ordinary "
                   "spaces, as torch.cuda.get_device_name() reports it ('planner calibrate' writes it so).")
    assert "\u3000" not in err  # shown escaped, never raw


def test_a_plain_calibration_gpu_name_still_applies(tmp_path: Path) -> None:
    path = _calibration(tmp_path / "c.yaml", "NVIDIA L4")
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4",
                                  "--calibration", str(path), "-v"])
    assert r.exit_code == 0, r.output
    assert "(NVIDIA L4, 2026-11-01)" in r.output


# -- 6. marks drawn as something else ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, char, why, fixed", [
    ("w\u0332x", "U+0332 (COMBINING LOW LINE)", "a combining mark drawn as an underscore under the character before "
                                                "it", "'wx' (or write '_')."),
    ("w\u0333x", "U+0333 (COMBINING DOUBLE LOW LINE)", "a combining mark drawn as an underscore under the character "
                                                       "before it", "'wx' (or write '_')."),
    ("o\u20dd", "U+20DD (COMBINING ENCLOSING CIRCLE)", "an enclosing mark drawn round the character before it", "'o'."),
    ("a\u0488", "U+0488 (COMBINING CYRILLIC HUNDRED THOUSANDS SIGN)", "an enclosing mark drawn round the character "
                                                                       "before it", "'a'."),
    ("x\U0001f3fb", "U+1F3FB (EMOJI MODIFIER FITZPATRICK TYPE-1-2)", "an emoji skin tone modifier with no emoji "
                                                                     "before it, drawn as a colour swatch", "'x'."),
    # U+1F600 GRINNING FACE is an emoji (So) that takes no modifier (not Emoji_Modifier_Base in Unicode 14.0
    # emoji-data.txt): the modifier after it is drawn as a swatch too (pass 15B, not fixed then)
    ("\U0001f600\U0001f3fd", "U+1F3FD (EMOJI MODIFIER FITZPATRICK TYPE-4)", "an emoji skin tone modifier after an "
                                                                         "emoji that takes none, drawn as a colour "
                                                                         "swatch", "'\U0001f600'."),
    ("\u2603\U0001f3ff", "U+1F3FF (EMOJI MODIFIER FITZPATRICK TYPE-6)", "an emoji skin tone modifier after an emoji "
                                                                      "that takes none, drawn as a colour swatch",
     "'\u2603'."),
])
def test_marks_drawn_as_something_else_are_refused_in_names(name: str, char: str, why: str, fixed: str) -> None:
    told = name_problem(name)
    assert told is not None
    problem, hint = told
    code = f"\\u{ord(name[1]):04x}" if ord(name[1]) <= 0xFFFF else f"\\U{ord(name[1]):08x}"
    assert problem == f"'{name[0]}{code}{name[2:]}' holds {char} at character 2, {why}, so the name looks like another"
    assert hint == "Remove it: " + fixed
    assert unicodedata.category("\u20dd") == "Me" and unicodedata.category("\u0488") == "Me"


def test_an_emoji_with_its_skin_tone_and_plain_names_pass() -> None:
    # U+1F44D THUMBS UP SIGN, U+1F9D1 ADULT, U+261D, U+1FAF6 (new in 14.0): Emoji_Modifier_Base (emoji-data.txt 14.0)
    for name in ("\U0001f44d\U0001f3fb ok", "\U0001f9d1\U0001f3fd", "\u261d\U0001f3fb", "\U0001faf6\U0001f3ff",
                 "w_x", "o", "caf\u00e9", "cafe\u0301"):
        assert name_problem(name) is None, name


def test_two_workloads_w_x_and_w_low_line_x_no_longer_load(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text("name: two\nworkloads:\n  - name: w_x\n    model: llama-2-7b\n    task: infer\n"
                    "  - name: \"w\\u0332x\"\n    model: llama-2-7b\n    task: infer\n", encoding="utf-8")
    err = _cli_error("plan", str(path), "--out", str(tmp_path / "o"), "--format", "json")
    assert err == (f"Error: {path}:6: workloads[1].name: 'w\\u0332x' holds U+0332 (COMBINING LOW LINE) at character "
                   "2, a combining mark drawn as an underscore under the character before it, so the name looks like "
                   "another. Remove it: 'wx' (or write '_').")


# -- 8. mixed-script words in extras and catalog labels ------------------------------------------------------------

def _extras(path: Path, description: str, category: str) -> Path:
    path.write_text(f'name: ex\nworkloads:\n  - name: chat\n    model: llama-2-7b\n    task: infer\nextras:\n'
                    f'  - description: "{description}"\n    unit_price_usd: 10\n    source: "q"\n'
                    f"    as_of: 2026-01-15\n    category: {category}\n", encoding="utf-8")
    return path


_TR39 = "(Unicode TR39, 5.2: Latin, Cyrillic and Greek letters look alike and are not mixed)"


@pytest.mark.parametrize("description, category, line, key, told", [
    ("NVMe SSD 4 \u0422B", "storage", 7, "description",
     "'NVMe SSD 4 \u0422B' mixes Cyrillic and Latin letters in one word ('\u0422B'): U+0422 CYRILLIC CAPITAL LETTER "
     f"TE among Latin ones, so it looks like another description {_TR39}. Write the word in one script: type '\u0422' "
     "in Latin letters."),
    ("NVMe \u0405SD 4 TB", "storage", 7, "description",
     "'NVMe \u0405SD 4 TB' mixes Cyrillic and Latin letters in one word ('\u0405SD'): U+0405 CYRILLIC CAPITAL LETTER "
     f"DZE among Latin ones, so it looks like another description {_TR39}. Write the word in one script: type "
     "'\u0405' in Latin letters."),
    ("NVMe SSD 4 TB", "st\u043erage", 11, "category",
     "'st\u043erage' mixes Cyrillic and Latin letters in one word: U+043E CYRILLIC SMALL LETTER O among Latin ones, "
     f"so it looks like another category {_TR39}. Write the word in one script: type '\u043e' in Latin letters."),
])
def test_an_extras_word_mixing_scripts_is_refused(tmp_path: Path, description: str, category: str, line: int,
                                                  key: str, told: str) -> None:
    path = _extras(tmp_path / "ex.yaml", description, category)
    err = _cli_error("plan", str(path), "--out", str(tmp_path / "o"), "--format", "md")
    assert err == f"Error: {path}:{line}: extras[0].{key}: {told}"


def test_an_extras_description_in_one_script_per_word_passes(tmp_path: Path) -> None:
    # whole-script words stay accepted (the names' rule: per word; a known limit, docs/commands.md)
    path = _extras(tmp_path / "ex.yaml", "\u0434\u0438\u0441\u043a SSD 4 TB", "storage")
    r = CliRunner().invoke(main, ["plan", str(path), "--out", str(tmp_path / "o"), "--format", "md"])
    assert r.exit_code == 0, r.output


def _shipped_entry(file: str, entry_id: str) -> str:
    text = (REPO / "catalog" / file).read_text(encoding="utf-8")
    return re.search(rf"  - id: {re.escape(entry_id)}\n.*?(?=\n  - id:|\n\n|\n#|\Z)", text, re.S).group(0) + "\n"


def test_a_gpu_name_mixing_scripts_is_refused(tmp_path: Path) -> None:
    entry = _shipped_entry("gpus.yaml", "rtx-3060-12gb")
    assert "name: GeForce RTX 3060 12GB\n" in entry
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "gpus.yaml").write_text("schema_version: 1\ngpus:\n" + entry.replace(
        "name: GeForce RTX 3060 12GB\n", "name: GeForce RTX 3060 12G\u0412\n", 1), encoding="utf-8")
    err = _cli_error("plan", str(REPO / "scenarios" / "qlora-7b-12gb.yaml"), "--catalog", str(cat),
                     "--out", str(tmp_path / "o"), "--format", "md")
    assert err.endswith("(rtx-3060-12gb).name: 'GeForce RTX 3060 12G\u0412' mixes Cyrillic and Latin letters in one "
                        "word ('12G\u0412'): U+0412 CYRILLIC CAPITAL LETTER VE among Latin ones, so it looks like "
                        f"another name {_TR39}. Write the word in one script: type '\u0412' in Latin letters."), err


def test_a_platform_part_mpn_mixing_scripts_is_refused(tmp_path: Path) -> None:
    entry = _shipped_entry("platforms.yaml", "am5-desktop")
    assert "mpn: 100-100001277WOF" in entry
    cat = tmp_path / "pl"
    cat.mkdir()
    (cat / "platforms.yaml").write_text("schema_version: 1\nplatforms:\n" + entry.replace(
        "mpn: 100-100001277WOF", "mpn: 100-100001277W\u041eF", 1), encoding="utf-8")
    err = _cli_error("plan", str(REPO / "scenarios" / "qlora-7b-12gb.yaml"), "--catalog", str(cat),
                     "--out", str(tmp_path / "o"), "--format", "md")
    assert err.endswith("(am5-desktop).parts[0].mpn: '100-100001277W\u041eF' mixes Cyrillic and Latin letters in one "
                        "word ('100001277W\u041eF'): U+041E CYRILLIC CAPITAL LETTER O among Latin ones, so it looks "
                        f"like another mpn {_TR39}. Write the word in one script: type '\u041e' in Latin "
                        "letters."), err


def test_the_shipped_catalog_still_checks() -> None:
    r = CliRunner().invoke(main, ["catalog", "check"])
    assert r.exit_code == 0, r.output


# -- minors ------------------------------------------------------------------------------------------------------

def test_full_width_ids_get_did_you_mean() -> None:
    assert _cli_error("catalog", "\uff47\uff50\uff55\uff53") == (
        "Error: Invalid value for 'KIND': '\uff47\uff50\uff55\uff53' is not a catalog kind. Did you mean 'gpus'? See "
        "'planner catalog --help'.")
    assert _cli_error("estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "\uff4c\uff14") == (
        "Error: --gpu: unknown GPU '\uff4c\uff14'. Did you mean 'l4' or 'l40s'?")


def test_a_size_over_its_limit_names_the_limit(tmp_path: Path) -> None:
    # dataset_size's limit is 2^50 B = 1 PiB (planner/workload/spec.py)
    path = tmp_path / "d.yaml"
    path.write_text("name: d\nworkloads:\n  - model: llama-2-7b\n    task: train\n    method: qlora\n"
                    "    dataset_size: 99999999999999999999999 GiB\n", encoding="utf-8")
    err = _cli_error("plan", str(path), "--out", str(tmp_path / "o"), "--format", "json")
    assert err == (f"Error: {path}:6: workloads[0].dataset_size: '99999999999999999999999 GiB' is more than any real "
                   "value of this field (at most 1 PiB). Write a size of at most 1 PiB, e.g. '1 PiB'.")


@pytest.mark.parametrize("body, line, entry, number", [
    ("constraints: {budget_usd: 5,000}\n", 5, "constraints.budget_usd", ("5", "000")),
    ("constraints:\n  allowed_gpus: [l4, rtx-4090, 5,000]\n", 6, "constraints.allowed_gpus", ("5", "000")),
])
def test_a_thousands_comma_in_a_flow_collection_names_the_entry(tmp_path: Path, body: str, line: int, entry: str,
                                                                 number: tuple[str, str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: c\nworkloads:\n  - model: llama-2-7b\n    task: infer\n" + body, encoding="utf-8")
    err = _cli_error("plan", str(path), "--out", str(tmp_path / "o"), "--format", "json")
    a, b = number
    assert err == (f"Error: {path}:{line}: {entry}: {a},{b} inside [...] or {{...}} is read by YAML as two items, {a} "
                   f"and {b} (a comma separates the items there). Write the number without the separator ({a}{b}).")
