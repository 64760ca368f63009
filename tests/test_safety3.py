"""Findings of a second hostile trial on issue 28's report sets and output paths (branch safety3).

Each test fails on the main it was found on: an overlay's SOURCES.md replaced by a report, a SkyPilot
spot price of 0 that made the whole import fail, stdout cut short silently, ...
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from tests.cli_helpers import _cli, _scenario, _sha

ROOT = Path(__file__).resolve().parents[1]
QLORA = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
OVERLAY_GPU = ('schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    price_usd: 250\n    price_kind: quote\n'
               '    source: "REF:X"\n    as_of: 2026-11-20\n')



# -- 1. an overlay's SOURCES.md is an input of the run ------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_overlays_sources_md_is_never_replaced_by_a_report(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("ov").mkdir()
    s = _scenario(tmp_path / "s.yaml", "SOURCES")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", "ov", "--format", "md"])
    assert r.exit_code == 0, r.output
    Path("ov/gpus.yaml").write_text(OVERLAY_GPU)
    before = _sha(Path("ov/SOURCES.md"))
    _scenario(s, "SOURCES", micro_batch=2)
    r = CliRunner().invoke(main, ["plan", str(s), "--catalog", "ov", "--out", "ov", "--format", "md,xlsx"])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err == ("Error: ov/SOURCES.md: is an input of this run, and a report never replaces its input. "
                   "Give another --out."), err
    assert _sha(Path("ov/SOURCES.md")) == before
    r = CliRunner().invoke(main, ["compare", str(s), "--catalog", "ov", "--out", "ov"])
    assert r.exit_code == 0, r.output  # compare writes SOURCES-compare.*: no input in the way
    assert _sha(Path("ov/SOURCES.md")) == before


# -- 2. import-skypilot: a row the loader would refuse is left out, never a whole import refused -------

SKY_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_spot_price_of_zero_is_no_spot_offer(tmp_path: Path) -> None:
    from planner.catalog.loader import load_catalog

    for zero in ("0", "0.0", "-0", "00", "0e0", "1e-400"):
        (tmp_path / "vms.csv").write_text(SKY_HEADER + f"gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,us-east-1,,{zero}\n"
                                          "gpu_1x_a10,A10,1.0,30.0,200.0,1.29,us-east-1,,\n")
        out = tmp_path / f"sky{zero}"
        r = _cli("catalog", "import-skypilot", "vms.csv", "--out", out.name, cwd=tmp_path)
        assert r.returncode == 0, (zero, r.stderr)
        # h37b m7: '1e-400' is written with a digit that is not 0, so it is counted below the floor, not as 0
        line = "spot price below the catalog's floor (0.001 USD/h)" if zero == "1e-400" else "spot price 0"
        assert f"{line} read as no spot offer: 1 row(s) (line 2)" in r.stderr, r.stderr
        cat = load_catalog(out)
        h100 = cat.instance("lambda-gpu-1x-h100-pcie")
        assert h100.usd_per_hour == 2.49 and h100.spot_usd_per_hour is None


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_random_rows_are_left_out_with_a_reason_or_load(tmp_path: Path) -> None:
    # property: whatever a row holds, the import either leaves it out with a reason or writes a row the
    # catalog loader reads back (never an import refused by the loader over one row)
    import random

    from planner.catalog.loader import load_catalog
    from planner.catalog.skypilot import import_file, overlay_yaml

    rng = random.Random(20261206)
    numbers = ["0", "-0", "1e-400", "1e-300", "1e300", "0.2499999999", "0.25", "65536", "65537", "", "2.49",
               "1.0", "64", "65", "3", "1e-9", "4096", "4097", "1_0", "inf", "nan", "-1", "0e0", "5e-324"]
    # (U+200E, not U+202E: an explicit bidirectional control refuses the whole file, tests/test_safety18b.py)
    texts = ["gpu_1x_h100_pcie", "GPU_1X_H100_PCIE", "caf\u00e9", "a\u200eb", "x y", "", "us-east-1", "\u00e9u"]
    written = 0
    for trial in range(40):
        lines = []
        for i in range(8):
            def num(good: str) -> str:  # a sound value mostly, so that rows are written as well as left out
                return good if rng.random() < 0.75 else rng.choice(numbers)
            gpu = rng.choice(["H100", "A10", "A100", "nope"])
            # the name's GPU word is the row's (h40b N1: a row naming another GPU than 'gpu_1x_h100_pcie' is left out)
            inst = rng.choice(texts[:5]).replace("h100", gpu.lower()).replace("H100", gpu.upper()) + f"_{trial}_{i}"
            lines.append(",".join([inst, gpu, num("1"), num("8"), num("64"),
                                   num("2.49"), "us-west-2" if rng.random() < 0.8 else rng.choice(texts[5:]), "",
                                   num("0.9")]))
        path = tmp_path / f"t{trial}" / "vms.csv"
        path.parent.mkdir()
        path.write_text(SKY_HEADER + "\n".join(lines) + "\n")
        result = import_file(path, provider="lambda")
        for r in result.rows:
            one = tmp_path / f"t{trial}" / r.id
            one.mkdir()
            (one / "cloud.yaml").write_text(overlay_yaml([r], source={"lambda": "SkyPilot catalog"}, as_of="2026-01",
                                                         generated="test"))
            load_catalog(one)  # raises CatalogError if the loader refuses the written row
            written += 1
        for inst, why in result.skipped.items():
            assert why.strip(), inst
    assert written >= 20  # the property is exercised on rows that load, not only on rows left out


# -- 3, 4, 10. standard output: a short or failed write is one line and exit 2 ------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_stdout_at_a_file_size_limit_is_an_error_not_cut_short_silently(tmp_path: Path) -> None:
    # Python ignores SIGXFSZ: a write past `ulimit -f` takes part of the bytes, then fails with EFBIG
    for cmd, limit in (("planner estimate --model llama-2-7b --task train", 1), ("planner catalog cloud", 2)):
        r = _cli(cwd=tmp_path, shell=f"ulimit -f {limit}; {cmd} > o.txt")
        assert r.returncode == 2, (cmd, r.returncode, r.stderr)
        err = r.stderr.strip()
        # EFBIG is the file-size limit, not a full disk: the hint names 'ulimit -f' as the report line does (h41a N18)
        assert err == ("Error: cannot write the output (File too large): the file-size limit ('ulimit -f') stopped "
                       "it. Raise the limit and run again."), err


BROKEN = ("Error: cannot write the output: the program reading it closed it (broken pipe), so what it shows is "
          "cut short. Reports written to files are whole.")


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_large_json_into_a_closed_pipe_is_an_error(tmp_path: Path) -> None:
    r = _cli(cwd=tmp_path, shell=f"planner plan {QLORA} --out r --top 1000 --json | head -c 100 >/dev/null; "
                                  "exit ${PIPESTATUS[0]}")
    assert r.returncode == 2, r.stderr
    # the reports were moved into place before the output failed: named, as the lost output would have
    assert r.stderr.strip() == BROKEN.replace("Reports written to files are whole.", "The reports were written, "
                                              "whole: r/qlora-7b-12gb.csv, r/qlora-7b-12gb.json and "
                                              "r/qlora-7b-12gb.xlsx."), r.stderr


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_help_and_version_into_a_closed_pipe_say_so(tmp_path: Path) -> None:
    # a reader that never reads: `true` exits at once, so the help's write meets EPIPE
    for args in ("--help", "plan --help", "--version"):
        r = _cli(cwd=tmp_path, shell=f"sleep 0; planner {args} | (exec 0<&-; true); exit ${{PIPESTATUS[0]}}")
        assert r.returncode in (0, 2), (args, r.returncode, r.stderr)  # 0 only if the write won the race
        if r.returncode == 2:
            assert r.stderr.strip() == BROKEN, (args, r.stderr)
    # the same without a race: standard output a pipe already closed for reading
    for args in (["--help"], ["plan", "--help"], ["--version"]):
        rd, wr = os.pipe()
        os.close(rd)
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        p = subprocess.run([sys.executable, "-m", "planner", *args], stdout=wr, stderr=subprocess.PIPE, env=env,
                           text=True)
        os.close(wr)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert p.stderr.strip() == BROKEN, (args, p.stderr)


def test_bare_planner_says_what_is_missing_first() -> None:
    r = _cli()
    assert r.returncode == 2
    first = r.stderr.splitlines()[0]
    assert first == ("Error: no command given; give one of calibrate, catalog, compare, estimate, fit, plan (the "
                     "usage follows)."), first


# -- 5. a Catalog changed in code is checked by the loader's own checks -------------------------------

def _gpu_changed(catalog, gpu_id: str, **changes):
    import dataclasses as dc

    return dc.replace(catalog, gpus=tuple(dc.replace(g, **changes) if g.id == gpu_id else g for g in catalog.gpus))


def test_a_catalog_object_is_checked_as_the_loader_checks_files() -> None:
    import dataclasses as dc

    import planner
    from planner.core.errors import CatalogError

    c = planner.load_catalog()
    g = c.gpu("rtx-3060-12gb")
    p0 = g.prices[0]
    plat0 = c.platforms[0]
    where = "the Catalog given: gpus[0] (rtx-3060-12gb)"
    cases = [
        (_gpu_changed(c, g.id, id="rtx-4090"), "the Catalog given: gpus[5] (rtx-4090).id: duplicate id 'rtx-4090'"),
        (dc.replace(c, dimms=c.dimms + (c.dimms[0],)), f"dimms[{len(c.dimms)}] ({c.dimms[0].id}).id: duplicate id"),
        (_gpu_changed(c, g.id, prices=(dc.replace(p0, low_usd=300.0, high_usd=200.0),)), f"{where}.prices[0].usd"),
        (_gpu_changed(c, g.id, prices=(dc.replace(p0, kind="bogus"),)),
         f"{where}.prices[0].kind: 'bogus' is not one of the choices"),
        (_gpu_changed(c, g.id, as_of="2099-01-01"), f"{where}.as_of: 2099-01-01 is after today"),
        (_gpu_changed(c, g.id, as_of="not-a-date"), f"{where}.as_of: must be a date"),
        (_gpu_changed(c, g.id, vendor="evil"), f"{where}.vendor: 'evil' is not one of the choices"),
        (_gpu_changed(c, g.id, form_factor="zzz"), f"{where}.form_factor: 'zzz' is not one of the choices"),
        (_gpu_changed(c, g.id, slot_width=0), f"{where}.slot_width"),
        (_gpu_changed(c, g.id, lead_time_days=10**6), f"{where}.lead_time_days"),
        (_gpu_changed(c, g.id, quote_valid_until="zzz"), f"{where}.quote_valid_until"),
        (_gpu_changed(c, g.id, name=""), f"{where}.name: must be a non-empty text"),
        (_gpu_changed(c, g.id, name=5), f"{where}.name: must be a non-empty text, not 5"),
        (_gpu_changed(c, g.id, name=None), f"{where}: missing required key 'name'"),
        (_gpu_changed(c, g.id, id=None), "the Catalog given: gpus[0]: missing required key 'id'"),
        (_gpu_changed(c, g.id, name="GPU\ud800x"), f"{where}.name: holds '\\ud800', a lone surrogate"),
        (dc.replace(c, gpus=c.gpus + ("x",)), f"the Catalog given: gpus[{len(c.gpus)}]: must be a Gpu, not str"),
        (dc.replace(c, gpus=c.gpus + (None,)), f"gpus[{len(c.gpus)}]: must be a Gpu, not NoneType"),
        (dc.replace(c, sources=None), "the Catalog given: sources: must be a tuple of SourceRef"),
        (dc.replace(c, schema_version=99), "the Catalog given: schema_version: version 99 is not supported"),
        (dc.replace(c, platforms=(dc.replace(plat0, fixed_gpu="no-such-gpu"),) + c.platforms[1:]),
         f"the Catalog given: platforms[0] ({plat0.id}).fixed_gpu"),
        (dc.replace(c, platforms=(dc.replace(plat0, memory_kind="ddr9"),) + c.platforms[1:]),
         f"the Catalog given: platforms[0] ({plat0.id}).memory_kind: 'ddr9' is not one of the choices"),
    ]
    for cat, message in cases:
        try:
            planner.plan(str(QLORA), catalog=cat)
            line = "accepted"
        except CatalogError as exc:
            line = exc.one_line()
        assert message in line, (message, line)
    planner.plan(str(QLORA), catalog=c)  # the loaded catalog itself passes its own checks


# -- 6. out= refused before any work is an InputError (the API's rule) --------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_refused_destination_is_an_input_error(tmp_path: Path, monkeypatch) -> None:
    import planner
    from planner.core.errors import DestinationError, InputError, OutputError

    monkeypatch.chdir(tmp_path)
    package = Path(planner.__file__).parent
    for out in (str(ROOT / "catalog"), str(package), ROOT / "catalog", "x" * 5000):
        try:
            planner.plan(str(QLORA), out=out)
            caught = None
        except InputError as exc:  # every bad argument is an InputError
            caught = exc
        assert isinstance(caught, DestinationError) and isinstance(caught, OutputError), (str(out)[:40], caught)
    assert not any(tmp_path.iterdir())
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", str(ROOT / "catalog")])
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: {ROOT / 'catalog'}: is planner's own catalog folder")


# -- 7. a replaced report keeps its group -------------------------------------------------------------

def _other_gid() -> int | None:
    import grp

    mine = os.getegid()
    for g in grp.getgrall():
        if g.gr_gid != mine and (os.geteuid() == 0 or g.gr_gid in os.getgroups()):
            return g.gr_gid
    return None


def test_a_replaced_report_keeps_its_group(tmp_path: Path) -> None:
    import pytest

    gid = _other_gid()
    if gid is None:
        pytest.skip("no second group this user can give a file")
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "gp"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json,md"]).exit_code == 0
    for name in ("s.json", "s.md"):
        os.chown(out / name, -1, gid)
        os.chmod(out / name, 0o640)
    _scenario(s, "s", micro_batch=2)
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json,md"])
    assert r.exit_code == 0, r.output
    for name in ("s.json", "s.md"):
        st = os.stat(out / name)
        assert (st.st_gid, st.st_mode & 0o7777) == (gid, 0o640), name
    # the atomic writer (calibration file, workbook) keeps it too
    from planner.core.atomic import write_text

    f = tmp_path / "c.yaml"
    f.write_text("a\n")
    os.chown(f, -1, gid)
    write_text(f, "b\n")
    assert os.stat(f).st_gid == gid and f.read_text() == "b\n"


def test_a_group_that_cannot_be_kept_refuses_the_replacement(tmp_path: Path, monkeypatch) -> None:
    import errno

    gid = _other_gid()
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "gp"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"]).exit_code == 0
    if gid is None:
        import pytest

        pytest.skip("no second group this user can give a file")
    os.chown(out / "s.json", -1, gid)
    before = (out / "s.json").read_bytes()

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "chown", refuse)
    monkeypatch.setattr(os, "fchown", refuse)  # planner sets the group on the open file (issue 28: no chown by path)
    _scenario(s, "s", micro_batch=2)
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err == (f"Error: {out / 's.json'}: cannot keep its group (gid {gid}: Operation not permitted), and "
                   "replacing it would change who can read it; nothing was replaced. Give another --out, or change "
                   "its group to one of yours (chgrp)."), err
    assert (out / "s.json").read_bytes() == before and os.stat(out / "s.json").st_gid == gid


# -- 8. the API leaves tempfile.tempdir as it found it -------------------------------------------------

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_writing_a_workbook_leaves_tempfile_tempdir_alone(tmp_path: Path) -> None:
    code = ("import tempfile, planner, sys\n"
            "assert tempfile.tempdir is None\n"
            f"planner.plan({str(QLORA)!r}, out={str(tmp_path / 'o')!r}, format='xlsx')\n"
            "print(tempfile.tempdir)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "None", r.stdout
    assert (tmp_path / "o" / "qlora-7b-12gb.xlsx").is_file()


# -- 9. a report name the file system's encoding cannot hold says so -----------------------------------

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_non_ascii_report_name_under_an_ascii_file_system_encoding(tmp_path: Path) -> None:
    _scenario(tmp_path / "s.yaml", "\u8a08\u753b caf\u00e9")
    r = _cli("plan", "s.yaml", "--out", "d", cwd=tmp_path, env={"LC_ALL": "C", "PYTHONUTF8": "0",
                                                                "PYTHONIOENCODING": ""})
    assert r.returncode == 2, r.stderr
    err = r.stderr.strip().splitlines()[-1]
    assert err == ("Error: the report name '\\u8a08\\u753b-caf\\xe9.xlsx' cannot be written in the file system's "
                   "encoding (ascii): '\\u8a08\\u753b'. Set LC_ALL=C.UTF-8 (or another UTF-8 locale), or name the "
                   "scenario in ASCII."), r.stderr
    assert not (tmp_path / "d").exists() or not any((tmp_path / "d").iterdir())


# -- 11. a signal after the reports were written says they are whole -----------------------------------

def test_a_signal_after_the_commit_says_the_reports_are_complete(tmp_path: Path, monkeypatch) -> None:
    import signal

    import planner.report.render as render

    def late_signal(*args, **kwargs):  # the reports are in place by the time the text is rendered
        os.kill(os.getpid(), signal.SIGTERM)
        return "plan text"

    monkeypatch.setattr(render, "plan_text", late_signal)
    out = tmp_path / "d"
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--out", str(out), "--format", "json,csv"])
    assert r.exit_code == 143, r.output
    err = r.stderr.strip()
    assert err == (f"Interrupted by SIGTERM after the reports were written: wrote {out / 'qlora-7b-12gb.csv'} and "
                   f"{out / 'qlora-7b-12gb.json'} (complete); stopped."), err
    assert {p.name for p in out.iterdir()} >= {"qlora-7b-12gb.json", "qlora-7b-12gb.csv"}


# -- 12. low: CSV after a space; duplicate header; one id from two rows; memory digits; Kept note ------

def test_csv_formula_rule_after_a_space_too() -> None:
    from planner.core.escape import csv_text

    assert csv_text("a =x") == "a '=x"  # as ', =x' and ' =x' already were
    assert csv_text(" =x") == " '=x" and csv_text("a, =x") == "a, '=x"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_import_skypilot_refusals_name_what_is_wrong(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text(SKY_HEADER.strip() + ",Price\ngpu_1x_a10,A10,1.0,30.0,200,1.29,us-east-1,,,5\n")
    r = _cli("catalog", "import-skypilot", "d.csv", "--out", "s1", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("Error: d.csv: line 1: the header names column 'Price' twice (columns 6 and "
                                       "10), so which one holds the value cannot be told."), r.stderr
    (tmp_path / "t.csv").write_text(SKY_HEADER + "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,us-east-1,,\n"
                                    "GPU_1X_H100_PCIE,H100,1.0,26.0,200.0,2.49,us-east-1,,\n")
    r = _cli("catalog", "import-skypilot", "t.csv", "--out", "s2", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().startswith(
        "Error: t.csv: lines 2 and 3: the instance types 'gpu_1x_h100_pcie' and 'GPU_1X_H100_PCIE' both give the "
        "catalog id lambda-gpu-1x-h100-pcie"), r.stderr
    (tmp_path / "m.csv").write_text(SKY_HEADER + "gpu_1x_a10,A10,1.0,30.0,0.2499999999,1.29,us-east-1,,\n"
                                    "gpu_1x_h100_pcie,H100,1.0,30.0,200,1.29,us-east-1,,\n")
    r = _cli("catalog", "import-skypilot", "m.csv", "--out", "s3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "left out 1: memory 0.2499999999 GiB, outside the catalog's 0.25 to 65536 GiB (line 2: gpu_1x_a10)" in r.stderr


def test_the_kept_note_of_another_users_report_says_so(tmp_path: Path) -> None:
    import pytest

    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json,md"]).exit_code == 0
    os.chown(out / "s.md", 1, -1)  # unchanged bytes, another owner
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert (f"Kept {out / 's.md'}, a name of this report set not written this time: it belongs to another user."
            in r.stderr), r.stderr


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_overlay_source_urls_are_text_and_the_shipped_ones_links(tmp_path: Path, monkeypatch) -> None:
    import openpyxl

    from planner.report.sheets.sources import linkable

    monkeypatch.chdir(tmp_path)
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "gpus.yaml").write_text(OVERLAY_GPU)
    (ov / "SOURCES.md").write_text("| id | document | where |\n|---|---|---|\n"
                                   "| X | Quote https://user:pass@evil.example/q | https://shop.example/q |\n")
    r = CliRunner().invoke(main, ["plan", str(QLORA), "--catalog", "ov", "--out", "o", "--format", "xlsx"])
    assert r.exit_code == 0, r.output
    ws = openpyxl.load_workbook(tmp_path / "o" / "qlora-7b-12gb.xlsx")["Sources"]
    links = {c.value: c.hyperlink.target for row in ws.iter_rows() for c in row if c.hyperlink is not None}
    texts = [c.value for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
    assert "https://shop.example/q" in texts and "https://shop.example/q" not in links
    assert not any("evil.example" in str(t) for t in links.values())
    assert links and all(str(t).startswith("https://") for t in links.values())  # the shipped sources' links
    shipped = str(ROOT / "catalog" / "SOURCES.md")
    assert linkable("https://www.nvidia.com/x", shipped)
    for url in ("https://user:pass@www.nvidia.com/x", "https://xn--nvda-0ra.com/", "https://\u043epenai.com/",
                "javascript:alert(1)"):
        assert not linkable(url, shipped), url
    assert not linkable("https://www.nvidia.com/x", str(ov / "SOURCES.md"))


def test_an_encoding_that_cannot_write_text_is_said_in_ascii(tmp_path: Path) -> None:
    for enc in ("idna", "punycode"):
        r = _cli("estimate", "--model", "llama-2-7b", "--task", "train", cwd=tmp_path, env={"PYTHONIOENCODING": enc})
        assert r.returncode == 2, (enc, r.returncode, r.stderr)
        assert r.stdout == "" and r.stderr == (f"Error: standard output's encoding '{enc}' cannot write plain text "
                                               "(UnicodeError). Set PYTHONIOENCODING=utf-8 (or unset it) and run "
                                               "again.\n"), (enc, r.stderr)
    r = _cli("--version", cwd=tmp_path, env={"PYTHONIOENCODING": "latin-1"})
    assert r.returncode == 0 and "planner, version" in r.stdout


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_calibrate_never_writes_over_an_input(tmp_path: Path) -> None:
    import json

    cfg = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "w.yaml").write_text("task: train\nmodel: ./config.json\nrecipe: pure-bf16\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for args, target in ((["--model", "./config.json", "--task", "train", "--recipe", "pure-bf16"], "config.json"),
                         (["--workload", "w.yaml"], "w.yaml")):
        r = _cli("calibrate", *args, "--out", target, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip() == (f"Error: {target}: is an input of this run, and a report never replaces its "
                                    "input. Give another --out."), r.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
