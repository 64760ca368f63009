"""Issue 28, hostile pass 22: findings of report h22b fixed on branch f23b.

- M4: ``plan(format=...)`` errors name the keyword (``format:``, ``format='md,csv'``), not the command's
  ``--format``; an item that is not a text is said to be one (``format[1]: is 3 (int), not a text``), not quoted
  as the text ``'3'``; the close match is a sentence of its own ("Did you mean 'md'?", not "?."). The command
  line keeps ``--format``. ``estimate(calibration=...)`` naming no file says ``leave calibration out``, the
  command ``leave --calibration out``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "serve-7b-2k-1user.yaml"


def _plan_error(tmp_path: Path, fmt: object) -> str:
    """The message plan(format=fmt) raises (an InputError), before any work."""
    from planner import plan

    with pytest.raises(InputError) as caught:
        plan(str(SCENARIO), out=str(tmp_path / "o"), format=fmt)
    return str(caught.value)


# -- M4: format= in the API's words -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt, want", [
    ("mdd", "format: 'mdd' is not a report format; give a comma-separated list of xlsx, csv, json, md. "
            "Did you mean 'md'?"),
    (["md", "md"], "format: lists 'md' twice; give each format once: format='md'."),
    ("md;csv", "format: 'md;csv' is not a report format: formats are separated by commas. Write format='md,csv'."),
    ("", "format: the list of report formats is empty; give a comma-separated list of xlsx, csv, json, md, e.g. "
         "format='xlsx,csv'."),
    ("MD", "format: 'MD' is not written in lower case; format names are written as listed (xlsx, csv, json, md). "
           "Write format='md'."),
    (",md", "format: has an empty item (a comma with no format name on one side); format names are separated by "
            "single commas. Write format='md'."),
    # item 1 of ['md', 3] is the int 3: said so, not quoted as the text '3'; the hint keeps the texts given
    (["md", 3], "format[1]: is 3 (int), not a text; format names are texts (xlsx, csv, json, md). Write format='md'."),
    # b'md' is bytes: the hint offers the name it holds, as a text
    ((b"md",), "format[0]: is b'md' (bytes), not a text; format names are texts (xlsx, csv, json, md). "
               "Write format='md'."),
])
def test_m4_plan_format_errors_name_the_keyword(tmp_path: Path, fmt: object, want: str) -> None:
    msg = _plan_error(tmp_path, fmt)
    assert msg == want, msg
    assert "--format" not in msg and "?." not in msg
    assert not (tmp_path / "o").exists()


def test_m4_an_odd_item_is_not_shown_through_its_own_repr(tmp_path: Path) -> None:
    class Loud:
        def __repr__(self) -> str:  # an object's own text: never shown
            return "\x1b]0;owned\x07"

    msg = _plan_error(tmp_path, ["md", Loud()])
    assert msg == "format[1]: is of type Loud, not a text; format names are texts (xlsx, csv, json, md). " \
                  "Write format='md'.", msg
    # a whole number past the 4,300-digit text limit is named by its type, not written out (no ValueError)
    msg = _plan_error(tmp_path, ["md", 10 ** 5000])
    assert msg.startswith("format[1]: is of type int, not a text;"), msg


def test_m4_the_hints_followed_are_taken(tmp_path: Path) -> None:
    from planner import plan

    r = plan(str(SCENARIO), out=str(tmp_path / "o"), format="md,csv")  # the hint of 'md;csv'
    assert sorted(r.outputs) == ["csv", "md"]


@pytest.mark.parametrize("given, line", [
    ("mdd", "Error: --format: 'mdd' is not a report format; give a comma-separated list of xlsx, csv, json, md. "
            "Did you mean 'md'?"),
    ("md;csv", "Error: --format: 'md;csv' is not a report format: formats are separated by commas. "
               "Write --format md,csv."),
    ("md,md", "Error: --format: lists 'md' twice; give each format once: --format md."),
])
def test_m4_the_command_line_still_names_the_option(tmp_path: Path, given: str, line: str) -> None:
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(tmp_path / "o"), "--format", given])
    assert r.exit_code == 2
    assert r.stderr == line + "\n", r.stderr


def test_m4_a_calibration_file_named_but_absent_names_the_keyword(tmp_path: Path) -> None:
    from planner import estimate

    missing = tmp_path / "none.yaml"
    with pytest.raises(InputError) as caught:
        estimate(model="llama-2-7b", task="infer", gpu="rtx-4090", calibration=missing)
    msg = str(caught.value)
    assert msg == (f"{missing}: no such file. Give the file 'planner calibrate' wrote, or leave calibration out (the "
                   "default file is used when it exists)."), msg
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "rtx-4090",
                                  "--calibration", str(missing)])
    assert r.exit_code == 2
    assert r.stderr == (f"Error: {missing}: no such file. Give the file 'planner calibrate' wrote, or leave "
                        "--calibration out (the default file is used when it exists).\n"), r.stderr
