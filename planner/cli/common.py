"""What every command shares: bad input as one line 'Error: ...' and its exit code; size and list text."""

from __future__ import annotations

import errno
import functools
import io
import os
import sys
from pathlib import Path
from typing import Any

import click

from planner.core.errors import PlannerError, UsageError
from planner.core.names import escape_unsafe


def _fail(message: str, code: int) -> None:
    """Print 'Error: <message>' as one line on stderr (line breaks folded; control and bidirectional
    characters that reached the message, e.g. in a path as typed, written as escapes; characters the
    stream's encoding lacks as escapes) and exit. A stderr that cannot be written only loses the line."""
    line = escape_unsafe(" ".join(message.splitlines()))
    try:
        click.echo(encodable("Error: " + line, sys.stderr), err=True)
    except (OSError, ValueError):
        pass
    sys.exit(code)


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

    what = exc.strerror or str(exc)
    if exc.filename is None:
        restore_stdout_file()  # a regular file given as standard output holds what it held before
    if exc.filename is not None:
        line = f"{exc.filename}: cannot be written ({what})."
    else:
        line = f"cannot write the output ({what}). Check where standard output goes: a full disk, a file " \
               "opened read-only or a closed terminal."
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    return line


BROKEN_PIPE = ("cannot write the output: the program reading it closed it (broken pipe), so what it shows is cut "
               "short. Reports written to files are whole.")


def _stdout_file_start(fd: int) -> tuple[int, int, int] | None:
    """Where standard output is a regular file: (the size it had before planner wrote to it, or the write
    offset where that is further on: ``1<>file``; its inode; its device), so that
    :func:`restore_stdout_file` can cut off what a failed run wrote (a file-size limit reached halfway
    through a JSON document). None for a pipe, terminal or device: there the promise is the Error line
    and the exit status."""
    import stat

    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        offset = os.lseek(fd, 0, os.SEEK_CUR)  # with O_APPEND ('>>') this may be 0: the size counts then
    except OSError:
        return None
    return max(st.st_size, offset), st.st_ino, st.st_dev


def restore_stdout_file() -> None:
    """Truncate standard output, where it is the regular file :func:`whole_stdout` found, back to the size
    it had before the run (os.ftruncate on the descriptor), so that an output that failed part way (EFBIG
    under ``ulimit -f``, ENOSPC) leaves no cut text: written whole or not at all."""
    raw = getattr(getattr(sys.stdout, "buffer", None), "raw", None)
    start = getattr(raw, "start", None) if isinstance(raw, _WholeWriter) else None
    if start is None:
        return
    size, ino, dev = start
    try:
        st = os.fstat(raw.fd)
        if (st.st_ino, st.st_dev) == (ino, dev) and st.st_size > size:
            # what is still buffered goes to /dev/null afterwards (output_failed), not after the cut
            os.ftruncate(raw.fd, size)
    except OSError:
        pass


class _WholeWriter(io.RawIOBase):
    """Standard output's file descriptor, written whole or not at all: a write the OS takes only in part
    (a pipe's reader gone mid-write, a file at its size limit: ulimit -f, where Python ignores SIGXFSZ)
    is continued until it is all written or the OS refuses with an error (EPIPE, EFBIG, ENOSPC), which
    is raised. Python's own buffered stdout can lose the rest of a short write without an error, and the
    run would exit 0 with its output cut short."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        self.start = _stdout_file_start(fd)  # a regular file's size before the run: cut back to it on a failure

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
            n = os.write(self.fd, view[done:])
            if n <= 0:
                raise OSError(errno.EIO, "the output took no bytes")
            done += n
        return done

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
        _fail(BROKEN_PIPE, 2)
    except OSError as exc:
        _fail(output_failed(exc), 2)
    except ValueError:  # closed
        pass


def signal_guard() -> Any:
    """The :class:`planner.core.interrupt.SignalGuard` of this run (None outside the planner group)."""
    ctx = click.get_current_context(silent=True)
    return (ctx.find_root().obj or {}).get("guard") if ctx is not None else None


def out_dir_option(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Refuse an empty --out ('' would mean the current directory without a word)."""
    if value is not None and not str(value).strip():
        what = "a directory for the reports" if param.name != "calibration_file" else "a file for the calibration"
        example = "--out reports (or --out . for the current directory)" if param.name != "calibration_file" \
            else "--out ./calibration.yaml"
        raise LineError(f"--out: is empty; give {what}, e.g. {example}.", ctx)
    return value


def one_catalog(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``--catalog`` (``multiple=True`` so that a repeat is seen): the one overlay directory, or None.
    Given twice (``--catalog A --catalog B``), refused in one line: click would keep B without a word."""
    if not value:
        return None
    if len(value) > 1:
        shown = " ".join(f"--catalog {v}" for v in value)
        raise LineError(f"--catalog: given {len(value)} times ({shown}); a run reads one overlay directory. "
                        "Give --catalog once, with a folder holding all the overlay files.", ctx)
    return value[0]


def handle_errors(fn):
    """Turn PlannerError (and unexpected exceptions) into one line and an exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        debug = bool((ctx.find_root().obj or {}).get("debug"))
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
            _fail(exc.one_line(), exc.exit_code)
        except (KeyboardInterrupt, click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BrokenPipeError as exc:
            # the reader went away (`planner plan ... | head`, a closed pipe): what it was shown is cut short,
            # so said, and an exit that a script can check (as any other output failure; what was written
            # into files before, the reports, is whole)
            if debug:
                raise
            output_failed(exc)  # standard output pointed at /dev/null: the exit's flush fails no more
            _fail(BROKEN_PIPE, 2)
        except OSError as exc:  # standard output full, read-only, gone: an output failure, not a bug
            if debug:
                raise
            _fail(output_failed(exc), 2)
        except UnicodeEncodeError as exc:
            if debug:
                raise
            _fail(f"the output's encoding ({exc.encoding}) cannot write {exc.object[exc.start:exc.end]!a}. Set "
                  "PYTHONIOENCODING=utf-8 (or a UTF-8 locale) and run again.", 2)
        except Exception as exc:  # noqa: BLE001 - the last line of defence, no traceback for users
            if debug:
                raise
            _fail(f"internal error ({type(exc).__name__}: {exc}). This is a bug in planner; "
                  f"rerun with --debug and report the traceback.", 2)

    return wrapper


class LineError(click.UsageError):
    """A usage error found while click parses the options, already in the one-line form
    ('--option: problem. hint'), which :func:`_usage_line` prints as it is."""

    def __init__(self, line: str, ctx: click.Context | None = None) -> None:
        super().__init__(line, ctx)
        self.line = line


def echo(text: str = "", err: bool = False) -> None:
    """``click.echo`` of text for people, control characters shown as escapes (``\\x1b``:
    :func:`planner.core.escape.terminal_text`), each line wrapped to the terminal's width
    (:func:`planner.core.textfit.terminal_width`: COLUMNS, else the terminal's, else 100) with a
    hanging indent; nothing is cut. JSON goes out through ``click.echo`` untouched."""
    from planner.core.escape import terminal_text
    from planner.core.textfit import fit_text, terminal_width

    # the terminal's escaping layer (planner.core.escape): a name or path from a file never sends ESC
    stream = sys.stderr if err else sys.stdout
    click.echo(encodable(fit_text(terminal_text(text, newlines=True), terminal_width()), stream), err=err)


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
    """'a', 'a and b', 'a, b and c'."""
    names = [escape_unsafe(str(p)) for p in paths]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def given_on_command_line(name: str) -> bool:
    """Whether the current command's parameter ``name`` was given on the command line (not its default)."""
    return click.get_current_context().get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
