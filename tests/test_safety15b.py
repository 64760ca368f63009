"""Issue 28, hostile pass 11B (reports/h11b.md): options, names, numbers and API arguments.

2. An option of one value given twice ('--model a --model b') is refused in one line, as --catalog is
   (planner.cli.common.SingleValueCommand); so is --tokens-per-month given twice without a workload name.
15. Two workload names that differ only by a dash lookalike (U+2010 ... U+FF0D) clash (planner.core.names.clash_key).
16. The long-name clash refusal counts "differ at character N" in the scenario's name, not in 'plan <name>'.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
COMPARE = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"


def _run(args: list[str]):
    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("args, expected", [
    (["estimate", "--model", "llama-2-7b", "--model", "llama-2-13b", "--task", "infer"],
     "Error: --model: given 2 times (--model llama-2-7b --model llama-2-13b); a run takes one. Give --model once."),
    (["estimate", "--model", "llama-2-7b", "--task", "train", "--task=infer"],
     "Error: --task: given 2 times (--task train --task infer); a run takes one. Give --task once."),
    (["fit", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4", "--gpu", "h100-sxm"],
     "Error: --gpu: given 2 times (--gpu l4 --gpu h100-sxm); a run takes one. Give --gpu once."),
    (["estimate", "--model", "llama-2-7b", "--task", "infer", "--context", "4096", "--context", "2048", "--context", "1"],
     "Error: --context: given 3 times (--context 4096 --context 2048 --context 1); a run takes one. Give --context "
     "once."),
    (["plan", str(SCENARIO), "--out", "oa", "--out", "ob"],
     "Error: --out: given 2 times (--out oa --out ob); a run takes one. Give --out once."),
    (["plan", str(SCENARIO), "--format", "md", "--format", "csv"],
     "Error: --format: given 2 times (--format md --format csv); a run takes one. Give the formats as one "
     "comma-separated list: --format md,csv."),
    (["compare", str(COMPARE), "--top", "3", "--top", "4"],
     "Error: --top: given 2 times (--top 3 --top 4); a run takes one. Give --top once."),
    (["estimate", "--workload", "a.yaml", "--workload", "b.yaml"],
     "Error: --workload: given 2 times (--workload a.yaml --workload b.yaml); a run takes one. Give --workload once."),
    (["compare", str(COMPARE), "--tokens-per-month", "1M", "--tokens-per-month", "2M"],
     "Error: --tokens-per-month: given 2 times without a workload name (--tokens-per-month 1M --tokens-per-month 2M); "
     "a count without a name is for every workload, so give it once, or once per workload as NAME=COUNT."),
    (["catalog", "check", "--today", "2026-01-01", "--today", "2026-01-02"],
     "Error: --today: given 2 times (--today 2026-01-01 --today 2026-01-02); a run takes one. Give --today once."),
])
def test_an_option_of_one_value_given_twice_is_refused(args: list[str], expected: str) -> None:
    r = _run(args)
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == expected


def test_an_option_value_that_looks_like_the_option_is_not_a_repeat() -> None:
    # '--model' after '--' is an argument, and a value that equals an option's name is the option's value
    from planner.cli.common import repeated_option
    from planner.cli.estimate import estimate

    assert repeated_option(estimate, ["--model", "a", "--", "--model", "b"]) is None
    assert repeated_option(estimate, ["--model", "a", "--task", "infer"]) is None


def _named(tmp_path: Path, name: str, stem: str) -> Path:
    text = SCENARIO.read_text()
    assert "name: qlora-7b-12gb" in text
    p = tmp_path / f"{stem}.yaml"
    p.write_text(text.replace("name: qlora-7b-12gb", f"name: {name}", 1), encoding="utf-8")
    return p


@pytest.mark.parametrize("dash", ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212", "\ufe58", "\ufe63",
                                  "\uff0d", "\u02d7", "\u2043", "\u058a", "\u1806"])
def test_two_workload_names_differing_only_by_a_dash_lookalike_clash(tmp_path: Path, dash: str) -> None:
    s = tmp_path / "s.yaml"
    s.write_text('name: d\nworkloads:\n  - {name: "chat-7b", model: llama-2-7b, task: infer}\n'
                 f'  - {{name: "chat{dash}7b", model: llama-2-13b, task: infer}}\n', encoding="utf-8")
    r = _run(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    from planner.core.names import char_name

    told = (f"differ only in a dash ({char_name(dash)}), which looks like '-'; write '-' in both)"
            if dash not in "\uff0d\ufe63" else "are two Unicode spellings of it")  # NFKC: already "-"
    assert r.stderr.startswith(f"Error: {s}:4: workloads[1].name: duplicate workload name 'chat{dash}7b' (also "
                               f"workloads[0], the same name: 'chat{dash}7b' and 'chat-7b' "), r.stderr
    assert told in r.stderr and r.stderr.rstrip().endswith("Give each workload its own name."), r.stderr


def test_the_long_name_clash_counts_the_position_in_the_name(tmp_path: Path) -> None:
    # h11b #16: 125 'y' then 'a' or 'b' (126 characters each), cut to one 120-byte file name: they differ at 126
    out = tmp_path / "o"
    r = _run(["plan", str(_named(tmp_path, "y" * 125 + "a", "s1")), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    r = _run(["plan", str(_named(tmp_path, "y" * 125 + "b", "s2")), "--out", str(out), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert "(the names differ only at character 126: U+0061 (LATIN SMALL LETTER A) and U+0062 (LATIN SMALL LETTER B))" \
        in r.stderr, r.stderr


# 14. --out and out= refuse what names refuse: a Braille blank at a folder name's end, a character with no glyph
@pytest.mark.parametrize("out, expected", [
    ("o\u2800", "Error: --out: 'o\u2800' has the folder name 'o\u2800', which ends with U+2800 (BRAILLE PATTERN BLANK), "
                "drawn as blank space, that no listing shows. Write --out 'o'."),
    ("\u2800a/b", "Error: --out: '\u2800a/b' has the folder name '\u2800a', which begins with U+2800 (BRAILLE PATTERN "
                  "BLANK), drawn as blank space, that no listing shows. Write --out 'a/b'."),
    ("o\U0001d159", "Error: --out: 'o\U0001d159' holds U+1D159 (MUSICAL SYMBOL NULL NOTEHEAD), a character with no glyph "
                    "of its own, so the folder's name would look like another. Write --out 'o'."),
])
def test_out_refuses_what_names_refuse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str, expected: str) -> None:
    monkeypatch.chdir(tmp_path)
    r = _run(["plan", str(SCENARIO), "--out", out, "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == expected
    assert list(tmp_path.iterdir()) == []


def test_api_out_refuses_a_braille_blank_and_quotes_a_pathlike_path(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import planner
    from planner.core.errors import InputError

    monkeypatch.chdir(tmp_path)

    class P:
        def __fspath__(self) -> str:
            return "~/r"

    said = []
    for out in ("o\u2800", P()):
        with pytest.raises(InputError) as info:
            planner.plan(str(SCENARIO), out=out, format="json")
        said.append(str(info.value))
    assert said == [
        "out: out='o\u2800' has the folder name 'o\u2800', which ends with U+2800 (BRAILLE PATTERN BLANK), drawn as "
        "blank space, that no listing shows. Give out='o'.",
        "out: out='~/r' begins with '~', which Python does not expand, so it would name a folder '~' in the current "
        "directory. Expand it first: out=os.path.expanduser('~/r').",
    ]
    assert list(tmp_path.iterdir()) == []


# 5. names, ids and extras texts are at most 200 characters (planner.core.names.MAX_NAME_CHARS)
def _scenario(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("text, expected", [
    ("name: big\nworkloads:\n  - name: " + "w" * 1_000_000 + "\n    model: llama-2-7b\n    task: infer\n",
     "s.yaml:3: workloads[0].name: '" + "w" * 40 + "...' is 1,000,000 characters long (counted composed, Unicode NFC); a name is at most 200 "
     "characters, since every report line that names it repeats it. Give a shorter one (at most 200 characters)."),
    ("name: " + "s" * 201 + "\nworkloads:\n  - {name: w, model: llama-2-7b, task: infer}\n",
     "s.yaml:1: name: '" + "s" * 40 + "...' is 201 characters long (counted composed, Unicode NFC); a name is at most 200 characters, since every "
     "report line that names it repeats it. Give a shorter one (at most 200 characters)."),
    ("name: x\nextras:\n  - description: " + "d" * 201 + "\n    unit_price_usd: 100\n    source: q\n    as_of: "
     "2026-01-15\nworkloads:\n  - {name: w, model: llama-2-7b, task: infer}\n",
     "s.yaml:3: extras[0].description: '" + "d" * 40 + "...' is 201 characters long (counted composed, Unicode NFC); an extras description is at "
     "most 200 characters, since every report line that names it repeats it. Give a shorter one (at most 200 "
     "characters)."),
])
def test_a_name_of_more_than_200_characters_is_refused(tmp_path: Path, text: str, expected: str) -> None:
    r = _run(["plan", str(_scenario(tmp_path, text)), "--out", str(tmp_path / "o"), "--format", "csv"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == f"Error: {tmp_path}/{expected}"
    assert not (tmp_path / "o").exists()


def test_a_name_of_200_characters_is_taken(tmp_path: Path) -> None:
    text = "name: " + "s" * 200 + "\nworkloads:\n  - {name: " + "w" * 200 + ", model: llama-2-7b, task: infer}\n"
    r = _run(["plan", str(_scenario(tmp_path, text)), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output


def test_a_catalog_id_of_more_than_200_characters_is_refused(tmp_path: Path) -> None:
    from planner.catalog.schema import read_id
    from planner.core.errors import InputError
    from planner.core.fields import Entry

    said = None
    try:
        read_id(Entry({"id": "a" * 201}, file="gpus.yaml", path="gpus[0]"), "id")
    except InputError as exc:
        said = str(exc)
    assert said is not None and ("'" + "a" * 40 + "...' is 201 characters long (counted composed, Unicode NFC); an id is at most 200 characters"
                                 in said), said


# 11. extras category: compared in NFKC, trimmed and case folded; plurals of planner's own are refused too
@pytest.mark.parametrize("category, expected", [
    ("'\uff47\uff50\uff55'", "category '\uff47\uff50\uff55' is one of planner's own quote lines ('gpu'; they are gpu, "
                             "platform, memory, network), each priced from the catalog"),
    ("gpus", "category 'gpus' is one of planner's own quote lines ('gpu'; they are gpu, platform, memory, network), "
             "each priced from the catalog"),
    ("'\uff4d\uff45\uff4d\uff4f\uff52\uff59'", "category '\uff4d\uff45\uff4d\uff4f\uff52\uff59' is one of planner's own "
                                               "quote lines ('memory'; they are gpu, platform, memory, network), each "
                                               "priced from the catalog"),
    ("gpu", "category 'gpu' is one of planner's own quote lines (gpu, platform, memory, network), each priced from "
            "the catalog"),
])
def test_an_extras_category_of_planners_own_in_any_spelling_is_refused(tmp_path: Path, category: str,
                                                                        expected: str) -> None:
    text = (f"name: x\nextras:\n  - description: support\n    unit_price_usd: 100\n    source: q\n    as_of: 2026-01-15\n"
            f"    category: {category}\nworkloads:\n  - {{name: w, model: llama-2-7b, task: infer}}\n")
    r = _run(["plan", str(_scenario(tmp_path, text)), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (f"Error: {tmp_path}/s.yaml:7: extras[0].category: {expected}. Use another word for what "
                                "this line buys, e.g. category: storage; a GPU, platform, memory or NIC to plan with "
                                "belongs in a catalog overlay.")


@pytest.mark.parametrize("category, expected", [
    ("'Storage '", "category 'Storage ' begins or ends with a blank, which the reports would keep. Write category: "
                   "'Storage'."),
    ("'\uff53\uff54\uff4f\uff52\uff41\uff47\uff45'", "category '\uff53\uff54\uff4f\uff52\uff41\uff47\uff45' is written "
                                                     "in full-width or other compatibility letters, which the reports "
                                                     "would keep as written. Write category: 'storage'."),
])
def test_an_extras_category_with_blank_ends_or_full_width_letters_is_refused(tmp_path: Path, category: str,
                                                                             expected: str) -> None:
    text = (f"name: x\nextras:\n  - description: support\n    unit_price_usd: 100\n    source: q\n    as_of: 2026-01-15\n"
            f"    category: {category}\nworkloads:\n  - {{name: w, model: llama-2-7b, task: infer}}\n")
    r = _run(["plan", str(_scenario(tmp_path, text)), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == f"Error: {tmp_path}/s.yaml:7: extras[0].category: {expected}"


# 3. a cloud overlay's gpu_memory_usable above its GPU's memory (gpus.yaml) is refused
def _cloud_overlay(tmp_path: Path, extra: str) -> Path:
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "cloud.yaml").write_text(
        "schema_version: 1\ninstances:\n  - id: my-l4\n    provider: aws\n    instance: g6.xlarge\n    gpu: l4\n"
        "    gpu_count: 1\n    vcpus: 4\n    memory: 64 GiB\n    region: us-east-1\n    source: x\n"
        f"    as_of: 2026-11-01\n    usd_per_hour: 0.8\n{extra}", encoding="utf-8")
    return ov


def test_a_cloud_gpu_memory_usable_above_the_cards_memory_is_refused(tmp_path: Path) -> None:
    from planner.catalog.loader import load_catalog

    # the shipped l4's memory: 24 GiB = 24,576 MiB (catalog/gpus.yaml)
    assert load_catalog().gpu("l4").memory_bytes == 24 * 2**30
    ov = _cloud_overlay(tmp_path, "    gpu_memory_usable: 80 GiB\n")
    r = _run(["catalog", "cloud", "--catalog", str(ov)])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (
        f"Error: {ov}/cloud.yaml:14: instances[0] (my-l4).gpu_memory_usable: gpu_memory_usable 80.00 GiB is more than "
        "GPU 'l4' holds: its memory is 24.00 GiB (24,576 MiB, gpus.yaml). Give the figure the provider reports per GPU "
        "(at most 24,576 MiB for 'l4'), or check the instance's gpu.")


def test_a_cloud_gpu_memory_usable_at_the_cards_memory_loads(tmp_path: Path) -> None:
    r = _run(["catalog", "cloud", "--catalog", str(_cloud_overlay(tmp_path, "    gpu_memory_usable: 24576 MiB\n"))])
    assert r.exit_code == 0, r.output


# 4. a GPU overlay's architecture: a known name written another way is refused; an unknown one is said in estimate
def _arch_overlay(tmp_path: Path, arch: str) -> Path:
    ov = tmp_path / "ov"
    ov.mkdir(exist_ok=True)
    (ov / "gpus.yaml").write_text(f"schema_version: 1\ngpus:\n  - id: mi300x\n    architecture: {arch}\n"
                                  "    mfu_scale: 0.5\n    source: x\n    as_of: 2026-01-01\n", encoding="utf-8")
    return ov


@pytest.mark.parametrize("arch, shown", [("'cdna3 '", "'cdna3 '"), ("'CDNA 3'", "'CDNA 3'"), ("cdna-3", "'cdna-3'"),
                                         ("cdna_3", "'cdna_3'"), ("'\uff43\uff44\uff4e\uff41\uff13'",
                                                                  "'\uff43\uff44\uff4e\uff41\uff13'")])
def test_a_near_miss_architecture_is_refused_with_the_name_meant(tmp_path: Path, arch: str, shown: str) -> None:
    ov = _arch_overlay(tmp_path, arch)
    r = _run(["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "mi300x", "--catalog", str(ov)])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (
        f"Error: {ov}/gpus.yaml:4: gpus[0] (mi300x).architecture: architecture {shown} is 'cdna3' written another "
        "way, which the speed model would not recognise: it would time the GPU with the figures for an unknown "
        "architecture. Did you mean 'cdna3'? Write architecture: cdna3.")


def test_an_unknown_architecture_is_said_in_the_estimate(tmp_path: Path) -> None:
    r = _run(["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "mi300x", "--catalog",
              str(_arch_overlay(tmp_path, "xyz"))])
    assert r.exit_code == 0, r.output
    assert ("Note: GPU 'mi300x' has the architecture 'xyz', none the speed model has figures for (turing, ampere, ada, "
            "hopper, blackwell, cdna3, cdna4, gaudi2, gaudi3): its GEMM and attention efficiencies are the assumed ones "
            "for an unknown architecture, and no per-architecture rule applies.") in " ".join(r.stdout.split())
    r = _run(["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "mi300x", "--catalog",
              str(_arch_overlay(tmp_path, "CDNA3"))])
    assert r.exit_code == 0, r.output
    assert "none the speed model has figures for" not in r.stdout


# 9. a number written with more digits than a float holds, whose float is whole, is no whole number
@pytest.mark.parametrize("text, whole", [("2.9999999999999999", 3), ("9.999999999999999999", 10)])
def test_a_file_number_that_only_its_float_makes_whole_is_refused(tmp_path: Path, text: str, whole: int) -> None:
    assert float(text) == whole  # the float rounds it (IEEE 754 binary64 holds 15 to 17 significant digits)
    w = tmp_path / "w.yaml"
    w.write_text(f"model: llama-2-7b\ntask: train\nseq_len: 512\nmicro_batch: {text}\n", encoding="utf-8")
    r = _run(["estimate", "--workload", str(w)])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (f"Error: {w}:4: micro_batch: must be a whole number, not {text}, which has more digits "
                                f"than a float holds (it would read as {whole}). Write the whole number meant, without "
                                "decimals.")


def test_a_whole_decimal_is_still_taken(tmp_path: Path) -> None:
    w = tmp_path / "w.yaml"
    w.write_text("model: llama-2-7b\ntask: train\nseq_len: 512\nmicro_batch: 4.0\n", encoding="utf-8")
    assert _run(["estimate", "--workload", str(w)]).exit_code == 0
    r = _run(["estimate", "--model", "llama-2-7b", "--task", "train", "--seq-len", "512", "--micro-batch",
              "4.000000000000000000"])
    assert r.exit_code == 0, r.output


def test_the_command_line_refuses_a_number_only_its_float_makes_whole() -> None:
    r = _run(["estimate", "--model", "llama-2-7b", "--task", "train", "--seq-len", "512", "--micro-batch",
              "2.9999999999999999"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == ("Error: --micro-batch: '2.9999999999999999' is not a whole number; it has more digits "
                                "than a float holds, which would read it as 3. Write the whole number meant, without "
                                "decimals.")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_api_refuses_a_decimal_or_fraction_that_is_not_whole() -> None:
    from decimal import Decimal
    from fractions import Fraction

    import planner
    from planner.core.errors import InputError

    said = []
    for value in (Decimal("4096.0000000000000000001"), Fraction(8192 * 10**20 + 1, 2 * 10**20)):
        assert float(value) == 4096.0
        with pytest.raises(InputError) as info:
            planner.estimate(model="llama-2-7b", task="infer", context=value)
        said.append(str(info.value))
    assert said == [
        "context: must be a whole number, not 4096.0000000000000000001, which has more digits than a float holds "
        "(it would read as 4096). Write the whole number meant, without decimals.",
        "context: must be a whole number, not 819200000000000000000001/200000000000000000000, which has more digits "
        "than a float holds (it would read as 4096). Write the whole number meant, without decimals.",
    ]
    assert planner.estimate(model="llama-2-7b", task="infer", context=Decimal("4096.000")).workload is not None


# 10. API: a mapping holding itself, a PathLike of bytes and estimate(out=) are InputErrors that say so
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_api_arguments_are_refused_as_input_errors() -> None:
    import planner
    from planner.core.errors import InputError

    loop: list = [dict(name="w", model="llama-2-7b", task="infer")]
    loop.append(loop)

    class P:
        def __fspath__(self) -> bytes:
            return str(SCENARIO).encode()

    said = []
    for call in (lambda: planner.plan({"name": "r", "workloads": loop}), lambda: planner.plan(P()),
                 lambda: planner.compare(P()), lambda: planner.estimate(model="llama-2-7b", task="infer", out="x")):
        with pytest.raises(InputError) as info:
            call()
        said.append(str(info.value))
    assert said == [
        "scenario.workloads[1]: holds itself (a list inside itself), so it never ends. Pass a mapping or list that "
        "does not contain itself (copy.deepcopy keeps the loop).",
        "scenario: must be a file path (a str or pathlib.Path), not a P whose __fspath__ gives bytes: planner takes "
        "paths as text. Pass the path as a str or pathlib.Path.",
        "scenario: must be a file path (a str or pathlib.Path), not a P whose __fspath__ gives bytes: planner takes "
        "paths as text. Pass the path as a str or pathlib.Path.",
        "estimate() got an unexpected keyword argument 'out': estimate() writes no files, it returns its result. Save "
        "the result yourself (json.dump(result.to_dict(), f)); planner.plan() and planner.compare() take out= for "
        "report files.",
    ]


def test_api_refuses_a_mapping_nested_past_the_depth_limit() -> None:
    import planner
    from planner.core.errors import InputError

    deep: dict = {}
    inner = deep
    for _ in range(2000):  # past Python's recursion limit (1,000)
        inner["x"] = {}
        inner = inner["x"]
    with pytest.raises(InputError) as info:
        planner.plan({"name": "r", "workloads": [{"name": "w", "model": "llama-2-7b", "task": "infer", "n": deep}]})
    said = str(info.value)
    assert said.endswith(": is nested more than 100 levels deep; a scenario is four. Pass the scenario's mapping "
                         "itself."), said


def test_a_plan_on_a_gpu_of_an_unknown_architecture_warns(tmp_path: Path) -> None:
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    architecture: xyz\n"
                                  "    source: x\n    as_of: 2026-01-01\n", encoding="utf-8")
    r = _run(["plan", str(SCENARIO), "--catalog", str(ov), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert r.stdout.count("Recommendation: 1 x rtx-3060-12gb") == 1, r.stdout
    assert ("GPU of an architecture the speed model has no figures for (it has turing, ampere, ada, hopper, blackwell, "
            "cdna3, cdna4, gaudi2, gaudi3): rtx-3060-12gb ('xyz'); its speed uses the assumed figures for an unknown "
            "architecture, and no per-architecture rule applies") in " ".join(r.stdout.split())
