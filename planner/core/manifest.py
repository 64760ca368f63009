"""The manifest of a report folder (``OUT/.planner-reports.json``): which files planner wrote there, with the
SHA-256 of each and the report set it belongs to, so that planner replaces or removes only what it wrote
(:mod:`planner.core.reportset`). It is trusted only when it is a regular file of this user that its group and
others cannot write (:func:`planner.core.sharing.writable_by_others`); planner writes it so, whatever the umask.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from planner.core.errors import DestinationError, OutputError
from planner.core.sharing import writable_by_others

#: The manifest of the reports planner wrote into a folder: name -> {"sha256", "set"}.
MANIFEST = ".planner-reports.json"
#: The manifest's format tag (a file of that name without it is not planner's and is not replaced).
MANIFEST_FORMAT = "planner report manifest 1"
#: The most bytes a manifest may have (it lists a few report names; a larger file is not planner's).
MANIFEST_MAX_BYTES = 4 * 2**20

#: The file-system encoding a manifest (or a staging mark) that records none was written under: every planner
#: before pass 25 on a UTF-8 system, and every run since under UTF-8 (only another encoding is recorded).
DEFAULT_NAME_ENCODING = "utf-8"

#: A temporary file :func:`planner.core.atomic.write_bytes` makes beside the manifest.
MANIFEST_TMP = re.compile(re.escape("." + MANIFEST) + r"\.[0-9a-f]{8}\.tmp")
#: How every manifest planner writes begins (:func:`write_manifest`: json.dumps with indent=1).
_MANIFEST_HEAD = ('{\n "format": ' + json.dumps(MANIFEST_FORMAT) + ',\n').encode("ascii")


def read_manifest(out_dir: Path) -> dict[str, dict]:
    """The manifest of ``out_dir``: report name -> ``{"sha256": [hex, ...], "set": name}``; {} when
    there is none.

    Raises:
        OutputError: a file of that name that planner did not write (not its format; not a regular file: named
            as what it is, 'a folder', 'a socket'), or unreadable.
    """
    path = Path(out_dir) / MANIFEST
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise OutputError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    doc: object = None
    if not stat.S_ISREG(st.st_mode):  # a folder, a socket, a link: named as what it is (h26a m2)
        from planner.core.infile import what_it_is

        what = what_it_is(st.st_mode)
        raise DestinationError(f"{path}: is not a regular file ({what}), so not a report manifest planner wrote, and "
                               "planner keeps the list of its reports in a file of that name. Move "
                               f"{'that ' + what.split(' ', 1)[1] if what.startswith('a ') else 'it'} away or give "
                               "another --out.")
    if st.st_uid != os.geteuid():
        raise DestinationError(f"{path}: belongs to another user (uid {st.st_uid}), so planner does not trust its list of "
                          "the files it wrote and replaces or removes nothing here. Give another --out.")
    if writable_by_others(st, path):
        raise DestinationError(f"{path}: can be written by its group or by others, so planner does not trust its list of "
                          "the files it wrote and replaces or removes nothing here. Check the files it lists, then "
                          f"'chmod go-w {path}', or give another --out.")
    if st.st_size <= MANIFEST_MAX_BYTES:
        try:
            doc = json.loads(path.read_bytes())
        except OSError as exc:
            raise OutputError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
        except (ValueError, RecursionError):  # not JSON, or nested past Python's recursion limit
            doc = None
    files = doc.get("files") if isinstance(doc, dict) and doc.get("format") == MANIFEST_FORMAT else None
    if not isinstance(files, dict) or not all(
            isinstance(e, dict) and isinstance(e.get("sha256"), list) and isinstance(e.get("set"), str)
            and _plain_name(n) for n, e in files.items()):
        raise DestinationError(f"{path}: is not a report manifest planner wrote, and planner keeps the list of its "
                          "reports in a file of that name. Move that file away or give another --out.")
    refuse_other_encoding(path, doc.get("encoding", DEFAULT_NAME_ENCODING), files, "lists reports")
    return files


def fs_encoding() -> str:
    """This process's file-system encoding, by its codec's canonical name ('utf-8', 'iso8859-1', 'ascii'): how
    Python turns a file's name (text) into the bytes the file system holds (``sys.getfilesystemencoding``; the
    locale's, or UTF-8 in Python's UTF-8 mode)."""
    return codecs.lookup(sys.getfilesystemencoding()).name


def recorded_encoding() -> dict[str, str]:
    """What a manifest or staging mark written now records of the names' encoding: nothing under UTF-8 (the
    default, :data:`DEFAULT_NAME_ENCODING`), else ``{"encoding": <this run's file-system encoding>}``."""
    here = fs_encoding()
    return {} if here == DEFAULT_NAME_ENCODING else {"encoding": here}


def name_encoding(recorded: object, names: Iterable[str]) -> str | None:
    """The canonical name of the encoding ``recorded`` (a manifest's or mark's "encoding"); None when it is not
    a known encoding, is none a file system names files in (its bytes for ASCII are not ASCII's: UTF-16, UTF-32,
    EBCDIC cp037, UTF-7, punycode, unicode_escape; h33a m6), or cannot encode one of ``names`` (then planner did
    not write it so)."""
    try:
        enc = codecs.lookup(recorded).name if isinstance(recorded, str) else None
        if enc is not None and (_ASCII.encode(enc) != _ASCII.encode("ascii")
                                or _ESCAPES.decode(enc) != _ESCAPES.decode("ascii")):
            return None  # Python's file-system encodings keep ASCII as it is (PEP 529, PEP 383: ASCII-compatible)
        for n in names if enc is not None else ():
            n.encode(enc, "surrogateescape")
    except (LookupError, UnicodeError, TypeError, ValueError):
        return None
    return enc


#: The printable ASCII characters a file name may hold, and a few controls: what an ASCII-compatible encoding writes
#: as themselves.
_ASCII = "".join(chr(c) for c in range(1, 128))
#: ASCII bytes an escape-reading codec reads as other text (raw_unicode_escape reads b'\\u00e9' as 'é': h34a m8).
_ESCAPES = b"\\u00e9\\x41\\n+-"


def refuse_other_encoding(path: Path, recorded: object, names: Iterable[str], what: str) -> None:
    """Refuse (one line) the manifest at ``path`` whose file names (``what``: 'lists reports'), written under the
    file-system encoding ``recorded``, this run would turn into other bytes: a name that is not ASCII, under another
    file-system encoding (a UTF-8 run's 'café.md' is b'caf\\xc3\\xa9.md'; a Latin-1 run would look for, and write,
    b'caf\\xe9.md'), so that the run would not find its own reports, write a second set beside them and drop
    them from the manifest (h25a N2, N3). ASCII names are the same bytes in every encoding and never refused.

    Raises:
        DestinationError: naming the file, a name, both encodings and the hint (LC_ALL=C.UTF-8 or PYTHONUTF8=1
            where the names are UTF-8); a ``recorded`` that is not a known encoding, or a name it cannot encode,
            is not a file planner wrote.
    """
    enc = name_encoding(recorded, names)
    if enc is None:
        raise DestinationError(f"{path}: is not a report manifest planner wrote, and planner keeps the list of its "
                               "reports in a file of that name. Move that file away or give another --out.")
    here = fs_encoding()
    odd = sorted(n for n in names if not n.isascii())
    if enc == here or not odd:
        return
    hint = ("Run again under a UTF-8 locale (LC_ALL=C.UTF-8) or in Python's UTF-8 mode (PYTHONUTF8=1)"
            if enc == "utf-8" else f"Run again under a locale whose encoding is {enc}")
    raise DestinationError(f"{path}: {what} named under the file-system encoding {enc} ({odd[0]!a}"
                           f"{', ...' if len(odd) > 1 else ''}), and this run's file-system encoding is {here}, "
                           "which would name those files with other bytes, so planner would not find the files it "
                           f"wrote there. {hint}, or give another --out.")


def write_manifest(out_dir: Path, files: dict[str, dict], notes: list[str] | None = None) -> None:
    """Write ``out_dir``'s manifest (atomically); remove it when it lists nothing. The manifest replaced passes
    on its group, mode, ACL and ``user.*`` extended attributes (planner.core.atomic.write_bytes); attributes
    that cannot be copied are said in a line appended to ``notes``."""
    from planner.core.atomic import write_text

    path = Path(out_dir) / MANIFEST
    if not files:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise OutputError(f"{path}: cannot be removed ({exc.strerror or exc}).") from None
        return
    doc = {"format": MANIFEST_FORMAT,
           "about": "The reports planner wrote into this folder, with their SHA-256: planner replaces or removes "
                    "only these, and only while unchanged.",
           **recorded_encoding(),
           "files": {n: files[n] for n in sorted(files)}}
    # never writable by group or others, whatever the umask (fchmod before the rename): read_manifest
    # trusts no other
    write_text(path, json.dumps(doc, indent=1, ensure_ascii=True) + "\n", private=True, notes=notes)


def is_manifest_head(data: bytes) -> bool:
    """Whether ``data`` (a file's first bytes) begins as every manifest :func:`write_manifest` writes does."""
    return data.startswith(_MANIFEST_HEAD)


def is_manifest_tmp(path: Path) -> bool:
    """Whether ``path`` is a temporary manifest planner verifiably wrote: a regular file of this user, not
    writable by its group or others (planner writes it so), at most the manifest's size, that parses as
    a report manifest (whole, or cut short by a killed run: then empty, or its first bytes are planner's
    own format line)."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or writable_by_others(st, path) \
                or st.st_size > MANIFEST_MAX_BYTES:
            return False
        data = path.read_bytes()
    except OSError:
        return False
    if not data:
        return True  # created, and killed before a byte was written
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # cut short: planner's own first line, nothing else
        return data.startswith(_MANIFEST_HEAD[:len(data)]) or data.startswith(_MANIFEST_HEAD)
    return isinstance(doc, dict) and doc.get("format") == MANIFEST_FORMAT and isinstance(doc.get("files"), dict)


def _plain_name(name: object) -> bool:
    """Whether ``name`` is a name planner could have written into the folder: one plain file name, never a path
    ('../victim.txt', '/etc/x', 'd/x.md') or '.', '..' (planner.core.reportset.check_name refuses those)."""
    return (isinstance(name, str) and bool(name) and name not in (".", "..") and "/" not in name
            and "\0" not in name and os.sep not in name)
