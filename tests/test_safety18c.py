"""Issue 28, hostile pass 13B (/work/wt/reports/h13b.md): names and numbers.

#2  report sets whose scenario names UTS #39 confusables.txt draws alike ('chat', 'chɑt') are refused side by side.
#5  a share written '0_1' or '01' gets 0.1 as the hint, never a value the next check refuses; -0.0 is 0.
#8  token counts refuse an exponent, a point without a digit on one side and a leading '+', as sizes do.
#9  a text key read as a number is quoted as the file writes it (mpn: 1.50 -> "1.50"), and only quoted.
minor a: import-skypilot --region with a non-ASCII lookalike is refused, the character named.
minor b: a free text over 32,000 characters is refused at load (a workbook cell holds 32,767).
minor d: --gpu-layers and gpu_layers take 'all', 'max', 'auto' in lower case only, with a Did-you-mean.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.errors import InputError

WL = "  - {name: w1, model: llama-2-7b, task: infer, context: 1024}\n"


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stderr if r.exit_code else r.output


def _scenario(tmp_path: Path, file: str, name: str, workloads: str = WL) -> str:
    p = tmp_path / file
    p.write_text(f'name: "{name}"\nworkloads:\n{workloads}', encoding="utf-8")
    return str(p)


def _raises(exc: type[Exception], fn, *args, **kw) -> str:
    with pytest.raises(exc) as info:
        fn(*args, **kw)
    return str(info.value)


# -- #2: report sets drawn alike ------------------------------------------------------------------------------

# each pair from confusables.txt 17.0.0: "0251 ; 0061 ; MA" (LATIN SMALL LETTER ALPHA -> a), "A4F2 ; 006C ; MA"
# (LISU LETTER I -> l) and "0049 ; 006C ; MA" (LATIN CAPITAL LETTER I -> l)
@pytest.mark.parametrize("first, second, said", [
    ("chat", "ch\u0251t", "U+0251 (LATIN SMALL LETTER ALPHA) looks like 'a'"),
    ("team-I", "team-\ua4f2", "U+A4F2 (LISU LETTER I) looks like 'l'"),
])
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_report_set_drawn_like_another_in_the_folder_is_refused(tmp_path: Path, first: str, second: str,
                                                                  said: str) -> None:
    out = tmp_path / "out"
    code, _ = _run("plan", _scenario(tmp_path, "s1.yaml", first), "--out", str(out), "--format", "json")
    assert code == 0
    code, err = _run("plan", _scenario(tmp_path, "s2.yaml", second), "--out", str(out), "--format", "json")
    assert code == 2
    assert err.startswith(f"Error: {out}: holds the reports of 'plan {first}', and 'plan {second}' would sit beside "
                          f"them, a name drawn alike: 'plan {first}' and 'plan {second}' differ only in characters "
                          "that look the same ("), err
    assert said in err and "Give another --out, or give the scenario a name that looks unlike it." in err, err
    assert sorted(p.name for p in out.iterdir()) == [".planner-reports.json", f"{first}.json"]  # nothing written


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_set_drawn_alike_is_refused_through_the_api_before_any_work(tmp_path: Path) -> None:
    from planner import plan

    wl = [{"name": "w", "model": "llama-2-7b", "task": "infer", "context": 512}]
    plan({"name": "chat", "workloads": wl}, out=tmp_path / "o", format="json")
    msg = _raises(InputError, plan, {"name": "ch\u0251t", "workloads": wl}, out=tmp_path / "o", format="json")
    assert "would sit beside them, a name drawn alike" in msg, msg


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_sets_in_another_case_or_unicode_form_keep_their_own_rules(tmp_path: Path) -> None:
    # an NFKC variant gives the same file name and is another set's (h17b #5e: tests/test_safety11.py); a name in
    # another case stays with the case rule
    out = tmp_path / "out"
    assert _run("plan", _scenario(tmp_path, "a.yaml", "chat"), "--out", str(out), "--format", "json")[0] == 0
    code, err = _run("plan", _scenario(tmp_path, "b.yaml", "\uff43hat"), "--out", str(out), "--format", "json")
    assert code == 2 and "would write a file of the same name" in err, err
    code, err = _run("plan", _scenario(tmp_path, "c.yaml", "Chat"), "--out", str(out), "--format", "json")
    assert code == 2 and "differ only in upper and lower case" in err, err
    # a set unlike any other is still written beside them
    assert _run("plan", _scenario(tmp_path, "d.yaml", "chart"), "--out", str(out), "--format", "json")[0] == 0


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_set_whose_drawn_alike_neighbour_is_gone_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _run("plan", _scenario(tmp_path, "a.yaml", "chat"), "--out", str(out), "--format", "json")[0] == 0
    (out / "chat.json").unlink()  # the manifest still lists it; no report of 'plan chat' is there
    assert _run("plan", _scenario(tmp_path, "b.yaml", "ch\u0251t"), "--out", str(out), "--format", "json")[0] == 0


# -- #5: shares written with '_' or a leading zero --------------------------------------------------------------

EST_TRAIN = ("estimate", "--model", "llama-2-7b", "--task", "train", "--method", "lora", "--gpu", "l4")
EST_INFER = ("estimate", "--model", "llama-2-7b", "--task", "infer", "--context", "1024", "--gpu", "l4")


@pytest.mark.parametrize("args, value, said", [
    (EST_TRAIN, ("--lora-dropout", "0_1"), "lora_dropout is a fraction (from 0 to 1), and 0_1 most likely means "
                                           "0.1: write --lora-dropout 0.1."),
    (EST_TRAIN, ("--lora-dropout", "01"), "lora_dropout is a fraction (from 0 to 1), and 01 most likely means 0.1: "
                                          "write --lora-dropout 0.1."),
    (EST_INFER, ("--headroom", "0_1"), "headroom is a fraction (from 0 to 0.95), and 0_1 most likely means 0.1: "
                                       "write --headroom 0.1."),
    (EST_INFER, ("--headroom", "01"), "write --headroom 0.1."),
    (EST_INFER, ("--headroom", "0_05"), "0_05 most likely means 0.05: write --headroom 0.05."),
    # 0.99 is above the most headroom taken: no reading is hinted, only the range
    (EST_INFER, ("--headroom", "099"), "headroom is a fraction (from 0 to 0.95): write it with a decimal point, e.g. "
                                       "--headroom 0.1."),
    (EST_TRAIN, ("--lora-dropout", "1_0"), "write it with a decimal point, e.g. --lora-dropout 0.1."),
])
def test_a_share_with_separators_or_a_leading_zero_gets_its_likely_reading(args, value, said: str) -> None:
    code, err = _run(*args, *value)
    assert code == 2
    assert said in err, err
    assert f"{value[0]} 1." not in err and f"{value[0]} 01." not in err and f"{value[0]} 10." not in err, err


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_following_the_share_hint_is_accepted() -> None:
    assert _run(*EST_TRAIN, "--lora-dropout", "0.1")[0] == 0
    assert _run(*EST_INFER, "--headroom", "0.05")[0] == 0


def test_a_whole_number_option_keeps_its_own_hints() -> None:
    code, err = _run("estimate", "--model", "llama-2-7b", "--task", "infer", "--context", "01_024")
    assert code == 2 and "--context 1024" in err, err


@pytest.mark.parametrize("key, value, hint", [
    ("lora_dropout", "0_1", "lora_dropout is a fraction (from 0 to 1), and 0_1 most likely means 0.1: write "
                            "lora_dropout: 0.1."),
    ("lora_dropout", "01", "01 most likely means 0.1: write lora_dropout: 0.1."),
    ("lora_dropout", "0.0_5", "0.0_5 most likely means 0.05: write lora_dropout: 0.05."),
])
def test_a_share_in_a_file_gets_its_likely_reading(tmp_path: Path, key: str, value: str, hint: str) -> None:
    wl = f"  - {{name: w1, model: llama-2-7b, task: train, method: lora, {key}: {value}}}\n"
    code, err = _run("plan", _scenario(tmp_path, "d.yaml", "d", wl), "--out", str(tmp_path / "o"))
    assert code == 2
    assert hint in err, err
    assert "(1)" not in err, err


@pytest.mark.parametrize("key, value, hint", [
    ("vram_headroom", "0_1", "write vram_headroom: 0.1."),
    ("vram_headroom", "096", "vram_headroom is a fraction (from 0 to 0.95): write it with a decimal point, e.g. "
                             "vram_headroom: 0.1."),
])
def test_a_scenario_share_gets_its_likely_reading(tmp_path: Path, key: str, value: str, hint: str) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(f"name: s\nworkloads:\n{WL}constraints:\n  {key}: {value}\n")
    code, err = _run("plan", str(p), "--out", str(tmp_path / "o"))
    assert code == 2 and hint in err, err


def test_every_share_range_is_the_readers() -> None:
    # planner.core.shares.SHARES mirrors the readers' ranges: a value just outside each is refused by the reader,
    # the edges inside are taken (a hint inside the range is then never refused next)
    from decimal import Decimal

    from planner.core.shares import SHARES, in_range

    for key, (lo, lo_open, hi, hi_open) in SHARES.items():
        assert in_range(key, Decimal(str(hi))) is not hi_open
        assert in_range(key, Decimal(str(lo))) is not lo_open
        assert not in_range(key, Decimal(str(hi)) + Decimal("0.001"))
        assert in_range(key, Decimal("0.1"))  # the hint given when no reading lies in the range


@pytest.mark.parametrize("key, value, ok", [("vram_headroom", "0.96", False), ("vram_headroom", "0.95", True),
                                            ("vram_headroom", "0", True)])
def test_the_scenario_reader_agrees_with_shares(tmp_path: Path, key: str, value: str, ok: bool) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(f"name: s\nworkloads:\n{WL}constraints:\n  {key}: {value}\n")
    assert (_run("plan", str(p), "--out", str(tmp_path / "o"), "--format", "json")[0] == 0) is ok


def test_a_negative_zero_headroom_is_zero() -> None:
    code, out = _run(*EST_INFER, "--headroom", "-0.0")
    assert code == 0
    assert "after 0% headroom" in out and "-0%" not in out, out


def test_a_negative_zero_from_a_file_is_zero(tmp_path: Path) -> None:
    from planner.core.fields import Entry

    assert str(Entry({"x": -0.0}, file=None, path="").number("x", min=0, max=1)) == "0.0"


# -- #8: token counts written as sizes are --------------------------------------------------------------------

COMPARE = Path(__file__).resolve().parent.parent / "scenarios" / "compare-qlora-7b-12gb.yaml"


@pytest.mark.parametrize("value, problem, hint", [
    ("1e8", "'1e8' writes its number with an exponent (1e8)", "dataset_tokens: 100M."),
    ("1.5e8", "'1.5e8' writes its number with an exponent (1.5e8)", "dataset_tokens: 150M."),
    ('"1e2M"', "'1e2M' writes its number with an exponent (1e2)", "dataset_tokens: 100M."),
    ("1e-3B", "'1e-3B' writes its number with an exponent (1e-3)", "dataset_tokens: 1M."),
    (".1B", "'.1B' has no digit before the point", "Write a digit on both sides of the point, or none: "
                                                    "dataset_tokens: 0.1B."),
    ('"+100M"', "'+100M' starts with '+'", "Write the count without it: dataset_tokens: 100M."),
    ("5.M", "'5.M' has no digit after the point", "dataset_tokens: 5M."),
])
def test_a_dataset_token_count_is_written_as_a_size_is(tmp_path: Path, value: str, problem: str, hint: str) -> None:
    text = COMPARE.read_text()
    assert "dataset_tokens: 100000000 " in text
    p = tmp_path / "tk.yaml"
    p.write_text(text.replace("dataset_tokens: 100000000 ", f"dataset_tokens: {value} "))
    code, err = _run("compare", str(p))
    assert code == 2
    assert f"workloads[0].dataset_tokens: {problem}." in err, err
    assert hint in err, err


@pytest.mark.parametrize("value, said", [
    ("2e8", "--tokens-per-month: '2e8' writes its number with an exponent (2e8). Write it in digits, with k, M, B or "
            "T: --tokens-per-month 200M."),
    ("1e2M", "'1e2M' writes its number with an exponent (1e2). Write it in digits, with k, M, B or T: "
             "--tokens-per-month 100M."),
    (".2B", "'.2B' has no digit before the point. Write a digit on both sides of the point, or none: "
            "--tokens-per-month 0.2B."),
    ("5.M", "'5.M' has no digit after the point. Write a digit on both sides of the point, or none: "
            "--tokens-per-month 5M."),
    ("+5M", "'+5M' starts with '+'. Write the count without it: --tokens-per-month 5M."),
])
def test_tokens_per_month_is_written_as_a_size_is(value: str, said: str) -> None:
    code, err = _run("compare", str(COMPARE), "--tokens-per-month", value)
    assert code == 2
    assert said in err, err


def test_the_token_hints_are_taken() -> None:
    from planner.workload.options import parse_token_count

    for text, count in (("100M", 1e8), ("150M", 1.5e8), ("1M", 1e6), ("0.1B", 1e8), ("5M", 5e6), ("1.5B", 1.5e9),
                        ("200M tokens", 2e8), ("100000000", 1e8)):
        assert parse_token_count(text) == count
    for text in ("1e8", ".1B", "5.M", "+5M", "nan", "inf", "1e2M"):
        assert parse_token_count(text) is None
    # a number (from the API or a YAML float) is a number
    assert parse_token_count(2e8) == 2e8


def test_a_huge_exponent_gets_a_plain_example() -> None:
    from planner.workload.options import token_text_problem

    told = token_text_problem("1e400", lambda t: f"dataset_tokens: {t}")
    assert told == ("'1e400' writes its number with an exponent (1e400)",
                    "Write it in digits, with k, M, B or T, e.g. dataset_tokens: 200M.")


# -- #9: text keys quoted as the file writes them ---------------------------------------------------------------

@pytest.mark.parametrize("value, said", [
    ("1.50", 'must be a quoted text, not the number 1.50. Quote it as the file writes it: mpn: "1.50"'),
    ("1.5e+5", 'not the number 1.5e+5. Quote it as the file writes it: mpn: "1.5e+5"'),
    ("1_000", "Quote it: mpn: '1_000' (mpn is a text, not a number)."),
    ("1:30", "Quote it: mpn: '1:30' (mpn is a text, not a number)."),
])
def test_an_unquoted_mpn_is_quoted_as_written(tmp_path: Path, value: str, said: str) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "gpus.yaml").write_text(f"schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    mpn: {value}\n")
    code, err = _run("catalog", "gpus", "--catalog", str(d))
    assert code == 2
    assert said in err, err
    assert "without separators" not in err and "one plain number" not in err, err


def test_a_platform_part_mpn_is_quoted_as_written(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "platforms.yaml").write_text("schema_version: 1\nplatforms:\n  - id: am5-desktop\n    parts:\n      - "
                                      "{category: cpu, name: \"AMD Ryzen 9 9950X (boxed)\", mpn: 100.10}\n")
    code, err = _run("catalog", "platforms", "--catalog", str(d))
    assert code == 2 and 'mpn: "100.10"' in err, err


@pytest.mark.parametrize("value", ["1.0e+3", "1.50"])
def test_a_numeric_workload_name_is_quoted_as_written(tmp_path: Path, value: str) -> None:
    wl = f"  - {{name: {value}, model: llama-2-7b, task: infer, context: 1024}}\n"
    code, err = _run("plan", _scenario(tmp_path, "th.yaml", "th", wl), "--out", str(tmp_path / "o"))
    assert code == 2
    assert f"YAML reads an unquoted {value} as a number: quote the text as written, e.g. name: '{value}'." in err, err


def test_a_seller_in_block_style_is_quoted_as_written(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    seller: 1.50\n")
    code, err = _run("catalog", "gpus", "--catalog", str(d))
    assert code == 2 and "e.g. seller: '1.50'." in err, err


# -- minors -----------------------------------------------------------------------------------------------------

def test_a_region_option_with_a_lookalike_is_refused_naming_it(tmp_path: Path) -> None:
    csv = tmp_path / "vms.csv"
    csv.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,"
                   "AvailabilityZone\ng6.xlarge,L4,1,4,16,0.8048,0.3,us-east-1,us-east-1a\n")
    code, err = _run("catalog", "import-skypilot", "--provider", "aws", str(csv), "--out", str(tmp_path / "ro"),
                     "--region", "us\u2010east-1")
    assert code == 2
    assert "'us\u2010east-1' holds U+2010 (HYPHEN), not ASCII as the clouds' regions are" in err, err
    assert "did you mean --region us-east-1?" in err, err  # (said once the file is read: h40a N6)
    assert not (tmp_path / "ro").exists()


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("key", ["description", "notes"])
def test_a_free_text_over_the_cap_is_refused_at_load(tmp_path: Path, key: str) -> None:
    from planner.core.names import MAX_TEXT_CHARS

    assert MAX_TEXT_CHARS == 32_000  # below a workbook cell's 32,767 (Microsoft, Excel specifications and limits)
    p = tmp_path / "long.yaml"
    p.write_text(f"name: longd\n{key}: \"{'w' * 32_001}\"\nworkloads:\n{WL}")
    code, err = _run("plan", str(p), "--out", str(tmp_path / "o"), "--format", "xlsx")
    assert code == 2
    assert (f"long.yaml:2: {key}: is 32,001 characters long; a text is at most 32,000 characters, since the workbook "
            "holds it in one cell (at most 32,767).") in err, err
    p.write_text(f"name: longd\n{key}: \"{'w' * 32_000}\"\nworkloads:\n{WL}")
    assert _run("plan", str(p), "--out", str(tmp_path / "o"), "--format", "json")[0] == 0


@pytest.mark.parametrize("value", ["ALL", "All", "MAX"])
def test_gpu_layers_words_are_lower_case(value: str) -> None:
    code, err = _run("estimate", "--model", "llama-2-7b", "--task", "infer", "--engine", "llama.cpp", "--weights",
                     "q4_k_m", "--gpu-layers", value)
    assert code == 2
    assert f"{value!r} is not a layer count. Did you mean {value.lower()!r}?" in err, err


def test_gpu_layers_all_in_lower_case_is_taken() -> None:
    assert _run("estimate", "--model", "llama-2-7b", "--task", "infer", "--engine", "llama.cpp", "--weights", "q4_k_m",
                "--gpu-layers", "all")[0] == 0


@pytest.mark.parametrize("value, shown", [("ALL", "'ALL'"), ("[ALL, 10]", "'ALL'"), ("Max", "'Max'")])
def test_gpu_layers_words_in_a_file_are_lower_case(tmp_path: Path, value: str, shown: str) -> None:
    wl = (f"  - {{name: w1, model: llama-2-7b, task: infer, engine: llama.cpp, weights: q4_k_m, "
          f"gpu_layers: {value}}}\n")
    code, err = _run("plan", _scenario(tmp_path, "gl.yaml", "gl", wl), "--out", str(tmp_path / "o"))
    assert code == 2
    assert f"gpu_layers: {shown} is not a value of gpu_layers. Did you mean {shown.lower()}?" in err, err
