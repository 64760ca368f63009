"""Issue 28, hostile pass 31: h31b M1 (import-skypilot took ``--source REF:NOPE``, an id no SOURCES.md defines, and
wrote a cloud.yaml that ``planner catalog check --catalog OUT`` then failed) and M2 (the grouped summary of left-out
rows misstated the rows' values). Covered: a ``--source`` citing an undefined ``REF:`` id is refused in one line,
exit 2, before anything is written, with the close id; one defined in the shipped catalog's SOURCES.md or in
OUT/SOURCES.md is taken, and plain text is untouched."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
_ROWS = ("gpu_1x_a100_sxm4,A100,1.0,30.0,200.0,1.29,us-east-1,,\n"
         "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,us-east-1,,\n")


def _vms(tmp_path: Path, rows: str = _ROWS) -> Path:
    path = tmp_path / "lambda" / "vms.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_HEADER + rows, encoding="utf-8")
    return path


def _import(tmp_path: Path, *extra: str, rows: str = _ROWS):
    from planner.cli.main import main

    args = ["catalog", "import-skypilot", str(_vms(tmp_path, rows)), "--out", str(tmp_path / "o"),
            "--as-of", "2026-11", *extra]
    return CliRunner().invoke(main, args)


# ----- M1: a --source citing a REF: id -----

def test_an_undefined_ref_in_source_is_refused_before_writing(tmp_path):
    r = _import(tmp_path, "--source", "REF:NOPE")
    assert r.exit_code == 2, r.output
    assert not (tmp_path / "o" / "cloud.yaml").exists()
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1, r.output
    assert "Traceback" not in r.output
    assert "--source" in lines[0] and "REF:NOPE" in lines[0]
    assert f"{tmp_path / 'o' / 'SOURCES.md'}" in lines[0]


def test_a_near_miss_of_a_shipped_id_is_hinted(tmp_path):
    r = _import(tmp_path, "--source", "REF:SKY-SCHEMA-v9, read 2026-11")
    assert r.exit_code == 2, r.output
    assert "did you mean REF:SKY-SCHEMA-v8?" in r.output  # the shipped catalog/SOURCES.md defines SKY-SCHEMA-v8


def test_a_shipped_id_is_taken_and_the_overlay_passes_the_check(tmp_path):
    from planner.cli.main import main

    r = _import(tmp_path, "--source", "REF:SKY-SCHEMA-v8, read 2026-11")
    assert r.exit_code == 0, r.output
    check = CliRunner().invoke(main, ["catalog", "check", "--catalog", str(tmp_path / "o")])
    assert "REF:SKY-SCHEMA-v8" not in "".join(x for x in check.output.splitlines() if "FAIL" in x)


def test_an_id_defined_in_out_sources_md_is_taken(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "SOURCES.md").write_text(
        "| id | document | where |\n|---|---|---|\n| NOPE | My price list | https://example.com/prices |\n",
        encoding="utf-8")
    r = _import(tmp_path, "--source", "REF:NOPE")
    assert r.exit_code == 0, r.output
    assert "REF:NOPE" in (tmp_path / "o" / "cloud.yaml").read_text(encoding="utf-8")


def test_plain_text_source_is_untouched(tmp_path):
    r = _import(tmp_path, "--source", "SkyPilot catalog, read 2026-11")
    assert r.exit_code == 0, r.output
