"""Validated reading of one entry (a mapping) of a user file.

Every loader (catalog, scenario, workload) reads its entries through :class:`Entry`, so
that every problem is reported the same way: the file, the line, the entry path, the
problem and a hint, as one :class:`planner.core.errors.InputError` of the loader's kind.
Unknown keys are refused with a did-you-mean hint: nothing the user wrote is ignored. The hints that say what
a value seems to mean and how to write it are :mod:`planner.core.fieldhints`.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence, Set as AbstractSet
from typing import Any

from planner.core.errors import InputError, ScenarioError, unreadable_problem
from planner.core.escape import XSTRING_ESCAPE, cell_units
from planner.core.names import (MAX_ECHO_CHARS, MAX_NAME_CHARS, MAX_TEXT_CHARS, clip_text, may_be_unsafe, name_problem,
                                text_glyph_problem, unsafe_problem)
from planner.core.list_hints import flow_list as _flow_list, key_hint
from planner.core.written import as_written, other_spelling_hint
from planner.core.units import (UNDERFLOW_HINT, BeyondFloat, NotWhole, UnitError, dotted_thousands, exact_given,
                                exact_text, outside_exactly, parse_rate, parse_size, underflow_problem)
from planner.core.fieldhints import (_BINARY, _BINARY_BYTES, _BOOL_WORDS, _FLOAT_MAX, _ISO_DATE, _POWER, _PREFIX,
                                     _bool_note, _choice_note, _num, _date_hint, _digits, _int_hint,
                                     _item_kind, _kind, _name_hint, _not_a_choice, _number_hint, _outside_range_hint,
                                     _takes_hint,
                                     _text_note, plain_number, UnreadableNumber)
from planner.core.fieldhints import (ascii_digits, ascii_digits_hint, block_number_hint, impossible_date, shown_number,
                                     whole_number_hint)  # noqa: F401 (re-exported)

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
        via: tuple[str, str, int, int, int | None] | None = None,
    ) -> None:
        self.data = data
        self.file = file
        self.path = path
        self.error_cls = error
        self._line = getattr(data, "line", None) or line
        self.refuse_null = issubclass(error, ScenarioError) if refuse_null is None else refuse_null
        # the entry lies inside a key a merge key brought into an entry above it (planner.core.yamlio.LineDict
        # .merged): as Entry.merged_via gives it
        self.via = via

    # ----- locations and errors -------------------------------------------------------
    def key_path(self, key: str | None) -> str | None:
        if key is None or key == "":  # an empty key: its entry (not 'workloads[0].' with a dangling dot: h34b m5)
            return self.path or None
        return f"{self.path}.{key}" if self.path else str(key)

    def line_of(self, key: str | None) -> int | None:
        lines = getattr(self.data, "lines", None)
        if key is not None and lines and key in lines:
            return lines[key]
        return self._line

    def error(self, problem: str, key: str | None = None, hint: str | None = None, *,
              overridable: bool = True) -> InputError:
        """An error of this entry's kind, located at ``key`` (or the entry itself).

        A key a merge key brought in (``<<: *anchor``; :meth:`merged_via`), or a value inside one, is located at
        that ``<<`` line, the merging entry's own, and the problem names the line the key is written on (the
        anchor's, in another entry); the hint says that YAML cannot unset a merged key: override it beside ``<<``
        or merge a mapping without it. A hint to remove the key is dropped ('Remove it or set task: train' keeps
        'set task: train'; a hint about removing a character stays): removing the key from the anchor would change
        the entry that wrote it (h16b #9).
        ``overridable`` false: no value of the key fits here (an unknown key, an option of the other task), so the
        hint names only merging a mapping without it.
        """
        via = self.merged_via(key)
        if via is None:
            return self.error_cls(problem, file=self.file, line=self.line_of(key), entry=self.key_path(key), hint=hint)
        where, merged_key, merge_line, written, listed = via
        item = f", an item of the list on line {listed} that '<<' names" if listed is not None else ""
        note = (f"{where or 'the document'} does not write {merged_key!r}: '<<' on line {merge_line} merges it from "
                f"line {written}{item}")
        fix = f"write {merged_key}: beside '<<' on line {merge_line} to override it"
        if merged_key != key or where != self.path:
            note += f"; this value is on line {self.line_of(key)}"
            fix = f"write {merged_key}: beside '<<' on line {merge_line}, whole, to override it"
        merged_hint = ((f"YAML cannot unset a merged key: {fix}, or merge a mapping without it (or do not merge)"
                        if overridable else "YAML cannot unset a merged key, and no value of it fits here: merge a "
                        "mapping without it, or do not merge")
                       + ("; '<<' merges every mapping of a list it names, so name one mapping (an &anchor on it)"
                          if listed is not None else ""))
        if hint and hint.startswith("Remove it or "):
            hint = f"{merged_hint}; or {hint[len('Remove it or '):]}"
        elif hint and not hint.startswith(("Remove it.", f"Remove {key!r}", f"Remove {key}:")):  # removing the key
            hint = f"{merged_hint}. {hint}"
        else:
            hint = f"{merged_hint}."
        return self.error_cls(f"{problem} ({note})", file=self.file, line=merge_line, entry=self.key_path(key),
                              hint=hint)

    def merged_via(self, key: str | None) -> tuple[str, str, int, int, int | None] | None:
        """Whether ``key`` (None: this entry) came through a merge key (``<<: *anchor``) rather than being written
        where it is read: (the path of the entry that merges it, the merged key, the line of the ``<<``, the line
        the merged key is written on, the line of the anchored list ``<<`` names or None); a key merged into this
        entry first, else the one above it that this entry lies in (:attr:`via`); None when written here."""
        merged = getattr(self.data, "merged", None)
        if key is not None and merged and key in merged:
            merge_line, listed = merged[key]
            return self.path, key, merge_line, self.line_of(key) or merge_line, listed
        return self.via

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
            if key not in allowed and len(key) > MAX_ECHO_CHARS:  # a runaway key: its first 80, at its entry (h24b M6)
                raise self.error_cls(f"unknown key {said_key(clip_text(key))}", file=self.file,  # at its own line
                                     line=self.line_of(key) or self._line, entry=self.path or None,  # (h34b m4)
                                     hint="Valid keys: " + ", ".join(sorted(allowed)) + ".")
            if key not in allowed:
                told = _flow_list(self.data, key) or (explain(key, self.data[key]) if explain is not None else None)
                if told is not None:
                    raise self.error(told[0], key, told[1])
                problem, hint = _not_a_choice(key, allowed, "is an unknown key", lead="")
                if hint is None or not hint.startswith("Did you mean"):
                    hint = "Valid keys: " + ", ".join(sorted(allowed)) + "."
                raise self.error(problem.replace(f"{key!r} is an unknown key", f"unknown key {said_key(key)}", 1),
                                 key, hint, overridable=False)
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
                'must be {what}, not empty', with the hint to write a value or leave the key out; or a
                number of the caller's whose own conversion raised: 'could not be read as a number: ...' (h28b N1).
        """
        if key in self.data:
            value = self.data[key]
            if value is None and default is None:
                self.refuse_empty(key, what)
            try:
                return plain_number(value)
            except UnreadableNumber as exc:
                raise self.error(exc.problem, key, exc.hint) from None
        if default is _MISSING:
            raise self.error(f"missing required key {key!r}")
        return default

    def written(self, key: str) -> str | None:
        """The text a file wrote for ``key``'s value when YAML read it as a number ('1.50', '1.5e+5'; the value
        reads as 1.5, 150000.0) or a date and time ('2026-11-01T00:00:00'); None when not known (a mapping from
        the API, or another value)."""
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
                     refuse_null=self.refuse_null, via=self.merged_via(key))

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
        via = self.merged_via(key)
        if not isinstance(value, (list, tuple)):  # a caller's Sequence, read once and guarded (h28b N1)
            try:
                value = list(value)
            except Exception as exc:
                said = unreadable_problem(exc, "a list")
                raise self.error(said, key, "Pass a plain list (its own __iter__ or __getitem__ raised).") from None
        for i, item in enumerate(value):
            path = f"{where}[{i}]"
            line = lines[i] if i < len(lines) else self.line_of(key)
            if not isinstance(item, Mapping):
                raise self.error_cls(
                    f"must be a mapping of keys to values, not {_kind(item)}", file=self.file, line=line, entry=path
                )
            out.append(Entry(item, file=self.file, path=path, error=self.error_cls, line=line,
                             refuse_null=self.refuse_null, via=via))
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
                                                                                self.written(key))
                             # model: ~ is YAML's null, said as such (h18b minor h)
                             or (self.null_hint(key, "a text", default is not _MISSING) if value is None else None))
        # a workbook cell holds 32,767 UTF-16 units of the escaped text: never cut without a word. A text of n code
        # points stores at most 8n/3 ('_x0' before '_' grows by 5), so one of up to MAX_TEXT_CHARS * 3 / 8 needs no count
        if len(value) * 8 > MAX_TEXT_CHARS * 3:
            stored = cell_units(value)
            if stored > MAX_TEXT_CHARS:
                why = [w for w, hit in (("a character beyond U+FFFF, such as an emoji, counts 2",
                                         any(ord(ch) > 0xFFFF for ch in value)),
                                        ("a literal '_xHHHH_' is stored as '_x005F_xHHHH_'",
                                         XSTRING_ESCAPE.search(value))) if hit]
                detail = f": {'; '.join(why)}" if why else ""
                said = (f"is {len(value):,} characters long" if stored == len(value) else
                        f"is {stored:,} characters long as the workbook stores it ({len(value):,} as written{detail})")
                raise self.error(f"{said}; a text is at most {MAX_TEXT_CHARS:,} characters, since the workbook "
                                 "holds it in one cell (at most 32,767)", key,
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
            if isinstance(value, AbstractSet):  # {'rtx-4090', 'l40s'} from the API: no name to judge (h27b M3)
                texts = sorted(clip_text(v) for v in value if isinstance(v, str))[:4]
                example = repr(texts) if texts and len(texts) == len(value) else "['name', 'other-name']"
                raise self.error(f"must be a name (text) or a list of names, not a {type(value).__name__} (a set has "
                                 "no order; planner reads lists)", key, f"Give a list, e.g. {example}.")
            if isinstance(value, Mapping):
                raise self.error(f"must be a list of names, not {_kind(value)}", key,
                                 f"Write the names in brackets, e.g. {key}: [a, b], or one per line after '- '.")
            if isinstance(value, Iterable):  # a generator, an iterator, a numpy array from the API: no name to judge
                raise self.error(f"must be a name (text) or a list of names, not a {clip_text(type(value).__name__)} "
                                 "(planner reads lists)", key,  # (h32b M3: it got guesses at a name)
                                 "Give a list of names, e.g. ['l4', 'l40s'] (an array's .tolist(), a generator's "
                                 "list(...)).")
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
        if type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"):
            return bool(value)  # numpy.bool_ from an API caller: a bool, as numpy integers are numbers (h16b 13g)
        if not isinstance(value, bool):
            if self.file is None:  # a Python caller: no YAML in the hint
                raise self.error(f"must be True or False, not {_kind(value)}", key, "Give a Python bool: True or False.")
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
        underflow = underflow_problem(value)  # '1.0e-400' reads as 0.0 (h17b #3)
        if underflow is not None:
            raise self.error(underflow, key, UNDERFLOW_HINT)
        _refuse_beyond(self, key, value, min, max)
        dotted = dotted_thousands(self.written(key), lambda n: f"{key}: {n}", whole=True, only="whole") \
            if isinstance(value, float) else None
        if dotted is not None:  # 'seq_len: 8.000': 8, or 8000 with a dot separating thousands (h17b #4)
            raise self.error(dotted[0], key, dotted[1])
        if isinstance(value, NotWhole):  # '2.9999999999999999': its float is 3.0, the number is not whole
            raise self.error(f"must be a whole number, not {clip_text(value.text)}, which has more digits than a float holds "
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
                             _outside_range_hint(value, min, max, whole=True) or _int_hint(key, value, min, max) or null
                             or _takes_hint(key, value, min, max, what, self.file))
        _check_range(self, key, value, min, max)
        return value

    def number(self, key: str, default: Any = _MISSING, *, min: float | None = None, max: float | None = None,
               min_exclusive: bool = False) -> Any:
        value = self.raw(key, default, "a number")
        if value is default and default is not _MISSING:
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            null = (self.null_hint(key, "a number", optional=default is not _MISSING)  # '~' or nothing: h16b 13b
                    if value is None else None)
            raise self.error(f"must be a number, not {_kind(value)}", key,
                             null or _outside_range_hint(value, min, max, whole=False) or _number_hint(key, value, max)
                             or _bool_note(value, self.file).strip() or None)
        underflow = underflow_problem(value)  # '1.0e-400', Decimal('1e-400'): 0.0, which was never written (h17b #3)
        if underflow is not None:
            raise self.error(underflow, key, UNDERFLOW_HINT)
        dotted = dotted_thousands(self.written(key), lambda n: f"{key}: {n}", whole=False, only="cents") \
            if isinstance(value, float) and (key == "usd" or key.endswith("_usd")) else None
        if dotted is not None:  # 'unit_price_usd: 1.500': $1.50, or $1,500 with a dot separating thousands
            raise self.error(dotted[0], key, dotted[1])
        if isinstance(value, int) and abs(value) > _FLOAT_MAX:  # a whole number no float can hold
            raise self.error(f"{_digits(value)} is more than any real value of this field", key)
        _refuse_beyond(self, key, value, None if min_exclusive else min, max)
        written = self.written(key) if isinstance(value, float) and math.isinf(value) else None
        if written and "inf" not in written.lower():  # a long decimal YAML read as inf, never written so (h18b #5)
            digits = sum(c.isdigit() for c in written)
            shown = written if len(written) <= 20 else f"{written[:4]}...{written[-3:]} ({digits:,} digits)"
            raise self.error(f"{shown} is beyond the largest number a float holds (about 1.8e+308)", key,
                             "Give the real value.")
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
            shown = self.written(key) or str(value)  # as the file writes it: '2026-11-01T00:00:00' (h17b #5b)
            raise self.error(f"must be a date written YYYY-MM-DD or YYYY-MM, not {shown!r} (a date and time)",
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
        if parsed is None and (why := impossible_date(value)) is not None:  # written as asked, no such day (h41b 11)
            raise self.error(f"{value!r} is no date: {why}", key, "Write the day it was quoted, read or measured.")
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


def _refuse_beyond(entry: Entry, key: str, value: Any, lo: float | None, hi: float | None) -> None:
    """Refuse a number beyond the largest float (planner.core.units.BeyondFloat: a Decimal('1E+999999999') or a
    Fraction(10**400, 3) from the API, judged before it is expanded; h27b N2, N3): by the field's range where it
    has one on that side, else as no real value of the field. Nothing for any other value.

    Raises:
        InputError: (``entry.error``) naming ``key`` and the range, with the number as given.
    """
    if not isinstance(value, BeyondFloat):
        return
    _check_range(entry, key, value, lo, hi)
    side = "less" if value < 0 else "more"
    raise entry.error(f"{value.text} is {side} than any real value of this field", key,
                      "Give the real value; a float holds at most about 1.8e+308.")


def _check_range(entry: Entry, key: str, value: float, lo: float | None, hi: float | None) -> None:
    """Refuse ``value`` (``key``'s number) outside ``lo`` to ``hi``, judged as given where that is exact (a Decimal,
    a Fraction or a file's text: 0.95000000000000000001 is above 0.95, though its float is 0.95; h27b M2) and shown
    so, else by its float (a 300-digit whole number shortened).

    Raises:
        InputError: (``entry.error``) 'must be at least/at most {bound}, not {value}', naming ``key``.
    """
    given = entry.data.get(key) if isinstance(value, float) and not isinstance(value, BeyondFloat) else None
    source = given if exact_given(given) is not None else entry.written(key) if given is not None else None
    side = outside_exactly(source, lo, hi)
    if side is not None:
        bound = lo if side == "below" else hi
        raise entry.error(f"must be at {'least' if side == 'below' else 'most'} {_num(bound)}, not "
                          f"{exact_text(source, bound)}", key)
    shown = _digits(value) if isinstance(value, int) else as_written(entry, key, value)  # a 300-digit number shortened
    if lo is not None and value < lo:
        raise entry.error(f"must be at least {_num(lo)}, not {shown}", key)
    if hi is not None and value > hi:
        raise entry.error(f"must be at most {_num(hi)}, not {shown}", key)


def said_key(key: str) -> str:
    """``key`` quoted as a message names a key from a file: in single quotes as written ('mi\\cro' shows one
    backslash, as the file holds it, not repr's two: h32b M2), a quote in it doubled as YAML writes it; a key
    holding a character a terminal would act on (a control, bidirectional or invisible one) as repr writes it,
    its escapes then being the only backslashes' reading ('micro\\tbatch' for a tab)."""
    if may_be_unsafe(key):
        return repr(key)
    if not key:
        return "'' (an empty key)"  # h34b m5
    return "'" + key.replace("'", "''") + "'"
