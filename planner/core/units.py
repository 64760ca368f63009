"""Units: the one place where text with units becomes numbers and back.

Inside the package sizes are ``int`` bytes, rates are bytes per second (``float``),
money is USD (``float``, names end in ``_usd``), power is watts (names end in ``_w``).
GiB (2**30 bytes) and GB (10**9 bytes) are different words; Gb (gigabit) is 10**9 bits.
A bare number where a size is expected is refused: the user must say which unit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from fractions import Fraction

KiB = 2**10
MiB = 2**20
GiB = 2**30
TiB = 2**40
KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12

#: bytes per unit for sizes. Lower-case 'b' means bits.
_SIZE_UNITS: dict[str, Fraction] = {
    "B": Fraction(1),
    "KiB": Fraction(KiB), "MiB": Fraction(MiB), "GiB": Fraction(GiB), "TiB": Fraction(TiB),
    "kB": Fraction(KB), "MB": Fraction(MB), "GB": Fraction(GB), "TB": Fraction(TB),
    "kb": Fraction(KB, 8), "Kb": Fraction(KB, 8), "Mb": Fraction(MB, 8), "Gb": Fraction(GB, 8),
    "Tb": Fraction(TB, 8),
}

#: Bits per stored value for each data type the memory model knows.
#: Source: IEEE 754 (fp32/fp16), bfloat16 and OCP FP8 formats; NF4 and int4 pack two values
#: per byte (QLoRA paper, Dettmers et al. 2023, section 3). Quantization constants are
#: accounted separately (planner.memory.quant).
BITS_PER_VALUE: dict[str, int] = {
    "fp32": 32,
    "tf32": 32,
    "fp16": 16,
    "bf16": 16,
    "fp8": 8,
    "int8": 8,
    "int4": 4,
    "nf4": 4,
}

_NUMBER_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]+)\s*$")
_RATE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]+)\s*/\s*s\s*$")
#: A rate written as networking gear labels it ('400Gbps', '25 GBps', '100 Gbit/s'): number, prefix, b or B.
_PS_RATE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kKMGT])(?:(b)(?:ps|it/s|its/s)|(B)(?:ps|yte/s|ytes/s))\s*$")


class UnitError(ValueError):
    """Text that should carry a size or rate does not; the message says what to write, ``hint`` (when
    not None) what to write instead."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


#: The characters that group thousands in the locales that do not use ',' or '.': a space, the no-break spaces
#: U+00A0 and U+202F (French, Russian, Nordic: Unicode CLDR's "group" symbol), the thin space U+2009 (SI
#: Brochure, 9th ed., 5.4.4: "groups of three ... separated by a thin space"), and the apostrophes U+0027 and
#: U+2019 (Switzerland: CLDR de-CH, it-CH).
GROUP_MARKS = " \u00a0\u202f\u2009'\u2019"
#: The first run of digits with the separators and points people write in numbers ('1,5', '24_000', '1.500,5',
#: '16 384', "16'384"); a grouping mark only between digits ('24 GiB' is the number 24).
_NUMBER_RUN = re.compile(r"[0-9](?:[0-9,_.]|[" + GROUP_MARKS + r"](?=[0-9]))*")


def _readings(run: str) -> list[tuple[str, str]]:
    """What a number written with ',' or '_' may mean, as (the number in plain digits, the reading).

    ',' is a decimal comma in much of Europe and South America and a thousands separator in English
    (Unicode CLDR number symbols, https://cldr.unicode.org/translation/number-currency-formats/number-symbols):
    '1,5' and '12,0' can only be decimal commas (groups of thousands have 3 digits), '1,500,000' only
    thousands separators (a number has one decimal comma), '1,500' either. '_' groups digits in Python and
    YAML 1.1, and means nothing else. A run that none of these readings fits ('2,4,5', '5,') gives [].
    """
    marks = {ch for ch in run if ch in GROUP_MARKS}
    if marks:  # '16 384', "16'384", '1 234,5': thousands grouped by one mark, then a decimal point or comma
        mark = re.escape(next(iter(marks)))
        m = re.fullmatch(r"([0-9]{1,3}(?:" + mark + r"[0-9]{3})+)(?:[.,]([0-9]+))?", run)
        if len(marks) > 1 or "_" in run or m is None:
            return []
        plain = re.sub("[^0-9]", "", m.group(1)) + (f".{m.group(2)}" if m.group(2) else "")
        return [(plain, "thousands")]
    if "," in run and "_" in run:
        return []
    if "_" in run:
        plain = run.replace("_", "")
        ok = re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", plain) and "__" not in run and not run.endswith("_") \
            and "_." not in run and "._" not in run
        return [(plain, "separators")] if ok else []
    out: list[tuple[str, str]] = []
    if re.fullmatch(r"[0-9]+,[0-9]+", run):
        out.append((run.replace(",", "."), "decimal"))
    if re.fullmatch(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?", run):
        out.append((run.replace(",", ""), "thousands"))
    if re.fullmatch(r"[0-9]{1,3}(?:\.[0-9]{3})+,[0-9]+", run):  # '1.500,5': '.' groups thousands, ',' decimal
        out.append((run.replace(".", "").replace(",", "."), "decimal"))
    return out


def number_text(value: Decimal) -> str:
    """``value`` spelled so that a YAML 1.1 file, the command line and Python's float() all read it as that number:
    plain digits for a value from 10^-6 to 10^15 ('100000', '0.05'), else a mantissa with a point and a signed
    exponent ('1.0e+20', '2.5e-9'; YAML 1.1 reads '1e20' and '1.0e20' as text, https://yaml.org/type/float.html)."""
    value = value.normalize()
    if value == 0:
        return "0"
    if Decimal("1e-6") <= abs(value) < Decimal("1e15"):
        return format(value, "f")
    return f"{value:.{max(len(value.as_tuple().digits) - 1, 1)}e}"


def _exponent_after(text: str, start: int, end: int) -> int | None:
    """The power of ten written right after the number run ``text[start:end]`` ('1_000e2': 2), when the run is the
    text's whole number (only blanks or a sign before it, nothing after the exponent); else None (h23b M1)."""
    tail = re.fullmatch(r"[eE]([-+]?[0-9]{1,5})\s*", text[end:])
    if tail is None or text[:start].strip(" +-"):
        return None
    return int(tail.group(1))


def separator_problem(text: object, spell: Callable[[str], str], *, alone: bool = False,
                      whole: bool = False) -> tuple[str, str] | None:
    """(problem, hint) for a text whose number is written with ',' or '_' ('1,5 GiB', '24_000 GiB',
    '1,5M', '0,1'); None for any other value. Planner reads neither: a ',' may be a decimal comma or a
    thousands separator (:func:`_readings`), and reading it as the wrong one gives a value 10 or 1000
    times off; '_' is refused as YAML 1.1's '1_000' is (docs/commands.md).

    The hint gives the number as it may have been meant, each reading spelled by ``spell``: the text
    with its number respelled ('1.5 GiB'), or with ``alone`` the number alone ('1.5', for a number
    field); ``whole`` keeps the readings that are whole numbers (a whole-number field: '8,192' is 8192,
    not 8.192; '12,000' may be 12 or 12000).
    """
    if not isinstance(text, str):
        return None
    m = _NUMBER_RUN.search(text)
    if m is None or not any(ch in m.group() for ch in ",_" + GROUP_MARKS):
        return None
    run = m.group()
    every = _readings(run)
    power = _exponent_after(text, m.start(), m.end()) if alone else None
    if alone and power is None and re.match(r"[eE][-+]?[0-9]", text[m.end():]):
        every = []  # '1_0e2k': an exponent with more after it; no reading of the digits before it is the value
    if power is not None:  # '1_000e2': each reading times its power of ten, the exponent kept (h23b M1)
        scaled = [(Decimal(n).scaleb(power), how) for n, how in every]
        if any(abs(d) > Decimal("1.7976931348623157e308") or 0 < abs(d) < Decimal("2.2250738585072014e-308")
               for d, _ in scaled):  # '1_0e999': a float reads it as infinity (or '1_0e-999' as 0.0)
            return (f"{text!r} has separators in its number, which planner does not read",
                    "Its value is beyond the numbers a float holds: give the real value.")
        every = [(format(d, "f"), how) for d, how in scaled]
    # a whole-number field: the readings with a whole value ('12,000' is 12 or 12000; '8,192' only 8192)
    readings = [(str(int(Decimal(n))) if whole else n, how) for n, how in every
                if not whole or Decimal(n) == Decimal(n).to_integral_value()]
    if alone:  # a number field: the decimal reading without trailing zeros ('$5,000' -> 5, never 5.000, which
        # reads as 5 or as 5000 with a dot separating thousands: dotted_thousands, h17b #4)
        readings = [(f"{Decimal(n).normalize():f}" if how == "decimal" else n, how) for n, how in readings]
    if power is not None:  # the scaled value in a spelling a file reads as a number ('1.0e+20', never '1e20')
        readings = [(number_text(Decimal(n)), how) for n, how in readings]
    shown = (lambda n: spell(n)) if alone else (lambda n: spell((text[:m.start()] + n + text[m.end():]).strip()))
    marks = [ch for ch in GROUP_MARKS if ch in run]
    if marks:
        from planner.core.names import char_name

        problem = f"{text!r} groups the digits of its number with {char_name(marks[0])}, which planner does not read"
    elif "_" in run:
        problem = f"{text!r} is written with '_' separators, which planner does not read"
    else:
        problem = f"{text!r} has a comma in its number, which planner reads neither as a decimal point nor " \
                  "as a thousands separator"
    if whole and text.strip() != run and power is None:  # '1,5k', '12,000 tokens': the digits alone would mislead
        return problem, "Write a whole number in digits alone, without separators or a suffix."
    if not readings and every:  # '1,5' where a whole number belongs
        return problem, f"With a decimal point it is {every[0][0]}, which is not a whole number."
    if not readings:
        return problem, ("Write a whole number in digits, without separators." if whole else
                         "Write the number in digits with at most a decimal point, e.g. " + shown("1.5") + ".")
    if len(readings) == 1:
        n, how = readings[0]
        if how == "decimal" and power is not None:  # '1,5e3': 1.5e3, written out
            return problem, f"With the comma as a decimal point, write {shown(n)}."
        if how == "decimal":
            return problem, f"Write it with a decimal point: {shown(n)}."
        return problem, f"Write the number without separators: {shown(n)}."
    return problem, (f"Write {shown(readings[0][0])} if the comma is a decimal comma, or {shown(readings[1][0])} if "
                     "it separates thousands.")


def _number(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise UnitError(f"{text!r} is not a number") from exc
    return value


#: The most digits a size's or rate's number is read with: 10^40 bytes is far beyond any machine or dataset,
#: and Python refuses to read an int of over 4,300 digits (sys.get_int_max_str_digits, CVE-2020-10735).
MAX_NUMBER_DIGITS = 40


def _refuse_long_number(text: str, what: str) -> None:
    """Refuse a size or rate whose number has more than :data:`MAX_NUMBER_DIGITS` digits, shown cut short."""
    digits = sum(c.isdigit() for c in text)
    if digits > MAX_NUMBER_DIGITS:
        shown = text.strip()[:24] + f"...({digits:,} digits)"
        raise UnitError(f"the number of the {what} {shown!r} is too long to read: no {what} planner reads has more "
                        f"than {MAX_NUMBER_DIGITS} digits", "Check the value: write the number and its unit, e.g. "
                        f"{'24 GiB' if what == 'size' else '64 GB/s'}.")


#: A control character (C0, DEL, C1) or a line or paragraph separator: Python's regex ``\s`` and ``str.strip()`` read
#: a tab, U+001C-U+001F, U+0085 and U+2028 as white space, so a size's pattern would read past them (h25b M8).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _refuse_control(text: str, what: str) -> None:
    """Refuse a size or rate that holds a control character or a line separator (:data:`_CONTROL`), named and shown
    escaped (h25b M8: '10\\x1fGiB' was read as 10 GiB, while a count holding one is refused).

    Raises:
        UnitError: naming the character (planner.core.errors.char_name), with the text written with a space in its
            place as the hint where that reads as a size or rate.
    """
    m = _CONTROL.search(text)
    if m is None:
        return
    from planner.core.errors import char_name

    fixed = " ".join(_CONTROL.sub(" ", text).split())
    example = "24 GiB" if what == "size" else "64 GB/s"
    said = ("the control character " if m.group() < "\u2028" else "") + char_name(m.group())
    raise UnitError(f"the {what} {text!r} holds {said}, which is not a space",
                    f"Write it as {fixed!r}." if fixed and fixed != text else
                    f"Write a number and its unit, e.g. '{example}'.")


def _unit_suggestion(number: object) -> str:
    """What to write for a size given as a bare number: the units it may count, none guessed (16380 may be MiB of
    a GPU, 2048 GiB of a cloud instance), bytes first for a number as large as a byte count; never a negative."""
    try:
        value = float(str(number))
    except ValueError:
        value = 0.0
    if value < 0:
        return "a size is never negative: write it with its unit, e.g. '24 GiB'"
    if value >= 2**20:
        return f"write it with the unit it counts, e.g. '{number} B' (bytes), '{number} MiB' or '{number} GiB'"
    return f"write it with the unit it counts, e.g. '{number} GiB', '{number} MiB' or '{number} GB'"


def _size_spelling_hint(text: str) -> str | None:
    """What to write for a size in a spelling the parser does not take, or None: a number with no digit before
    or after its point ('.5 GiB', '5. GiB'), or a unit in full-width or other compatibility letters ('24 ＧｉＢ',
    whose Unicode NFKC form is '24 GiB')."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", text).strip()
    m = re.fullmatch(r"([0-9]*)\.([0-9]*)\s*([A-Za-z]+)", folded)
    if m and (m.group(1) or m.group(2)) and not (m.group(1) and m.group(2)):
        number = f"{m.group(1) or '0'}.{m.group(2)}" if m.group(2) else m.group(1)
        return f"Write a digit on both sides of the point, or none: '{number} {m.group(3)}'."
    if folded != text.strip() and _NUMBER_UNIT.match(folded):
        return f"Write it in ASCII letters and digits: '{folded}'."
    return None


def parse_size(text: object) -> int:
    """Parse a size written with its unit into integer bytes.

    Accepts IEC (``KiB MiB GiB TiB``), SI (``kB MB GB TB``), bytes (``B``) and bits
    (``Gb`` = 10**9 bits). Rounds to the nearest byte.

    Raises:
        UnitError: for a bare number, an unknown unit, a negative, NaN or infinite value, a number
            written with ',' or '_' (:func:`separator_problem`; its ``hint`` says what to write), a
            fraction of a byte ('0.5 B', '1.5 B', or less than 1 byte in a byte unit; '1.7 GiB' and sizes in
            bits are rounded).

    Example: ``parse_size("24 GiB") == 25769803776``; ``parse_size("80 GB") == 80 * 10**9``.
    """
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise UnitError(f"expected a size such as '24 GiB' or '80 GB', got {type(text).__name__}")
    if isinstance(text, (int, float)):
        raise UnitError(f"the size {text!r} has no unit; {_unit_suggestion(text)}")
    _refuse_long_number(text, "size")
    _refuse_control(text, "size")
    unitless = not re.search(r"[A-Za-z]", text)  # '1,5': no unit either, which the hint adds
    separated = separator_problem(text, (lambda t: f"'{t} GiB' or '{t} GB'") if unitless else repr)
    if separated:
        raise UnitError(separated[0] + (", and has no unit" if unitless else ""), separated[1])
    m = _NUMBER_UNIT.match(text)
    if not m:
        bare = text.strip()
        if re.fullmatch(r"-?[0-9.eE+_,]+", bare or "x"):
            raise UnitError(f"the size {text!r} has no unit; {_unit_suggestion(bare)}")
        raise UnitError(f"{text!r} is not a size; write a non-negative number and a unit, e.g. '24 GiB'",
                        _size_spelling_hint(text))
    number, unit = m.groups()
    _refuse_exponent(text, number, unit)
    if unit == "KB":  # 1000 B in SI (lower-case k, BIPM), 1024 B in JEDEC 100B.01 and Windows: no single reading
        raise UnitError(f"the unit 'KB' in {text!r} means 1000 B to some and 1024 B to others (JEDEC)",
                        f"Write kB (1000 B) or KiB (1024 B): '{number} kB' or '{number} KiB'.")
    if unit not in _SIZE_UNITS:
        close = [u for u in _SIZE_UNITS if u.lower() == unit.lower() and not u.endswith("b")]
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise UnitError(f"unknown size unit {unit!r} in {text!r}{hint}; use B, KiB, MiB, GiB, TiB, kB, MB, GB or TB")
    factor = _SIZE_UNITS[unit]
    if number.isdigit() and factor.denominator == 1:  # '24 GiB': a whole number of whole bytes, exact
        return int(number) * factor.numerator
    value = Fraction(_number(number)) * factor
    # '0.5 B', '1.5 B', '0.0001 kB': no such size (a size in bits, '0.012 kb', is rounded to whole bytes)
    if not unit.endswith("b") and (unit == "B" and value.denominator != 1 or 0 < value < 1):
        whole = sorted({math.floor(value), math.ceil(value)} - {0})
        raise UnitError(f"{text.strip()!r} is a fraction of a byte: a size is a whole number of bytes",
                        "Write a whole number of bytes, e.g. " + " or ".join(f"'{n} B'" for n in whole) + ".")
    return int(round(value))


def _refuse_exponent(text: str, number: str, unit: str) -> None:
    """Refuse a size or rate whose number has an exponent ('1e1 GiB'), as a whole number written so is refused
    (``micro_batch: 1e1``, planner.core.fields.whole_number_hint): a number is written in digits, with a decimal
    point and no separators (docs/scenarios.md), alike in a size, rate, token count or number.

    Raises:
        UnitError: with the number in digits as the hint ('10 GiB').
    """
    if "e" not in number.lower():
        return
    exponent = int(re.split("[eE]", number)[1])
    plain = format(Decimal(number), "f") if abs(exponent) <= 20 else ""  # '1e400': no 400-digit hint
    plain = plain.rstrip("0").rstrip(".") if "." in plain else plain
    raise UnitError(f"{text.strip()!r} writes its number with an exponent ({number})",
                    f"Write the number in digits: '{plain} {unit}'." if plain else
                    f"Write the number in digits, e.g. '{900 if unit.endswith('/s') else 24} {unit}'.")


def parse_rate(text: object) -> float:
    """Parse a transfer rate such as ``'900 GB/s'`` or ``'400 Gb/s'`` into bytes per second.

    Raises:
        UnitError: for a bare number, a missing ``/s``, an unknown unit, a number written with ',' or
            '_' (:func:`separator_problem`), or a rate written '400Gbps' (its ``hint``: '400 Gb/s').
    """
    if isinstance(text, bool) or not isinstance(text, str):
        raise UnitError(f"the rate {text!r} has no unit; write e.g. '900 GB/s' or '400 Gb/s'")
    _refuse_long_number(text, "rate")
    _refuse_control(text, "rate")
    separated = separator_problem(text, repr)
    if separated:
        raise UnitError(*separated)
    ps = _PS_RATE.match(text)
    m = None if ps else _RATE.match(text)
    if not m:
        if ps:  # '400Gbps': bits per second (b), bytes per second (B), as the planner writes them
            number, prefix, bits, _ = ps.groups()
            unit = prefix.replace("K", "k") + ("b" if bits else "B")
            value = float(Fraction(_number(number)) * _SIZE_UNITS[unit])
            scale, name = next((f, n) for f, n in ((GB, "GB"), (MB, "MB"), (KB, "kB"), (1, "B")) if value >= f or f == 1)
            said = f" ({value / scale:g} {name}/s; {unit} is bits, {unit[:-1].upper()}B bytes)" if bits else ""
            raise UnitError(f"{text!r} is not a rate as planner writes one", f"Write '{number} {unit}/s'{said}.")
        raise UnitError(f"{text!r} is not a rate; write a number and a unit per second, e.g. '64 GB/s' or '400 Gb/s'")
    number, unit = m.groups()
    _refuse_exponent(text, number, unit + "/s")
    if unit not in _SIZE_UNITS:
        raise UnitError(f"unknown rate unit {unit!r}/s in {text!r}; use e.g. GB/s, GiB/s or Gb/s")
    factor = _SIZE_UNITS[unit]
    if number.isdigit():  # '900 GB/s': int / int is correctly rounded, as float(Fraction) is (the same value)
        return int(number) * factor.numerator / factor.denominator
    return float(Fraction(_number(number)) * factor)


def bytes_for(count: int, dtype: str) -> int:
    """Bytes to store ``count`` values of ``dtype`` (rounded up to whole bytes).

    Raises:
        KeyError: for an unknown dtype (callers validate names first).
    """
    return -(-count * BITS_PER_VALUE[dtype] // 8)


def gib(n_bytes: float) -> float:
    """Bytes to GiB (2**30) as a float, for display only."""
    return n_bytes / GiB


def gb(n_bytes: float) -> float:
    """Bytes to GB (10**9) as a float, for display only."""
    return n_bytes / GB


def format_gib(n_bytes: float, digits: int = 2) -> str:
    """'12.34 GiB' for display."""
    return f"{n_bytes / GiB:,.{digits}f} GiB"


def format_size(n_bytes: int) -> str:
    """A size for humans in the largest IEC unit that keeps it >= 1 (e.g. '1.00 GiB')."""
    for unit, size in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if abs(n_bytes) >= size:
            return f"{n_bytes / size:,.2f} {unit}"
    return f"{n_bytes} B"


def is_finite_number(x: object) -> bool:
    """True for an int or float that is not bool, NaN or infinite."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def years_text(years: float) -> str:
    """'1 year', '3 years', '1.5 years': a count of years in words, singular for exactly one."""
    return f"{years:g} year" + ("" if years == 1 else "s")


def duration_text(hours: float) -> str:
    """A duration given in hours, at the unit that shows it: '51.3 h' from 1 h up, '12.5 min' from
    one minute, else '0.42 s' (a run of a few thousand tokens never reads '0.0 h')."""
    if not math.isfinite(hours):
        return f"{hours} h"
    if hours >= 1:
        return f"{hours:,.1f} h"
    if hours * 60 >= 1:
        return f"{hours * 60:.3g} min"
    return f"{hours * 3600:.3g} s"


class NotWhole(float):
    """A number whose float is whole though the number as written is not: '2.9999999999999999' reads as 3.0 and
    ``Decimal('4096.0000000000000000001')`` as 4096.0, since a float (IEEE 754 binary64) holds 15 to 17
    significant decimal digits and rounds away the rest. Where a whole number belongs it is refused
    (planner.core.fields.Entry.int), not taken as the whole number its float rounds to; elsewhere it is the
    float it holds. ``text``: the number as written."""

    text: str

    def __new__(cls, value: float, text: str) -> "NotWhole":
        made = super().__new__(cls, value)
        made.text = text
        return made


class BeyondFloat(float):
    """A number beyond the largest float (about 1.8e+308) given as a ``decimal.Decimal``, a ``fractions.Fraction``
    or a float wider than a float64 (``numpy.longdouble('1.5e400')``): its value is the infinity of its sign, so
    every range refuses it, and ``repr()``/``str()`` give ``text``, the number as a message shows it
    ('1E+999999999', '1.5e+400', 'a number of about 400 digits'), never 'inf', which it is not. Made by
    :func:`beyond_float` from the number's exponent or bit lengths, before any integer of its digits is built
    (``Decimal('1E+999999999')`` expanded to an int takes hours, h27b N3)."""

    text: str

    def __new__(cls, negative: bool, text: str) -> "BeyondFloat":
        made = super().__new__(cls, -math.inf if negative else math.inf)
        made.text = text
        return made

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


#: The largest float (sys.float_info.max, IEEE 754 binary64: (2 - 2**-52) * 2**1023), exactly.
_FLOAT_MAX_INT = 2**1024 - 2**971


def beyond_float(value: object, text: str | None = None) -> BeyondFloat | None:
    """A :class:`BeyondFloat` for a ``decimal.Decimal`` or ``fractions.Fraction`` (``text``: a wide float's
    digits, read as a Decimal) whose magnitude is more than the largest float, else None (a smaller, NaN or
    infinite one; any other value). Judged from the Decimal's ``adjusted()`` exponent and the Fraction's bit
    lengths first, exactly only near the limit, so a value of a few characters never costs a billion-digit
    integer. Shown as given when that is short ('1E+999999999'), else by its count of digits."""
    if text is not None:
        value = written_decimal(text)
    if isinstance(value, Decimal):
        if not value.is_finite() or value.is_zero() or value.adjusted() < 308:
            return None
        if value.adjusted() < 310 and abs(value) <= _FLOAT_MAX_INT:
            return None
        shown = text or str(value)
        if len(shown) > 20:
            shown = f"a number of about {value.adjusted() + 1} digits"
        return BeyondFloat(value.is_signed(), shown)
    if isinstance(value, Fraction):
        n, d = abs(value.numerator), value.denominator
        bits = n.bit_length() - d.bit_length()  # the value lies between 2**(bits - 1) and 2**(bits + 1)
        if bits < 1023 or (bits < 1026 and n <= _FLOAT_MAX_INT * d):
            return None
        return BeyondFloat(value < 0, f"a number of about {int(bits * 0.30103) + 1} digits")  # log10(2) per bit
    return None


#: The smallest positive float, as messages give it: 2**-1074, about 4.9e-324 (IEEE 754 binary64's least subnormal).
SMALLEST_FLOAT_TEXT = "about 4.9e-324"


def underflow_problem(value: object) -> str | None:
    """The problem of a number that is not 0 but whose float is (``1.0e-400``, ``Decimal('1e-400')``: below the
    smallest float, :data:`SMALLEST_FLOAT_TEXT`, so it reads as 0.0, a value the user never wrote): a
    :class:`NotWhole` of value 0 (:func:`exact_float` makes one), or a number text; None for any other value.
    Said as the other end is ('beyond the largest number a float holds'), never hinted as another spelling."""
    if isinstance(value, NotWhole) and value == 0:
        text = value.text
    elif isinstance(value, str) and _FLOAT_TEXT.fullmatch(value.strip()):
        text = value.strip()
        try:
            if float(text.replace("_", "")) != 0 or Decimal(text.replace("_", "")) == 0:
                return None
        except (ValueError, InvalidOperation):
            return None
    else:
        return None
    return f"{text} is below the smallest number a float holds ({SMALLEST_FLOAT_TEXT}), so it would read as 0"


#: The hint of :func:`underflow_problem`'s problem: no other spelling of the number is offered (each reads as 0).
UNDERFLOW_HINT = "Give the real value."


#: A decimal number with an exponent, as text ('1e-400', '1.0e-400', '-2_5e-999').
_FLOAT_TEXT = re.compile(r"[-+]?(?:[0-9][0-9_]*\.?[0-9_]*|\.[0-9][0-9_]*)[eE][-+]?[0-9]+")


#: A number with exactly three digits after a dot and one to three before, the first not 0 ('8.000', '100.000',
#: '1.500'): a dot separates thousands in much of Europe, Indonesia and Turkey (de, es, it, nl, pt, tr, id:
#: Unicode CLDR number symbols, https://cldr.unicode.org/translation/number-currency-formats/number-symbols),
#: where '100.000' is a hundred thousand.
_DOTTED = re.compile(r"\s*([+-]?)([1-9][0-9]{0,2})\.([0-9]{3})\s*")


def dotted_thousands(text: str | None, spell: Callable[[str], str], *, whole: bool,
                     only: str | None = None) -> tuple[str, str] | None:
    """(problem, hint) for a number written with one dot and three digits after it ('8.000', '1.500') where a whole
    number (``whole``) or a price in USD belongs: the thousands reading is 1,000 times the decimal one, and
    ``seq_len: 8.000`` or ``unit_price_usd: 1.500`` would be read 1,000 times too small if the dot separates
    thousands (h17b #4). The hint gives both readings, each spelled by ``spell``: the thousands one, then the
    decimal one (without its trailing zeros) where it is whole or ``whole`` is False. None for another text (a
    number the file did not write so, '0.500', '12.5', '1.5000'), and with ``only`` for a number whose decimal
    reading is not 'whole' ('16.384' where a whole number belongs: refused as no whole number, with the
    thousands reading as its hint) or not whole 'cents' ('250.005' as a price: refused for its fraction of a
    cent, planner.catalog.prices.whole_cents)."""
    m = _DOTTED.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        return None
    sign, head, tail = m.groups()
    if (only == "whole" and tail != "000") or (only == "cents" and not tail.endswith("0")):
        return None
    thousands = f"{sign}{int(head + tail)}"
    point = Decimal(f"{sign}{head}.{tail}")
    decimal = f"{point.normalize():f}"
    problem = (f"{text.strip()} may be {thousands} with a dot separating thousands (as in much of Europe) or "
               f"{decimal} with a decimal point, 1,000 times less")
    readings = [f"{spell(thousands)} if the dot separates thousands"]
    if not whole or point == point.to_integral_value():
        readings.append(f"{spell(decimal)} if it is a decimal point")
    return problem, "Write " + ", or ".join(readings) + "."


def written_decimal(text: str | None) -> Decimal | None:
    """The exact decimal a number's text writes, judged by its digits and never by the float they round to
    ('249.999999999999999999', whose float is 250.0; '2.5e2'; '1_000.50', as YAML 1.1 and Python group digits;
    surrounding spaces read past): the one reader behind the checks that judge a number as written, a price's
    cents (planner.catalog.prices.whole_cents), a vms.csv count (planner.catalog.skypilot_csv.is_whole) and a wide
    float's digits (:func:`wide_float_text`). None when there is no text, when one Decimal does not read it (hex,
    base 60, an exponent beyond Decimal's, '1e-99999999999999999999') or when it is not finite ('inf', 'nan')."""
    if not text:
        return None
    try:
        exact = Decimal(text.strip().replace("_", ""))
    except InvalidOperation:
        return None
    return exact if exact.is_finite() else None


def wide_float_text(value: object) -> str | None:
    """The number a float wider than a float64 holds, as the shortest text that reads back as it
    (``numpy.longdouble('512.0000000000000001')``, 64 significant bits on x86 Linux: '512.0000000000000001'),
    when its float64 does not hold it (its float is 512.0, which numpy itself says is not the value); None for
    any other value (a float64, a float32, a longdouble a float64 holds, NaN, a Decimal, a text). numpy is never
    imported here: a numpy scalar comes with numpy loaded. Read as Decimal's digits are: judged as given, never as
    the float they round to (h20b N3)."""
    if type(value) in (int, float, str, bool) or value is None or isinstance(value, (Decimal, Fraction)) \
            or type(value).__module__ != "numpy":
        return None
    try:
        rounded = float(value)  # type: ignore[arg-type]
        if rounded == value or value != value:  # held exactly by a float64, or NaN
            return None
        text = str(value)
        if written_decimal(text) is None or type(value)(text) != value:  # type: ignore[call-arg]
            return None  # no finite decimal, or a text that does not read back as the value: not the number given
    except (TypeError, ValueError, OverflowError):
        return None
    return text


def binary_float_text(value: object) -> str | None:
    """The decimal a numpy binary float of another width than a float64 stands for, as the shortest text that reads
    back as it in its own type (numpy's own digits, what ``print`` shows of it): a narrower one (``float16``,
    ``float32``) always, ``str(numpy.float32(19.99))`` being '19.99' though its float64 is 19.989999771118164 (the
    float32 nearest 19.99, which is what was meant); a wider one (``longdouble``) where its float64 does not hold it
    (:func:`wide_float_text`: ``numpy.longdouble(19.99)``, made from a float64, is that float64, and its longdouble
    digits '19.989999999999998437' are not the number meant). None for any other value (a float64, numpy's
    included; an int; NaN or an infinity; a Decimal; a text). numpy is never imported here."""
    dtype = getattr(value, "dtype", None)
    if type(value).__module__ != "numpy" or getattr(dtype, "kind", None) != "f":
        return None  # not a numpy real float (a complex's kind is 'c')
    if getattr(dtype, "itemsize", 8) >= 8:
        return wide_float_text(value)
    try:
        text = str(value)
        if written_decimal(text) is None or type(value)(text) != value:  # type: ignore[call-arg]
            return None  # NaN, an infinity, or a text that does not read back as the value
    except (TypeError, ValueError, OverflowError):
        return None
    return text


def exact_float(value: float, exact: object, text: str) -> float:
    """``value`` (the float of a number), or a :class:`NotWhole` when it is whole but ``exact`` (the number as a
    ``decimal.Decimal`` or ``fractions.Fraction``, exactly as written) is not."""
    if not (math.isfinite(value) and value.is_integer()):
        return value
    try:
        whole = exact == int(exact)  # type: ignore[call-overload]
    except (ValueError, OverflowError, TypeError):
        return value
    return value if whole else NotWhole(value, text)


def exact_given(value: object) -> Fraction | None:
    """The exact value of a number given with more digits than its float may hold: a ``decimal.Decimal``, a
    ``fractions.Fraction`` (any ``numbers.Rational`` but an int), a numpy float wider than a float64 whose float64
    does not hold it (:func:`wide_float_text`) or a number's text (:func:`written_decimal`: '0.95000000000000000001',
    as a file or the command line writes it); None for any other value (an int, a float, NaN, an infinity), whose
    float is judged. The range checks judge this value, not the float it rounds to (h27b M2)."""
    import numbers

    if isinstance(value, str):
        value = written_decimal(value)
    elif type(value).__module__ == "numpy":
        value = written_decimal(wide_float_text(value))
    if isinstance(value, Decimal):  # 1E+999999999 (beyond a float) or 1E-999999999 (below one): never a Fraction
        return Fraction(value) if value.is_finite() and abs(value.adjusted()) <= 400 else None
    if isinstance(value, numbers.Rational) and not isinstance(value, numbers.Integral):
        try:
            exact = Fraction(int(value.numerator), int(value.denominator))
        except Exception:  # a caller's registered Rational whose parts raise (h28b N1): refused as it is read
            return None
        return None if beyond_float(exact) is not None else exact  # refused as beyond a float, by its size
    return None


def outside_exactly(value: object, lo: float | None, hi: float | None) -> str | None:
    """'below' or 'above' for a number given exactly (:func:`exact_given`) that lies outside ``lo`` to ``hi``, each
    bound read as the decimal it is written as (0.95, never the float 0.94999999999999995559); None for one inside
    or one not given exactly. Judged before its float: 0.95000000000000000001 is above 0.95 though its float is
    0.95 (h27b M2). A value beyond a float's range is refused elsewhere (:func:`beyond_float`) and never built."""
    exact = exact_given(value)
    if exact is None:
        return None
    if lo is not None and exact < Fraction(Decimal(repr(float(lo)))):
        return "below"
    if hi is not None and exact > Fraction(Decimal(repr(float(hi)))):
        return "above"
    return None


def exact_text(value: object, limit: float | None = None) -> str:
    """A number given exactly (:func:`exact_given`) as a message shows it: a Decimal or a text as given (at most
    40 characters, else cut: '0.0000000000...0001 (403 characters)'); a Fraction as a decimal of 17 significant
    digits, or 40 where 17 would read as ``limit`` (Fraction(95 * 10**28 + 1, 10**30) is
    0.950000000000000000000000000001, never '0.95', the limit it is refused by)."""
    if isinstance(value, (str, Decimal)) or type(value).__module__ == "numpy":
        text = value.strip() if isinstance(value, str) else wide_float_text(value) or str(value)
        return text if len(text) <= 40 else f"{text[:12]}...{text[-4:]} ({len(text):,} characters)"
    exact = exact_given(value)
    if exact is None:
        return repr(value)
    from decimal import Context

    text = ""
    for digits in (17, 40):
        context = Context(prec=digits)  # a context of its own: the thread's decimal context is never changed
        text = f"{context.divide(Decimal(exact.numerator), Decimal(exact.denominator)).normalize(context):f}"
        if limit is None or Decimal(text) != Decimal(repr(float(limit))):
            break
    return text if len(text) <= 44 else f"{text[:12]}...{text[-4:]} ({len(text):,} characters)"
