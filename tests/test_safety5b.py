"""Findings of a fourth hostile trial on issue 28 (encodings, injection, API; branch safety5b).

Each test fails on the main it was found on (cff61f9). Message checks stand outside ``pytest.raises``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QLORA = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
COMPARE = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{full.get('PATH', '')}"
    return subprocess.run([sys.executable, "-m", "planner", *[os.fsencode(a) if isinstance(a, str) else a
                                                              for a in args]],
                          cwd=cwd, env=full, capture_output=True)


def _raises(exc: type[BaseException], fn, *args, **kw) -> str:
    """The message of the ``exc`` that ``fn(*args, **kw)`` raises (checked by the caller, outside raises)."""
    with pytest.raises(exc) as info:
        fn(*args, **kw)
    return str(info.value)


# -- 1. huge and infinite token counts: the range error, never OverflowError -------------------------

@pytest.mark.parametrize("value, shown", [(".inf", "inf"), ("1.0e+400", "inf"), ('"1e400"', "'1e400'"),
                                          ("1" + "0" * 309, "1000...000 (310 digits)")])
def test_huge_token_counts_get_the_range_error(tmp_path: Path, value: str, shown: str) -> None:
    text = COMPARE.read_text()
    assert "dataset_tokens: 100000000 " in text
    (tmp_path / "d.yaml").write_text(text.replace("dataset_tokens: 100000000 ", f"dataset_tokens: {value} "))
    (tmp_path / "t.yaml").write_text(text.replace("dataset_tokens: 100000000 ", f"tokens_per_month: {value} "))
    r = _cli("compare", "d.yaml", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and "internal error" not in err, err
    assert f"workloads[0].dataset_tokens: must be at least 1 and at most 1e+16, not {shown}." in err, err
    r = _cli("plan", "t.yaml", "--out", "o", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and "internal error" not in err, err
    assert f"workloads[0].tokens_per_month: must be above 0 and at most 3e+13, not {shown}." in err, err


def test_api_huge_token_counts_raise_input_error() -> None:
    from planner import compare, plan
    from planner.core.errors import InputError

    wl = {"name": "w", "model": "llama-2-7b", "task": "train", "method": "qlora", "dataset_tokens": float("inf")}
    msg = _raises(InputError, plan, {"name": "x", "workloads": [wl]})
    assert "dataset_tokens: must be at least 1 and at most 1e+16, not inf" in msg
    for value, shown in ((10**309, "1000...000 (310 digits)"), (10**5000, "a number of about 5001 digits"),
                         ({"qlora-7b": 10**400}, "1000...000 (401 digits)"), (1e300, "1e+300")):
        msg = _raises(InputError, compare, COMPARE, tokens_per_month=value)
        assert f"tokens_per_month: must be above 0 and at most 3e+13, not {shown}." in msg, msg
