"""An output folder's path as written, checked for what would name a folder other than the one meant.

A path reaches planner as written: a shell expands ``~``, ``$HOME``, ``$(pwd)`` and backticks only when they are
not quoted, and Python expands none of them (``os.path.expanduser``, ``os.path.expandvars`` exist for that), so an
unexpanded one becomes part of a folder's name. A folder name that begins or ends with a blank, or holds an
invisible or control character, looks like another name in every listing (:func:`planner.core.names.unsafe_char`).
The command line (``--out``) and the API (``out=``) refuse the same paths, each in its own words.
"""

from __future__ import annotations

import os
import re

from pathlib import Path

from planner.core.atomic import STAGING_PREFIX, process_umask
from planner.core.errors import DestinationError, OutputError
from planner.core.names import (char_name, escape_unsafe, is_blank_looking, line_path, path_word, strip_blank_looking,
                                 unsafe_char)

#: A shell substitution left unexpanded inside a path: '$NAME', '${NAME}', '$(command)' or a backtick.
UNEXPANDED = re.compile(r"\$\{?[A-Za-z_][A-Za-z_0-9]*\}?|\$\(|`")


def _utf8_pieces(text: str) -> list[tuple[str, str]]:
    """``text`` as (character, the text it came from) pairs, each run of bytes that were not decoded (Python's
    surrogate escape, '\udcd1\udc80') read as UTF-8 where it is: in an ASCII locale without UTF-8 mode
    (``LC_ALL=C PYTHONUTF8=0``) every byte over 0x7F arrives escaped, so Cyrillic 'р' (d1 80) arrives as two
    escapes; a UTF-8 locale reads it as one letter, and so does this (h23a m1). A byte that starts no valid UTF-8
    sequence (RFC 3629: no overlong form, no surrogate, nothing over U+10FFFF) stays its own escape."""
    pieces: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if not "\udc80" <= c <= "\udcff":
            pieces.append((c, c))
            i += 1
            continue
        lead = ord(c) - 0xDC00
        size = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 1
        run = text[i:i + size]
        decoded = None
        if size > 1 and len(run) == size and all("\udc80" <= r <= "\udcff" for r in run):
            try:
                decoded = bytes(ord(r) - 0xDC00 for r in run).decode("utf-8")
            except UnicodeDecodeError:
                decoded = None
        if decoded is not None:
            pieces.append((decoded, run))
            i += size
        else:
            pieces.append((c, c))
            i += 1
    return pieces


def unsafe_path_char(text: str) -> tuple[str, str] | None:
    """(the text to take out, its name) for the first character of ``text`` that names refuse
    (planner.core.names.unsafe_char), else for the first byte 0x80-0x9F that was not UTF-8 (Python's surrogate
    escape, '\udc9b'): the C1 controls of every ISO-8859 locale, where a listing or an 8-bit terminal takes 0x9B
    for an escape sequence (h21a m4); None when there is neither. Bytes that arrived escaped but form valid
    UTF-8 (an ASCII locale without UTF-8 mode: 'р' as d1 80) are read as the character they encode, as a UTF-8
    locale reads them (:func:`_utf8_pieces`), so the text to take out is a whole character's bytes, never part
    of one (h23a m1). The byte is named 'the byte \x9b (U+009B in Latin-1)'."""
    pieces = _utf8_pieces(text)
    bad = unsafe_char("".join(ch for ch, _ in pieces))
    if bad is not None:
        return next(src for ch, src in pieces if ch == bad), char_name(bad)
    byte = next((c for c, _ in pieces if "\udc80" <= c <= "\udc9f"), None)
    if byte is None:
        return None
    code = ord(byte) - 0xDC00
    return byte, f"the byte \\x{code:02x} (U+{code:04X} in Latin-1, a control character)"


def without_piece(text: str, taken: str) -> str:
    """``text`` less each whole character (or lone byte) :func:`unsafe_path_char` named by ``taken``: a byte
    escape that is part of another character's UTF-8 stays, so the path offered is never cut inside a character."""
    return "".join(src for _, src in _utf8_pieces(text) if src != taken)


def without_unsafe(text: str) -> str:
    """``text`` less every character (or lone byte) :func:`unsafe_path_char` names, not only the first: a path
    offered in a hint is never one refused again (h25a m3: 'è®¡å\x88\x92' holds two C1 controls)."""
    for _ in range(len(text) + 1):
        found = unsafe_path_char(text)
        if found is None:
            break
        text = without_piece(text, found[0])
    return text


def utf8_reading(text: str) -> str | None:
    """What ``text`` (a path as this run's file-system encoding decoded its bytes) reads as in UTF-8, where that
    is another text that nothing refuses and the file-system encoding is not UTF-8 (a Latin-1 locale reads the
    bytes of '计划' as 'è®¡å\x88\x92', which holds C1 controls): then a UTF-8 locale is the remedy (h25a m3);
    None otherwise."""
    from planner.core.manifest import fs_encoding

    if fs_encoding() == "utf-8":
        return None
    try:
        utf = os.fsencode(text).decode("utf-8")
    except (UnicodeError, ValueError):
        return None
    return utf if utf != text and unsafe_path_char(utf) is None else None


def out_path_problem(text: str) -> tuple[str, str | None] | None:
    """(problem, the path as it may have been meant) for an output path ``text`` that would name another folder
    than the one meant, or None: an unexpanded substitution ('$HOME/r', 'x/$(pwd)'), an invisible or control
    character (a tab, a line feed, a zero-width space), a folder name that begins or ends with a blank-looking
    character (' o', 'a /b', 'o' + U+2800 BRAILLE PATTERN BLANK: the names' rule, planner.core.names.is_blank_looking),
    or a character with no glyph of its own (U+1D159, private use: planner.core.lookalike.no_glyph_char), a
    URL or a Windows path (:func:`url_problem`: then no path meant, None), a '..' right after a folder that does not
    exist (:func:`dotdot_problem`).
    A leading '~' is the caller's to say (the API and the command line say it differently)."""
    m = UNEXPANDED.search(text)
    if m is not None:
        return (f"holds {m.group()!r}, which was not expanded (Python expands no '$' or '`'), so it would be part of "
                "a folder's name", text)
    found = unsafe_path_char(text)
    if found is not None:
        return (f"holds {found[1]}, which no listing shows, so the folder's name would look like another",
                escape_unsafe(without_unsafe(text)))
    parts = re.split(r"[/\\]" if os.sep == "\\" else "/", text)
    edged = next((p for p in parts if p and (is_blank_looking(p[0]) or is_blank_looking(p[-1]))), None)
    if edged is not None:
        ch = edged[0] if is_blank_looking(edged[0]) else edged[-1]
        where = "begins" if is_blank_looking(edged[0]) else "ends"
        shown = "a blank" if ch == " " else f"{char_name(ch)}, drawn as blank space,"
        return (f"has the folder name {escape_unsafe(repr(edged))}, which {where} with {shown} that no listing shows",
                "/".join(strip_blank_looking(p) for p in parts))
    from planner.core.lookalike import no_glyph_char

    ch = no_glyph_char(text)
    if ch is not None:
        return (f"holds {char_name(ch)}, a character with no glyph of its own, so the folder's name would look like "
                "another", text.replace(ch, ""))
    return (separator_lookalike_problem(text) or url_problem(text) or shell_leftover_problem(text)
            or dotdot_problem(text) or descriptor_problem(text))


def separator_lookalike_problem(text: str) -> tuple[str, str | None] | None:
    """(problem, the path as it may have been meant) for an output path holding, inside a folder's name, a character
    drawn as '/' (U+2215 DIVISION SLASH, U+2044 FRACTION SLASH, U+FF0F FULLWIDTH SOLIDUS: a symbol or punctuation
    whose NFKC form or UTS #39 prototype is '/'; letters such as Katakana U+30CE are names' own) or as a blank
    (U+00A0 NO-BREAK SPACE, U+2800 BRAILLE PATTERN BLANK: planner.core.names.is_blank_looking), or None: the
    "Wrote" line and every hint would show 'o∕x' as a folder x inside o, and 'o⠀x' as 'o x' (h41b 21). The path
    meant has '/' and ' ' in their place."""
    import unicodedata

    from planner.core.lookalike import PROTOTYPES

    for ch in text:
        if ch.isascii():
            continue
        kind = unicodedata.category(ch)[0]
        slash = kind in "SP" and "/" in (unicodedata.normalize("NFKC", ch), PROTOTYPES.get(ch))
        if slash or (kind != "L" and is_blank_looking(ch)):
            drawn = "'/'" if slash else "a blank"
            meant = "".join("/" if c == ch and slash else " " if c == ch else c for c in text)
            return (f"holds {char_name(ch)}, drawn as {drawn}, so the folder's name would look like another path",
                    meant)
    return None


#: A path that names one of this process's file descriptors (Linux: /dev/fd is a link to /proc/self/fd; proc(5)).
_DESCRIPTOR = re.compile(r"/(?:dev/(?:fd(?:/|$)|std(?:in|out|err)(?:/|$))|proc/(?:self|thread-self|\d+)/fd(?:/|$))")


def descriptor_problem(text: str) -> tuple[str, str | None] | None:
    """(problem, the folder meant) for an output path through one of the process's file descriptors ('/dev/fd/3',
    '/proc/self/fd/3/x', '/dev/stdout'), or None: the reports would land where the descriptor points, but every line
    and hint (the "Wrote" line, import-skypilot's ``--catalog`` hint) would name a descriptor of a process that is
    gone once planner exits (h38a 12). The path meant is where it points now (links resolved), where that is a
    folder."""
    try:
        given = os.path.abspath(text)
    except (OSError, ValueError):
        return None
    if _DESCRIPTOR.match(given) is None:
        return None
    try:
        real = os.path.realpath(given)
        meant = real if _DESCRIPTOR.match(real) is None and os.path.isdir(os.path.dirname(real) or "/") else None
    except (OSError, ValueError):
        meant = None
    return ("names a file descriptor of a process, which no later command can use: the lines and hints would "
            "name a path that is gone once planner exits", meant)


#: A shell's brace expansion ('{a,b}', 'x{1..3}'), which bash makes into several words unless it is quoted.
_BRACES = re.compile(r"\{[^{}/]*(?:,|\.\.)[^{}/]*\}")
#: Quotation marks a folder's name should not begin or end with: every character of Unicode's Quotation_Mark
#: property (PropList.txt, Unicode 15.1): ASCII's, the curly and angle ones word processors and chat clients put in
#: place of them, and the full-width and corner brackets a CJK input method types for them (h33a N3).
_QUOTES = ("\"'\u00ab\u00bb\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2039\u203a\u2e42\u300c\u300d\u300e"
           "\u300f\u301d\u301e\u301f\ufe41\ufe42\ufe43\ufe44\uff02\uff07\uff62\uff63")
#: A cmd.exe variable ('%USERPROFILE%'), which no POSIX shell or Python expands.
_CMD_VARIABLE = re.compile(r"%[A-Za-z_][A-Za-z0-9_()]*%")


def shell_leftover_problem(text: str) -> tuple[str, str | None] | None:
    """(problem, the path meant) for an output path that a shell would have turned into another one had it been
    written where the user thought, or None (h29a m3). A path that already exists is the user's own and passes.

    - a cmd.exe variable ('%USERPROFILE%\\r'): nothing here expands it (no path meant);
    - a Windows drive with no separator after it ('D:', 'C:reports': a drive-relative path; no path meant);
    - a folder named '~' after a folder name ('reports/~'): a shell expands '~' only at a word's start, and a
      folder named '~' is one a later ``rm -r ~`` mistakes for the home folder (no path meant; './~' is how
      such a folder is named on purpose);
    - a brace expansion ('{a,b}', 'x{1..3}': quoted, so the shell made no words of it; no path meant);
    - quotes around the whole path ('"r"', as a config file or a second quoting passes it; meant: 'r'), a lone or
      curly quotation mark at either end ('"r', '\u201cr\u201d', any of Unicode's Quotation_Mark characters), bash's
      $'...' quoting, and any of these around a folder's name inside the path ('x/"a"/b', "$'a'/b"; meant: the path
      with those quotes taken away);
    - a '*', '?' or '[' (a pattern the shell left as it was because it matched nothing; no path meant);
    - a first name beginning with '-' ('-rf'): every later command reads it as options (meant: './-rf')."""
    if not text or os.path.lexists(text):
        return None
    m = _CMD_VARIABLE.search(text)
    if m is not None:
        return (f"holds {escape_unsafe(repr(m.group()))}, a cmd.exe variable that nothing here expands, so it would "
                "be part of a folder's name", None)
    if re.match(r"[A-Za-z]:(?![\\/])", text):
        first = text.split("/")[0]
        return (f"looks like a Windows drive-relative path, but planner takes a POSIX path here (under WSL, drive "
                f"{text[0].upper()}: is /mnt/{text[0].lower()}): it would make a folder {escape_unsafe(repr(first))} "
                "in the current folder", None)
    parts = text.split("/")
    if any(p == "~" and parts[i - 1] != "." for i, p in enumerate(parts) if i):  # './~' names one on purpose
        return ("has a folder named '~' after the first (a shell expands '~' only at the start of a word), a folder "
                "that a later 'rm -r ~' would take for the home folder", None)
    brace = _BRACES.search(text)
    if brace is not None:
        return (f"holds {escape_unsafe(repr(brace.group()))}, a brace expansion the shell left as written (it was "
                "quoted), so it would be part of a folder's name", None)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        kind = "double" if text[0] == '"' else "single"
        word = shell_unquoted(text)  # "'a'/'b'" is 'a/b', not "a'/'b" (h35a)
        return (f"is wrapped in {kind} quotes, which a config file or a second quoting left in, so they would be part "
                "of the folder's name", word if word is not None and word.strip("/") else text[1:-1])
    names = [p for p in parts if p]
    word = shell_unquoted(text) if "$'" in text else None  # "$'a'$'b'": what bash reads from it (h35a m2)
    # "$'\\x{41}'", "$'\\400'": bash reads no one byte or character there, so no path meant (h37a 1)
    meant = word if word is not None else None if "$'" in text else _unquoted_path(parts)
    meant = meant if meant is not None and meant.strip("/") and meant != text else None
    if text.startswith("$") and text[1:2] in _QUOTES:  # bash's $'...' quoting, left as written
        return ("is written in bash's $'...' quoting, which was left as written, so the '$' and the quotes would be "
                "part of the folder's name", meant)
    if text[0] in _QUOTES or text[-1] in _QUOTES:  # a lone quote, or curly ones a word processor made (h32a m3)
        return (f"{'begins' if text[0] in _QUOTES else 'ends'} with a quotation mark, which a config file, a word "
                "processor or an unclosed quoting left in, so it would be part of the folder's name", meant)
    quoted = next((p for p in names if p[0] in _QUOTES or p[-1] in _QUOTES or (p[0] == "$" and p[1:2] in _QUOTES)),
                  None)
    if quoted is not None:  # 'x/"a"/b', "$'a'/b": a quoting left in a folder's name inside the path (h33a N3)
        return (f"has a folder {escape_unsafe(repr(quoted))} on its path that begins or ends with a quotation mark, "
                "which a config file, a word processor or an unclosed quoting left in, so it would be part of that "
                "folder's name", meant)
    glob = next((ch for ch in "*?[" if ch in text), None)
    if glob is not None:
        return (f"holds {glob!r}, a shell pattern that matched no file and was left as written, so it would be part "
                "of a folder's name", None)
    if text.startswith("-"):
        return ("begins with '-', so every command given the folder later would read its name as options",
                "./" + text)
    return None


#: bash's backslash escapes inside $'...' (bash(1), QUOTING) that stand for one character each.
_ANSI_C = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
           "\\": "\\", "'": "'", '"': '"', "?": "?"}
#: Characters that end or change an unquoted shell word: with one of them, the text is no single plain word.
_SHELL_SPECIAL = frozenset(" \t\n;&|<>()`$*?[{}#!")


def shell_unquoted(text: str) -> str | None:
    """The one word bash reads from ``text`` where ``text`` holds shell quoting that was passed on as written
    ("$'a'$'b'" -> 'ab', "'a'/'b'" -> 'a/b', '"x y"/r' -> 'x y/r', "$'a\\tb'" -> 'a<TAB>b'), or None: no quoting in it,
    an unclosed quote, or anything that would make it more or other than one plain word (an unquoted blank, '$'
    substitution, '*', ';': the meaning cannot be told). Source: bash(1), QUOTING (single quotes, double quotes,
    ANSI-C quoting $'...': \\a \\b \\e \\f \\n \\r \\t \\v \\\\ \\' \\" \\? \\cX, \\nnn and \\xHH
    bytes, \\uHHHH and \\UHHHHHHHH characters). The word is assembled as bytes, as bash does, then read as UTF-8:
    "$'caf\\303\\251'" is 'café' (h37a 1); a byte that is no UTF-8 stays as its surrogate escape ('\\udce9'), as
    Python gives such a byte of a command line. None also for what bash reads otherwise than one byte or character
    ('\\x{41}', an octal escape above \\377, a \\u surrogate, a NUL, at which bash ends the word)."""
    out = bytearray()
    i, quoted = 0, False
    while i < len(text):
        c = text[i]
        if c == "$" and text[i + 1:i + 2] == "'":
            part = _closed(text, i + 2, "'", _ansi_c_step)
        elif c == "'":
            end = text.find("'", i + 1)
            part = None if end < 0 else (_bytes_of(text[i + 1:end]), end + 1)
        elif c == '"':
            part = _closed(text, i + 1, '"', _double_step)
        elif c == "\\" and i + 1 < len(text):
            part = (_bytes_of(text[i + 1]), i + 2)
        elif c in _SHELL_SPECIAL:
            return None
        else:
            piece = _bytes_of(c)
            if piece is None:
                return None
            out += piece
            i += 1
            continue
        if part is None or part[0] is None:
            return None
        out += part[0]
        i, quoted = part[1], True
    if not quoted or b"\0" in out:
        return None
    return out.decode("utf-8", "surrogateescape")


def _bytes_of(text: str) -> bytes | None:
    """``text`` as the bytes it stands for on a command line (UTF-8; the surrogate escape of a byte that is not
    UTF-8 as that byte), or None where it holds another lone surrogate."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return None


def _closed(text: str, j: int, close: str, step) -> tuple[bytes, int] | None:
    """(the bytes of a quoted part of ``text`` from ``j`` to its closing ``close``, the index after it), each
    read by ``step`` (text, index -> (bytes or characters, next index), or None: not one word), or None when
    unclosed."""
    got = bytearray()
    while j < len(text) and text[j] != close:
        one = step(text, j)
        if one is None or one[0] is None:
            return None
        piece = one[0] if isinstance(one[0], bytes) else _bytes_of(one[0])
        if piece is None:
            return None
        got += piece
        j = one[1]
    return None if j >= len(text) else (bytes(got), j + 1)


def _ansi_c_step(text: str, j: int) -> tuple[str | bytes, int] | None:
    """One character or byte (or escape) inside bash's $'...' at ``j``: \\nnn and \\xHH give a byte, \\u and \\U
    a character, \\cX the control character X & 0x1f ('?': DEL; bash's TOCTRL, ``\\c\\\\`` reads both
    backslashes); None where bash reads otherwise than one byte or character ('\\x{41}', '\\400', '\\uD800')."""
    if text[j] != "\\" or j + 1 >= len(text):
        return text[j], j + 1
    e = text[j + 1]
    if e in _ANSI_C:
        return _ANSI_C[e], j + 2
    if e == "c":
        if j + 2 >= len(text) or text[j + 2] == "'":
            return None  # '\\c' at the end: bash's reading is not one character
        x = text[j + 2]
        step = 4 if x == "\\" and text[j + 3:j + 4] == "\\" else 3
        if ord(x) > 0x7F:
            return None
        return ("\x7f" if x == "?" else chr(ord(x.upper()) & 0x1F)), j + step
    if e == "x" and text[j + 2:j + 3] == "{":
        return None  # bash 5.2's \\x{HH...}: not read here
    m = (re.match(r"[0-7]{1,3}", text[j + 1:]) if e in "01234567" else
         re.match(r"[0-9A-Fa-f]{1,%d}" % {"x": 2, "u": 4, "U": 8}[e], text[j + 2:]) if e in "xuU" else None)
    if m is None:  # bash keeps an unknown escape as written
        return text[j:j + 2], j + 2
    code = int(m.group(), 8 if e in "01234567" else 16)
    end = j + 1 + len(m.group()) + (e in "xuU")
    if e not in "uU":  # a byte (bash(1): "the eight-bit character whose value is ...")
        return (None if code > 0xFF else bytes([code])), end
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code), end


def _double_step(text: str, j: int) -> tuple[str, int] | None:
    """One character (or escape) inside double quotes at ``j``; None for a '$' or '`' bash would substitute."""
    if text[j] == "\\" and text[j + 1:j + 2] in ('"', "\\", "$", "`"):
        return text[j + 1], j + 2
    if text[j] in "$`":
        return None
    return text[j], j + 1


def _unquoted(name: str) -> str:
    """A folder's ``name`` with the quoting a shell or an editor left in it taken off: a leading '$' of bash's
    $'...', an opening quotation mark and the last one after it ('"x".yaml' -> 'x.yaml', h34a m3), and quotation
    marks at its end ('x"' -> 'x')."""
    if name[:1] == "$" and name[1:2] in _QUOTES:
        name = name[1:]
    if name[:1] in _QUOTES and name:
        name = name[1:]
        last = max((name.rfind(q) for q in _QUOTES), default=-1)
        if last >= 0:
            name = name[:last] + name[last + 1:]
    return name.rstrip(_QUOTES)


def _unquoted_path(parts: list[str]) -> str:
    """The path of ``parts`` (split at '/') with :func:`_unquoted` of each folder; a folder that was quotes alone
    ('r/\ufe44/s') left out rather than left empty ('r/s', not 'r//s')."""
    out = [_unquoted(p) if p else p for p in parts]
    return "/".join(p for i, p in enumerate(out) if p or not parts[i] or i in (0, len(parts) - 1))


#: A URL's scheme and '://' (RFC 3986 section 3.1: a letter, then letters, digits, '+', '-' or '.'), at the start.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def url_problem(text: str) -> tuple[str, str | None] | None:
    """(problem, the path meant) for a URL or a Windows path given as an output path: a path is taken as written,
    so each would make a folder of another name in the current folder. A ``file:`` URL ('file:///tmp/x',
    'file:/tmp/x', h27a m2): the path meant is the URL's path, percent-escapes decoded (RFC 8089). Any other
    ``scheme://`` (http, https, s3, gs, ftp: h28a m1), a Windows drive path ('C:\\reports', 'C:/reports') or
    a network path ('\\\\srv\\share'): planner writes only local files, named by POSIX paths, so no path is
    meant (None: the caller's hint asks for a local one). None for any other text."""
    first = text.split("/")[0]
    if re.match(r"[A-Za-z]:[\\/]", text) or text.startswith("\\\\"):
        what = "a Windows network path" if text.startswith("\\\\") else "a Windows path"
        return (f"looks like {what}, but planner takes a POSIX path here (folders joined by '/'; a '\\' is part of a "
                f"name; under WSL, drive C: is /mnt/c): it would make a folder {escape_unsafe(repr(first))} in the "
                "current folder", None)
    scheme = _SCHEME.match(text)
    if scheme is not None and scheme.group(1).lower() != "file":
        return (f"is a URL ({scheme.group(1)}://), but planner writes only local files, and a path is taken as "
                f"written: it would make a folder {escape_unsafe(repr(first))} in the current folder", None)
    if not re.match(r"(?i)file:/", text):
        return None
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(text)
    meant = unquote(parts.path) or "/"
    if parts.netloc not in ("", "localhost"):  # file://host/x: another machine's file, which no path names here
        meant = f"//{parts.netloc}{meant}"
    return ("is a URL, but a path is taken as written, not as a URL: it would make a folder 'file:' in the current "
            "folder", escape_unsafe(meant))


def dotdot_problem(text: str) -> tuple[str, str] | None:
    """(problem, the path meant) for an output path with a '..' right after a folder that does not exist
    ('newdir/..', 'nd2/../../k3'): making the path would make that folder only to leave it again, an empty folder
    that is not the output folder (h27a m1). The path meant drops each such 'name/..' pair, as the kernel would
    once the folder existed ('newdir/..' -> '.'); a '..' after a folder that exists (a link to one included) is
    kept as written, for the kernel to resolve. None where there is no such '..'."""
    if ".." not in text.split("/"):
        return None
    parts = text.split("/")
    kept: list[str] = []
    missing: str | None = None
    for i, part in enumerate(parts):
        if i > 0 and part in ("", "."):  # 'x//..', 'x/./..': the same as 'x/..'
            continue
        if part == ".." and kept and kept[-1] not in ("", ".", ".."):
            before = "/".join(parts[:i])
            if not os.path.lexists(before):
                missing = missing or before.rstrip("/")
                kept.pop()
                continue
        kept.append(part)
    if missing is None:
        return None
    meant = "/".join(kept).lstrip("/") if not text.startswith("/") else "/" + "/".join(kept).lstrip("/")
    return (f"has '..' right after {escape_unsafe(missing)}, a folder that does not exist: planner would make it only "
            "to leave it again", escape_unsafe(meant or "."))


def bookkeeping_part(path: Path | str) -> tuple[str, str, str] | None:
    """(folder name, what planner names so, the folder above it) for the first component of ``path`` named as
    one of planner's bookkeeping files, or None: the report manifest (:data:`planner.core.manifest.MANIFEST`), a
    staging folder (:data:`planner.core.atomic.STAGING_PREFIX`...), a temporary manifest
    (:data:`planner.core.manifest.MANIFEST_TMP`). Every component is looked at, of the path made absolute as
    written (``os.path.abspath``) and of the path the links in it lead to (``os.path.realpath``): a report
    folder anywhere below such a name sits in what a later run into the folder above takes for its own.

    Raises:
        DestinationError: the path is relative and the current folder was removed (:func:`refuse_gone_cwd`).
    """
    from planner.core.manifest import MANIFEST, MANIFEST_TMP

    refuse_gone_cwd(path)
    try:
        fulls = (os.path.abspath(path), os.path.realpath(path))
    except (OSError, ValueError):  # a NUL byte (refused where the path is read), a link loop on an old Python
        fulls = (os.path.abspath(path),)
    for full in fulls:
        parts = Path(full).parts
        for i, part in enumerate(parts):
            above = escape_unsafe(str(Path(*parts[:i]))) if i else "/"
            if part == MANIFEST:
                return part, (f"the name of planner's report manifest, so a later run into {above} would take it "
                              "for a manifest it cannot read and refuse to run"), above
            if part.startswith(STAGING_PREFIX) or MANIFEST_TMP.fullmatch(part):
                what = (f"the name planner gives its staging folders ({STAGING_PREFIX}...)" if
                        part.startswith(STAGING_PREFIX) else
                        f"the name planner gives a manifest while it writes it (.{MANIFEST}.XXXXXXXX.tmp)")
                return part, (f"{what}, so a later run into {above} would take it for one a stopped run left and "
                              "say so each time"), above
    return None


def refuse_bookkeeping_name(out: Path | str, *, file_name: str | None = None) -> None:
    """Refuse an output folder (or, with ``file_name``, a file to be written in folder ``out``) any of whose path
    components is named as planner's bookkeeping files are (:func:`bookkeeping_part`): a later run into the folder
    above would take it for its manifest (and refuse to run), or for a stopped run's staging folder or temporary
    manifest (and say so on every run).

    Raises:
        DestinationError: naming the path and the component; also for a relative path whose current folder was
            removed (:func:`refuse_gone_cwd`).
    """
    path = Path(out) / file_name if file_name is not None else Path(out)
    found = bookkeeping_part(path)
    if found is None:
        return
    part, what, above = found
    kind = "file" if file_name is not None and part == file_name else "folder"
    linked = "" if part in Path(os.path.abspath(path)).parts else \
        f" (the links in it lead into {above}/{escape_unsafe(part)})"
    raise DestinationError(f"{path}: has the {kind} name {escape_unsafe(repr(part))}{linked}, {what}. Give the "
                           f"{kind} another name.")


def refuse_gone_cwd(path: Path | str) -> None:
    """Refuse a relative ``path`` when the current folder it is relative to was removed (planner.core.cwd).

    Raises:
        DestinationError: '<path>: the current folder no longer exists (it was removed); cd to a folder and run
            again.'
    """
    from planner.core.cwd import gone_line, lost_relative

    if lost_relative(path):
        raise DestinationError(gone_line(path))


def refuse_owner_umask() -> None:
    """Refuse to write a report set under a umask that takes a permission from the user's own new files and
    folders (any of the bits 0o700: umask 277, 477, 777): planner makes its staging folder (mode 0o700 less the
    umask, tempfile.mkdtemp) and writes and reads back its reports there, so such a umask would stop it midway,
    with a message that blames a writable output folder. The umask's other bits are the user's to choose
    (umask 077 keeps reports private); the hint keeps them, and never less than 022 (a hint of umask 0000 would
    make every report writable by anyone).

    Raises:
        OutputError: naming the umask and the one to set.
    """
    mask = process_umask()
    if mask & 0o700:
        taken = [what for bit, what in ((0o400, "read"), (0o200, "write"), (0o100, "search")) if mask & bit]
        raise OutputError(f"the umask {mask:04o} takes {'/'.join(taken)} permission from your own new files and "
                          "folders, so planner could not write its reports and check them. Run `umask "
                          f"{(mask & 0o077) | 0o022:04o}` (it keeps what the umask takes from group and others, and "
                          "at least their write) and try again.")


#: ``FS_IOC_GETFLAGS`` (``_IOR('f', 1, long)`` on 64-bit Linux) and its ``FS_IMMUTABLE_FL``: linux/fs.h, ioctl_iflags(2)
_FS_IOC_GETFLAGS, _FS_IMMUTABLE_FL = 0x80086601, 0x10


def is_immutable(path: Path | str) -> bool:
    """Whether the file or folder ``path`` has the immutable attribute (``chattr +i``; ``lsattr`` shows ``i``), which
    makes every write to it fail with EPERM, for root too; False where it cannot be told (no such ioctl, another
    system, a path that cannot be opened). Source: ioctl_iflags(2)."""
    import array

    try:
        import fcntl
    except ImportError:  # not a POSIX system
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError, TypeError):
        return False
    try:
        flags = array.array("l", [0])
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags, True)
        return bool(flags[0] & _FS_IMMUTABLE_FL)
    except (OSError, ValueError, OverflowError):
        return False
    finally:
        os.close(fd)


def refuse_unwritable_out(out: Path) -> None:
    """Refuse, before any work, an output folder planner could not write its staging folder and reports into:
    ``out`` that exists on a read-only file system (``statvfs``: ST_RDONLY) or without write and search
    permission for this user (``access(2)`` with the effective ids: mode bits, POSIX ACLs and root's rights
    counted); and ``out`` (or, for one still to be made, the nearest folder above it that exists) whose default
    ACL takes read, write or search permission from the owner's new files and folders (``setfacl -d -m u::r-x``):
    planner's staging folder and reports would be made without it, as under a umask such as 0277
    (:func:`refuse_owner_umask`, which refuses that for root too). A path that is not a folder, or whose status
    cannot be taken, is left to the checks that say what it is.

    Raises:
        DestinationError: naming the folder, what is wrong and what to do (h24a m1, m3).
    """
    out = Path(out)
    where = out
    while not os.path.isdir(where) and where != where.parent:
        if os.path.lexists(where):
            return  # a file or a dangling link in the way: said elsewhere as what it is
        where = where.parent
    if not os.path.isdir(where):
        return
    shown = line_path(out)
    if where == out:
        try:
            read_only = bool(os.statvfs(out).f_flag & os.ST_RDONLY)
            denied = not os.access(out, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids)
        except (OSError, ValueError):
            read_only = denied = False
        if read_only or denied:
            if not read_only and is_immutable(out):  # EPERM from the attribute, not the mode (h25a m1)
                raise DestinationError(f"{shown}: cannot write into the output directory (Operation not "
                                       "permitted). Check that folder (an immutable attribute: lsattr -d), or "
                                       "give --out a directory that can be written.")
            why = "Read-only file system" if read_only else "Permission denied"
            raise DestinationError(f"{shown}: cannot write into the output directory ({why}). Give --out a "
                                   "directory that can be written.")
    perm = _default_acl_owner(where)
    lacks = [what for bit, what in ((4, "read"), (2, "write"), (1, "search")) if perm is not None and not perm & bit]
    if lacks:
        folder = line_path(where)
        has = "its default ACL" if where == out else \
            f"the folder {folder} it would be made in has a default ACL that"
        entry = "".join(c if perm & bit else "-" for bit, c in ((4, "r"), (2, "w"), (1, "x")))
        raise DestinationError(f"{shown}: {has} takes {'/'.join(lacks)} permission from your own new files and "
                               f"folders (user::{entry}, as getfacl -d {path_word(str(where))} shows), so planner could "
                               f"not write its reports and check them. Give the owner rwx there (setfacl -d -m u::rwx "
                               f"{path_word(str(where))}) or remove that default ACL (setfacl -k {path_word(str(where))}), and "
                               "try again.")


def _default_acl_owner(folder: Path) -> int | None:
    """The permission bits (0-7) the default ACL of ``folder`` (its ``system.posix_acl_default`` extended attribute,
    acl(5)) gives the owner of new files and folders made in it (its ``user::`` entry); None when it has no default
    ACL, one that cannot be read, or the file system or platform has none."""
    from planner.core.access import USER_OBJ, _NO_ID, parse_acl

    try:
        raw = os.getxattr(folder, "system.posix_acl_default")
        return parse_acl(raw, 0).get((USER_OBJ, _NO_ID))
    except (OSError, AttributeError, ValueError):
        return None
