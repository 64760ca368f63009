"""Helpers the CLI safety tests share: run planner in a subprocess, write a copy of the shipped QLoRA
scenario under another name, hash a file."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
QLORA = ROOT / "scenarios" / "qlora-7b-12gb.yaml"


def _cli(*args: str, cwd: Path | None = None, env: dict | None = None, shell: str | None = None):
    """``python -m planner *args`` (or ``bash -c shell``) with this interpreter's folder first on PATH,
    output captured as text."""
    full = {**os.environ, **(env or {})}
    full["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{full.get('PATH', '')}"
    if shell is not None:
        return subprocess.run(["bash", "-c", shell], cwd=cwd, env=full, capture_output=True, text=True)
    return subprocess.run([sys.executable, "-m", "planner", *args], cwd=cwd, env=full,
                          capture_output=True, text=True)


def _scenario(path: Path, name: str, micro_batch: int = 1) -> Path:
    """The shipped QLoRA scenario written to ``path`` as scenario ``name`` at ``micro_batch``."""
    doc = yaml.safe_load(QLORA.read_text())
    doc["name"] = name
    path.write_text(yaml.safe_dump(doc, sort_keys=False).replace("micro_batch: 1", f"micro_batch: {micro_batch}"))
    return path


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()
