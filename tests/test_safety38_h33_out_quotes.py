"""Issue 28, hostile pass 33: tester A's N3 and tester B's m1. An --out that begins or ends with any of Unicode's
quotation marks (the Quotation_Mark property: full-width, corner-bracket and single-angle ones too, not only ASCII
and curly quotes), or holds a folder inside the path wrapped in quotes or in bash's $'...' quoting, is refused
before any work; the hint takes the quotes away from every folder of the path."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.core.outpath import shell_leftover_problem


# every character with Unicode's Quotation_Mark property (PropList.txt, Unicode 15.1)
QUOTATION_MARKS = ("\"'\u00ab\u00bb\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2039\u203a\u2e42\u300c\u300d"
                   "\u300e\u300f\u301d\u301e\u301f\ufe41\ufe42\ufe43\ufe44\uff02\uff07\uff62\uff63")


@pytest.mark.parametrize("mark", list(QUOTATION_MARKS))
def test_every_quotation_mark_at_either_end_is_refused(mark: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for text in (mark + "out", "out" + mark):
        said = shell_leftover_problem(text)
        assert said is not None, text
        assert "quotation mark" in said[0] and said[1] == "out", said


@pytest.mark.parametrize("text, meant", [
    ("x/'a'/b", "x/a/b"), ("x/\u201ca\u201d/b", "x/a/b"), ("'rep'/x", "rep/x"), ("a/'b'", "a/b"),
    ("\u201arep\u2018", "rep"),  # German single quotes: both ends are quotation marks
])
def test_quotes_around_a_folder_inside_the_path_are_refused(text: str, meant: str, tmp_path: Path,
                                                            monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    said = shell_leftover_problem(text)
    assert said is not None and said[1] == meant, said


@pytest.mark.parametrize("text", ["$'a'/b", "$'x", "x/$'a'/b", "$\uff07a\uff07"])
def test_bash_quoting_anywhere_on_the_path_is_refused(text: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    said = shell_leftover_problem(text)
    assert said is not None and ("$'...'" in said[0] or "quotation mark" in said[0]), said


@pytest.mark.parametrize("text", ["it's", "x/it's/y", "rock'n'roll", "o'reilly/reports"])
def test_an_apostrophe_inside_a_name_is_no_quoting(text: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert shell_leftover_problem(text) is None


def test_a_quoted_folder_that_exists_is_the_users(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "\uff02out\uff02").mkdir()
    assert shell_leftover_problem("\uff02out\uff02") is None


def test_the_command_line_refuses_a_full_width_quoted_out_before_any_work(tmp_path: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", str(Path(__file__).parents[1] / "scenarios" / "qlora-7b-12gb.yaml"),
                                  "--out", "\uff02out\uff02", "--format", "json"])
    assert r.exit_code == 2
    assert r.output == ("Error: --out: '\uff02out\uff02' begins with a quotation mark, which a config file, a word "
                        "processor or an unclosed quoting left in, so it would be part of the folder's name. Write "
                        "--out 'out'.\n")
    assert list(tmp_path.iterdir()) == []
