"""planner catalog import-skypilot: SkyPilot v8 vms.csv files -> a dated cloud.yaml overlay.

The fixtures (tests/data/skypilot/, README there) hold the source rows of the shipped GCP, Lambda
and RunPod instances, copied from skypilot-org/skypilot-catalog catalogs/v8, and AWS / Azure rows in
those files' layouts built from the shipped figures. Importing them must give back the shipped
rows: the same instances, GPUs, sizes, prices, spot prices and ranges, and regions.
"""

from __future__ import annotations

import re

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from planner.catalog.loader import load_catalog
from planner.catalog.skypilot import GCP_MACHINES, ImportProblem, detect_provider, gpu_id, import_file, is_us, slug
from planner.cli.main import main

DATA = Path(__file__).parent / "data" / "skypilot"
PROVIDERS = ("aws", "gcp", "azure", "lambda", "runpod")
FIELDS = ("provider", "instance", "gpu", "gpu_count", "vcpus", "memory_bytes", "usd_per_hour", "spot_usd_per_hour",
          "spot_usd_per_hour_range", "region")


@pytest.fixture(scope="module")
def shipped():
    return load_catalog()


@pytest.fixture(scope="module")
def overlay(tmp_path_factory):
    out = tmp_path_factory.mktemp("cloud")
    files = [str(DATA / p / "vms.csv") for p in PROVIDERS]
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", *files, "--out", str(out), "--as-of", "2026-08"])
    assert r.exit_code == 0, r.output
    return out, r


def _fields(inst):
    return {k: getattr(inst, k) for k in FIELDS}


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_import_reproduces_the_shipped_rows(provider, shipped, overlay):
    out, _ = overlay
    merged = load_catalog(out)  # the overlay loads: every row passes the catalog's checks
    mine = {i.id: i for i in merged.instances if i.as_of == "2026-08" and i.provider == provider}
    ships = [i for i in shipped.instances if i.provider == provider and "REF:SKY-" in i.source]
    if provider == "azure":  # the shipped Azure rows (v6, 2024) were retired; the importer still reads Azure
        assert not ships and mine
        return
    assert ships
    for s in ships:
        got = merged.instance(s.id)
        assert _fields(got) == _fields(s), s.id
        assert s.id in mine


def test_gcp_rows_sum_the_vm_and_gpu_rows_of_one_zone():
    res = import_file(DATA / "gcp" / "vms.csv")
    rows = {r.id: r for r in res.rows}
    g2 = rows["gcp-g2-standard-4"]
    # us-east4: VM 0.14631 + L4 x1 0.55821 = 0.70452, below us-central1's 0.14679 + 0.56004 = 0.70683
    assert (g2.region, g2.usd_per_hour, g2.spot_usd_per_hour) == ("us-east4", 0.70452, 0.28181)
    assert g2.verification == "D" and "VM 0.14631 + L4x1 0.55821" in g2.notes
    # the H100 x8 GPU row reads 33.60609 in us-central1 and 78.37241 in us-east4 (VM + GPU: 43.06615 and
    # 87.83247; us-east5 98.92567): 2.3x apart, not list prices, so the Hopper machines are skipped
    assert "gcp-a3-highgpu-8g" not in rows
    assert res.skipped["a3-highgpu-8g"].startswith("line 33: US regions' on-demand prices disagree (2.3x: $43.0662 in "
                                                   "us-central1")
    assert {"a3-highgpu-1g", "a3-megagpu-8g", "a3-ultragpu-8g"} <= {k for k, v in res.skipped.items()
                                                                    if "disagree" in v}
    # naming a region takes that region's rows as they are
    east4 = {r.id: r for r in import_file(DATA / "gcp" / "vms.csv", region="us-east4").rows}
    assert east4["gcp-a3-highgpu-8g"].usd_per_hour == pytest.approx(87.83247)
    # the VM rows of a4-highgpu-8g are priced 0.0: said at the first of them (tests/data/skypilot/gcp/vms.csv line 63)
    assert res.skipped["a4-highgpu-8g"] == "line 63: no on-demand price (0 or empty)"


def test_aws_spot_rules():
    rows = {r.id: r for r in import_file(DATA / "aws" / "vms.csv").rows}
    # two AZs list spot == on-demand (no spot capacity): left out of the range
    assert rows["aws-p5-48xlarge"].spot_usd_per_hour_range == (17.6289, 25.7522)
    # the low end is a local zone (use1-atl2-az1): kept in the range, not as the spot price
    b200 = rows["aws-p6-b200-48xlarge"]
    assert (b200.spot_usd_per_hour, b200.spot_usd_per_hour_range) == (21.0148, (13.0338, 21.0148))
    assert "local zone use1-atl2-az1" in b200.notes
    # g6.xlarge (the real rows, catalogs/v8/aws/vms.csv @00148f2a): $0.8048 on demand in us-east-1, us-east-2
    # and us-west-2 alike. The tie goes to the lowest regular-zone spot price: us-east-1 0.3490 (use1-az4),
    # us-east-2 0.2599 (use2-az2), us-west-2 0.3900 (usw2-az3) -> us-east-2, the shipped row's region
    # (the first by name, us-east-1, would have given spot 0.3490); its spot range is its three zones'
    g6 = rows["aws-g6-xlarge"]
    assert (g6.region, g6.usd_per_hour, g6.spot_usd_per_hour, g6.spot_usd_per_hour_range) == (
        "us-east-2", 0.8048, 0.2599, (0.2599, 0.2756))
    assert (rows["aws-g5-xlarge"].region, rows["aws-g5-xlarge"].usd_per_hour) == ("us-east-1", 1.006)


def test_skipped_rows_say_why():
    res = import_file(DATA / "aws" / "vms.csv")
    # p6-b300.48xlarge (B300) is imported since gpus.yaml has the b300 (planner.catalog.aliases)
    # each at its row's line of tests/data/skypilot/aws/vms.csv (h22b M1): m5.large line 64, p5e.48xlarge line 62
    assert res.skipped == {"m5.large": "line 64: no GPU", "p5e.48xlarge": "line 62: no on-demand price (0 or empty)"}
    assert [(r.gpu, r.gpu_count) for r in res.rows if r.instance == "p6-b300.48xlarge"] == [("b300", 8)]
    lam = import_file(DATA / "lambda" / "vms.csv")
    # lambda/vms.csv: cpu_4x_general on line 2, gpu_1x_gh200 first on line 47
    assert lam.skipped == {"cpu_4x_general": "line 2: no GPU",
                           "gpu_1x_gh200": "line 47: GPU 'GH200' has no gpus.yaml entry"}


def test_region_option():
    rows = {r.id: r for r in import_file(DATA / "gcp" / "vms.csv", region="us-west4").rows}
    # us-west4: VM 0.16533 + L4 x1 0.63077
    assert rows["gcp-g2-standard-4"].usd_per_hour == pytest.approx(0.7961)
    res = import_file(DATA / "gcp" / "vms.csv", region="us-east5")
    assert res.skipped["g2-standard-4"] == "line 65: not offered in region 'us-east5'"  # its first row (h31b M2)


def test_provider_detection_and_mapping():
    header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation"
    assert detect_provider(Path("x/vms.csv"), header.split(",")) == "azure"
    assert detect_provider(Path("catalogs/v8/lambda/vms.csv"), []) == "lambda"
    assert gpu_id("lambda", "gpu_1x_h100_pcie", "H100", "") == "h100-pcie"
    assert gpu_id("runpod", "1x_A100-80GB_SECURE", "A100-80GB", "{'Name': 'A100 PCIe'}") == "a100-80gb-pcie"
    assert gpu_id("azure", "Standard_NC80adis_H100_v5", "H100", "") == "h100-nvl"
    assert gpu_id("azure", "Standard_ND96isr_H100_v5", "H100", "") == "h100-sxm"
    assert GCP_MACHINES["g2-standard-24"] == ("L4", 2) and GCP_MACHINES["a3-megagpu-8g"] == ("H100-MEGA", 8)
    assert is_us("azure", "westus2") and not is_us("azure", "australiaeast") and is_us("runpod", "US")
    assert slug("aws", "p6-b200.48xlarge") == "aws-p6-b200-48xlarge"


def test_not_a_skypilot_file(tmp_path):
    bad = tmp_path / "gcp" / "vms.csv"
    bad.parent.mkdir()
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ImportProblem, match="not a SkyPilot vms.csv: no column InstanceType"):
        import_file(bad)
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(bad), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "not a SkyPilot vms.csv" in r.stderr


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_cli_writes_a_dated_overlay(overlay):
    out, r = overlay
    assert "left out 1: no on-demand price (0 or empty) (line 63: a4-highgpu-8g)" in r.stderr
    doc = yaml.safe_load((out / "cloud.yaml").read_text())
    assert doc["schema_version"] == 1
    rows = {x["id"]: x for x in doc["instances"]}
    assert rows["gcp-g2-standard-4"]["as_of"] == "2026-08"
    assert "REF:SKY-SCHEMA-v8" in rows["gcp-g2-standard-4"]["source"]
    # a row without spot clears the shipped row's spot keys when the overlay replaces it
    assert rows["lambda-gpu-1x-a10"]["spot_usd_per_hour"] is None


# ----- files the importer refuses or reads with care (one line: file, line, column) -----------------

HEADER_AWS = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region," \
             "AvailabilityZone,Arch\n"
# a real row (catalogs/v8/aws/vms.csv @00148f2a), GpuInfo shortened to the name the importer ignores
G6 = "g6.xlarge,L4,1.0,4.0,16.0,L4,0.8048,0.259900,us-east-2,use2-az2,x86_64\n"


def _aws(tmp_path, body, name="aws"):
    path = tmp_path / name / "vms.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER_AWS + body)
    return path


@pytest.mark.parametrize("body, message", [
    (G6 + "g6.xlarge,L4,1.0,4.0,16.0,L4,0.8048\n", "line 3: 7 fields where the header has 11: no value for column "
                                                   "SpotPrice"),
    (G6 + "g6.xlarge,L4,1.0,4.0,16.0,L4,0.8048,0.2599,us-east-1,use1-az1,x86_64,extra\n",
     "line 3: 12 fields where the header has 11: 1 value(s) after the last column, Arch"),
    ("g6.xlarge,L4,one,4.0,16.0,L4,0.8048,0.2599,us-east-2,use2-az1,x86_64\n",
     "line 2, column AcceleratorCount: 'one' is not a number"),
    ("g6.xlarge,L4,1.0,4.0,16.0,L4,$0.80,0.2599,us-east-2,use2-az1,x86_64\n", "line 2, column Price: '$0.80' is not a "
                                                                              "number"),
    ("g6.xlarge,L4,1.0,4.0,16.0,L4,-0.8048,0.2599,us-east-2,use2-az1,x86_64\n", "line 2, column Price: -0.8048 is "
                                                                                "below 0"),
])
@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_malformed_rows_are_left_out_with_line_and_column(tmp_path, body, message):
    # a row that cannot be read is left out with its line and column, and so is every row of its instance type
    # (g6.xlarge is not priced from the rows that remain); here nothing is left, so nothing is written
    path = _aws(tmp_path, body)
    res = import_file(path)
    assert res.rows == [] and list(res.skipped) == ["g6.xlarge"] and res.skipped["g6.xlarge"].startswith(message)
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o")])
    # the summary counts by reason, the line after it (issue 28: 'line 2, column Price: ...' -> 'column Price:
    # ... (line 2: g6.xlarge)')
    line, reason = re.fullmatch(r"line (\d+)(?:, |: )(.*)", message).groups()
    said = " ".join(r.stderr.split())
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert f"left out 1: {reason}" in said and f"(line {line}: g6.xlarge)" in said, said
    assert not (tmp_path / "o" / "cloud.yaml").exists()  # nothing half-written


def test_two_rows_of_one_zone_with_different_prices_refuse_the_file(tmp_path):
    # the same instance and zone twice with different prices: a damaged file, refused, naming both lines
    path = _aws(tmp_path, G6 + "g6.xlarge,L4,1.0,4.0,16.0,L4,0.9,0.259900,us-east-2,use2-az2,x86_64\n")
    with pytest.raises(ImportProblem) as e:
        import_file(path)
    assert str(e.value) == (f"{path}: lines 2 and 3, column Price: two rows for g6.xlarge in us-east-2 zone use2-az2 "
                            "give '0.8048' and '0.9'; a vms.csv lists one row per instance type and zone, so neither "
                            "can be trusted")
    assert e.value.hint == "Re-download the file (catalogs/v8/<provider>/vms.csv), then import it again."


def test_duplicates_zero_and_empty_prices_and_fractional_gpus(tmp_path):
    # the same row twice counts once; a price of 0 or empty is no on-demand price; g6f.2xlarge carries a
    # quarter of an L4 (AcceleratorCount 0.25, catalogs/v8/aws/vms.csv @00148f2a)
    path = _aws(tmp_path, G6 + G6
                + "g6.2xlarge,L4,1.0,8.0,32.0,L4,0,,us-east-2,use2-az1,x86_64\n"
                + "g6.4xlarge,L4,1.0,16.0,64.0,L4,,,us-east-2,use2-az1,x86_64\n"
                + "g6f.2xlarge,L4,0.25,8.0,32.0,L4,0.68888,0.367400,us-east-1,use1-az1,x86_64\n")
    res = import_file(path)
    assert [(r.id, r.usd_per_hour, r.spot_usd_per_hour) for r in res.rows] == [("aws-g6-xlarge", 0.8048, 0.2599)]
    assert res.skipped == {"g6.2xlarge": "line 4: no on-demand price (0 or empty)",
                           "g6.4xlarge": "line 5: no on-demand price (0 or empty)",
                           "g6f.2xlarge": "line 6: a fraction (0.25) of one L4, not a whole GPU"}  # line 1 the header


def test_missing_columns_unknown_clouds_and_the_v7_runpod_layout(tmp_path):
    no_price = tmp_path / "aws" / "vms.csv"
    no_price.parent.mkdir()
    no_price.write_text(HEADER_AWS.replace("Price,SpotPrice,", "") + "g6.xlarge,L4,1.0,4.0,16.0,L4,us-east-2,u,x\n")
    with pytest.raises(ImportProblem, match="not a SkyPilot vms.csv: no column Price, SpotPrice"):
        import_file(no_price)
    # a cloud the importer does not read, by its directory ...
    oci = _aws(tmp_path, G6, name="v8/oci")
    with pytest.raises(ImportProblem, match="cloud 'oci' \\(its directory\\) is not one the importer reads"):
        import_file(oci)
    # ... or by a header that matches no provider's layout
    odd = tmp_path / "x" / "vms.csv"
    odd.parent.mkdir()
    odd.write_text(HEADER_AWS.strip() + ",Bandwidth\n" + G6.strip() + ",10\n")
    with pytest.raises(ImportProblem, match="cannot tell which provider the file is for"):
        import_file(odd)
    # SkyPilot's v7 RunPod file (rows copied from catalogs/v7/runpod/vms.csv @0727c2bd): GpuInfo a bare name,
    # MemoryGiB 80.0 the A100's memory, not the pod's RAM (v8 gives 117.0 for the same pod)
    v7 = DATA / "v7" / "runpod" / "vms.csv"
    with pytest.raises(ImportProblem) as e:
        import_file(v7)
    assert str(e.value) == (f"{v7}: line 2, column GpuInfo: 'A100-80GB' is SkyPilot's v7 RunPod layout (GpuInfo a "
                            "bare name, MemoryGiB the GPU memory rather than the host's RAM); import "
                            "catalogs/v8/runpod/vms.csv instead")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_shipped_gcp_hopper_rows_come_from_gcp_list_prices(shipped):
    # REF:GCP-CYCLENERD (pricing.yml @dac31281, 2026-08-20): a3-highgpu-8g us-central1 hour
    # 88.4899999025753, hour_spot 53.0936245479452; REF:GCP-TANOD (2026-10-13): a3-ultragpu-8g
    # us-east4 8 x 10.4365 on demand, 8 x 5.6357 spot
    h100 = shipped.instance("gcp-a3-highgpu-8g")
    assert (h100.region, h100.usd_per_hour, h100.spot_usd_per_hour) == ("us-central1", 88.49, 53.09362)
    h200 = shipped.instance("gcp-a3-ultragpu-8g")
    assert (h200.region, h200.usd_per_hour, h200.spot_usd_per_hour) == ("us-east4", 83.492, 45.0856)
    for i in (h100, h200, shipped.instance("gcp-a3-megagpu-8g"), shipped.instance("gcp-a3-highgpu-1g")):
        assert i.spot_usd_per_hour < 0.65 * i.usd_per_hour  # spot well below on-demand, as GCP prices it
    # the same machine costs within 15 % across the US regions the sources list (88.49 .. 99.58 for 8 x H100)
    assert 83.492 / 8 < 88.49 / 8 * 1.15
