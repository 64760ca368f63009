"""Hostile pass 38 (tester B, report h38b): the import-skypilot findings N1-N3, N5-N7, m1-m5, m7.

N1: a zone holding U+212A KELVIN SIGN (which lower-cases to ASCII 'k') passed the ASCII check. N2: a Lambda name's
memory ('_40gb') was not held to AcceleratorName. N3: an Azure NC/ND size naming one GPU family was written as the
SXM board of another GPU the row named. N5: p4de/p5en/p3dn's GpuInfo was not checked at all. N6: a Region that is a
Local Zone, zone id or RunPod data centre was not said as a zone, and ``--region`` of one was written. N7: RunPod's
'8x_A100-80GB_SECURE' was not held to the row. m1: a lookalike region in the same zone hid the real one from
``--region``'s note. m2: GpuInfo case twins at the top level and a missing memory passed. m3: Count 1.0 was "not
whole". m4: the grouped summary showed fragments of the sentence as values. m5: Lambda 'pcie_sxm', 'nosxm', a second
count. m7: 'L4' x1.0.
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
AZURE_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region"
LAMBDA_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"
KELVIN = "\u212a"


_write = vms_csv  # tests.sky_helpers: a provider folder's vms.csv


def _memory() -> dict[str, float]:
    from planner.catalog.loader import load_catalog

    return {g.id: g.memory_bytes / 2**30 for g in load_catalog().gpus}


def _rp_gi(name: str = "A100 PCIe", count: int = 1, size: int = 80) -> str:
    return (f"\"{{'Gpus': [{{'Name': '{name}', 'Manufacturer': 'Nvidia', 'Count': {count}, 'MemoryInfo': "
            f"{{'SizeInMiB': {size}}}}}], 'TotalGpuMemoryInMiB': {size * count}}}\"")


def _aws_gi(name: str = "A10G", count: object = 1, mib: object = 24576, extra: str = "") -> str:
    total = mib * count if isinstance(mib, int) and isinstance(count, int) else mib  # type: ignore[operator]
    return (f"\"{{'Gpus': [{{'Name': '{name}', 'Manufacturer': 'NVIDIA', 'Count': {count}, 'MemoryInfo': "
            f"{{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': {total}{extra}}}\"")


# -- N1: a zone is judged ASCII as written, before any case folding -------------------------------------------------

def test_a_gcp_zone_with_a_kelvin_sign_is_left_out(tmp_path: Path) -> None:
    path = _write(tmp_path, "gcp", GCP_HEADER,
                  "g2-standard-4,L4,1.0,4.0,16.0,L4,0.14631,0.05851,us-east4,us-east4-a",
                  ",L4,1.0,,,L4,0.55821,0.2233,us-east4,us-east4-a",
                  f"g2-standard-4,L4,1.0,4.0,16.0,L4,0.14631,0.01,us-east4,us-east4-{KELVIN}",
                  f",L4,1.0,,,L4,0.55821,0.01,us-east4,us-east4-{KELVIN}")
    result = import_file(path)
    (row,) = result.rows
    # only us-east4-a prices it: spot 0.05851 + 0.2233 = 0.28181 (the lookalike zone's 0.01 + 0.01 gave 0.02)
    assert row.spot_usd_per_hour == pytest.approx(0.28181)
    assert "is not a zone of its Region" in result.skipped["the row on line 4 of g2-standard-4"]


@pytest.mark.parametrize("zone", [f"us-east-1{KELVIN}", f"us-east-1-{KELVIN}bos-1a"])
def test_an_aws_zone_with_a_kelvin_sign_is_left_out(tmp_path: Path, zone: str) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64",
                   f"g5.xlarge,A10G,1,4,16,,1.006,0.01,us-east-1,{zone},x86_64")
    result = import_file(path)
    (row,) = result.rows
    assert row.spot_usd_per_hour == 0.4  # us-east-1a's; the 0.01 of the lookalike zone was written
    assert "is not a zone of its Region" in result.skipped["the row on line 3 of g5.xlarge"]


def test_a_runpod_zone_with_a_kelvin_sign_is_left_out(tmp_path: Path) -> None:
    path = _write(tmp_path, "runpod", RUNPOD_HEADER,
                  "1x_A100-80GB_SECURE,A100-80GB,1.0,8.0,117.0,US,1.0,1.39,US-GA-1," + _rp_gi(),
                  f"1x_A100-80GB_SECURE,A100-80GB,1.0,8.0,117.0,US,0.5,1.39,US-{KELVIN}S-1," + _rp_gi())
    result = import_file(path, gpu_memory=_memory())
    (row,) = result.rows
    assert row.spot_usd_per_hour == 1.0  # US-GA-1's; 'US-KS-1' written with U+212A set 0.5
    assert "is not a zone of its Region" in result.skipped["the row on line 3 of 1x_A100-80GB_SECURE"]


# -- N2 / m5: Lambda names: memory, form factor, counts ------------------------------------------------------------

def test_a_lambda_name_memory_must_agree_with_the_accelerator(tmp_path: Path) -> None:
    path = _write(tmp_path, "lambda", LAMBDA_HEADER, "gpu_1x_a100_40gb_sxm4,A100-80GB,1,26.0,200.0,2.49,us-east-1,,",
                  "gpu_1x_a100_sxm4_80gb,A100,1,26.0,200.0,2.49,us-east-1,,",
                  "gpu_8x_a100_80gb_sxm4,A100-80GB,8,124,1800,14.32,us-east-1,,")
    result = import_file(path)
    # 'A100' is the 40 GB card, 'A100-80GB' the 80 GB one: the first two contradict their names, the third agrees
    assert [(r.instance, r.gpu) for r in result.rows] == [("gpu_8x_a100_80gb_sxm4", "a100-80gb-sxm")]
    assert "names 40 GB, but AcceleratorName gives 'A100-80GB'" in result.skipped["gpu_1x_a100_40gb_sxm4"]
    assert "names 80 GB, but AcceleratorName gives 'A100'" in result.skipped["gpu_1x_a100_sxm4_80gb"]


def test_lambda_form_factor_words_and_counts(tmp_path: Path) -> None:
    path = _write(tmp_path, "lambda", LAMBDA_HEADER, "gpu_1x_h100_pcie_sxm,H100,1,26,200,2.49,us-east-1,,",
                  "gpu_1x_h100_nosxm,H100,1,26,200,2.49,us-east-1,,",
                  "gpu_2x_8x_h100_sxm5,H100,2,26,200,2.49,us-east-1,,",
                  "gpu_1x_h100_sxm5,H100,1,26,200,2.49,us-east-1,,")
    result = import_file(path)
    # both forms: none told; 'nosxm' is no 'sxm' word; two counts (2x, 8x): which cannot be told
    assert [(r.instance, r.gpu) for r in result.rows] == [("gpu_1x_h100_sxm5", "h100-sxm")]
    assert "form factor not told" in result.skipped["gpu_1x_h100_pcie_sxm"]
    assert "form factor not told" in result.skipped["gpu_1x_h100_nosxm"]
    assert "names 2 GPU counts (2, 8x)" in result.skipped["gpu_2x_8x_h100_sxm5"]


# -- N3: an Azure size's GPU family ---------------------------------------------------------------------------------

@pytest.mark.parametrize("size, acc, family", [
    ("Standard_NC40ads_H100_v5", "H200", "H100"), ("Standard_NCC40ads_H100_v5", "A100", "H100"),
    ("Standard_NC24ads_A100_v4", "H100", "A100"), ("Standard_NC80adis_H100_v5", "A100-80GB", "H100"),
    ("Standard_NC24ads_A100_v4", "H200", "A100"), ("Standard_ND96isr_H100_v5", "A100-80GB", "H100"),
    ("Standard_ND96asr_v4", "H100", "A100"),
])
def test_an_azure_size_naming_another_gpu_family_is_left_out(tmp_path: Path, size: str, acc: str,
                                                             family: str) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, f"{size},{acc},1,40,320,x,6.98,2.1,eastus")
    result = import_file(path)
    assert result.rows == []  # was written as the SXM board of the GPU the row names
    assert f"carries {family} GPUs, but AcceleratorName gives '{acc}'" in result.skipped[size]


def test_an_azure_size_of_its_own_family_is_kept(tmp_path: Path) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, "Standard_NC40ads_H100_v5,H100,1,40,320,,6.98,2.1,eastus",
                  "Standard_ND96isr_H100_v5,H100,8,96,1900,,98.32,,eastus")
    assert {r.instance: r.gpu for r in import_file(path).rows} == {
        "Standard_NC40ads_H100_v5": "h100-nvl", "Standard_ND96isr_H100_v5": "h100-sxm"}


# -- N5: AWS renamed types are exempt from the rename only ---------------------------------------------------------

def test_aws_renamed_types_still_hold_their_gpu_info(tmp_path: Path) -> None:
    path = aws_csv(tmp_path,
                   "p5en.48xlarge,H200,8,192,2048," + _aws_gi("H200", 2, 143360) + ",63,20,us-east-1,us-east-1a,x86_64",
                   "p4de.24xlarge,A100-80GB,8,96,1152," + _aws_gi("A100", 1, 81920) + ",40.96,10,us-east-1,us-east-1a,"
                   "x86_64",
                   "p3dn.24xlarge,V100-32GB,8,96,768," + _aws_gi("V100", 8, 32768) + ",31.2,9,us-east-1,us-east-1a,"
                   "x86_64")
    result = import_file(path)
    # p5en: H200 x2 against 8; p4de: A100 x1 against 8 (each was written x8, nothing said)
    assert "gives 'H200' x2, but AcceleratorCount is 8" in result.skipped["p5en.48xlarge"]
    assert "gives 'A100-80GB' x1, but AcceleratorCount is 8" in result.skipped["p4de.24xlarge"]
    # p3dn's 'V100' is exactly the rename to 'V100-32GB': not a contradiction (V100-32GB has no catalog entry, so
    # it is left out for that, not for its GpuInfo)
    assert "GpuInfo" not in result.skipped.get("p3dn.24xlarge", "")


def test_aws_p4de_naming_another_gpu_than_the_renamed_one_is_left_out(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "p4de.24xlarge,A100-80GB,8,96,1152," + _aws_gi("H100", 8, 81920)
                   + ",40.96,10,us-east-1,us-east-1a,x86_64")
    result = import_file(path)
    # the fetcher renames p4de's 'A100' only; an 'H100' GpuInfo is another GPU
    assert "names 'H100' but AcceleratorName is 'A100-80GB'" in result.skipped["p4de.24xlarge"], result.skipped


def test_aws_p4de_with_the_renamed_name_is_kept(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "p4de.24xlarge,A100-80GB,8,96,1152," + _aws_gi("A100", 8, 81920)
                   + ",40.96,10,us-east-1,us-east-1a,x86_64")
    (row,) = import_file(path).rows
    assert (row.gpu, row.gpu_count) == ("a100-80gb-sxm", 8)


# -- N6: a Region of a zone's name of any form ------------------------------------------------------------------------

@pytest.mark.parametrize("region, of", [("us-east-1-bos-1a", "us-east-1"), ("use1-az4", "us-east-1"),
                                        ("us-east-1-wl1-bos-wlz-1", "us-east-1"), ("apse1-az2", "ap-southeast-1")])
def test_an_aws_zone_name_region_is_said_for_every_row(tmp_path: Path, region: str, of: str) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64",
                   f"g5.xlarge,A10G,1,4,16,,0.9,0.3,{region},{region},x86_64")
    result = import_file(path)
    (row,) = result.rows
    assert row.usd_per_hour == 1.006  # not the zone-named Region's 0.9
    why = result.skipped["the row on line 3 of g5.xlarge"]  # beside a kept row: said (it was not)
    assert f"is an availability zone's name (a zone of {of})" in why, why


def test_a_region_option_naming_a_local_zone_is_answered_with_its_region(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64",
                   "g5.2xlarge,A10G,1,8,32,,0.9,0.3,us-east-1-bos-1a,us-east-1-bos-1a,x86_64")
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"),
                        "--region", "us-east-1-bos-1a")
    said = " ".join(out.split())
    assert code != 0 and not (tmp_path / "o" / "cloud.yaml").exists(), out  # it wrote the zone as a region
    assert "it is an availability zone of region us-east-1" in said and "give --region us-east-1" in said, out


def test_runpod_data_centre_region_is_a_zone(tmp_path: Path) -> None:
    path = _write(tmp_path, "runpod", RUNPOD_HEADER,
                  "1x_A100-80GB_SECURE,A100-80GB,1.0,8.0,117.0,US-GA-1,0.7,1.39,US-GA-1," + _rp_gi())
    result = import_file(path, gpu_memory=_memory())
    assert "is an availability zone's name (a zone of US)" in result.skipped["1x_A100-80GB_SECURE"]
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"), "--region", "US-GA-1")
    assert code != 0 and "give --region US" in " ".join(out.split()), out


# -- N7: RunPod names carry the count and GPU -------------------------------------------------------------------------

def test_runpod_type_name_must_agree_with_the_row(tmp_path: Path) -> None:
    path = _write(tmp_path, "runpod", RUNPOD_HEADER,
                  "8x_A100-80GB_SECURE,A100-80GB,1.0,8.0,117.0,US,0.7,1.39,US-GA-1," + _rp_gi(),
                  "1x_H100-SXM_SECURE,A100-80GB,1.0,8.0,117.0,US,0.7,1.39,US-GA-1," + _rp_gi(),
                  "2x_A100-80GB_SECURE,A100-80GB,2.0,16.0,234.0,US,1.4,2.78,US-GA-1," + _rp_gi(count=2))
    result = import_file(path, gpu_memory=_memory())
    assert [r.instance for r in result.rows] == ["2x_A100-80GB_SECURE"]
    assert "names 8 GPUs, but AcceleratorCount gives 'A100-80GB' x1" in result.skipped["8x_A100-80GB_SECURE"]
    assert "names 'H100-SXM', but AcceleratorName gives 'A100-80GB'" in result.skipped["1x_H100-SXM_SECURE"]


# -- m1: --region beside a lookalike in the same zone ---------------------------------------------------------------

@pytest.mark.parametrize("lookalike", ["K\u0405", f"{KELVIN}R"])
def test_a_lookalike_region_does_not_hide_the_region_asked(tmp_path: Path, lookalike: str) -> None:
    path = _write(tmp_path, "runpod", RUNPOD_HEADER,
                  "1x_A100-80GB_SECURE,A100-80GB,1.0,8.0,117.0,KR,0.7,1.39,AP-KR-1," + _rp_gi(),
                  f"2x_A100-80GB_SECURE,A100-80GB,2.0,8.0,117.0,{lookalike},0.5,2.78,AP-KR-1," + _rp_gi(count=2))
    result = import_file(path, region="KR", gpu_memory=_memory())
    assert [r.instance for r in result.rows] == ["1x_A100-80GB_SECURE"]
    assert result.region_note is None  # it said "'KR' is no region of the file (its regions: KЅ)"


def test_a_region_option_is_never_offered_a_lookalike(tmp_path: Path) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, "Standard_NC40ads_H100_v5,H100,1,40,320,,6.98,2.1,uksouth",
                  f"Standard_NC80adis_H100_v5,H100,2,80,640,,13.96,4.2,u{KELVIN}west")
    result = import_file(path, region="ukwest")
    assert result.region_note is not None and KELVIN not in result.region_note, result.region_note
    # only uksouth is offered; the Kelvin-sign 'uKwest' (which --region refuses when pasted) was suggested
    assert "--region uksouth" in result.region_note, result.region_note


# -- m2 / m3: AWS GpuInfo ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("info, said", [
    (_aws_gi(extra=", 'gpus': [{'Name': 'H100', 'Count': 8}]"), "names a key twice in different case"),
    (_aws_gi(extra=", 'totalGpuMemoryInMiB': 9"), "names a key twice in different case"),
    ("\"{'Gpus': [{'Name': 'A10G', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576, 'sizeInMiB': 1}}], "
     "'TotalGpuMemoryInMiB': 24576}\"", "names a key twice in different case"),
    ("\"{'Gpus': [{'Name': 'A10G', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}], 'TotalGpuMemoryInMiB': None}\"",
     "TotalGpuMemoryInMiB None"),
    ("\"{'Gpus': [{'Name': 'A10G', 'Count': 1}], 'TotalGpuMemoryInMiB': 24576}\"", "no MemoryInfo SizeInMiB"),
])
def test_aws_gpu_info_twins_and_missing_memory_are_left_out(tmp_path: Path, info: str, said: str) -> None:
    path = aws_csv(tmp_path, f"g5.xlarge,A10G,1,4,16,{info},1.006,0.4,us-east-1,us-east-1a,x86_64")
    result = import_file(path)
    assert result.rows == []
    assert said in result.skipped["g5.xlarge"], result.skipped


def test_aws_gpu_info_count_one_point_zero_is_whole(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16," + _aws_gi(count="1.0", mib=24576) +
                   ",1.006,0.4,us-east-1,us-east-1a,x86_64")
    result = import_file(path)
    assert [r.instance for r in result.rows] == ["g5.xlarge"], result.skipped  # "not a whole number" before


# -- m4: grouped summary values -------------------------------------------------------------------------------------

def test_grouped_gpu_info_values_are_whole_values() -> None:
    from planner.catalog.import_summary import left_out_lines

    skipped = {f"g5.{i}xlarge": f"line {i + 2}: its GpuInfo's Count {v} for 'A10G' is not a whole number of GPUs: "
               "unreadable" for i, v in enumerate(["1.5", "(1+0j)", "2.5"])}
    (line,) = left_out_lines(skipped)
    # the first row's reason whole, the others by their own values: (1+0j) and 2.5, not "'s Count (1+0j) for '"
    assert "line 3: g5.1xlarge (1+0j)" in line and "line 4: g5.2xlarge 2.5" in line, line
    assert "'s Count" not in line.split("unreadable", 1)[1], line


# -- m7: counts written as whole numbers ----------------------------------------------------------------------------

def test_gcp_count_mismatch_is_said_as_a_whole_number(tmp_path: Path) -> None:
    path = _write(tmp_path, "gcp", GCP_HEADER, "g2-standard-24,L4,1.0,8,32.0,L4,0.2,0.1,us-east4,us-east4-b",
                  ",L4,1.0,,,L4,0.55821,0.2233,us-east4,us-east4-b")
    why = import_file(path).skipped["g2-standard-24"]
    assert "the row names 'L4' x1, but machine type g2-standard-24 carries 'L4' x2" in why, why  # was x1.0


def test_grouped_unreadable_gpu_info_is_shown_as_one_value(tmp_path: Path) -> None:
    from planner.catalog.import_summary import left_out_lines

    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,\"{'Gpus': 5}\",1.006,0.4,us-east-1,us-east-1a,x86_64",
                   "g5.2xlarge,A10G,1,8,32,\"{'Gpus': 6}\",1.2,0.5,us-east-1,us-east-1a,x86_64")
    (line,) = left_out_lines(import_file(path).skipped)
    # the GpuInfo is quoted with ", so the second row's value is the whole GpuInfo (it was "': [{'"-like fragments)
    assert "line 3: g5.2xlarge \"{'Gpus': 6}\"" in line, line


def test_a_kelvin_sign_zone_is_not_folded_into_its_ascii_twin(tmp_path: Path) -> None:
    # 'us-east-1\u212a' lower-cased is 'us-east-1k': the two rows were one zone to the duplicate check, so the file
    # was refused as two rows of one zone; folded only where ASCII, the lookalike row is left out by itself
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1k,x86_64",
                   f"g5.xlarge,A10G,1,4,16,,1.006,0.01,us-east-1,us-east-1{KELVIN},x86_64")
    result = import_file(path)
    (row,) = result.rows
    assert row.spot_usd_per_hour == 0.4
    assert "is not a zone of its Region" in result.skipped["the row on line 3 of g5.xlarge"]
