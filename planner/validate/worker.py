"""The measuring worker: a child Python process in which planner.validate.measure's runs happen.

A run seeds torch's random generator, sets torch's thread count, and quiets Transformers' and
bitsandbytes' loggers and Python's warnings (FutureWarning, peft's UserWarning): settings of the whole
interpreter. Made in a child process they are the child's own, and the caller's interpreter keeps
its settings, even while a run goes on (issue 33: a library call changes no interpreter-wide state).

The child is a ``subprocess`` running this module's :func:`serve` with the caller's interpreter
(``sys.executable``). Not ``multiprocessing``'s spawn: it starts the child by re-running the caller's
main script, whose top-level code runs again (or fails) unless it sits under
``if __name__ == "__main__":`` (Python docs, multiprocessing, "Safe importing of main module"), which
a library cannot ask of its callers.

One worker serves any number of runs, one at a time, so torch and Transformers are imported once per
worker (:func:`planner.validate.measure.run_grid` uses one for a whole grid). The protocol: each
request is a pickled ``(kind, config, settings)`` on the child's standard input; each answer a
pickled ``("ok", result)`` or ``("error", exception, traceback text)`` on a copy of the child's
standard output, whose own descriptor is pointed at its standard error first, so what a library
prints cannot corrupt the answers. Closing the standard input ends the child. Both ends are this
module's: nothing but the worker's own answers is unpickled.

Importing this module does not import torch; the worker's process does.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any, BinaryIO, Mapping

#: Seconds :meth:`MeasureWorker.close` waits for the worker to end after its input is closed, before
#: it kills it (a run in progress is not waited for: closing happens between runs, or on an error).
CLOSE_WAIT_S = 30


class WorkerTraceback(Exception):
    """The traceback of an exception raised in the worker (the cause of the one re-raised here)."""


class MeasureWorker:
    """A measuring worker process, started at the first run and stopped by :meth:`close` (or at the
    end of a ``with`` block).

    Use: ``with MeasureWorker() as w: measure_train_step(config, ..., worker=w)``.
    """

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> MeasureWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> subprocess.Popen[bytes]:
        if not sys.executable:
            raise RuntimeError("the measuring worker needs a Python executable, and sys.executable is empty")
        root = str(Path(__file__).resolve().parents[2])  # the folder that holds the planner package
        # the child's first path entry is the package's folder (not the current directory)
        code = f"import sys; sys.path[0] = {root!r}; from planner.validate.worker import serve; serve()"
        try:
            return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as exc:
            raise RuntimeError(f"could not start the measuring worker ({sys.executable}): {exc}") from None

    def _ask(self, request: tuple[Any, ...]) -> Any:
        if self._proc is None:
            self._proc = self._start()
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            pickle.dump(request, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.flush()
            answer = pickle.load(proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError):
            self.close()
            raise RuntimeError(f"the measuring worker ended before it answered (exit code {proc.returncode}; "
                               "its standard error says why)") from None
        if answer[0] == "error":
            raise answer[1] from WorkerTraceback(answer[2])
        return answer[1]

    def measure(self, kind: str, config: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
        """Run one measurement in the worker: ``kind`` "train" (planner.validate.runs.train_step) or
        "inference" (planner.validate.runs.inference) with ``config`` and keyword ``settings``; its
        result. An exception the run raises is raised here, its traceback in the worker as the cause."""
        return self._ask((kind, dict(config), dict(settings)))

    def versions(self) -> dict[str, str]:
        """The worker's Python, torch, Transformers, PEFT and bitsandbytes versions
        (planner.validate.builders.versions)."""
        return self._ask(("versions", {}, {}))

    def close(self) -> None:
        """Stop the worker: close its input (it ends) and wait for it, killing it after
        :data:`CLOSE_WAIT_S` seconds. Nothing when it is not running."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _quiet() -> None:
    """The worker's own logging and warnings: Transformers' logger at ERROR, FutureWarnings and peft's
    UserWarnings ignored, bitsandbytes' logger at ERROR (its CPU backend logs that an optional
    inference kernel package is missing). Run in the worker only."""
    import logging
    import warnings

    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
    except ImportError:  # pragma: no cover
        pass
    warnings.filterwarnings("ignore", category=FutureWarning)
    logging.getLogger("bitsandbytes").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning, module="peft")


def _answer(out: BinaryIO, answer: tuple[Any, ...]) -> None:
    """Write ``answer`` to ``out``; an exception or result that does not pickle and unpickle goes
    back as a RuntimeError that names it."""
    try:
        data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(data)  # what the caller's end will do
    except Exception as exc:  # noqa: BLE001 - whatever fails to travel is reported as text
        if answer[0] == "error":
            failure = RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}")
            data = pickle.dumps(("error", failure, answer[2]))
        else:
            data = pickle.dumps(("error", RuntimeError(f"the run's result does not pickle: {exc}"), ""))
    out.write(data)
    out.flush()


def serve() -> None:
    """The worker's loop (run in the child process, never in a caller's): read requests from the
    standard input until it closes, run each, write its answer (module docstring)."""
    import gc

    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # what a library prints goes to standard error
    requests = sys.stdin.buffer
    _quiet()
    from planner.validate import runs
    from planner.validate.builders import versions

    handlers = {"train": runs.train_step, "inference": runs.inference, "versions": lambda _config: versions()}
    while True:
        try:
            kind, config, settings = pickle.load(requests)
        except EOFError:
            return
        try:
            answer: tuple[Any, ...] = ("ok", handlers[kind](config, **settings))
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller
            answer = ("error", exc, traceback.format_exc())
        _answer(out, answer)
        gc.collect()  # between runs, as a grid has always run them
