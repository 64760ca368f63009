"""Hostile pass 41 (tester B, report h41b): import-skypilot rows.

m1: Azure '_Promo' sizes named with SkyPilot's own name of the base size's GPU (A100-80GB, H100) were left out
"form factor not told", and an ND '_Promo' size got that reason rather than the ND count rule; an unknown suffix
('_Promo2') was read as the base size without a word.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sky_helpers import vms_csv

from planner.catalog.skypilot import import_file

AZURE_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation"


def _one(tmp_path: Path, row: str) -> tuple[list[str], str]:
    result = import_file(vms_csv(tmp_path, "azure", AZURE_HEADER, row))
    return [r.gpu for r in result.rows], " ".join(" ".join(result.skipped.values()).split())


@pytest.mark.parametrize("row, gpu", [
    # the base size Standard_NC24ads_A100_v4 carries one A100 80GB PCIe (aliases._AZURE_A100_PCIE): so its _Promo
    ("Standard_NC24ads_A100_v4_Promo,A100-80GB,1,24,220,,3.0,,eastus,V2", "a100-80gb-pcie"),
    # the base size Standard_ND96isr_H100_v5 is SXM x8 (aliases._AZURE_SXM); 'H100' stands for three boards
    ("Standard_ND96isr_H100_v5_Promo,H100,8,96,1900,,90,,eastus,V2", "h100-sxm"),
    # any case of the suffix: Azure's size names are case-blind
    ("Standard_NC24ads_A100_v4_PROMO,A100-80GB,1,24,220,,3.0,,eastus,V2", "a100-80gb-pcie"),
])
def test_m1_promo_size_held_as_its_base_size(tmp_path: Path, row: str, gpu: str) -> None:
    gpus, why = _one(tmp_path, row)
    assert gpus == [gpu], why


def test_m1_nd_promo_gets_the_nd_count_rule(tmp_path: Path) -> None:
    # Standard_ND96asr_v4 carries 8 A100 40GB (_AZURE_COUNTS): x4 is refused by count, not by form factor
    gpus, why = _one(tmp_path, "Standard_ND96asr_v4_Promo,A100,4,96,900,,30,,eastus,V2")
    assert gpus == []
    assert "carries 8 GPUs, but AcceleratorCount gives 'A100' x4" in why
    assert "form factor" not in why


def test_m1_nd_promo_of_the_right_count_written(tmp_path: Path) -> None:
    # the same size x8: SkyPilot's 'A100' is the 40 GB card, ND sizes are SXM -> a100-40gb-sxm
    gpus, why = _one(tmp_path, "Standard_ND96asr_v4_Promo,A100,8,96,900,,30,,eastus,V2")
    assert gpus == ["a100-40gb-sxm"], why


def test_m1_unknown_suffix_refused_and_named(tmp_path: Path) -> None:
    # '_Promo2' is no suffix Azure writes: the base size Standard_NC8as_T4_v3 was taken silently before
    gpus, why = _one(tmp_path, "Standard_NC8as_T4_v3_Promo2,T4,1,8,56,,1,,eastus,V2")
    assert gpus == []
    assert "ends in '_Promo2'" in why


def test_m1_base_size_still_written(tmp_path: Path) -> None:
    # control: the base size without a suffix is written as before (NC4as T4 v3 carries one T4)
    gpus, why = _one(tmp_path, "Standard_NC8as_T4_v3,T4,1,8,56,,1,,eastus,V2")
    assert gpus == ["t4"], why


# --- m2: UTF-16 of astral characters named with the right byte order ------------------------------------------

@pytest.mark.parametrize("text", ["\U0001d400\U0001d401\U0001d402\n", "\U0001f600\U0001f600\U0001f600\n\U0001f600\n"])
@pytest.mark.parametrize("codec, iconv", [("utf-16-be", "UTF-16BE"), ("utf-16-le", "UTF-16LE")])
def test_m2_astral_utf16_named_in_its_own_order(text: str, codec: str, iconv: str) -> None:
    from planner.core.infile import unicode_form
    # U+1D400 is D835 DC00 and U+1F600 D83D DE00: the low surrogate's 00 byte looked like ASCII of the other order.
    # Read in the wrong order the line feed is U+0A00 (unassigned), so the right order has fewer odd characters.
    form = unicode_form(text.encode(codec))
    assert form is not None and form[1] == iconv, form


def test_m2_resave_hint_reads_back_the_text() -> None:
    from planner.core.infile import resave_problem
    data = "\U0001d400\U0001d401\U0001d402\n".encode("utf-16-be")
    said = resave_problem(data)
    assert said is not None
    # the iconv the hint prints (-f UTF-16BE) must give back the text, not mojibake
    assert "iconv -f UTF-16BE" in said[2]


# --- m5: GpuInfo keys that are lookalikes of SkyPilot's -------------------------------------------------------

AWS_ROW = "g5.xlarge,A10G,1,4,16,{},1.006,,us-east-1,us-east-1a,x86_64"


def _aws_info(inner: str, top: str = "'TotalGpuMemoryInMiB': 24576") -> str:
    return '"' + "{'Gpus': [{" + inner + "}], " + top + "}" + '"'


@pytest.mark.parametrize("gpu_info, said", [
    # ZERO WIDTH SPACE inside 'Name' beside the real 'Name': a second GPU name (B200) the row would carry silently
    (_aws_info("'Name': 'A10G', 'Na\u200bme': 'B200', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}"),
     "names the key 'Name' twice in one dict"),
    # CYRILLIC SMALL LETTER A for 'a' beside 'Name'
    (_aws_info("'Name': 'A10G', 'N\u0430me': 'B200', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}"),
     "names the key 'Name' twice in one dict"),
    # a top-level total with a zero width space beside the real one
    (_aws_info("'Name': 'A10G', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}",
               "'TotalGpuMemoryInMiB': 24576, 'Tota\u200blGpuMemoryInMiB': 1"),
     "names the key 'TotalGpuMemoryInMiB' twice in one dict"),
    # CYRILLIC SMALL LETTER IE alone (no real 'Name' beside it): a lookalike of SkyPilot's key, named
    (_aws_info("'Nam\u0435': 'A10G', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}"),
     "U+0435 CYRILLIC SMALL LETTER IE), a lookalike of SkyPilot's key 'Name'"),
])
def test_m5_lookalike_gpu_info_keys_leave_the_row_out(tmp_path: Path, gpu_info: str, said: str) -> None:
    from tests.sky_helpers import aws_csv

    result = import_file(aws_csv(tmp_path, AWS_ROW.format(gpu_info)))
    why = " ".join(" ".join(result.skipped.values()).split())
    assert [r.instance for r in result.rows] == []
    assert said in why


def test_m5_plain_gpu_info_still_written(tmp_path: Path) -> None:
    from tests.sky_helpers import aws_csv

    # control: SkyPilot's own keys in ASCII, no twin -> the row is written (A10G x1, 24576 MiB = 24 GiB)
    info = _aws_info("'Name': 'A10G', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}")
    result = import_file(aws_csv(tmp_path, AWS_ROW.format(info)))
    assert [r.instance for r in result.rows] == ["g5.xlarge"], result.skipped


# --- m9: a GpuInfo Count not whole as written -----------------------------------------------------------------

LAMBDA_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"


def _lambda_row(count: str) -> str:
    info = ('"' + "{'Gpus': [{'Name': 'A10', 'Manufacturer': 'NVIDIA', 'Count': " + count
            + ", 'MemoryInfo': {'SizeInMiB': 24576}}], 'TotalGpuMemoryInMiB': 24576}" + '"')
    return f"gpu_4x_a10,A10,4.0,120,800,3.0,us-east-1,{info},"


def test_m9_gpu_info_count_not_whole_as_written_refused(tmp_path: Path) -> None:
    # 3.9999999999999999 is float 4.0 but not whole by its digits, as AcceleratorCount '3.9999999999999999' is refused
    result = import_file(vms_csv(tmp_path, "lambda", LAMBDA_HEADER, _lambda_row("3.9999999999999999")))
    why = " ".join(" ".join(result.skipped.values()).split())
    assert result.rows == []
    assert "gives Count '3.9999999999999999', not a whole number as written" in why


def test_m9_gpu_info_count_whole_float_written(tmp_path: Path) -> None:
    # control: SkyPilot's Lambda fetcher writes the count as a float, 4.0: whole, the row is written (a10 x4)
    result = import_file(vms_csv(tmp_path, "lambda", LAMBDA_HEADER, _lambda_row("4.0")))
    assert [r.gpu for r in result.rows] == ["a10"], result.skipped


# --- m6: non-ASCII digits in a number column named -------------------------------------------------------------

GCP_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"


@pytest.mark.parametrize("vcpus, named", [
    ("\uff112", "U+FF11 (FULLWIDTH DIGIT ONE)"),  # '１2': Python's float() reads it as 12, no vms.csv writes it
    ("\u0661\u0662", "U+0661 (ARABIC-INDIC DIGIT ONE)"),
])
def test_m6_non_ascii_digit_named(tmp_path: Path, vcpus: str, named: str) -> None:
    row = f"g2-standard-12,,,{vcpus},32,,0,0.1,us-central1,us-central1-a"
    result = import_file(vms_csv(tmp_path, "gcp", GCP_HEADER, row))
    why = " ".join(" ".join(result.skipped.values()).split())
    assert result.rows == []
    assert named in why and "ASCII digits" in why


# --- m4: a lookalike twin of a header column refuses the file, the character named -----------------------------

@pytest.mark.parametrize("twin, named", [
    ("\uff30rice", "U+FF30 (FULLWIDTH LATIN CAPITAL LETTER P)"),  # NFKC folds it to 'Price'
    ("Spot\u200bPrice", "U+200B (ZERO WIDTH SPACE)"),  # a format character, drawn as nothing
    ("Pr\u0456ce", "U+0456 (CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I)"),  # confusable with 'i'
])
def test_m4_lookalike_header_twin_refused(tmp_path: Path, twin: str, named: str) -> None:
    from planner.catalog.skypilot_csv import ImportProblem

    row = "gpu_1x_a10,A10,1.0,30,200,1.29,us-east-1,,,0.01"
    path = vms_csv(tmp_path, "lambda", LAMBDA_HEADER + "," + twin, row)
    with pytest.raises(ImportProblem) as err:
        import_file(path)
    said = str(err.value)
    assert "twice, differing only in case or in a lookalike character" in said
    assert named in said


# --- m3: counts not whole shown as the file writes them ------------------------------------------------------------

@pytest.mark.parametrize("count, said", [
    ("2.0e-1", "a fraction ('2.0e-1') of one A10G"),   # 0.2 by its float; the file's text is '2.0e-1'
    ("0.5000", "a fraction ('0.5000') of one A10G"),
    (".5", "a fraction ('.5') of one A10G"),
    ("+1.5", "a count ('+1.5') of A10G GPUs"),
    ("1.50", "a count ('1.50') of A10G GPUs"),
    ("0.5", "a fraction (0.5) of one A10G"),  # the short form is the text itself: shown bare, as before
])
def test_m3_count_not_whole_shown_as_written(tmp_path: Path, count: str, said: str) -> None:
    from tests.sky_helpers import aws_csv

    result = import_file(aws_csv(tmp_path, f"g5.xlarge,A10G,{count},4,16,,1.006,,us-east-1,us-east-1a,x86_64"))
    why = " ".join(" ".join(result.skipped.values()).split())
    assert result.rows == []
    assert said in why


# --- m8: no guess for a region with nothing of a region --------------------------------------------------------

@pytest.mark.parametrize("region, guess", [
    ("=1+1", None),  # a spreadsheet formula: '1-1' was offered
    ("us east 1", "did the file mean 'us-east-1'?"),  # control: a region written with blanks keeps its guess
])
def test_m8_region_guess_only_for_a_region_like_text(tmp_path: Path, region: str, guess: str | None) -> None:
    from tests.sky_helpers import aws_csv

    result = import_file(aws_csv(tmp_path, f"g5.xlarge,A10G,1,4,16,,1.006,,{region},use1-az1,x86_64"))
    why = " ".join(" ".join(result.skipped.values()).split())
    assert result.rows == []
    assert "is no region name" in why
    if guess is None:
        assert "did the file mean" not in why
    else:
        assert guess in why


# --- m7: a GCP VM row of a malformed region said so, not "no GPU row" -------------------------------------------

def test_m7_gcp_vm_row_of_malformed_region(tmp_path: Path) -> None:
    rows = ("g2-standard-4,,,4,16,,0.2,0.1,us central1,us-central1-a",
            ",L4,1,,,,0.5,0.2,us-central1,us-central1-a",
            "g2-standard-8,,,8,32,,0.3,0.1,us-central1,us-central1-a")
    result = import_file(vms_csv(tmp_path, "gcp", GCP_HEADER, *rows))
    # g2-standard-8 finds the L4 row of us-central1-a (0.3 + 0.5); g2-standard-4's region has a blank in it
    assert [r.instance for r in result.rows] == ["g2-standard-8"]
    why = " ".join(result.skipped["g2-standard-4"].split())
    assert "the region 'us central1' is no region name" in why
    assert "did the file mean 'us-central1'?" in why
    assert "GPU row" not in why
