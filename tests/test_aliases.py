"""The importer's GPU-name aliases (planner.catalog.aliases) on real SkyPilot rows.

tests/data/skypilot/aliases/runpod/vms.csv holds rows copied as they are from
skypilot-org/skypilot-catalog catalogs/v8/runpod/vms.csv @01acdfd419ce5afae1289ff14825b893ced0c196
(README there); before the alias table, every one of them but the A100 PCIe row was left out with
"GPU ... has no gpus.yaml entry" although the catalog has the card.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.aliases import GCP_MACHINE_GPUS, GPU_ALIASES, catalog_gpu_id
from planner.catalog.loader import load_catalog
from planner.catalog.skypilot import GCP_MACHINES, gpu_id, import_file

DATA = Path(__file__).parent / "data" / "skypilot"
RUNPOD = DATA / "aliases" / "runpod" / "vms.csv"

# (InstanceType, AcceleratorName, GpuInfo's board name) as the RunPod v8 file gives them -> gpus.yaml id
RUNPOD_ROWS = [
    ("1x_A100-80GB_SECURE", "A100-80GB", "A100 PCIe", "a100-80gb-pcie"),
    ("8x_A100-80GB-SXM_SECURE", "A100-80GB-SXM", "A100 SXM", "a100-80gb-sxm"),
    ("8x_H100-NVL_SECURE", "H100-NVL", "H100 NVL", "h100-nvl"),
    ("5x_H100-SXM_SECURE", "H100-SXM", "H100 SXM", "h100-sxm"),
    ("2x_H200-SXM_SECURE", "H200-SXM", "H200 SXM", "h200-sxm"),
    ("4x_RTX6000-Ada_SECURE", "RTX6000-Ada", "RTX 6000 Ada", "rtx-6000-ada"),
    ("10x_A40_SECURE", "A40", "A40", "a40"),
]


@pytest.mark.parametrize("instance, acc, board, expected", RUNPOD_ROWS, ids=[r[1] for r in RUNPOD_ROWS])
def test_runpod_names_map_to_catalog_ids(instance, acc, board, expected):
    info = f"{{'Gpus': [{{'Name': '{board}', 'Manufacturer': 'Nvidia', 'Count': 1}}]}}"
    assert catalog_gpu_id("runpod", instance, acc, info) == expected
    assert gpu_id("runpod", instance, acc, info) == expected  # the importer calls the table


def test_every_alias_names_a_catalog_gpu():
    ids = {g.id for g in load_catalog().gpus}
    assert set(GPU_ALIASES.values()) <= ids
    assert {catalog_gpu_id("gcp", m, acc) for m, (acc, _) in GCP_MACHINE_GPUS.items()} <= ids


def test_gcp_machine_types_come_from_the_table():
    assert GCP_MACHINES is GCP_MACHINE_GPUS
    # A3 Edge: 8 x H100 80GB (GKE attaches nvidia-h100-80gb, count 8), as a3-highgpu-8g
    assert GCP_MACHINE_GPUS["a3-edgegpu-8g"] == GCP_MACHINE_GPUS["a3-highgpu-8g"] == ("H100", 8)
    assert catalog_gpu_id("gcp", "a3-edgegpu-8g", "H100") == "h100-sxm"


def test_a_name_the_table_lacks_stays_unknown():
    # Lambda gpu_1x_gh200 (GH200): no gpus.yaml entry, so no alias (tests/data/skypilot/lambda/vms.csv)
    assert catalog_gpu_id("lambda", "gpu_1x_gh200", "GH200") is None
    # AWS p6-b300.48xlarge: B300 has a gpus.yaml entry (b300) and so an alias
    assert catalog_gpu_id("aws", "p6-b300.48xlarge", "B300") == "b300"


def test_import_keeps_the_real_runpod_rows():
    ids = {g.id for g in load_catalog().gpus}
    res = import_file(RUNPOD, gpu_ids=ids)
    got = {r.instance: (r.gpu, r.gpu_count, r.region, r.usd_per_hour) for r in res.rows}
    # each instance in its US data centre (the file's prices, USD per instance-hour)
    assert got == {
        "1x_A100-80GB_SECURE": ("a100-80gb-pcie", 1, "US", 1.39),
        "8x_A100-80GB-SXM_SECURE": ("a100-80gb-sxm", 8, "US", 12.72),
        "8x_H100-NVL_SECURE": ("h100-nvl", 8, "US", 25.52),
        "5x_H100-SXM_SECURE": ("h100-sxm", 5, "US", 16.45),
        "6x_H100-SXM_SECURE": ("h100-sxm", 6, "US", 19.74),
        "2x_H200-SXM_SECURE": ("h200-sxm", 2, "US", 9.18),
        "4x_RTX6000-Ada_SECURE": ("rtx-6000-ada", 4, "US", 3.36),
        "10x_A40_SECURE": ("a40", 10, "US", 4.4),
    }
    # 4x_H200-SXM is offered only in AP-IN-1 here: left out as not US, not for its GPU name
    assert "no gpus.yaml entry" not in " ".join(res.skipped.values())
