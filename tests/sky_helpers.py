"""Helpers the import-skypilot tests share: an AWS vms.csv (SkyPilot catalog v8 columns) of given rows, and a CLI
run that returns the exit code and the output."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from planner.cli.main import main

#: The columns of SkyPilot's catalogs/v8/aws/vms.csv, and one g5.xlarge row (1 x A10G, 4 vCPUs, 16 GiB).
HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
          "AvailabilityZone,Arch")
G5 = "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64"


def aws_csv(tmp_path: Path, *rows: str) -> Path:
    """``tmp_path/aws/vms.csv`` holding :data:`HEADER` and ``rows``."""
    d = tmp_path / "aws"
    d.mkdir(exist_ok=True)
    path = d / "vms.csv"
    path.write_text("\n".join((HEADER, *rows)) + "\n", encoding="utf-8")
    return path


def run_cli(*args: str) -> tuple[int, str]:
    """``planner ARGS`` in-process: (exit code, standard output and error)."""
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def vms_csv(tmp_path: Path, provider: str, header: str, *rows: str) -> Path:
    """``tmp_path/provider/vms.csv`` holding ``header`` and ``rows`` (UTF-8, one per line), as SkyPilot lays out a
    provider's file (the provider told by the folder's name)."""
    d = tmp_path / provider
    d.mkdir(exist_ok=True)
    path = d / "vms.csv"
    path.write_text("\n".join((header, *rows)) + "\n", encoding="utf-8")
    return path
