"""Characters and script mixes that make one name look like another (or like none), for names only.

:func:`planner.core.names.name_problem` consults :func:`lookalike_problem` after its blank-edge rule.
Two kinds of name are refused:

- A name holding a character with no glyph of its own: a private-use character (category Co: "no
  semantics outside a private agreement", The Unicode Standard 15.0, 23.5 "Private-Use Characters"; fonts
  draw it differently, often as blank space), a code point unassigned in the Unicode version this Python
  knows (category Cn, ``unicodedata.unidata_version``), U+FFFC OBJECT REPLACEMENT CHARACTER (a placeholder for
  an object that is not there, ibid. 23.8 "Specials") or U+1D159 MUSICAL SYMBOL NULL NOTEHEAD ("no visible glyph
  appearance", yet not default-ignorable: K. Whistler, Unicode mailing list, 2016-09-15,
  corp.unicode.org/pipermail/unicode/2016-September/003953.html). Control, format and other default-ignorable
  characters are refused before this (:func:`planner.core.names.unsafe_char`).
- A word (a run of letters, marks and digits) that mixes Latin, Cyrillic, Greek, Armenian and Lisu letters, as
  Cyrillic 'с' U+0441 in Latin 'chat' or Armenian 'օ' U+0585 in 'ok': Unicode Technical Standard #39, "Unicode
  Security Mechanisms", 5.2 "Restriction-Level Detection": even the Moderately Restrictive level, the loosest but
  one, allows Latin with one other script only "except Cyrillic, Greek", the scripts whose letters look like Latin
  ones; the Highly Restrictive level allows Latin only with Han, Hiragana, Katakana, Bopomofo or Hangul, and
  confusables.txt maps Armenian and Lisu letters to Latin ones (:data:`PROTOTYPES`). The rule is applied per
  word (a name such as 'llama-2-7b для чата' is fine), on the name in NFKC (full-width and mathematical
  letters are Latin or Greek letters there). A letter's script is the first word of its Unicode name (LATIN,
  CYRILLIC, GREEK, ARMENIAN, LISU), which Python's unicodedata gives; other scripts are not looked at.

Two names that are drawn alike though each passes (Latin 'chɑt' with U+0251 LATIN SMALL LETTER ALPHA and
'chat'; 'team-ꓲ' with Lisu U+A4F2 alone in its word and 'team-I') have one :func:`skeleton` (TR39, section 4,
over the confusables.txt lines in :data:`PROTOTYPES`): the scenario reader refuses two workloads so named
(planner.core.names.lookalike_note says why). Only prototypes of ASCII are kept (a name
drawn like an ASCII name is the attack; two names drawn like one Cyrillic or Greek name are not caught), and
so an all-Cyrillic 'сор' clashes with 'cop' too. Characters confusables.txt has no line for are not caught:
U+02CD MODIFIER LETTER LOW MACRON (version 17.0.0 lists U+07FA and U+FE4D-U+FE4F as lookalikes of '_', not it).
"""

from __future__ import annotations

import unicodedata

from planner.core.confusables import ascii_prototypes

#: Characters that are assigned and printable but drawn as nothing or as a placeholder (module docstring).
NO_GLYPH = {"\ufffc": "a placeholder for an embedded object, drawn as nothing or as a box",
            "\U0001d159": "a musical symbol with no visible glyph"}

#: The scripts whose letters look like one another's (UTS #39, 5.2), by the first word of a letter's name:
#: Latin, Cyrillic and Greek, and Armenian and Lisu, whose letters confusables.txt maps to Latin ones
#: (:data:`PROTOTYPES`: Armenian 'օ' U+0585 to 'o', Lisu 'ꓲ' U+A4F2 to 'l') and which UTS #39's Highly
#: Restrictive level (5.2) never allows in one identifier with Latin.
_CONFUSABLE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "LISU")

#: Characters drawn like ASCII ones, each with the ASCII prototype Unicode Technical Standard #39 ("Unicode Security
#: Mechanisms", section 4 "Confusable Detection") gives it in confusables.txt: the lines of version 17.0.0 whose
#: prototype is ASCII (:mod:`planner.core.confusables`; "2215 ; 002F ; MA # ( ∕ → / ) DIVISION SLASH → SOLIDUS",
#: "0251 ; 0061 ; MA # ( ɑ → a ) LATIN SMALL LETTER ALPHA", "A4F2 ; 006C ; MA # ( ꓲ → l ) LISU LETTER I",
#: "0049 ; 006C ; MA # ( I → l ) LATIN CAPITAL LETTER I", "006D ; 0072 006E ; MA # ( m → rn )"). :func:`skeleton`
#: applies it.
PROTOTYPES = ascii_prototypes()
_PROTOTYPE_FOLD = str.maketrans(PROTOTYPES)


def skeleton(text: str) -> str:
    """UTS #39's skeleton of ``text`` (section 4, "Confusable Detection": Unicode NFD, each character replaced by
    its prototype, NFD again) over :data:`PROTOTYPES`, after Unicode NFKC (full-width and other compatibility
    forms are their plain letters first, as names are compared): two names with one skeleton are drawn alike
    ('chɑt' and 'chat', 'team-ꓲ' and 'team-I'). The skeleton is for comparing only, never shown."""
    nfd = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text))
    return unicodedata.normalize("NFD", nfd.translate(_PROTOTYPE_FOLD))


def _escaped(text: str, bad: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if c in bad and ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" if c in bad else c
                   for c in text)


def _char(ch: str, sep: str = " (", end: str = ")") -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f"{sep}{name}{end}" if name else "")


def no_glyph_char(text: str) -> str | None:
    """The first character of ``text`` with no glyph of its own (private use, unassigned, or :data:`NO_GLYPH`:
    U+1D159), or None; for texts other than names that a listing shows (an output folder's name)."""
    return next((ch for ch in text if unicodedata.category(ch) in ("Co", "Cn") or ch in NO_GLYPH), None)


def glyph_reason(ch: str) -> str | None:
    """Why ``ch`` has no glyph of its own to be read by (private use, Co; unassigned in the Unicode version Python
    knows, Cn; :data:`NO_GLYPH`), or None when it has one."""
    cat = unicodedata.category(ch)
    if cat == "Co":
        return ("a private-use character, which means nothing outside a private agreement and each font draws its "
                "own way (often as blank space)")
    if cat == "Cn":
        return (f"a code point not assigned in Unicode {unicodedata.unidata_version} (the version this Python "
                "knows), which is drawn as nothing or as a box")
    return NO_GLYPH.get(ch)


def _no_glyph(name: str) -> tuple[str, str] | None:
    for ch in name:
        why = glyph_reason(ch)
        if why is None:
            continue
        return (f"'{_escaped(name, ch)}' holds {_char(ch)}, {why}, so the name looks like another or like none",
                "Remove it; a name is letters, digits and '-', e.g. 'chat-7b'.")
    return None


def _script(ch: str) -> str | None:
    word = unicodedata.name(ch, "").split(" ", 1)[0]
    return word if word in _CONFUSABLE_SCRIPTS else None


def mixed_script_problem(text: str, what: str = "text") -> tuple[str, str] | None:
    """Why a one-line text other than a name (an extras description or category, a catalog GPU, platform or part
    name, an mpn, a seller: ``what`` names it, "text" by default) mixes Latin, Cyrillic, Greek, Armenian and Lisu
    letters in one word, as (problem, hint); None when it does not. The rule names use (module docstring; UTS #39, 5.2), so that
    'NVMe SSD 4 \u0422B' (Cyrillic Te) or an mpn '100-100001277W\u041eF' (Cyrillic O) is refused: the Quote prints
    it as an item, and a part number with a lookalike finds nothing, or another part, at a distributor (h15b #8).
    A word all in one script ('\u0434\u0438\u0441\u043a') passes."""
    if text.isascii():
        return None
    return _mixed_word(text, what)


def _mixed_word(name: str, what: str = "name") -> tuple[str, str] | None:
    text = unicodedata.normalize("NFKC", name)
    # the words: runs of letters, marks and digits (categories L*, M*, N*: digits are of no script, as UTS #39's
    # Common); anything else separates them
    words = "".join(ch if unicodedata.category(ch)[0] in "LMN" else " " for ch in text).split()
    for word in words:
        by_script: dict[str, list[str]] = {}
        for ch in word:
            script = _script(ch)
            if script is not None:
                by_script.setdefault(script, []).append(ch)
        if len(by_script) < 2:
            continue
        # the script of fewer letters is the odd one out ('сhat': one Cyrillic letter among Latin ones)
        major, *minor = sorted(by_script, key=lambda s: (-len(by_script[s]), s != "LATIN", s))
        odd = [ch for s in minor for ch in by_script[s]]
        scripts = " and ".join(s.title() for s in sorted(by_script))
        shown = ", ".join(_char(ch, " ", "") for ch in dict.fromkeys(odd))
        where = "" if word == text else f" ({word!r})"
        why = ("Unicode TR39, 5.2: Latin, Cyrillic and Greek letters look alike and are not mixed"
               if set(by_script) <= {"LATIN", "CYRILLIC", "GREEK"} else
               "Unicode TR39: confusables.txt lists Armenian and Lisu letters as lookalikes of Latin ones, and its "
               "Highly Restrictive level (5.2) does not mix them with Latin")
        return (f"{name!r} mixes {scripts} letters in one word{where}: {shown} among {major.title()} ones, so it "
                f"looks like another {what} ({why})",
                f"Write the word in one script: type {''.join(dict.fromkeys(odd))!r} in {major.title()} letters.")
    return None


def lookalike_problem(name: str) -> tuple[str, str] | None:
    """Why ``name`` (a safe text: no control or invisible characters) would look like another name, as
    (problem, hint); None when it would not. See the module docstring for the rules and their sources."""
    if name.isascii():
        return None
    return _no_glyph(name) or _mixed_word(name)


#: The compatibility forms a label shown as a purchase item may not hold for a letter or digit: full-width and
#: half-width forms (decomposition tags <wide>, <narrow>) and mathematical letters (<font>), which Unicode NFKC
#: (UAX #15) folds to the plain ASCII letter or digit ('\uff14' FULLWIDTH DIGIT FOUR is '4'): 'NVIDIA L\uff14' or 'SSD
#: \uff14 TB' on a Quote finds nothing, or another part, at a seller (h16b #3). Punctuation in those forms
#: (CJK prose writes '\uff08' for '(') is left to the text.
_FOLDED_TAGS = ("<wide>", "<narrow>", "<font>")


def _folded_ascii(ch: str) -> str | None:
    """The ASCII letter or digit a full-width, half-width or mathematical ``ch`` is drawn as (:data:`_FOLDED_TAGS`),
    or None."""
    if ch.isascii() or not unicodedata.decomposition(ch).startswith(_FOLDED_TAGS):
        return None
    folded = unicodedata.normalize("NFKC", ch)
    return folded if folded.isascii() and folded.isalnum() else None


def width_problem(text: str, what: str = "text") -> tuple[str, str] | None:
    """Why a one-line label shown as a purchase item (a catalog GPU, platform or part ``name``, a ``seller``, an
    extras ``description``: ``what`` names it) holds a letter or digit in a full-width, half-width or mathematical
    form (:data:`_FOLDED_TAGS`), as (problem, hint) with the text in ASCII letters as the hint; None when it
    does not."""
    if text.isascii():
        return None
    odd = [ch for ch in text if _folded_ascii(ch)]
    if not odd:
        return None
    fixed = "".join(_folded_ascii(ch) or ch for ch in text)
    shown = ", ".join(_char(ch) for ch in dict.fromkeys(odd))
    return (f"'{_escaped(text, ''.join(odd))}' holds {shown}, a letter or digit in a compatibility form that Unicode "
            f"NFKC reads as ASCII {''.join(_folded_ascii(ch) or '' for ch in dict.fromkeys(odd))!r}, so the {what} "
            "looks like another and a search for it finds nothing or another part",
            f"Write it with ASCII letters and digits: {what}: {fixed!r}.")
