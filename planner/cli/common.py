"""What every command shares: bad input as one line 'Error: ...' and its exit code."""

from __future__ import annotations

import functools
import sys
from typing import Any

import click

from planner.core.errors import PlannerError


def _fail(message: str, code: int) -> None:
    click.echo("Error: " + " ".join(message.splitlines()), err=True)
    sys.exit(code)


def handle_errors(fn):
    """Turn PlannerError (and unexpected exceptions) into one line and an exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        debug = bool((ctx.find_root().obj or {}).get("debug"))
        try:
            return fn(*args, **kwargs)
        except PlannerError as exc:
            if debug:
                raise
            if exc.exit_code == 1:
                click.echo(str(exc), err=True)
                sys.exit(1)
            _fail(exc.one_line(), exc.exit_code)
        except (KeyboardInterrupt, click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BrokenPipeError:
            # The reader went away (e.g. `planner plan ... | head`): not an error of ours.
            sys.stderr.close()
            sys.exit(0)
        except Exception as exc:  # noqa: BLE001 - the last line of defence, no traceback for users
            if debug:
                raise
            _fail(f"internal error ({type(exc).__name__}: {exc}). This is a bug in planner; "
                  f"rerun with --debug and report the traceback.", 2)

    return wrapper
