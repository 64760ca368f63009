"""h16b findings fixed on branch f16b1: import-skypilot's source texts beyond U+FFFF and with private-use
characters load back (#1), --source is checked at the option for what the loader refuses (13l, 13m)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from planner.catalog.loader import load_catalog
from planner.catalog.skypilot import source_problem, yaml_text
from planner.cli.main import main

HEADER_AWS = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region," \
             "AvailabilityZone,GpuInfo,Arch\n"
# the repro's row (h16b #1: /tmp/h16b/repro/f_astral/run.sh)
G6 = "g6.xlarge,L4,1,4,16,0.8048,0.3,us-east-1,us-east-1a,,x86_64\n"


def _aws(folder: Path) -> Path:
    path = folder / "aws" / "vms.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER_AWS + G6, encoding="utf-8")
    return path


def _import(*args: str):
    return CliRunner().invoke(main, ["catalog", "import-skypilot", *args, "--as-of", "2026-01"])


def _source(out: Path) -> str:
    """The source of the imported row as the catalog loader reads the overlay back."""
    catalog = load_catalog(out)
    return next(i.source for i in catalog.instances if i.id == "aws-g6-xlarge")


@pytest.mark.parametrize("text", ["quote \U0001f600", "\U00020000 x", "a\"b\\c \u4e2d", "\U0001f469\u200d\U0001f4bb",
                                  "\udcff"])
def test_yaml_text_reads_back_as_itself(text: str) -> None:
    # a character beyond U+FFFF is written as its 8-digit escape, never as a surrogate pair ('\ud83d\ude00'),
    # which YAML reads as two lone surrogates
    written = yaml_text(text)
    assert written.isascii() and "\\ud83d" not in written
    assert yaml.safe_load(written) == text


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_emoji_in_source_loads_back(tmp_path: Path) -> None:
    out = tmp_path / "o1"
    r = _import(str(_aws(tmp_path)), "--out", str(out), "--source", "quote \U0001f600")
    assert r.exit_code == 0, r.output
    assert 'source: "quote \\U0001f600"' in (out / "cloud.yaml").read_text(encoding="utf-8")
    assert _source(out) == "quote \U0001f600"
    # and a plan's catalog check reads the overlay
    check = CliRunner().invoke(main, ["catalog", "check", "--catalog", str(out)])
    assert check.exit_code == 0, check.output


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("folder", ["proj\U0001f600", "\U00020000"])  # an emoji; CJK Extension B
def test_a_path_beyond_u_ffff_in_the_default_source_loads_back(tmp_path: Path, folder: str) -> None:
    src = _aws(tmp_path / folder)
    out = tmp_path / "o"
    r = _import(str(src), "--out", str(out))
    assert r.exit_code == 0, r.output
    # the default source names the path as given, the character itself (written as its \U escape)
    assert _source(out) == f"SkyPilot catalog file {src} (schema v8, REF:SKY-SCHEMA-v8), read 2026-01"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_private_use_character_in_the_path_is_escaped_in_the_default_source(tmp_path: Path) -> None:
    # U+F022: the SFM mapping of SMB shares writes it for a ':' in a Windows file name
    src = _aws(tmp_path / "share\uf022x")
    out = tmp_path / "o"
    r = _import(str(src), "--out", str(out))
    assert r.exit_code == 0, r.output
    shown = str(src).replace("\uf022", "\\uf022")  # the six characters '\uf022', as the docs' '\x1b', '\u202e'
    assert _source(out) == f"SkyPilot catalog file {shown} (schema v8, REF:SKY-SCHEMA-v8), read 2026-01"


def test_a_path_too_long_for_a_source_even_escaped_asks_for_source(tmp_path: Path) -> None:
    # 9 folders of 85 private-use characters (255 bytes each, a folder name's most): escaped as 6 characters each,
    # 9 x 85 x 6 = 4,590 characters, over the loader's 4,000 for a source
    folder = tmp_path.joinpath(*["\uf022" * 85] * 9)
    out = tmp_path / "o"
    r = _import(str(_aws(folder)), "--out", str(out))
    assert r.exit_code == 2 and not out.exists()
    assert "the default source of its rows, which names the file's path, would be refused by the catalog loader: " \
           "it is 4," in r.stderr
    assert r.stderr.rstrip().endswith("Give the rows a source of your own, e.g. --source 'SkyPilot catalog, "
                                      "2026-01'."), r.stderr
    assert r.stderr.count("\n") == 1 and "\uf022" not in r.stderr


@pytest.mark.parametrize("value, message", [
    # h16b 13l: the loader refuses a private-use character in a text (planner.core.names.text_glyph_problem)
    ("a\ue000b", "Invalid value for --source: holds U+E000 at character 2, shown as \\ue000: a private-use "
                 "character"),
    # a byte that is not UTF-8 (PEP 383 holds it as U+DCFF)
    ("a\udcffb", "Invalid value for --source: holds the byte 0xff, which is not UTF-8, so no catalog file can "
                 "hold the text; type it in UTF-8, e.g. --source 'SkyPilot catalog, 2026-01'."),
    # h16b 13m: 40,000 characters, over the loader's 4,000 (planner.catalog.texts.MAX_FREE_TEXT_CHARS)
    ("s" * 40_000, "Invalid value for --source: is 40,000 characters long; a catalog row's source is at most 4,000 "
                   "characters (the catalog loader's cap); give a short one (at most 4,000 characters) saying where "
                   "the files come from, e.g. --source 'SkyPilot catalog, 2026-01' or the catalog's URL and commit."),
    ("s" * 4_001, "is 4,001 characters long"),
])
def test_a_source_the_loader_refuses_is_refused_at_the_option(tmp_path: Path, value: str, message: str) -> None:
    out = tmp_path / "o"
    r = _import(str(_aws(tmp_path)), "--out", str(out), "--source", value)
    assert r.exit_code == 2 and not out.exists()
    assert message in r.stderr, r.stderr
    assert "keep the long text in a file" not in r.stderr and "instances[0]" not in r.stderr


def test_a_source_of_4000_characters_is_taken() -> None:
    # the cap itself: 4,000 characters load (planner.catalog.texts.MAX_FREE_TEXT_CHARS)
    assert source_problem("s" * 4_000) is None
    assert source_problem("quote \U0001f600") is None


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_out_as_its_own_catalog_gets_a_hint_that_works(tmp_path: Path) -> None:
    # h16b #12: the hint said "use both with --catalog", but --catalog is given once
    src = _aws(tmp_path)
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "ram.yaml").write_text("schema_version: 1\ndimms: []\n", encoding="utf-8")
    r = _import(str(src), "--out", str(ov), "--catalog", str(ov))
    assert r.exit_code == 2
    assert r.stderr == (f"Error: --out {ov} is the --catalog overlay this run reads, and an import never replaces its "
                        f"own input. Copy {ov}'s other files (ram.yaml) into a new folder NEW, import into it with "
                        f"--out NEW --catalog {ov}, then give --catalog NEW alone (a run reads one overlay "
                        "folder).\n")
    # followed: the new folder loads alone as --catalog, with the overlay's ram.yaml and the imported rows
    new = tmp_path / "new"
    new.mkdir()
    (new / "ram.yaml").write_bytes((ov / "ram.yaml").read_bytes())
    r = _import(str(src), "--out", str(new), "--catalog", str(ov))
    assert r.exit_code == 0, r.output
    listing = CliRunner().invoke(main, ["catalog", "cloud", "--catalog", str(new)])
    assert listing.exit_code == 0 and "aws-g6-xlarge" in listing.output
    assert str(new / "ram.yaml") in load_catalog(new).files
    # an overlay that holds a cloud.yaml: its own entries are said not to be carried over
    (ov / "cloud.yaml").write_bytes((new / "cloud.yaml").read_bytes())
    r = _import(str(src), "--out", str(ov), "--catalog", str(ov))
    assert r.exit_code == 2
    assert r.stderr.endswith(f"(a run reads one overlay folder); {ov}/cloud.yaml's own entries are not in it: add "
                             "them to NEW/cloud.yaml by hand.\n"), r.stderr


@pytest.mark.parametrize("sep, name", [
    (";", "';' (a semicolon), as a spreadsheet saves CSV where the decimal mark is a comma (its numbers then read "
          "0,8048, which the importer does not take)"),
    ("\t", "a tab, as a tab-delimited text file does"),
])
def test_a_file_separated_by_another_character_is_told_so(tmp_path: Path, sep: str, name: str) -> None:
    # h16b 13c: the repro's German-locale file: every column is in the header, the separator is ';'
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    path.write_text(HEADER_AWS.replace(",", sep) + G6.replace(",", sep), encoding="utf-8")
    out = tmp_path / "o"
    r = _import(str(path), "--out", str(out))
    assert r.exit_code == 2 and not out.exists()
    assert r.stderr == (f"Error: {path}: line 1: the header separates its columns with {name}; a SkyPilot vms.csv "
                        "separates them with ','. Give the provider's vms.csv as SkyPilot publishes it (download it "
                        "again rather than saving it from a spreadsheet), or save it with ',' between values and '.' "
                        "as the decimal mark, then import it again.\n")


def test_a_header_missing_columns_whatever_the_separator_is_still_named_so(tmp_path: Path) -> None:
    # ';' in the header but not every required column there once split at it: the columns missing are named
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    path.write_text("InstanceType;Price\ng6.xlarge;1\n", encoding="utf-8")
    r = _import(str(path), "--out", str(tmp_path / "o"))
    assert r.exit_code == 2
    assert "not a SkyPilot vms.csv: no column InstanceType, AcceleratorName" in r.stderr


# a hand-written cloud.yaml entry (the shipped aws-g6-xlarge row's figures, catalog/cloud.yaml)
_CLOUD_ENTRY = """schema_version: 1
instances:
  - id: my-g6
    provider: {provider}
    instance: "{instance}"
    gpu: l4
    gpu_count: 1
    vcpus: 4
    memory: 16 GiB
    usd_per_hour: 0.8048
    region: "{region}"
    source: "test"
    as_of: "2026-08"
    verification: V
"""


def _cloud_overlay(tmp_path: Path, *, provider: str = "aws", instance: str = "g6.xlarge",
                   region: str = "us-east-2") -> Path:
    out = tmp_path / "ov"
    out.mkdir()
    (out / "cloud.yaml").write_text(_CLOUD_ENTRY.format(provider=provider, instance=instance, region=region),
                                    encoding="utf-8")
    return out


@pytest.mark.parametrize("key, value, odd", [
    ("region", "=1+1", "'='"), ("region", "[r](http://e)", "'['"), ("region", "us:east", "':'"),
    ("region", "us  east", "blanks or commas out of place"), ("region", ", US, NA", "blanks or commas out of place"),
    ("instance", "=1+1", "'='"), ("instance", "g6 xlarge", "' '"), ("instance", "a/b", "'/'"),
])
def test_a_cloud_region_or_instance_is_written_as_the_clouds_name_them(tmp_path: Path, key: str, value: str,
                                                                        odd: str) -> None:
    # h16b 13d: printable ASCII was all the loader asked; '=1+1' and '[r](http://e)' loaded and were printed
    ov = _cloud_overlay(tmp_path, **{key: value})
    r = CliRunner().invoke(main, ["catalog", "cloud", "--catalog", str(ov)])
    assert r.exit_code == 2
    line = 11 if key == "region" else 5  # the line of the key in _CLOUD_ENTRY
    what = "a region" if key == "region" else "an instance type"
    assert r.stderr.startswith(f"Error: {ov / 'cloud.yaml'}:{line}: instances[0] (my-g6).{key}: {value!r} holds "
                               f"{odd}; {what} is letters, digits, '-', '_' and '.', as the clouds name them"), r.stderr
    assert r.stderr.count("\n") == 1


def test_a_region_with_blanks_of_a_cloud_that_names_none_so_is_refused_with_the_name(tmp_path: Path) -> None:
    ov = _cloud_overlay(tmp_path, region="us east 2")
    r = CliRunner().invoke(main, ["catalog", "cloud", "--catalog", str(ov)])
    assert r.exit_code == 2
    assert r.stderr == (f"Error: {ov / 'cloud.yaml'}:11: instances[0] (my-g6).region: region 'us east 2' holds "
                        "blanks, and aws names its regions without (us-east-1). Did you mean region: 'us-east-2'?\n")


@pytest.mark.parametrize("provider, instance, region", [
    ("vast", "1x-RTX_4090-32-65536", "Texas, US, NA"),  # SkyPilot's catalogs/v8/vast/vms.csv writes these
    ("vast", "2x-RTX_4090-32-65536", "British Columbia, CA, NA"),
    ("oci", "BM.GPU.H100.8", "us-ashburn-1"),
    ("azure", "Standard_NC24ads_A100_v4", "eastus"),
])
def test_regions_and_instances_as_skypilot_files_write_them_load(tmp_path: Path, provider: str, instance: str,
                                                                 region: str) -> None:
    catalog = load_catalog(_cloud_overlay(tmp_path, provider=provider, instance=instance, region=region))
    row = next(i for i in catalog.instances if i.id == "my-g6")
    assert (row.instance, row.region) == (instance, region)
