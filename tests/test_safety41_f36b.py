"""Hostile pass 36 (tester B, report h36b): the import-skypilot findings 1, 2, 6, 7, 8, 9 and 10.

2: an AWS row whose AvailabilityZone is no zone of its Region (or is empty) set that region's spot price.
8: an imported entry merged key by key over the shipped one, keeping the shipped GPU's gpu_memory_usable.
7: the PCIe/SXM/NVL choice hung on GpuInfo being there and on case. 1: a price below the floor was treated three
ways. 10: the instance-case line counted rows left out, and a count was quoted as text. 9: an ESC region was
lower-cased with a guess. 6: the closing --catalog hint could not be pasted for a non-UTF-8 folder name.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner.catalog.skypilot import import_file
from tests.sky_helpers import aws_csv, run_cli, vms_csv

GCP_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
              "AvailabilityZone")


_write = vms_csv  # tests.sky_helpers: a provider folder's vms.csv


# -- 2: a zone places its row's prices only in its own region ----------------------------------------------------

def test_zone_of_another_region_does_not_set_the_spot_price(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,0.3,us-east-1,us-east-1a,x86_64",
                   "g5.xlarge,A10G,1,4,16,,1.0,0.01,us-east-1,us-west-2a,x86_64",
                   "g5.xlarge,A10G,1,4,16,,1.0,0.01,us-east-1,,x86_64",
                   "g5.xlarge,A10G,1,4,16,,0.5,0.4,us-west-2,us-west-2a,x86_64")
    result = import_file(path, region="us-east-1")
    (row,) = result.rows
    # us-east-1's only zone of its own is us-east-1a at spot 0.3: lines 3 (us-west-2a) and 4 (empty) are left out
    assert row.spot_usd_per_hour == 0.3 and row.spot_usd_per_hour_range is None
    reasons = " | ".join(result.skipped.values())
    assert "'us-west-2a' is not a zone of its Region 'us-east-1'" in reasons
    assert "no AvailabilityZone (empty)" in reasons


def test_zone_ids_and_local_zones_of_the_region_are_kept(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,0.3,us-east-1,use1-az4,x86_64",
                   "g5.xlarge,A10G,1,4,16,,1.0,0.25,us-east-1,us-east-1-bos-1a,x86_64",
                   "g5.xlarge,A10G,1,4,16,,1.0,0.2,us-east-1,usw2-az1,x86_64")
    result = import_file(path, region="us-east-1")
    (row,) = result.rows
    # use1-az4 (the id prefix of us-east-1) and the Local Zone are us-east-1's: range 0.25-0.3; usw2-az1 is
    # us-west-2's, so its 0.2 is left out
    assert row.spot_usd_per_hour_range == (0.25, 0.3)
    assert any("'usw2-az1' is not a zone" in v for v in result.skipped.values())


def test_gcp_zone_of_another_region_left_out(tmp_path: Path) -> None:
    path = _write(tmp_path, "gcp", GCP_HEADER, "g2-standard-4,L4,1,4,16,,0.3,0.1,us-central1,us-central1-a",
                  ",L4,1,,,,0.7,0.2,us-central1,us-central1-a",
                  "g2-standard-4,L4,1,4,16,,0.3,0.01,us-central1,us-west1-a",
                  ",L4,1,,,,0.7,0.01,us-central1,us-west1-a")
    result = import_file(path)
    (row,) = result.rows
    # only us-central1-a prices it: spot 0.1 + 0.2 = 0.3; zone us-west1-a under us-central1 is left out
    assert row.spot_usd_per_hour == pytest.approx(0.3)
    assert any("'us-west1-a' is not a zone of its Region 'us-central1'" in v for v in result.skipped.values())


# -- 8: an imported entry describes its machine whole, over the shipped entry of its id ------------------------------

def _imported_instance(tmp_path: Path, row: str) -> tuple[str, object]:
    from planner.catalog.loader import load_catalog

    code, out = run_cli("catalog", "import-skypilot", str(aws_csv(tmp_path, row)), "--out", str(tmp_path / "o"))
    assert code == 0, out
    text = (tmp_path / "o" / "cloud.yaml").read_text(encoding="utf-8")
    return text, load_catalog(tmp_path / "o").instance("aws-g5-xlarge")


def test_an_imported_gpu_other_than_the_shipped_one_clears_its_usable_memory(tmp_path: Path) -> None:
    text, inst = _imported_instance(tmp_path, "g5.xlarge,H100,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64")
    # the shipped aws-g5-xlarge is an A10G with gpu_memory_usable 22888 MiB; an H100 in its place must not keep it
    assert yaml.safe_load(text)["instances"][0]["gpu_memory_usable"] is None
    assert inst.gpu == "h100-sxm" and inst.gpu_memory_usable_bytes is None  # type: ignore[attr-defined]


def test_the_same_gpu_and_count_keeps_the_shipped_usable_memory(tmp_path: Path) -> None:
    text, inst = _imported_instance(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64")
    # A10G x1 as shipped: the driver's 22,888 MiB is still this machine's figure (22888 * 2**20 bytes)
    assert "gpu_memory_usable" not in yaml.safe_load(text)["instances"][0]
    assert inst.gpu_memory_usable_bytes == 22888 * 2**20  # type: ignore[attr-defined]


# -- 7: the form factor does not hang on GpuInfo being there, nor on case ------------------------------------------

RUNPOD_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Region,SpotPrice,Price,AvailabilityZone,GpuInfo"
AZURE_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation"


def _gi(name: str, count: int, size: int) -> str:
    # as SkyPilot's RunPod fetcher writes it: SizeInMiB holds the GB figure (80 for an 80 GB card)
    return (f"\"{{'Gpus': [{{'Name': '{name}', 'Manufacturer': 'Nvidia', 'Count': {count}, 'MemoryInfo': "
            f"{{'SizeInMiB': {size}}}}}], 'TotalGpuMemoryInMiB': {size * count}}}\"")


def test_runpod_bare_names_are_the_pcie_cards_with_or_without_gpu_info(tmp_path: Path) -> None:
    from planner.catalog.loader import load_catalog

    # h38b N7: a name of SkyPilot's form '1x_<AcceleratorName>_SECURE' is now held to the row's GPU and count, so
    # these made-up types are named 'A_SECURE' (no count, no GPU in SkyPilot's form: not checked), not '1x_A_SECURE'

    mem = {g.id: g.memory_bytes / 2**30 for g in load_catalog().gpus}
    path = _write(tmp_path, "runpod", RUNPOD_HEADER,
                  # h37b N4: an empty GpuInfo is now left out (SkyPilot's RunPod fetcher writes one on every GPU
                  # row), so A and G carry theirs
                  "A_SECURE,A100-80GB,1,8,117,US,1.0,1.64,US-KS-2," + _gi("A100 PCIe", 1, 80),
                  "B_SECURE,A100-80GB,1,8,117,US,1.0,1.64,US-KS-2," + _gi("a100 pcie", 1, 80),
                  "G_SECURE,H100,1,8,117,US,1.0,2.64,US-KS-2," + _gi("H100 PCIe", 1, 80))
    got = {r.instance: r.gpu for r in import_file(path, gpu_memory=mem).rows}
    # fetch_runpod.py GPU_NAME_OVERRIDES: 'A100-PCIe' -> 'A100-80GB', 'H100-PCIe' -> 'H100'; GpuInfo read case-blind
    assert got == {"A_SECURE": "a100-80gb-pcie", "B_SECURE": "a100-80gb-pcie", "G_SECURE": "h100-pcie"}


def test_runpod_gpu_info_contradicting_the_row_leaves_it_out(tmp_path: Path) -> None:
    from planner.catalog.loader import load_catalog

    # h38b N7: made-up type names without SkyPilot's '1x_<GPU>_' form (which is now held to the row), as above

    mem = {g.id: g.memory_bytes / 2**30 for g in load_catalog().gpus}
    path = _write(tmp_path, "runpod", RUNPOD_HEADER,
                  "D_SECURE,A100-80GB,1,8,117,US,1.0,1.64,US-KS-2," + _gi("H100 PCIe", 1, 80),
                  "E_SECURE,A100-80GB,1,8,117,US,1.0,1.64,US-KS-2," + _gi("A100 PCIe", 2, 80),
                  "F_SECURE,A100-80GB,1,8,117,US,1.0,1.64,US-KS-2," + _gi("A100 PCIe", 1, 40960),
                  "OK_SECURE,A100-80GB,1,8,117,US,1.0,1.64,US-KS-2," + _gi("A100 PCIe", 1, 81920))
    result = import_file(path, gpu_memory=mem)
    # D names an H100, E two GPUs, F 40 GiB (40960 MiB) against the 80 GiB card: all left out; 81920 MiB = 80 GiB
    assert [r.instance for r in result.rows] == ["OK_SECURE"]
    assert "names 'H100 PCIe'" in result.skipped["D_SECURE"]
    # h37b m6: the count written in one form, 'A100-80GB' x2
    assert "gives 'A100-80GB' x2, but AcceleratorCount is 1" in result.skipped["E_SECURE"]
    assert "gives 40 GiB per GPU" in result.skipped["F_SECURE"]


@pytest.mark.parametrize("name, acc, expected", [
    ("Standard_NC24ads_A100_v4", "A100-80GB", "a100-80gb-pcie"),
    ("standard_nc24ads_a100_v4", "A100-80GB", "a100-80gb-pcie"),
    ("STANDARD_NC40ADS_H100_V5", "H100", "h100-nvl"),
])
def test_azure_form_factor_is_case_blind(tmp_path: Path, name: str, acc: str, expected: str) -> None:
    # Azure VM size names are case-blind in Azure; the same machine whatever the case
    path = _write(tmp_path, "azure", AZURE_HEADER, f"{name},{acc},1,24,220,,3.67,1.0,eastus,")
    assert [r.gpu for r in import_file(path).rows] == [expected]


def test_lambda_gpu_1x_a100_is_the_pcie_card() -> None:
    from planner.catalog.aliases import catalog_gpu_id

    # Lambda: gpu_1x_a100 is "1x A100 (40 GB PCIe)", gpu_1x_a100_sxm4 and gpu_8x_a100 are SXM4
    assert catalog_gpu_id("lambda", "gpu_1x_a100", "A100") == "a100-40gb-pcie"
    assert catalog_gpu_id("lambda", "gpu_1x_a100_sxm4", "A100") == "a100-40gb-sxm"
    assert catalog_gpu_id("lambda", "gpu_8x_a100", "A100") == "a100-40gb-sxm"


# -- 1: one rule for a price below the catalog's floor (0.001 USD/h) --------------------------------------------------

def test_gcp_vm_row_below_the_floor_is_left_out_not_summed(tmp_path: Path) -> None:
    path = _write(tmp_path, "gcp", GCP_HEADER, "g2-standard-4,L4,1,4,16,,0.0009,0.1,us-central1,us-central1-a",
                  ",L4,1,,,,0.7,0.2,us-central1,us-central1-a")
    result = import_file(path)
    # 0.0009 < 0.001: the host would be priced at about 0 (the sum 0.7009 was written before)
    assert result.rows == []
    assert "VM row's on-demand price '0.0009' is below the catalog's floor" in result.skipped["g2-standard-4"]


def test_sub_floor_spot_is_no_spot_offer_on_every_row_and_counted(tmp_path: Path) -> None:
    gcp = _write(tmp_path, "gcp", GCP_HEADER, "g2-standard-8,L4,1,8,32,,0.3,0.0009,us-central1,us-central1-a",
                 ",L4,1,,,,0.7,0.2,us-central1,us-central1-a")
    res = import_file(gcp)
    # VM spot 0.0009 < floor: no spot offer (0.2009 was written), on-demand 0.3 + 0.7 = 1.0 kept; line 2 counted
    assert [(r.usd_per_hour, r.spot_usd_per_hour) for r in res.rows] == [(1.0, None)]
    assert res.spot_floor_lines == ["2"]
    aws = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.0009,us-east-1,us-east-1a,x86_64")
    code, out = run_cli("catalog", "import-skypilot", str(aws), "--out", str(tmp_path / "o"))
    # the AWS row keeps its on-demand offer (it was left out whole before), its spot dropped and said
    assert code == 0, out
    entry = yaml.safe_load((tmp_path / "o" / "cloud.yaml").read_text(encoding="utf-8"))["instances"][0]
    assert (entry["usd_per_hour"], entry["spot_usd_per_hour"]) == (1.006, None)
    assert "spot price below the catalog's floor (0.001 USD/h) read as no spot offer: 1 row(s) (line 2)" in out


# -- 10: the instance-case line counts rows kept; a count is written as a number -----------------------------------

def test_instance_case_line_counts_only_rows_kept(tmp_path: Path) -> None:
    path = _write(tmp_path, "gcp", GCP_HEADER, "A2-HIGHGPU-1G,A100,2,12,85,,1.0,,us-central1,us-central1-a",
                  "a2-highgpu-1g,A100,1,12,85,,1.0,,us-central1,us-central1-b",
                  ",A100,1,,,,2.9,,us-central1,us-central1-a", ",A100,1,,,,2.9,,us-central1,us-central1-b")
    res = import_file(path)
    # line 2 (upper case) names A100 x2 on a 1-GPU machine type: left out, so not counted as written in lower case
    assert [r.instance for r in res.rows] == ["a2-highgpu-1g"]
    assert res.instance_case_lines == []
    why = res.skipped["the row on line 2 of A2-HIGHGPU-1G"]
    assert "names 'A100' x2, but machine type A2-HIGHGPU-1G carries 'A100' x1" in why, why  # h37b m6: one form for a GPU and its count, 'A100' x1 (name quoted, count not)


# -- 9: a region holding ESC is said to hold it, as written ----------------------------------------------------------

def test_an_esc_region_is_named_as_the_control_character_it_holds(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, 'g5.c0,A10G,1,4,16,,1.0,0.3,"\x1b[31mRED",us-east-1a,x86_64')
    why = import_file(path).skipped["g5.c0"]
    # the value as written ('RED' in upper case), its character named, no guessed region ('31mred' before)
    assert "the region '\x1b[31mRED' holds U+001B (ESCAPE), a control character" in why, why
    assert "did the file mean" not in why
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    # nothing kept (exit 2); the summary shows the ESC escaped, as written
    assert code == 2 and "'\\x1b[31mRED' holds U+001B (ESCAPE)" in " ".join(out.split()), out


# -- 6: the closing --catalog hint pastes as the folder it names -----------------------------------------------------

@pytest.mark.parametrize("name", ["ofx\udcff", "o'x\udcfe\\y"])
def test_the_closing_catalog_hint_pastes_into_bash_as_the_same_bytes(tmp_path: Path, name: str) -> None:
    import os
    import shutil
    import subprocess

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash to paste into")
    out_dir = str(tmp_path) + "/" + name
    code, out = run_cli("catalog", "import-skypilot", str(aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,"
                                                                   "us-east-1,us-east-1a,x86_64")), "--out", out_dir)
    assert code == 0, out
    word = out.split("use it with\n  --catalog ", 1)[1].splitlines()[0]  # the command on its own line (h37b m9)
    # a byte the terminal shows as '\xff' is written in bash's $'...' quoting: '...\xff' in plain quotes would name
    # a folder of a backslash, 'x', 'f', 'f'
    assert word.startswith("$'"), word
    pasted = subprocess.run([bash, "-c", f"printf %s {word}"], capture_output=True, check=True).stdout
    assert pasted == os.fsencode(out_dir)
