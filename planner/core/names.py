"""Names users give, made safe: file names under an output folder, and text shown or written.

A scenario name becomes a file name (:func:`safe_stem`): no path separators, no '..', capped in
UTF-8 bytes so that a report's name (and a temporary one beside it) stays under the 255 bytes most
file systems allow for one name (ext4, XFS, APFS, NTFS in UTF-16 units). Text that reaches the
terminal, Markdown, CSV, JSON or the workbook must not hold control characters (a carriage return
or an escape sequence rewrites the terminal line) or bidirectional controls (which reorder how the
text around them is displayed: "Trojan Source", CVE-2021-42574): :func:`unsafe_char` finds them
(the readers refuse them), :func:`escape_unsafe` writes them as visible escapes.

Sources: Unicode Standard Annex #9 (Unicode Bidirectional Algorithm), section 2, "Directional
Formatting Characters"; Linux ``NAME_MAX`` (255 bytes, limits.h).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, SupportsIndex

from planner.core.errors import OutputError, char_name, escaped_char as _escaped  # noqa: F401 (char_name: re-exported)

#: The most UTF-8 bytes of a report file name's stem (the name is <stem>[-compare].<ext>).
MAX_STEM_BYTES = 120

#: The longest name (a scenario's, a workload's, a catalog id), in characters. A name is repeated in every report
#: line that names it (the CSV's binding_workload and why_not columns, headings, the terminal's lines), so a name
#: of a million letters made a 1 MB scenario into a 590 MB CSV (hostile pass 11B #5). 200 is far above any name a
#: person reads at a glance: the shipped scenario and workload names are under 30 characters, a Hugging Face
#: repository name at most 96 (huggingface_hub.utils.validate_repo_id: "max length is 96"), and a report's file name
#: keeps 120 bytes of a name (MAX_STEM_BYTES); it is a limit no user reaches, only a runaway file or paste.
MAX_NAME_CHARS = 200

#: The most characters a free text (a description, notes, a source) may have: a spreadsheet cell holds at most
#: 32,767 characters (Microsoft, "Excel specifications and limits": "Total number of characters that a cell can
#: contain: 32,767 characters"), and the workbook copies each text into one cell (Assumptions, "the scenario as
#: given"), which would otherwise cut it without a word; 32,000 leaves room for the escapes a cell adds.
MAX_TEXT_CHARS = 32_000

#: UAX #9's explicit directional formatting characters (embeddings LRE RLE, overrides LRO RLO, PDF;
#: isolates LRI RLI FSI, PDI) and the implicit marks LRM, RLM and ALM.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def cut_utf8(text: str, max_bytes: int) -> str:
    """The longest start of ``text`` whose UTF-8 form has at most ``max_bytes`` bytes (never half a
    character)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", errors="ignore")


def safe_stem(name: str, max_bytes: int | None = MAX_STEM_BYTES, *, check_reserved: bool = True) -> str:
    """A file name stem from a scenario name, NFKC-normalised first as names are compared (:func:`name_key`:
    a decomposed accent is kept as its composed letter, a full-width or other compatibility letter is its
    plain one, so names that compare equal give one file name; only canonically equivalent ones are one report set:
    :func:`same_spelling`): no path separators, no '..', no leading dots, at most ``max_bytes`` UTF-8 bytes
    (:data:`MAX_STEM_BYTES`; None: not cut).

    Characters other than letters and digits (any script), '.', '_' and '-' become '-' (control and
    bidirectional characters among them).

    Raises:
        OutputError: nothing usable is left (e.g. '..', '/', ''), or (with ``check_reserved``) the stem is a
            device name Windows reserves (:func:`windows_reserved`).
    """
    text = unicodedata.normalize("NFKC", str(name)).replace("\\", "/")  # 'e' + U+0301 is 'é'; 'ｃ' is 'c'
    parts = [p for p in text.split("/") if p not in ("", ".", "..")]
    stem = "-".join(parts)
    stem = re.sub(r"[^\w.-]+", "-", stem)
    stem = re.sub(r"\.{2,}", ".", stem).strip(".-")
    if max_bytes is not None:
        stem = cut_utf8(stem, max_bytes).rstrip(".-")
    if not stem:
        raise OutputError(f"scenario name {name!r} gives no usable file name. Give the scenario a name such as "
                          "'ft-7b-workstation'.")
    if check_reserved and windows_reserved(stem):
        raise OutputError(f"scenario name {name!r} gives the report names {stem}.json, {stem}.xlsx, ..., which "
                          f"Windows reserves for the device {windows_reserved(stem)}: a report folder copied or synced "
                          "there loses them. Give the scenario another name, e.g. 'ft-7b-workstation'.")
    return stem


#: The device names Windows reserves as file names, with any extension ('nul.json' is the device NUL), in any
#: case: Microsoft, "Naming Files, Paths, and Namespaces", section "Naming Conventions"
#: (https://learn.microsoft.com/en-us/windows/win32/fileio/naming-a-file). COM and LPT with the superscript
#: digits 1-3 are reserved too (ibid.).
_WINDOWS_DEVICES = re.compile(r"(CON|PRN|AUX|NUL|(?:COM|LPT)[0-9\u00b9\u00b2\u00b3])", re.IGNORECASE)


def windows_reserved(stem: str) -> str:
    """The Windows device ``stem`` names ('CON' for 'con' or 'Con.v2'), which no file there can be called
    even with an extension; '' when none."""
    base = stem.split(".", 1)[0].rstrip(" ")
    m = _WINDOWS_DEVICES.fullmatch(base)
    return m.group(1).upper() if m else ""


def unsafe_char(text: str, *, newlines: bool = False) -> str | None:
    """The first character of ``text`` that must not be shown as it is, or None.

    Unsafe: control characters (Unicode category Cc: C0, DEL, C1), the line and paragraph
    separators U+2028 and U+2029, the 66 noncharacters (U+FDD0-U+FDEF, U+FFFE, U+FFFF, U+1FFFE ... U+10FFFF),
    :data:`BIDI_CONTROLS`, and invisible characters (category Cf, the Hangul fillers). With ``newlines``
    (a free text: a description, notes), line feed and tab are allowed, and so are the joiners ZWNJ and
    ZWJ where a script or an emoji sequence needs them (:func:`joined_here`); a name holds no joiner.
    """
    pattern = _UNSAFE_TEXT if newlines else _UNSAFE_NAME
    for m in pattern.finditer(text):
        if not (newlines and joined_here(text, m.start())):
            return m.group()
    return None


#: ZERO WIDTH NON-JOINER U+200C and ZERO WIDTH JOINER U+200D: Persian and Urdu write the ZWNJ inside words
#: ('می‌خواهم', The Unicode Standard 15.0, 23.2 "Layout Controls", "Cursive Connection"), Indic scripts use
#: both to choose a conjunct's form (ibid., 12.2 "Devanagari", "Rendering Rules"), and emoji ZWJ sequences
#: join emoji into one ('👩‍💻', Unicode Technical Standard #51, 2.3 "Emoji ZWJ Sequences").
JOINERS = frozenset("\u200c\u200d")
#: The emoji variation selectors VS15 U+FE0E and VS16 U+FE0F, which choose text or emoji presentation of the
#: emoji before them (UTS #51, 1.4.3 "Emoji Presentation Sequence"), as in the ZWJ sequence '🏳️‍🌈'.
EMOJI_SELECTORS = frozenset("\ufe0e\ufe0f")


def _joinable(ch: str) -> bool:
    """A letter or mark (categories L*, M*) or an emoji (category So; the skin tone modifiers U+1F3FB-1F3FF, Sk)."""
    cat = unicodedata.category(ch)
    return cat[0] in "LM" and ch not in FILLERS and ch not in EMOJI_SELECTORS or cat == "So" \
        or "\U0001f3fb" <= ch <= "\U0001f3ff"


def joined_here(text: str, i: int) -> bool:
    """Whether ``text[i]`` is a joiner (:data:`JOINERS`) between two letters, marks or emoji (not at the
    start or end, not doubled, not beside a space or punctuation), or an emoji variation selector
    (:data:`EMOJI_SELECTORS`) right after an emoji: what a free text may hold of the invisible characters.
    An emoji followed by its selector counts as the emoji before a joiner ('🏳️‍🌈')."""
    ch = text[i]
    if ch in EMOJI_SELECTORS:
        return i > 0 and unicodedata.category(text[i - 1]) == "So"
    if ch not in JOINERS or i == 0 or i + 1 >= len(text):
        return False
    before = text[i - 1]
    if before in EMOJI_SELECTORS:
        return i > 1 and unicodedata.category(text[i - 2]) == "So"
    return _joinable(before) and _joinable(text[i + 1])


#: Characters drawn as blank space that are not Python whitespace (str.isspace): the Braille pattern blank
#: U+2800 (category So; UTS #39 lists it among characters "that look like a space") and the Hangul fillers.
_BLANK_LOOKING = frozenset("\u2800") | frozenset("\u115f\u1160\u3164\uffa0")


def is_blank_looking(ch: str) -> bool:
    """Whether ``ch`` is drawn as blank space: whitespace (spaces, the no-break spaces U+00A0 and U+202F,
    U+3000) or :data:`_BLANK_LOOKING`."""
    return ch.isspace() or ch in _BLANK_LOOKING or unicodedata.category(ch) == "Zs"


def strip_blank_looking(text: str) -> str:
    """``text`` without the blank-looking characters (:func:`is_blank_looking`) at its ends."""
    start, end = 0, len(text)
    while start < end and is_blank_looking(text[start]):
        start += 1
    while end > start and is_blank_looking(text[end - 1]):
        end -= 1
    return text[start:end]


def name_key(name: str) -> str:
    """A name as two names are compared: in Unicode Normalization Form KC, so that 'café' written with
    U+00E9 and with 'e' + U+0301 (canonically equivalent, drawn the same) are one name, and so are a
    full-width 'ｗ' (U+FF57) and 'w', or the ligature 'ﬁ' and 'fi' (compatibility equivalent: the same
    letters in another form) (Unicode Standard Annex #15, "Unicode Normalization Forms", section 1.1
    "Canonical and Compatibility Equivalence")."""
    return unicodedata.normalize("NFKC", name)


def same_spelling(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one text written two canonically equivalent ways ('café' with U+00E9 and with
    'e' + U+0301: drawn the same, one text in Unicode NFC; UAX #15, section 1.1). Names only compatibility
    equivalent ('ﬁne' and 'fine', 'Ⅻ' and 'XII', full-width 'ｗ' and 'w') are not: they are drawn differently,
    though they compare as one name (:func:`name_key`) and give one file name (:func:`safe_stem`), so two report
    sets so named clash in one folder (h17b #5e)."""
    return a == b or unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)


def compatibility_forms(name: str, most: int = 3) -> str:
    """The characters of ``name`` that Unicode NFKC writes otherwise, each with what it becomes ("U+FB01 (LATIN
    SMALL LIGATURE FI) as 'fi'"), at most ``most`` of them joined by ', '; '' when there are none (the name is
    its own NFKC, up to canonical equivalence). A file name is made of a name's NFKC (:func:`safe_stem`)."""
    forms = [ch for ch in dict.fromkeys(unicodedata.normalize("NFC", name))
             if unicodedata.normalize("NFKC", ch) != ch]
    return ", ".join(f"{char_name(ch)} as {unicodedata.normalize('NFKC', ch)!r}" for ch in forms[:most])


def clash_key(name: str) -> str:
    """A name as two names clash: :func:`name_key` and then Unicode default case folding, so that 'chat' and
    'Chat', or 'straße' and 'STRASSE', are one (the Unicode Standard 15.0, 3.13 "Default Case Algorithms",
    D145 toCasefold). Two workloads, or two report sets in one folder, whose names clash are refused: a
    reader takes them for one name, and a case-insensitive file system (APFS and HFS+ by default, NTFS,
    FAT and exFAT, SMB shares) stores their reports as one file."""
    return unicodedata.normalize("NFKC", name_key(name).casefold()).translate(_DASH_FOLD)


#: Characters drawn as a hyphen-minus '-' in a name, so 'chat-7b' and 'chat' U+2010 '7b' read as one name:
#: the characters Unicode Technical Standard #39 ("Unicode Security Mechanisms"), confusables.txt, maps to
#: U+002D (HYPHEN-MINUS) among the dashes and minus signs (U+02D7 MODIFIER LETTER MINUS SIGN, U+058A ARMENIAN
#: HYPHEN, U+1806 MONGOLIAN TODO SOFT HYPHEN, U+2010 HYPHEN, U+2011 NON-BREAKING HYPHEN, U+2012 FIGURE DASH,
#: U+2013 EN DASH, U+2043 HYPHEN BULLET, U+2212 MINUS SIGN, U+FE63 SMALL HYPHEN-MINUS, U+FF0D FULLWIDTH
#: HYPHEN-MINUS), and the em dash U+2014 and small em dash U+FE58, drawn as a longer dash in most fonts but
#: alone in a name taken for one. :func:`clash_key` folds them to '-'.
DASH_LOOKALIKES = "\u02d7\u058a\u1806\u2010\u2011\u2012\u2013\u2014\u2043\u2212\ufe58\ufe63\uff0d"
_DASH_FOLD = str.maketrans({ch: "-" for ch in DASH_LOOKALIKES})


#: Dashes drawn like the hyphen-minus '-' of a part number: DASH_LOOKALIKES (those UTS #39's
#: confusables.txt maps to '-', and the em dashes) and U+2015 HORIZONTAL BAR (drawn as a dash; confusables.txt maps
#: it to U+30FC, so a Latin part number holding it reads as '-' and searches as no part).
_EXTRA_DASHES = "\u2015"


def part_number_problem(text: str, what: str = "mpn") -> tuple[str, str] | None:
    """Why a manufacturer part number (``what``: the key) holds a character drawn like an ASCII one, as (problem,
    hint) with its ASCII form as the hint; None when it holds none: a character that Unicode NFKC changes (UAX #15:
    full-width '\uff11\uff10\uff10', '\uff37'), a dash lookalike (U+2010-U+2015, U+2212 and the others
    :data:`DASH_LOOKALIKES` lists) or any character that UTS #39's confusables.txt maps to an
    ASCII prototype (:data:`planner.core.lookalike.PROTOTYPES`: Cyrillic 'О' U+041E to 'O'). A distributor's search for
    '100\u2013100001277WOF' finds nothing, or another part (h15b #8, h16b #3). A part number is a code, not prose."""
    if text.isascii():
        return None
    from planner.core.lookalike import PROTOTYPES, _char, _escaped

    def ascii_form(ch: str) -> str | None:
        if ch.isascii():
            return None
        if ch in DASH_LOOKALIKES or ch in _EXTRA_DASHES:
            return "-"
        folded = unicodedata.normalize("NFKC", ch)
        if folded != ch:
            return "".join(ascii_form(c) or c for c in folded)
        return PROTOTYPES.get(ch)

    odd = [ch for ch in text if ascii_form(ch) is not None]
    if not odd:
        return None
    fixed = "".join(ascii_form(ch) or ch for ch in text)
    kinds = list(dict.fromkeys(odd))
    shown = ", ".join(f"{_char(ch)} for {ascii_form(ch)!r}" for ch in kinds)
    they = "not the ASCII characters they look like" if len(kinds) > 1 else "not the ASCII character it looks like"
    return (f"'{_escaped(text, ''.join(odd))}' holds {shown}: {they}, so a distributor's search for the part number "
            "finds nothing or another part",
            f"Write it in ASCII as the part's label or datasheet does: {what}: {fixed!r}.")


def resolve_name(given: str, names: Iterable[str]) -> str | None:
    """The name among ``names`` that ``given`` names: itself, the one it equals in Unicode NFKC
    (:func:`name_key`: 'cafe' + U+0301 names the workload 'café'), or the one it clashes with
    (:func:`clash_key`: another case, 'QLORA-7B', or a dash lookalike, 'qlora' U+2010 '7b', names 'qlora-7b');
    None when none. One rule for every place a workload is named (``costs.mfu``, ``costs.batch_inference``,
    ``--tokens-per-month``): two workloads' names never clash (the scenario reader refuses them), so a name
    that clashes with one names that one."""
    names = list(names)
    if given in names:
        return given
    key = name_key(given)
    found = next((n for n in names if name_key(n) == key), None)
    if found is None:
        key = clash_key(given)
        clashing = [n for n in names if clash_key(n) == key]
        found = clashing[0] if len(clashing) == 1 else None
    return found


def value_for_name(mapping: Mapping[Any, Any], name: str) -> Any:
    """``mapping``'s value for the key that names ``name`` (:func:`resolve_name` on the text keys); None
    when none does."""
    if name in mapping:
        return mapping[name]
    key = resolve_name(name, [k for k in mapping if isinstance(k, str)])
    return None if key is None else mapping[key]


def spelling_note(a: str, b: str) -> str:
    """'' when ``a`` and ``b`` are the same code points; else a note that they are one name in two
    Unicode spellings (:func:`name_key`), in two cases, or with two dashes that look alike
    (:data:`DASH_LOOKALIKES`), for a message naming both."""
    if a == b:
        return ""
    if name_key(a) != name_key(b) and name_key(a).translate(_DASH_FOLD) == name_key(b).translate(_DASH_FOLD):
        dashes = ", ".join(dict.fromkeys(char_name(ch) for ch in a + b if ch in DASH_LOOKALIKES))
        return (f", the same name: {_spelled(a)} and {_spelled(b)} differ only in a dash ({dashes}), which looks "
                "like '-'; write '-' in both")
    forms = [ch for ch in dict.fromkeys(a + b) if not unicodedata.combining(ch)
             and unicodedata.normalize("NFKC", ch) != ch and ch not in DASH_LOOKALIKES]
    if name_key(a) != name_key(b) and forms:  # 'WWW.EVIL.COM' and 'www' U+2024 'evil.com': case and a form
        shown = ", ".join(f"{char_name(ch)} is {unicodedata.normalize('NFKC', ch)!r}" for ch in forms[:3])
        return (f", the same name: {_spelled(a)} and {_spelled(b)} differ in upper and lower case and in "
                f"compatibility forms ({shown} in Unicode NFKC), so they read as one name")
    if name_key(a) != name_key(b):
        return (f", the same name in another case: {_spelled(a)} and {_spelled(b)} differ only "
                "in upper and lower case, so they read as one name")
    return (f", the same name: {_spelled(a)} and {_spelled(b)} are two Unicode spellings "
            "of it (composed and decomposed accents, or full-width and ordinary letters), which look alike")


def lookalike_key(name: str) -> str:
    """A name as two names are drawn alike: its UTS #39 skeleton (:func:`planner.core.lookalike.skeleton`:
    'chɑt' is 'chat', 'team-ꓲ' is 'team-l') as :func:`clash_key` then folds it (case, dashes). Two workloads
    of one scenario with one lookalike key are refused as two that clash are."""
    from planner.core.lookalike import skeleton

    return clash_key(skeleton(name))


def lookalike_note(a: str, b: str) -> str:
    """'' unless ``a`` and ``b`` are drawn alike though they do not clash (:func:`clash_key`): one skeleton
    (:func:`planner.core.lookalike.skeleton`, UTS #39 confusables.txt); then a note naming the characters that
    differ and the character each looks like, for a message naming both ('chɑt' and 'chat': U+0251 LATIN SMALL
    LETTER ALPHA looks like 'a')."""
    from planner.core.lookalike import PROTOTYPES

    if clash_key(a) == clash_key(b) or lookalike_key(a) != lookalike_key(b):
        return ""
    ka, kb = name_key(a), name_key(b)
    odd = [ch for ch in dict.fromkeys(ka + kb) if ch in PROTOTYPES and (ch in ka) != (ch in kb)]
    shown = ", ".join(f"{char_name(ch)} looks like {PROTOTYPES[ch]!r}" for ch in odd[:3])
    return (f", a name drawn alike: {_spelled(a)} and {_spelled(b)} differ only in characters that look the same "
            f"({shown}; Unicode TR39, confusables.txt), so they read as one name")


def _spelled(name: str) -> str:
    """``name`` quoted as a message shows it: printable letters as they are ('CAFÉ', 'ΣΟΦΟΣ'), unsafe
    characters as :func:`escape_unsafe` writes them, and combining marks as '\\u0301', so that 'café'
    composed and 'cafe' + U+0301 (drawn alike) differ on the screen too."""
    return "'" + "".join(f"\\u{ord(ch):04x}" if unicodedata.combining(ch) else ch
                         for ch in escape_unsafe(name)) + "'"


def name_problem(name: str) -> tuple[str, str] | None:
    """Why ``name`` cannot be a name though it is a safe text, as (problem, hint); None when it can: a name
    that is blank space only, or starts or ends with a blank-looking character (:func:`is_blank_looking`),
    would look like another name (or like none) in a report; so would one holding, inside, a blank-looking
    character other than one ordinary space or a run of blanks (:func:`_inner_blank_problem`), the same
    combining mark twice in a row (:func:`_repeated_mark_problem`) or more than 4 marks on one character
    (:func:`_stacked_marks_problem`), a character with no glyph of its own, or a word mixing Latin, Cyrillic,
    Greek, Armenian and Lisu letters (:mod:`planner.core.lookalike`)."""
    told = length_problem(name)
    if told:
        return told
    if name and unicodedata.combining(name[0]):  # drawn on whatever precedes the name: 'Workload: ́x'
        return (f"{name!r} starts with {char_name(name[0])}, a combining mark, which is drawn on the character "
                "before it", "Start the name with a letter or digit.")
    if all(is_blank_looking(ch) for ch in name):
        shown = ", ".join(dict.fromkeys(char_name(ch) for ch in name))
        return (f"{name!r} is blank: it holds only {shown}, drawn as blank space",
                "Give a name of letters or digits, e.g. 'chat-7b'.")
    for ch, where in ((name[0], "starts"), (name[-1], "ends")):
        if is_blank_looking(ch):
            fixed = strip_blank_looking(name)
            return (f"{escape_unsafe(name)!r} {where} with {char_name(ch)}, drawn as blank space, so it looks like "
                    f"another name", f"Write it without the blank: {fixed!r}.")
    told = (_inner_blank_problem(name) or _repeated_mark_problem(name) or _stacked_marks_problem(name)
            or _drawn_mark_problem(name))
    if told:
        return told
    from planner.core.lookalike import lookalike_problem  # no glyph, or Latin mixed with Cyrillic or Greek

    return lookalike_problem(name)


def edge_blank_problem(text: str) -> tuple[str, str] | None:
    """Why a one-line text (an extras ``description``, a catalog label such as a ``seller``) cannot start or end
    with a blank-looking character (:func:`is_blank_looking`), as (problem, hint); None when it does not: the
    Line items would show ' SSD 4 TB' indented like a line's sub-lines ('am5-desktop priced as:'), and names
    refuse the same (:func:`name_problem`; h14b #10)."""
    for ch, where in ((text[:1], "starts"), (text[-1:], "ends")):
        if ch and is_blank_looking(ch):
            why = ("an indented line reads as a sub-line of the one above" if where == "starts" else
                   "it looks like the text without it")
            return (f"{escape_unsafe(text)!r} {where} with {char_name(ch)}, drawn as blank space, which the reports "
                    f"would keep ({why})",
                    f"Write it without the blank: {escape_unsafe(strip_blank_looking(text))!r}.")
    return None


def label_problem(text: str, what: str, *, edges: bool = True) -> tuple[str, str] | None:
    """Why a one-line text that is no name (an extras description or category, a catalog label; ``what`` names it
    in the message) cannot be shown, as (problem, hint); None when it can: with ``edges``, a blank at an end
    (:func:`edge_blank_problem`), and a word mixing Latin, Cyrillic, Greek, Armenian and Lisu letters, the rule names
    follow (:func:`planner.core.lookalike.mixed_script_problem`; UTS #39, 5.2; h15b #8)."""
    from planner.core.lookalike import mixed_script_problem

    return (edge_blank_problem(text) if edges else None) or mixed_script_problem(text, what)


def composed_length(text: str, limit: int) -> int:
    """The characters of ``text`` counted in Unicode NFC (UAX #15, section 1.2), or its code points when those are
    at most ``limit`` already (NFC never lengthens a text, so it need not be computed then)."""
    return len(text) if len(text) <= limit else len(unicodedata.normalize("NFC", text))


def length_problem(text: str, limit: int = MAX_NAME_CHARS, what: str = "a name") -> tuple[str, str] | None:
    """(problem, hint) for a ``text`` of more than ``limit`` characters (:data:`MAX_NAME_CHARS`) counted in
    Unicode NFC, or None; the text is shown cut to its first 40 characters.

    Counted after NFC (Unicode Standard Annex #15, section 1.2 "Normalization Forms": canonically equivalent
    texts have one NFC), so a name is as long composed as decomposed: 'é' x 150 is 150 characters whether 'é'
    is U+00E9 or 'e' + U+0301 (as macOS writes file names), and a Hangul syllable is one whether written as
    U+AC00 or as its conjoining jamo U+1100 U+1161."""
    count = composed_length(text, limit)
    if count <= limit:
        return None
    shown = escape_unsafe(text[:40]) + "..."
    return (f"'{shown}' is {count:,} characters long (counted composed, Unicode NFC); {what} is at most {limit} "
            "characters, since every report line that names it repeats it",
            f"Give a shorter one (at most {limit} characters).")


def _one_space(name: str) -> str:
    """``name`` with each run of blank-looking characters (:func:`is_blank_looking`) as one ordinary space."""
    out: list[str] = []
    for ch in name:
        if is_blank_looking(ch):
            if not out or out[-1] != " ":
                out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _inner_blank_problem(name: str) -> tuple[str, str] | None:
    """Why a blank inside ``name`` makes it look like another, as (problem, hint); None when it does not.

    A name may hold one ordinary space U+0020 between two other characters ('team a'), nothing else drawn
    as blank space: a no-break, Ogham (U+1680), ideographic or other space (category Zs) or the Braille
    blank U+2800 looks like that space ('team a' and 'team' U+1680 'a' are two names that read as one; UTS #39,
    "Unicode Security Mechanisms", lists these among the characters that look like a space), and a run of
    two or more blanks lets the terminal's wrapping start a line of its own with the text after it, which
    then looks like a line of the plan (a name with 120 spaces and 'Total: $99.00' after them).
    """
    for i, ch in enumerate(name):
        if not is_blank_looking(ch):
            continue
        if ch != " ":
            return (f"{escape_unsafe(name)!r} holds {char_name(ch)} at character {i + 1}, drawn as blank space like "
                    "an ordinary space, so the name looks like another",
                    f"Write an ordinary space or '-' instead: {escape_unsafe(_one_space(name))!r}.")
        if i + 1 < len(name) and is_blank_looking(name[i + 1]):
            run = 1
            while i + run < len(name) and is_blank_looking(name[i + run]):
                run += 1
            return (f"{clip_text(escape_unsafe(name))!r} holds a run of {run} blanks at character {i + 1}: a name "
                    "may hold single spaces only, since a run of them looks like one and lets the terminal start a line "
                    "with the text after it",
                    f"Write one space: {clip_text(escape_unsafe(_one_space(name)))!r}.")
    return None


def _repeated_mark_problem(name: str) -> tuple[str, str] | None:
    """Why ``name`` holds the same combining mark twice in a row (in Unicode NFD, where a composed 'é' is
    'e' + U+0301), as (problem, hint); None when it does not: a mark drawn twice on one letter looks like
    once, so 'café' with the accent doubled would look like 'café' (Unicode Technical Standard #39,
    "Unicode Security Mechanisms", 5.4 "Optional Detection": "Forbid sequences of the same nonspacing
    mark")."""
    nfd = unicodedata.normalize("NFD", name)
    for i in range(1, len(nfd)):
        if nfd[i] == nfd[i - 1] and unicodedata.category(nfd[i]) == "Mn":
            fixed = []
            for ch in nfd:
                if not (fixed and ch == fixed[-1] and unicodedata.category(ch) == "Mn"):
                    fixed.append(ch)
            return (f"'{clip_text(_spelled(name)[1:-1])}' holds {char_name(nfd[i])} twice in a row, a combining "
                    "mark drawn on the same letter, where twice looks like once, so the name looks like another",
                    f"Write the mark once: {clip_text(unicodedata.normalize('NFC', ''.join(fixed)))!r}.")
    return None


#: The most nonspacing marks (categories Mn and Me, in Unicode NFD) one character may carry in a name: Unicode
#: Technical Standard #39, "Unicode Security Mechanisms", 5.4 "Optional Detection": "Forbid sequences of more
#: than 4 nonspacing marks (gc=Mn or gc=Me)". More are drawn over the lines above and below ("Zalgo" text);
#: Vietnamese 'ệ' is 'e' + U+0323 + U+0302 (two).
MAX_STACKED_MARKS = 4


def _stacked_marks_problem(name: str) -> tuple[str, str] | None:
    """Why ``name`` stacks more than :data:`MAX_STACKED_MARKS` nonspacing marks (categories Mn, Me) in a row on one
    character, counted in Unicode NFD ('é' U+00E9 is 'e' + one mark), as (problem, hint); None when it does not.
    The message names the count and the character (its position in the name as written, from 1) they are drawn on."""
    base_at, base, run = 0, "", 0
    for i, ch in enumerate(name):
        for part in unicodedata.normalize("NFD", ch):
            if unicodedata.category(part) in ("Mn", "Me"):
                run += 1
                continue
            if run > MAX_STACKED_MARKS:
                break
            base_at, base, run = i, part, 0
        else:
            continue
        break
    if run <= MAX_STACKED_MARKS:
        return None
    return (f"'{clip_text(_spelled(name)[1:-1])}' stacks {run} combining marks on {base!r} (character {base_at + 1}): "
            f"more than {MAX_STACKED_MARKS} nonspacing marks in a row are drawn over the lines above and below, so the "
            "name looks like another (Unicode TR39, 5.4)",
            f"Write at most {MAX_STACKED_MARKS} marks on one letter.")


#: Combining marks drawn as a line under the letter they follow, so that 'w' U+0332 'x' reads as 'w_x': U+0332
#: COMBINING LOW LINE and U+0333 COMBINING DOUBLE LOW LINE (their names in the Unicode Character Database,
#: UnicodeData.txt; confusables.txt has no line for them, so :func:`planner.core.lookalike.skeleton` misses them;
#: h15b #6).
_LOW_LINES = frozenset("\u0332\u0333")
#: Their upper twins, drawn as a line over the letter they follow and joining the next one's, so that 'a' U+0305
#: 'b' reads as a bar over 'ab': U+0305 COMBINING OVERLINE and U+033F COMBINING DOUBLE OVERLINE (UnicodeData.txt;
#: U+0304 COMBINING MACRON, a letter's length mark as in 'ā', is not one: it is drawn over its own letter only;
#: h16b #13n).
_OVERLINES = frozenset("\u0305\u033f")


#: The emoji that take a skin tone modifier (property Emoji_Modifier_Base; Unicode 14.0,
#: https://www.unicode.org/Public/14.0.0/ucd/emoji/emoji-data.txt; 132 code points, all category So). A modifier
#: after any other character (a letter, or an emoji such as U+1F600 that takes none) is drawn as a colour swatch
#: (UTS #51, "Unicode Emoji", 2.4 "Diversity").
_MODIFIER_BASES = (
    (0x261D, 0x261D), (0x26F9, 0x26F9), (0x270A, 0x270D), (0x1F385, 0x1F385), (0x1F3C2, 0x1F3C4), (0x1F3C7, 0x1F3C7),
    (0x1F3CA, 0x1F3CC), (0x1F442, 0x1F443), (0x1F446, 0x1F450), (0x1F466, 0x1F478), (0x1F47C, 0x1F47C),
    (0x1F481, 0x1F483), (0x1F485, 0x1F487), (0x1F48F, 0x1F48F), (0x1F491, 0x1F491), (0x1F4AA, 0x1F4AA),
    (0x1F574, 0x1F575), (0x1F57A, 0x1F57A), (0x1F590, 0x1F590), (0x1F595, 0x1F596), (0x1F645, 0x1F647),
    (0x1F64B, 0x1F64F), (0x1F6A3, 0x1F6A3), (0x1F6B4, 0x1F6B6), (0x1F6C0, 0x1F6C0), (0x1F6CC, 0x1F6CC),
    (0x1F90C, 0x1F90C), (0x1F90F, 0x1F90F), (0x1F918, 0x1F91F), (0x1F926, 0x1F926), (0x1F930, 0x1F939),
    (0x1F93C, 0x1F93E), (0x1F977, 0x1F977), (0x1F9B5, 0x1F9B6), (0x1F9B8, 0x1F9B9), (0x1F9BB, 0x1F9BB),
    (0x1F9CD, 0x1F9CF), (0x1F9D1, 0x1F9DD), (0x1FAC3, 0x1FAC5), (0x1FAF0, 0x1FAF6),
)


def modifier_base(ch: str) -> bool:
    """Whether ``ch`` is an emoji that takes a skin tone modifier (:data:`_MODIFIER_BASES`)."""
    return any(lo <= ord(ch) <= hi for lo, hi in _MODIFIER_BASES)


def _drawn_mark_problem(name: str) -> tuple[str, str] | None:
    """Why a mark in ``name`` is drawn as something else, as (problem, hint); None when none is: an enclosing mark
    (General_Category Me, Enclosing_Mark in Unicode Standard Annex #44, table 12: U+20DD COMBINING ENCLOSING CIRCLE
    draws a ring round the 'o' before it, U+0488 a ring of dots), a combining low line (:data:`_LOW_LINES`, drawn as
    '_'), a combining overline (:data:`_OVERLINES`), an overlay mark (Canonical_Combining_Class 1, "Overlay", in
    UAX #44, table 9, "marks which overlay a base letter or symbol": U+0336 COMBINING LONG STROKE OVERLAY strikes
    'a' U+0336 'b' through, U+0334 draws a tilde through it; h16b #13n), or an emoji skin tone modifier U+1F3FB-1F3FF (category Sk) not right after an emoji that takes one
    (:func:`modifier_base`; UTS #51, "Unicode Emoji", 2.4 "Diversity": a modifier used alone, or after an emoji that
    takes none, is shown as a colour swatch). So 'o' and 'o' U+20DD, or 'w_x' and 'w' U+0332 'x', are not two names that read alike
    (h15b #6)."""
    for i, ch in enumerate(name):
        if unicodedata.category(ch) == "Me":
            why = "an enclosing mark drawn round the character before it"
        elif ch in _LOW_LINES:
            why = "a combining mark drawn as an underscore under the character before it"
        elif ch in _OVERLINES:
            why = "a combining mark drawn as a line over the character before it"
        elif unicodedata.combining(ch) == 1:
            why = "an overlay mark drawn through the character before it"
        elif "\U0001f3fb" <= ch <= "\U0001f3ff" and not (i and modifier_base(name[i - 1])):
            why = ("an emoji skin tone modifier with no emoji before it, drawn as a colour swatch" if not i or
                   unicodedata.category(name[i - 1]) != "So" else
                   "an emoji skin tone modifier after an emoji that takes none, drawn as a colour swatch")
        else:
            continue
        fixed, code = name[:i] + name[i + 1:], f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
        return (f"'{clip_text(_spelled(name)[1:-1].replace(ch, code))}' holds {char_name(ch)} at character {i + 1}, {why}, so the name "
                "looks like another", f"Remove it: {clip_text(escape_unsafe(fixed))!r}"
                + (" (or write '_')." if ch in _LOW_LINES else "."))
    return None


# Unicode category Cc is exactly U+0000-U+001F and U+007F-U+009F (the C0 and C1 controls and DEL;
# the Unicode Standard, 4.6 General Category, "Cc = Control": fixed, no character will be added).
# The 66 noncharacters, U+FDD0-U+FDEF and the last two code points of each of the 17 planes (U+FFFE, U+FFFF,
# U+1FFFE, U+1FFFF, ... U+10FFFF: The Unicode Standard 15.0, 23.7 "Noncharacters"), are not characters at all:
# XML 1.0 (2.2 Characters) forbids U+FFFE and U+FFFF (a workbook holding them is damaged) and discourages the
# others, so two names differing by one would read the same. All 66 are treated alike (h39b 13).
_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(chr(p * 0x10000 + 0xFFFE) + chr(p * 0x10000 + 0xFFFF) for p in range(17))
#: A noncharacter (:data:`_NONCHARACTERS`), for the readers that refuse one wherever a file holds it.
NONCHARACTER = re.compile(f"[{_NONCHARACTERS}]")
#: Why no text the planner reads may hold a noncharacter, said alike by every reader (h39b 13): after
#: "holds U+FFFE, a Unicode noncharacter, ".
NONCHARACTER_WHY = ("which no text planner reads may hold: it is no character for text that is exchanged (The "
                    "Unicode Standard, 23.7), and the workbook's XML forbids U+FFFE and U+FFFF and discourages the "
                    "others (XML 1.0, 2.2)")
# Invisible characters: Unicode category Cf ("Format": zero-width space and joiners, the BOM U+FEFF, the
# soft hyphen, invisible operators, tag characters U+E0000-U+E007F; the Unicode Standard 15.0, 4.5
# General Category; the ranges of the Unicode Character Database 14.0 that Python 3.11 carries,
# tests/test_safety5b.py checks them against unicodedata) and the Hangul fillers U+115F, U+1160, U+3164,
# U+FFA0 (category Lo, drawn blank: Unicode Technical Standard #39, "Unicode Security Mechanisms", lists
# them with the default ignorables an identifier should not hold), and the other default-ignorable code
# points drawn as nothing (DerivedCoreProperties.txt, Default_Ignorable_Code_Point: the combining grapheme
# joiner U+034F, the Khmer inherent vowels U+17B4-U+17B5, the Mongolian free variation selectors
# U+180B-U+180D and U+180F, the variation selectors U+FE00-U+FE0F and U+E0100-U+E01EF), and U+16FE4 KHITAN
# SMALL SCRIPT FILLER (category Mn, added in Unicode 13.0), a filler like the Hangul ones that the hostile pass
# h12b (#7) found drawn as nothing between Latin letters. DerivedCoreProperties.txt (17.0.0) lists the Hangul
# fillers as Default_Ignorable_Code_Point ("115F..1160", "3164", "FFA0") but not U+16FE4 (only Case_Ignorable,
# ID_Continue, Grapheme_Extend), so it is named here by hand; every other Default_Ignorable_Code_Point that
# Python's unicodedata assigns is refused already (Cf, or listed above). A name holding one looks like another.
_PRINTABLE_INVISIBLE_RANGES = ((0x115F, 0x1160), (0x3164, 0x3164), (0xFFA0, 0xFFA0), (0x034F, 0x034F),
                               (0x17B4, 0x17B5), (0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F),
                               (0x16FE4, 0x16FE4), (0xE0100, 0xE01EF))
_PRINTABLE_INVISIBLE = "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in _PRINTABLE_INVISIBLE_RANGES)
_INVISIBLE = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
              "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438"
              "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
              + _PRINTABLE_INVISIBLE)
#: The invisible characters that str.isprintable() calls printable (categories Lo and Mn): a text must be
#: searched for them even when it is printable (planner.core.fields).
_FILLER = re.compile(f"[{_PRINTABLE_INVISIBLE}]")
FILLERS = frozenset(chr(c) for a, b in _PRINTABLE_INVISIBLE_RANGES for c in range(a, b + 1))


#: The printable characters a free text may not hold (:func:`text_glyph_problem`): U+FFFC and U+1D159, drawn as
#: nothing (planner.core.lookalike.NO_GLYPH), and U+2800 BRAILLE PATTERN BLANK, a Braille cell with no dots drawn
#: as blank space though it is no space (UTS #39 lists it among the characters that look like a space).
_GLYPHLESS_PRINTABLE = re.compile("[\ufffc\U0001d159\u2800]")


def text_glyph_problem(text: str) -> tuple[str, str] | None:
    """Why a free text (a seller, a source, a description, notes) cannot hold one of its characters, as (problem,
    hint); None when it can: the characters a name refuses for having no glyph of their own (private use, category
    Co; a code point unassigned in the Unicode version Python knows, Cn; U+FFFC, U+1D159:
    :mod:`planner.core.lookalike`) and the Braille blank U+2800, since a report's line (the Quote's seller, a
    source) then shows something else, or nothing, where the file has a character (h14b minor a). Ordinary and
    no-break spaces stay allowed in texts."""
    if text.isprintable() and not _GLYPHLESS_PRINTABLE.search(text):
        return None
    from planner.core.lookalike import glyph_reason

    for i, ch in enumerate(text):
        why = glyph_reason(ch) or ("a Braille cell with no dots, drawn as blank space though it is no space"
                                   if ch == "\u2800" else None)
        if why is None:
            continue
        return (f"holds {char_name(ch)} at character {i + 1}, shown as {_escaped(ch)}: {why}, so the text shows "
                "otherwise than the file says", "Remove it (write an ordinary space for a blank).")
    return None


def may_be_unsafe(text: str) -> bool:
    """False when ``text`` surely holds nothing :func:`unsafe_char` finds (printable, no Hangul filler):
    a cheap test before the search."""
    return not text.isprintable() or _FILLER.search(text) is not None


# Lone surrogates (category Cs) are no text at all: a file name's bytes that are not UTF-8 reach Python as
# U+DC80-U+DCFF (PEP 383, "surrogateescape"), which no UTF-8 file, JSON parser or workbook can hold.
# They are escaped wherever text is shown (:func:`escape_unsafe`), not refused: a path given on the command
# line may hold them and still name a folder that exists.
_SURROGATES = "\ud800-\udfff"
_NAME_CHARS = "\x00-\x1f\x7f-\x9f\u2028\u2029" + _NONCHARACTERS + "".join(sorted(BIDI_CONTROLS)) + _INVISIBLE
_TEXT_CHARS = ("\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + _NONCHARACTERS + "".join(sorted(BIDI_CONTROLS))
               + _INVISIBLE)
_UNSAFE_NAME = re.compile(f"[{_NAME_CHARS}]")
_UNSAFE_TEXT = re.compile(f"[{_TEXT_CHARS}]")
_ESCAPED_NAME = re.compile(f"[{_NAME_CHARS}{_SURROGATES}]")
_ESCAPED_TEXT = re.compile(f"[{_TEXT_CHARS}{_SURROGATES}]")
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")


def unsafe_problem(text: str, *, newlines: bool = False) -> str | None:
    """Why ``text`` cannot be a name or text the planner shows, as a problem sentence; None when it can."""
    ch = unsafe_char(text, newlines=newlines)
    if ch is None:
        return None
    if ch in BIDI_CONTROLS:
        return (f"holds {char_name(ch)}, a bidirectional control character, which changes the order in which the "
                "text around it is displayed")
    if ch in JOINERS and not newlines:
        return (f"holds {char_name(ch)}, shown as {_escaped(ch)}: a name may not hold a joiner, since names become "
                "file names and must compare as one text only (description and notes may hold one between two "
                "letters or emoji)")
    if ch in JOINERS or ch in EMOJI_SELECTORS and newlines:
        return (f"holds {char_name(ch)}, shown as {_escaped(ch)}, where it joins nothing (at the start or end, "
                "doubled, or beside a space or punctuation), so it is invisible and makes the text look like another")
    if _INVISIBLE_RE.match(ch):
        return (f"holds {char_name(ch)}, shown as {_escaped(ch)}, an invisible character, which makes the text look "
                "like another")
    if NONCHARACTER.match(ch):
        return f"holds {char_name(ch)}, a Unicode noncharacter, {NONCHARACTER_WHY}"
    return f"holds the control character {char_name(ch)}, which would rewrite what the terminal and reports show"


def escape_unsafe(text: str, *, newlines: bool = False) -> str:
    """``text`` with each unsafe character (:func:`unsafe_char`) and each lone surrogate written as a visible
    escape: '\\n', '\\r', '\\t', '\\x1b', '\\u202e'; a byte that was not UTF-8 (PEP 383) as '\\xff'."""
    if not newlines:
        return _ESCAPED_NAME.sub(lambda m: _escaped(m.group()), text)
    return _ESCAPED_TEXT.sub(lambda m: m.group() if joined_here(text, m.start()) else _escaped(m.group()), text)


class OneLineNotes(list):
    """Note lines (:attr:`planner.core.reportset.ReportSet.notes`), each kept as one line: a note is stored as
    :func:`escape_unsafe` writes it, so a name from the file system that it quotes (a leftover staging folder's,
    a file's inside one) shows a line feed or tab as '\\n', '\\t' and cannot start a line of its own, on the
    terminal or in the API's ``notes`` (h24a N1). Escaping an escaped note again changes nothing."""

    def append(self, note: str) -> None:
        super().append(escape_unsafe(note))

    def extend(self, notes: Iterable[str]) -> None:
        super().extend(escape_unsafe(n) for n in notes)

    def insert(self, index: SupportsIndex, note: str) -> None:
        super().insert(index, escape_unsafe(note))

    def __iadd__(self, notes: Iterable[str]) -> OneLineNotes:  # type: ignore[override,misc]
        self.extend(notes)
        return self


#: The most characters of a text from a file that a message or report echoes (a real value, a quant_method
#: or an id, is a few dozen; a 100,000-character one would bury the message).
MAX_ECHO_CHARS = 80


def clip_text(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """``text`` as echoed in a message: whole when at most ``limit`` characters, else its first ``limit``
    and '... (N characters)'."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


#: In a repr, the escape of a lone surrogate U+DC80-U+DCFF ('\\udcff'), the form a byte that was not UTF-8
#: takes (PEP 383), after an even number of backslashes (an odd one is a backslash the text holds, doubled)
_REPR_BYTE = re.compile(r"(?<!\\)((?:\\\\)*)\\udc([89a-f][0-9a-f])")


def byte_escapes(message: str) -> str:
    """``message`` with each repr escape of a byte that was not UTF-8 ('\\udcff', PEP 383's surrogate escape, as
    ``repr()`` writes it in a message that quotes a value) written as the byte, '\\xff', as :func:`path_text`
    shows such a byte in a path; a backslash the value holds ('\\\\udcff' in the repr) is left alone."""
    return _REPR_BYTE.sub(lambda m: f"{m.group(1)}\\x{m.group(2)}", message)


def repr_text(value: object) -> str:
    """``repr(value)`` as a message quotes a value, a byte that was not UTF-8 shown as '\\xff'
    (:func:`byte_escapes`), not as Python's '\\udcff'."""
    return byte_escapes(repr(value))


def path_text(path: object) -> str:
    """A path as text a report or source can show: bytes that were not UTF-8 (held as surrogate escapes,
    PEP 383) as '\\xff', other lone surrogates as '\\ud800', control and bidirectional characters as
    :func:`escape_unsafe` writes them ('\\x1b', '\\u202e')."""
    text = str(path)
    try:
        raw = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return escape_unsafe(raw)



#: Characters a shell reads as themselves in a word, besides letters, digits and marks of any script.
_SHELL_PLAIN = frozenset("@%+=:,./_-")


def line_path(path: object) -> str:
    """``path`` as an error line shows it: escaped (:func:`escape_unsafe`), with './' put before a relative path that
    starts with '-' (Path('./-dash') is '-dash', which reads as an option: h38a 5)."""
    text = str(path)
    return escape_unsafe("./" + text if text.startswith("-") else text)


def path_word(path: str) -> str:
    """``path`` (as the user gave it, never normalised: './-t' keeps its './') as a shell word for a pasteable hint
    (:func:`shell_word`), with './' put before a relative path that starts with '-', so that no command reads it
    as an option (h33b m4: 'cp -t/gpus.yaml ...' took '-t' as cp's target-directory option)."""
    text = str(path)
    return shell_word("./" + text if text.startswith("-") else text)


def shell_word(text: str, *, quoted: bool = False) -> str:
    """``text`` (a path planner prints inside a command it suggests) as a shell word: as it is when it holds only
    letters, digits and combining marks of any script and ``@%+=:,./_-`` ('café/o', composed or
    decomposed) and ``quoted`` is False, else in single quotes as :func:`shlex.quote` writes them ('/tmp/o;rm x' ->
    ``'/tmp/o;rm x'``; ``quoted``: 'x/a/b' -> ``'x/a/b'``, as --out hints write a path, planner.core.outhint), and
    a character the terminal shows escaped in bash's ``$'...'`` (:func:`ansi_c_word`), so that a pasted hint runs
    nothing the path holds and names its very bytes (h29b M3, h36b m6, h37b m1)."""
    from shlex import quote

    if escape_unsafe(text) != text:  # a character the terminal shows escaped ('\xff', '\x1b'): in $'...' (h36b m6)
        return ansi_c_word(text)
    plain = text and all(c in _SHELL_PLAIN or c.isalnum() or unicodedata.category(c).startswith("M") for c in text)
    if plain and not quoted:
        return text
    return f"'{text}'" if "'" not in text else quote(text)  # (quote() leaves a word of its safe set bare)


def ansi_c_word(text: str) -> str:
    """``text`` (a path) in bash's ``$'...'`` quoting (bash(1), QUOTING: ``\\xHH`` is the byte HH, ``\\'`` a quote,
    ``\\\\`` a backslash): printable ASCII as itself, every other byte of the path as the file system takes it
    (os.fsencode: a byte that was not UTF-8, PEP 383, as itself; other characters as their UTF-8 bytes) as
    ``\\xHH``, so that pasting it names the same bytes whatever the terminal's locale ('ofx\\udcff' ->
    ``$'ofx\\xff'``; h36b m6: ``'ofx\\xff'`` named a folder of a backslash, 'x', 'f', 'f')."""
    import os

    try:
        raw = os.fsencode(text)
    except UnicodeEncodeError:  # a lone surrogate no file system name holds: as Python would write it
        raw = text.encode("utf-8", "surrogatepass")
    out = []
    for b in raw:
        c = chr(b)
        out.append("\\" + c if c in "'\\" else c if 0x20 <= b < 0x7F else f"\\x{b:02x}")
    return "$'" + "".join(out) + "'"
