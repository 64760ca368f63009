"""planner.catalog.sources: reading SOURCES.md, finding REF: citations and links; the shipped catalog's ids."""

from __future__ import annotations

import os

import subprocess
import sys
from pathlib import Path

import pytest

from planner.catalog.sources import (
    SourceIndex,
    links_in,
    parse_sources,
    read_sources,
    ref_ids,
    short_title,
    sources_for_catalog,
)

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "catalog"


# ----- REF: citations ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, ids", [
    ("REF:RAM-PRICES (gsmgotech.com, Dec 2025)", ("RAM-PRICES",)),
    ("REF:NV-GEFORCE-PAGES, REF:NV-AMPERE-WP; nvidia-smi total: https://x.example",
     ("NV-GEFORCE-PAGES", "NV-AMPERE-WP")),
    ("catalogs/v8/aws/vms.csv @00148f2a (REF:SKY-AWS-v8)", ("SKY-AWS-v8",)),
    ("PCI-SIG 6.0; REF:PCISIG.", ("PCISIG",)),  # a sentence's full stop is not part of the id
    ("EIA table REF:EIA-EPM-5.6A and again REF:EIA-EPM-5.6A", ("EIA-EPM-5.6A",)),
    ("estimate from REF:RAM-PRICES, REF:RAM-TRENDFORCE", ("RAM-PRICES", "RAM-TRENDFORCE")),
    ("my vendor quote 123", ()),
    ("XREF:NOT-A-CITATION", ()),
    ("REF:<id> is how the catalog cites", ()),
    ("", ()),
    (None, ()),
])
def test_ref_ids(text, ids):
    assert ref_ids(text) == ids


# ----- parsing ------------------------------------------------------------------------------------


def test_parse_a_table_with_its_header():
    text = """# Sources

Prose before the table is ignored, as is REF:NOT-A-ROW here.

| id | document | where |
|---|---|---|
| A-1 | Document one: details | https://a.example/1 |
| `B_2` | Two \\| with a bar | github.com/o/r `dir/f.csv` @0123456789ab |
| REF:C.3 | Three | |

More prose.
"""
    index = parse_sources(text, "cat/SOURCES.md")
    assert index.problems == ()
    assert index.files == ("cat/SOURCES.md",)
    assert list(index.docs) == ["A-1", "B_2", "C.3"]
    a, b, c = (index.get(i) for i in ("A-1", "B_2", "C.3"))
    assert (a.text, a.where, a.urls, a.file, a.line, a.title) == (
        "Document one: details", "https://a.example/1", ("https://a.example/1",), "cat/SOURCES.md", 7,
        "Document one: details")
    assert (b.text, b.where) == ("Two | with a bar", "github.com/o/r dir/f.csv @0123456789ab")
    assert b.urls == ("https://github.com/o/r/blob/0123456789ab/dir/f.csv",)
    assert (c.text, c.where, c.urls, c.line) == ("Three", "", (), 9)
    assert "C.3" in index and "NOT-A-ROW" not in index and index.get("a-1") is None  # ids are case-sensitive


def test_header_names_the_columns_in_any_order():
    text = "| URL | Title | Ref |\n| :--- | --- | ---: |\n| https://x.example/p | X paper | X |\n"
    doc = parse_sources(text).get("X")
    assert (doc.text, doc.where, doc.urls) == ("X paper", "https://x.example/p", ("https://x.example/p",))


def test_table_without_header_is_read_by_position():
    doc = parse_sources("| X | X paper | https://x.example/p |\n").get("X")
    assert (doc.text, doc.where, doc.line) == ("X paper", "https://x.example/p", 1)


def test_duplicates_and_bad_ids_are_problems_not_errors():
    text = ("| id | document | where |\n|---|---|---|\n| A | first | |\n| A | second | |\n"
            "| two words | bad | |\n|  | empty | |\n")
    index = parse_sources(text, "S.md")
    assert index.get("A").text == "first"
    assert index.problems == (
        "S.md:4: id A is also defined on line 3; the first definition is used",
        "S.md:5: a table row without a usable id ('two words'); skipped",
        "S.md:6: a table row without a usable id (''); skipped",
    )


def test_a_file_without_a_table_says_so():
    index = parse_sources("# Sources\n\nNothing here.\n", "S.md")
    assert index.docs == {} and index.problems == (
        "S.md: defines no ids (expected a Markdown table '| id | document | where |')",)


# ----- links --------------------------------------------------------------------------------------


@pytest.mark.parametrize("texts, urls", [
    (("https://www.eia.gov/electricity/monthly/epm_table_grapher.php?t=table_5_06_a",),
     ("https://www.eia.gov/electricity/monthly/epm_table_grapher.php?t=table_5_06_a",)),
    (("see (https://x.org/a).",), ("https://x.org/a",)),
    (("https://x.org/wiki/A_(b)",), ("https://x.org/wiki/A_(b)",)),
    (("github.com/skypilot-org/skypilot-catalog `catalogs/v8/aws/vms.csv` @00148f2af367",),
     ("https://github.com/skypilot-org/skypilot-catalog/blob/00148f2af367/catalogs/v8/aws/vms.csv",)),
    (("github.com/skypilot-org/skypilot-catalog `catalogs/v8/common/accelerators.csv`",),
     ("https://github.com/skypilot-org/skypilot-catalog/blob/HEAD/catalogs/v8/common/accelerators.csv",)),
    (("see github.com/a/b for more",), ("https://github.com/a/b",)),
    (("datasheet (resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet)",),
     ("https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet",)),
    # a site named alone, or two sites named together, are not pages
    (("amd.com, intel.com ark; gamebastion.com/pcmag (RTX 4060 Ti)",), ()),
    (("vms.csv and constraints.py",), ()),
    (("https://a.example/1", "https://a.example/1 https://b.example/2"),
     ("https://a.example/1", "https://b.example/2")),
])
def test_links_in(texts, urls):
    assert links_in(*texts) == urls


def test_short_title():
    assert short_title("SkyPilot catalog, AWS VM prices (InstanceType, GPU, vCPUs)") == (
        "SkyPilot catalog, AWS VM prices")
    assert short_title("NVIDIA H200 product page / datasheet (nvidia.com/en-us/data-center/h200)") == (
        "NVIDIA H200 product page / datasheet")
    # no cut inside parentheses or quotes; a long phrase is shortened at a word
    title = short_title("gpu.name (RTX PRO 6000: 96 GB); " + "word " * 40)
    assert title == "gpu.name (RTX PRO 6000: 96 GB)"
    title = short_title("Eurostat news release 'Household prices: -0.5%' and Statistics Explained " + "x " * 50)
    assert title.startswith("Eurostat news release 'Household prices: -0.5%'") and title.endswith("...")
    assert len(title) <= 100
    assert short_title("Short") == "Short"


# ----- files --------------------------------------------------------------------------------------


def test_read_sources_never_raises(tmp_path):
    missing = read_sources(tmp_path / "SOURCES.md", "x/SOURCES.md")
    assert missing == SourceIndex(missing=("x/SOURCES.md",), problems=("x/SOURCES.md: no such file",))
    (tmp_path / "dir.md").mkdir()
    bad = read_sources(tmp_path / "dir.md")
    assert bad.docs == {} and bad.problems == (f"{tmp_path / 'dir.md'}: cannot be read: is a directory, not a file",)
    os.mkfifo(tmp_path / "fifo.md")  # read_input refuses it unopened: reading would wait for a writer
    fifo = read_sources(tmp_path / "fifo.md", "f/SOURCES.md")
    assert fifo.docs == {} and fifo.problems[0].startswith(
        "f/SOURCES.md: cannot be read: is a named pipe (FIFO), not a regular file")
    (tmp_path / "latin1.md").write_bytes(b"| id | document | where |\n|---|---|---|\n| A | caf\xe9 | |\n")
    assert read_sources(tmp_path / "latin1.md").get("A").text == "caf\ufffd"


def _catalog_dir(path: Path, sources: str | None) -> list[Path]:
    path.mkdir()
    (path / "gpus.yaml").write_text("schema_version: 1\ngpus: []\n")
    if sources is not None:
        (path / "SOURCES.md").write_text(sources)
    return [path / "gpus.yaml"]


def test_an_overlays_definitions_come_first(tmp_path):
    head = "| id | document | where |\n|--|--|--|\n"
    base = _catalog_dir(tmp_path / "base", head + "| A | shipped A | |\n| B | shipped B | |\n")
    over = _catalog_dir(tmp_path / "over", head + "| A | overlay A | |\n| C | own C | |\n")
    index = sources_for_catalog(base + over, show=lambda p: Path(p).parent.name + "/SOURCES.md")
    assert {i: d.text for i, d in index.docs.items()} == {"A": "overlay A", "C": "own C", "B": "shipped B"}
    assert index.files == ("over/SOURCES.md", "base/SOURCES.md")
    assert index.get("B").file == "base/SOURCES.md" and index.problems == ()


def test_an_overlay_without_sources_md_is_noted_a_missing_shipped_one_is_a_problem(tmp_path):
    base = _catalog_dir(tmp_path / "base", "| id | document | where |\n|--|--|--|\n| A | shipped A | |\n")
    over = _catalog_dir(tmp_path / "over", None)
    index = sources_for_catalog(base + over)
    assert index.get("A").text == "shipped A"
    assert index.problems == () and index.missing == (str(tmp_path / "over" / "SOURCES.md"),)

    bare = _catalog_dir(tmp_path / "bare", None)
    index = sources_for_catalog(bare)
    assert index.docs == {} and index.problems == (f"{tmp_path / 'bare' / 'SOURCES.md'}: no such file",)


def test_a_catalog_without_files_reads_the_default_directory(tmp_path):
    _catalog_dir(tmp_path / "d", "| A | from the default | |\n")
    assert sources_for_catalog([], default_dir=tmp_path / "d").get("A").text == "from the default"
    assert sources_for_catalog([]) == SourceIndex()


def test_importing_reads_nothing():
    """No work at import time: importing planner.catalog.sources opens no SOURCES.md."""
    code = ("import sys\nopened = []\n"
            "sys.addaudithook(lambda e, a: opened.append(str(a[0])) if e == 'open' else None)\n"
            "import planner.catalog.sources\nprint([p for p in opened if 'SOURCES' in p])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


# ----- the shipped catalog ------------------------------------------------------------------------


def test_shipped_sources_md_parses_cleanly():
    index = read_sources(CATALOG / "SOURCES.md")
    assert index.problems == ()
    assert len(index.docs) >= 30
    assert all(d.text for d in index.docs.values())


def test_every_ref_in_the_shipped_catalog_is_defined():
    """Every REF:<id> in catalog/*.yaml (sources, notes, any text) has a row in catalog/SOURCES.md."""
    defined = read_sources(CATALOG / "SOURCES.md")
    used: dict[str, list[str]] = {}
    for path in sorted(CATALOG.glob("*.yaml")):
        for ref in ref_ids(path.read_text(encoding="utf-8")):
            used.setdefault(ref, []).append(path.name)
    assert used, "the shipped catalog cites no REF: ids"
    undefined = {ref: files for ref, files in used.items() if ref not in defined}
    assert not undefined, f"REF ids used in catalog/*.yaml but not defined in catalog/SOURCES.md: {undefined}"


def test_every_ref_of_the_loaded_catalog_is_defined():
    from planner.catalog.loader import load_catalog

    catalog = load_catalog()
    index = sources_for_catalog(catalog.files)
    assert index.problems == ()
    cited = {ref for s in catalog.sources for ref in ref_ids(s.source)}
    assert cited and cited <= set(index.docs)
