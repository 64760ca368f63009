"""Reading a SkyPilot ``vms.csv`` into its header and rows (planner.catalog.skypilot's import).

The file is read once with a size cap (:data:`MAX_CSV_BYTES`), decoded as UTF-8 and parsed with Python's
``csv`` module (its default dialect: RFC 4180 quoting, which is how SkyPilot's catalog writes its files with
pandas' ``to_csv``). What it refuses, each with the file and line: a header wider than :data:`MAX_COLUMNS`, a
column named twice, a required column missing, a value longer than the ``csv`` module takes in one field
(``csv.field_size_limit()``, 131,072 characters by default), a '"' that opens a value running on over lines,
a NUL anywhere (refused at its line and column before parsing: the csv module would drop the rest of its line),
and, counted as the rows are read, more than :data:`MAX_ROWS_PER_INSTANCE` rows of one instance type,
:data:`MAX_INSTANCE_TYPES` instance types or :data:`MAX_UNREADABLE_ROWS` rows it cannot read (h33b N5, N6). Blank
lines are passed over before the csv module sees them. A row it cannot read is kept with its reason (``_bad``) for
the importer to leave out.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from planner.core.names import unsafe_problem

#: The most bytes a vms.csv may have (read at most one byte past it). SkyPilot's largest v8 files are AWS's,
#: 3,113,907 bytes (3.0 MiB), and GCP's, 2,203,095 bytes (2.1 MiB) (skypilot-org/skypilot-catalog,
#: catalogs/v8/aws/vms.csv @e385a0d3, catalogs/v8/gcp/vms.csv @8427bbff); 8 MiB leaves 2.7 times AWS's. It was
#: 32 MiB until h33b N5/N6: the rows of a file that size (half a million zone rows, or 15 million one-'"' rows)
#: took over a minute and gigabytes, whereas 8 MiB of the costliest rows reads in well under 30 s.
MAX_CSV_BYTES = 8 * 2**20
#: The most rows one instance type may have (h33b N5): a vms.csv lists one row per instance type and zone, and AWS's
#: most-offered types have about 100 zones (local zones included), so 2,000 is 20 times that. Rows without an
#: instance type (GCP's GPU rows) are counted per accelerator and count.
MAX_ROWS_PER_INSTANCE = 2000
#: The most instance types one file may name (h33b N5): SkyPilot's AWS file names about 900, GCP's fewer. Each one
#: left out is a row of the summary's input; 100,000 of them (a 4 MB file) read in under 20 s on 2 cores.
MAX_INSTANCE_TYPES = 100_000
#: The most rows a file may hold that cannot be read (a row of the wrong width, a value that is not a number, a
#: '"' that runs on over lines: each left out with its reason). A SkyPilot vms.csv has none; past this the file is
#: refused in one line rather than each row kept with its reason (h33b N6: 15 million one-'"' rows took 4.8 GB).
MAX_UNREADABLE_ROWS = 2000

#: Columns every provider's file must have (read by name).
REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Price",
                    "SpotPrice", "Region")
#: Numeric columns: a value there is a number or empty.
NUMERIC_COLUMNS = ("AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "SpotPrice")

#: The most columns a header may name. SkyPilot's v8 vms.csv files have 9 (Lambda) to 11 (AWS) columns
#: (planner.catalog.skypilot_layout.HEADERS, from catalogs/v8/<cloud>/vms.csv, REF:SKY-SCHEMA-v8); 256 leaves room
#: for columns a later schema adds, while a header of a million columns (an 8.9 MB file, under
#: :data:`MAX_CSV_BYTES`) is refused at once rather than read.
MAX_COLUMNS = 256
#: The most commas one line may hold: :data:`MAX_COLUMNS` columns with up to 15 commas inside each (quoted)
#: value (SkyPilot's GpuInfo holds 5 or so per GPU kind). Checked before the csv module splits the line, so
#: a line of 30 million commas is refused in one pass, rather than split into a list of 30 million fields
#: (8 bytes each: 16 times the file's size in memory) only to be left out as too wide.
MAX_LINE_COMMAS = 16 * MAX_COLUMNS


class ImportProblem(ValueError):
    """A file the importer cannot read (message names the file and, where it applies, the line); ``hint``,
    what to do where it is not to give another file."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def read_rows(path: Path, *, drop_no_gpu: Callable[[list[str]], bool] | None = None,
              no_gpu: dict[str, list[str]] | None = None,
              watch: Callable[[list[str]], Callable[[dict[str, str], int], None] | None] | None = None,
              ) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the rows of a vms.csv, each row with its ``_line`` (the file's line number).

    Args:
        drop_no_gpu: given the header, whether a row of an instance type without an accelerator
            (``AcceleratorName`` empty) may be dropped once checked, its instance type added to
            ``no_gpu`` instead (AWS lists ~10x as many such rows as GPU rows; GCP's VM rows carry no
            accelerator and are needed). None: every row kept. ``no_gpu`` maps each such instance type, as
            written, to the lines of its rows dropped (a row dropped beside a GPU row of its instance type kept is
            counted by its line, h20b N2).
        watch: given the header, a function called with each row kept (and its line) as it is read, which
            may stop the reading by raising ImportProblem (:func:`import_file`'s size cap); or None.

    Raises:
        ImportProblem: unreadable, a required column missing, a row of the wrong width, a value
            that is not a number in a numeric column or a negative price, a bidirectional control anywhere
            (file, line and column named).
    """
    from planner.core.infile import FileProblem, read_input

    # one bounded read (planner.core.infile): at most MAX_CSV_BYTES + 1 bytes however long a line is;
    # devices, FIFOs and sockets refused before they are read (a pipe from the shell, <(...), is read once)
    try:
        data = read_input(path, max_bytes=MAX_CSV_BYTES).data
    except FileProblem as exc:
        if exc.problem.startswith(("is ", "holds more")) and "bytes" in exc.problem:
            raise ImportProblem(f"{path}: is larger than {MAX_CSV_BYTES // 2**20} MiB, more than any SkyPilot "
                                "vms.csv (the largest, AWS's, is about 3 MiB)",
                                hint="Give the provider's vms.csv itself (catalogs/v8/<provider>/vms.csv).") from None
        raise ImportProblem(f"{path}: {exc.problem}.", hint=exc.hint) from None
    _check_utf16(path, data)
    try:
        text = data.decode("utf-8-sig")  # a UTF-8 byte order mark before the header is read past
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportProblem(f"{path}: line {line}: not UTF-8 (byte 0x{data[exc.start]:02x}); save it as UTF-8") \
            from None
    del data
    from planner.core.bidi import BIDI_HINT, bidi_control

    bidi = bidi_control(text)  # an RLO reorders what an editor or 'cat' shows of the rows around it
    if bidi is not None:
        from planner.core.names import char_name

        ch, line, column = bidi
        raise ImportProblem(f"{path}: line {line} column {column}: holds {char_name(ch)}, a bidirectional control, "
                            "which makes editors and terminals show the text around it in another order than planner "
                            "reads it (Trojan Source, CVE-2021-42574)", hint=BIDI_HINT)
    nul = text.find("\x00")
    if nul >= 0:  # the csv module ends a line's reading at a NUL (h21b N4): refused before parsing
        line = text.count("\n", 0, nul) + 1
        column = nul - (text.rfind("\n", 0, nul) + 1) + 1
        raise ImportProblem(f"{path}: line {line} column {column}: holds U+0000 (NUL), a null character, which no "
                            "CSV value holds (the CSV reader would drop the rest of its line unread)",
                            hint=f"Remove it from line {line} (SkyPilot's vms.csv holds none), or give the "
                                 "provider's vms.csv as SkyPilot publishes it, then import the file again.")
    bare = re.search(r"\r(?!\n)", text) if "\n" in text else None  # a file of CR line ends alone is read as such
    if bare is not None:  # csv ends a row at a lone CR: the row would be read as two
        line = text.count("\n", 0, bare.start()) + 1
        raise ImportProblem(f"{path}: line {line}: holds a carriage return (CR, \\r) alone inside the line, which "
                            "would split its row in two", hint=f"Remove it from line {line} (SkyPilot's vms.csv "
                            "holds none), then import the file again.")
    return _read_csv(path, text, drop_no_gpu, no_gpu, watch)


#: Byte order marks of the other Unicode encodings a spreadsheet or editor saves text in ('Unicode Text',
#: 'UTF-16'), longest first (UTF-32 LE's begins as UTF-16 LE's does).
_OTHER_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"), (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
               (b"\xff\xfe", "UTF-16 (little-endian)"), (b"\xfe\xff", "UTF-16 (big-endian)"))


def _check_utf16(path: Path, data: bytes) -> None:
    """Refuse a file that starts with a UTF-16 or UTF-32 byte order mark, naming it (h19b M6: 'not UTF-8 (byte
    0xff)' left the reader to guess why).

    Raises:
        ImportProblem: naming the file, line 1 and the encoding, with a hint to save the file as UTF-8.
    """
    for bom, name in _OTHER_BOMS:
        if data.startswith(bom):
            shown = " ".join(f"0x{b:02x}" for b in bom)
            raise ImportProblem(f"{path}: line 1: not UTF-8: it starts with the {name} byte order mark ({shown}), "
                                f"so it is a {name.split(' ')[0]} text file",
                                hint="Save it as UTF-8 (a spreadsheet's 'CSV UTF-8', an editor's 'UTF-8' encoding), "
                                     "or give the provider's vms.csv as SkyPilot publishes it, then import it again.")
    from planner.core.infile import unicode_form

    other = unicode_form(data)  # no byte order mark, but the NULs of UTF-16 or UTF-32 text (h36b 3: said as U+0000)
    if other is not None:
        raise ImportProblem(f"{path}: not UTF-8: it is {other[0]}",
                            hint=f"Save it as UTF-8 (e.g. iconv -f {other[1]} -t UTF-8 FILE > NEW), or give the "
                                 "provider's vms.csv as SkyPilot publishes it, then import it again.")


#: What to do about a '"' that opens a value spanning lines: SkyPilot's vms.csv quotes only GpuInfo, on one line.
_QUOTE_HINT = ("Give the provider's vms.csv as SkyPilot publishes it (its quoted values never span lines), or fix "
               "the stray '\"' in that row.")


def _read_csv(path: Path, text: str, drop_no_gpu: Callable[[list[str]], bool] | None,
              no_gpu: dict[str, list[str]] | None,
              watch: Callable[[list[str]], Callable[[dict[str, str], int], None] | None] | None = None,
              ) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of ``text`` (:func:`read_rows`). Linear in the text's length: the header is
    checked with one dict, a row of any width is compared by its length alone."""
    last = [""]  # the line the csv module read last (_lines)
    at = _At()
    reader = csv.reader(_lines(path, text, last, at))
    try:
        header = [c.strip() for c in next(reader, [])]
    except csv.Error as exc:
        raise _csv_problem(path, text, exc, 1, at.end, None) from None
    _check_header(path, header)
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing and not any(header) and text.lstrip("\ufeff").strip():  # a blank first line, the header below it
        raise ImportProblem(f"{path}: not a SkyPilot vms.csv as written: its line 1 is blank, and a vms.csv's first "
                            "line is its header (InstanceType,AcceleratorName,...)",  # (h34b m7)
                            hint="Remove the blank lines before the header.")
    if missing:
        _check_separator(path, header)
        raise ImportProblem(f"{path}: not a SkyPilot vms.csv: no column {', '.join(missing)} (header: "
                            f"{_header_text(header) or 'empty'}){_header_hint(header, missing)}",
                            hint=_EXCEL_SEP_HINT if _excel_sep(header) else None)
    _check_near_misses(path, header)
    rows: list[dict[str, str]] = []
    dropping = drop_no_gpu is not None and no_gpu is not None and drop_no_gpu(header)
    seen = watch(header) if watch is not None else None
    count = _RowCount(path)
    at.skip_blank = True  # past the header, blank lines are passed over in _lines, never parsed (h33b N5)
    while True:
        at.fresh = True
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise _csv_problem(path, text, exc, at.start, at.end, header) from None
        line = at.start  # where the row starts
        if at.end > line and fields:  # one record over several lines (SkyPilot's have none): left out
            row = dict(zip(header, fields))   # whole, with the lines it swallowed, never priced from their cells
            row["_bad"] = (f"lines {line} to {at.end} are read as one row: a '\"' on line {line} opens a "
                           "quoted value that runs on to a later line (the rows between are left out with it)")
            row["_line"] = str(line)
            count.unreadable(line, row["_bad"])
            count.add(row, line)
            rows.append(row)
            continue
        if not fields or all(not f.strip() for f in fields):
            continue  # a blank line
        row = dict(zip(header, fields))
        count.add(row, line)
        bad = _row_problem(header, fields, row)
        if bad is not None and len(fields) != len(header) and last[0].count('"') % 2 and \
                any(c in fields[-1] for c in ",\r\n"):
            # the csv module reads an open '"' on the file's last row to the end of the file (h21b M8): its last
            # value then holds the rest of the line, commas and line end with it
            bad = (f": a '\"' opens a quoted value that is not closed before the end of the file, so the row has "
                   f"{len(fields)} fields where the header has {len(header)}")
        if bad is not None:  # left out with its line and reason, its instance type with it (never half of it)
            row["_bad"] = f"line {line}{bad}"
            row["_line"] = str(line)
            count.unreadable(line, row["_bad"])
            rows.append(row)
            continue
        if dropping and not (row.get("AcceleratorName") or "").strip() and (row.get("InstanceType") or "").strip():
            no_gpu.setdefault(row["InstanceType"].strip(), []).append(str(line))  # type: ignore[union-attr]
            continue
        row["_line"] = str(line)
        rows.append(row)
        if seen is not None:
            seen(row, line)
    return header, rows


class _At:
    """Where :func:`_lines` is: the first and last line of the record the csv module reads (``start``, ``end``: the
    file's line numbers, blank lines passed over counted), ``fresh`` set by the reader's caller before each record,
    and ``skip_blank``: whether a blank line outside a quoted value is passed over unparsed."""

    def __init__(self) -> None:
        self.start = self.end = 1
        self.fresh = True
        self.skip_blank = False


class _RowCount:
    """The bounds on a file's rows counted as they are read (h33b N5, N6), each refused in one line naming the file
    and the line: :data:`MAX_ROWS_PER_INSTANCE` rows of one instance type, :data:`MAX_INSTANCE_TYPES` instance
    types, :data:`MAX_UNREADABLE_ROWS` rows that cannot be read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.per: dict[str, int] = {}
        self.bad = 0
        self.first_bad = ""

    def add(self, row: Mapping[str, str], line: int) -> None:
        """Count ``row`` (on CSV ``line``) under its instance type (stripped; a row without one under its accelerator
        and count).

        Raises:
            ImportProblem: past :data:`MAX_ROWS_PER_INSTANCE` or :data:`MAX_INSTANCE_TYPES`."""
        inst = (row.get("InstanceType") or "").strip()
        key = inst or "\x00" + (row.get("AcceleratorName") or "").strip() + "\x00" + \
            (row.get("AcceleratorCount") or "").strip()
        n = self.per.get(key, 0) + 1
        if n == 1 and len(self.per) >= MAX_INSTANCE_TYPES:
            raise ImportProblem(f"{self.path}: line {line}: the file names more than {MAX_INSTANCE_TYPES:,} instance "
                                "types (a SkyPilot vms.csv names about 1,000 at most)",
                                hint="Give the provider's vms.csv itself (catalogs/v8/<provider>/vms.csv), or split "
                                     "the file.")
        self.per[key] = n
        if n > MAX_ROWS_PER_INSTANCE:
            what = f"instance type {_quoted(inst)}" if inst else "rows without an instance type" + (
                f" (GPU rows of {_quoted(key[1:].replace(chr(0), ' x'))})" if key.strip("\x00") else "")
            raise ImportProblem(f"{self.path}: line {line}: more than {MAX_ROWS_PER_INSTANCE:,} rows of {what}; a "
                                "vms.csv lists one row per instance type and zone (about 100 at most)",
                                hint="Give the provider's vms.csv itself (catalogs/v8/<provider>/vms.csv), or remove "
                                     "the repeated rows.")

    def unreadable(self, line: int, why: str) -> None:
        """Count a row that cannot be read (``why``, its reason).

        Raises:
            ImportProblem: past :data:`MAX_UNREADABLE_ROWS`, naming the first such row."""
        self.bad += 1
        self.first_bad = self.first_bad or why
        if self.bad > MAX_UNREADABLE_ROWS:
            from planner.core.names import clip_text

            raise ImportProblem(f"{self.path}: line {line}: more than {MAX_UNREADABLE_ROWS:,} rows that cannot be read "
                                f"(the first: {clip_text(self.first_bad, 200)}); a SkyPilot vms.csv has none",
                                hint="Give the provider's vms.csv itself (catalogs/v8/<provider>/vms.csv), as SkyPilot "
                                     "publishes it.")


def _lines(path: Path, text: str, last: list[str] | None = None, at: _At | None = None) -> Iterator[str]:
    """The lines of ``text`` as the csv module reads them (line ends kept), each kept in ``last[0]`` as it is given,
    where the record being read starts and ends kept in ``at``; with ``at.skip_blank``, a blank line outside a quoted
    value (one the importer would pass over anyway) is not given to the csv module at all (h33b N5: 30 MiB of
    blank lines took 24 s).

    Raises:
        ImportProblem: a row holds more than :data:`MAX_LINE_COMMAS` commas (file and line named); a row that
            runs on over lines (a '"' left open at a line's end: an odd number of them) is counted whole.
    """
    commas, start, quoted = 0, 1, False
    for n, line in enumerate(io.StringIO(text, newline=""), 1):
        if not quoted:
            if at is not None and at.skip_blank and not line.strip():
                continue
            commas, start = 0, n
        commas += line.count(",")
        if commas > MAX_LINE_COMMAS:
            where = f"line {n}" if n == start else f"lines {start} to {n} (one row: a '\"' on line {start} is open)"
            raise ImportProblem(f"{path}: {where}: holds {commas:,} commas, more than the {MAX_LINE_COMMAS:,} a row of "
                                f"at most {MAX_COLUMNS} columns takes (a SkyPilot vms.csv's rows have 9 to 11 columns "
                                "and a few commas inside quoted values)")
        if line.count('"') % 2:
            quoted = not quoted
        if last is not None:
            last[0] = line
        if at is not None:
            if at.fresh:
                at.start, at.fresh = n, False
            at.end = n
        yield line


def _check_header(path: Path, header: Sequence[str]) -> None:
    """Refuse a header wider than :data:`MAX_COLUMNS` or naming a column twice (one pass, a dict of first places).

    Raises:
        ImportProblem: file, line 1 and the columns named.
    """
    if len(header) > MAX_COLUMNS:
        raise ImportProblem(f"{path}: line 1: the header has {len(header):,} columns, more than the {MAX_COLUMNS} the "
                            "importer reads (a SkyPilot vms.csv has 9 to 11: InstanceType, AcceleratorName, ...)")
    first: dict[str, int] = {}
    for i, c in enumerate(header):
        if not c:
            continue
        if c in first:  # csv.DictReader-style reading would keep the last one silently
            raise ImportProblem(f"{path}: line 1: the header names column {_quoted(c)} twice (columns {first[c] + 1} "
                                f"and {i + 1}), so which one holds the value cannot be told")
        first[c] = i
    by_lower: dict[str, int] = {}
    for i, c in enumerate(header):  # 'AvailabilityZone' and 'availabilityzone': the second was ignored (h34b m2)
        j = by_lower.setdefault(_column_fold(c), i)
        if j != i and c:
            odd = next((ch for ch in header[j] + c if not ch.isascii()), None)
            if odd is None:
                how = "in case"
            else:  # h41b m4: fullwidth 'Ｐrice', 'Spot\u200bPrice' beside the column were "read for nothing"
                from planner.core.errors import char_name

                how = f"in case or in a lookalike character, {char_name(odd)},"
            raise ImportProblem(f"{path}: line 1: the header names column {_quoted(header[j])} twice, differing only "
                                f"{how} (columns {j + 1} and {i + 1}: {_quoted(c)}), so which one holds the value "
                                "cannot be told", hint="Remove the column SkyPilot does not write, then import the "
                                                       "file again.")


def _column_fold(name: str) -> str:
    """A header column's name as compared for twins: NFKC, format characters (a zero width space) dropped, each
    confusable character as its ASCII prototype (UTS #39 skeleton, planner.core.lookalike.skeleton), lower case:
    'price', fullwidth 'Ｐrice' and 'Pri\u200bce' are twins of 'Price' (h34b m2, h41b m4)."""
    import unicodedata

    from planner.core.lookalike import skeleton

    kept = "".join(c for c in unicodedata.normalize("NFKC", name) if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFC", skeleton(kept)).lower()


#: The columns a vms.csv may have besides :data:`REQUIRED_COLUMNS` that the importer reads (its layouts,
#: planner.catalog.skypilot_layout.LAYOUTS): a header name close to one of them that is not there is a slip (h33b m9).
OPTIONAL_COLUMNS = ("GpuInfo", "AvailabilityZone", "Arch", "Generation")


def _check_near_misses(path: Path, header: Sequence[str]) -> None:
    """Refuse a header that names a column close to an optional column it lacks (:data:`OPTIONAL_COLUMNS`:
    'Availabilityzone', 'Zone' or its initials 'AZ' (h34b m2) for 'AvailabilityZone', planner.core.errors.close_matches), as a required column's
    slip is (:func:`_header_hint`): that column would otherwise be ignored without a word, and its data blamed
    (h33b m9: the zones of 'Availabilityzone' were not read, so two zones' rows were told to conflict).

    Raises:
        ImportProblem: file, line 1, the column's place and name, and the name SkyPilot writes.
    """
    from planner.core.errors import close_matches

    absent = [c for c in OPTIONAL_COLUMNS if c not in header]
    if not absent:
        return
    known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    for i, col in enumerate(header):
        if not col or col in known:
            continue
        # 'AZ' for 'AvailabilityZone': the initials of its words (h34b m2), as close_matches does not find them
        near = close_matches(col, absent, n=1) or [c for c in absent if len(col) > 1 and col.lower() == "".join(
            w[0] for w in re.findall(r"[A-Z][a-z]*", c)).lower()][:1]
        if near:
            raise ImportProblem(f"{path}: line 1: {_column_slip(i + 1, col, near[0])}, and the importer reads a column by its exact name, so this one would be ignored",
                                hint=f"Rename column {i + 1} to {_quoted(near[0])} (or remove it), then import the "
                                     "file again.")


#: Separators other than ',' that a spreadsheet writes in a file it saves as CSV: ';' where the decimal mark is a
#: comma (LibreOffice and Excel in a German, French, ... locale take the locale's list separator, ';'), a tab
#: (a "Text (tab-delimited)" file), '|'.
_OTHER_SEPARATORS = {";": "';' (a semicolon), as a spreadsheet saves CSV where the decimal mark is a comma (its "
                          "numbers then read 0,8048, which the importer does not take)",
                     "\t": "a tab, as a tab-delimited text file does",
                     "|": "'|'"}


def _check_separator(path: Path, header: Sequence[str]) -> None:
    """Refuse a header whose required columns are all there once it is split at another separator than ','
    (:data:`_OTHER_SEPARATORS`), saying so (h16b 13c: a ';'-separated file saved by a spreadsheet in a German
    locale was told it had no column InstanceType, while its header held every one).

    Raises:
        ImportProblem: naming the file, line 1 and the separator, with what to do.
    """
    text = ",".join(header)
    for sep, name in _OTHER_SEPARATORS.items():
        columns = {c.strip() for c in text.split(sep)}
        if sep in text and all(c in columns for c in REQUIRED_COLUMNS):
            raise ImportProblem(f"{path}: line 1: the header separates its columns with {name}; a SkyPilot vms.csv "
                                "separates them with ','",
                                hint="Give the provider's vms.csv as SkyPilot publishes it (download it again rather "
                                     "than saving it from a spreadsheet), or save it with ',' between values and '.' "
                                     "as the decimal mark, then import it again.")


#: What to do about Excel's 'sep=,' first line (a spreadsheet's CSV export names its separator so).
_EXCEL_SEP_HINT = ("Remove the first line, 'sep=,' (Excel's line naming the separator, which a SkyPilot vms.csv does "
                   "not have: its first line is the header), then import the file again.")


def _excel_sep(header: Sequence[str]) -> bool:
    """Whether the first line is Excel's 'sep=X' line (read by the csv module as a one- or two-cell header)."""
    return bool(header) and header[0].lower().startswith("sep=") and len(header) <= 2


def _header_hint(header: Sequence[str], missing: Sequence[str]) -> str:
    """What the header holds in place of the ``missing`` columns (h21b M5), as text to add to the message: Excel's
    'sep=,' line, or per missing column a header name that differs only in case ('column 7 is 'price': SkyPilot
    writes 'Price'') or is close to it (planner.core.errors.close_matches); '' when none is."""
    from planner.core.errors import close_matches

    if _excel_sep(header):
        return f"; its first line, {_quoted(','.join(header))}, is Excel's line naming the separator, not the header"
    extra = [c for c in header if c and c not in REQUIRED_COLUMNS]
    said = []
    for col in missing:
        same = [c for c in extra if c.lower() == col.lower()]
        near = same or close_matches(col, extra, n=1)
        if near:
            said.append(_column_slip(header.index(near[0]) + 1, near[0], col))
    return "; " + "; ".join(said) if said else ""


#: The most columns of a header an error line shows (a SkyPilot vms.csv has 9 to 11; the importer reads up to
#: :data:`MAX_COLUMNS`).
_HEADER_SHOWN = 16


def _column_name(name: str) -> str:
    """A header's column name as an error line shows it: whole, or past 40 characters cut with the count of
    characters it has (:func:`_quoted`; h40b m10: a column name of 130,000 characters was echoed whole)."""
    return name if len(name) <= 40 else _quoted(name)


def _header_text(header: Sequence[str]) -> str:
    """The header as an error line shows it: its columns joined by ',', each cut as :func:`_column_name` cuts it,
    past the first :data:`_HEADER_SHOWN` columns the count of the others (h40b m10: a header of 130 KB was
    echoed whole, as a row's value is not)."""
    more = len(header) - _HEADER_SHOWN
    return ",".join(_column_name(c) for c in header[:_HEADER_SHOWN]) + (f",... ({more:,} more columns)" if more > 0
                                                                         else "")


def _column_slip(place: int, col: str, want: str) -> str:
    """What a header's column ``col`` (at ``place``, from 1) holds in place of the name SkyPilot writes, ``want``:
    where the two are of one length and differ at one to three characters that are not ASCII, each named with
    its code point and the ASCII letter SkyPilot writes there ("column 1 'InstanceТype' holds U+0422 (CYRILLIC
    CAPITAL LETTER TE) at character 9 where SkyPilot writes 'T' ('InstanceType')": h40b m11, where the two names
    were told apart by nothing on screen); else "column 7 is 'price': SkyPilot writes 'Price'"."""
    from planner.core.errors import char_name

    diff = [(k, x, y) for k, (x, y) in enumerate(zip(col, want), 1) if x != y] if len(col) == len(want) else []
    odd = [(k, x, y) for k, x, y in diff if not x.isascii()]
    if odd and len(odd) <= 3:
        where = "; ".join(f"{char_name(x)} at character {k} where SkyPilot writes {y!r}" for k, x, y in odd)
        return f"column {place} {_quoted(col)} holds {where} ({_quoted(want)})"
    return f"column {place} is {_quoted(col)}: SkyPilot writes {_quoted(want)}"


#: One CSV field as Python's csv module reads it (default dialect): an optional quoted part, which runs to the
#: end of the line when its '"' is not closed there, then anything up to the next comma.
_FIELD = re.compile(r'(?:"[^"]*(?:""[^"]*)*(?:"|$))?[^,]*')


def _long_column(line: str, limit: int, header: Sequence[str] | None) -> str:
    """', column X' for the first field of ``line`` longer than ``limit`` characters ('' when none is found
    within :data:`MAX_COLUMNS` + 1 fields: the message then names the line alone)."""
    pos = 0
    for i in range(MAX_COLUMNS + 1):
        # each match reads at most limit + 2 characters (h33b N4: a run of 31 MiB of '"' matched whole took 2.2 GB
        # in the regex engine's stack of repeats); a field cut there is longer than ``limit`` either way
        m = _FIELD.match(line, pos, pos + limit + 2)
        if m is None:
            return ""
        if m.end() - m.start() > limit:
            return f", column {_column_name(header[i])}" if header is not None and i < len(header) else f", column {i + 1}"
        if m.end() >= len(line) or line[m.end()] != ",":
            return ""
        pos = m.end() + 1
    return ""


def _csv_problem(path: Path, text: str, exc: csv.Error, start: int, end: int,
                 header: Sequence[str] | None) -> ImportProblem:
    """The problem of a record on lines ``start`` to ``end`` that Python's csv module refused (``exc``).

    Its one length limit (``csv.field_size_limit()``, 131,072 characters unless a caller changed it; read,
    never set, as it is the whole process's) is told as what it is: a value longer than that. A '"' is blamed
    only when one is open: the record runs on over lines (the csv module reads on past a line end only inside
    a quoted value), or its line holds an odd number of '"'."""
    if "field larger than field limit" not in str(exc):
        return ImportProblem(f"{path}: line {end}: not CSV ({exc})")
    limit = csv.field_size_limit()
    size = f"{limit / 1024:,.0f} KiB ({limit:,} characters)" if limit % 1024 == 0 else f"{limit:,} characters"
    if end > start:
        return ImportProblem(f"{path}: lines {start} to {end}: a '\"' on line {start} opens a quoted value that runs on "
                             f"over the lines after it and past {size}, the most the CSV reader takes in one value "
                             "(it is never closed, or closed too late)", hint=_QUOTE_HINT)
    line = next(itertools.islice(io.StringIO(text, newline=""), start - 1, None), "").rstrip("\r\n")
    where = _long_column(line, limit, header)
    quote = ("; a '\"' there also opens a quoted value that is not closed on that line" if line.count('"') % 2
             else "")
    return ImportProblem(f"{path}: line {start}{where}: a value is longer than {size}, the most the CSV reader takes "
                         f"in one value{quote}",
                         hint=_QUOTE_HINT if quote else "Give the provider's vms.csv itself, or shorten that value.")


#: A number as a vms.csv writes it: digits, an optional fraction and exponent (no '1_0', 'inf', 'nan', '0x10',
#: which Python's float() reads too).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


#: A whole number as a vms.csv writes a count ('4', '4.0'): whole without reading its digits (:func:`is_whole`).
_WHOLE = re.compile(r"\+?[0-9]+(?:\.0*)?")


def _quoted(text: str, limit: int = 40, *, quote: str = "'", count: bool = False) -> str:
    """``text`` as a message quotes it: between single quotes (or ``quote``), cut after ``limit`` characters
    ('...') with the count of characters the whole text has after the closing quote ("'$1111...' (101
    characters)", as the import summary shows a long value: h40b m12, where a cut value carried no count and the
    summary counted the cut text), the count given for a text not cut too where ``count`` is set, and otherwise
    as read. Not escaped here: the one escaping layer of its medium is applied where the message is written (the
    terminal's, planner.core.escape.terminal_text, in the CLI), so an ESC shows once as '\\x1b', never as the
    escape of an escape."""
    cut = len(text) > limit
    shown = quote + (text[:limit] + "..." if cut else text) + quote
    return f"{shown} ({len(text):,} characters)" if cut or count else shown


def is_whole(raw: str) -> bool:
    """Whether the number ``raw`` (a checked :data:`_NUMBER`) is a whole number by its decimal digits, not by the
    float they round to (h21b N2: '0.9999999999999999999' and '3.9999999999999999999' are not whole, though
    ``float()`` reads them as 1.0 and 4.0), as prices are read by their digits (planner.catalog.prices). A number
    whose exponent is beyond Decimal's ('1e-99999999999999999999') is judged by its float."""
    from planner.core.units import written_decimal

    if _WHOLE.fullmatch(raw):  # '4', '4.0': whole as written, without building a Decimal (h33b N5)
        return True
    value = written_decimal(raw)
    if value is not None:
        return value == value.to_integral_value()
    number = float(raw)
    return math.isfinite(number) and number == int(number)


def _not_in_number(raw: str) -> str | None:
    """What a numeric cell holds besides its number and ordinary spaces that a message must name (h25b N4), or
    None: a control, line-break, bidirectional or invisible character (planner.core.names.unsafe_problem: a tab,
    a vertical tab, a form feed, U+001C-U+001F and U+0085, which Python's ``str.strip()`` and ``float()`` read
    past as white space), or a space other than U+0020 (U+00A0, U+3000), which no vms.csv writes, or any other
    character outside ASCII (a fullwidth or Arabic-Indic digit: h41b m6)."""
    why = unsafe_problem(raw)
    if why:
        return why
    blank = next((c for c in raw if c.isspace()), None)
    if blank is not None:
        from planner.core.names import char_name

        return f"holds {char_name(blank)}, a space other than an ordinary one (U+0020)"
    other = next((c for c in raw if not c.isascii()), None)
    if other is not None:  # h41b m6: fullwidth '１2', Arabic-Indic '١٢' were "not a number", the character unnamed
        from planner.core.names import char_name

        return f"holds {char_name(other)}, not an ASCII character: write the number in ASCII digits (0-9)"
    return None


def _range_text(col: str) -> str:
    """The range the catalog takes in numeric column ``col`` (planner.catalog.skypilot._imported_problem's bounds),
    for a number written too long for a float: 'the catalog's 1 to 64 GPUs'."""
    from planner.catalog.cloud import MAX_USD_PER_HOUR, MIN_USD_PER_HOUR
    from planner.catalog.schema import MAX_HOST_MEMORY_BYTES, MIN_MEMORY_BYTES

    return {"AcceleratorCount": "the catalog's 1 to 64 GPUs", "vCPUs": "the catalog's 1 to 4096 vCPUs",
            "MemoryGiB": f"the catalog's {MIN_MEMORY_BYTES / 2**30:g} to {MAX_HOST_MEMORY_BYTES / 2**30:g} GiB",
            }.get(col, f"the catalog's hourly prices, {MIN_USD_PER_HOUR:g} to {MAX_USD_PER_HOUR:,} USD/h")


def _row_problem(header: Sequence[str], fields: Sequence[str], row: Mapping[str, str]) -> str | None:
    """Why a row cannot be read (', column Price: ...' or ': 7 fields where ...'), or None: a row of the wrong
    width, a numeric value that is not a plain number, negative, or a fraction of a vCPU, and an availability zone
    holding a control, bidirectional or invisible character (planner.core.names.unsafe_problem, h22b M9)."""
    if len(fields) != len(header):
        where = (f"no value for column {header[len(fields)]}" if len(fields) < len(header) else
                 f"{len(fields) - len(header)} value(s) after the last column, {header[-1]}")
        return f": {len(fields)} fields where the header has {len(header)}: {where} (a comma inside a value must be quoted)"
    for col in NUMERIC_COLUMNS:
        raw = row.get(col, "").strip(" ")  # ordinary spaces alone: str.strip() eats U+001C-U+001F, U+0085 (h25b N4)
        if not raw:
            continue
        plain = _NUMBER.fullmatch(raw)  # digits, '.', a sign and an exponent only: no character to name (h33b N5:
        if not plain:                   # the checks below, made on each number of each row, were most of its cost)
            odd = _not_in_number(raw)
            if odd is not None:
                return f", column {col}: {_quoted(raw)} is not a plain number: it {odd}"
            try:
                finite = math.isfinite(float(raw))
            except ValueError:
                finite = True
            return f", column {col}: {_quoted(raw)} is not a " + ("number" if finite else "finite number")
        value = float(raw)
        if not math.isfinite(value):  # written in digits, so finite: too long for a float (h28b M6)
            return f", column {col}: {_quoted(raw, count=True)} is out of range: {_range_text(col)}"
        if value < 0:
            unit = " (USD per hour)" if col in ("Price", "SpotPrice") else ""
            return f", column {col}: {raw} is below 0{unit}"
        if col == "vCPUs" and not is_whole(raw):
            return f", column vCPUs: {raw} is not a whole number of vCPUs"
    zone = row.get("AvailabilityZone", "").strip(" ")
    why = unsafe_problem(zone) if zone else None
    if why:  # as the region and instance type are checked (h22b M9): the zone places the row's spot price
        return f", column AvailabilityZone: {_quoted(zone)} {why}"
    for col in ("InstanceType", "AcceleratorName", "Region"):  # checked whole later, once str.strip() has read
        text = row.get(col, "").strip(" ")                      # past a tab, U+001C-U+001F, U+0085 at an end
        if text == text.strip():  # nothing for str.strip() to read past: the later check sees the same text
            continue
        why = unsafe_problem(text) if text and not unsafe_problem(text.strip()) else None
        if why:  # so one there is named here (h25b N4)
            return f", column {col}: {_quoted(text)} {why}"
    return None
