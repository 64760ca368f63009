"""The cheap gates in front of the whole-file scans of every YAML file planner reads (catalog files
included, on every load): planner.core.yamllookalike._may_slip searches only the lines that hold a
lookalike, and an ASCII text skips the searches for lookalikes, bidirectional controls and hidden
line breaks (all beyond ASCII, but CR). Each gate must answer what the full search answers: checked
here against it on random texts over an alphabet of the characters those patterns turn on."""

from __future__ import annotations

import random

from planner.core import bidi, yamllookalike, yamlrules

# the structure characters of the patterns, plain letters, and one of each lookalike kind, a bidi
# control, the hidden breaks and a harmless non-ASCII letter
ALPHABET = [" ", " ", "\n", "\n", "-", ":", "{", ",", "a", "k", "_", "1", "#", "\r",
            "\u00a0", "\u3000", "\uff1a", "\u2236", "\u2013", "\u2212", "\u202e", "\u2028", "\x85", "\u00e9"]


def _texts(n: int = 4000, seed: int = 7):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
    # lines a slip is made of, each with and without a lookalike
    yield from ["model:\u00a0x\n", "  - task\uff1a train\n", "a: 1\n\u2013 b\n", "{x: 1, y\u2236 2}", "k: v\n\u00a0k2: w",
                "notes: 1:\u00a02\n", "a: b\n" * 50 + "c\u2013d: e\n"]


def test_the_lookalike_gate_answers_what_the_full_search_answers():
    for text in _texts():
        assert yamllookalike._may_slip(text, False) == bool(yamllookalike._WHERE.search(text)), repr(text)
        assert yamllookalike._may_slip(text, True) == bool(yamllookalike._ANY.search(text)), repr(text)


def test_the_ascii_fast_paths_answer_what_the_searches_answer():
    for text in _texts():
        m = yamlrules._HIDDEN_BREAK.search(text)
        assert (yamlrules.hidden_break(text) is None) == (m is None), repr(text)
        assert (bidi.bidi_control(text) is None) == (bidi.FILE_BIDI.search(text) is None), repr(text)


def test_every_character_the_gates_skip_for_ascii_is_beyond_ascii():
    # the ASCII shortcut holds only while every lookalike, bidi control and hidden break but CR is non-ASCII
    assert not any(c.isascii() for c in yamllookalike.SPACES + yamllookalike.COLONS + yamllookalike.DASHES)
    assert not any(chr(c).isascii() for c in range(0x10000) if bidi.FILE_BIDI.match(chr(c)))
    assert [chr(c) for c in range(0x80) if yamlrules._HIDDEN_BREAK.match(chr(c) + "x")] == ["\r"]
