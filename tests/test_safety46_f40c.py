"""f40c: two minors of hostile pass h39b about encodings.

4: a scenario, config.json or vms.csv saved as UTF-16 or UTF-32 (either byte order) without a byte order mark whose
text is mostly or all CJK was refused as "U+0000" or "byte 0x87": the detection wanted a tenth of the text ASCII.
It is now told by what each encoding makes certain (a strict decode of the whole file, no C0 control but tab and
line breaks), one function (planner.core.infile.unicode_form) for the three readers; bytes that are UTF-8 with no
NUL are always UTF-8.
13: noncharacters (U+FDD0-U+FDEF and U+xFFFE, U+xFFFF in all 17 planes) are treated alike wherever text goes into a
workbook, with one reason, and U+FFFE is named a noncharacter, not a control character.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.catalog.skypilot_csv import ImportProblem, read_rows
from planner.cli.main import main
from planner.core.infile import unicode_form

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
ENCODINGS = [("utf-16-le", "UTF-16LE", "UTF-16 (little-endian)"), ("utf-16-be", "UTF-16BE", "UTF-16 (big-endian)"),
             ("utf-32-le", "UTF-32LE", "UTF-32 (little-endian)"), ("utf-32-be", "UTF-32BE", "UTF-32 (big-endian)")]
CSV_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,AvailabilityZone,SpotPrice,GpuInfo,Arch\n"


def _scenario(kind: str) -> str:
    """The text of a scenario: the shipped one (ASCII), that one after a CJK comment block of 5 lines of 300 CJK
    characters (CJK-heavy: 1,500 of about 2,300 characters), or CJK comment lines alone (pure CJK, but '#', a
    space and line breaks)."""
    body = SCENARIO.read_text(encoding="utf-8")
    if kind == "ascii":
        return body
    block = "".join("# " + "模型训练计划漢字" * 37 + "不上\n" for _ in range(5))  # 不 U+4E0D, 上 U+4E0A: CR/LF bytes
    return block + body if kind == "cjk-heavy" else block


def _config(kind: str) -> str:
    """A config.json (one line, no line break, as json.dumps writes it): ASCII, CJK-heavy (2,400 CJK characters
    in a value), or pure CJK (a JSON string of CJK alone)."""
    if kind == "ascii":
        return '{"model_type": "llama", "hidden_size": 4096}'
    if kind == "cjk-heavy":
        return '{"model_type":"llama","_c":"' + "中文模型说明" * 400 + '","hidden_size":4096}'
    return '"' + "中文模型说明" * 400 + '"'


def _csv(kind: str) -> str:
    """A vms.csv: AWS's header and one g5.xlarge row, its Arch value ASCII, 6,000 CJK characters (CJK-heavy), or
    the header and row wholly CJK (pure CJK: commas and line breaks only besides)."""
    if kind == "pure-cjk":
        return ",".join(["中文"] * 11) + "\n" + ",".join(["模型" * 50] * 11) + "\n"
    arch = "x86_64" if kind == "ascii" else "中文" * 3000
    return CSV_HEADER + "g5.xlarge,A10G,1,4,16,1.006,us-east-1,us-east-1a,0.4,," + arch + "\n"


def _last_line(args: list[str]) -> str:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    return " ".join(r.output.split())


KINDS = ["ascii", "cjk-heavy", "pure-cjk"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("codec, iconv, name", ENCODINGS)
def test_a_scenario_in_utf16_or_utf32_without_a_bom_is_named(kind, codec, iconv, name, tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_bytes(_scenario(kind).encode(codec))  # the -le/-be codecs write no byte order mark
    out = _last_line(["plan", str(s), "--out", str(tmp_path / "o")])
    # named by its encoding and the iconv that converts it, never 'U+0000' or 'byte 0x..'
    assert f"is {name} text" in out and f"iconv -f {iconv} -t UTF-8" in out, out
    assert "U+0000" not in out and "byte 0x" not in out, out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("codec, iconv, name", ENCODINGS)
def test_a_config_json_in_utf16_or_utf32_without_a_bom_is_named(kind, codec, iconv, name, tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_bytes(_config(kind).encode(codec))
    out = _last_line(["estimate", "--model", str(tmp_path / "m"), "--task", "train", "--method", "qlora",
                      "--micro-batch", "1", "--seq-len", "512", "--gpu", "rtx-4090"])
    assert f"config.json: is {name} text" in out and f"iconv -f {iconv} -t UTF-8" in out, out
    assert "byte 0x" not in out, out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("codec, iconv, name", ENCODINGS)
def test_a_vms_csv_in_utf16_or_utf32_without_a_bom_is_named(kind, codec, iconv, name, tmp_path: Path) -> None:
    f = tmp_path / "vms.csv"
    f.write_bytes(_csv(kind).encode(codec))
    with pytest.raises(ImportProblem) as e:
        read_rows(f)
    said = f"{e.value} {e.value.hint}"
    assert f"not UTF-8: it is {name} text" in said and f"iconv -f {iconv} -t UTF-8" in said, said


@pytest.mark.parametrize("text", [_scenario(k) for k in KINDS] + [_config(k) for k in KINDS]
                         + [_csv(k) for k in KINDS])
def test_utf8_bytes_are_never_taken_for_utf16_or_utf32(text: str) -> None:
    # UTF-8 with no NUL is UTF-8, CJK included: told before any UTF-16 or UTF-32 reading is tried
    assert unicode_form(text.encode("utf-8")) is None


def test_a_cjk_scenario_in_utf8_is_planned(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_text(_scenario("cjk-heavy"), encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output  # read as UTF-8: the CJK comment block is a comment


def test_a_cjk_vms_csv_in_utf8_is_read(tmp_path: Path) -> None:
    f = tmp_path / "vms.csv"
    f.write_text(_csv("cjk-heavy"), encoding="utf-8")
    header, rows = read_rows(f)
    assert rows[0]["Arch"] == "中文" * 3000 and rows[0]["_line"] == "2"  # the row on line 2, read whole


def test_a_cjk_config_json_in_utf8_is_read(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(_config("cjk-heavy"), encoding="utf-8")
    r = CliRunner().invoke(main, ["estimate", "--model", str(tmp_path / "m"), "--task", "train", "--method",
                                  "qlora", "--micro-batch", "1", "--seq-len", "512", "--gpu", "rtx-4090"])
    assert "not UTF-8" not in r.output and "UTF-16" not in r.output, r.output  # whatever else it says of the model


def test_latin1_and_a_stray_nul_keep_their_own_refusals() -> None:
    body = SCENARIO.read_text(encoding="utf-8")
    # Latin-1 holds no NUL byte, which every UTF-16/32 text with an ASCII character or line break holds
    assert unicode_form(body.replace("description:", "description: café", 1).encode("latin-1")) is None
    # a UTF-8 file with one NUL: a UTF-16 reading of it has (almost) none of its line breaks
    stray = (body[:100] + "\0" + body[100:]).encode("utf-8")
    stray += b" " * (len(stray) % 4 and 4 - len(stray) % 4)  # a length UTF-16 and UTF-32 could both decode
    assert unicode_form(stray) is None


# -- 13. noncharacters: all 66 alike, one reason ---------------------------------------------------------------------

# The Unicode Standard 15.0, 23.7: U+FDD0-U+FDEF (32) and U+xFFFE, U+xFFFF in each of the 17 planes (34): 66
NONCHARACTERS = [chr(c) for c in range(0xFDD0, 0xFDF0)] + [chr(p * 0x10000 + low) for p in range(17)
                                                            for low in (0xFFFE, 0xFFFF)]
WHY = ("a Unicode noncharacter, which no text planner reads may hold: it is no character for text that is exchanged "
       "(The Unicode Standard, 23.7), and the workbook's XML forbids U+FFFE and U+FFFF and discourages the others "
       "(XML 1.0, 2.2)")


def test_there_are_66_noncharacters() -> None:
    assert len(set(NONCHARACTERS)) == 66  # 32 + 2 x 17


def test_every_noncharacter_in_a_yaml_comment_is_refused_with_one_reason() -> None:
    from planner.core.yamlio import parse_yaml
    from planner.core.yamlrules import YamlProblem

    said = {}
    for ch in NONCHARACTERS:
        try:
            parse_yaml(f"name: x\n# a comment {ch} =1+1\n")
        except YamlProblem as exc:
            said[ch] = (exc.problem, exc.line)
    assert sorted(said) == sorted(NONCHARACTERS)  # each refused, none copied into the Assumptions sheet
    for ch, (problem, line) in said.items():
        # line 2, column 13: '# a comment ' is 12 characters
        assert problem == f"holds U+{ord(ch):04X} at line 2 column 13, {WHY}" and line == 2, (problem, line)


def test_ufffe_is_named_a_noncharacter_not_a_control_character(tmp_path: Path) -> None:
    # h39b 13: PyYAML's reader refused it first, said as "the control character U+FFFE"
    s = tmp_path / "cm.yaml"
    s.write_text("# comment \ufffe\n" + SCENARIO.read_text(encoding="utf-8"), encoding="utf-8")
    out = _last_line(["plan", str(s), "--out", str(tmp_path / "o")])
    assert "holds U+FFFE at line 1 column 11, a Unicode noncharacter" in out and "control character" not in out, out
    assert not (tmp_path / "o").exists()


def test_the_h39b_repro_is_refused_not_copied_raw(tmp_path: Path) -> None:
    # h39b 13: U+FDD0 was escaped and U+1FFFE copied raw into the Assumptions sheet; both are refused now, the first
    # one found named (U+FDD0 at column 11: '# comment ' is 10 characters)
    s = tmp_path / "cm.yaml"
    s.write_text("# comment \ufdd0 \U0001fffe =1+1\n" + SCENARIO.read_text(encoding="utf-8"), encoding="utf-8")
    out = _last_line(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "xlsx"])
    assert f"holds U+FDD0 at line 1 column 11, {WHY}" in out, out
    assert not (tmp_path / "o").exists()


def test_every_noncharacter_in_a_name_or_text_gets_the_same_reason() -> None:
    from planner.core.names import unsafe_problem

    for ch in NONCHARACTERS:
        for newlines in (False, True):  # a name, a free text
            assert unsafe_problem(f"a{ch}b", newlines=newlines) == f"holds U+{ord(ch):04X}, {WHY}", ch


def test_every_noncharacter_reaching_a_workbook_is_escaped() -> None:
    from planner.core.escape import xml_text

    for ch in NONCHARACTERS:
        # written as the terminal shows it: \ufdd0 (4 hex digits) or \U0001fffe (8)
        shown = f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
        assert xml_text(f"a{ch}b") == f"a{shown}b", ch


@pytest.mark.parametrize("ch", ["\ufdd0", "\ufffe", "\U0001fffe", "\U0010ffff"])
def test_a_noncharacter_in_a_config_json_gets_the_same_reason(ch: str, tmp_path: Path) -> None:
    from planner.core.jsonio import load_json_mapping
    from planner.core.yamlrules import YamlProblem

    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama", "torch_dtype": "a' + ch + 'b"}', encoding="utf-8")
    said = None
    try:
        load_json_mapping(path)
    except YamlProblem as exc:
        said = exc.problem
    assert said == f"invalid text at key 'torch_dtype': it holds U+{ord(ch):04X}, {WHY}", said


@pytest.mark.parametrize("ch", ["\ufdd0", "\ufffe", "\U0001fffe"])
def test_a_noncharacter_in_a_vms_csv_gets_the_same_reason(ch: str, tmp_path: Path) -> None:
    (tmp_path / "aws").mkdir()
    (tmp_path / "aws" / "vms.csv").write_text(
        CSV_HEADER + f"g5.xlarge{ch},A10G,1,4,16,1.006,us-east-1,us-east-1a,0.4,,x86_64\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(tmp_path / "aws" / "vms.csv"),
                                  "--out", str(tmp_path / "o")])
    said = " ".join(r.output.split())
    assert f"the instance type holds U+{ord(ch):04X}, {WHY}" in said, said
    assert not (tmp_path / "o" / "cloud.yaml").exists()  # the only row left out: nothing written


@pytest.mark.parametrize("size", [0, 1])  # the file's length even or odd
def test_a_one_line_utf8_json_with_a_stray_nul_is_not_named_utf16(tmp_path: Path, size: int) -> None:
    # on the merged tree: '{"a": "x\0y"}' on one line (no line break to compare) was named UTF-16 big-endian, as
    # every pair of ASCII bytes decodes to a CJK-range character; such a reading holds at most one character of a
    # file's syntax (the one the NUL pairs with)
    from planner.core.infile import unicode_form

    data = b'{"model_type": "llama", "x": "a\x00b"' + b" " * size + b"}"
    assert unicode_form(data) is None
