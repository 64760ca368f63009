"""Hostile pass 40 (tester B, report h40b): the minor findings m5, m6, m10, m11 and m12, on texts in messages.

m5: a hint's example ('e.g. instance: g6.xlarge.') was glued to its full stop and then to the import summary's
', and the same reason ...'. m6: a KELVIN SIGN in allowed_gpus was not named (it lower-cases to ASCII 'k'), and an
ASCII capital beside a full-width letter was named as a lookalike. m10: a long CSV header and column name were
echoed whole. m11: a Cyrillic letter in a header's column name was not named. m12: a cut value's '(N characters)'
was the cut text's length (45), and the first row's cut value had none.
"""

from __future__ import annotations

from pathlib import Path

from tests.sky_helpers import run_cli

from planner.core.errors import did_you_mean

KELVIN = "\u212a"
BLACKWELL = "rtx-pro-6000-blackwell"  # a shipped GPU id holding a 'k' (catalog/gpus.yaml)


def _flat(text: str) -> str:
    return " ".join(text.split())  # the CLI wraps the summary's lines


# --- m6: a KELVIN SIGN named; an ASCII case difference never called a lookalike ------------------------------------

def _scenario(tmp_path: Path, gpu: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(f"name: cs\nconstraints:\n  allowed_gpus: [\"{gpu}\"]\nworkloads:\n  - name: a\n"
                 "    model: llama-2-7b\n    task: infer\n", encoding="utf-8")
    return p


def test_a_kelvin_sign_in_allowed_gpus_is_named(tmp_path: Path) -> None:
    gpu = BLACKWELL.replace("k", KELVIN)  # 'rtx-pro-6000-blac' is 17 characters: the KELVIN SIGN is the 18th
    code, out = run_cli("plan", str(_scenario(tmp_path, gpu)), "--out", str(tmp_path / "o"))
    said = _flat(out)
    assert code == 2, out
    assert (f"Did you mean '{BLACKWELL}'? The name given holds U+212A (KELVIN SIGN) at character 18 where "
            f"'{BLACKWELL}' has 'k', which look alike.") in said, said


def test_an_ascii_capital_beside_a_full_width_letter_is_not_named(tmp_path: Path) -> None:
    gpu = "\uff52TX" + BLACKWELL[3:]  # full-width 'r' (U+FF52), then ASCII 'TX' in upper case
    code, out = run_cli("plan", str(_scenario(tmp_path, gpu)), "--out", str(tmp_path / "o"))
    said = _flat(out)
    assert code == 2, out
    # the full-width letter alone is named: 'T' and 'X' differ from 't' and 'x' in case only
    assert (f"holds U+FF52 (FULLWIDTH LATIN SMALL LETTER R) at character 1 where '{BLACKWELL}' has 'r', which look "
            "alike.") in said, said
    assert "U+0054" not in said and "U+0058" not in said, said


def test_a_plain_case_difference_is_no_lookalike() -> None:
    hint = did_you_mean("RTX-PRO-6000-BLACKWELL", [BLACKWELL, "l4"])
    assert hint == f"Did you mean '{BLACKWELL}'?", hint


