"""Issue 28, hostile pass 29, minor m3: output paths a shell would have turned into another path had they been
written where the user thought: a cmd.exe variable, a Windows drive-relative path ('D:', 'C:reports'), a folder
named '~' after the first, a pattern that matched nothing ('*', '?', '['), a first name beginning with '-'. Each
is refused before anything is made (a path that already exists is the user's own and is taken); the API's out=
refuses them alike."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.core.outpath import shell_leftover_problem

_SCENARIO = str(Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml")
_LOCAL = "Give --out a local folder's path, e.g. --out reports."


@pytest.mark.parametrize("out, said, hint", [
    ("D:", "looks like a Windows drive-relative path, but planner takes a POSIX path here (under WSL, drive D: is "
           "/mnt/d): it would make a folder 'D:' in the current folder", _LOCAL),
    ("C:reports", "looks like a Windows drive-relative path, but planner takes a POSIX path here (under WSL, drive C: "
                  "is /mnt/c): it would make a folder 'C:reports' in the current folder", _LOCAL),
    ("%USERPROFILE%\\r", "holds '%USERPROFILE%', a cmd.exe variable that nothing here expands, so it would be part "
                         "of a folder's name", _LOCAL),
    ("reports/~", "has a folder named '~' after the first (a shell expands '~' only at the start of a word), a folder "
                  "that a later 'rm -r ~' would take for the home folder", _LOCAL),
    ("*", "holds '*', a shell pattern that matched no file and was left as written, so it would be part of a "
          "folder's name", _LOCAL),
    ("r/a?b", "holds '?', a shell pattern that matched no file and was left as written, so it would be part of a "
              "folder's name", _LOCAL),
    ("-rf", "begins with '-', so every command given the folder later would read its name as options",
     "Write --out './-rf'."),
    # h31a m1: a quoted brace expansion, and quotes a config file left in
    ("{a,b}", "holds '{a,b}', a brace expansion the shell left as written (it was quoted), so it would be part of "
              "a folder's name", _LOCAL),
    ("x{1..3}", "holds '{1..3}', a brace expansion the shell left as written (it was quoted), so it would be part "
                "of a folder's name", _LOCAL),
    ('"r"', "is wrapped in double quotes, which a config file or a second quoting left in, so they would be part "
            "of the folder's name", "Write --out 'r'."),
    ("'r'", "is wrapped in single quotes, which a config file or a second quoting left in, so they would be part "
            "of the folder's name", "Write --out 'r'."),
    # h32a m3: curly quotes, a lone quote, bash's $'...'
    ("\u201cr\u201d", "begins with a quotation mark, which a config file, a word processor or an unclosed quoting "
                      "left in, so it would be part of the folder's name", "Write --out 'r'."),
    ('r"', "ends with a quotation mark, which a config file, a word processor or an unclosed quoting left in, so it "
           "would be part of the folder's name", "Write --out 'r'."),
    ("$'x'", "is written in bash's $'...' quoting, which was left as written, so the '$' and the quotes would be "
             "part of the folder's name", "Write --out 'x'."),  # the quoting taken off (h34a m2)
])
def test_a_shell_leftover_as_out_is_refused_before_anything_is_made(tmp_path, monkeypatch, out, said, hint):
    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", _SCENARIO, "--out", out, "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.output == f"Error: --out: {out!r} {said}. {hint}\n"
    assert os.listdir(tmp_path) == []


def test_the_api_refuses_them_alike(tmp_path, monkeypatch):
    from planner import plan
    from planner.core.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as info:
        plan(_SCENARIO, out="C:reports", format="md")
    assert "out='C:reports' looks like a Windows drive-relative path" in str(info.value)
    assert info.value.hint == "Give out= a local folder's path, e.g. out='reports'."
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("out", ["D:", "reports/~", "*", "-rf", "%X%"])
def test_a_path_that_exists_is_the_users_own(tmp_path, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    Path(out).mkdir(parents=True)
    assert shell_leftover_problem(out) is None


@pytest.mark.parametrize("out", ["reports", "./-rf", "./~", "~/reports", "a~b/c", "r/100%", "run:2/z", "/tmp/o",
                                 "a{b}", "r{1}", "it's", "O'Brien/x"])
def test_ordinary_paths_pass(out):
    # './-rf' is how a folder named '-rf' is written on purpose; a leading '~' is the caller's to say; 'run:2' has
    # more than one letter before the colon, so no drive
    assert shell_leftover_problem(out) is None


@pytest.mark.parametrize("out, said, folder, unquoted", [
    ("~+", "~+", "~+", "~+"), ("~root/x", "~root", "~root", "~root/x"), ("~/r", "~", "~", "~/r"),
    ("$env:TEMP\\r", "$env:TEMP", "$env:TEMP\\r", "$env:TEMP\\r"),
    # the variable in double quotes, so that the hint pastes as meant ('${HOME}x' is HOME's value then 'x', h35a)
    ("${HOME}x/r", "${HOME}", "${HOME}x", '"${HOME}"x/r')])
def test_an_unexpanded_start_names_the_word_and_the_folder_it_would_make(tmp_path, monkeypatch, out, said, folder,
                                                                         unquoted):
    # h31a m1: '~+' would make a folder '~+', not '~'; PowerShell's '$env:TEMP' is the variable, not the whole value
    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", _SCENARIO, "--out", out, "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.output == (f"Error: --out: {out!r} begins with {said!r}, which the shell did not expand (it was quoted), "
                        f"so it would name a folder {folder!r} in the current directory. Write it unquoted (--out "
                        f"{unquoted}), or give the path itself.\n")
    assert os.listdir(tmp_path) == []


def test_the_api_names_the_folder_a_tilde_word_would_make(tmp_path, monkeypatch):
    from planner import plan
    from planner.core.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as info:
        plan(_SCENARIO, out="~+/r", format="md")
    assert "out='~+/r' begins with '~', which Python does not expand, so it would name a folder '~+' in the " \
           "current directory" in str(info.value)


def test_a_tilde_word_of_no_user_is_said_so(tmp_path, monkeypatch):
    # h31b M3: a shell leaves '~nosuchuser/x' as written, quoted or not: "write it unquoted" would not help
    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", _SCENARIO, "--out", "~nosuchuser9x/x", "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.output == ("Error: --out: '~nosuchuser9x/x' begins with '~nosuchuser9x', but no user 'nosuchuser9x' is "
                        "known here, so it would name a folder '~nosuchuser9x' in the current directory. Give the "
                        "path itself.\n")
    assert os.listdir(tmp_path) == []
