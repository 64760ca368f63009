"""Findings of a second hostile trial on issue 28's report sets and output paths (branch safety3).

Each test fails on the main it was found on: an overlay's SOURCES.md replaced by a report, a SkyPilot
spot price of 0 that made the whole import fail, stdout cut short silently, ...
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from planner.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
QLORA = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
OVERLAY_GPU = ('schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    price_usd: 250\n    price_kind: quote\n'
               '    source: "REF:X"\n    as_of: 2026-11-20\n')


def _cli(*args: str, cwd: Path | None = None, env: dict | None = None, shell: str | None = None):
    full = {**os.environ, **(env or {})}
    full["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{full.get('PATH', '')}"
    if shell is not None:
        return subprocess.run(["bash", "-c", shell], cwd=cwd, env=full, capture_output=True, text=True)
    return subprocess.run([sys.executable, "-m", "planner.cli.main", *args], cwd=cwd, env=full,
                          capture_output=True, text=True)


def _scenario(path: Path, name: str, micro_batch: int = 1) -> Path:
    doc = yaml.safe_load(QLORA.read_text())
    doc["name"] = name
    path.write_text(yaml.safe_dump(doc, sort_keys=False).replace("micro_batch: 1", f"micro_batch: {micro_batch}"))
    return path


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


# -- 1. an overlay's SOURCES.md is an input of the run ------------------------------------------------

def test_an_overlays_sources_md_is_never_replaced_by_a_report(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("ov").mkdir()
    s = _scenario(tmp_path / "s.yaml", "SOURCES")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", "ov", "--format", "md"])
    assert r.exit_code == 0, r.output
    Path("ov/gpus.yaml").write_text(OVERLAY_GPU)
    before = _sha(Path("ov/SOURCES.md"))
    _scenario(s, "SOURCES", micro_batch=2)
    r = CliRunner().invoke(main, ["plan", str(s), "--catalog", "ov", "--out", "ov", "--format", "md,xlsx"])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err == ("Error: ov/SOURCES.md: is an input of this run, and a report never replaces its input. "
                   "Give another --out."), err
    assert _sha(Path("ov/SOURCES.md")) == before
    r = CliRunner().invoke(main, ["compare", str(s), "--catalog", "ov", "--out", "ov"])
    assert r.exit_code == 0, r.output  # compare writes SOURCES-compare.*: no input in the way
    assert _sha(Path("ov/SOURCES.md")) == before
