"""Bidirectional controls anywhere in an input file (YAML, JSON, CSV): the "Trojan Source" pattern.

An explicit embedding, override or isolate (U+202A-U+202E, U+2066-U+2069) reorders the text an editor, a
terminal, ``cat`` or a code review shows: ``budget_usd: 5000 #<U+202E> 00005 :dsu_tegdub`` shows as
``budget_usd: 5000 # budget_usd: 50000`` while the file says 5000. In a comment the planner never reads it,
so no check on values sees it; it is refused in the file's text itself, wherever it stands (comments and quoted
texts too), as a line break editors do not show already is (:func:`planner.core.yamlrules.hidden_break`).

Sources: N. Boucher, R. Anderson, "Trojan Source: Invisible Vulnerabilities" (2021, arXiv:2111.00169,
trojansource.codes), its table of the directionality formatting characters (these nine), CVE-2021-42574; Unicode Standard Annex #9 "Unicode
Bidirectional Algorithm", section 2 "Directional Formatting Characters"; the Rust compiler refuses the same
nine in comments and literals (lints text_direction_codepoint_in_comment and ..._in_literal,
``rustc_ast::util::unicode::TEXT_FLOW_CONTROL_CHARS``). The implicit marks (U+200E, U+200F, U+061C) reorder
nothing around them by themselves and are left to the checks on names and texts.
"""

from __future__ import annotations

import re

from planner.core.names import char_name

__all__ = ["FILE_BIDI", "bidi_control", "bidi_problem"]

#: The explicit directional formatting characters (UAX #9, section 2): LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI.
FILE_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")

#: What to do about one.
BIDI_HINT = ("Remove it: a planner file needs none (right-to-left text is shown in its order without them), and "
             "with one, what an editor or a review shows is not what planner reads.")


def bidi_control(text: str) -> tuple[str, int, int] | None:
    """The first bidirectional control in ``text`` as (character, line, column), 1-based as an editor counts
    them (lines ended by LF; a CR before it counts as a character of its line); None when there is none."""
    m = None if text.isascii() else FILE_BIDI.search(text)  # the controls are all beyond ASCII
    if m is None:
        return None
    at = m.start()
    return m.group(), text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def bidi_problem(text: str) -> tuple[str, int, str] | None:
    """Why ``text`` (a whole input file) cannot be read when it holds a bidirectional control, as (problem, line,
    hint) at the first one; None when it holds none."""
    found = bidi_control(text)
    if found is None:
        return None
    ch, line, column = found
    return (f"holds {char_name(ch)} at line {line} column {column}, a bidirectional control, which makes editors "
            "and terminals show the text around it in another order than planner reads it (Trojan Source, "
            "CVE-2021-42574)", line, BIDI_HINT)
