"""planner catalog check: the shipped catalog passes with its stated exceptions; each check fails what it should."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from planner.catalog.check import check_catalog, failures, reference_date
from planner.catalog.loader import load_catalog
from planner.catalog.sources import parse_sources
from planner.cli.main import main


# The shipped catalog's prices were last reviewed on this date; pinned so the test does not rot
# (ages are counted from today's date by default, see test_the_default_reference_date_is_today).
REVIEWED = "2026-12-02"


def test_the_shipped_catalog_passes_with_its_stated_exceptions():
    cat = load_catalog()
    findings, ref = check_catalog(cat, today=REVIEWED)
    assert ref == REVIEWED and reference_date(cat) == "2026-11"  # the catalog's own newest price: 2026-11
    assert failures(findings) == [], "\n".join(f.line() for f in failures(findings))
    exempt = {(f.check, f.id) for f in findings if f.exempt}
    # discontinued cards and parts whose only price is old say why their figure stands
    assert ("stale", "rtx-3090") in exempt and ("stale", "rtx-a5000") in exempt and ("stale", "gaudi-2") in exempt
    assert ("range", "am5-desktop") in exempt
    # the notes do not fail: the GPUs without a vendor figure (the Azure rows of 2024-01 were retired)
    notes = [f.text for f in findings if f.check == "note"]
    assert notes and not any("azure" in n for n in notes)
    r = CliRunner().invoke(main, ["catalog", "check", "--today", REVIEWED])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == f"Catalog check: ages counted from {REVIEWED} (--today)"
    assert r.output.splitlines()[-1].startswith("0 failed, ")


def test_the_default_reference_date_is_today(monkeypatch):
    import planner.catalog.check as check

    monkeypatch.setattr(check, "today_date", lambda: "2031-05-17")
    findings, ref = check_catalog(load_catalog(), sources=parse_sources(""))
    assert ref == "2031-05-17"
    # rtx-4090's street price of 2026-05 is (2031*12+5) - (2026*12+5) = 60 months old on 2031-05-17
    stale = [f.text for f in findings if f.check == "stale" and not f.exempt and f.id == "rtx-4090"]
    assert any(t.startswith("street $1,800.00 (new) of 2026-05 is 60 months old") for t in stale), stale
    r = CliRunner().invoke(main, ["catalog", "check"])
    assert r.output.splitlines()[0] == "Catalog check: ages counted from 2031-05-17 (today's date; --today DATE " \
                                       "counts from another)"
    assert r.exit_code == 1  # five years on, the shipped street prices are stale


def _overlay(tmp_path: Path, files: dict[str, str]) -> Path:
    d = tmp_path / "over"
    d.mkdir()
    for name, text in files.items():
        (d / name).write_text(textwrap.dedent(text))
    return d


def test_each_check_fails_what_it_should(tmp_path):
    over = _overlay(tmp_path, {
        "gpus.yaml": """\
            schema_version: 1
            gpus:
              - id: rtx-4090
                prices:
                  - {usd: 1700, kind: street, as_of: 2024-01, source: "REF:MY-SHOP"}
                  - {usd: 1500, kind: estimate, as_of: 2026-11, source: "REF:NOWHERE"}
              - id: rtx-5090
                bf16_tflops: 419.2
                vendor_bf16_tflops: 209.6
            """,
        "SOURCES.md": """\
            | id | document | where |
            |---|---|---|
            | MY-SHOP | my shop's price list | ../shared/prices.md |
            """,
    })
    findings, _ = check_catalog(load_catalog(over), today="2026-12")
    failed = {(f.check, f.id): f.text for f in failures(findings)}
    assert "street $1,700.00 (new) of 2024-01 is 35 months old" in failed[("stale", "rtx-4090")]
    assert "estimate $1,500.00 of 2026-11 has no range" in failed[("range", "rtx-4090")]
    assert "cited by gpus.yaml rtx-4090 but defined in no SOURCES.md" in failed[("location", "REF:NOWHERE")]
    assert "points outside the repository" in failed[("location", "REF:MY-SHOP")]
    assert "bf16_tflops 419.2 is above the vendor's dense figure 209.6" in failed[("tflops", "rtx-5090")]
    r = CliRunner().invoke(main, ["catalog", "check", "--catalog", str(over), "--json"])
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert doc["passed"] is False and {f["check"] for f in doc["findings"] if f["fails"]} == {
        "stale", "range", "location", "tflops"}


def test_a_source_without_a_location_fails():
    index = parse_sources("| id | document | where |\n|---|---|---|\n| A | a report | |\n| B | b | https://b.org/x |\n")
    from planner.catalog.check import _source_findings

    found = {f.id: f.text for f in _source_findings(load_catalog(), index)}
    assert "says what the document is but not where" in found["REF:A"] and "REF:B" not in found


def test_every_shipped_source_says_where_it_is():
    root = Path(__file__).resolve().parents[1]
    text = (root / "catalog" / "SOURCES.md").read_text()
    index = parse_sources(text)
    assert index.docs and all(doc.urls for doc in index.docs.values()), [d for d, doc in index.docs.items()
                                                                         if not doc.urls]
    assert "../shared" not in text and "/work/" not in text


def test_today_takes_only_the_two_forms_its_help_names():
    # Python 3.11's date.fromisoformat also reads 20261202 and 2026-W49-3, which the check's date
    # arithmetic then failed on ("internal error"); hostile pass 5B item 4
    for bad in ("20261202", "2026-W49-3", "2026W493"):
        r = CliRunner().invoke(main, ["catalog", "check", "--today", bad])
        assert r.exit_code == 2, r.output
        assert f"--today: must be a date written YYYY-MM-DD or YYYY-MM, not '{bad}'" in r.output, r.output
        assert "internal error" not in r.output
