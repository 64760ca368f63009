"""Catalogs already read and checked, kept by what they were read from in a memo the caller owns and passes
(:func:`remembered`), so that a caller that loads the catalog many times parses and checks each content once.

A load parses about 250 KB of YAML and checks about 1,600 entries (0.2 s); the default test run loads the catalog
about 1,900 times, and tests/conftest.py passes one memo for the session. :func:`remembered` reads every file's
bytes each time, with the reader's checks (planner.core.infile.read_input), and gives again the Catalog already
built from the same paths, the same bytes (their SHA-256) and the same UTC date (a price's ``as_of`` is checked
against today), while that Catalog's content still gives the fingerprint it was built with
(planner.catalog.fingerprint: one a caller changed in place, ``object.__setattr__``, is read again). A Catalog is
frozen, so the one given again is the same object.

This module keeps no state of its own (the memo is the caller's: issue 33, no module-level cache); importing it
does no work.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

#: How many checked catalogs are kept (the shipped one, and an overlay or two over it).
MEMO_SIZE = 4

def remembered(files: list[tuple[str, Path, bool]],
               read_all: Callable[[list[tuple[str, Path, bool]], list[Any]], Any], memo: dict) -> Any:
    """The Catalog of ``files`` ((catalog file name, path, read as overlay), in load order): the one already checked
    from the same files, bytes and date, found in ``memo``, else ``read_all(files, sources)``'s, kept there for the
    next call (at most :data:`MEMO_SIZE`, the last used kept).

    Args:
        memo: the caller's memo: (UTC date, ((file name, path, read as overlay, SHA-256 of its bytes), ...)) ->
            Catalog, the last used last.
        read_all: reads and checks the files in order, given each one's bytes as read here
            (a planner.core.infile.InputFile), or None for a file whose read failed: it reads that one again in its
            turn, so the error raised is the first one a sequential read meets.

    Raises:
        whatever ``read_all`` raises (CatalogError); a failed load is not kept.
    """
    from planner.catalog.fingerprint import content_fingerprint
    from planner.core import clock
    from planner.core.infile import FileProblem, read_input

    sources: list[Any] = []
    for _, path, _ in files:
        try:
            sources.append(read_input(path))
        except FileProblem:
            sources.append(None)
    key: tuple | None = None
    if all(src is not None for src in sources):
        key = (clock.utc_today(), tuple((name, str(path), over, src.sha256)
                                        for (name, path, over), src in zip(files, sources)))
        cat = memo.pop(key, None)
        if cat is not None and cat.checked and content_fingerprint(cat) == cat.checked:
            memo[key] = cat  # the last used, kept longest
            return cat
    cat = read_all(files, sources)
    if key is not None and cat.checked:
        memo[key] = cat
        while len(memo) > MEMO_SIZE:
            del memo[next(iter(memo))]
    return cat
