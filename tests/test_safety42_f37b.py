"""Hostile pass 37 (tester B, report h37b): the import-skypilot findings N1-N5, m2, m3, m5-m8, m10, m11.

N1/N2: an AWS or GCP AvailabilityZone was judged by a prefix, so 'us-east-1ab', 'use1-az', 'us-central1-1' set the
region's spot price. N3/N4: a RunPod GpuInfo was read by its first GPU only, and counts or memory that are not
numbers passed. N5/m2: an Azure or Lambda size the table did not know was given the SXM board. m11: an AWS GpuInfo
was not held to its row. m10: a RunPod data centre of another country priced the Region. m3/m5: a row left out for
its Region beside a kept row was not said; 'a zone of us-central1-'. m6: GPU counts were written three ways.
m7: a spot of 1e-400 was counted as 'spot price 0'. m8: the instance-type and spot-floor lines counted rows of
regions not written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.skypilot import import_file
from tests.sky_helpers import aws_csv, run_cli, vms_csv

GCP_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
              "AvailabilityZone")
RUNPOD_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Region,SpotPrice,Price,"
                 "AvailabilityZone,GpuInfo")
AZURE_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation"
LAMBDA_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"


_write = vms_csv  # tests.sky_helpers: a provider folder's vms.csv


def _memory() -> dict[str, float]:
    from planner.catalog.loader import load_catalog

    return {g.id: g.memory_bytes / 2**30 for g in load_catalog().gpus}


# -- N1: an AWS zone is a zone name or id of its region, exactly -----------------------------------------------------

BAD_AWS_ZONES = ["us-east-1ab", "us-east-1-x", "us-east-1-bos", "us-east-1-bos-1", "use1-az", "use1-azx",
                 "us-east-1a\u2800", "us-east-1-# comment: {a: b}"]


@pytest.mark.parametrize("zone", BAD_AWS_ZONES)
def test_an_aws_non_zone_is_left_out_and_prices_nothing(tmp_path: Path, zone: str) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64",
                   f'g5.xlarge,A10G,1,4,16,,1.006,0.03,us-east-1,"{zone}",x86_64')
    result = import_file(path)
    (row,) = result.rows
    # only us-east-1a (0.4) is a zone of us-east-1; the 0.03 of line 3 set the spot price before
    assert (row.spot_usd_per_hour, row.spot_usd_per_hour_range) == (0.4, None)
    why = result.skipped["the row on line 3 of g5.xlarge"]
    assert "is not a zone of its Region 'us-east-1'" in why, why


def test_aws_zone_names_and_ids_of_the_region_are_kept(tmp_path: Path) -> None:
    zones = ["us-east-1a", "us-east-1-bos-1a", "us-east-1-wl1-bos-wlz-1", "use1-az4", "use1-bos1-az1", "use1-az12",
             "use1-wl1-bos-wlz1"]
    path = aws_csv(tmp_path, *(f"g5.xlarge,A10G,1,4,16,,1.006,0.{i + 2},us-east-1,{z},x86_64"
                               for i, z in enumerate(zones)))
    result = import_file(path)
    # all seven are forms AWS names us-east-1's zones by: none left out, the spots 0.2 to 0.8 all read
    assert result.skipped == {}
    (row,) = result.rows
    assert row.spot_usd_per_hour_range == (0.2, 0.8)


# -- N2: a GCP zone is REGION-LETTER ---------------------------------------------------------------------------------

@pytest.mark.parametrize("zone", ["us-central1-1", "us-central1-ab", "us-central1-aa", "us-central1-_",
                                  "us-central1-\u0431", "us-central1-b\u2800"])
def test_a_gcp_zone_is_the_region_and_one_letter(tmp_path: Path, zone: str) -> None:
    path = _write(tmp_path, "gcp", GCP_HEADER, "a2-highgpu-1g,,,12,85,,0.9,0.3,us-central1,us-central1-b",
                  ",A100,1,,,,2.9,0.9,us-central1,us-central1-b",
                  f"a2-highgpu-1g,,,12,85,,0.9,0.002,us-central1,{zone}", f",A100,1,,,,2.9,0.001,us-central1,{zone}")
    result = import_file(path)
    (row,) = result.rows
    # us-central1-b's spot 0.3 + 0.9 = 1.2 (the 0.003 of the other "zone" was written before)
    assert row.spot_usd_per_hour == pytest.approx(1.2)
    assert "is not a zone of its Region 'us-central1'" in result.skipped["the row on line 4 of a2-highgpu-1g"]


# -- N3, N4: every GPU of a RunPod GpuInfo is read, and its figures must be numbers -------------------------------

def _info(*gpus: str, total: str = "") -> str:
    return '"{' + "'Gpus': [" + ", ".join(gpus) + "]" + (f", 'TotalGpuMemoryInMiB': {total}" if total else "") + '}"'


def _gpu(name: str = "A100 PCIe", count: str = "1", size: str = "80", extra: str = "") -> str:
    return "{" + f"'Name': '{name}', 'Count': {count}, 'MemoryInfo': {{'SizeInMiB': {size}}}{extra}" + "}"


def _runpod(tmp_path: Path, n: int, info: str, zone: str = "US-GA-1", region: str = "US") -> dict[str, str]:
    path = _write(tmp_path, "runpod", RUNPOD_HEADER,
                  f"{n}x_A100-80GB_SECURE,A100-80GB,{n},8,117,{region},1.39,1.39,{zone},{info}")
    result = import_file(path, gpu_memory=_memory(), region=None if region == "US" else region)
    return {"kept": str(len(result.rows)), **result.skipped}


def test_runpod_gpu_info_second_gpu_of_another_kind_leaves_the_row_out(tmp_path: Path) -> None:
    got = _runpod(tmp_path, 1, _info(_gpu(), _gpu("H100 SXM")))
    # the second GPU, H100 SXM, is not the row's A100-80GB (only the first was read before: kept as an A100)
    assert got["kept"] == "0"
    assert "names 'H100 SXM', which SkyPilot writes as 'H100-SXM', but AcceleratorName is 'A100-80GB'" in \
        got["2x_A100-80GB_SECURE" if "2x_A100-80GB_SECURE" in got else "1x_A100-80GB_SECURE"]


def test_runpod_gpu_info_counts_are_summed(tmp_path: Path) -> None:
    got = _runpod(tmp_path, 2, _info(_gpu(), _gpu()))
    # 1 + 1 = 2 = AcceleratorCount: kept (it was left out as "gives 1 GPU(s)")
    assert got == {"kept": "1"}


@pytest.mark.parametrize(("count", "size", "said"), [
    ("1", "'8'", "SizeInMiB '8'"), ("1", "-80", "SizeInMiB -80"), ("1", "None", "SizeInMiB None"),
    ("1", "True", "SizeInMiB True"), ("True", "80", "Count True"), ("'1'", "80", "Count '1'"),
    ("None", "80", "Count None"), ("-1", "80", "Count -1")])
def test_runpod_gpu_info_figures_that_are_not_numbers_are_unreadable(tmp_path: Path, count: str, size: str,
                                                                     said: str) -> None:
    got = _runpod(tmp_path, 1, _info(_gpu(count=count, size=size)))
    # each was kept before, with no line (a text '8' is 8 GB, 90 % off; True counted as 1)
    assert got["kept"] == "0"
    assert said in got["1x_A100-80GB_SECURE"] and "unreadable" in got["1x_A100-80GB_SECURE"], got


def test_runpod_gpu_info_keys_differing_in_case_total_memory_and_empty_cell(tmp_path: Path) -> None:
    two = _runpod(tmp_path, 1, _info(_gpu(extra=", 'name': 'H100 SXM'")))
    # 'Name' and 'name' in one GPU dict: read case-blind, two GPUs
    assert "'Name', 'name'" in two["1x_A100-80GB_SECURE"] and "names two GPUs" in two["1x_A100-80GB_SECURE"]
    total = _runpod(tmp_path, 1, _info(_gpu(), total="16"))
    # 16 against the one GPU's 80 (x1): the GpuInfo contradicts itself
    assert "TotalGpuMemoryInMiB 16 is not its GPUs' SizeInMiB summed (80)" in total["1x_A100-80GB_SECURE"]
    assert _runpod(tmp_path, 1, _info(_gpu(), total="80")) == {"kept": "1"}
    empty = _runpod(tmp_path, 1, "")
    # fetch_runpod.py writes a GpuInfo on every GPU row (get_gpu_info; a row without one is skipped there)
    assert "no GpuInfo (empty)" in empty["1x_A100-80GB_SECURE"]


# -- m10: a RunPod data centre is of its Region's country ----------------------------------------------------------

@pytest.mark.parametrize(("zone", "region", "kept"), [("US-GA-1", "US", "1"), ("EU-RO-1", "US", "0"),
                                                       ("", "US", "0"), ("EU-RO-1", "RO", "1"),
                                                       ("CA-MTL-1", "CA", "1"), ("US-CA-1", "CA", "0")])
def test_runpod_zone_of_another_country_is_left_out(tmp_path: Path, zone: str, region: str, kept: str) -> None:
    got = _runpod(tmp_path, 1, _info(_gpu()), zone=zone, region=region)
    # fetch_runpod.py REGION_ZONES: US -> US-GA-1, RO -> EU-RO-1, CA -> CA-MTL-1 (US-CA-1 is California, in US)
    assert got["kept"] == kept, got
    if kept == "0":
        why = got["1x_A100-80GB_SECURE"]
        assert ("no AvailabilityZone (empty)" if not zone else "is not a zone of its Region") in why, why


# -- m11: an AWS GpuInfo is held to its row --------------------------------------------------------------------------

def test_aws_gpu_info_naming_another_gpu_or_count_leaves_the_row_out(tmp_path: Path) -> None:
    h100 = ("\"{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}],"
            " 'TotalGpuMemoryInMiB': 655360}\"")
    a10g = ("\"{'Gpus': [{'Name': 'A10G', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}],"
            " 'TotalGpuMemoryInMiB': 24576}\"")
    path = aws_csv(tmp_path, f"g5.xlarge,A10G,1,4,16,{h100},1.006,0.4,us-east-1,us-east-1a,x86_64",
                   f"g5.2xlarge,A10G,1,8,32,{a10g},1.212,0.5,us-east-1,us-east-1a,x86_64",
                   "g5.4xlarge,A10G,1,16,64,,1.624,0.6,us-east-1,us-east-1a,x86_64")
    result = import_file(path, gpu_memory=_memory())
    # g5.xlarge's GpuInfo names H100 x8: left out (written as A10G x1 before); 24576 MiB = 24 GiB = the A10G's;
    # an empty GpuInfo is fine on AWS
    assert [r.instance for r in result.rows] == ["g5.2xlarge", "g5.4xlarge"]
    assert "its GpuInfo names 'H100' but AcceleratorName is 'A10G'" in result.skipped["g5.xlarge"]


# -- N5, m2: a size whose board is not known is not given the SXM one ----------------------------------------------

def test_azure_ncc_h100_is_the_nvl_and_an_unknown_size_is_left_out(tmp_path: Path) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, "Standard_NCC40ads_H100_v5,H100,1,40,320,,6.98,1.0,eastus,",
                  "Standard_NC40ads_H100_v5x,H100,1,40,320,,6.98,1.0,eastus,",
                  "Standard_NC24ads_A100_v4_Promo,A100-80GB,1,24,220,,3.67,1.0,eastus,",
                  "Standard_ND96isr_H100_v5,H100,8,96,1900,,98.3,,eastus,")
    result = import_file(path)
    # NCCads H100 v5 is the confidential twin of NCads H100 v5: an H100 NVL (it was h100-sxm); ND sizes are SXM.
    # A '_Promo' size is its base size (h41b m1, changed from "left out"): NC A100 v4 carries the A100 80GB PCIe
    assert {r.instance: r.gpu for r in result.rows} == {"Standard_NCC40ads_H100_v5": "h100-nvl",
                                                        "Standard_ND96isr_H100_v5": "h100-sxm",
                                                        "Standard_NC24ads_A100_v4_Promo": "a100-80gb-pcie"}
    for inst in ("Standard_NC40ads_H100_v5x",):
        assert "form factor not told by the instance type" in result.skipped[inst], result.skipped


def test_lambda_names_tell_the_board_and_the_count(tmp_path: Path) -> None:
    path = _write(tmp_path, "lambda", LAMBDA_HEADER, "gpu_1x_a100_pcie,A100,1,30,200,1.29,us-east-1,,",
                  "gpu_3x_a100,A100,3,90,600,3.87,us-east-1,,", "gpu_8x_a100,A100,1,30,200,1.29,us-east-1,,",
                  "gpu_1x_h100_pcie,H100,8,26,200,2.49,us-east-1,,")
    result = import_file(path)
    # 'pcie' in the name: the PCIe card (it was a100-40gb-sxm); gpu_3x_a100: no known board; gpu_8x_a100 with
    # AcceleratorCount 1 and gpu_1x_h100_pcie with 8: the name's count is not the row's
    assert {r.instance: r.gpu for r in result.rows} == {"gpu_1x_a100_pcie": "a100-40gb-pcie"}
    assert "form factor not told" in result.skipped["gpu_3x_a100"]
    assert "'gpu_8x_a100' names 8 GPUs, but AcceleratorCount gives 'A100' x1" in result.skipped["gpu_8x_a100"]
    # h38b m5: one GPU is said "1 GPU" (it was "1 GPUs")
    assert "names 1 GPU, but AcceleratorCount gives 'H100' x8" in result.skipped["gpu_1x_h100_pcie"]


# -- m3, m5: a Region that is never a region's is said of every row -------------------------------------------------

def test_a_control_character_or_zone_name_region_beside_a_kept_row_is_said(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64",
                   'g5.xlarge,A10G,1,4,16,,1.006,0.3,"\x1b[31mRED",us-east-1b,x86_64',
                   "g5.xlarge,A10G,1,4,16,,1.006,0.3,us-east-1a,us-east-1b,x86_64")
    result = import_file(path)
    # lines 3 and 4 were dropped with no word beside the kept line 2
    assert "holds U+001B (ESCAPE), a control character" in result.skipped["the row on line 3 of g5.xlarge"]
    assert "'us-east-1a' is an availability zone's name (a zone of us-east-1)" in \
        result.skipped["the row on line 4 of g5.xlarge"]


def test_a_gcp_zone_name_region_is_said_of_its_region_without_the_dash(tmp_path: Path) -> None:
    path = _write(tmp_path, "gcp", GCP_HEADER, "g2-standard-4,,,4,16,,0.5,0.1,us-central1-b,us-central1-b",
                  ",L4,1,,,,0.5,0.1,us-central1-b,us-central1-b")
    why = import_file(path).skipped["g2-standard-4"]
    # 'a zone of us-central1-' before (the AWS form strips one letter; GCP's zone is REGION-LETTER)
    assert "(a zone of us-central1)" in why, why


# -- m6: one form for a GPU and its count ----------------------------------------------------------------------------

def test_gpu_counts_are_written_one_way(tmp_path: Path) -> None:
    path = _write(tmp_path, "gcp", GCP_HEADER, "g2-standard-4,,,4,16,,0.5,,us-east4,us-east4-a",
                  ",L4,1,,,,0.5,,us-central1,us-central1-a")
    why = import_file(path).skipped["g2-standard-4"]
    # "no L4 x1 GPU row" before: the name quoted, the count not, as "names 'A100' x2" writes it
    assert "no 'L4' x1 GPU row in its zone" in why, why


# -- m7, m8: the spot-floor and instance-type lines ------------------------------------------------------------------

def test_a_spot_of_1e_minus_400_is_below_the_floor_not_zero(tmp_path: Path) -> None:
    path = _write(tmp_path, "lambda", LAMBDA_HEADER, "gpu_1x_h100_pcie,H100,1,26,200,2.49,us-east-1,,1e-400")
    result = import_file(path)
    # 1e-400 is written with a digit that is not 0: below the floor, counted there, not as "spot price 0"
    assert (result.spot_floor_lines, result.no_spot_lines) == (["2"], [])


def test_case_and_floor_lines_count_only_rows_of_the_region_written(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "G5.XLARGE,A10G,1,4,16,,1.006,0.0005,us-east-1,us-east-1a,x86_64",
                   "G5.XLARGE,A10G,1,4,16,,1.2,0.0005,us-west-2,us-west-2a,x86_64")
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    said = " ".join(out.split())
    # us-east-1 is written (cheaper); line 3 is of us-west-2, not written: counted in neither line (it was in both)
    assert code == 0, out
    assert "instance type in upper case written in lower case, as the cloud names it: 1 row(s) (line 2)" in said
    assert "read as no spot offer: 1 row(s) (line 2)" in said
