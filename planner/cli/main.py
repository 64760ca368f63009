"""The ``planner`` command group: the root options, one-line usage errors, and the commands.

Each command lives in its own module (planner/cli/estimate.py, fit.py, plan.py, catalog.py,
calibrate.py, compare.py) and is registered here by name (:data:`COMMANDS`), imported when it runs
or a help lists it; shared option types and the workload options
are in planner/cli/options.py, error handling and text helpers in planner/cli/common.py.

Exit codes: 0 success; 1 no feasible plan (the explanation is printed); 2 bad input (one
line: ``Error: <file>:<line>: <entry>: <problem>. <hint>``); 130, 143, 129 stopped by SIGINT,
SIGTERM, SIGHUP (planner.core.interrupt: reports are left whole). Tracebacks only with ``--debug``.
Heavy modules (pandas, openpyxl, scipy) are imported inside the commands that need them, so
``planner --help`` starts fast.
"""

from __future__ import annotations

import errno
import sys
from typing import Any

import click

from planner.cli.common import (LineError, StderrLost, broken_pipe_line, _fail, check_stream_encodings, flush_stdout,
                                output_failed, say_last, whole_stdout)
from planner.core.interrupt import Interrupted, SignalGuard
from planner.cli.streams import CHECKED, refuse_chatter, refuse_streams_early

EXIT_CODES_HELP = (
    "Exit codes: 0 success; 1 nothing feasible (the reasons are printed); 2 bad input, one line "
    "'Error: <file>:<line>: <entry>: <problem>. <hint>'; 130, 143, 129 stopped by SIGINT, SIGTERM, SIGHUP "
    "(no report is left half-written). Add --debug for a traceback."
)


#: Options a command does not take although a sibling does: (why not, what to do instead), so that
#: the refusal explains itself instead of guessing at a similar name ('--headroom' -> '--zero').
_NOT_TAKEN = {
    "calibrate": {
        "--gpu": ("it measures the GPU it runs on rather than a catalog card",
                  "Pick the card with CUDA_VISIBLE_DEVICES=N; 'planner estimate --gpu ID' then uses the saved "
                  "calibration for that GPU model."),
        "--headroom": ("it measures what the run uses; the planning headroom belongs to the fit check on a catalog "
                       "card",
                       "Give --headroom to 'planner estimate --gpu ID' or 'planner fit'."),
        "--calibration": ("it writes the calibration file rather than reading one", "Name the file with --out FILE."),
    },
    # fit times the request at its answer (planner.api.inputs.card_speed; the API's fit() says the same,
    # planner.api.inputs.NOT_TAKEN): '--prompt-tokens' would otherwise get "Did you mean '--document-tokens'?"
    "fit": {o: ("it times no request of your choosing but one at its answer (inference): tokens_per_request output "
                "tokens (else 256, at most half the context) after a prompt of the rest of the context",
                "Shape that request with --context (and tokens_per_request in a --workload file), or time a request "
                "of your own with 'planner estimate --gpu ID --prompt-tokens N --output-tokens N'.")
            for o in ("--prompt-tokens", "--output-tokens")},
}


def _usage_line(exc: click.UsageError) -> str:
    """A click usage error (unknown option, bad value, missing argument) as one line with a hint."""
    if isinstance(exc, LineError):
        return exc.line
    problem = " ".join(exc.format_message().split())
    if not problem.endswith((".", "?", "!")):
        problem += "."
    path = exc.ctx.command_path if exc.ctx is not None else "planner"
    if isinstance(exc, click.NoSuchOption) and exc.option_name == "--debug":
        root = exc.ctx.find_root().command_path if exc.ctx is not None else "planner"
        return f"{problem} --debug goes before the command: '{root} --debug {path.split()[-1]} ...'."
    if isinstance(exc, click.NoSuchOption) and exc.ctx is not None:
        why = _NOT_TAKEN.get(exc.ctx.command.name or "", {}).get(exc.option_name)
        if why is not None:
            return f"{exc.option_name}: '{path}' takes no {exc.option_name}: {why[0]}. {why[1]}"
        from planner.workload.othernames import option_hint  # another tool's name: --batch-size

        opts = {o for p in exc.ctx.command.params for o in p.opts}
        told = option_hint(exc.option_name, opts.__contains__)
        if told is not None:
            return f"{told} See '{path} --help'."
    return f"{problem} See '{path} --help'."


def _read_only(stream: Any) -> bool:
    """Whether ``stream``'s descriptor is open for reading only (fcntl(2) F_GETFL: O_ACCMODE is O_RDONLY), so
    that no write to it can succeed; False where it has no descriptor (a test's capture) or fcntl is missing."""
    import os

    try:
        import fcntl

        return fcntl.fcntl(stream.fileno(), fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY
    except (ImportError, OSError, ValueError, AttributeError):
        return False


class _NoCommand(Exception):
    """No command given (a bare ``planner``, ``planner --debug``): raised by the group's callback, which runs
    without a command (``invoke_without_command``), and said by :func:`_no_command`."""

    def __init__(self, ctx: click.Context) -> None:
        super().__init__("no command given")
        self.ctx = ctx


def _settle_streams() -> bool:
    """Flush standard output and standard error before the exit, pointing a stream that cannot take what it still
    holds (a pipe whose reader is gone, a full disk) at os.devnull (os.dup2), so that the interpreter's own flush at
    shutdown cannot fail: it would print "Exception ignored in ..." and exit 120 instead of planner's status (the
    line that could not be written was already said where it could be, or could be said nowhere). The CLI entry's
    business only: it changes the process's descriptors 1 and 2. True when standard output took all it held."""
    import os

    whole = True
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        if stream is None:
            continue
        try:
            stream.flush()
            continue
        except ValueError:  # closed: nothing left to flush
            continue
        except OSError:
            whole = whole and name != "stdout"
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, stream.fileno())
            finally:
                os.close(devnull)
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    return whole


def _no_command(ctx: click.Context | None) -> None:
    """No command given (a bare ``planner``, or ``planner --debug``): the Error line naming the commands, then the
    usage, on standard error; exit 2. A standard error that cannot be written (a full disk, a closed pipe) gets
    the line on standard output with the note that says so (:func:`planner.cli.common._fail`), as every other
    usage error does; the usage is left out there."""
    commands = ", ".join(COMMANDS)
    try:
        click.echo(f"Error: no command given; give one of {commands} (the usage follows).", err=True)
        if ctx is not None:
            click.echo(ctx.get_help(), err=True, color=ctx.color)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        root = ctx.command_path if ctx is not None else "planner"
        _fail(f"no command given; give one of {commands}. See '{root} --help'.", 2)
    sys.exit(2)


_NO_SUCH_COMMAND = getattr(click.exceptions, "NoSuchCommand", ())

#: The commands: name -> (module, attribute). A command's module is imported when the command runs
#: or a help lists it (``planner plan`` does not build the options of estimate, fit, calibrate, ...).
COMMANDS = {
    "calibrate": ("planner.cli.calibrate", "calibrate"),
    "catalog": ("planner.cli.catalog", "catalog_command"),
    "compare": ("planner.cli.compare", "compare"),
    "estimate": ("planner.cli.estimate", "estimate"),
    "fit": ("planner.cli.fit", "fit"),
    "plan": ("planner.cli.plan", "plan"),
}


class _Group(click.Group):
    """The command group; in standalone mode a usage error is one line 'Error: ...' and exit 2.

    Click would print the usage, a blank line and the error; the planner reports every bad input
    the same way, as one line (see EXIT_CODES_HELP).
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name`` (:data:`COMMANDS`: its module imported now), its --help stating the
        exit codes; None for an unknown name."""
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return self.commands.get(cmd_name)
        import importlib

        module, attr = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(module), attr)
        if not command.epilog:  # every command's --help states the exit codes
            command.epilog = EXIT_CODES_HELP
        return command

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except _NO_SUCH_COMMAND as exc:  # click 8.4+ suggests from self.commands: the loaded ones only
            raise type(exc)(exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            try:
                return self._standalone(args, prog_name, complete_var, **extra)
            except Interrupted as exc:  # between the command's last line and the guard's end (h41a N8): said, no
                say_last(f"Interrupted by {exc.name}; stopped.", exc.exit_code)  # traceback
        except SystemExit as exc:
            settled = _settle_streams()  # (the process's own run: its stop signals are ignored from the guard's end)
            if not settled and exc.code in (0, None):
                sys.exit(2)  # what standard output still held is lost: not a success
            raise

    def _standalone(self, args: Any, prog_name: str | None, complete_var: str | None, **extra: Any) -> Any:
        """The run in standalone mode (:meth:`main`): the checks on the streams, then the command under the
        signal guard; ends with SystemExit carrying the exit status."""
        if sys.stdout is None:  # started with standard output closed ('>&-'): what it prints would vanish
            _fail("standard output is closed, so nothing planner prints could be read. Send it to a file or to "
                  "/dev/null ('> /dev/null') instead of closing it.", 2)
        if sys.stderr is None:  # standard error closed ('2>&-'): its notes ("Kept ...", "Left ...") would vanish
            try:  # said on standard output, the one stream there is
                click.echo("Error: standard error is closed, so the notes and errors planner gives there could not "
                           "be read. Send it to a file or to /dev/null ('2> /dev/null') instead of closing it.")
            except (OSError, ValueError):
                pass
            sys.exit(2)
        if _read_only(sys.stderr):  # '2< file', or inherited so: open, but every note and error there would fail
            try:
                click.echo("Error: standard error is open read-only ('2< file'), so the notes and errors planner "
                           "gives there could not be written. Send it to a file or to /dev/null ('2> /dev/null').")
            except (OSError, ValueError):
                pass
            sys.exit(2)
        # a stream onto the catalog, the package or a file the command line names: refused before --help,
        # --version or a usage line could be printed into it (the full check runs once the options are read)
        refuse_streams_early(sys.argv[1:] if args is None else list(args))
        check_stream_encodings()  # PYTHONIOENCODING=idna: said in one ASCII line, not lost
        whole_stdout()  # a short write is an error, never output cut short silently
        # SIGINT, SIGTERM, SIGHUP: clean up, exit 130, 143, 129
        with SignalGuard(final=args is None) as guard:  # the process's own command line: it exits right after
            try:
                try:
                    rv = self._main(guard, args, prog_name, complete_var, **extra)
                except SystemExit as exc:
                    if guard.received is not None and exc.code in (0, None):
                        raise Interrupted(guard.received) from None  # see below
                    raise
                if guard.received is not None:  # its Interrupted was swallowed in a callback: the run went on
                    raise Interrupted(guard.received)
                return rv
            except Interrupted as exc:
                # what the stopped run's clean-up left (another program's file in its staging folder), said first
                if getattr(exc, "notes", ()):
                    from planner.cli.common import echo

                    for note in exc.notes:
                        echo(note, err=True)
                # it came while a report set moved into place (which completed first), or after
                written = list(exc.written) or list(dict.fromkeys(guard.written))
                removed = list(exc.removed) if exc.written else list(dict.fromkeys(guard.removed))
                if written:
                    from planner.cli.common import joined

                    gone = f"; removed the stale {joined(removed)}" if removed else ""
                    say_last(f"Interrupted by {exc.name} after the reports were written: wrote {joined(written)} "
                             f"(complete){gone}; stopped.", exc.exit_code)
                say_last(f"Interrupted by {exc.name}; stopped.", exc.exit_code)

    def _main(self, guard: SignalGuard, args: Any, prog_name: str | None, complete_var: str | None,
              **extra: Any) -> Any:
        obj = extra["obj"] = {**(extra.get("obj") or {}), "guard": guard,  # the root context's: kept, not replaced
                              "argv": list(sys.argv[1:] if args is None else args)}  # (for --out hints: h40a N4)
        try:
            try:
                rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            except SystemExit:
                if type(sys.stdout).__name__ == "_PacifyFlushWrapper":  # click's own EPIPE catch (--help | true)
                    raise BrokenPipeError(errno.EPIPE, "Broken pipe") from None
                raise
        except _NoCommand as exc:  # 'planner' or 'planner --debug' alone: what is missing, then the help
            refuse_chatter((2,), checked=bool(obj.get(CHECKED)))
            _no_command(exc.ctx)
        except click.UsageError as exc:
            refuse_chatter((2,), checked=bool(obj.get(CHECKED)))
            _fail(_usage_line(exc), exc.exit_code)
        except click.ClickException as exc:
            refuse_chatter((2,), checked=bool(obj.get(CHECKED)))
            exc.show()
            sys.exit(exc.exit_code)
        except StderrLost as lost:  # a note standard error could not take outside a command (an option's callback)
            lost.say()
        except BrokenPipeError as exc:  # the reader went away (--help | true): said, as for any command
            output_failed(exc)
            _fail(broken_pipe_line(guard), 2)
        except OSError as exc:  # --help or a usage line to a full or read-only standard output
            _fail(output_failed(exc), 2)
        except click.Abort as exc:
            if isinstance(exc.__cause__, KeyboardInterrupt):  # Ctrl-C where no guard could catch it
                say_last("Interrupted by SIGINT; stopped.", 130)
            say_last("Aborted!", 1)
        flush_stdout()  # --help, --version: a failed write is said here, not lost at exit
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(name="planner", cls=_Group, invoke_without_command=True, subcommand_metavar="COMMAND [ARGS]...",
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}, epilog=EXIT_CODES_HELP)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.version_option(package_name="planner")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Size and price hardware for deep-learning work: memory model, catalog, solver, quotes."""
    if ctx.obj is None:
        ctx.obj = {}
    ctx.obj["debug"] = debug  # the dict _Group._main made: the stream check marks it (streams.CHECKED)
    if ctx.invoked_subcommand is None:  # said by _Group._main, as one Error line and the usage
        raise _NoCommand(ctx)

