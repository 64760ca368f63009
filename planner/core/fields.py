"""Validated reading of one entry (a mapping) of a user file.

Every loader (catalog, scenario, workload) reads its entries through :class:`Entry`, so
that every problem is reported the same way: the file, the line, the entry path, the
problem and a hint, as one :class:`planner.core.errors.InputError` of the loader's kind.
Unknown keys are refused with a did-you-mean hint: nothing the user wrote is ignored.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from planner.core.errors import InputError, ScenarioError, close_matches, did_you_mean
from planner.core.names import (MAX_NAME_CHARS, MAX_TEXT_CHARS, may_be_unsafe, name_problem, text_glyph_problem,
                                unsafe_problem)
from planner.core.list_hints import flow_list as _flow_list, key_hint
from planner.core.written import as_written, other_spelling_hint
from planner.core.units import NotWhole, UnitError, exact_float, parse_rate, parse_size, separator_problem

_MISSING: Any = object()
#: What to do about a control or bidirectional character in a text (Entry.str).
_SHOWN_HINT = "Remove it: names and texts are shown in the terminal and written into the reports as they are."
#: A size written in bits ('80 Gb'): the unit is almost surely meant as bytes.
_BITS = re.compile(r"^\s*([0-9][0-9_,.eE+-]*)\s*([kKMGT]b)\s*$")


class Entry:
    """A mapping from a user file, with where it came from.

    Args:
        data: the mapping (a :class:`planner.core.yamlio.LineDict` keeps line numbers).
        file: the file path as the user named it (None for command-line options).
        path: the entry path inside the document, e.g. ``gpus[3]``; '' for the root.
        error: the :class:`InputError` subclass to raise.
        line: line of the entry when ``data`` does not know it.
        refuse_null: refuse a key given with no value (YAML's null: nothing after ``key:``, or ``~``; None
            in a mapping a script gives) where the reader's default is None, which would read it as the key
            left out without a word (``allowed_gpus:`` with its items commented out would allow every GPU).
            Default: for a :class:`planner.core.errors.ScenarioError` entry (a scenario, a workload file: their
            docs give null no meaning); a catalog overlay's null drops a shipped value (docs/catalog.md).
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        *,
        file: str | None,
        path: str = "",
        error: type[InputError] = InputError,
        line: int | None = None,
        refuse_null: bool | None = None,
    ) -> None:
        self.data = data
        self.file = file
        self.path = path
        self.error_cls = error
        self._line = getattr(data, "line", None) or line
        self.refuse_null = issubclass(error, ScenarioError) if refuse_null is None else refuse_null

    # ----- locations and errors -------------------------------------------------------
    def key_path(self, key: str | None) -> str | None:
        if key is None:
            return self.path or None
        return f"{self.path}.{key}" if self.path else str(key)

    def line_of(self, key: str | None) -> int | None:
        lines = getattr(self.data, "lines", None)
        if key is not None and lines and key in lines:
            return lines[key]
        return self._line

    def error(self, problem: str, key: str | None = None, hint: str | None = None) -> InputError:
        """An error of this entry's kind, located at ``key`` (or the entry itself)."""
        return self.error_cls(problem, file=self.file, line=self.line_of(key), entry=self.key_path(key), hint=hint)

    # ----- structure ------------------------------------------------------------------
    def check_keys(self, allowed: Iterable[str], required: Iterable[str] = (),
                   hints: Mapping[str, str] | None = None,
                   explain: Callable[[str, Any], tuple[str, str | None] | None] | None = None) -> None:
        """Refuse unknown keys (with close matches) and missing required ones.

        Args:
            hints: per required key, the hint for its absence (what to write there).
            explain: consulted for an unknown key before the close matches: given the key and its
                value, the (problem, hint) to report, or None for the close matches (a name another
                tool gives the key, planner.workload.othernames).
        """
        if type(allowed) is not tuple:  # a tuple (a catalog list's keys, computed once) is used as it is
            allowed = list(allowed)
        for key in self.data:
            if not isinstance(key, str):
                raise self.error(f"key {key!r} is not a name", None, key_hint(allowed))
            if key not in allowed:
                told = _flow_list(self.data, key) or (explain(key, self.data[key]) if explain is not None else None)
                if told is not None:
                    raise self.error(told[0], key, told[1])
                problem, hint = _not_a_choice(key, allowed, "is an unknown key", lead="")
                if hint is None or not hint.startswith("Did you mean"):
                    hint = "Valid keys: " + ", ".join(sorted(allowed)) + "."
                raise self.error(problem.replace(f"{key!r} is an unknown key", f"unknown key {key!r}", 1), key, hint)
        for key in required:
            if key not in self.data:
                raise self.error(f"missing required key {key!r}", None, (hints or {}).get(key))

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def raw(self, key: str, default: Any = _MISSING, what: str = "a value") -> Any:
        """The value at ``key`` as written (numbers made plain), else ``default``.

        Raises:
            InputError: the key is missing and there is no default; or (:attr:`refuse_null`) it is given
                with no value where the default is None, which would read as no limit or no setting:
                'must be {what}, not empty', with the hint to write a value or leave the key out.
        """
        if key in self.data:
            value = self.data[key]
            if value is None and default is None:
                self.refuse_empty(key, what)
            return plain_number(value)
        if default is _MISSING:
            raise self.error(f"missing required key {key!r}")
        return default

    def written(self, key: str) -> str | None:
        """The text a file wrote for ``key``'s value when YAML read it as a number ('1.50', '1.5e+5'; the value
        reads as 1.5, 150000.0); None when not known (a mapping from the API, or not a number)."""
        text = getattr(self.data, "written", {}).get(key)
        return text if isinstance(text, str) else None

    def refuse_empty(self, key: str, what: str) -> None:
        """Refuse ``key`` given with no value (YAML's null) in an entry that refuses nulls (:attr:`refuse_null`),
        for a reader of its own whose default is 'not given'.

        Raises:
            InputError: 'must be {what}, not empty', with :meth:`null_hint`.
        """
        if self.refuse_null and key in self.data and self.data[key] is None:
            raise self.error(f"must be {what}, not empty", key, self.null_hint(key, what))

    def null_hint(self, key: str, what: str, optional: bool = True) -> str:
        """The hint for ``key`` given with no value: write ``what``, or (``optional``: the key has a default)
        leave the key out for its default."""
        if self.file is None:
            return f"None is no value: give {what}" + (f", or leave {key!r} out for its default." if optional else ".")
        return (f"Write {what} after '{key}:' (nothing there, or ~, is YAML's null)"
                + (", or remove the key for its default." if optional else "."))

    def child(self, key: str, default: Any = _MISSING) -> Entry | None:
        """The mapping under ``key`` as an Entry (None if absent and a default was given)."""
        value = self.raw(key, default, "a mapping of keys to values")
        if value is None and default is not _MISSING:
            return None
        if not isinstance(value, Mapping):
            raise self.error(f"must be a mapping of keys to values, not {_kind(value)}", key)
        return Entry(value, file=self.file, path=self.key_path(key) or "", error=self.error_cls, line=self.line_of(key),
                     refuse_null=self.refuse_null)

    def children(self, key: str, default: Any = _MISSING) -> list[Entry]:
        """The list of mappings under ``key`` as Entries."""
        value = self.raw(key, default, "a list of entries")
        if value is None:
            return []
        if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
            raise self.error(f"must be a list of entries, not {_kind(value)}", key,
                             "Start each entry with '- ' on its own line." if isinstance(value, Mapping) else None)
        out = []
        lines = getattr(value, "lines", [])
        where = self.key_path(key)  # once for the list, not per item
        for i, item in enumerate(value):
            path = f"{where}[{i}]"
            line = lines[i] if i < len(lines) else self.line_of(key)
            if not isinstance(item, Mapping):
                raise self.error_cls(
                    f"must be a mapping of keys to values, not {_kind(item)}", file=self.file, line=line, entry=path
                )
            out.append(Entry(item, file=self.file, path=path, error=self.error_cls, line=line,
                             refuse_null=self.refuse_null))
        return out

    # ----- scalars --------------------------------------------------------------------
    def str(self, key: str, default: Any = _MISSING, choices: Iterable[str] | None = None, *,
            multiline: bool = False, glyphs: bool = True) -> Any:
        """A non-empty text; one of ``choices`` when given.

        Control characters and bidirectional controls are refused
        (:func:`planner.core.names.unsafe_char`): the text is shown in the terminal and written into
        the reports. ``multiline`` allows line feeds and tabs (a description, notes). Unless ``glyphs`` is
        false (a name, whose own rules say more) or ``choices`` are given, a character with no glyph or the
        Braille blank is refused too (:func:`planner.core.names.text_glyph_problem`).
        """
        value = self.raw(key, default, "a text" if choices is None else "one of the choices")
        if value is default and default is not _MISSING:
            return value
        if choices is not None:
            choices = list(choices)
        if not isinstance(value, str) or not value.strip():
            if choices:
                raise self.error(f"must be one of the choices, not {_kind(value)}", key,
                                 "Valid: " + ", ".join(map(str, choices)) + "." + _choice_note(key, value, choices,
                                                                                               self.file))
            raise self.error(f"must be a non-empty text, not {_kind(value)}", key,
                             _bool_note(value, self.file).strip() or _text_note(key, value, self.file,
                                                                                self.written(key)))
        if len(value) > MAX_TEXT_CHARS:  # a workbook cell holds 32,767: never cut without a word
            raise self.error(f"is {len(value):,} characters long; a text is at most {MAX_TEXT_CHARS:,} characters, "
                             "since the workbook holds it in one cell (at most 32,767)", key,
                             "Shorten it, or keep the long text in a file of its own and name that file here.")
        if may_be_unsafe(value):  # most texts are printable and hold no Hangul filler: no search
            self._check_shown(key, value, multiline)
        if glyphs and choices is None:
            told = text_glyph_problem(value)
            if told:
                raise self.error(told[0], key, told[1])
        if choices is not None:
            if value not in choices:
                problem, hint = _not_a_choice(value, choices, "is not one of the choices")
                raise self.error(problem, key, hint)
        return value

    def name(self, key: str, default: Any = _MISSING) -> Any:
        """A name (a scenario's, a workload's): a text (:meth:`str`) that is not blank space only and does not
        start or end with a blank-looking character (a space, a no-break space U+00A0 or U+202F, the Braille
        blank U+2800: :func:`planner.core.names.name_problem`), and holds inside no blank but single ordinary
        spaces and no doubled combining mark, so that no two names look alike in a report.
        Names are compared in Unicode NFKC (:func:`planner.core.names.name_key`) by their callers."""
        value = self.raw(key, default, "a name")
        if isinstance(value, str) and (len(value) > MAX_NAME_CHARS or (value and not value.strip())):
            told = name_problem(value)  # too long (checked before anything reads it all), or blank space only
            if told:
                raise self.error(told[0], key, told[1])
        value = self.str(key, default, glyphs=False)
        if value is default and default is not _MISSING:
            return value
        told = name_problem(value)
        if told:
            raise self.error(told[0], key, told[1])
        return value

    def str_list(self, key: str, default: Any = _MISSING, choices: Iterable[str] | None = None,
                 names: Iterable[str] | None = None) -> Any:
        """A list of names (one name alone is a list of one).

        Args:
            choices: the names allowed (others are refused with a did-you-mean).
            names: the names a hint may suggest for an item that is not a name (a number such
                as 3060 for 'rtx-3060-12gb'); default ``choices``.
        """
        value = self.raw(key, default, "a name or a list of names")
        if value is default and default is not _MISSING:
            return value
        if choices is not None:
            choices = list(choices)
        known = list(names) if names is not None else choices
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, Sequence) or isinstance(value, bytes):
            if isinstance(value, Mapping):
                raise self.error(f"must be a list of names, not {_kind(value)}", key,
                                 f"Write the names in brackets, e.g. {key}: [a, b], or one per line after '- '.")
            raise self.error(f"must be a name (text) or a list of names, not {_item_kind(value)}", key,
                             _name_hint(value, known))
        lines = getattr(value, "lines", [])
        for i, v in enumerate(value):
            bad = not isinstance(v, str) or not v.strip()
            why = None if bad or not may_be_unsafe(v) else unsafe_problem(v)  # printable: nothing unsafe
            if bad or why:
                line = lines[i] if i < len(lines) else self.line_of(key)
                raise self.error_cls(why or f"must be a name (text), not {_item_kind(v)}", file=self.file,
                                     line=line, entry=f"{self.key_path(key)}[{i}]",
                                     hint=_SHOWN_HINT if why else _name_hint(v, known))
        if choices is not None:
            for v in value:
                if v not in choices:
                    problem, hint = _not_a_choice(v, choices, "is not one of the choices")
                    raise self.error(problem, key, hint)
        return list(value)

    def _check_shown(self, key: str, value: str, multiline: bool) -> None:
        """Refuse a text holding a character :func:`planner.core.names.unsafe_char` finds.

        Callers may skip a text for which :func:`planner.core.names.may_be_unsafe` is false: every
        character it finds but the Hangul fillers (categories Cc, Cf, Cs, Zl, Zp, noncharacters) is
        unprintable, which tests/test_catalog_speed.py checks.
        """
        why = unsafe_problem(value, newlines=multiline)
        if why:
            raise self.error(why, key, _SHOWN_HINT)

    def bool(self, key: str, default: Any = _MISSING) -> Any:
        value = self.raw(key, default, "true or false")
        if value is default and default is not _MISSING:
            return value
        if not isinstance(value, bool):
            meant = _BOOL_WORDS.get(str(value).strip().lower()) if isinstance(value, (str, int, float)) else None
            raise self.error(f"must be true or false, not {_kind(value)}", key,
                             "Write true or false (YAML booleans, no quotes)"
                             + (f": {key}: {meant}." if meant else "."))
        return value

    def int(self, key: str, default: Any = _MISSING, *, min: int | None = None, max: int | None = None,
            what: str | None = None) -> Any:
        """A whole number from ``min`` to ``max``; ``what`` names what it counts for the hint ('the ZeRO
        stage'), which says the range for a value that is no number (``zero: off``, ``zero: 'off'``)."""
        value = self.raw(key, default, "a whole number")
        if value is default and default is not _MISSING:
            return value
        if isinstance(value, NotWhole):  # '2.9999999999999999': its float is 3.0, the number is not whole
            raise self.error(f"must be a whole number, not {value.text}, which has more digits than a float holds "
                             f"(it would read as {int(value)})", key, "Write the whole number meant, without decimals.")
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            _check_range(self, key, value, min, max)  # said as given: 1e+300, not its 301 digits
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            null = None
            if value is None:
                null = (f"Write a whole number after '{key}:' (nothing there, or ~, is YAML's null)."
                        if self.file else "Give a whole number; None is no value.")
            raise self.error(f"must be a whole number, not {_kind(value)}", key,
                             _int_hint(key, value) or null or _takes_hint(key, value, min, max, what, self.file))
        _check_range(self, key, value, min, max)
        return value

    def number(self, key: str, default: Any = _MISSING, *, min: float | None = None, max: float | None = None,
               min_exclusive: bool = False) -> Any:
        value = self.raw(key, default, "a number")
        if value is default and default is not _MISSING:
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(f"must be a number, not {_kind(value)}", key,
                             _number_hint(key, value, max) or _bool_note(value, self.file).strip() or None)
        if isinstance(value, int) and abs(value) > _FLOAT_MAX:  # a whole number no float can hold
            raise self.error(f"{_digits(value)} is more than any real value of this field", key)
        if not math.isfinite(value):
            raise self.error(f"must be a finite number, not {value!r}", key)
        if min_exclusive and min is not None and value <= min:
            given = self.data.get(key)  # Decimal('1e-400') reads as 0.0: say what was given
            shown = value if type(given) in (int, float) else given
            raise self.error(f"must be more than {min:g}, not {shown!r}", key)
        _check_range(self, key, value, None if min_exclusive else min, max)
        return float(value) + 0.0  # -0.0 is 0 (IEEE 754-2019, 6.3: x + (+0) is +0 for x = -0): no '-0%' shown

    def size(self, key: str, default: Any = _MISSING, *, min: int = 0, max: int | None = None) -> Any:
        """A size with its unit ('24 GiB', '80 GB') as int bytes."""
        value = self.raw(key, default, "a size such as '24 GiB'")
        if value is default and default is not _MISSING:
            return value
        if value is None:  # never parse_size's 'got NoneType'
            raise self.error("must be a size such as '24 GiB', not empty", key,
                             self.null_hint(key, "a size such as '24 GiB'", default is not _MISSING))
        try:
            n = parse_size(value)
        except UnitError as exc:
            raise self.error(str(exc), key, exc.hint) from None
        bits = _BITS.match(value) if isinstance(value, str) else None
        if bits:
            number, unit = bits.groups()
            raise self.error(f"{value!r} is in bits ({unit}), but a size is written in bytes", key,
                             f"Did you mean '{number} {unit[:-1].replace('K', 'k')}B' or "
                             f"'{number} {unit[0].upper()}iB'? {unit} is {_PREFIX[unit[0].upper()]}bits; "
                             f"{unit[0].replace('K', 'k')}B is {_POWER[unit[0].upper()]} bytes, {unit[0].upper()}iB "
                             f"{_BINARY[unit[0].upper()]} bytes.")
        if n < min:
            raise self.error(f"must be at least {min} bytes, not {value!r}", key)
        if max is not None and n > max:  # the limit named, in the largest binary unit it is a whole number of
            unit = next((u for u in ("PiB", "TiB", "GiB", "MiB", "KiB") if max % _BINARY_BYTES[u] == 0), None)
            limit = f"{max // _BINARY_BYTES[unit]:,} {unit}" if unit else f"{max:,} B"
            raise self.error(f"{value!r} is more than any real value of this field (at most "
                             f"{limit})", key, f"Write a size of at most {limit}, e.g. '{limit}'.")
        return n

    def rate(self, key: str, default: Any = _MISSING) -> Any:
        """A rate with its unit ('900 GB/s', '400 Gb/s') as bytes per second."""
        value = self.raw(key, default, "a rate such as '400 Gb/s'")
        if value is default and default is not _MISSING:
            return value
        if value is None:  # never parse_rate's 'the rate None'
            raise self.error("must be a rate such as '400 Gb/s', not empty", key,
                             self.null_hint(key, "a rate such as '400 Gb/s'", default is not _MISSING))
        try:
            return parse_rate(value)
        except UnitError as exc:
            raise self.error(str(exc), key, exc.hint) from None

    def date(self, key: str, default: Any = _MISSING, *, past: bool = False) -> Any:
        """An ISO date (YYYY-MM-DD, or YYYY-MM) as a string.

        past: the date says when something was observed (a price's ``as_of``), so it may not lie
            after today (a YYYY-MM date may name the current month).
        """
        value = self.raw(key, default, "a date such as 2026-01-15")
        if value is default and default is not _MISSING:
            return value
        if isinstance(value, _dt.datetime):  # a YAML timestamp with a time ('2027-01-31 10:00:00+05:00'):
            # refused as the quoted '2027-01-31T10:00:00' is, not cut to a date that depends on the zone
            raise self.error(f"must be a date written YYYY-MM-DD or YYYY-MM, not {str(value)!r} (a date and time)",
                             key, "Write the date alone, e.g. " + value.date().isoformat() + ".")
        if value is None:  # YAML's null: said as empty, not as Python's None (h14b #11)
            raise self.error("must be a date written YYYY-MM-DD or YYYY-MM, not empty", key,
                             self.null_hint(key, "a date", default is not _MISSING))
        parsed: _dt.date | None = None
        text = ""
        if isinstance(value, _dt.date):
            parsed, text = value, value.isoformat()
        elif isinstance(value, str):
            iso = _ISO_DATE.match(value)
            if iso:  # the usual spelling, without strptime's cost; anything else as before
                y, m, d = iso.groups()
                try:
                    parsed, text = _dt.date(int(y), int(m), int(d or 1)), value
                except ValueError:
                    pass
            other = None if parsed else other_spelling_hint(key, value)
            if other is not None:  # '２０２６-11-20', '2026‐11‐20': the characters named, not the month's digits
                raise self.error(f"must be a date written YYYY-MM-DD or YYYY-MM, not {value!r}", key, other)
            for fmt in () if parsed else ("%Y-%m-%d", "%Y-%m"):
                try:
                    loose = _dt.datetime.strptime(value, fmt).date()
                except ValueError:
                    continue
                # a real date in a loose spelling ('2026-1-5'): refused, as the reports show dates as written
                padded = loose.isoformat() if fmt == "%Y-%m-%d" else loose.isoformat()[:7]
                raise self.error(f"must be a date written YYYY-MM-DD or YYYY-MM, not {value!r}", key,
                                 f"Write it with two-digit months and days: {key}: {padded}.")
        if parsed is None:
            raise self.error(f"must be a date written YYYY-MM-DD or YYYY-MM, not {value!r}", key,
                             _date_hint(value, lambda d: f"{key}: {d}"))
        if parsed < EARLIEST_DATE:
            raise self.error(f"{text} is before {EARLIEST_DATE.isoformat()}; no hardware price, quote or measurement "
                             "planner reads is that old", key, "Write the date it was quoted, read or measured.")
        from planner.core.clock import utc_today

        today = utc_today()
        if past and (parsed.year, parsed.month, parsed.day if len(text) > 7 else 1) > (today.year, today.month,
                                                                                       today.day):
            raise self.error(f"{text} is after today ({today.isoformat()}, UTC); a price or a measurement cannot "
                             "be dated in the future", key, "Write the date it was quoted, looked up or measured.")
        return text


#: The earliest date :meth:`Entry.date` accepts. Prices, quotes and measurements planner reads are of GPUs
#: sold for compute (NVIDIA's first CUDA GPU, the GeForce 8800, launched November 2006) and the parts around
#: them, so no such date is before 2000; an older one is a typo, and dates before 1900-03-01 would also show
#: a day off in Excel (its serial dates count 1900-02-29, which never was: Microsoft, "Excel incorrectly
#: assumes that the year 1900 is a leap year",
#: https://learn.microsoft.com/en-us/office/troubleshoot/excel/wrongly-assumes-1900-is-leap-year).
EARLIEST_DATE = _dt.date(2000, 1, 1)

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
    if len(dates) == 2:
        return (f"Write it as YYYY-MM-DD: {spell(dates[0])} if the day comes first, {spell(dates[1])} if the month "
                "does.")
    return None


#: 'YYYY-MM-DD' or 'YYYY-MM' in ASCII digits, which strptime's "%Y-%m-%d" / "%Y-%m" read as the same date.
_ISO_DATE = re.compile(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?\Z")


def _check_range(entry: Entry, key: str, value: float, lo: float | None, hi: float | None) -> None:
    shown = _digits(value) if isinstance(value, int) else as_written(entry, key, value)  # a 300-digit number shortened
    if lo is not None and value < lo:
        raise entry.error(f"must be at least {_num(lo)}, not {shown}", key)
    if hi is not None and value > hi:
        raise entry.error(f"must be at most {_num(hi)}, not {shown}", key)


_FLOAT_MAX = 1.7976931348623157e308  # sys.float_info.max


def shown_number(value: Any) -> str:
    """A value as an error message echoes it: a whole number of more than 20 digits shortened
    ('1000...000 (401 digits)', never Python's 4,300-digit ValueError), anything else as repr()."""
    if isinstance(value, int) and not isinstance(value, bool):
        return _digits(value)
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


def _int_hint(key: str, value: Any) -> str | None:
    """:func:`whole_number_hint` for a file's ``key: value``."""
    return whole_number_hint(value, lambda n: f"{key}: {n}")


def ascii_digits(text: Any) -> str | None:
    """``text`` with its decimal digits of other scripts ('٤٠٩٦', fullwidth '２') written in ASCII ('4096',
    '2'), when it holds any; else None. Python's int() and float() read such digits, YAML and the unit
    parsers do not: planner refuses them everywhere (CLI, files, API) with this spelling as the hint."""
    if not isinstance(text, str) or text.isascii():
        return None
    import unicodedata

    out = [str(unicodedata.decimal(ch)) if not ch.isascii() and unicodedata.decimal(ch, None) is not None else ch
           for ch in text]
    fixed = "".join(out)
    return fixed if fixed != text else None


def ascii_digits_hint(text: Any, spell: Callable[[str], str]) -> str | None:
    """'Write ASCII digits: context: 4096.' for a text holding digits of another script (:func:`ascii_digits`),
    else None."""
    fixed = ascii_digits(text)
    if fixed is None:
        return None
    fixed = fixed.strip()
    if len(fixed) > 1 and fixed.isdigit() and fixed.startswith("0"):  # '０４': 04 would be refused (YAML 1.1 octal)
        fixed = str(int(fixed))
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


def whole_number_hint(value: Any, spell: Callable[[str], str]) -> str | None:
    """What to write instead of a text where a whole number belongs, or None.

    '4096' (quoted): the number without quotes. '8k' / '32K' / '1M': the number written out,
    the binary reading first (8k = 8 x 1024 = 8192, as context lengths are counted) and the decimal
    one beside it: the planner takes no suffix, since '8k' names either (docs/scenarios.md).
    '8,192': without the separator.

    Args:
        spell: how the hint writes the key with a number ('seq_len: 8192', '--seq-len 8192').
    """
    if isinstance(value, float) and math.isfinite(value) and 0 < value < 1e6 and re.fullmatch(
            r"[1-9][0-9]{0,2}\.[0-9]{3}", repr(value)):
        # '16.384': the German or Italian way of writing 16384 (a '.' groups thousands: Unicode CLDR de, it)
        return (f"If the '.' separates thousands, write the number without it: {spell(repr(value).replace('.', ''))}; "
                "planner reads '.' as a decimal point.")
    if isinstance(value, float) and math.isfinite(value) and 0 < value < 1e15 and not value.is_integer():
        # a fraction where a count belongs ('slot_width: 2.5', a card 2.5 slots wide, takes 3): the two whole numbers
        return f"Write a whole number: {spell(str(math.ceil(value)))} (rounded up) or {spell(str(math.floor(value)))}."
    if not isinstance(value, str):
        return None
    foreign = ascii_digits_hint(value, spell)
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
        as_float = None
    if as_float is not None and as_float.is_integer() and abs(as_float) < 1e15 and any(c in value for c in "eE."):
        return f"Write the whole number in digits: {spell(str(int(as_float)))}."
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

    from planner.core.names import char_name

    text = str(value)
    hint = did_you_mean(text, list(choices))
    folded = did_you_mean(unicodedata.normalize("NFKC", text), list(choices))
    if (hint is None or not hint.startswith("Did you mean")) and folded is not None and folded.startswith("Did you"):
        hint = folded
    foreign = next((ch for ch in text if not ch.isascii()), None)
    said = f"{lead}{text!r} {problem}"
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


def plain_number(value: Any) -> Any:
    """A number of another numeric type (a numpy integer or float, ``decimal.Decimal``,
    ``fractions.Fraction``) as the plain ``int`` (a whole value) or ``float`` (any other) it holds, so
    that the checks of a field read it as they read a number from a file; anything else (a bool,
    numpy's included, a text, a plain int or float) as it is.

    ``Decimal('2')`` -> 2, ``Fraction(3, 2)`` -> 1.5, ``numpy.int64(4)`` -> 4, ``Decimal('NaN')`` -> nan
    (refused by the field as not finite).
    """
    if type(value) in (int, float, str) or value is None or isinstance(value, bool) \
            or type(value).__name__ in ("bool_", "bool") or isinstance(value, NotWhole):
        return value  # the common case, before the imports below (every key of every entry comes here)
    import numbers
    from decimal import Decimal

    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, Decimal):
        if value.is_nan():  # Decimal('sNaN') raises in float(): a NaN, refused by the field as not finite
            return float("nan")
        if value.is_finite() and value == value.to_integral_value():
            return int(value)
        return exact_float(float(value), value, str(value))  # 4096.0000000000000000001: no whole number
    if isinstance(value, numbers.Rational):
        return int(value.numerator) if value.denominator == 1 else exact_float(float(value), value, str(value))
    if isinstance(value, numbers.Real):
        return float(value)
    return value
