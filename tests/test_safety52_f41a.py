"""Minor findings of hostile pass 41A fixed on branch f41a (reports/h41a.md): N2, N18, N19, N11."""
from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
QLORA = str(ROOT / "scenarios" / "qlora-7b-12gb.yaml")


def _err(*args: str) -> str:
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 2, (r.exit_code, r.output)
    return r.stderr


# -- N2: the libpython mapped into the process counts as the interpreter's shared library ------------------

def test_mapped_libpython_is_read_from_the_maps_file(tmp_path: Path) -> None:
    from planner.core.importpath import mapped_libpython

    maps = tmp_path / "maps"
    # proc(5) layout: address perms offset dev inode path; a removed file ends in ' (deleted)' and is left out
    maps.write_text(
        "7f00-7f10 r--p 00000000 08:01 42 /opt/py copy/lib/libpython3.11.so.1.0\n"
        "7f10-7f20 r-xp 00010000 08:01 42 /opt/py copy/lib/libpython3.11.so.1.0\n"
        "7f20-7f30 r--p 00000000 08:01 43 /usr/lib/libc.so.6\n"
        "7f30-7f40 r--p 00000000 08:01 44 /old/libpython3.10.so.1.0 (deleted)\n"
        "7f40-7f50 rw-p 00000000 00:00 0 \n"
        "7f50-7f60 r--p 00000000 08:01 45 /x/libpython3.13t.so\n")
    # the copy once (two mappings of one file), the free-threaded 3.13t build; not libc, not the deleted one
    assert mapped_libpython(str(maps)) == ["/opt/py copy/lib/libpython3.11.so.1.0", "/x/libpython3.13t.so"]
    assert mapped_libpython(str(tmp_path / "none")) == []


@pytest.mark.skipif(not Path("/proc/self/maps").is_file(), reason="needs Linux's /proc")
def test_a_mapped_libpython_outside_libdir_is_an_interpreter_file(tmp_path: Path, monkeypatch) -> None:
    import planner.core.importpath as ip

    lib = tmp_path / "lib" / "libpython3.11.so.1.0"
    lib.parent.mkdir()
    lib.write_bytes(b"\x7fELF")
    maps = tmp_path / "maps"
    maps.write_text(f"7f00-7f10 r--p 00000000 08:01 42 {lib}\n")
    real = ip.mapped_libpython
    monkeypatch.setattr(ip, "mapped_libpython", lambda: real(str(maps)))
    # the copy LD_LIBRARY_PATH loaded is judged as the shared library, whatever sysconfig's LIBDIR says
    assert str(lib.resolve()) in ip.interpreter_files()


# -- N18: standard output at 'ulimit -f' hints at the file-size limit ----------------------------------------

def test_stdout_efbig_names_the_file_size_limit(monkeypatch) -> None:
    import planner.cli.common as common

    monkeypatch.setattr(common, "restore_stdout_file", lambda: "")
    monkeypatch.setattr(sys, "stdout", open("/dev/null", "w"))
    line = common.output_failed(OSError(errno.EFBIG, "File too large"))
    assert line == ("cannot write the output (File too large): the file-size limit ('ulimit -f') stopped it. "
                    "Raise the limit and run again."), line
    line = common.output_failed(OSError(errno.ENOSPC, "No space left on device"))
    assert "a full disk" in line, line  # the other cases keep their hint


# -- N19: a quoted command substitution never gets "write it unquoted" ---------------------------------------

@pytest.mark.parametrize("out, said", [("$(rm -rf ~)/x", "$("), ("`rm -rf ~`", "`"), ("x/$(id)", "$(")])
def test_command_substitution_hint_never_says_unquote(tmp_path: Path, monkeypatch, out: str, said: str) -> None:
    monkeypatch.chdir(tmp_path)
    err = _err("plan", QLORA, "--out", out, "--format", "json")
    assert err == (f"Error: --out: {out!r} holds {said!r}, which the shell did not expand (it was quoted), so it "
                   "would be part of a folder's name. Give the path itself.\n"), err
    assert not list(tmp_path.iterdir())  # nothing made


def test_variable_still_gets_the_unquote_hint(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    err = _err("plan", QLORA, "--out", "x/$HOME", "--format", "json")
    assert "Write it unquoted, or give the path itself." in err, err


# -- N11: a folder holding only another scenario's set: nothing of this scenario was "put back" --------------------

from tests.test_safety47_h39a_minors import _error_after_moves  # noqa: E402 (one helper, written once)


def test_only_another_scenarios_set_there_is_not_called_put_back(tmp_path: Path, monkeypatch) -> None:
    from planner.core.reportset import ReportSet
    from planner.core.atomic import write_text

    out = tmp_path / "o"
    with ReportSet(out, set_name="plan other") as rs:  # another scenario's set: other.json
        write_text(rs.path("other.json"), "{}\n")
        rs.commit()

    def append(path: Path) -> None:  # an edit through the new report's own name, just after it was placed
        with open(path, "a") as f:
            f.write("EDIT\n")

    said = _error_after_moves(out, append, monkeypatch)
    assert ("the new reports were taken out again (the folder held no earlier set of this scenario; the other "
            "scenarios' reports there were left as they were): nothing was replaced") in said, said
    assert "previous set" not in said, said
    assert not (out / "r.json").exists()
    assert (out / "other.json").read_text() == "{}\n"  # the other set untouched


# -- N14: a placed report hard-linked by another program: said as a second name, listed once ---------------------

def test_a_placed_report_given_a_second_name_is_said_so_and_listed_once(tmp_path: Path, monkeypatch) -> None:
    from planner.core.reportset import ReportSet
    from planner.core.atomic import write_text

    out = tmp_path / "o"
    with ReportSet(out, set_name="plan r") as rs:  # a previous set of this scenario, so it is put back
        write_text(rs.path("r.json"), "{}\n")
        rs.commit()

    def link(path: Path) -> None:  # os.link as a racing program would, just after the report was placed
        os.link(path, str(path) + ".hl")

    said = _error_after_moves(out, link, monkeypatch)
    assert said.startswith(f"{out / 'r.json'}: planner's new report was given a second name (a hard link) by another "
                           "program just after planner placed it"), said
    assert "the previous set was put back as it was: nothing was replaced" in said, said
    assert "changed" not in said.split(";")[0], said  # its bytes are planner's: not called changed
    # named once, as kept: the "Planner's new ... too" list does not repeat it (it was the set's only report)
    assert said.count("r.json") == 1, said
    assert (out / "r.json").read_text() == "{}\n"  # the previous report back


# -- N20: compare(tokens_per_month={KEY: ...}) takes only text keys, never their str() ------------------------------

class _Named:
    def __str__(self) -> str:  # str() would give a workload name
        return "qlora-7b"

    def __hash__(self) -> int:
        return 1


@pytest.mark.parametrize("key, kind", [(_Named(), "_Named"), (b"qlora-7b", "bytes"), (("qlora-7b",), "tuple"),
                                       (None, "NoneType")])
def test_tokens_per_month_key_that_is_not_a_text_is_refused_by_type(key, kind: str) -> None:
    from planner.api.comparisons import volume_overrides
    from planner.core.errors import InputError

    with pytest.raises(InputError) as err:
        volume_overrides({key: "200M"}, ["qlora-7b"])
    said = str(err.value)
    assert f"has a key of type {kind}, not a text" in said, said
    assert "{'qlora-7b': '200M'}" in said, said  # the hint names the scenario's workload


def test_tokens_per_month_str_subclass_key_is_its_text() -> None:
    from planner.api.comparisons import volume_overrides

    class S(str):
        def __str__(self) -> str:
            return "other"

    # plain_texts reads the text it holds, 'qlora-7b', not its __str__; 200M = 200e6 tokens
    assert volume_overrides({S("qlora-7b"): "200M"}, ["qlora-7b"]) == {"qlora-7b": 200e6}


# -- N13: a '--out "$V"' hint is withheld where $V is the run's --catalog overlay --------------------------------

def test_variable_hint_naming_the_overlay_is_withheld(tmp_path: Path, monkeypatch) -> None:
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "gpus.yaml").write_text("schema_version: 1\ngpus: []\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("V", str(ov))
    from planner.cli.main import main as cli_main

    argv = ["plan", QLORA, "--format", "json", "--out", "$V", "--catalog", str(ov)]
    r = CliRunner().invoke(cli_main, argv, obj={"argv": argv})
    assert r.exit_code == 2, r.output
    # the hint '--out "$V"' would name the overlay, an input of the run: only "give the path itself"
    assert r.stderr.endswith("in the current directory. Give the path itself.\n"), r.stderr
    assert "unquoted" not in r.stderr, r.stderr


# -- N5: --out /dev/fd/N with N a folder: the folder meant is hinted -------------------------------------------

@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_descriptor_of_a_folder_hints_the_folder(tmp_path: Path, monkeypatch) -> None:
    d = tmp_path / "dirx"
    d.mkdir()
    monkeypatch.chdir(tmp_path)
    fd = os.open(d, os.O_RDONLY)
    try:
        out = f"/dev/fd/{fd}"
        argv = ["plan", QLORA, "--out", out, "--format", "json"]
        r = CliRunner().invoke(main, argv, obj={"argv": argv})
    finally:
        os.close(fd)
    assert r.exit_code == 2, r.output
    # the descriptor points at dirx: that folder is the one meant, not a generic 'reports'
    assert r.stderr.endswith(f"Write --out {str(d)!r}.\n"), r.stderr


# -- N12: the workload's name is judged before its count, so a count's hint never carries a lookalike name ----------

def test_lookalike_name_is_refused_before_its_count() -> None:
    from planner.api.comparisons import volume_overrides
    from planner.core.errors import InputError

    names = ["qlora-13b", "chat-8b"]
    for count in ("1,5M", "0", "1e-20"):  # each a count problem of its own, whose hint would name the workload
        with pytest.raises(InputError) as err:
            volume_overrides(f"qIora-13b={count}", names)  # capital I for l
        said = str(err.value)
        assert "no workload 'qIora-13b' in the scenario" in said, said
        assert "qIora-13b=" not in said, said  # no hint to paste with the lookalike name


def test_count_hint_names_the_resolved_workload() -> None:
    from planner.api.comparisons import VolumeError, volume_overrides

    with pytest.raises(VolumeError) as err:
        volume_overrides("QLORA-13b=1,5M", ["qlora-13b", "chat-8b"])  # another case resolves to qlora-13b
    line = err.value.cli_line()
    assert "--tokens-per-month qlora-13b=1.5M" in line, line  # the name the scenario spells, as a pasted hint needs


# -- N4: the absolute XDG_CONFIG_HOME hinted is checked as a destination first ----------------------------------

def _xdg_error(value: str) -> str:
    from planner.core.errors import InputError
    from planner.validate.calibrate import refuse_relative_xdg

    with pytest.raises(InputError) as err:
        refuse_relative_xdg({"XDG_CONFIG_HOME": value, "HOME": "/root"}, writing=True)
    return str(err.value)


def test_xdg_hint_is_withheld_where_the_file_would_be_refused(monkeypatch) -> None:
    import planner

    # the shipped catalog folder: "$PWD"/rel/planner/calibration.yaml inside it is refused as a destination
    monkeypatch.chdir(Path(planner.__file__).parent / "catalog")
    said = _xdg_error("rel")
    assert said.endswith("Set it to an absolute path, or unset it."), said


def test_xdg_hint_for_a_quoted_tilde_and_a_blank(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _xdg_error("rel").endswith('(XDG_CONFIG_HOME="$PWD"/rel), or unset it.')
    assert _xdg_error("~/cfg").endswith('(XDG_CONFIG_HOME="$HOME"/cfg), or unset it.')  # the home meant
    assert _xdg_error(" ").endswith("Set it to an absolute path, or unset it.")  # no folder named blank


# -- N10: the generic --out example is one the destination rules accept ------------------------------------------

def test_generic_out_example_is_not_refused_where_given(tmp_path: Path, monkeypatch) -> None:
    import planner

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(Path(planner.__file__).parent / "catalog")  # 'reports' here is inside the shipped catalog
    err = _err("plan", QLORA, "--format", "json", "--out", "")
    # the home folder's reports is offered instead: $HOME/reports passes the rules
    assert err == f"Error: --out: is empty; give a directory for the reports, e.g. --out {tmp_path / 'reports'}.\n", err


def test_generic_out_example_stays_reports_where_it_passes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    err = _err("plan", QLORA, "--format", "json", "--out", "")
    assert err.endswith("e.g. --out reports (or --out . for the current directory).\n"), err


# -- N6, N7: calibrate --out onto a link to a manifest, onto an overlay's catalog file ---------------------------

def test_calibrate_out_link_to_a_manifest_is_said_as_a_link(tmp_path: Path) -> None:
    from planner.core.errors import OutputError
    from planner.validate.calibrate import save_path

    (tmp_path / "s2").mkdir()
    (tmp_path / "s2" / ".planner-reports.json").write_text("{}\n")
    link = tmp_path / "l9.yaml"
    link.symlink_to(tmp_path / "s2" / ".planner-reports.json")
    with pytest.raises(OutputError) as err:
        save_path(link)
    said = str(err.value)
    # a link to a FILE: the link wording, not "has the folder name '.planner-reports.json'"
    assert said == f"{link}: is a symbolic link, and planner does not replace a link with a file. Give --out another name.", said


def test_calibrate_out_an_overlays_own_catalog_file_is_refused_as_that(tmp_path: Path, monkeypatch) -> None:
    from planner.cli.calibrate import refuse_catalog_name
    from planner.core.errors import DestinationError

    ov = tmp_path / "ov2"
    ov.mkdir()
    (ov / "ram.yaml").write_text("schema_version: 1\ndimms: []\n")  # the folder's only catalog file
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DestinationError) as err:
        refuse_catalog_name(ov / "ram.yaml", None)
    said = err.value.cli_line()
    assert said.startswith(f"{ov / 'ram.yaml'}: is a catalog file of an overlay folder, not a calibration file"), said
    assert said.endswith("e.g. --out calibration.yaml."), said


@pytest.mark.parametrize("count, fixed", [("1OOM", "100M"), ("2\u041e\u041eM", "200M"), ("l00M", "100M")])
def test_letter_drawn_like_a_digit_in_a_count_is_hinted(count: str, fixed: str) -> None:
    from planner.api.comparisons import VolumeError, volume_overrides

    with pytest.raises(VolumeError) as err:
        volume_overrides(f"qlora-13b={count}", ["qlora-13b"])
    line = err.value.cli_line()
    # O (Latin or Cyrillic) read as 0, l as 1: the count as meant, with the known name, passes when pasted
    assert line.endswith(f"write --tokens-per-month qlora-13b={fixed}."), line
    assert volume_overrides(f"qlora-13b={fixed}", ["qlora-13b"])["qlora-13b"] > 0


def test_letters_alone_get_no_digit_hint() -> None:
    from planner.api.comparisons import VolumeError, volume_overrides

    with pytest.raises(VolumeError) as err:
        volume_overrides("qlora-13b=OOM", ["qlora-13b"])  # no digit at all: no count meant
    assert "drawn like a digit" not in err.value.cli_line()


def test_api_expandvars_hint_naming_the_overlay_is_withheld(tmp_path: Path, monkeypatch) -> None:
    from planner import plan
    from planner.core.errors import InputError

    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "gpus.yaml").write_text("schema_version: 1\ngpus: []\n")
    monkeypatch.setenv("V", str(ov))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        plan(QLORA, format="json", out="$V", catalog=str(ov))
    said = str(err.value)
    # os.path.expandvars('$V') is the catalog= overlay, an input of the run: no hint to expand into it
    assert "expandvars" not in said and "Give the folder's path itself" in said, said
    with pytest.raises(InputError) as err:
        plan(QLORA, format="json", out="$V/x", catalog=str(ov))
    assert "os.path.expandvars('$V/x')" in str(err.value)  # a folder inside it is no input: still hinted
