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
(planner.core.names.lookalike_note says why). TR39's whole-script confusables (an all-Cyrillic 'сор' for 'cop')
and the rest of confusables.txt need its data tables, which Python does not carry.
"""

from __future__ import annotations

import unicodedata

#: Characters that are assigned and printable but drawn as nothing or as a placeholder (module docstring).
NO_GLYPH = {"\ufffc": "a placeholder for an embedded object, drawn as nothing or as a box",
            "\U0001d159": "a musical symbol with no visible glyph"}

#: The scripts whose letters look like one another's (UTS #39, 5.2), by the first word of a letter's name:
#: Latin, Cyrillic and Greek, and Armenian and Lisu, whose letters confusables.txt maps to Latin ones
#: (:data:`PROTOTYPES`: Armenian 'օ' U+0585 to 'o', Lisu 'ꓲ' U+A4F2 to 'l') and which UTS #39's Highly
#: Restrictive level (5.2) never allows in one identifier with Latin.
_CONFUSABLE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "LISU")

#: Characters drawn like an ASCII character, each with the ASCII prototype Unicode Technical Standard #39
#: ("Unicode Security Mechanisms", section 4 "Confusable Detection") maps it to in confusables.txt
#: (https://www.unicode.org/Public/security/latest/confusables.txt; each line quoted beside it, "source ;
#: prototype ; MA"). A subset: the characters a hostile pass put into names (h12b #5) and their closest kin;
#: :func:`skeleton` applies it. The dash lookalikes are :data:`planner.core.names.DASH_LOOKALIKES`.
PROTOTYPES = {
    "\u2215": "/",  # 2215 ; 002F ; MA #* ( ∕ → / ) DIVISION SLASH → SOLIDUS
    "\u0589": ":",  # 0589 ; 003A ; MA #* ( ։ → : ) ARMENIAN FULL STOP → COLON
    "\u05c3": ":",  # 05C3 ; 003A ; MA #* ( ׃ → : ) HEBREW PUNCTUATION SOF PASUQ → COLON
    "\u02d0": ":",  # 02D0 ; 003A ; MA # ( ː → : ) MODIFIER LETTER TRIANGULAR COLON → COLON
    "\u02f8": ":",  # 02F8 ; 003A ; MA #* ( ˸ → : ) MODIFIER LETTER RAISED COLON → COLON
    "\u0251": "a",  # 0251 ; 0061 ; MA # ( ɑ → a ) LATIN SMALL LETTER ALPHA → LATIN SMALL LETTER A
    "\u0261": "g",  # 0261 ; 0067 ; MA # ( ɡ → g ) LATIN SMALL LETTER SCRIPT G → LATIN SMALL LETTER G
    "\u0131": "i",  # 0131 ; 0069 ; MA # ( ı → i ) LATIN SMALL LETTER DOTLESS I → LATIN SMALL LETTER I
    "\u0269": "i",  # 0269 ; 0069 ; MA # ( ɩ → i ) LATIN SMALL LETTER IOTA → LATIN SMALL LETTER I
    "\u026a": "i",  # 026A ; 0069 ; MA # ( ɪ → i ) LATIN LETTER SMALL CAPITAL I → LATIN SMALL LETTER I
    "I": "l",  # 0049 ; 006C ; MA # ( I → l ) LATIN CAPITAL LETTER I → LATIN SMALL LETTER L
    "1": "l",  # 0031 ; 006C ; MA # ( 1 → l ) DIGIT ONE → LATIN SMALL LETTER L
    "|": "l",  # 007C ; 006C ; MA #* ( | → l ) VERTICAL LINE → LATIN SMALL LETTER L
    "\u01c0": "l",  # 01C0 ; 006C ; MA # ( ǀ → l ) LATIN LETTER DENTAL CLICK → LATIN SMALL LETTER L
    "\u0196": "l",  # 0196 ; 006C ; MA # ( Ɩ → l ) LATIN CAPITAL LETTER IOTA → LATIN SMALL LETTER L
    "\u0399": "l",  # 0399 ; 006C ; MA # ( Ι → l ) GREEK CAPITAL LETTER IOTA → LATIN SMALL LETTER L
    "\u0406": "l",  # 0406 ; 006C ; MA # ( І → l ) CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I → ... L
    "\u04c0": "l",  # 04C0 ; 006C ; MA # ( Ӏ → l ) CYRILLIC LETTER PALOCHKA → LATIN SMALL LETTER L
    "\ua4f2": "l",  # A4F2 ; 006C ; MA # ( ꓲ → l ) LISU LETTER I → LATIN SMALL LETTER L
    "\u0585": "o",  # 0585 ; 006F ; MA # ( օ → o ) ARMENIAN SMALL LETTER OH → LATIN SMALL LETTER O
    "\u0555": "O",  # 0555 ; 004F ; MA # ( Օ → O ) ARMENIAN CAPITAL LETTER OH → LATIN CAPITAL LETTER O
    "\ua4f3": "O",  # A4F3 ; 004F ; MA # ( ꓳ → O ) LISU LETTER O → LATIN CAPITAL LETTER O
    "\ua4ee": "A",  # A4EE ; 0041 ; MA # ( ꓮ → A ) LISU LETTER A → LATIN CAPITAL LETTER A
    "\ua4f0": "E",  # A4F0 ; 0045 ; MA # ( ꓰ → E ) LISU LETTER E → LATIN CAPITAL LETTER E
}
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


def _no_glyph(name: str) -> tuple[str, str] | None:
    for ch in name:
        cat = unicodedata.category(ch)
        if cat == "Co":
            why = "a private-use character, which means nothing outside a private agreement and each font draws " \
                  "its own way (often as blank space)"
        elif cat == "Cn":
            why = (f"a code point not assigned in Unicode {unicodedata.unidata_version} (the version this Python "
                   "knows), which is drawn as nothing or as a box")
        elif ch in NO_GLYPH:
            why = NO_GLYPH[ch]
        else:
            continue
        return (f"'{_escaped(name, ch)}' holds {_char(ch)}, {why}, so the name looks like another or like none",
                "Remove it; a name is letters, digits and '-', e.g. 'chat-7b'.")
    return None


def _script(ch: str) -> str | None:
    word = unicodedata.name(ch, "").split(" ", 1)[0]
    return word if word in _CONFUSABLE_SCRIPTS else None


def _mixed_word(name: str) -> tuple[str, str] | None:
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
                f"looks like another name ({why})",
                f"Write the word in one script: type {''.join(dict.fromkeys(odd))!r} in {major.title()} letters.")
    return None


def lookalike_problem(name: str) -> tuple[str, str] | None:
    """Why ``name`` (a safe text: no control or invisible characters) would look like another name, as
    (problem, hint); None when it would not. See the module docstring for the rules and their sources."""
    if name.isascii():
        return None
    return _no_glyph(name) or _mixed_word(name)
