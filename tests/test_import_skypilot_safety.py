"""import-skypilot: what it reads is bounded and regular, a run that keeps nothing writes nothing, and an
input is never its output (issue 28, second hostile pass)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.catalog.skypilot import ImportProblem, import_file
from planner.cli.main import main

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
# a Lambda row in the v8 layout (the module docstring's column order); the price as tests/test_import_skypilot.py
# h39b N1: a Lambda GpuInfo is now read, and an empty 'Gpus' list is not what SkyPilot's fetcher writes (one GPU dict,
# Count a float, TotalGpuMemoryInMiB one GPU's memory): the row carries the fetcher's GpuInfo for gpu_1x_h100_pcie
ROW = ("gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,us-east-1,\"{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', "
       "'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 81920}\",\n")


def _lambda(tmp_path: Path, body: str, name: str = "vms.csv") -> Path:
    path = tmp_path / "lambda" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + body, encoding="utf-8")
    return path


def _run(*args: str):
    return CliRunner().invoke(main, ["catalog", "import-skypilot", *args])


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_device_is_refused_unread(tmp_path: Path) -> None:
    # /dev/zero streams without end: refused by its type before one byte is read (memory capped meanwhile,
    # so that the old read-a-whole-line fails as MemoryError rather than eating the machine)
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000)); "
            "from planner.cli.main import main; sys.argv = ['planner', 'catalog', 'import-skypilot', '/dev/zero', "
            f"'--provider', 'lambda', '--out', {str(tmp_path / 'o')!r}]; main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "/dev/zero: is a character device, not a regular file" in r.stderr
    assert r.stderr.count("\n") == 1 and "internal error" not in r.stderr


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_named_pipe_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "f.csv"
    os.mkfifo(fifo)
    code = ("import sys; from planner.cli.main import main; sys.argv = ['planner', 'catalog', 'import-skypilot', "
            f"{str(fifo)!r}, '--provider', 'lambda', '--out', {str(tmp_path / 'o')!r}]; main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "is a named pipe (FIFO), not a regular file" in r.stderr


def test_one_endless_line_is_cut_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import planner.catalog.skypilot_csv as sky_csv  # the reader (planner.catalog.skypilot re-exports the cap)

    monkeypatch.setattr(sky_csv, "MAX_CSV_BYTES", 1000)
    path = tmp_path / "lambda" / "vms.csv"
    path.parent.mkdir()
    path.write_bytes(HEADER.encode() + b"a" * 5000)  # no newline at all after the header
    with pytest.raises(ImportProblem) as e:
        import_file(path)
    assert str(e.value).startswith(f"{path}: is larger than 0 MiB")


@pytest.mark.parametrize("body", [
    "gpu_1x_nope,NOPE,1.0,26.0,200.0,2.49,us-east-1,,\n",  # a GPU the catalog does not know
    "",  # the header alone
    "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,europe-central-1,,\n",  # not in a US region
])
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_import_that_keeps_nothing_writes_nothing(tmp_path: Path, body: str) -> None:
    out = tmp_path / "ov"
    r = _run(str(_lambda(tmp_path, ROW, "good.csv")), "--out", str(out), "--as-of", "2026-01")
    assert r.exit_code == 0, r.output
    before = (out / "cloud.yaml").read_bytes()
    r = _run(str(_lambda(tmp_path, body, "bad.csv")), "--out", str(out), "--as-of", "2026-01")
    assert r.exit_code == 2, r.output
    assert (out / "cloud.yaml").read_bytes() == before  # the good overlay stays
    assert r.stderr.count("Error:") == 1
    # the header alone is said to be one, not "left out as listed above" with nothing listed (h22b M3)
    said = "bad.csv holds a header and no rows, so no instance was kept and nothing was written to" if not body else \
        "no instance was kept from"
    assert said in r.stderr and "nothing was written to" in r.stderr, r.stderr
    assert "Wrote" not in r.output


def test_the_catalog_overlay_read_is_never_the_output(tmp_path: Path) -> None:
    d = tmp_path / "d"
    r = _run(str(_lambda(tmp_path, ROW)), "--out", str(d), "--as-of", "2026-01")
    assert r.exit_code == 0, r.output
    before = (d / "cloud.yaml").read_bytes()
    r = _run(str(_lambda(tmp_path, ROW)), "--out", str(d), "--catalog", str(d), "--as-of", "2026-01")
    assert r.exit_code == 2
    assert "is the --catalog overlay this run reads" in r.stderr
    assert (d / "cloud.yaml").read_bytes() == before
    # the same overlay by another spelling of its path
    r = _run(str(_lambda(tmp_path, ROW)), "--out", str(d) + "/.", "--catalog", str(d), "--as-of", "2026-01")
    assert r.exit_code == 2 and "is the --catalog overlay this run reads" in r.stderr


def test_an_empty_catalog_option_is_refused(tmp_path: Path) -> None:
    r = _run(str(_lambda(tmp_path, ROW)), "--out", str(tmp_path / "o"), "--catalog", "", "--as-of", "2026-01")
    assert r.exit_code == 2
    assert "Error: --catalog: is empty" in r.stderr
    r = CliRunner().invoke(main, ["plan", str(Path(__file__).parent.parent / "scenarios" / "qlora-7b-12gb.yaml"),
                                  "--catalog", ""])
    assert r.exit_code == 2
    assert "Error: --catalog: is empty" in r.stderr


def test_an_empty_catalog_argument_is_refused_by_the_api() -> None:
    from planner.api.inputs import catalog_of
    from planner.core.errors import InputError

    with pytest.raises(InputError) as e:
        catalog_of("")
    assert e.value.one_line().startswith("catalog: is empty")


def test_bad_rows_are_left_out_by_reason_with_their_line(tmp_path: Path) -> None:
    body = ('"gpu_1x\nh100",H100,1.0,26.0,200.0,2.49,us-east-1,,\n'  # lines 2-3: a line break inside the name
            # h37b m2: Lambda's 'H100' is told PCIe or SXM by the type's name, so these name the board (sxm5)
            "gpu_8x_h100_sxm5,H100,8.0,26.0,200.0,1e308,us-east-1,,\n"  # line 4: past the loader's 10,000 USD/h
            "gpu_2x_h100,H100,2.0,30.0,200.0,1_0,us-east-1,,\n"  # line 5: Python's float() reads 10.0
            "gpu_4x_h100,H100,4.0,30.5,200.0,10,us-east-1,,\n"  # line 6: half a vCPU (int() cut it to 30)
            + ROW)  # line 7: a good row, kept
    res = import_file(_lambda(tmp_path, body))
    assert [r.id for r in res.rows] == ["lambda-gpu-1x-h100-pcie"]
    # a quoted value over two lines is one row of lines 2 to 3 (hostile pass 9A item 2: rows merged by a stray '"'
    # are left out whole, never priced from their cells)
    assert res.skipped["the row on line 2"].startswith("lines 2 to 3 are read as one row: a '\"' on line 2 opens a "
                                                        "quoted value")
    # the price as written (h25b M2: judged by its digits)
    assert res.skipped["gpu_8x_h100_sxm5"] == ("line 4: an hourly price of 1e308 USD/h, above the catalog's largest, "
                                               "10,000 USD/h")
    assert res.skipped["gpu_2x_h100"] == "line 5, column Price: '1_0' is not a number"
    assert res.skipped["gpu_4x_h100"] == "line 6, column vCPUs: 30.5 is not a whole number of vCPUs"


def test_a_tiny_price_is_written_so_the_loader_reads_it_back(tmp_path: Path) -> None:
    from planner.catalog.loader import load_catalog
    from planner.catalog.skypilot import yaml_float

    # YAML 1.1 (PyYAML) reads '1e-10' as text and '1.0e-10' as a float
    assert [yaml_float(x) for x in (1e-10, 2.49, 1e20, 1.5e-7)] == ["1.0e-10", "2.49", "1.0e+20", "1.5e-07"]
    # a price below the catalog's floor (MIN_USD_PER_HOUR, $0.001/h) is left out (tests/test_safety13b.py); the
    # smallest price kept is read back as written
    out = tmp_path / "o"
    r = _run(str(_lambda(tmp_path, ROW.replace("2.49", "0.0015"))), "--out", str(out), "--as-of", "2026-01")
    assert r.exit_code == 0, r.output
    cat = load_catalog(out)
    inst = next(i for i in cat.instances if i.id == "lambda-gpu-1x-h100-pcie")
    assert inst.usd_per_hour == 0.0015 and inst.memory_bytes == 200 * 2**30 and inst.vcpus == 26


@pytest.mark.parametrize("folder", ["a\x1bb", "a\u202eb", "a\udcffb"], ids=["ESC", "RLO", "not-UTF-8"])
def test_a_path_with_unsafe_characters_makes_an_escaped_source(tmp_path: Path, folder: str) -> None:
    path = _lambda(tmp_path / os.fsdecode(os.fsencode(folder)), ROW)
    out = tmp_path / "o"
    r = _run(str(path), "--out", str(out), "--as-of", "2026-01")
    assert r.exit_code == 0, r.output
    text = (out / "cloud.yaml").read_text(encoding="utf-8")
    shown = {"a\x1bb": "a\\\\x1bb", "a\u202eb": "a\\\\u202eb", "a\udcffb": "a\\\\xffb"}[folder]
    assert shown in text  # the escape, as JSON writes a backslash inside the quoted source


@pytest.mark.parametrize("option, value, message", [
    ("--region", "\x1b[31mus-east-1", "Invalid value for --region: holds the control character U+001B (ESCAPE)"),
    ("--as-of", "0001-01", "Error: --as-of: 0001-01 is before 2000"),
    ("--as-of", "1999-12-31", "Error: --as-of: 1999-12-31 is before 2000"),
])
def test_unsafe_regions_and_ancient_dates_are_refused(tmp_path: Path, option: str, value: str, message: str) -> None:
    r = _run(str(_lambda(tmp_path, ROW)), "--out", str(tmp_path / "o"), option, value)
    assert r.exit_code == 2
    assert message in r.stderr and "\x1b" not in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.slow  # two CLI runs in children: over 1.2 s on a loaded 2-core machine (pyproject addopts)
def test_a_pipe_without_source_gets_a_note_to_give_one(tmp_path: Path) -> None:
    # each row's default source is the file's path; /dev/stdin (or a shell's <(...)) names nothing once read
    # (h29a m2). The rows are still written; the note says how to name where they come from.
    args = [sys.executable, "-m", "planner", "catalog", "import-skypilot", "/dev/stdin", "--provider", "lambda"]
    r = subprocess.run(args + ["--out", str(tmp_path / "o")], input=HEADER + ROW, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Note: each row's source names /dev/stdin, a pipe, not the file it carried; give --source" in r.stderr
    named = subprocess.run(args + ["--out", str(tmp_path / "n"), "--source", "SkyPilot catalog v8"],
                           input=HEADER + ROW, capture_output=True, text=True, timeout=120)
    assert named.returncode == 0, named.stderr
    assert "Note: each row's source" not in named.stderr
    assert "SkyPilot catalog v8" in (tmp_path / "n" / "cloud.yaml").read_text()
    from_file = _run(str(_lambda(tmp_path, ROW)), "--out", str(tmp_path / "f"))
    assert from_file.exit_code == 0, from_file.output
    assert "Note: each row's source" not in from_file.output
