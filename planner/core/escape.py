"""One escaping layer per output medium, for every text that came from a file or the user.

A name, description, note, source or path that reaches a report or the terminal goes through the
function of the medium it is written to, at the writer (never earlier, so that each medium gets the
text whole):

==========  =================================  ==================================================
medium      function                           what it does
==========  =================================  ==================================================
CSV         :func:`csv_text`                   a quote ``'`` before a formula trigger (``=`` ``+``
                                               ``-`` ``@`` tab, CR) at the start of the cell and
                                               after any separator a spreadsheet may split at
                                               (``,`` ``;`` ``|`` tab, space, line breaks, the
                                               Arabic comma and semicolon; spaces
                                               after one skipped), so no part
                                               of the cell becomes a formula in any locale
Markdown    :func:`md_text`, :func:`md_fence`  HTML (``& < >``) as entities; Markdown syntax
                                               (links, emphasis, headings, tables, ``$`` math,
                                               ``:emoji:`` shortcodes) backslash-escaped; a code
                                               fence longer than any backtick run
terminal    :func:`terminal_text`              control characters (ESC, CR, ...), line and
                                               paragraph separators and bidirectional controls
                                               shown as escapes (``\\x1b``, ``\\u202e``)
XML, xlsx   :func:`xml_text`                   what the terminal escapes (control, bidirectional,
                                               noncharacters; a byte that was not UTF-8 as
                                               ``\\xff``) shown as the same visible escapes, line
                                               feeds and tabs kept: nothing XML 1.0 forbids is
                                               left, and nothing is dropped without a trace
JSON        :func:`json_text`                  every text with a lone surrogate (a byte that was
                                               not UTF-8, PEP 383) written as ``\\xff`` text, so
                                               strict parsers read the document
==========  =================================  ==================================================

Sources: OWASP, "CSV Injection" (owasp.org/www-community/attacks/CSV_Injection): cells starting with
``=``, ``+``, ``-``, ``@``, tab (0x09) or carriage return (0x0D) are read as formulas; prefix them
with a single quote, and mind the field separators, which a spreadsheet of another locale (``;``)
splits at, making the text after it a cell of its own. CommonMark 0.31, 2.4 "Backslash escapes" (any
ASCII punctuation character may be backslash-escaped) and 4.5 "Fenced code blocks" (the closing
fence is at least as long as the opening one). XML 1.0 (Fifth Edition), 2.2 Characters: ``Char ::=
#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]``.
"""

from __future__ import annotations

import re
from typing import Any

from planner.core.names import escape_unsafe

#: Characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection").
CSV_FORMULA_TRIGGERS = frozenset("=+-@\t\r")
#: Characters a spreadsheet may split a CSV line at (its locale's list separator, or a user's choice:
#: LibreOffice's CSV import offers tab, comma, semicolon, space and any other character), and line breaks.
#: Also the Arabic comma U+060C and semicolon U+061B, which Arabic and Persian locales use as list separators.
CSV_SEPARATORS = frozenset(",;|\t\r\n \u060c\u061b")

# a trigger at the start of the text or of a field after a separator (spaces and a '"' before it skipped)
_CSV_FIELD_TRIGGER = re.compile("(^|[,;|\t\r\n \u060c\u061b])([ \"]*)(?=[=+\\-@\t\r])")

# Markdown: HTML first (entities), then the ASCII punctuation that makes links, emphasis, code, tables,
# headings and line-start syntax (CommonMark 2.4: a backslash before any ASCII punctuation is literal)
_MD_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# and ``$``, GitHub's math delimiter (GitHub Docs, "Writing mathematical expressions": a ``\\$`` is a dollar
# sign, not math), so a name such as ``$\\color{red}x$`` is shown as typed
_MD_PUNCT = re.compile(r"([\\`*_{}\[\]()#!|~$])")
# what GitHub's autolink extension links in plain text (GFM 0.29, 6.9 "Autolinks (extension)": ``www.``,
# ``http://``, ``https://`` and e-mail addresses): the ``:`` of ``://``, the ``.`` after ``www`` and every
# ``@`` backslash-escaped, so a name shows the address as text and no renderer makes it a link
_MD_AUTOLINK = re.compile(r"(:(?=//)|(?<=www)\.|@)", re.IGNORECASE)
# an emoji shortcode (``:smile:``, GitHub's and markdown-it-emoji's ``:name:``): both colons
# backslash-escaped, as CommonMark allows for any ASCII punctuation
_MD_SHORTCODE = re.compile(r":([A-Za-z0-9_+\-]+):")

# what XML 1.0 forbids: the complement of its Char production (#x9 | #xA | #xD | [#x20-#xD7FF] |
# [#xE000-#xFFFD] | [#x10000-#x10FFFF]) over the code points Python has (U+0000-U+10FFFF), written
# as the forbidden ranges themselves: the negated class compiles to a table over all of Unicode
# (about 3 ms at import), this one in about 0.4 ms
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def csv_text(value: Any) -> Any:
    """A CSV text cell no spreadsheet reads as a formula: ``'`` before each formula trigger that starts
    the cell or a field after a separator (``a;=cmd`` -> ``a;'=cmd``, ``=1+1`` -> ``'=1+1``); anything
    but a str is returned as it is (numbers stay numbers).

    Only formulas are guarded: a text that a spreadsheet or pandas.read_csv converts to another type
    ('mar-1' to a date, 'nan' to NaN) is written as it is, since a prefix would change the text for
    every program that reads the CSV as data; docs/planning.md says so and points to the workbook,
    whose cells are typed. Catalog ids that would convert are refused at load
    (:func:`planner.catalog.schema.csv_converted`)."""
    if not isinstance(value, str):
        return value
    return _CSV_FIELD_TRIGGER.sub(lambda m: m.group(1) + m.group(2) + "'", value)


def md_text(value: Any) -> str:
    """``value`` as Markdown text that renders as itself: no HTML, no link, no emphasis, no heading or
    table syntax; control characters as escapes (:func:`terminal_text`); a line break as a space."""
    text = terminal_text(" ".join(str(value).splitlines()))
    text = _MD_PUNCT.sub(r"\\\1", text)
    text = _MD_AUTOLINK.sub(r"\\\1", text)
    text = _MD_SHORTCODE.sub(r"\\:\1\\:", text)
    return "".join(_MD_HTML.get(ch, ch) for ch in text)


def md_fence(text: str, info: str = "text") -> list[str]:
    """``text`` as a fenced code block (its lines), the fence longer than any run of backticks in it,
    so nothing inside can close it; control characters shown as escapes."""
    body = terminal_text(text, newlines=True)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, body, fence]


def terminal_text(value: Any, *, newlines: bool = False) -> str:
    """``value`` as text a terminal shows as it is: control characters (ESC, CR, BEL, ...), U+2028/9 and
    bidirectional controls written as visible escapes (``\\x1b``); with ``newlines``, line feeds and tabs
    kept (a multi-line text). :func:`planner.core.names.escape_unsafe`."""
    return escape_unsafe(str(value), newlines=newlines)


def xml_text(value: Any) -> str:
    """``value`` as a workbook cell shows it: control characters (but line feed and tab), bidirectional
    controls, noncharacters and lone surrogates written as the visible escapes the terminal shows
    (:func:`terminal_text` with ``newlines``: ``\\x1b``, ``\\u202e``, ``\\xff`` for a byte that was not
    UTF-8), so Excel shows no reordered text, and nothing XML 1.0 forbids is left (it would make a
    workbook Excel calls damaged)."""
    return _XML_FORBIDDEN.sub("", terminal_text(value, newlines=True))


#: A literal ``_x`` before hex digits and ``_`` in a cell's text: an ST_Xstring (ECMA-376 Part 1, 22.9.2.19) reader
#: decodes ``_xHHHH_`` as the character U+HHHH, so the workbook writes its underscore escaped, ``_x005F_``
#: (planner.report.cells.clean_text), and ``_x0041_`` (7 characters) is stored as ``_x005F_x0041_`` (13).
XSTRING_ESCAPE = re.compile(r"_x(?=[0-9A-Fa-f]+_)")


def cell_units(text: str) -> int:
    """The characters a workbook cell stores for ``text``, counted as Excel counts a cell's 32,767 (Microsoft,
    "Excel specifications and limits", "Total number of characters that a cell can contain"): in UTF-16 units
    (a character beyond U+FFFF, such as an emoji, is a surrogate pair: 2), of the text as the cell holds it
    (:func:`xml_text`, then each literal ``_xHHHH_`` escaped: :data:`XSTRING_ESCAPE`). 'quote ' + 20,000 emoji
    is 40,006; 4,500 x '_x0041_' is 58,500 (h16b #6)."""
    stored = XSTRING_ESCAPE.sub("_x005F_x", xml_text(text))
    return len(stored) + sum(1 for ch in stored if ord(ch) > 0xFFFF)


def json_text(document: Any, **options: Any) -> str:
    """``json.dumps(document, **options)`` with every text that holds a lone surrogate (a byte that was
    not UTF-8 in a path, held as U+DC80-U+DCFF by PEP 383) written as its visible escape (``\\xff``, as
    :func:`terminal_text` writes it; other characters as json.dumps writes them). json.dumps would write
    ``"\\udcff"``, which parsers that demand valid Unicode refuse (RFC 8259, 8.2 "Unicode Characters").
    Keys and values, at any depth."""
    import json

    given = options.get("default")
    if given is not None:  # what it makes of an object (str of a Path) is cleaned too
        options["default"] = lambda obj: _json_clean(given(obj))
    return json.dumps(_json_clean(document), **options)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_clean(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub(lambda m: escape_unsafe(m.group()), value)
    if isinstance(value, dict):
        return {_json_clean(k): _json_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_clean(v) for v in value]
    return value


__all__ = ["CSV_FORMULA_TRIGGERS", "CSV_SEPARATORS", "csv_text", "json_text", "md_fence", "md_text", "terminal_text",
           "xml_text"]
