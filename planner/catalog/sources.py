"""The documents behind ``REF:<id>`` citations: a reader for a catalog's ``SOURCES.md``.

Catalog entries often cite a document by a short id instead of spelling it out, e.g.
``source: "REF:RAM-PRICES (gsmgotech.com, Dec 2025)"``; the ids are defined in the file
``SOURCES.md`` beside the catalog files (``catalog/SOURCES.md`` for the shipped catalog). A report
that only repeats the id cannot be traced by someone who holds the report alone, so the reports
look the ids up here and print the document with them (the workbook's Sources sheet).

The format (``catalog/SOURCES.md``) is a Markdown table, one row per id::

    | id | document | where |
    |---|---|---|
    | RAM-PRICES | 2025-2026 DRAM retail price reports: ... | |
    | EIA-EMU | EIA Electricity Monthly Update, end use ... | https://www.eia.gov/... |

Rules of :func:`parse_sources`:

- A table is a run of lines starting with ``|``. When its second line is the separator row
  (``|---|---|``), its first line is the header and names the columns: ``id`` (or ``ref``),
  ``document`` (or ``title``, ``description``, ``source``, ``text``) and ``where`` (or ``url``,
  ``urls``, ``link``, ``links``, ``location``), in any order and case. A table without a
  recognised header is read by position: id, document, where. Lines outside tables are prose
  and are ignored.
- Cells are trimmed; ``\\|`` is a literal bar; code spans lose their backticks. An id may be
  written ``REF:ID`` or ```ID```; ids are case-sensitive, as cited.
- Lines end at a line feed only (as editors count them); a line holding a control character other than
  tab, a line or paragraph separator, a bidirectional control or an invisible character is reported
  with its line and column in :attr:`SourceIndex.problems` and skipped.
- The first definition of an id wins; a later one, an empty id, or an id with characters
  :data:`REF_PATTERN` cannot cite is reported in :attr:`SourceIndex.problems` and skipped.
- Links (:func:`links_in`) are taken from the document and where cells: every ``http(s)://``
  URL; a GitHub location written ``github.com/OWNER/REPO `PATH` @COMMIT`` becomes
  ``https://github.com/OWNER/REPO/blob/COMMIT/PATH`` (``HEAD`` without a commit); a bare
  ``host.tld/a/b`` address (two path segments or more) gets ``https://``. Other text (a site
  name alone, ``site.com/othersite``) is not turned into a link; the cell's text is always kept
  as written.

:func:`sources_for_catalog` reads the ``SOURCES.md`` beside each directory of a catalog's files
(the shipped one, then an overlay's). An overlay's definitions come first, so an overlay may
redefine a shipped id, as its entries replace shipped entries. A missing or unreadable file never
raises: it is named in :attr:`SourceIndex.problems` (a catalog directory without one is only
noted in :attr:`SourceIndex.missing`), and the ids it would have defined stay undefined.

Free text without ``REF:`` is not a citation: :func:`ref_ids` finds nothing in it and callers
show it unchanged. Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from planner.core.frozenmap import FrozenMap
from planner.core.infile import FileProblem, read_input

#: The file beside a catalog's YAML files that defines its ``REF:`` ids.
SOURCES_FILE = "SOURCES.md"

#: A citation in a source text: ``REF:`` (not inside a word) and an id of letters, digits, '.', '_'
#: and '-' that starts and ends with a letter or digit (so 'REF:PCISIG.' at a sentence's end cites
#: 'PCISIG').
REF_PATTERN = re.compile(r"(?<![A-Za-z0-9_])REF:([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")

_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_SEPARATOR_CELL = re.compile(r":?-+:?")
_ID_HEADERS = ("id", "ref", "ref id", "reference")
_TEXT_HEADERS = ("document", "title", "description", "source", "text")
_WHERE_HEADERS = ("where", "url", "urls", "link", "links", "location")
#: Characters a link may hold (no spaces, quotes, angle brackets, backticks or bars).
_URL = re.compile(r"https?://[^\s<>\"'`|]+")
_GITHUB = re.compile(r"(?<![\w./-])github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?(?![\w.-])"
                     r"(?:\s+`([^`\s]+)`)?(?:\s+@([0-9a-fA-F]{7,40})(?![\w.-]))?")
#: A bare 'host.tld/a/b' address: at least two path segments, so 'site.com/othersite' (two sites
#: named together) is not taken for a page.
_BARE = re.compile(r"(?<![\w./@:-])((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+"
                   r"(?:com|org|net|gov|edu|int|io|dev|ai|eu|info|co|uk|de|fr|au|us)"
                   r"/[^\s<>\"'`|,;()/]+/[^\s<>\"'`|,;()]*)",
                   re.IGNORECASE)
_TRAILING = ".,;:!?)]}'\""


@dataclass(frozen=True)
class SourceDoc:
    """One ``REF:`` id as a ``SOURCES.md`` defines it.

    Attributes:
        id: the id as cited after ``REF:``, e.g. 'RAM-PRICES'.
        text: the document column as written (code-span backticks removed).
        where: the where column as written ('' when empty).
        urls: links found in ``text`` and ``where`` (:func:`links_in`), in order, without repeats.
        file: the ``SOURCES.md`` that defines the id, as its path was given.
        line: the definition's line in ``file`` (1-based).
    """

    id: str
    text: str
    where: str = ""
    urls: tuple[str, ...] = ()
    file: str = ""
    line: int = 0

    @property
    def title(self) -> str:
        """A short name for the document: :func:`short_title` of ``text``."""
        return short_title(self.text)


@dataclass(frozen=True)
class SourceIndex:
    """The ``REF:`` ids of one or more ``SOURCES.md`` files.

    Attributes:
        docs: id -> its definition (the first file read wins).
        files: the ``SOURCES.md`` files read, in the order they were consulted.
        missing: catalog directories without a ``SOURCES.md`` (paths of the file looked for).
        problems: what went wrong, one sentence each: a file that could not be read, a row
            that defines no usable id, an id defined twice. Never raised.
        skipped: id -> the problem of a row that would define it but is skipped for a character it holds
            (:func:`_editor_lines`), where no row defines it: so that a message about the id can say the row is
            there but skipped, and why (h33b m3), rather than that nothing defines it.
    """

    docs: Mapping[str, SourceDoc] = field(default_factory=lambda: FrozenMap({}))
    files: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    skipped: Mapping[str, str] = field(default_factory=lambda: FrozenMap({}))

    def get(self, ref_id: str) -> SourceDoc | None:
        """The definition of ``ref_id`` (without 'REF:'), or None."""
        return self.docs.get(ref_id)

    def __contains__(self, ref_id: object) -> bool:
        return ref_id in self.docs


def ref_ids(text: str | None) -> tuple[str, ...]:
    """The ids ``text`` cites as ``REF:<id>``, in order of first mention, without repeats.

    >>> ref_ids("REF:NV-GEFORCE-PAGES, REF:NV-AMPERE-WP; see REF:NV-AMPERE-WP.")
    ('NV-GEFORCE-PAGES', 'NV-AMPERE-WP')
    >>> ref_ids("vendor quote 17")
    ()
    """
    if not text:
        return ()
    return tuple(dict.fromkeys(REF_PATTERN.findall(str(text))))


def short_title(text: str, limit: int = 100) -> str:
    """The first phrase of a document's description, for a one-line pointer.

    Cut before the first ' (', ': ', '; ' or '. ' that leaves at least 20 characters, outside
    parentheses and quotes ("'"); then at most ``limit`` characters, at a word boundary, with
    '...' when shortened.

    >>> short_title("2025-2026 DRAM retail price reports: adamforga.com (Aug->Nov 2025 ...)")
    '2025-2026 DRAM retail price reports'
    """
    text = " ".join(str(text).split())
    for i in range(20, len(text)):
        if text.startswith((" (", ": ", "; ", ". "), i) and _balanced(text[:i]):
            text = text[:i]
            break
    if len(text) > limit:
        text = text[: limit - 3].rsplit(" ", 1)[0].rstrip(",;:") + "..."
    return text


def _trim(url: str) -> str:
    """``url`` without the punctuation of the sentence around it (a ')' it opened stays)."""
    while url and url[-1] in _TRAILING:
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


def _balanced(text: str) -> bool:
    """Whether ``text`` closes every parenthesis it opens and holds an even number of "'"."""
    depth = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0 and text.count("'") % 2 == 0


def links_in(*texts: str) -> tuple[str, ...]:
    """Links named in ``texts``, in order, without repeats (see the module docstring's rules).

    >>> links_in("github.com/dstackai/gpuhunt `src/gpuhunt/_internal/constraints.py` @35841515de37")
    ('https://github.com/dstackai/gpuhunt/blob/35841515de37/src/gpuhunt/_internal/constraints.py',)
    >>> links_in("product page (nvidia.com/en-us/data-center/h200)", "https://www.eia.gov/x.php?t=1")
    ('https://nvidia.com/en-us/data-center/h200', 'https://www.eia.gov/x.php?t=1')
    """
    found: list[str] = []
    for text in texts:
        if not text:
            continue
        taken: list[tuple[int, int]] = []  # spans already read as a link
        here: list[tuple[int, str]] = []  # (position in text, link)

        def free(start: int, end: int) -> bool:
            return all(end <= s or start >= e for s, e in taken)

        for m in _URL.finditer(text):
            url = _trim(m.group(0))
            if url.endswith("://"):
                continue
            taken.append(m.span())
            here.append((m.start(), url))
        for m in _GITHUB.finditer(text):
            if not free(*m.span()):
                continue
            owner, repo, path, commit = m.groups()
            url = f"https://github.com/{owner}/{repo}"
            if path:
                url += f"/blob/{commit or 'HEAD'}/{path.strip('/')}"
            elif commit:
                url += f"/tree/{commit}"
            taken.append(m.span())
            here.append((m.start(), url))
        for m in _BARE.finditer(text):
            if not free(*m.span()):
                continue
            taken.append(m.span())
            here.append((m.start(), "https://" + _trim(m.group(1))))
        found += [url for _, url in sorted(here)]
    return tuple(dict.fromkeys(found))


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row: split on bars not escaped with a backslash."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.replace("\\|", "|").strip() for c in re.split(r"(?<!\\)\|", body)]


def _plain(cell: str) -> str:
    """A cell's text without code-span backticks, spaces collapsed."""
    return " ".join(cell.replace("`", "").split())


def _columns(header: list[str]) -> tuple[int, int | None, int | None] | None:
    """(id, document, where) column indexes from a header row, or None when it names no id column."""
    names = [_plain(c).lower() for c in header]

    def first(options: tuple[str, ...]) -> int | None:
        return next((i for i, n in enumerate(names) if n in options), None)

    id_col = first(_ID_HEADERS)
    if id_col is None:
        return None
    return id_col, first(_TEXT_HEADERS), first(_WHERE_HEADERS)


def _editor_lines(text: str, file: str) -> tuple[list[str], dict[int, str]]:
    """``text`` split into lines as an editor counts them, at a line feed (a CR before it dropped), and the
    problem of each line holding a character the planner refuses in a text it shows, by line index.

    Python's str.splitlines also breaks at LINE TABULATION (VT), FORM FEED, the file and group separators,
    NEXT LINE U+0085 and the separators U+2028 and U+2029, which editors show inside a line: a table row
    holding one would be cut there and every later line numbered wrong. These characters, the other
    control characters, bidirectional controls and invisible characters (:func:`planner.core.names.unsafe_char`
    with tab allowed, as in a YAML text) are refused as the YAML reader refuses them, at the line and column
    an editor shows; the row is skipped.
    """
    from planner.core.names import char_name, unsafe_char

    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    bad: dict[int, str] = {}
    for n, line in enumerate(lines):
        ch = unsafe_char(line, newlines=True)
        if ch is not None:
            col = line.index(ch) + 1
            what = ("a line break to Python but not to editors" if ch in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
                    else "which a report would show escaped, not as written")
            bad[n] = (f"{file}:{n + 1}:{col}: holds {char_name(ch)}, {what}; the line is skipped: remove the "
                      "character (or write a space)")
    return lines, bad


def parse_sources(text: str, file: str = SOURCES_FILE) -> SourceIndex:
    """The ids ``text`` (a ``SOURCES.md``) defines; never raises (see the module docstring).

    Args:
        text: the file's content.
        file: the file's path as reports should name it.
    """
    docs: dict[str, SourceDoc] = {}
    problems: list[str] = []
    skipped: dict[str, str] = {}
    lines, bad = _editor_lines(text, file)
    problems += bad.values()
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("|"):
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].lstrip().startswith("|"):
            i += 1
        block = list(range(start, i))
        columns: tuple[int, int | None, int | None] = (0, 1, 2)
        if len(block) >= 2 and all(_SEPARATOR_CELL.fullmatch(c.replace(" ", "")) for c in _cells(lines[block[1]])):
            columns = _columns(_cells(lines[block[0]])) or columns
            block = block[2:]
        id_col, text_col, where_col = columns
        for n in block:
            if n in bad:  # refused above, with its line and column: not read as a definition, its id kept as skipped
                cells = _cells(lines[n])
                raw = _plain(cells[id_col]) if id_col < len(cells) else ""
                ref = raw[len("REF:"):] if raw.upper().startswith("REF:") else raw
                if _ID.fullmatch(ref):
                    skipped.setdefault(ref, bad[n])
                continue
            cells = _cells(lines[n])
            if all(_SEPARATOR_CELL.fullmatch(c.replace(" ", "")) for c in cells):
                continue
            raw = _plain(cells[id_col]) if id_col < len(cells) else ""
            ref = raw[len("REF:"):] if raw.upper().startswith("REF:") else raw
            if not _ID.fullmatch(ref):
                problems.append(f"{file}:{n + 1}: a table row without a usable id ({raw!r}); skipped")
                continue
            if ref in docs:
                problems.append(f"{file}:{n + 1}: id {ref} is also defined on line {docs[ref].line}; "
                                "the first definition is used")
                continue
            doc_text = _plain(cells[text_col]) if text_col is not None and text_col < len(cells) else ""
            where = _plain(cells[where_col]) if where_col is not None and where_col < len(cells) else ""
            urls = links_in(cells[text_col] if text_col is not None and text_col < len(cells) else "",
                            cells[where_col] if where_col is not None and where_col < len(cells) else "")
            docs[ref] = SourceDoc(ref, doc_text, where, urls, file, n + 1)
    if not docs and not problems:
        problems.append(f"{file}: defines no ids (expected a Markdown table '| id | document | where |')")
    return SourceIndex(FrozenMap(docs), (file,), (), tuple(problems),
                       FrozenMap({k: v for k, v in skipped.items() if k not in docs}))


def read_sources(path: str | Path, shown: str | None = None) -> SourceIndex:
    """:func:`parse_sources` of the file at ``path``; a file that cannot be read gives an index
    with no ids, the file in :attr:`SourceIndex.missing` when it does not exist, and a problem
    naming it. ``shown``: the path as reports name it (default ``path``)."""
    name = shown if shown is not None else str(path)
    try:
        raw = read_input(Path(path)).data  # once, bounded; devices and named pipes refused
    except FileProblem as exc:
        if exc.problem == "no such file":
            return SourceIndex(missing=(name,), problems=(f"{name}: no such file",))
        problem = exc.problem if exc.problem.startswith("cannot be read") else f"cannot be read: {exc.problem}"
        return SourceIndex(problems=(f"{name}: {problem}",))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        # read on, each bad byte as U+FFFD, so the ids it defines stay cited; the problem says so (the
        # Sources sheet, 'planner catalog check' and the plan's warnings name it)
        line = raw[: exc.start].count(b"\n") + 1
        index = parse_sources(raw.decode("utf-8", errors="replace"), name)
        return replace(index, problems=(f"{name}:{line}: is not UTF-8 text (byte 0x{raw[exc.start]:02x}); read with "
                                        "each bad byte as U+FFFD: save it as UTF-8",) + index.problems)
    return parse_sources(text, name)


def merge(indexes: Iterable[SourceIndex]) -> SourceIndex:
    """One index from several, the first definition of an id winning (an earlier index first)."""
    docs: dict[str, SourceDoc] = {}
    files: list[str] = []
    missing: list[str] = []
    problems: list[str] = []
    skipped: dict[str, str] = {}
    for index in indexes:
        for ref, doc in index.docs.items():
            docs.setdefault(ref, doc)
        for ref, why in index.skipped.items():
            skipped.setdefault(ref, why)
        files += [f for f in index.files if f not in files]
        missing += [f for f in index.missing if f not in missing]
        problems += [p for p in index.problems if p not in problems]
    return SourceIndex(FrozenMap(docs), tuple(files), tuple(missing), tuple(problems),
                       FrozenMap({k: v for k, v in skipped.items() if k not in docs}))


def shown_catalog_path(name: str) -> str:
    """A catalog path as people read it: relative to the current directory when inside it,
    else 'catalog/<file>' for the shipped catalog, else as given."""
    p = Path(name)
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        pass
    shipped = Path(__file__).resolve().parents[2] / "catalog"  # the checkout's catalog/ beside planner/
    try:
        return "catalog/" + p.resolve().relative_to(shipped).as_posix()
    except (ValueError, OSError):
        return str(name)


def catalog_folders(catalog_files: Iterable[str | Path]) -> list[Path]:
    """The folders a catalog's files were read from, in load order: the shipped catalog first, then
    the overlay's (``--catalog DIR``), each once (:attr:`planner.catalog.loader.Catalog.files`)."""
    dirs: list[Path] = []
    for f in catalog_files:
        d = Path(f).parent
        if d not in dirs:
            dirs.append(d)
    return dirs


def sources_for_catalog(catalog_files: Iterable[str | Path], show: Callable[[str], str] | None = None,
                        default_dir: str | Path | None = None) -> SourceIndex:
    """The ``REF:`` ids a catalog can cite: the ``SOURCES.md`` of every directory its files are in.

    Directories are taken in the catalog's load order (shipped first, then the overlay) and
    consulted in reverse, so an overlay's ``SOURCES.md`` is read first and its definitions win.
    The first directory (the shipped catalog) must have a ``SOURCES.md``: a missing one is a
    problem. A later one (an overlay) without it is only noted in ``missing``; its entries may
    cite the shipped ids.

    Args:
        catalog_files: the catalog's files (:attr:`planner.catalog.loader.Catalog.files`).
        show: gives a SOURCES.md path the name reports print (e.g. 'catalog/SOURCES.md');
            default: the path as built from the catalog's.
        default_dir: the directory to read when ``catalog_files`` is empty (a catalog built in
            code); None: no file is read.
    """
    dirs = catalog_folders(catalog_files)
    if not dirs and default_dir is not None:
        dirs.append(Path(default_dir))
    indexes = []
    for n, d in reversed(list(enumerate(dirs))):
        path = d / SOURCES_FILE
        name = show(str(path)) if show is not None else str(path)
        index = read_sources(path, name)
        if n > 0 and index.missing:
            index = SourceIndex(missing=index.missing)  # an overlay need not define ids of its own
        indexes.append(index)
    return merge(indexes)
