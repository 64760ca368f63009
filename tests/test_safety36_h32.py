"""Issue 28, hostile pass 32: N1 of tester B (an input file's path holding 'REF:<id>' made the default source of
every imported row cite a reference, so 'planner catalog check --catalog OUT' failed the overlay the import had
written with exit 0). The default source is refused then, before anything is written; --source is the way out."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from planner.cli.main import main

_AWS = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
        "AvailabilityZone\ng5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a\n")


def _csv(tmp_path: Path, folder: str) -> Path:
    path = tmp_path / "g" / folder / "aws" / "vms.csv"
    path.parent.mkdir(parents=True)
    path.write_text(_AWS)
    return path


def test_a_path_citing_a_reference_is_no_default_source(tmp_path: Path) -> None:
    csv = _csv(tmp_path, "REF:SKY-AWS-v8x")
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(csv), "--out", str(tmp_path / "o"),
                                  "--as-of", "2026-11-01"])
    assert r.exit_code == 2, r.output
    assert r.output == (f"Error: {csv}: the default source of its rows names the file's path, which holds "
                        "'REF:SKY-AWS-v8x': 'planner catalog check' would read it as a citation of a reference. Give "
                        "the rows a source of your own, e.g. --source 'SkyPilot catalog, 2026-11-01'.\n")
    assert not (tmp_path / "o").exists()


def test_with_a_source_of_its_own_the_import_passes_catalog_check(tmp_path: Path) -> None:
    csv = _csv(tmp_path, "REF:NOPE")
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(csv), "--out", str(out), "--source",
                                  "SkyPilot catalog v8, aws"])
    assert r.exit_code == 0, r.output
    check = CliRunner().invoke(main, ["catalog", "check", "--catalog", str(out)])
    assert check.exit_code == 0, check.output
