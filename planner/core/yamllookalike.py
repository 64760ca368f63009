"""Characters that look like YAML's structure but are not: a no-break space after 'key:', a full-width colon,
an en dash as a list bullet, an ideographic space as indentation. What a copy from a web page, a chat or a word
processor gives; the file looks right in an editor, and YAML reads the line as one plain text, so PyYAML's error
(when there is one) names a later line, or the planner later names a key the user never wrote.

YAML 1.1 (yaml.org/spec/1.1), section 4.1.1 "Indicator Characters" and section 4.2.2 "Indentation Spaces": only
':' followed by a space, tab or line break separates a key from its value (in a flow collection ',' '}' ']'
too); only '-' followed by one of them starts a list entry; indentation is made of spaces (U+0020) alone. Any
other character is part of a plain text.

:func:`lookalike_slip` says which character and where, as (problem, line, hint) for
:class:`planner.core.yamlrules.YamlProblem`. It reads the document's tokens with PyYAML's own scanner, so it
looks at plain (unquoted) texts only: a quoted text, a block text ('|', '>') and a comment are never checked.
The characters, each named by a published table:

- spaces: Unicode general category Zs ("Space_Separator", UAX #44 / UnicodeData.txt) less U+0020 SPACE:
  U+00A0 NO-BREAK SPACE, U+1680, U+2000-U+200A, U+202F NARROW NO-BREAK SPACE, U+205F, U+3000 IDEOGRAPHIC SPACE;
- colons and dashes: the characters whose UTS #39 confusables.txt prototype is ':' or '-'
  (:data:`planner.core.lookalike.PROTOTYPES`), those whose NFKC form is ':' or '-' (U+FF1A FULLWIDTH COLON,
  U+FE55 SMALL COLON, U+FF0D FULLWIDTH HYPHEN-MINUS ...), and for '-' the dashes
  :data:`planner.core.names.DASH_LOOKALIKES` already folds in names (U+2013 EN DASH, U+2014 EM DASH, U+2212
  MINUS SIGN ...).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import yaml


from planner.core.names import char_name, clip_text

__all__ = ["SPACES", "COLONS", "DASHES", "looking_like", "lookalike_slip"]


def looking_like(ascii_char: str) -> str:
    """Every non-ASCII character of the Basic Multilingual Plane drawn like ``ascii_char`` (confusables.txt
    prototype, or NFKC form), in code point order: how :data:`COLONS` and :data:`DASHES` were derived (the test
    suite derives them again; computing them at each start would cost ~30 ms)."""
    from planner.core.lookalike import PROTOTYPES

    found = {c for c, p in PROTOTYPES.items() if p == ascii_char}
    found |= {chr(i) for i in range(0x80, 0x10000) if unicodedata.normalize("NFKC", chr(i)) == ascii_char}
    return "".join(sorted(found))


#: Space_Separator (Zs) characters other than U+0020 (UnicodeData.txt, general category Zs):
#: ``[c for c in BMP if unicodedata.category(c) == "Zs" and c != " "]``.
SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
#: Characters drawn like ':': ``looking_like(":")``.
COLONS = ("\u02d0\u02f8\u0589\u05c3\u0703\u0704\u0903\u0a83\u16ec\u1803\u1809\u205a\u2236\ua4fd\ua789\ufe13"
          "\ufe55\uff1a")
#: Characters drawn like '-': ``looking_like("-")`` and :data:`planner.core.names.DASH_LOOKALIKES`.
DASHES = ("\u02d7\u058a\u06d4\u1806\u2010\u2011\u2012\u2013\u2014\u2043\u2212\u2796\u2cba\u2cbb\ufe58\ufe63"
          "\uff0d")

_S, _C, _D = (re.escape(x) for x in (SPACES, COLONS, DASHES))
#: A key glued to a lookalike: 'model:' + a Unicode space, or 'task' + a colon lookalike (then any blanks).
_KEY = re.compile(rf"([A-Za-z_][A-Za-z0-9_.-]*)(?::([{_S}])|([{_C}]))[ {_S}]*")
#: Where a lookalike may stand for structure, in the raw text: cheap to search, so that a file without one
#: (every shipped catalog file) is not scanned token by token. A key (at a line's start, after '- ', or after
#: '{' or ',' in a flow collection) glued to a lookalike; a line indented with a Unicode space; a line whose
#: first character is a dash lookalike followed by a blank.
_WHERE = re.compile(rf"(?m)(?:^[ ]*(?:-[ ]+)*|[{{,][ ]*)[A-Za-z_][A-Za-z0-9_.-]*(?::[{_S}]|[{_C}])"
                    rf"|^[ ]*(?:-[ ]+)*[{_S}]|^[ ]*[{_D}][ {_S}]")
_ANY = re.compile(f"[{_S}{_C}{_D}]")


def _shown(text: str) -> str:
    """``text`` with the characters an editor shows as blank or not at all written as escapes ('\\xa0')."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def _position(text: str, index: int) -> tuple[int, int]:
    """The 1-based (line, column) of ``text[index]`` as an editor counts them (lines ended by LF)."""
    start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - start + 1


def _line_rest(text: str, index: int) -> str:
    """The rest of the line from ``index``, without its line end."""
    end = text.find("\n", index)
    return text[index:end if end >= 0 else len(text)].rstrip("\r")


def _problem(text: str, seg: str, at: int, line_start: bool, value: bool) -> tuple[str, int, str] | None:
    """The slip in one line's part ``seg`` of a plain text, which starts at ``text[at]``; ``line_start``: only
    spaces stand before it on its line; ``value``: the text is a key's value (which may start with any
    character: 'key: \u00a0x' is a text)."""
    if seg[:1] and seg[0] in SPACES and (line_start or not value):
        line, column = _position(text, at)
        ch = seg[0]
        word = re.match(r"(.*?)[ ]*(?::(?=[ \t]|$)|$)", seg).group(1)  # up to its key's ':'

        if line_start:
            return (f"line {line} is indented with {char_name(ch)} at column {column}, not with spaces; YAML counts only "
                    f"spaces as indentation, so it reads {clip_text(repr(word))} as the text there", line,
                    "Indent with plain spaces (U+0020) only, as the lines around it are.")
        return (f"{char_name(ch)} at line {line} column {column} stands where YAML needs a plain space, so it reads "
                f"{clip_text(repr(word))} as a text", line, "Write a plain space (U+0020) there.")
    m = _KEY.match(seg)
    if m:
        key, space, colon = m.group(1), m.group(2), m.group(3)
        ch = space or colon
        line, column = _position(text, at + len(key) + (1 if space else 0))
        rest = seg[m.end():].rstrip(" \r" + SPACES)
        written = f"{key}:{space}" if space else f"{key}{colon}"
        said = f"{key + ':'!r} is followed by {char_name(ch)}" if space else f"{key!r} is followed by {char_name(ch)}"
        what = "not a space" if space else "not ':'"
        hint = (f"Write {key}: {clip_text(_shown(rest))}." if rest else
                f"Write {key}: with nothing after ':' on this line but plain spaces.")
        return (f"{said} at line {line} column {column}, {what}, so YAML reads {clip_text(repr(written + rest))} as "
                "one text, not as a key and its value", line, hint)
    if line_start and seg[:1] and seg[0] in DASHES and seg[1:2] in tuple(" " + SPACES):
        line, column = _position(text, at)
        rest = _line_rest(text, at + 1).lstrip(" " + SPACES).rstrip(" " + SPACES)
        return (f"line {line} starts with {char_name(seg[0])} at column {column}, not '-', so YAML does not read a "
                "list entry there", line, f"Write - {clip_text(_shown(rest))}.")
    return None


def _token_slip(text: str, token: Any, value: bool) -> tuple[str, int, str] | None:
    """The slip in a plain text token, in its first line's part and in each line it runs on to (a key line
    that YAML took as the next line of a text); ``value`` as for :func:`_problem`."""
    start, end = token.start_mark.index, token.end_mark.index
    pos = start
    first = True
    for seg in text[start:end].split("\n"):
        if not first:
            indent = len(seg) - len(seg.lstrip(" "))
            seg, pos = seg[indent:], pos + indent
        line_start = not text[text.rfind("\n", 0, pos) + 1:pos].strip(" ")
        found = _problem(text, seg.rstrip("\r"), pos, line_start, value and first)
        if found is not None:
            return found
        pos += len(seg) + 1
        first = False
    return None


def _may_slip(text: str, near_error: bool) -> bool:
    """Whether ``text`` may hold a slip :func:`lookalike_slip` looks for: with ``near_error``, whether it holds
    any lookalike (:data:`_ANY`); else whether :data:`_WHERE` matches. Cheap on the texts that hold none: an
    ASCII text holds no lookalike (every character of :data:`SPACES`, :data:`COLONS` and :data:`DASHES` is beyond
    ASCII), and each of :data:`_WHERE`'s matches lies on one line and holds a lookalike, so only the lines that
    hold one are searched (a search of the whole text tried every position: ~10 ms for a catalog file)."""
    if text.isascii():
        return False
    if near_error:
        return _ANY.search(text) is not None
    searched = -1  # the end of the last line searched
    for m in _ANY.finditer(text):
        if m.start() <= searched:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        searched = len(text) if end < 0 else end
        if _WHERE.search(text, start, searched):  # '^' still matches only at a line's start (after '\n')
            return True
    return False


def lookalike_slip(text: str, error: yaml.MarkedYAMLError | None = None) -> tuple[str, int, str] | None:
    """The first lookalike of YAML structure in ``text`` (module docstring), as (problem, line, hint), or None.

    Without ``error`` (before parsing) only the texts YAML reads as keys, list items or the whole document are
    looked at (a value may be any text: ``notes: 1:\\u00a02`` is not refused). With ``error`` (YAML's syntax
    error for the text) a value on the lines of the error (and the line before) is looked at too, and nothing
    after them.

    Raises: nothing (a text the scanner cannot read is looked at up to where it stops).
    """
    if not _may_slip(text, error is not None):
        return None
    marks = [m for m in ((error.context_mark, error.problem_mark) if error is not None else ()) if m is not None]
    low = min(m.line for m in marks) - 1 if marks else None
    high = max(m.line for m in marks) if marks else None
    loader = yaml.SafeLoader(text)
    tokens: list[Any] = []
    try:
        while True:
            token = loader.get_token()
            if token is None or isinstance(token, yaml.StreamEndToken):
                break
            tokens.append(token)
    except yaml.YAMLError:
        tokens.extend(loader.tokens)  # those scanned before the error, not yet handed on
    finally:
        loader.dispose()
    before: Any = None
    for token in tokens:
        if isinstance(token, (yaml.AnchorToken, yaml.TagToken)):
            continue  # '&a' and '!!str' stand between a key's ':' and its value
        value = isinstance(before, yaml.ValueToken)
        before = token
        if not isinstance(token, yaml.ScalarToken) or not token.plain:
            continue
        if high is not None and token.start_mark.line > high:
            break
        near = low is not None and token.end_mark.line >= low
        if value and not near:
            continue
        found = _token_slip(text, token, value)
        if found is not None:
            return found
    return None
