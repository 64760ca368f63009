"""Hostile pass 40 (tester B, report h40b): import-skypilot rows, N1-N5 and m1, m2, m3, m7, m8, m9.

N4: a GpuInfo repeating a key in the same case was read last-wins. N1: a Lambda name's GPU word was not held to
the row's GPU. N5: Lambda gpu_1x/2x/4x_a100 named 'A100-80GB' became the SXM card. N3: Azure GB200 sizes were
written as B200. N2: NVads A10 v5 counts were not held. m1: NC A100 v4 / NC H100 v5 rows naming another memory were
written. m2: another GPU was said as "form factor not told". m3: Lambda 'nvl' and glued board words. m8: '_Promo'
and unknown ND versions lost the count. m7: "no gpus.yaml entry" for GPUs gpus.yaml holds. m9: a count not whole.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.sky_helpers import HEADER, aws_csv, vms_csv

from planner.catalog.skypilot import import_file

LAMBDA_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"
AZURE_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation"


def _gi(inner: str, total: int = 24576) -> str:
    """A GpuInfo cell as SkyPilot writes it (quoted for the CSV: it holds commas)."""
    return '"' + "{'Gpus': [{" + inner + "}], 'TotalGpuMemoryInMiB': " + str(total) + "}" + '"'


def _one(tmp_path: Path, provider: str, header: str, row: str) -> tuple[list[str], str]:
    result = import_file(vms_csv(tmp_path, provider, header, row))
    return [r.gpu for r in result.rows], " ".join(" ".join(result.skipped.values()).split())


# --- N4: a key repeated in one dict, any case, any depth ------------------------------------------------------

@pytest.mark.parametrize("gpu_info, key", [
    # the first 'Name' names an H100: read last-wins it was A10G and the row was written
    (_gi("'Name': 'H100', 'Name': 'A10G', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}"),
     "'Name'"),
    # Count 8 then 1: read last-wins the count agreed with AcceleratorCount 1
    (_gi("'Name': 'A10G', 'Count': 8, 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}"), "'Count'"),
    # a MemoryInfo repeating SizeInMiB (depth 3)
    (_gi("'Name': 'A10G', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 81920, 'SizeInMiB': 24576}"), "'SizeInMiB'"),
    # a whole second Gpus list (H100 x8) before the real one
    ('"' + "{'Gpus': [{'Name': 'H100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}], 'Gpus': [{'Name': 'A10G', "
     "'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}], 'TotalGpuMemoryInMiB': 24576}" + '"', "'Gpus'"),
])
def test_a_gpu_info_repeating_a_key_leaves_the_row_out(tmp_path: Path, gpu_info: str, key: str) -> None:
    path = aws_csv(tmp_path, f"g5.xlarge,A10G,1,4,16,{gpu_info},1.006,,us-east-1,us-east-1a,x86_64")
    result = import_file(path)
    assert result.rows == []
    said = result.skipped["g5.xlarge"]
    assert f"names the key {key} twice in one dict" in said, said


@pytest.mark.parametrize("twin, shown", [("Gpus ", "'Gpus '"), ("\uff27pus", "U+FF27")])
def test_a_key_that_only_looks_like_gpus_is_a_repeated_key(tmp_path: Path, twin: str, shown: str) -> None:
    # 'Gpus ' (trailing blank) and fullwidth G fold to 'Gpus': a second GPU list (H100 x8) beside the real one
    info = ("{'Gpus': [{'Name': 'A10G', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}], '" + twin +
            "': [{'Name': 'H100', 'Count': 8}], 'TotalGpuMemoryInMiB': 24576}")
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER.split(","))
        w.writerow(["g5.xlarge", "A10G", "1", "4", "16", info, "1.006", "", "us-east-1", "us-east-1a", "x86_64"])
    result = import_file(path)
    assert result.rows == []
    said = result.skipped["g5.xlarge"]
    assert "names the key 'Gpus' twice in one dict" in said and shown in said, said


def test_a_gpu_info_without_a_repeated_key_is_still_read(tmp_path: Path) -> None:
    # guard: the same GpuInfo, each key once, is SkyPilot's and the row is written
    info = _gi("'Name': 'A10G', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}")
    result = import_file(aws_csv(tmp_path, f"g5.xlarge,A10G,1,4,16,{info},1.006,,us-east-1,us-east-1a,x86_64"))
    assert [r.gpu for r in result.rows] == ["a10g"], result.skipped


# --- N1, m2: a Lambda name's GPU word -------------------------------------------------------------------------

@pytest.mark.parametrize("row, word, acc", [
    ("gpu_8x_h100_sxm5,B200,8,30,200,1.29,us-east-1,,", "H100", "'B200'"),
    ("gpu_1x_a6000,A10,1,30,200,1.29,us-east-1,,", "A6000", "'A10'"),
    ("gpu_1x_gh200,A10,1,30,200,1.29,us-east-1,,", "GH200", "'A10'"),
    ("gpu_1x_gh200_pcie,H100,1,26,200,2.49,us-east-1,,", "GH200", "'H100'"),
    ("gpu_1x_a10,A10G,1,30,200,1.29,us-east-1,,", "A10", "'A10G'"),
    ("gpu_1x_h100_pcie,L40S,1,30,200,1.29,us-east-1,,", "H100", "'L40S'"),
    ("gpu_8x_b200_sxm6,H100-SXM,8,30,200,1.29,us-east-1,,", "B200", "'H100-SXM'"),
    # m2: this was "form factor not told by the instance type"; the name says A10
    ("gpu_1x_a10,A100,1,30,200,1.29,us-east-1,,", "A10", "'A100'"),
])
def test_a_lambda_name_carrying_another_gpu_leaves_the_row_out(tmp_path: Path, row: str, word: str,
                                                              acc: str) -> None:
    # SkyPilot's fetcher writes AcceleratorName = name.split('_')[2].upper(): the third word is the GPU
    gpus, said = _one(tmp_path, "lambda", LAMBDA_HEADER, row)
    assert gpus == []
    assert f"carries {word} GPUs, but AcceleratorName gives {acc}" in said, said


@pytest.mark.parametrize("row, gpu", [
    ("gpu_1x_a6000,RTXA6000,1,30,200,1.29,us-east-1,,", "rtx-a6000"),  # A6000 and RTXA6000: one card
    ("gpu_8x_a100_80gb_sxm4,A100-80GB,8,30,200,1.29,us-east-1,,", "a100-80gb-sxm"),  # the fetcher's edge case
    ("gpu_1x_h100_pcie,H100,1,26,200,2.49,us-east-1,,", "h100-pcie"),
    ("gpu_1x_a100,A100,1,30,200,1.29,us-east-1,,", "a100-40gb-pcie"),
])
def test_a_lambda_name_and_its_own_gpu_are_still_written(tmp_path: Path, row: str, gpu: str) -> None:
    gpus, said = _one(tmp_path, "lambda", LAMBDA_HEADER, row)
    assert gpus == [gpu], said


# --- N5: Lambda gpu_1x/2x/4x_a100 are the 40 GB PCIe card -----------------------------------------------------

@pytest.mark.parametrize("row", [
    "gpu_1x_a100,A100-80GB,1,30,200,1.29,us-east-1," + _gi(
        "'Name': 'A100-80GB', 'Manufacturer': 'NVIDIA', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 81920}", 81920) + ",",
    "gpu_2x_a100,A100-80GB,2,60,400,2.58,us-east-1,,",
    "gpu_4x_a100,A100-80GB-SXM,4,120,800,5.16,us-east-1,,",
])
def test_a_lambda_a100_pcie_size_named_80gb_is_left_out(tmp_path: Path, row: str) -> None:
    # Lambda's gpu_1x/2x/4x_a100 are "A100 (40 GB PCIe)": an 80 GB name was written as a100-80gb-sxm
    gpus, said = _one(tmp_path, "lambda", LAMBDA_HEADER, row)
    assert gpus == []
    assert "is Lambda's A100 40 GB PCIe, but AcceleratorName gives 'A100-80GB" in said, said


def test_lambdas_8x_a100_named_80gb_is_left_out(tmp_path: Path) -> None:
    # Lambda's gpu_8x_a100 is "8x A100 (40 GB SXM4)" (its 80 GB size is gpu_8x_a100_80gb_sxm4): 'A100-80GB' on it was
    # written as the 80 GB SXM card
    gpus, said = _one(tmp_path, "lambda", LAMBDA_HEADER, "gpu_8x_a100,A100-80GB,8,124,1800,10.32,us-east-1,,")
    assert gpus == []
    assert "is Lambda's A100 40 GB SXM4, but AcceleratorName gives 'A100-80GB', the 80 GB card" in said, said
    (tmp_path / "b").mkdir()
    gpus, said = _one(tmp_path / "b", "lambda", LAMBDA_HEADER, "gpu_8x_a100,A100,8,124,1800,10.32,us-east-1,,")
    assert gpus == ["a100-40gb-sxm"], said


def test_a_lambda_a100_pcie_size_named_sxm_is_left_out_for_its_board(tmp_path: Path) -> None:
    # 'A100-SXM' (RunPod's SXM name) carries no memory word, so no memory is compared; its SXM board is held
    # against the PCIe board these sizes are
    gpus, said = _one(tmp_path, "lambda", LAMBDA_HEADER, "gpu_1x_a100,A100-SXM,1,30,200,1.29,us-east-1,,")
    assert gpus == []
    assert "names the PCIe board, but AcceleratorName gives 'A100-SXM', the SXM one" in said, said


# --- m3: Lambda nvl and glued board words ---------------------------------------------------------------------

@pytest.mark.parametrize("inst, board", [("gpu_1x_h100_nvl", "NVL"), ("gpu_1x_h100-pcie", "PCIe"),
                                         ("gpu_1x_h100pcie", "PCIe"), ("gpu_1x_h100_pcie5", "PCIe")])
def test_a_lambda_board_word_nvl_or_glued_is_held(tmp_path: Path, inst: str, board: str) -> None:
    gpus, said = _one(tmp_path, "lambda", LAMBDA_HEADER, f"{inst},H100-SXM,1,30,200,1.29,us-east-1,,")
    assert gpus == []
    assert f"names the {board} board, but AcceleratorName gives 'H100-SXM', the SXM one" in said, said


def test_a_lambda_nvl_name_with_a_two_board_name_is_the_nvl_card(tmp_path: Path) -> None:
    gpus, said = _one(tmp_path, "lambda", LAMBDA_HEADER, "gpu_1x_h100_nvl,H100,1,30,200,1.29,us-east-1,,")
    assert gpus == ["h100-nvl"], said


# --- N2, N3, m1, m2, m8: Azure --------------------------------------------------------------------------------

@pytest.mark.parametrize("row, want", [
    # Azure's NVadsA10 v5 page: NV36ads 1, NV72ads 2 whole A10s
    ("Standard_NV36ads_A10_v5,A10,2,36,440,,3.2,1,eastus,V2", "carries 1 GPU, but AcceleratorCount gives 'A10' x2"),
    ("Standard_NV72ads_A10_v5,A10,1,72,880,,6.5,1,eastus,V2", "carries 2 GPUs, but AcceleratorCount gives 'A10' x1"),
    # NV6ads is 1/6 of an A10 (4 GB): x1 would be a whole 24 GB card
    ("Standard_NV6ads_A10_v5,A10,1,6,55,,0.45,0.1,eastus,V2", "carries 1/6 of one A10 (a GPU partition)"),
    ("Standard_NV18ads_A10_v5,A10,1,18,220,,1.6,0.1,eastus,V2", "carries 1/2 of one A10 (a GPU partition)"),
    # N3: a GB200 size is not a B200
    ("Standard_ND128isr_NDR_GB200_v6,B200,4,128,900,,60,10,eastus,V2", "carries GB200 GPUs, but AcceleratorName gives 'B200'"),
    ("Standard_ND128isr_GB200_v6,B200,4,128,900,,60,10,eastus,V2", "carries GB200 GPUs, but AcceleratorName gives 'B200'"),
    # m1: NC A100 v4 is the 80 GB card, NC H100 v5 the NVL
    ("Standard_NC48ads_A100_v4,A100,2,48,440,,3.2,1,eastus,V2", "carries the A100 80GB, but AcceleratorName gives 'A100'"),
    ("Standard_NC24ads_A100_v4,A100-40GB,1,24,220,,3.2,1,eastus,V2", "gives 'A100-40GB', the 40 GB card"),
    ("Standard_NC40ads_H100_v5,H100-80GB,1,40,320,,3.2,1,eastus,V2", "carries the H100 NVL (94 GB), but AcceleratorName gives 'H100-80GB'"),
    ("Standard_NC40ads_H100_v5,H100-PCIE,1,40,320,,3.2,1,eastus,V2", "carries the H100 NVL (94 GB), but AcceleratorName gives 'H100-PCIE'"),
    # m2: the size's GPU said, not "form factor not told"
    ("Standard_ND40rs_v2,A100,8,40,672,,3.2,1,eastus,V2", "carries V100 GPUs, but AcceleratorName gives 'A100'"),
    ("Standard_NV36ads_A10_v5,A100-80GB,1,36,440,,3.2,1,eastus,V2", "carries A10 GPUs, but AcceleratorName gives 'A100-80GB'"),
    ("Standard_NC4as_T4_v3,H100,1,4,28,,3.2,1,eastus,V2", "carries T4 GPUs, but AcceleratorName gives 'H100'"),
    # m8: a _Promo suffix is the size without it; an ND size of these GPUs is 8 whatever its version
    ("Standard_NC4as_T4_v3_Promo,T4,4,4,28,,3.2,1,eastus,V2", "carries 1 GPU, but AcceleratorCount gives 'T4' x4"),
    ("Standard_NV36ads_A10_v5_Promo,A10,8,36,440,,3.2,1,eastus,V2", "carries 1 GPU, but AcceleratorCount gives 'A10' x8"),
    ("Standard_ND96isr_MI300X_v5_Promo,MI300X,1,96,1800,,3.2,1,eastus,V2", "carries 8 GPUs"),
    ("Standard_ND96isr_MI300X_v6,MI300X,1,96,1800,,3.2,1,eastus,V2", "carries 8 GPUs"),
])
def test_azure_sizes_hold_their_gpu_count_and_card(tmp_path: Path, row: str, want: str) -> None:
    gpus, said = _one(tmp_path, "azure", AZURE_HEADER, row)
    assert gpus == []
    assert want in said, said


@pytest.mark.parametrize("row, gpu", [
    ("Standard_NV36ads_A10_v5,A10,1,36,440,,3.2,1,eastus,V2", "a10"),
    ("Standard_NV36adms_A10_v5,A10,1,36,880,,3.2,1,eastus,V2", "a10"),
    ("Standard_NV72ads_A10_v5,A10,2,72,880,,6.5,1,eastus,V2", "a10"),
    ("Standard_NC8as_T4_v3_Promo,T4,1,8,56,,3.2,1,eastus,V2", "t4"),
    ("Standard_NC24ads_A100_v4,A100-80GB,1,24,220,,3.2,1,eastus,V2", "a100-80gb-pcie"),
    ("Standard_NC40ads_H100_v5,H100,1,40,320,,3.2,1,eastus,V2", "h100-nvl"),
])
def test_azure_sizes_of_their_own_count_and_card_are_written(tmp_path: Path, row: str, gpu: str) -> None:
    gpus, said = _one(tmp_path, "azure", AZURE_HEADER, row)
    assert gpus == [gpu], said


# --- m7: names SkyPilot writes, and names gpus.yaml holds under another spelling -------------------------------

@pytest.mark.parametrize("acc, gpu", [("RTX5090", "rtx-5090"), ("RTXA4000", "rtx-a4000"), ("H200-NVL", "h200-nvl")])
def test_runpod_names_the_fetcher_writes_map_to_shipped_gpus(tmp_path: Path, acc: str, gpu: str) -> None:
    # fetch_runpod.py format_gpu_name: 'RTX 5090' -> 'RTX5090', 'RTX A4000' -> 'RTXA4000', 'H200 NVL' -> 'H200-NVL'
    gpus, said = _one(tmp_path, "aws", HEADER, f"x1.xlarge,{acc},1,4,16,,1.006,,us-east-1,us-east-1a,x86_64")
    assert gpus == [gpu], said


@pytest.mark.parametrize("acc, gpu", [("H100-PCIE", "h100-pcie"), ("MI355X", "mi355x"), ("Gaudi3", "gaudi-3")])
def test_a_name_gpus_yaml_holds_under_another_spelling_is_said_so(tmp_path: Path, acc: str, gpu: str) -> None:
    # the CLI passes the catalog's GPU ids; these are shipped gpus.yaml ids (catalog/gpus.yaml)
    result = import_file(aws_csv(tmp_path, f"x1.xlarge,{acc},1,4,16,,1.006,,us-east-1,us-east-1a,x86_64"),
                         gpu_ids=["a10g", "h100-pcie", "h100-sxm", "mi355x", "gaudi-3"])
    said = " ".join(" ".join(result.skipped.values()).split())
    assert result.rows == []
    assert f"'{acc}' is not a SkyPilot GPU name planner knows" in said and f"gpus.yaml has {gpu}" in said, said
    assert "no gpus.yaml entry" not in said, said


# --- m9: a count not whole, as written ------------------------------------------------------------------------

@pytest.mark.parametrize("count, want", [
    # float('0.9999999999999999') prints as 1 with :g: shown as written
    ("0.9999999999999999", "a fraction ('0.9999999999999999') of one A10G, not a whole GPU"),
    ("0.5", "a fraction (0.5) of one A10G, not a whole GPU"),
    # above one: no fraction of one GPU
    ("1.0000000000000001", "a count ('1.0000000000000001') of A10G GPUs that is not a whole number"),
    ("2.00000000000000001", "a count ('2.00000000000000001') of A10G GPUs that is not a whole number"),
])
def test_a_count_not_whole_is_shown_as_written(tmp_path: Path, count: str, want: str) -> None:
    result = import_file(aws_csv(tmp_path, f"g5.xlarge,A10G,{count},4,16,,1.006,,us-east-1,us-east-1a,x86_64"))
    assert result.rows == []
    assert result.skipped["g5.xlarge"] == f"line 2: {want}"
