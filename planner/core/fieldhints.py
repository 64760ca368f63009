"""The hints of :class:`planner.core.fields.Entry`'s messages: what a value that is not the number, size, date,
choice or name asked for looks like it meant (a date in another order, a number with a unit or a separator, a YAML
1.1 reading), and how to write it; and how numbers are shown in those messages (:func:`shown_number`)."""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from planner.core.errors import InputError, close_matches, did_you_mean
from planner.core.units import (BeyondFloat, NotWhole, beyond_float, exact_float, number_text, separator_problem,
                                underflow_problem, wide_float_text)



def _date_hint(value: Any, spell: Callable[[str], str]) -> str | None:
    """'Write it as YYYY-MM-DD: as_of: 2026-01-15.' for a date in another common spelling, or None: '20260115'
    (ISO 8601's basic format; YAML reads it as a number), '2026.01.15' or '2026/1/15' (year first),
    '15.01.2026' (day first: the dotted order of most of Europe, Unicode CLDR's date formats). '01/02/2026'
    is day-first in Europe and month-first in the United States: both readings are given when both are dates."""
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    orders: list[tuple[str, str, str]] = []
    if m := re.fullmatch(r"([0-9]{4})([0-9]{2})([0-9]{2})", text):
        orders = [m.groups()]
    elif m := re.fullmatch(r"([0-9]{4})[./]([0-9]{1,2})[./]([0-9]{1,2})", text):
        orders = [m.groups()]
    elif m := re.fullmatch(r"([0-9]{1,2})\.([0-9]{1,2})\.([0-9]{4})", text):
        orders = [(m.group(3), m.group(2), m.group(1))]
    elif m := re.fullmatch(r"([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})", text):
        orders = [(m.group(3), m.group(2), m.group(1)), (m.group(3), m.group(1), m.group(2))]
    elif m := re.fullmatch(r"([0-9]{2})-([0-9]{2})-([0-9]{2})", text):
        # a two-digit year ('26-11-01', h17b #5b): year first as ISO 8601 orders it, else day or month first
        # (CLDR's short formats: dd-MM-yy, MM-dd-yy); the year as 20YY, the century planner's dates lie in
        a, b_, c = m.groups()
        orders = [(f"20{a}", b_, c), (f"20{c}", b_, a), (f"20{c}", a, b_)]
    dates = []
    for y, mo, d in orders:
        try:
            iso = _dt.date(int(y), int(mo), int(d)).isoformat()
        except ValueError:
            continue
        if iso not in dates:
            dates.append(iso)
    if len(dates) == 1:
        return f"Write it as YYYY-MM-DD: {spell(dates[0])}."
    if len(dates) >= 2 and "-" in text:  # a two-digit year: each reading named by what it puts first
        said: dict[str, list[str]] = {}
        for (y, mo, d), first in zip(orders, ("year", "day", "month")):
            if _real_date(y, mo, d):
                said.setdefault(_dt.date(int(y), int(mo), int(d)).isoformat(), []).append(first)
        return ("Write it as YYYY-MM-DD: " + ", ".join(f"{spell(iso)} if the {' or '.join(w)} comes first"
                                                      for iso, w in said.items()) + ".")
    if len(dates) == 2:
        return (f"Write it as YYYY-MM-DD: {spell(dates[0])} if the day comes first, {spell(dates[1])} if the month "
                "does.")
    return None


def _real_date(y: str, mo: str, d: str) -> bool:
    """Whether year ``y``, month ``mo`` and day ``d`` (digit texts) name a real date."""
    try:
        _dt.date(int(y), int(mo), int(d))
    except ValueError:
        return False
    return True


#: 'YYYY-MM-DD' or 'YYYY-MM' in ASCII digits, which strptime's "%Y-%m-%d" / "%Y-%m" read as the same date.
_ISO_DATE = re.compile(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?\Z")


def impossible_date(value: object) -> str | None:
    """Why ``value``, written YYYY-MM-DD or YYYY-MM as asked, names no day of the calendar ('there is no month 13',
    'February 2026 has 28 days'), or None (h41b 11: such a date was said not to be written YYYY-MM-DD)."""
    import calendar

    m = _ISO_DATE.match(value) if isinstance(value, str) else None
    if m is None:
        return None
    year, month, day = int(m.group(1)), int(m.group(2)), m.group(3)
    if not 1 <= month <= 12:
        return f"there is no month {month:02d}"
    if year < 1:
        return "there is no year 0000"
    days = calendar.monthrange(year, month)[1]
    if day is not None and not 1 <= int(day) <= days:
        return f"{calendar.month_name[month]} {year} has {days} days, so there is no day {day}"
    return None


_FLOAT_MAX = 1.7976931348623157e308  # sys.float_info.max


def shown_number(value: Any) -> str:
    """A value as an error message echoes it: a whole number of more than 20 digits shortened
    ('1000...000 (401 digits)', never Python's 4,300-digit ValueError), a text of more than 40 characters
    cut the same way, anything else as repr()."""
    if isinstance(value, int) and not isinstance(value, bool):
        return _digits(value)
    if isinstance(value, NotWhole):  # Fraction(1, 10**400), read as 0.0: the number given, not its float
        return value.text
    if isinstance(value, str) and len(value) > 40:  # '9999...999M' (5,004 characters), cut as _digits cuts (h18b #5)
        return f"'{value[:12]}...{value[-4:]}' ({len(value):,} characters)"
    return repr(value)


def _digits(value: int) -> str:
    """A huge whole number, shortened: '1000...000 (401 digits)'."""
    try:
        text = str(value)
    except ValueError:  # over Python's 4,300-digit limit for int -> str (sys.get_int_max_str_digits)
        return f"a number of about {int(abs(value).bit_length() * 0.30103) + 1} digits"  # log10(2) digits per bit
    return f"{text[:4]}...{text[-3:]} ({len(text.lstrip('-'))} digits)" if len(text) > 20 else text


def _num(x: float) -> str:
    """A bound as people write it: 65536, 1000000, 0.95 (never 1e+06)."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


#: Texts and numbers that mean a boolean, for the hint of a value that is not one.
_BOOL_WORDS = {"yes": "true", "y": "true", "on": "true", "1": "true", "true": "true",
               "no": "false", "n": "false", "off": "false", "0": "false", "false": "false"}
#: A number as people write money or a quantity in text: '5000', '5,000', '$5000', '5000 USD'.
_TEXT_NUMBER = re.compile(r"^\s*\$?\s*([0-9][0-9,_]*(?:\.[0-9]+)?)\s*(?:\$|usd|us\$|dollars?)?\s*$", re.IGNORECASE)


#: A count written with a suffix ('8k', '32K', '1M') or digit separators ('8,192', '8_192' quoted).
_SUFFIXED = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmM])\s*$")
_BINARY_SUFFIXED = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmM])i\s*$")
_SEPARATED = re.compile(r"^\s*[0-9]{1,3}(?:[,_ ][0-9]{3})+\s*$")
#: '0o1000', '0x10' as a text (YAML 1.1 reads '0o' as none of its numbers)
_OTHER_BASE_TEXT = re.compile(r"^\s*([+-]?)0([oOxXbB])([0-9a-fA-F]+)\s*$")
#: A decimal number text, as float() reads it ('1e999999', '-2.5E+9'), not 'inf' or 'nan'
_NUMBER_TEXT = re.compile(r"^\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*$")
#: A hexadecimal float ('0x1p10': 1024, C99 and float.fromhex's notation)
_HEX_FLOAT = re.compile(r"^\s*[-+]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][-+]?[0-9]+\s*$")


#: The hint for an infinite or not-a-number value where a whole number belongs
_NO_INFINITE = "A count is a whole number written in digits; there is no infinite or not-a-number count."


def _hex_float(value: str) -> float | None:
    """The value of a hexadecimal float text ('0x1p10': 1024.0; one too large: inf), else None."""
    if not _HEX_FLOAT.match(value):
        return None
    try:
        return float.fromhex(value.strip())
    except OverflowError:
        return math.inf
    except ValueError:
        return None


#: '30%': a number and a percent sign
_PERCENT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*$")
#: '512 tokens': a whole number and a word after it
_WITH_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z][A-Za-z/ ]*?)\s*$")


def _takes_hint(key: str, value: Any, lo: float | None, hi: float | None, what: str | None,
                file: Any) -> str | None:
    """What a number field takes, for a value that is no number: 'zero takes the ZeRO stage, a whole number
    from 0 to 3: zero: 0.' A boolean read from a file (``zero: off``) or a yes/no word in quotes
    (``zero: 'off'``) is said to be one, and a false/true word is spelled as 0/1 when the range holds it
    (YAML 1.1 reads an unquoted yes, no, on, off, true and false as booleans; yaml.org/type/bool.html).
    None for another value of a field that names no ``what``."""
    # a boolean from Python (the API, file None) is no YAML word: it gets the range only where ``what`` asks
    word = (value if file is not None else None) if isinstance(value, bool) \
        else _BOOL_WORDS.get(value.strip().lower()) if isinstance(value, str) else None
    if word is None and what is None:
        return None  # a field's own hints (_int_hint) say the rest
    takes = f"{key} takes {what + ', ' if what else ''}a whole number"
    if lo is not None and hi is not None:
        takes += f" from {_num(lo)} to {_num(hi)}"
    elif lo is not None:
        takes += f" of at least {_num(lo)}"
    if word is None:
        return takes + "."
    meant = 0 if str(word).lower() == "false" else None  # off/no: the 0 of a stage or count ('on' names no number)
    said = ("YAML reads an unquoted yes, no, on, off, true or false as a boolean, and quoted it is a text"
            if isinstance(value, bool) and file is not None else f"{value!r} is a yes/no word, not a number")
    example = (f"{key}: {meant}" if meant is not None and (lo is None or lo <= meant) and (hi is None or meant <= hi)
               else None)
    return f"{said}: {takes}" + (f"; for off, write {example}." if example else ".")


def _choice_note(key: str, value: Any, choices: list[str], file: Any) -> str:
    """:func:`_bool_note` for a choice field: quoting helps only where a choice is a yes/no word
    (``key: 'off'``); otherwise the note says to write one of the choices."""
    if not isinstance(value, bool) or file is None:
        return ""
    words = [c for c in choices if _BOOL_WORDS.get(str(c).lower()) == str(value).lower()]
    if words:
        return f" YAML reads an unquoted {words[0]} as {str(value).lower()}: quote it, {key}: '{words[0]}'."
    if value is False and "none" in choices:  # 'split_mode: no', 'checkpointing: off': the choice meant is none
        return f" YAML reads an unquoted no or off as false: for none, write {key}: none."
    return " YAML reads an unquoted yes, no, on, off, true or false as a boolean: write one of the choices."


def _bool_note(value: Any, file: Any) -> str:
    """' YAML reads ...' for a boolean read from a file (``file`` not None) where another kind
    belongs ('' otherwise): YAML 1.1, which PyYAML reads, takes an unquoted yes, no, on, off, true
    and false (any case) as booleans, so ``checkpointing: no`` is false, not the text 'no'."""
    if not isinstance(value, bool) or file is None:
        return ""
    return (" YAML reads an unquoted yes, no, on, off, true or false as a boolean: write the value the key "
            "takes, or quote a text ('no').")


def _text_note(key: str, value: Any, file: Any, written: str | None = None) -> str | None:
    """The hint for a number or a date read from a file (``file`` not None) where a text belongs: YAML 1.1
    reads an unquoted ``42``, ``0.42`` or ``2024-08-01`` as a number or a date (yaml.org/type/int.html,
    float.html, timestamp.html), so ``description: 42`` or ``bnb_version: 0.42`` is no text; quoted, it is.
    The value is shown as read, which may differ from what was written (0.420 reads as 0.42): hence "as
    written". None otherwise."""
    if file is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        what, shown = "a number", repr(value)
    elif isinstance(value, _dt.date):
        what, shown = "a date", str(value)
    else:
        return None
    if written is not None and what == "a number":  # the file's own text (planner.core.yamlio.LineDict.written)
        return f"YAML reads an unquoted {written} as {what}: quote the text as written, e.g. {key}: '{written}'."
    # a float is shown as read, which may not be how it was written (1.10 reads as 1.1): said where it may be
    written = (f" ({shown} as read: a number keeps no trailing zero, so quote what the file says, e.g. "
               f"'{shown}0' for {shown}0)") if isinstance(value, float) and "e" not in shown else ""
    return f"YAML reads an unquoted {shown} as {what}: quote the text as written, e.g. {key}: '{shown}'{written}."


#: The SI prefixes of sizes (BIPM SI Brochure, 9th ed., table 7) and their IEC binary counterparts (IEC 80000-13).
_PREFIX = {"K": "kilo", "M": "mega", "G": "giga", "T": "tera"}
_POWER = {"K": "10^3", "M": "10^6", "G": "10^9", "T": "10^12"}
_BINARY = {"K": "2^10", "M": "2^20", "G": "2^30", "T": "2^40"}
#: Bytes in each binary (IEC 80000-13) unit, for naming a size limit (:meth:`Entry.size`).
_BINARY_BYTES = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}


def _outside_range_hint(value: Any, lo: float | None, hi: float | None, whole: bool) -> str | None:
    """For a text whose number lies outside the field's range (``seq_len: 1e9`` where 16777216 is the most,
    ``unit_price_usd: 1.7e308``): the range, said at once, never a spelling the range then refuses (h21b M6);
    None for a text that is no plain number or one inside the range."""
    if not isinstance(value, str) or not re.fullmatch(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*", value):
        return None
    if re.fullmatch(r"\s*[+-]?0[0-9]+\s*", value):  # '096': a share's or a leading zero's own hint says more
        return None
    try:
        meant = float(value)
    except (ValueError, OverflowError):
        return None
    if meant == 0 and underflow_problem(value):  # '1e-400': below any float, said as such (h17b #3), not a range
        return None
    if not math.isfinite(meant) or not ((lo is not None and meant < lo) or (hi is not None and meant > hi)):
        return None
    what = "a whole number" if whole else "a number"
    span = (f"from {_num(lo)} to {_num(hi)}" if lo is not None and hi is not None else
            f"of at least {_num(lo)}" if lo is not None else f"of at most {_num(hi)}")
    side = "more" if hi is not None and meant > hi else "less"
    return f"{value.strip()} is {side} than this field takes: give {what} {span}."


def _int_hint(key: str, value: Any, lo: float | None = None, hi: float | None = None) -> str | None:
    """:func:`whole_number_hint` for a file's ``key: value`` whose range is ``lo`` to ``hi``."""
    return whole_number_hint(value, lambda n: f"{key}: {n}", lo=lo, hi=hi)


#: The separators and signs written with digits of other scripts, as ASCII writes them: the Arabic decimal and
#: thousands separators (U+066B, U+066C: '٢٬٠٤٨٫٥'), the fullwidth comma, full stop, plus and hyphen-minus (U+FF0C,
#: U+FF0E, U+FF0B, U+FF0D: '２，０４８'), so that the ASCII spelling hinted is a number (h20b M4).
_NUMBER_MARKS = {"\u066b": ".", "\u066c": ",", "\uff0c": ",", "\uff0e": ".", "\uff0b": "+", "\uff0d": "-"}


def ascii_digits(text: Any) -> str | None:
    """``text`` with its decimal digits of other scripts ('٤٠٩٦', fullwidth '２') written in ASCII ('4096',
    '2'), when it holds any; else None. Python's int() and float() read such digits, YAML and the unit
    parsers do not: planner refuses them everywhere (CLI, files, API) with this spelling as the hint. The
    separators and signs written with them (:data:`_NUMBER_MARKS`: '٫' U+066B, '，' U+FF0C) are written in
    ASCII too ('٠٫٠٥' -> '0.05', '٢٬٠٤٨' -> '2,048'), so the spelling is one a number field reads or asks
    the usual question of (:func:`ascii_digits_hint`)."""
    if not isinstance(text, str) or text.isascii():
        return None
    import unicodedata

    out = [str(unicodedata.decimal(ch)) if not ch.isascii() and unicodedata.decimal(ch, None) is not None else ch
           for ch in text]
    fixed = "".join(out)
    if fixed == text:
        return None
    return "".join(_NUMBER_MARKS.get(ch, ch) for ch in fixed)


def ascii_digits_hint(text: Any, spell: Callable[[str], str], *, whole: bool = False) -> str | None:
    """'Write ASCII digits: context: 4096.' for a text holding digits of another script (:func:`ascii_digits`),
    else None. Where the ASCII spelling holds a comma ('٢٬٠٤٨': '2,048', a thousands separator or a decimal comma,
    which planner reads as neither) the hint is the one that spelling gets
    (:func:`planner.core.units.separator_problem`; ``whole``: a whole-number field, whose readings are whole), so
    that the value hinted is one the field takes (h20b M4)."""
    fixed = ascii_digits(text)
    if fixed is None:
        return None
    fixed = fixed.strip()
    if re.search(r"[^0-9A-Za-z.,_+%-]", fixed):  # '５１２ $(touch PWN)', '２００M x': no one value to echo (h40a N3)
        return "Write the number in ASCII digits, nothing else with it."  # (h39b 20: the rest ran when pasted)
    if len(fixed) > 1 and fixed.isdigit() and fixed.startswith("0"):  # '０４': 04 would be refused (YAML 1.1 octal)
        fixed = str(int(fixed))
    if re.fullmatch(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]{1,5}", fixed):
        # '٥e2': '5e2' is a text to YAML 1.1, so the value in a spelling every reader takes, '500' (h23b M1)
        value = Decimal(fixed)
        if abs(value) > Decimal("1.7976931348623157e308") or 0 < abs(value) < Decimal("2.2250738585072014e-308"):
            return f"In ASCII digits it is {fixed!r}, beyond the numbers a float holds: give the real value."
        fixed = number_text(value)
    if "," in fixed:
        alone = re.fullmatch(r"[-+]?[0-9][0-9,.]*", fixed) is not None  # the number alone: its readings normalized
        separated = separator_problem(fixed, spell, alone=alone, whole=whole)
        if separated is not None:
            return f"In ASCII digits it is {fixed!r}, and planner reads no comma in a number. {separated[1]}"
    return f"Write ASCII digits: {spell(fixed)}."


def _zero_with_suffix(value: str, spell: Callable[[str], str]) -> str:
    """The hint of '0Ki' or '0k': 0 whatever the suffix, which no count takes; the number meant, e.g. 1 x 1024."""
    return (f"{value.strip()!r} is 0 whatever the suffix: write the number you mean in digits, without a suffix, e.g. "
            f"{spell('1024')} (1 x 1024).")


def block_number_hint(value: str, spell: Callable[[str], str]) -> str | None:
    """The hint for a number written as a YAML block ('context: |' and '4096' below it: the text '4096\\n', which
    was never quoted), or None for any other text (h15b #4)."""
    if "\n" not in value:
        return None
    return f"Write the number on the key's line, not as a '|' or '>' block: {spell(value.strip())}."


def _large_suffix_hint(value: str, number: str, unit: str, spell: Callable[[str], str]) -> str:
    """The hint of a count written with 'B' or 'T' ('7B', '1T': billion and trillion, 10^9 and 10^12, as planner
    writes token counts, planner.workload.options.token_spelling) or 'G' (10^9 or 2^30): the number written out,
    so the multiplier is kept (h16b #7: "without 'B'" turned 7B into 7)."""
    n = Decimal(number)
    if n == 0:
        return _zero_with_suffix(value, spell)
    if unit in "Gg":
        binary, decimal = n * 1024**3, n * 1000**3
        if binary == binary.to_integral_value() and decimal == decimal.to_integral_value():
            return (f"Write the whole number, without a suffix: {spell(str(int(binary)))} ({number} x {1024**3}) or "
                    f"{spell(str(int(decimal)))}; the planner reads no G, which may mean 1024^3 or 1000^3.")
        return f"Write the whole number in digits, without a suffix ('{unit}' may mean 1024^3 or 1000^3)."
    word, factor = ("billion", 1000**3) if unit in "Bb" else ("trillion", 1000**4)
    whole = n * factor
    if whole != whole.to_integral_value():
        return f"Write the whole number in digits, without a suffix ('{unit}' is {word}, {factor})."
    return (f"Write the whole number, without a suffix: {spell(str(int(whole)))} ({number} x {factor}, "
            f"'{unit}' read as {word}); the planner reads no suffix.")


def whole_number_hint(value: Any, spell: Callable[[str], str], *, lo: float | None = None,
                      hi: float | None = None) -> str | None:
    """What to write instead of a text where a whole number belongs, or None.

    '4096' (quoted): the number without quotes. '8k' / '32K' / '1M': the number written out,
    the binary reading first (8k = 8 x 1024 = 8192, as context lengths are counted) and the decimal
    one beside it: the planner takes no suffix, since '8k' names either (docs/scenarios.md).
    '8,192': without the separator.

    Args:
        spell: how the hint writes the key with a number ('seq_len: 8192', '--seq-len 8192').
        lo, hi: the key's range (None: open): a fraction's hint offers only the whole numbers in it, the next
            one up brought into it (``concurrency: 0.5``, at least 1: 'concurrency: 1', never 0; h24b M7).
    """
    if isinstance(value, float) and math.isfinite(value) and 0 < value < 1e6 and re.fullmatch(
            r"[1-9][0-9]{0,2}\.[0-9]{3}", repr(value)):
        # '16.384': the German or Italian way of writing 16384 (a '.' groups thousands: Unicode CLDR de, it)
        return (f"If the '.' separates thousands, write the number without it: {spell(repr(value).replace('.', ''))}; "
                "planner reads '.' as a decimal point.")
    if isinstance(value, float) and math.isfinite(value) and 0 < value < 1e15 and not value.is_integer():
        # a fraction where a count belongs ('slot_width: 2.5', a card 2.5 slots wide, takes 3): the two whole numbers
        # around it that the key's range holds, the next one up raised to its floor (0.5 of a count from 1 is 1)
        up, down = math.ceil(value), math.floor(value)
        if lo is not None:
            up = max(up, math.ceil(lo))
        taken = [n for n in dict.fromkeys((up, down))
                 if (lo is None or n >= lo) and (hi is None or n <= hi)]
        if not taken:
            return None
        if len(taken) == 1:
            return f"Write a whole number: {spell(str(taken[0]))}{' (rounded up)' if taken[0] > value else ''}."
        return f"Write a whole number: {spell(str(up))} (rounded up) or {spell(str(down))}."
    if isinstance(value, float) and not math.isfinite(value):  # '.inf', '.nan' in a file
        return _NO_INFINITE
    if not isinstance(value, str):
        return None
    foreign = ascii_digits_hint(value, spell, whole=True)
    if foreign is not None:
        return foreign
    if value.strip().isdigit():
        if len(value.strip()) > 1 and value.strip().startswith("0"):  # 02048: YAML 1.1 reads it as text
            return f"Write the number without the leading zero: {spell(str(int(value.strip())))}."
        return block_number_hint(value, spell) or f"Write the number without quotes: {value.strip()}."
    m = _SUFFIXED.match(value)
    if m:
        number, suffix = float(m.group(1)), m.group(2).lower()
        binary, decimal = (1024, 1000) if suffix == "k" else (1024**2, 1000**2)
        b, d = number * binary, number * decimal
        if b == 0:
            return _zero_with_suffix(value, spell)
        if b.is_integer() and d.is_integer():
            return (f"Write the whole number, without a suffix: {spell(str(int(b)))} ({m.group(1)} x {binary}) or "
                    f"{spell(str(int(d)))}; the planner reads no k or M, which may mean 1024 or 1000.")
    separated = separator_problem(value, spell, alone=True, whole=True)
    if separated is not None:
        return separated[1]
    if _SEPARATED.match(value):
        return f"Write the number without separators: {spell(re.sub(r'[^0-9]', '', value))}."
    m = _OTHER_BASE_TEXT.match(value)
    if m:  # YAML 1.2's 0o, or a prefix YAML 1.1 reads as a text: said in decimal
        base = {"o": 8, "x": 16, "b": 2}[m.group(2).lower()]
        try:
            return f"Write the number in decimal: {spell(m.group(1) + str(int(m.group(3), base)))}."
        except ValueError:
            return None
    try:
        as_float = float(value)
    except (ValueError, OverflowError):
        as_float = _hex_float(value)
    if as_float is not None and as_float.is_integer() and abs(as_float) < 1e15 and any(c in value for c in "eE.pP"):
        return f"Write the whole number in digits: {spell(str(int(as_float)))}."
    if as_float is not None and abs(as_float) >= 1e15 and (
            _HEX_FLOAT.match(value) or _NUMBER_TEXT.match(value) and any(c in value for c in "eE")):
        # '1e999999': a float reads it as infinity, '9e99' as no count there is: no digits to hint
        return "It is far beyond any count planner reads: write the whole number meant, in digits."
    if value.strip().lstrip("+-").lower() in ("inf", "infinity", "nan"):  # float() reads them; no count is one
        return _NO_INFINITE
    if as_float is not None and re.fullmatch(r"\s*[0-9.]+\s*", value):  # '16.384', '2.5' as a text (the command line)
        return whole_number_hint(as_float, spell)
    m = _BINARY_SUFFIXED.match(value)
    if m:  # '2Ki', '8Mi': IEC binary multiples, 1024 and 1024^2
        whole = float(m.group(1)) * (1024 if m.group(2).lower() == "k" else 1024**2)
        if whole == 0:
            return _zero_with_suffix(value, spell)
        if whole.is_integer():
            return f"Write the whole number, without a suffix: {spell(str(int(whole)))} ({m.group(1)} x " \
                   f"{1024 if m.group(2).lower() == 'k' else 1024**2})."
    m = _WITH_UNIT.match(value)
    if m:
        unit = m.group(2).strip()
        named = re.sub(r"[^a-z]", "", unit.lower())  # 'MT/s' for speed_mts: the unit the key names
        if named and re.search(r"_" + re.escape(named) + r"\b", spell("")):
            return f"Write the number alone, without '{unit}': {spell(m.group(1))}."
        if unit in ("B", "b", "T", "t", "G", "g"):
            return _large_suffix_hint(value, m.group(1), unit, spell)
        base = re.sub(r"[^a-z]", "", unit[1:].lower())
        if unit[:1] in ("k", "K", "M") and base and re.search(r"_" + re.escape(base) + r"\b", spell("")):
            # '0.165 kW' for tdp_w: SI prefixes k = 10^3, M = 10^6 (SI Brochure, 9th ed., Table 7)
            scaled = Decimal(m.group(1)) * (1000 if unit[0] in "kK" else 1000**2)
            return f"Write the number in {unit[1:]}, without a prefix: {spell(format(scaled.normalize(), 'f'))}."
        if len(unit) > 1 and unit[0] in "kKMGT" and unit[1:2].isalpha():  # 'kW', 'MHz': a multiple, not the unit
            return (f"Write the number alone, in the unit the key is counted in: '{unit}' is a multiple of a unit, "
                    "so the number changes (1 kW is 1000 W).")
        return f"Write the number alone, without '{unit}': {spell(m.group(1))}."
    return None


def _not_a_choice(value: str, choices: Any, problem: str, lead: str = "") -> tuple[str, str | None]:
    """(problem, hint) for a text that is none of ``choices``: close matches as the hint, found also for its
    NFKC form (full-width 'ｂｆ16' is 'bf16'); a character outside ASCII in it is named (a Cyrillic 'і' in
    'іnfer' looks like the Latin 'i' the choice has), so the hint does not seem to repeat the text."""
    import unicodedata

    from planner.core.names import char_name, clip_text

    text = str(value)
    hint = did_you_mean(text, list(choices), name_lookalike=False)  # the problem names the character below
    folded = did_you_mean(unicodedata.normalize("NFKC", text), list(choices), name_lookalike=False)
    if (hint is None or not hint.startswith("Did you mean")) and folded is not None and folded.startswith("Did you"):
        hint = folded
    foreign = next((ch for ch in text if not ch.isascii()), None)
    said = f"{lead}{clip_text(text)!r} {problem}"  # a 30,000-character value echoed as its first 80 (h23b M4)
    if foreign is not None and all(str(c).isascii() for c in choices):
        said += f" (it holds {char_name(foreign)}, not an ASCII character)"
    return said, hint


def _number_hint(key: str, value: Any, hi: float | None = None) -> str | None:
    """What to write instead of a text where a number belongs ('5000 USD' -> budget_usd: 5000; '1,5' ->
    1.5, planner.core.units.separator_problem; '30%' -> 0.3 where the field ``hi`` is at most 1, a share)."""
    if not isinstance(value, str):
        return None
    foreign = ascii_digits_hint(value, lambda n: f"{key}: {n}")
    if foreign is not None:
        return foreign
    pct_comma = re.fullmatch(r"\s*([0-9]+),([0-9]+)\s*%\s*", value)
    if pct_comma and hi is not None and hi <= 1:  # '1,5%': a decimal comma in a percentage of a share
        share = Decimal(f"{pct_comma.group(1)}.{pct_comma.group(2)}") / 100
        return f"Write the share as a fraction with a decimal point, not a percentage: {key}: {share.normalize():f}."
    separated = separator_problem(value, lambda n: f"{key}: {n}", alone=True)
    if separated is not None:
        return separated[1]
    pct = _PERCENT.match(value)
    if pct and hi is not None and hi <= 1:  # a share (at most 1): 30% is 0.3
        share = Decimal(pct.group(1)) / 100
        return f"Write the share as a fraction, not a percentage: {key}: {share.normalize():f}."
    if re.fullmatch(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+\s*", value):
        # YAML 1.1 (PyYAML) reads a float only with a dot and a signed exponent: 1e300 and 1.5e3 are text
        mant, _, exp = value.strip().lower().partition("e")
        sign = "" if exp.startswith(("+", "-")) else "+"
        if not math.isfinite(float(value)):  # 1e400 read as a float is inf: no real value of a field
            return f"{value.strip()} is beyond the largest number a float holds (about 1.8e+308): give the real value."
        underflow = underflow_problem(value)  # 1e-400 read as a float is 0.0: never hint '1.0e-400' (h17b #3)
        if underflow is not None:
            return f"{underflow}: give the real value."
        mant = mant if "." in mant else f"{mant}.0"
        return f"YAML reads {value.strip()} as text; write {key}: {mant}e{sign}{exp}."
    if re.fullmatch(r"\s*0[0-9]+\s*", value):  # '096': a text to YAML 1.1 (no octal), never a number as written
        from planner.core.shares import share_hint, share_key

        return (share_hint(key, value, lambda n: f"{key}: {n}") if share_key(key) else
                f"Write the number without the leading zero: {key}: {int(value)}.")
    frac = re.fullmatch(r"\s*([0-9]+)\s*/\s*([1-9][0-9]*)\s*", value)
    if frac and len(value) < 40:  # '1/12': a fraction is text to YAML; the decimal it stands for, to 3 digits
        q = Decimal(frac.group(1)) / Decimal(frac.group(2))
        shown = f"{q:.3g}" if q < 1 else f"{q.quantize(Decimal('0.001')).normalize():f}"
        return f"YAML reads {value.strip()} as text; write it as a decimal: {key}: {Decimal(shown).normalize():f}."
    m = _TEXT_NUMBER.match(value)
    number = m.group(1).replace(",", "").replace("_", "") if m else None
    if number and "\n" in value:  # 'budget_usd: |' with the number below: nothing was quoted
        return block_number_hint(value, lambda n: f"{key}: {number}")
    if number and "$" in value and re.fullmatch(r"\s*\$?\s*[0-9][0-9,_.]*\s*\$?\s*", value):
        # '$100' unquoted: YAML reads it as text, though nothing was quoted (h16b 13a)
        return f"Write the number without '$': {key}: {number}."
    if key.endswith("_usd"):
        return (f"Write a plain number of US dollars, without quotes or currency: {key}: {number}." if number
                else f"Write a plain number of US dollars, e.g. {key}: 5000.")
    if number and not value.strip().lower().endswith(("usd", "dollar", "dollars", "$")):
        return f"Write the number without quotes: {key}: {number}."
    return "Write a plain number, without quotes or unit."


def _name_hint(value: Any, names: Sequence[str] | None) -> str | None:
    """A hint for a list item that is not a name: close names (3060 -> 'rtx-3060-12gb'), or None."""
    if not names or isinstance(value, (Mapping, list, tuple)) or value is None:
        return None
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # A number is most likely a model number: the names that contain it ('rtx-3060-12gb' for 3060).
        holding = close_matches(text, [n for n in names if text in n.lower()])
        if holding:
            return "Did you mean " + " or ".join(repr(n) for n in holding) + "?"
    return did_you_mean(text, names)


def _item_kind(value: Any) -> str:
    """What a value is, for 'must be a name (text), not ...': 'the number 3060', 'an empty text'."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"the number {value!r}"
    if isinstance(value, str) and not value.strip():
        return "an empty text"
    return _kind(value)


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, _dt.date):  # a date or date and time YAML read from an unquoted 2024-08-01
        return f"the date {value}"
    if isinstance(value, str):
        return repr(value) if len(value) < 40 else "a long text"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


class UnreadableNumber(InputError):
    """A caller's number whose own conversion (``__int__``, ``__index__``, ``__float__``, ``numerator``...) raised,
    or gave no number: a type registered with ``numbers.Integral`` or ``numbers.Real`` that is no int or float
    (h28b N1). ``problem``: 'could not be read as a number: RuntimeError: boom'; the reader that knows the key
    names it (:meth:`planner.core.fields.Entry.raw`)."""


def plain_number(value: Any, entry: str | None = None) -> Any:
    """A number of another numeric type (a numpy integer or float, ``decimal.Decimal``,
    ``fractions.Fraction``) as the plain ``int`` (a whole value) or ``float`` (any other) it holds, so
    that the checks of a field read it as they read a number from a file; anything else (a bool,
    numpy's included, a plain text, int or float, a ``numpy.timedelta64`` or ``datetime64``: a duration
    or a date, though numpy makes ``timedelta64`` an integer type) as it is. A text of a ``str`` subclass is
    the plain ``str`` it holds (``str.__str__``, which the subclass cannot override).

    ``Decimal('2')`` -> 2, ``Fraction(3, 2)`` -> 1.5, ``numpy.int64(4)`` -> 4, ``Decimal('NaN')`` -> nan
    (refused by the field as not finite). A float wider than a float64 (``numpy.longdouble``) that its float64
    does not hold is judged as a Decimal is (:func:`planner.core.units.wide_float_text`):
    ``numpy.longdouble('512.0000000000000001')`` is no whole number, though its float is 512.0.

    Raises:
        UnreadableNumber: (an InputError naming ``entry``, the keyword or key given) the value's own conversion
            raised any Exception (RuntimeError, ZeroDivisionError, NotImplementedError...) or gave no number
            (a ``__float__`` returning a text), as the message 'could not be read as a number: ...' (h28b N1).
    """
    if type(value) in (int, float, str) or value is None or isinstance(value, bool) \
            or type(value).__name__ in ("bool_", "bool") or isinstance(value, (NotWhole, BeyondFloat)):
        return value  # the common case, before the imports below (every key of every entry comes here)
    if isinstance(value, str):  # a str subclass: the text it holds, not what its own __str__ or __format__ give
        return str.__str__(value)
    if type(value).__name__ in ("timedelta64", "datetime64"):
        return value  # numpy counts a timedelta64 an integer: no number (512 ns is no 512 tokens), refused as given
    try:
        return _plain_number(value)
    except InputError:
        raise
    except Exception as exc:  # the caller's own __int__, __float__, numerator... raised (h28b N1)
        raise unreadable_number(exc, entry) from None


def unreadable_number(exc: BaseException, entry: str | None = None) -> UnreadableNumber:
    """The error for a caller's value whose own conversion raised ``exc``: 'could not be read as a number:
    RuntimeError: boom' (planner.core.errors.unreadable_problem), naming ``entry``."""
    from planner.core.errors import unreadable_problem

    return UnreadableNumber(unreadable_problem(exc, "a number"), entry=entry,
                            hint="Pass an int or a float (its own conversion raised: "
                            "its __int__, __index__ or __float__ must give the number).")


def _plain_number(value: Any) -> Any:
    """:func:`plain_number` past its common case: the conversions that call the value's own methods."""
    import numbers
    from decimal import Decimal

    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, Decimal):
        if value.is_nan():  # Decimal('sNaN') raises in float(): a NaN, refused by the field as not finite
            return float("nan")
        beyond = beyond_float(value)  # judged by its exponent: 1E+999999999 is never expanded (h27b N3)
        if beyond is not None and (value.adjusted() >= _MAX_DIGITS or value != value.to_integral_value()):
            return beyond
        if value.is_finite() and value == value.to_integral_value():
            return int(value)  # at most _MAX_DIGITS digits: shown as 1000...000 (401 digits)
        return exact_float(float(value), value, _clip_number(str(value)))  # 4096.0000000000000000001: not whole
    if isinstance(value, numbers.Rational):
        if value.denominator == 1:
            return int(value.numerator)
        from fractions import Fraction

        n, d = int(value.numerator), int(value.denominator)
        exact = value if type(value) is Fraction else Fraction(n, d)
        beyond = beyond_float(exact)  # float() would overflow (h27b N2)
        return beyond if beyond is not None else exact_float(n / d, exact, _fraction_text(n, d))
    if isinstance(value, numbers.Real):
        wide = wide_float_text(value)  # numpy.longdouble('512.0000000000000001'): judged as given, as a Decimal
        if wide is not None:
            return beyond_float(None, wide) or exact_float(float(value), Decimal(wide), wide)
        plain = float(value)
        if type(plain) is not float:  # __float__ gave a float subclass: what it stores, never its own methods
            plain = float.__float__(plain)
        return plain
    return value


def _fraction_text(n: int, d: int) -> str:
    """A fraction as a message shows it: '1/3', '819200000000000000000001/200000000000000000000' whole (parts of up
    to 39 digits), '1/1000...000 (401 digits)'; a part past Python's 4,300-digit limit
    for an int's text by its size ('1 over a number of about 5001 digits'), never a ValueError."""
    if max(abs(n).bit_length(), abs(d).bit_length()) <= 132:  # up to 39 digits each (2**132 < 10**40): whole
        return f"{n}/{d}"
    parts = [_digits(x) if abs(x).bit_length() < 14_000 else  # below 4,300 digits: log2(10) = 3.32 bits a digit
             f"a number of about {int(abs(x).bit_length() * 0.30103) + 1} digits" for x in (n, d)]
    return "/".join(parts) if not any(p.startswith("a number") for p in parts) else " over ".join(parts)


def _clip_number(text: str) -> str:
    """A number's text as a message shows it: as it is up to 40 characters, else its first 12 and last 4 with its
    length ('0.0000000000...0001 (403 characters)'), as :func:`shown_number` cuts a long text."""
    return text if len(text) <= 40 else f"{text[:12]}...{text[-4:]} ({len(text):,} characters)"


#: The most digits of a whole Decimal that :func:`plain_number` makes an int of (Python's own limit for an int's
#: text, sys.get_int_max_str_digits' default); a larger one is a :class:`BeyondFloat`, never expanded.
_MAX_DIGITS = 4300
