"""Hostile pass 39 (tester B, report h39b): the import-skypilot findings N1, N5, N11 and m6.

N1: a Lambda row's GpuInfo was not read, so one naming another GPU or count was written. N5: an Azure size whose
name carries its GPU family (Standard_NC4as_T4_v3) was written as another GPU the row named (A10). N11: an Azure
size's board (ND: SXM, NC A100 v4: PCIe, NC H100 v5: NVL) was not held to an AcceleratorName naming another board
of that GPU (H100-NVL on ND H100 v5 was written as NVL). m6: ND96amsr_A100_v4 (the 80 GB A100) named 'A100' (the
40 GB card) was written as the 40 GB SXM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sky_helpers import vms_csv

from planner.catalog.skypilot import import_file

AZURE_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region"
LAMBDA_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"


_write = vms_csv  # tests.sky_helpers: a provider folder's vms.csv


def _memory() -> dict[str, float]:
    from planner.catalog.loader import load_catalog

    return {g.id: g.memory_bytes / 2**30 for g in load_catalog().gpus}


def _lambda_gi(name: str = "A100", count: object = 1.0, mib: object = 40960, total: object = 40960,
               keys: tuple[str, ...] = ("Gpus", "Name", "Count", "MemoryInfo", "SizeInMiB")) -> str:
    # the GpuInfo SkyPilot's Lambda fetcher writes (fetch_lambda_cloud.py create_catalog): one GPU dict, Count a
    # float, TotalGpuMemoryInMiB one GPU's memory (not the sum)
    g, n, c, m, s = keys
    return (f"\"{{'{g}': [{{'{n}': '{name}', 'Manufacturer': 'NVIDIA', '{c}': {count}, '{m}': {{'{s}': {mib}}}}}], "
            f"'TotalGpuMemoryInMiB': {total}}}\"")


# -- N1: a Lambda row's GpuInfo is read ------------------------------------------------------------------------------

@pytest.mark.parametrize("info, said", [
    # the tester's repro: a GpuInfo of 8 H100s on a 1 x A100 row
    (_lambda_gi("H100", 8, 81920, 655360, ("gpus", "name", "count", "memoryInfo", "sizeInMiB")),
     "is not the dict SkyPilot writes"),
    (_lambda_gi("H100", 1.0, 81920, 81920), "its GpuInfo names 'H100' but AcceleratorName is 'A100'"),
    (_lambda_gi("A100", 1.5), "Count 1.5 for 'A100' is not a whole number"),
    (_lambda_gi("A100", 2.0, 40960, 81920), "its GpuInfo gives 'A100' x2, but AcceleratorCount is 1"),
    (_lambda_gi("A100", 1.0, None), "SizeInMiB None for 'A100'"),
    # 80 GiB per GPU on an A100 row: a100-40gb-sxm is 40 GiB, 80 is more than 10 % off
    (_lambda_gi("A100", 1.0, 81920, 81920), "its GpuInfo gives 80 GiB per GPU"),
    ("\"{'Gpus': [{'Name': 'A100', 'name': 'H100', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 40960}}], "
     "'TotalGpuMemoryInMiB': 40960}\"", "names a key twice in different case"),
])
def test_a_lambda_gpu_info_contradicting_the_row_is_left_out(tmp_path: Path, info: str, said: str) -> None:
    path = _write(tmp_path, "lambda", LAMBDA_HEADER, f"gpu_1x_a100_sxm4,A100,1,30,200,1.29,us-east-1,{info},")
    result = import_file(path, gpu_memory=_memory())
    assert result.rows == []  # was written as a100-40gb-sxm x1, the GpuInfo unread
    assert said in result.skipped["gpu_1x_a100_sxm4"]


def test_a_lambda_gpu_info_as_the_fetcher_writes_it_is_kept(tmp_path: Path) -> None:
    # v8's gpu_4x_a6000 and gpu_8x_a100_80gb_sxm4 as SkyPilot writes them: the total is one GPU's memory (49152,
    # 81920), not the sum; an empty GpuInfo (hand-made files) is not read
    path = _write(tmp_path, "lambda", LAMBDA_HEADER,
                  f"gpu_4x_a6000,A6000,4.0,56,400,4.36,us-east-1,{_lambda_gi('A6000', 4.0, 49152, 49152)},",
                  f"gpu_8x_a100_80gb_sxm4,A100-80GB,8.0,124,1800,14.32,us-east-1,"
                  f"{_lambda_gi('A100-80GB', 8.0, 81920, 81920)},",
                  "gpu_1x_a10,A10,1.0,30,200,0.75,us-east-1,,")
    result = import_file(path, gpu_memory=_memory())
    assert {r.instance: (r.gpu, r.gpu_count) for r in result.rows} == {
        "gpu_4x_a6000": ("rtx-a6000", 4), "gpu_8x_a100_80gb_sxm4": ("a100-80gb-sxm", 8), "gpu_1x_a10": ("a10", 1)}


# -- N5: every Azure family the table knows holds its GPU ------------------------------------------------------------

@pytest.mark.parametrize("size, acc, family", [
    ("Standard_NC4as_T4_v3", "A10", "T4"),  # the tester's repro
    ("Standard_NV36ads_A10_v5", "T4", "A10"),
    ("Standard_NV36ads_A10_v5", "A10G", "A10"),  # 'a10g' starts with 'a10': the family is a whole word
    ("Standard_ND96isr_MI300X_v5", "L40S", "MI300X"),
    ("Standard_NC6s_v3", "T4", "V100"),  # NCv3 names no GPU but carries V100s
    ("Standard_ND40rs_v2", "A10", "V100"),  # NDv2: 8 x V100
])
def test_an_azure_size_of_another_known_family_is_left_out(tmp_path: Path, size: str, acc: str, family: str) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, f"{size},{acc},1,40,320,,6.98,2.1,eastus")
    result = import_file(path)
    assert result.rows == []  # was written as the GPU AcceleratorName names
    assert f"carries {family} GPUs, but AcceleratorName gives '{acc}'" in result.skipped[size]


def test_azure_sizes_of_their_own_family_are_kept(tmp_path: Path) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, "Standard_NC4as_T4_v3,T4,1,4,28,,0.526,0.05,eastus",
                  "Standard_NV36ads_A10_v5,A10,1,36,440,,3.2,0.6,eastus")
    assert {r.instance: r.gpu for r in import_file(path).rows} == {
        "Standard_NC4as_T4_v3": "t4", "Standard_NV36ads_A10_v5": "a10"}


# -- N11 / m6: the size decides the board and the A100's memory ------------------------------------------------------

@pytest.mark.parametrize("size, acc, said", [
    ("Standard_ND96isr_H100_v5", "H100-NVL", "carries the SXM board, but AcceleratorName gives 'H100-NVL', the NVL"),
    ("Standard_NC24ads_A100_v4", "A100-80GB-SXM", "carries the PCIe board, but AcceleratorName gives 'A100-80GB-SXM'"),
    ("Standard_NC40ads_H100_v5", "H100-SXM", "carries the NVL board, but AcceleratorName gives 'H100-SXM'"),
    ("Standard_ND96amsr_A100_v4", "A100", "carries the A100 80GB, but AcceleratorName gives 'A100', the 40 GB card"),
    ("Standard_ND96asr_v4", "A100-80GB", "carries the A100 40GB, but AcceleratorName gives 'A100-80GB', the 80 GB"),
])
def test_an_azure_size_naming_another_board_is_left_out(tmp_path: Path, size: str, acc: str, said: str) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, f"{size},{acc},8,96,1900,,98.32,,eastus")
    result = import_file(path)
    assert result.rows == []  # was written as the named board (h100-nvl) or silently as the size's own
    assert said in result.skipped[size]


def test_azure_sizes_with_their_own_board_are_kept(tmp_path: Path) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, "Standard_ND96amsr_A100_v4,A100-80GB,8,96,1900,,32.77,,eastus",
                  "Standard_ND96asr_v4,A100,8,96,900,,27.2,,eastus",
                  "Standard_ND96isr_H200_v5,H200-SXM,8,96,1850,,110.0,,eastus")
    assert {r.instance: r.gpu for r in import_file(path).rows} == {
        "Standard_ND96amsr_A100_v4": "a100-80gb-sxm", "Standard_ND96asr_v4": "a100-40gb-sxm",
        "Standard_ND96isr_H200_v5": "h200-sxm"}


# -- m12: an Azure size of a fixed count holds it -------------------------------------------------------------------

@pytest.mark.parametrize("size, acc, count, fixed", [
    ("Standard_NC40ads_H100_v5", "H100", 8, "1 GPU"),  # the tester's repro: a one-GPU size
    ("Standard_ND96isr_H100_v5", "H100", 4, "8 GPUs"),  # an eight-GPU size
    ("Standard_NC48ads_A100_v4", "A100-80GB", 1, "2 GPUs"),
])
def test_an_azure_size_with_another_count_is_left_out(tmp_path: Path, size: str, acc: str, count: int,
                                                      fixed: str) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, f"{size},{acc},{count},40,320,,6.98,2.1,eastus")
    result = import_file(path)
    assert result.rows == []  # was written with the row's count
    assert f"carries {fixed}, but AcceleratorCount gives '{acc}' x{count}" in result.skipped[size]


def test_an_azure_size_with_its_own_count_is_kept(tmp_path: Path) -> None:
    path = _write(tmp_path, "azure", AZURE_HEADER, "Standard_NC80adis_H100_v5,H100,2,80,640,,13.96,,eastus",
                  "Standard_NC64as_T4_v3,T4,4,64,440,,4.35,,eastus")
    assert {r.instance: r.gpu_count for r in import_file(path).rows} == {
        "Standard_NC80adis_H100_v5": 2, "Standard_NC64as_T4_v3": 4}


@pytest.mark.parametrize("inst, acc", [("gpu_1x_h100_pcie", "H100-SXM"), ("gpu_8x_h100_sxm5", "H100-NVL")])
def test_a_lambda_name_and_an_accelerator_naming_other_boards_leave_the_row_out(tmp_path: Path, inst: str,
                                                                                acc: str) -> None:
    # h39b 14: 'gpu_1x_h100_pcie' named 'H100-SXM' was written as the SXM board
    from planner.catalog.skypilot import import_file

    count = 8 if "8x" in inst else 1
    path = _write(tmp_path, "lambda", LAMBDA_HEADER, f"{inst},{acc},{count},26,200,2.49,us-east-1,,")
    result = import_file(path)
    assert result.rows == []
    assert "board, but AcceleratorName gives" in result.skipped[inst], result.skipped
