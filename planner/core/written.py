"""Values as a file writes them, for messages: a number as written when its float would show other digits, and
the ASCII spelling of a date written with other digits or dashes (h14b #10, minor c). Used by
:mod:`planner.core.fields`; error paths only.

Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from planner.core.names import char_name

#: ``key: <number>`` on a line of a file, for :func:`as_written`.
_WRITTEN_NUMBER = r"(?<![\w-]){key}['\"]?\s*:\s*([-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?)"


def as_written(entry: Any, key: str, value: float) -> str:
    """A float as the file writes it, for a message: repr() when its 15 significant digits or fewer are surely what
    was written; else the number on ``key``'s line of the file when it reads as the same float
    ('99999999999999.99', whose float's repr is '99999999999999.98': a float holds 15 to 17 significant digits,
    IEEE 754 binary64; h14b #10). A small reader of its own (error path only): the YAML readers keep no text of
    a number."""
    shown = repr(value)
    digits = len(re.sub(r"[^0-9]", "", shown.split("e")[0]).lstrip("0"))
    line = entry.line_of(key)
    if digits < 16 or not entry.file or not line or str(entry.file) == "-":
        return shown
    try:
        with open(entry.file, encoding="utf-8") as f:
            for i, text in enumerate(f, 1):
                if i == line:
                    break
            else:
                return shown
    except (OSError, UnicodeDecodeError, ValueError):
        return shown
    for m in re.finditer(_WRITTEN_NUMBER.format(key=re.escape(key)), text[:10_000]):
        written = m.group(1).replace("_", "")
        try:
            if float(written) == value:
                return written
        except ValueError:
            continue
    return shown


#: 'YYYY-MM-DD' or 'YYYY-MM' in ASCII digits (planner.core.fields reads dates so).
_ISO_DATE = re.compile(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?\Z")


def other_spelling_hint(key: str, value: str, spell: Callable[[str], str] | None = None) -> str | None:
    """The hint for a date written with digits of another script ('２０２６-11-20': full-width) or with a dash other
    than the ASCII hyphen-minus ('2026‐11‐20' with U+2010 HYPHEN; any Unicode dash, category Pd, or U+2212 MINUS
    SIGN), which read as the ASCII date they look like (h14b minor c); None for any other text. ISO 8601 writes a
    date with ASCII digits and the hyphen-minus U+002D."""
    if value.isascii():
        return None
    digits = "".join(str(unicodedata.decimal(ch)) if not ch.isascii() and unicodedata.decimal(ch, None) is not None
                     else ch for ch in value)  # '２' is 2: as planner.core.fields.ascii_digits writes it
    dashes = [ch for ch in dict.fromkeys(digits) if ch != "-" and (unicodedata.category(ch) == "Pd" or ch == "\u2212")]
    fixed = "".join("-" if ch in dashes else ch for ch in digits).strip()
    if not _ISO_DATE.match(fixed):
        return None
    said = []
    if digits != value:
        said.append("ASCII digits")
    if dashes:
        said.append("the ASCII hyphen '-' (it holds " + ", ".join(char_name(ch) for ch in dashes) + ")")
    return f"Write it with {' and '.join(said)}: {spell(fixed) if spell else f'{key}: {fixed}'}."


def _real(text: str) -> bool:
    """Whether ``text``, written YYYY-MM-DD or YYYY-MM, names a day or month of the calendar."""
    import datetime as dt

    try:
        dt.date.fromisoformat(text if len(text) > 7 else text + "-01")
    except ValueError:
        return False
    return True


def date_option_problem(opt: str, value: str) -> str | None:
    """The one line for a command-line date (``--today``, ``--as-of``) not written YYYY-MM-DD or YYYY-MM, with the
    hint a file's date gets (planner.core.fields.Entry.date: ASCII digits, two-digit months and days, the other
    common orders) and, for a value a file gives no other spelling of, the date without the blanks around it or
    without its time ('2026-01-01T00:00'); None for a date so written (h23b M6). Its range is checked by the
    caller."""
    if _ISO_DATE.match(value) and _real(value):
        return None
    from planner.core.fieldhints import impossible_date

    why = impossible_date(value)
    if why is not None:  # written as asked, but no day of the calendar (h41b 11)
        from planner.core.clock import utc_today

        return (f"{opt}: {value!r} is no date: {why}. Give the date the file was read, e.g. {opt} "
                f"{utc_today().isoformat()}.")
    import datetime as dt

    def spell(date: str) -> str:
        return f"{opt} {date}"

    hint = other_spelling_hint(opt, value, spell)
    for fmt in () if hint else ("%Y-%m-%d", "%Y-%m"):
        try:
            loose = dt.datetime.strptime(value.strip(), fmt).date()
        except ValueError:
            continue
        padded = loose.isoformat() if fmt == "%Y-%m-%d" else loose.isoformat()[:7]
        if padded != value.strip():
            hint = f"Write it with two-digit months and days: {spell(padded)}."
        break
    timed = re.fullmatch(r"([0-9]{4}-[0-9]{2}-[0-9]{2})[T ][0-9]{1,2}:[0-9]{2}\S*", value.strip())
    if hint is None and value.strip() != value and _ISO_DATE.match(value.strip()) and _real(value.strip()):
        hint = f"Write it without the blanks around it: {spell(value.strip())}."
    elif hint is None and timed and _real(timed.group(1)):
        hint = f"Write the date alone, without a time: {spell(timed.group(1))}."
    if hint is None:
        from planner.core.fieldhints import _date_hint

        hint = _date_hint(value, spell)
    if hint is None:
        from planner.core.clock import utc_today

        hint = f"E.g. {spell(utc_today().isoformat())}."
    return f"{opt}: must be a date written YYYY-MM-DD or YYYY-MM, not {value!r}. {hint}"
