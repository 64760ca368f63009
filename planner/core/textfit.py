"""Text that fits the terminal: the width, sentences wrapped with a hanging indent, tables whose
long cells wrap inside their column (issue 19, item 3).

Nothing is cut: a line too long is wrapped, a table too wide has its widest text columns wrapped
and, when even that is too wide, its columns split into blocks that each repeat the key column
(as pandas splits a frame wider than ``display.width``). Stdlib only (``shutil``, ``textwrap``),
so ``planner estimate`` stays free of pandas.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Iterable, Sequence

from planner.core.escape import terminal_text

#: The width when the terminal's is unknown (not a TTY and no COLUMNS).
DEFAULT_WIDTH = 100
#: Below this the text is still wrapped at this width: narrower makes every word its own line.
MIN_WIDTH = 30
#: A table cell's word longer than this may be broken inside (URLs, long paths).
MAX_UNBROKEN = 30

_NUMBER = re.compile(r"^[-+]?\$?[\d,]*\.?\d+(e[-+]?\d+)?%?$")
_BULLET = re.compile(r"^(\s*)(- |\* |\[\d+\] )")


def terminal_width() -> int:
    """The terminal's width in characters: ``COLUMNS`` when set, else the terminal's own, else
    :data:`DEFAULT_WIDTH` (``shutil.get_terminal_size`` semantics; at least :data:`MIN_WIDTH`)."""
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def wrap_line(line: str, width: int) -> list[str]:
    """One line as lines of at most ``width`` characters, each word kept whole where it fits.

    The continuation lines hang: they take the line's own indent plus two spaces, or the indent
    of the text after a bullet ('- ', '[3] '). Words are not broken at hyphens (catalog ids such
    as rtx-3060-12gb stay whole); a word longer than the line is broken, never dropped. A line too
    long has its runs of blanks after the indent squeezed to one space first (:func:`squeeze_blanks`).
    """
    if len(line) <= width:
        return [line]
    line = squeeze_blanks(line)  # a run of blanks would start a line with the text after it (h10b #2)
    lead = re.match(r"\s*", line).group(0)
    if len(line) <= width:
        return [line]
    m = _BULLET.match(line)
    hang = " " * len(m.group(0)) if m else lead + "  "
    if len(hang) > width // 2:
        hang = " " * (width // 2)
    return textwrap.wrap(line, width, initial_indent="", subsequent_indent=hang, break_on_hyphens=False,
                         break_long_words=True, drop_whitespace=True) or [line[:width]]


#: A run of two or more characters drawn as blank space (whitespace, category Zs, the Braille blank U+2800, the
#: Hangul fillers: :func:`planner.core.names.is_blank_looking`).
_BLANK_RUN = re.compile(r"[\s\u2800\u115f\u1160\u3164\uffa0]{2,}")


def squeeze_blanks(text: str) -> str:
    """``text`` with each run of two or more blank-looking characters as one space: a text from a file (a
    description, notes) wrapped with a run of 150 spaces in it would start a line of its own with whatever
    follows the run ('Total: $99.00'), where it looks like a line the planner printed (h10b #2). Only text
    that is wrapped is squeezed; the reports (JSON, CSV, workbook) keep the text as written."""
    body = text.lstrip(" ")
    return text[:len(text) - len(body)] + _BLANK_RUN.sub(" ", body)


def fit_text(text: str, width: int) -> str:
    """Every line of ``text`` that is longer than ``width`` wrapped by :func:`wrap_line`; the rest as is. The
    lengths are those of the text as the terminal shows it, control characters as their visible escapes
    (:func:`planner.core.escape.terminal_text`, which the result has already gone through): wrapped before
    escaping, ``\x07`` x 20 would push a line 60 characters past the width (h18b minor b)."""
    return "\n".join(out for line in terminal_text(text, newlines=True).split("\n")
                     for out in wrap_line(line.rstrip(), width))


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def fit_table(columns: Sequence[str], rows: Sequence[Sequence[str]], width: int, *,
              right: Iterable[int] | None = None, key: int = 1) -> str:
    """Cells (strings) as a table at most ``width`` characters wide, with every character kept.

    Args:
        columns: the headers.
        rows: the cells, one list per row, already formatted.
        width: the widest a line may be.
        right: the indices of right-aligned columns (default: those whose every non-empty cell is
            a number).
        key: how many leading columns name the row; a table split into blocks repeats them.

    Runs of blanks inside a cell are squeezed to one space (:func:`squeeze_blanks`). Text columns are left-aligned and wrapped at spaces (the widest first, down to their longest
    word, at most :data:`MAX_UNBROKEN`); numbers are never wrapped. A header rule follows the
    headers; when a row takes more than one line, a blank line separates the rows.
    """
    n = len(columns)
    # measured as the terminal shows them: a control character is 4-6 characters once escaped (h18b minor b)
    columns = [terminal_text(c, newlines=True) for c in columns]
    cells = [[terminal_text(squeeze_blanks(str(c)), newlines=True) for c in row] for row in rows]
    if right is None:
        right = {i for i in range(n) if all(_is_number(r[i]) for r in cells if r[i].strip())
                 and any(r[i].strip() for r in cells)}
    right = set(right)
    natural = [max([len(columns[i])] + [len(r[i]) for r in cells]) for i in range(n)]
    least = []
    for i in range(n):
        if i in right:
            least.append(max([_longest_word(columns[i])] + [len(r[i]) for r in cells]))
        else:
            least.append(min(natural[i], max(1, min(MAX_UNBROKEN, max(
                [_longest_word(columns[i])] + [_longest_word(r[i]) for r in cells])))))
    key = max(0, min(key, n - 1))
    for i in range(key):  # the key names the row: its words (ids) whole where each takes at most half the width
        least[i] = max(least[i], min(max([_longest_word(columns[i])] + [_longest_word(r[i]) for r in cells]),
                                     width // 2))
    least = [min(x, width) for x in least]
    keys = list(range(key))
    groups: list[list[int]] = []
    current = list(keys)
    for i in range(key, n):
        need = sum(least[j] for j in current) + len(current) + least[i]
        if need > width and len(current) > key:
            groups.append(current)
            current = keys + [i]
        else:
            current.append(i)
    groups.append(current)
    blocks = [_layout(columns, cells, g, natural, least, right, width) for g in groups]
    return "\n\n".join(blocks)


def _layout(columns: Sequence[str], cells: list[list[str]], group: list[int], natural: list[int],
            least: list[int], right: set[int], width: int) -> str:
    """The columns ``group`` of the table, their widths shrunk (widest text column first) to ``width``."""
    widths = {i: natural[i] for i in group}
    avail = width - (len(group) - 1)
    while sum(widths.values()) > avail:
        shrinkable = [i for i in group if widths[i] > least[i]]
        if not shrinkable:
            break
        i = max(shrinkable, key=lambda j: (widths[j], -j))
        widths[i] -= 1
    while sum(widths.values()) > avail:  # even the longest words do not fit: break them
        i = max(group, key=lambda j: (widths[j], -j))
        if widths[i] <= 4:
            break
        widths[i] -= 1

    def wrap(text: str, i: int) -> list[str]:
        if len(text) <= widths[i]:
            return [text]
        return textwrap.wrap(text, widths[i], break_on_hyphens=False, break_long_words=True) or [""]

    def lines(row: Sequence[str]) -> list[str]:
        parts = [wrap(row[i], i) for i in group]
        height = max(len(p) for p in parts)
        out = []
        for k in range(height):
            line = []
            for i, p in zip(group, parts):
                text = p[k] if k < len(p) else ""
                line.append(text.rjust(widths[i]) if i in right else text.ljust(widths[i]))
            out.append(" ".join(line).rstrip())
        return out

    head = lines(list(columns))
    body = [lines(r) for r in cells]
    rule = " ".join("-" * widths[i] for i in group)
    # continuation lines leave the first column blank, unless it wraps too: then a blank line parts the rows
    tall = any(len(wrap(r[group[0]], group[0])) > 1 for r in cells)
    out = head + [rule]
    for k, b in enumerate(body):
        if tall and k:
            out.append("")
        out += b
    return "\n".join(out)
