"""What every command shares: bad input as one line 'Error: ...' and its exit code; size and list text."""

from __future__ import annotations

import errno
import functools
import io
import os
import select
import stat
import sys
from pathlib import Path
from typing import Any

import click

from planner.cli.streams import refuse_streams_onto_inputs
from planner.core.errors import OutputError, PlannerError, UsageError
from planner.core.names import byte_escapes, escape_unsafe, shell_word


def _fail(message: str, code: int) -> None:
    """Print 'Error: <message>' as one line on stderr (line breaks, control and bidirectional characters
    that reached the message, e.g. in a path as typed, written as escapes: 'nl\\ndir', never folded to a
    blank, which would show another path; a byte that was not UTF-8 as '\\xff', also in a quoted value,
    planner.core.names.byte_escapes; characters the stream's encoding lacks as escapes) and exit. A
    stderr that cannot be written only loses the line."""
    say_last("Error: " + message, code)


def say_last(text: str, code: int) -> None:
    """Print ``text``, the run's last line ('Error: ...', 'Interrupted by SIGINT; stopped.'), on standard error,
    escaped as :func:`_fail` says, and exit with ``code``. A standard error that cannot take it (full, a dead pipe,
    a closed terminal) gets it on standard output with a note saying so; where neither takes it, the line is lost
    and the exit status still says what happened (h23a N1: a stop's 130/143/129, never Python's 1)."""
    line = escape_unsafe(byte_escapes(text))  # '\udcff' in a quoted value (repr) shown as '\xff', as in paths
    try:
        click.echo(encodable(line, sys.stderr), err=True)
    except (OSError, ValueError, AttributeError) as exc:  # standard error full or gone: said on standard output
        try:
            click.echo(encodable(f"{line} (Standard error cannot be written: {_why(exc)}; this line is given here "
                                 "instead.)", sys.stdout))
        except (OSError, ValueError, AttributeError):
            pass
    sys.exit(code)


def _why(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__


class StderrLost(Exception):
    """Standard error failed (a pipe whose reader is gone: EPIPE, a full disk: ENOSPC) while a note was given
    there. :func:`handle_errors` puts the note and the Error line on standard output, which is kept as it is
    (what it holds is whole), and exits 2. Not an OSError, so that it never takes standard output back."""

    def __init__(self, exc: BaseException, note: str) -> None:
        super().__init__(note)
        self.why, self.note = _why(exc), note

    def say(self) -> None:
        """The lost note, then the Error line naming the reports written, on standard output; exit 2."""
        line = (f"Error: standard error cannot be written ({self.why}), so the note above, meant for it, is given "
                "on standard output, and the run stopped there." + files_done(said=(self.note,))
                + " Send standard error to a file or a terminal (or '2> /dev/null') and run again.")
        try:
            click.echo(encodable(self.note, sys.stdout))
            click.echo(encodable(escape_unsafe(line), sys.stdout))
            sys.stdout.flush()
        except (OSError, ValueError, AttributeError):
            pass
        sys.exit(2)


def pasteable_word(path: str, stream: Any = None) -> str:
    """``path`` as a shell word for a hint (planner.core.names.shell_word), in bash's ``$'...'`` quoting of its
    bytes where the output stream (default: standard output) cannot write one of its characters: that stream
    would show '\\xe9' for 'é', naming another path when pasted (h37b m4)."""
    from planner.core.names import ansi_c_word

    word = shell_word(path)
    encoding = getattr(stream if stream is not None else sys.stdout, "encoding", None) or "utf-8"
    try:
        word.encode(encoding)
    except UnicodeEncodeError:
        return ansi_c_word(path)
    except LookupError:
        pass
    return word


def encodable(text: str, stream: Any) -> str:
    """``text`` with each character ``stream``'s encoding cannot write as a backslash escape (a Latin-1
    terminal shows '\\u2248' rather than failing after the reports were written)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        return text.encode(encoding, errors="backslashreplace").decode(encoding)
    except LookupError:
        return text


def output_failed(exc: OSError) -> str:
    """One line for an output that could not be written: standard output full (/dev/full), opened
    read-only, gone; a file of a name the OS refuses. After it, standard output is pointed at
    /dev/null so that the exit's flush of what is still buffered fails no more (Python's documented
    way for a closed pipe, docs.python.org/3/library/signal.html, "Note on SIGPIPE")."""
    import os

    from planner.core.cwd import CWD_GONE, CWD_HINT, cwd_gone

    what = exc.strerror or str(exc)
    kept = ""
    gone = exc.errno == errno.ENOENT and cwd_gone()  # a relative path under a removed current folder, not stdout
    if exc.filename is None and not gone:
        kept = restore_stdout_file()  # a regular file given as standard output holds what it held before
    if gone:
        line = f"{exc.filename or 'a relative path'}: {CWD_GONE}; {CWD_HINT}."
    elif exc.filename is not None:
        line = f"{exc.filename}: cannot be written ({what})."
    elif exc.errno == errno.EFBIG:  # 'ulimit -f': Python ignores SIGXFSZ, the write fails with EFBIG (h41a N18)
        line = f"cannot write the output ({what}): the file-size limit ('ulimit -f') stopped it. Raise the limit " \
               "and run again." + kept
    else:
        line = f"cannot write the output ({what}). Check where standard output goes: a full disk, a file " \
               "opened read-only or a closed terminal." + kept
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    return line


#: The broken-pipe line's first sentence; what follows names the reports (:func:`broken_pipe_line`).
_CUT_SHORT = ("cannot write the output: the program reading it closed it (broken pipe), so what it shows is cut "
              "short.")
BROKEN_PIPE = _CUT_SHORT + " Reports written to files are whole."


def broken_pipe_line(guard: Any = None) -> str:
    """:data:`BROKEN_PIPE`, naming the reports this run wrote and removed where there were any
    (:func:`files_done`)."""
    return _CUT_SHORT + (files_done(guard) or " Reports written to files are whole.")


def fcntl_flags(fd: int) -> int:
    """The file status flags of ``fd`` (``fcntl(F_GETFL)``; 0 where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:
        return 0
    return fcntl.fcntl(fd, fcntl.F_GETFL)


class _Written:
    """One write planner made to a regular file as standard output: where (``at``), how many bytes (``n``),
    the file's size just before it (``size``), the bytes it overwrote (``old``; None when they could not
    be read: a file opened write-only at an offset inside it) and the SHA-256 of the bytes it wrote
    (``digest``), to tell before taking them back that they are still planner's."""

    __slots__ = ("at", "n", "size", "old", "digest")

    def __init__(self, at: int, n: int, size: int, old: bytes | None, digest: bytes = b"") -> None:
        self.at, self.n, self.size, self.old, self.digest = at, n, size, old, digest


def _read_back(fd: int, ident: tuple[int, int] | None, n: int, at: int) -> bytes:
    """``n`` bytes of the regular file ``fd`` from offset ``at``: read on ``fd`` itself, or, where it was opened
    write-only (``>``), through ``/proc/self/fd`` (Linux) when that opens the same file (``ident``: inode, device).

    Raises:
        OSError: they cannot be read.
    """
    try:
        return os.pread(fd, n, at)
    except OSError:
        pass
    reader = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)
    try:
        if (os.fstat(reader).st_ino, os.fstat(reader).st_dev) != ident:
            raise OSError(errno.ESTALE, "standard output is no longer the file it was")
        return os.pread(reader, n, at)
    finally:
        os.close(reader)


def _still_planners(raw: Any) -> bool:
    """Whether the file of standard output still holds, in every range planner wrote, exactly the bytes planner
    wrote there (by SHA-256), and is no shorter than planner left it: only then may they be taken back. Planner's
    writes follow one another; two that overlap mean another program moved the shared offset (False).

    Raises:
        OSError: the file cannot be read back.
    """
    import hashlib

    last = raw.writes[-1]
    if os.fstat(raw.fd).st_size < last.at + last.n:
        return False  # cut by another program since: what planner would put back is not what is there
    done: list[tuple[int, int]] = []
    for w in raw.writes:
        if any(w.at < end and at < w.at + w.n for at, end in done):
            return False
        done.append((w.at, w.at + w.n))
        got = _read_back(raw.fd, raw.ident, w.n, w.at)
        if len(got) != w.n or hashlib.sha256(got).digest() != w.digest:
            return False
    return True


def restore_stdout_file() -> str:
    """Take back, where standard output is a regular file, what this run wrote to it (:class:`_WholeWriter`
    keeps each write: its offset, length and the bytes it overwrote), last write first: the bytes it
    overwrote are written back (``os.pwrite``; ``1<>file``) and what it added is cut off (``os.ftruncate``),
    so that an output that failed part way (EFBIG under ``ulimit -f``, ENOSPC) leaves no cut text: written
    whole or not at all. Only planner's own bytes are ever taken back: where another program wrote to the
    file after them (a log that others append to), nothing further is cut; and before anything is written back
    or cut, every range planner wrote is read back (:func:`_still_planners`): where another program changed a
    byte of it or cut the file meanwhile, or it cannot be read back, the file is left as it is, and said.

    Returns:
        '' when all was taken back (or nothing was written); else a sentence for the Error line saying what
        was left.
    """
    raw = getattr(getattr(sys.stdout, "buffer", None), "raw", None)
    if not isinstance(raw, _WholeWriter) or not raw.writes:
        return ""
    left = sum(w.n for w in raw.writes)
    unread = changed = unchecked = False
    try:
        st = os.fstat(raw.fd)
        if (st.st_ino, st.st_dev) != raw.ident:
            return ""
        try:
            changed = not _still_planners(raw)
        except OSError:
            unchecked = True  # they cannot be read back to compare: left as they are
        while raw.writes and not (changed or unchecked):
            w = raw.writes[-1]
            size = os.fstat(raw.fd).st_size
            end = w.at + w.n
            if size > max(end, w.size):
                break  # another program wrote after planner's bytes: not cut
            if w.old is None:
                unread = True  # the bytes it overwrote could not be read (opened write-only): not cut
                break
            if w.old:
                os.pwrite(raw.fd, w.old, w.at)
            if end > w.size and size > w.size:
                os.ftruncate(raw.fd, w.size)
            raw.writes.pop()
            left -= w.n
    except OSError:
        pass
    if not raw.writes:
        return ""
    first = raw.writes[0].at
    raw.writes.clear()
    if changed:
        return (f" The {left} bytes planner wrote to standard output (from byte {first} of the file) were left in "
                "place: another program changed them or cut the file after planner wrote them, and planner takes back "
                "only its own bytes; the file was left as it is.")
    if unchecked:
        return (f" The {left} bytes planner wrote to standard output (from byte {first} of the file) were left in "
                "place: they could not be read back to check that they are still planner's.")
    if unread:
        return (f" The {left} bytes planner wrote to standard output (from byte {first} of the file) were left in "
                "place: the bytes they overwrote could not be read back (the file was opened write-only).")
    return (f" The {left} bytes planner wrote to standard output (from byte {first} of the file) were left in "
            "place: another program wrote to the file after them, and planner takes back only its own bytes.")


class _WholeWriter(io.RawIOBase):
    """Standard output's file descriptor, written whole or not at all: a write the OS takes only in part
    (a pipe's reader gone mid-write, a file at its size limit: ulimit -f, where Python ignores SIGXFSZ)
    is continued until it is all written or the OS refuses with an error (EPIPE, EFBIG, ENOSPC), which
    is raised. Python's own buffered stdout can lose the rest of a short write without an error, and the
    run would exit 0 with its output cut short. A non-blocking descriptor that is full (EAGAIN: a pipe
    whose reader is slow) is waited for (``select``) and written again. Where it is a regular file, each
    write is kept (:class:`_Written`, with the bytes it overwrote, read with ``os.pread`` just before) so
    that :func:`restore_stdout_file` can take back exactly planner's own bytes."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        self.writes: list[_Written] = []
        self.ident: tuple[int, int] | None = None
        self.append = False
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode):
                self.ident = (st.st_ino, st.st_dev)
                self.append = bool(fcntl_flags(fd) & os.O_APPEND)
        except OSError:
            self.ident = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return os.isatty(self.fd)

    def write(self, b: Any) -> int:
        view = memoryview(b).cast("B")
        done = 0
        while done < len(view):
            before = self._before(len(view) - done)
            try:
                n = os.write(self.fd, view[done:])
            except BlockingIOError:  # a non-blocking pipe or terminal that is full: wait until it takes more
                select.select([], [self.fd], [])
                continue
            if n <= 0:
                raise OSError(errno.EIO, "the output took no bytes")
            if before is not None:
                self._kept(before, n, view[done:done + n])
            done += n
        return done

    def _before(self, n: int) -> tuple[int, int, bytes | None] | None:
        """For a regular file: (the write offset, or -1 for O_APPEND; the size; the next ``n`` bytes that a
        write at that offset would overwrite, None when they cannot be read) just before a write."""
        if self.ident is None:
            return None
        try:
            size = os.fstat(self.fd).st_size
            if self.append:
                return -1, size, b""
            at = os.lseek(self.fd, 0, os.SEEK_CUR)
        except OSError:
            return None
        if at >= size:
            return at, size, b""
        try:
            return at, size, os.pread(self.fd, n, at)
        except OSError:  # opened write-only, at an offset inside the file: read it through /proc instead
            pass
        try:
            reader = os.open(f"/proc/self/fd/{self.fd}", os.O_RDONLY)
            try:
                if (os.fstat(reader).st_ino, os.fstat(reader).st_dev) == self.ident:
                    return at, size, os.pread(reader, n, at)
            finally:
                os.close(reader)
        except OSError:
            pass
        raise OSError(errno.EBADF, "standard output is a file opened write-only with bytes after the write "
                      "offset that planner cannot read to put them back, so it wrote nothing there; "
                      "redirect with > or >> instead")

    def _kept(self, before: tuple[int, int, bytes | None], n: int, data: Any) -> None:
        import hashlib

        at, size, old = before
        if at < 0:  # O_APPEND: the bytes went to the end as it was then; the offset is now their end
            try:
                at = os.lseek(self.fd, 0, os.SEEK_CUR) - n
            except OSError:
                at, old = size, None
            size = at  # what is before planner's bytes is not planner's, whoever appended it
        elif old is not None:
            old = old[:n]
        self.writes.append(_Written(at, n, size, old, hashlib.sha256(data).digest()))

    def close(self) -> None:  # the descriptor is the process's standard output: never closed here
        if not self.closed:
            super().close()


def whole_stdout() -> None:
    """Point ``sys.stdout`` at standard output through :class:`_WholeWriter` (same encoding, errors and line
    buffering), when it is the process's own standard output (not a test runner's buffer)."""
    out = sys.stdout
    if out is None or out is not sys.__stdout__ or not isinstance(out, io.TextIOWrapper):
        return
    try:
        fd = out.fileno()
        out.flush()
    except (OSError, ValueError, io.UnsupportedOperation):
        return
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(_WholeWriter(fd)), encoding=out.encoding, errors=out.errors,
                                  line_buffering=out.line_buffering, write_through=out.write_through)


def check_stream_encodings() -> None:
    """Refuse, in one ASCII line on stderr and exit 2, a standard output or error whose encoding cannot
    write plain text (``PYTHONIOENCODING=idna`` or ``punycode``: codecs for host names, which fail on a
    line longer than 63 characters or holding '..', even on stderr, so nothing at all would be said)."""
    probe = "Error: a plain line of text.. with dots, spaces and more than sixty-three characters in it\n"
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        encoding = getattr(stream, "encoding", None)
        if not encoding:
            continue
        try:
            import codecs

            if codecs.lookup(encoding).name == "punycode":  # writes 'text-' for 'text': not the text
                raise UnicodeError("punycode rewrites the text")
            probe.encode(encoding)
        except (UnicodeError, LookupError) as exc:
            what = {"stdout": "standard output", "stderr": "standard error"}[name]
            line = (f"Error: {what}'s encoding {encoding!a} cannot write plain text ({type(exc).__name__}). "
                    "Set PYTHONIOENCODING=utf-8 (or unset it) and run again.\n")
            try:
                os.write(2, line.encode("ascii", "backslashreplace"))
            except OSError:
                pass
            os._exit(2)  # the interpreter's own exit would try the stream's encoding again


def flush_stdout() -> None:
    """Flush standard output before the exit, so that a write that fails (EFBIG, ENOSPC, EPIPE) is one line
    'Error: ...' and exit 2 rather than lost at the interpreter's exit."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError as exc:
        output_failed(exc)
        _fail(broken_pipe_line(), 2)
    except OSError as exc:
        _fail(output_failed(exc) + (files_done() if exc.filename is None else ""), 2)
    except ValueError:  # closed
        pass


def signal_guard() -> Any:
    """The :class:`planner.core.interrupt.SignalGuard` of this run (None outside the planner group)."""
    ctx = click.get_current_context(silent=True)
    return (ctx.find_root().obj or {}).get("guard") if ctx is not None else None


def input_file_option(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Refuse a scenario or workload path that is empty (Path('') is the current directory, read as 'is a
    directory') or holds a line break (YAML text given where a path belongs), in the command line's words.

    Raises:
        LineError: naming the argument (SCENARIO) or option (--workload).
    """
    if value is None:
        return value
    text = str(value)
    what, example = (("scenario", "scenarios/qlora-7b-12gb.yaml") if param.name == "scenario_file" else
                     ("workload", "scenarios/workloads/qlora-7b.yaml"))
    name = param.opts[0] if isinstance(param, click.Option) else what  # the argument as earlier messages name it
    if not text.strip():
        raise LineError(f"{name}: is {'empty' if not text else f'blank ({text!r})'}: no {what} file is named. Give a "
                        f"{what} file, e.g. {example}.", ctx)
    if ("\n" in text or "\r" in text) and not os.path.lexists(text):
        # on the command line the argument is a path: one that names a file is opened, however odd its name (h16b
        # #10); one naming nothing and holding a line break is most likely YAML text pasted where a path belongs
        raise LineError(f"{name}: '{escape_unsafe(text[:40] + ('...' if len(text) > 40 else ''))}' holds a line break "
                        f"and names no file: it looks like YAML text, not a file path. Write the text to a file and "
                        f"give its path, e.g. {example}.", ctx)
    if "\n" in text or "\r" in text:  # the API reads a str holding a line break as YAML text, a Path as a path
        import pathlib

        return pathlib.Path(text)
    return value


def one_catalog(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``--catalog`` (``multiple=True`` so that a repeat is seen): the one overlay directory, or None.
    Given twice (``--catalog A --catalog B``), refused in one line: click would keep B without a word."""
    if not value:
        return None
    if len(value) > 1:
        shown = " ".join(f"--catalog {shell_word(escape_unsafe(str(v)))}" for v in value)
        raise LineError(f"--catalog: given {len(value)} times ({shown}); a run reads one overlay directory. "
                        "Give --catalog once, with a folder holding all the overlay files.", ctx)
    return value[0]


def files_done(guard: Any = None, said: tuple[str, ...] = ()) -> str:
    """For an Error line about standard output: the reports this run wrote (whole) and the stale ones it
    removed, which the lost output would have said, and what it left for the user to check (but the notes in
    ``said``, given already); '' when none. ``guard``: the run's :class:`planner.core.interrupt.SignalGuard`
    (default: the current command's)."""
    guard = guard if guard is not None else signal_guard()
    written = list(dict.fromkeys(getattr(guard, "written", None) or []))
    if not written:
        return ""
    removed = list(dict.fromkeys(getattr(guard, "removed", None) or []))
    gone = f"; removed the stale {joined(removed)}" if removed else ""
    left = [n for n in dict.fromkeys(getattr(guard, "left", None) or []) if n not in said]  # to check (h34a m5)
    return f" The reports were written, whole: {joined(written)}{gone}." + "".join(f" {n}" for n in left)


def say_infeasible(exc: Any, as_json: bool, earlier: str) -> None:
    """What a plan or comparison that found nothing feasible (a planner.solve.solver.NoFeasiblePlan) wrote,
    before its reasons: the JSON of the reasons on standard output when asked (``--json``), and on
    standard error the reports written, the stale ones removed (``earlier``: 'plan', 'comparison') and
    what writing them left alone."""
    from planner.core.escape import json_text
    from planner.report.export import infeasible_to_dict

    if as_json:
        doc = infeasible_to_dict(exc)
        doc["outputs"] = {k: str(p) for k, p in exc.outputs.items()}
        click.echo(json_text(doc, indent=2))
    if exc.outputs:
        echo(f"Wrote {joined(list(exc.outputs.values()))}", err=True)
    if exc.removed:
        echo(f"Removed the stale {joined(exc.removed)} of an earlier {earlier}: nothing fits now.", err=True)
    for note in exc.notes:
        echo(note, err=True)


def handle_errors(fn):
    """Turn PlannerError (and unexpected exceptions) into one line and an exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return checked(*args, **kwargs)
        except StderrLost as lost:  # a note standard error could not take: on standard output, kept whole
            lost.say()

    def checked(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        debug = bool((ctx.find_root().obj or {}).get("debug"))
        refuse_streams_onto_inputs(ctx)
        try:
            rv = fn(*args, **kwargs)
            if sys.stdout is not None:
                sys.stdout.flush()  # a write that fails at the end is handled here, not lost at exit
            return rv
        except UsageError as exc:  # a call that lacks what it needs: click's usage error, in option words
            raise click.UsageError(exc.usage) from None
        except PlannerError as exc:
            if debug:
                raise
            if exc.exit_code == 1:
                echo(str(exc), err=True)
                sys.exit(1)
            if isinstance(exc, OutputError):  # one raised once the reports were in place: what the run left, first
                for note in getattr(exc, "notes", ()):
                    echo(note, err=True)
            _fail(exc.cli_line(), exc.exit_code)
        except (KeyboardInterrupt, click.exceptions.Exit, click.ClickException, SystemExit, StderrLost):
            raise
        except BrokenPipeError as exc:
            # the reader went away (`planner plan ... | head`, a closed pipe): what it was shown is cut short,
            # so said, and an exit that a script can check (as any other output failure; what was written
            # into files before, the reports, is whole)
            if debug:
                raise
            output_failed(exc)  # standard output pointed at /dev/null: the exit's flush fails no more
            _fail(broken_pipe_line(), 2)
        except OSError as exc:  # standard output full, read-only, gone: an output failure, not a bug
            if debug:
                raise
            _fail(output_failed(exc) + (files_done() if exc.filename is None else ""), 2)
        except MemoryError:  # a memory limit (ulimit -v) or an exhausted machine: not a bug in planner
            if debug:
                raise
            _fail("out of memory: the run could not allocate what it needs. Free memory, or raise the limit "
                  "('ulimit -v'), and run again." + files_done(), 2)
        except UnicodeEncodeError as exc:
            if debug:
                raise
            _fail(f"the output's encoding ({exc.encoding}) cannot write {exc.object[exc.start:exc.end]!a}. Set "
                  "PYTHONIOENCODING=utf-8 (or a UTF-8 locale) and run again.", 2)
        except Exception as exc:  # noqa: BLE001 - the last line of defence, no traceback for users
            if debug:
                raise
            stop = _interrupted_within(exc)
            if stop is not None:  # a stop signal Python wrapped (a RuntimeError from __set_name__ during an import,
                raise stop from None  # h42a N4): the stop it is, said by the command line's own handler
            _fail(f"internal error ({type(exc).__name__}: {exc}). This is a bug in planner; "
                  f"rerun with --debug and report the traceback.", 2)

    return wrapper


def _interrupted_within(exc: BaseException) -> BaseException | None:
    """The :class:`planner.core.interrupt.Interrupted` (or KeyboardInterrupt) that ``exc`` was raised from or during
    (its ``__cause__``/``__context__`` chain, a few links deep), else None."""
    from planner.core.interrupt import Interrupted

    seen = exc.__cause__ or exc.__context__
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, (Interrupted, KeyboardInterrupt)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


class LineError(click.UsageError):
    """A usage error found while click parses the options, already in the one-line form
    ('--option: problem. hint'), which :func:`_usage_line` prints as it is."""

    def __init__(self, line: str, ctx: click.Context | None = None) -> None:
        super().__init__(line, ctx)
        self.line = line


def echo(text: str = "", err: bool = False, *, command: str | None = None) -> None:
    """``click.echo`` of text for people, control characters shown as escapes (``\\x1b``:
    :func:`planner.core.escape.terminal_text`), each line wrapped to the terminal's width
    (:func:`planner.core.textfit.terminal_width`: COLUMNS, else the terminal's, else 100) with a
    hanging indent; nothing is cut. ``command``: a command to paste (already shell-quoted, e.g.
    :func:`pasteable_word`), on a line of its own after the text, indented and never wrapped, since a line
    break inside its quotes would name another path (h37b m9). JSON goes out through ``click.echo`` untouched."""
    from planner.core.escape import terminal_text
    from planner.core.textfit import fit_text, terminal_width

    # the terminal's escaping layer (planner.core.escape): a name or path from a file never sends ESC
    stream = sys.stderr if err else sys.stdout
    shown = encodable(fit_text(terminal_text(text, newlines=True), terminal_width()), stream)
    if command is not None:
        shown += "\n  " + encodable(terminal_text(command), stream)
    if not err:
        click.echo(shown)
        return
    try:
        click.echo(shown, err=True)
        stream.flush()
    except (OSError, ValueError) as exc:  # never standard output's failure: it must not be taken back
        raise StderrLost(exc, shown) from None


def verbose_option(fn):
    """``--verbose``: the long formulas and source citations too (--json and the reports always hold them)."""
    return click.option("--verbose", "-v", is_flag=True,
                        help="Also print each figure's formula and source (--json and the reports always "
                             "hold them).")(fn)


def gib_text(n: float) -> str:
    """Bytes as GiB (2^30) with two decimals."""
    return f"{n / 2**30:,.2f} GiB"


def size_text(n: int) -> str:
    """A margin in GiB, or in MiB when under 0.01 GiB (so 'short by 0.00 GiB' never reads as nothing)."""
    return f"{n / 2**30:,.2f} GiB" if n >= 2**30 // 100 else f"{n / 2**20:,.1f} MiB"


def joined(paths: list[Path]) -> str:
    """'a', 'a and b', 'a, b and c'; a relative path whose first folder is '~' or begins with '-' as './~/...',
    './-t/...' (Path drops the './' of '--out ./~', and '~/...' would read as the home folder, '-t/...' as options)."""
    names = [escape_unsafe("./" + str(p) if str(p).startswith(("~", "-")) else str(p)) for p in paths]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def given_on_command_line(name: str) -> bool:
    """Whether the current command's parameter ``name`` was given on the command line (not its default)."""
    return click.get_current_context().get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE


#: Words a boolean option's value may be written as: the booleans files take (YAML 1.1's true/false, yes/no,
#: on/off, as PyYAML resolves them; not 'y'/'n', which files refuse), and 1/0; any case, no blanks around
#: (' true' is refused, as files and number options refuse ' 2'). planner.cli.options.BoolSpellingCommand reads them.
TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")


def repeated_option(command: click.Command, args: list[str]) -> tuple[str, list[str]] | None:
    """(option, its values as given) for the first option of ``command`` that takes one value and is given more
    than once in ``args`` ('--model a --model b', '--top=3 --top 4'), or None. Click keeps the last of them
    without a word; options that collect their repeats (``multiple=True``: --catalog, --tokens-per-month) are
    the caller's to check. An on/off flag is one option of one value in all its spellings: '--compile
    --no-compile', '--compile true --compile false' (:class:`planner.cli.options.BoolSpellingCommand` reads
    the word after it) and '--compile --compile' are each given twice. '--' ends the options, as click reads
    them."""
    single: dict[str, click.Option] = {}
    takes_value: set[str] = set()
    on_off: dict[str, click.Option] = {}  # every spelling of an on/off flag -> the flag
    for p in command.params:
        if isinstance(p, click.Option) and p.is_flag and p.secondary_opts:
            for spelling in p.opts + p.secondary_opts:
                on_off[spelling] = p
        elif isinstance(p, click.Option) and not p.is_flag and not p.count:
            takes_value.update(p.opts + p.secondary_opts)
            if not p.multiple and p.nargs == 1:
                for spelling in p.opts + p.secondary_opts:
                    single[spelling] = p
    seen: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in takes_value:
            if not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if name in single:
                seen.setdefault(single[name].opts[0], []).append(f"{name} {value}")
        elif name in on_off:
            word = args[i + 1] if not eq and i + 1 < len(args) else ""
            if word.lower() in TRUE_WORDS + FALSE_WORDS:  # '--compile false', as BoolSpellingCommand reads it
                i += 1
                arg = f"{name} {word}"
            seen.setdefault(on_off[name].opts[0], []).append(arg)
        i += 1
    return next(((option, given) for option, given in seen.items() if len(given) > 1), None)


#: What to do instead of repeating an option, where giving it once is not the whole answer.
_REPEAT_HINTS = {
    "--format": "Give the formats as one comma-separated list: --format md,csv.",
}


class SingleValueCommand(click.Command):
    """A command that refuses an option of one value given twice ('--model a --model b') in one line, as
    ``--catalog`` is (:func:`one_catalog`): click would keep the last value without a word, so a run would
    silently size another model, write into another folder or drop a format (:func:`repeated_option`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        refuse_repeats(self, args, ctx)
        return super().parse_args(ctx, args)


def refuse_repeats(command: click.Command, args: list[str], ctx: click.Context) -> None:
    """Raise a :class:`LineError` naming an option of one value that ``args`` give more than once."""
    found = repeated_option(command, args)
    if found is None:
        return
    option, given = found
    shown = escape_unsafe(" ".join(given))
    hint = _REPEAT_HINTS.get(option, f"Give {option} once.")
    if option == "--format":  # the formats the user gave, joined: what they meant to ask for
        parts = dict.fromkeys(p.strip() for g in given for p in g.partition(" ")[2].split(",") if p.strip())
        if parts:
            hint = f"Give the formats as one comma-separated list: --format {escape_unsafe(','.join(parts))}."
    flag = next((p for p in command.params if isinstance(p, click.Option) and p.is_flag and p.secondary_opts
                 and p.opts and p.opts[0] == option), None)
    if flag is not None:
        hint = f"Give {option} or {flag.secondary_opts[0]}, once."
    raise LineError(f"{option}: given {len(given)} times ({shown}); a run takes one. {hint}", ctx)
