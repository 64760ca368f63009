"""import-skypilot against hostile files and options (issue 28): what it writes is checked with the catalog
loader first (nothing written when that would be refused), its input is read as a stream with a size cap, a
UTF-8 byte order mark is read past, what it left out is summed up in a few lines, and it never writes into
the shipped catalog or over a file it did not write."""

from __future__ import annotations

import re

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.catalog.loader import default_catalog_dir
from planner.catalog.skypilot import MAX_CSV_BYTES, ImportProblem, import_file, left_out_lines
from planner.cli.main import main

HEADER_AWS = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region," \
             "AvailabilityZone,Arch\n"
# a real row (catalogs/v8/aws/vms.csv @00148f2a, as in tests/test_import_skypilot.py)
G6 = "g6.xlarge,L4,1.0,4.0,16.0,L4,0.8048,0.259900,us-east-2,use2-az2,x86_64\n"


def _aws(tmp_path: Path, body: str, *, prefix: str = "") -> Path:
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(prefix + HEADER_AWS + body, encoding="utf-8")
    return path


def _run(*args: str):
    return CliRunner().invoke(main, ["catalog", "import-skypilot", *args])


@pytest.mark.parametrize("row, message", [
    # an infinite price: the importer refuses the value itself
    ("g6.xlarge,L4,1.0,4.0,16.0,L4,inf,0.2599,us-east-2,use2-az2,x86_64\n", "column Price: 'inf' is not a finite number"),
    # negative vCPUs
    ("g6.xlarge,L4,1.0,-4.0,16.0,L4,0.8048,0.2599,us-east-2,use2-az2,x86_64\n", "column vCPUs: -4.0 is below 0"),
    # a billion GPUs: left out with its line (the catalog loader's gpu_count is 1 to 64) (quoted as written, h21b M4)
    ("g6.xlarge,L4,1e9,4.0,16.0,L4,0.8048,0.2599,us-east-2,use2-az2,x86_64\n",
     "line 2: 1e9 GPUs, outside the catalog's 1 to 64"),
])
def test_rows_the_catalog_would_refuse_write_nothing(tmp_path: Path, row: str, message: str) -> None:
    out = tmp_path / "o"
    r = _run(str(_aws(tmp_path, row)), "--out", str(out), "--as-of", "2026-01")
    assert r.exit_code == 2, r.output
    # a row left out is counted by reason in the summary, its line after it (issue 28)
    shown = re.sub(r"^line (\d+)(?:, |: )(.*)$", r"\2 (line \1: g6.xlarge)", message)
    assert message in r.stderr or shown in " ".join(r.stderr.split()), r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert r.stderr.count("Error:") == 1
    assert not (out / "cloud.yaml").exists()


def test_a_billion_gpus_is_left_out_and_the_good_rows_kept(tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = _run(str(_aws(tmp_path, G6 + "g6.big,L4,1e9,4.0,16.0,L4,0.8048,0.2599,us-east-2,use2-az2,x86_64\n")),
             "--out", str(out), "--as-of", "2026-01")
    assert r.exit_code == 0, r.output
    assert "left out 1: 1e9 GPUs, outside the catalog's 1 to 64 (line 3: g6.big)" in r.stderr
    assert "id: aws-g6-xlarge" in (out / "cloud.yaml").read_text() and "g6.big" not in (out / "cloud.yaml").read_text()


@pytest.mark.parametrize("option, value, message", [
    ("--as-of", "20250101", "--as-of: must be a date written YYYY-MM-DD or YYYY-MM, not '20250101'. Write it as "
     "YYYY-MM-DD: --as-of 2025-01-01."),  # Python would read it
    ("--as-of", "2025-1-1", "not '2025-1-1'. Write it with two-digit months and days: --as-of 2025-01-01."),
    ("--source", "SkyPilot\nas_of: 1999-01", "holds the control character U+000A (LINE FEED)"),
    ("--source", "SkyPilot \x1b]0;pwned\x07", "U+001B (ESCAPE)"),
    ("--source", "  ", "is blank (white space alone)"),
])
def test_bad_dates_and_sources_are_refused(tmp_path: Path, option: str, value: str, message: str) -> None:
    out = tmp_path / "o"
    args = [str(_aws(tmp_path, G6)), "--out", str(out), option, value]
    if option != "--as-of":
        args += ["--as-of", "2026-01"]
    r = _run(*args)
    assert r.exit_code == 2 and message in r.stderr, r.output
    assert "\x1b" not in r.stderr and not out.exists()


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_an_overlay_over_the_loaders_input_cap_is_not_written(tmp_path: Path) -> None:
    # three files of 1,990 rows, each with a 4,000-character source (about 4,300 bytes an entry): over the loader's
    # 20 MiB cap (planner.core.infile) in the third. One file cannot pass it since h33b N5: it is refused past 2,000
    # instance types with a GPU the catalog knows (planner.catalog.skypilot.MAX_GPU_INSTANCE_TYPES), 8.6 MB here
    files = []
    for k in "abc":
        rows = "".join(f"g6.{k}{i},L4,1.0,4.0,16.0,L4,0.8048,0.2599,us-east-2,use2-az2,x86_64\n" for i in range(1990))
        files.append(str(_aws(tmp_path / k, rows)))
    out = tmp_path / "o"
    r = _run(*files, "--out", str(out), "--as-of", "2026-01", "--source", "s" * 4000)
    # refused as soon as the rows kept pass the cap (issue 28), naming the file, not after every row is checked
    assert r.exit_code == 2, r.output
    assert f"Error: {files[2]}: the overlay would be over " in r.stderr, r.stderr
    assert "bytes (what is left of the 20 MiB the catalog loader reads in one file after the files imported before " \
           "it) already with the " in r.stderr, r.stderr
    assert not (out / "cloud.yaml").exists()


def test_a_file_over_the_size_cap_is_refused_as_it_is_read(tmp_path: Path) -> None:
    path = _aws(tmp_path, "")
    with open(path, "a", encoding="utf-8") as fh:  # one byte past the cap, in lines of a real row's size
        line = G6.replace("g6.xlarge", "g6.other")
        fh.write(line * (MAX_CSV_BYTES // len(line) + 1))
    with pytest.raises(ImportProblem) as e:
        import_file(path)
    assert str(e.value).startswith(f"{path}: is larger than 8 MiB")  # MAX_CSV_BYTES, 8 MiB since h33b N5/N6


def test_a_byte_order_mark_before_the_header_is_read_past(tmp_path: Path) -> None:
    res = import_file(_aws(tmp_path, G6, prefix="\ufeff"))
    assert [r.id for r in res.rows] == ["aws-g6-xlarge"]


def test_what_was_left_out_is_a_few_lines() -> None:
    # 1,800 instance types without a GPU and a few of unknown GPUs: one line per kind of reason, counts by kind
    # (h30b N6: the ten GPU names, quoted, are one kind, their names beside their rows)
    skipped = {f"m{i:04d}.large": "no GPU" for i in range(1800)}
    skipped.update({f"x{i}": f"GPU 'G{i}' has no gpus.yaml entry" for i in range(10)})
    lines = left_out_lines(skipped)
    assert len(lines) == 2
    assert lines[0] == "left out 1800: no GPU (m0000.large, m0001.large, m0002.large, ...)"
    assert lines[-1] == ("left out 10: GPU 'G0' has no gpus.yaml entry, and the same reason with other values in 9 "
                         "rows (x0, x1 'G1', x2 'G2', ...)")


def test_the_cli_prints_the_summary_not_one_line_per_instance(tmp_path: Path) -> None:
    body = G6 + "".join(f"m5.x{i},,,4.0,16.0,,0.1,,us-east-2,use2-az2,x86_64\n" for i in range(500))
    r = _run(str(_aws(tmp_path, body)), "--out", str(tmp_path / "o"), "--as-of", "2026-01")
    assert r.exit_code == 0, r.output
    # each by its first line (h22b M1): G6 is line 2, so m5.x0 is line 3
    assert r.stderr.count("\n") <= 3 and "left out 500: no GPU (line 3: m5.x0, line 4: m5.x1, line 5: m5.x2, ...)" \
        in " ".join(r.stderr.split()), r.stderr


def test_the_shipped_catalog_and_an_empty_out_are_refused(tmp_path: Path) -> None:
    shipped = default_catalog_dir()
    before = (shipped / "cloud.yaml").read_bytes()
    r = _run(str(_aws(tmp_path, G6)), "--out", str(shipped), "--as-of", "2026-01")
    assert r.exit_code == 2 and "is planner's own catalog folder" in r.stderr, r.output
    assert (shipped / "cloud.yaml").read_bytes() == before
    r = _run(str(_aws(tmp_path, G6)), "--out", "", "--as-of", "2026-01")
    assert r.exit_code == 2 and "--out: is empty" in r.stderr


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_cloud_yaml_planner_did_not_write_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "cloud.yaml").write_text("# mine\n")
    r = _run(str(_aws(tmp_path, G6)), "--out", str(out), "--as-of", "2026-01")
    assert r.exit_code == 2 and "not a file planner wrote there" in r.stderr, r.output
    assert (out / "cloud.yaml").read_text() == "# mine\n"
    (out / "cloud.yaml").unlink()
    for _ in range(2):  # its own file it replaces
        r = _run(str(_aws(tmp_path, G6)), "--out", str(out), "--as-of", "2026-01")
        assert r.exit_code == 0, r.output
