"""Reading one input file: once, bounded in size, and only from something that can be read.

Every file the planner reads from the user or the catalog (scenario, workload, ``config.json``,
catalog and overlay files, ``SOURCES.md``, the calibration file) goes through :func:`read_input`,
which returns the bytes together with their SHA-256, so that a file is parsed and recorded
(scenario and catalog hashes) from the same single read.

What it refuses, each as one :class:`FileProblem` sentence:

- a path that is not there, a symlink loop, a directory, one that cannot be opened;
- devices (``/dev/zero``, ``/dev/random``, terminals), sockets and named pipes (FIFOs): a device
  can stream without end and a FIFO blocks until some other program writes to it. The type is
  checked with ``os.stat`` before the file is opened, and again on the open descriptor (the
  open uses ``O_NONBLOCK``, so even a FIFO that appears in between cannot block it);
- more than :data:`MAX_FILE_BYTES` bytes (read at most one byte past the limit, never the rest).

A pipe the shell hands over as a file descriptor is read, once: process substitution
(``planner plan <(generate-scenario)``, which passes ``/dev/fd/63``) and ``/dev/stdin``. Such a pipe
can be read only once, so its bytes are what is parsed and hashed; nothing reads it again.

Sources: POSIX ``open()`` (O_NONBLOCK on a FIFO opened for reading returns without waiting for a
writer), Linux ``stat(2)`` file-type bits (``S_ISREG``, ``S_ISFIFO``, ``S_ISCHR``...), bash manual
"Process Substitution" (the list is passed as a ``/dev/fd`` file name).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

#: Refuse files larger than this many bytes (the largest shipped catalog file is a few hundred KiB).
MAX_FILE_BYTES = 20 * 2**20

#: A path that names an open file descriptor, as the shell passes a pipe: /dev/fd/N, /dev/stdin,
#: /proc/self/fd/N or /proc/<pid>/fd/N.
_DESCRIPTOR_PATH = re.compile(r"^/(?:dev/fd/\d+|dev/stdin|proc/(?:self|\d+)/fd/\d+)$")

_CHUNK = 1 << 16

#: What to do about a path whose symbolic links lead round in a circle (ELOOP).
SYMLINK_LOOP_HINT = "Point the link at the file itself ('ls -l' shows where each link leads)."


class FileProblem(ValueError):
    """A file cannot be read as the expected document; carries the 1-based ``line`` where known.

    Attributes:
        problem: what is wrong, a sentence fragment without the file name ("is a directory, not a file").
        line: 1-based line, or None.
        hint: what to do, or None.
        path: where the value sits inside the document (e.g. 'extras[0].as_of'), None at the top.
    """

    def __init__(self, problem: str, line: int | None = None, hint: str | None = None) -> None:
        self.problem = problem
        self.line = line
        self.hint = hint
        self.path: str | None = None
        super().__init__(problem)

    def inside(self, step: str) -> FileProblem:
        """Record that the problem lies under ``step`` (a key, or '[i]'); returns self."""
        if self.path is None:
            self.path = step
        else:
            self.path = step + (self.path if self.path.startswith("[") else "." + self.path)
        return self


@dataclass(frozen=True)
class InputFile:
    """The bytes of one input file as read, once.

    Attributes:
        path: the path it was read from.
        data: its bytes (at most :data:`MAX_FILE_BYTES`).
    """

    path: Path
    data: bytes

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of the bytes read (what ``sha256sum`` prints for the file)."""
        return hashlib.sha256(self.data).hexdigest()

    def text(self) -> str:
        """The bytes as UTF-8 text, a leading byte-order mark removed.

        Raises:
            FileProblem: not UTF-8 (with the line of the first bad byte), or empty (blank only).
        """
        try:
            text = self.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            other = resave_problem(self.data)  # UTF-16 or UTF-32, said so with the iconv to paste (h36b 3)
            if other is not None:
                raise FileProblem(*other) from exc
            line = self.data[: exc.start].count(b"\n") + 1
            raise FileProblem(f"is not UTF-8 text (byte 0x{self.data[exc.start]:02x})", line,
                              "Save it as UTF-8.") from exc
        if "\0" in text and (other := resave_problem(self.data)) is not None:  # UTF-16/32 text that is also
            raise FileProblem(*other)  # valid UTF-8 (ASCII or CJK bytes), with NULs
        if text.startswith("\ufeff"):
            text = text[1:]
        if not text.strip():
            raise FileProblem("is empty")
        return text


def what_it_is(mode: int) -> str:
    """What a non-regular file found with os.lstat is, in words ('a socket'), for a refusal that names it
    (stat(2) file types: S_ISLNK, S_ISDIR, S_ISFIFO, S_ISSOCK, S_ISCHR, S_ISBLK)."""
    for test, words in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                        (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return words
    return "not a regular file"


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open_problem(exc: OSError, path: Path | None = None) -> FileProblem:
    from planner.core.cwd import CWD_GONE, CWD_HINT, lost_relative

    if isinstance(exc, FileNotFoundError) and path is not None and lost_relative(path):
        return FileProblem(f"cannot be found: {CWD_GONE}, and the path is relative to it", hint=CWD_HINT + ".")
    if isinstance(exc, FileNotFoundError) and path is not None and str(path) == "-":  # h21a m3
        return FileProblem("no such file", hint="planner reads files by path and does not take '-' for standard "
                                                "input; to read a pipe, give the path /dev/stdin.")
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return FileProblem("no such file")
    if isinstance(exc, PermissionError):
        return FileProblem("cannot be read (permission denied)")
    if exc.errno == errno.ELOOP:
        return FileProblem("is a symlink loop (each link leads to another, never to a file)",
                           hint=SYMLINK_LOOP_HINT)
    if exc.errno == errno.ENAMETOOLONG:
        return FileProblem("cannot be read (its name is too long for the file system)",
                           hint="Each part of a path may be at most 255 bytes, the whole path 4,096.")
    return FileProblem(f"cannot be read ({exc.strerror or exc})")


def _refusal(kind: str) -> FileProblem:
    if kind == "a directory":
        return FileProblem("is a directory, not a file")
    why = {"a character device": " (a device can stream without end)", "a block device": " (a device)",
           "a named pipe (FIFO)": " (reading one waits until another program writes to it)"}.get(kind, "")
    return FileProblem(f"is {kind}, not a regular file{why}",
                       hint="Give the path of a saved file; a pipe from the shell (<(...), /dev/stdin) is read once.")


def read_input(path: Path | str, *, max_bytes: int = MAX_FILE_BYTES) -> InputFile:
    """Read one input file whole, once, refusing what is not a bounded stored file.

    Args:
        path: the file; a pipe passed as a descriptor path (``/dev/fd/N``, ``/dev/stdin``) is read too.
        max_bytes: the most bytes accepted.

    Returns:
        The bytes and path (:class:`InputFile`).

    Raises:
        FileProblem: missing, a directory, a device, a named pipe or socket, unreadable, or more
            than ``max_bytes`` bytes.
    """
    path = Path(path)
    pipe_ok = bool(_DESCRIPTOR_PATH.match(str(path)))
    try:
        before = os.stat(path)
    except OSError as exc:
        raise _open_problem(exc, path) from None
    except UnicodeEncodeError as exc:  # a lone surrogate ('\ud800'): no file name can be encoded with it
        raise FileProblem(f"cannot be read (its name holds {exc.object[exc.start]!a}, a character no file name can "
                          "hold)") from None
    except ValueError:  # os.stat's refusal of a NUL byte
        raise FileProblem("cannot be read (its name holds a NUL byte)") from None
    kind = _kind(before.st_mode)
    if kind is not None and not (pipe_ok and stat.S_ISFIFO(before.st_mode)):
        raise _refusal(kind)
    if kind is None and before.st_size > max_bytes:
        raise FileProblem(f"is {before.st_size} bytes, more than the {max_bytes} a planner input may be")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _open_problem(exc, path) from None
    try:
        now = os.fstat(fd)
        kind = _kind(now.st_mode)
        fifo = stat.S_ISFIFO(now.st_mode)
        if kind is not None and not (pipe_ok and fifo):
            raise _refusal(kind)  # it changed between the stat and the open
        if fifo:
            os.set_blocking(fd, True)  # a pipe from the shell: wait for its writer, as cat would
        data = _read_bounded(fd, max_bytes)
    except OSError as exc:
        raise FileProblem(f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileProblem(f"holds more than the {max_bytes} bytes a planner input may be")
    return InputFile(path, data)


def _read_bounded(fd: int, max_bytes: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes from ``fd`` (one past the limit tells that it is over)."""
    parts: list[bytes] = []
    total = 0
    while total <= max_bytes:
        chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


#: Byte order marks of UTF-32 and UTF-16 (UTF-32 LE's first, as it begins with UTF-16 LE's), with the encoding
#: iconv reads past the mark (The Unicode Standard, section 23.8, Byte Order Mark).
_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 (little-endian)", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)", "UTF-32"),
         (b"\xff\xfe", "UTF-16 (little-endian)", "UTF-16"), (b"\xfe\xff", "UTF-16 (big-endian)", "UTF-16"))


def unicode_form(data: bytes) -> tuple[str, str] | None:
    """(what the bytes are, the iconv encoding that reads them) for text saved as UTF-32 or UTF-16, told by its byte
    order mark ('UTF-16 (little-endian) text, by its byte order mark', 'UTF-16'), by where the NUL bytes of
    mostly-ASCII text fall in its first 4,096 bytes (three of every four in UTF-32, every other one in UTF-16:
    'UTF-32 (little-endian) text (3 of every 4 bytes are NUL)', 'UTF-32LE'), or, for text of any script (CJK alone
    included), by what a strict decode of the whole file makes certain (:func:`_decoded_form`); None for anything
    else. Bytes that are UTF-8 and hold no NUL are UTF-8 text, always: they are tested first and give None, so no
    reading as UTF-16 or UTF-32 can hide a UTF-8 file. UTF-32's NUL pattern is tested before UTF-16's: it also has
    every other byte NUL."""
    for bom, name, iconv in _BOMS:
        if data.startswith(bom):
            return f"{name} text, by its byte order mark", iconv
    if b"\0" not in data:
        try:
            data.decode("utf-8")
            return None  # UTF-8 text (h39b 4: a valid UTF-8 file is always read as UTF-8)
        except UnicodeDecodeError:
            pass
    head = data[:4096]
    n = len(head) - len(head) % 4
    if n < 4:
        return None

    def nul_share(step: int, at: int) -> float:
        picked = head[at:n:step]
        return picked.count(0) / len(picked)

    for order, zero, other in (("little-endian", (1, 2, 3), 0), ("big-endian", (0, 1, 2), 3)):
        if all(nul_share(4, i) >= 0.9 for i in zero) and nul_share(4, other) <= 0.1:
            return f"UTF-32 ({order}) text (3 of every 4 bytes are NUL)", "UTF-32" + ("LE" if other == 0 else "BE")
    for order, zero, other in (("little-endian", 1, 0), ("big-endian", 0, 1)):
        if nul_share(2, zero) >= 0.9 and nul_share(2, other) <= 0.1:
            return f"UTF-16 ({order}) text (every other byte is NUL)", "UTF-16" + ("LE" if other == 0 else "BE")
    return _decoded_form(data)


#: The C0 controls a text file does not hold (all but tab, line feed and carriage return), NUL included.
_C0_BUT_BREAKS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


#: Characters every planner file (YAML, JSON, CSV) is made with: a reading of bytes that are also valid UTF-8 must
#: hold two of them at least, where a UTF-8 file with a stray NUL, read as UTF-16, holds at most the one character
#: the NUL pairs with (its other bytes pair into CJK-range characters).
_SYNTAX = "\n:{}[],\"=#"


def _decoded_form(data: bytes) -> tuple[str, str] | None:
    """:func:`unicode_form` for UTF-32 or UTF-16 text without a byte order mark whose characters past ASCII (CJK,
    or any other script) break the NUL pattern (h37a 15, h39b 4), told by what each encoding makes certain. Called
    only for bytes that are not UTF-8 or hold NULs (:func:`unicode_form`); the bytes must hold a NUL (every ASCII
    character, a line break included, puts one in UTF-16 or UTF-32 text; Latin-1 text holds none). A reading
    passes when the whole file decodes strictly (UTF-32: its length a multiple of 4, every 4-byte unit at most
    U+10FFFF and no surrogate; UTF-16: its length even, no unpaired surrogate: The Unicode Standard, 3.9 Unicode
    Encoding Forms, D90 and D91) to text that holds no C0 control but tab, line feed and carriage return; where the
    bytes are also valid UTF-8 (with NULs), the reading must hold at least half as many line breaks as the UTF-8
    reading and two characters of a file's syntax (:data:`_SYNTAX`), so that a UTF-8 file with a stray NUL (its line
    breaks and punctuation paired into other characters by the reading) is not named UTF-16. UTF-32 is tried first (its text read as UTF-16 holds NULs, so it cannot pass as UTF-16);
    where both byte orders pass, the one with fewer unassigned or private-use characters (a line feed read in the
    wrong order is U+0A00, unassigned; h41b m2: astral characters named with the wrong order), then more characters up to U+00FF (ASCII keys, punctuation, line breaks:
    their NUL byte sits where that order puts it) is named, little-endian on a tie. None when no reading passes
    (a file of CJK text alone with no line break and no NUL byte among them)."""
    if b"\0" not in data:
        return None
    try:
        data.decode("utf-8")
        utf8_breaks: int | None = data.count(b"\n") + data.count(b"\r")  # its line breaks read as UTF-8
    except UnicodeDecodeError:
        utf8_breaks = None
    for size in (4, 2):
        if len(data) % size:
            continue
        passing = []
        for codec, iconv in ((f"utf-{size * 8}-le", f"UTF-{size * 8}LE"), (f"utf-{size * 8}-be", f"UTF-{size * 8}BE")):
            try:
                text = data.decode(codec)  # strict: a unit past U+10FFFF, a surrogate (UTF-32), a lone one (UTF-16)
            except UnicodeDecodeError:
                continue
            if _C0_BUT_BREAKS.search(text):
                continue
            if utf8_breaks is not None and (2 * (text.count("\n") + text.count("\r")) < utf8_breaks
                                            or sum(map(text.count, _SYNTAX)) < 2):
                continue
            # h41b m2: fewer unassigned or private-use characters first (a line feed read in the other order is
            # U+0A00, unassigned; astral characters read so lose their surrogate pairs to such odd ones), then more
            # up to U+00FF
            odd = sum(1 for ch in text if unicodedata.category(ch) in ("Cn", "Co"))
            passing.append(((-odd, len(text.encode("latin-1", "ignore"))), codec, iconv))
        if passing:
            _, codec, iconv = max(passing, key=lambda p: p[0])  # max keeps the first (LE) on a tie
            order = "little-endian" if codec.endswith("le") else "big-endian"
            return f"{iconv[:6]} ({order}) text without a byte order mark", iconv
    return None


def resave_problem(data: bytes) -> tuple[str, None, str] | None:
    """(problem, no line, hint) for bytes that are UTF-16 or UTF-32 text (:func:`unicode_form`), naming the
    encoding and the iconv command that saves them as UTF-8; None for other bytes."""
    other = unicode_form(data)
    if other is None:
        return None
    return (f"is {other[0]}, not UTF-8", None,
            f"Save it as UTF-8 (e.g. iconv -f {other[1]} -t UTF-8 FILE > NEW); a planner file is plain UTF-8 text.")
