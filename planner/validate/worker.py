"""The measuring worker: a child Python process in which planner.validate.measure's runs happen
(and planner.validate.validation reads the test files its report quotes).

A run seeds torch's random generator, sets torch's thread count, and quiets Transformers' and
bitsandbytes' loggers and Python's warnings (FutureWarning, peft's UserWarning): settings of the whole
interpreter. Made in a child process they are the child's own, and the caller's interpreter keeps
its settings, even while a run goes on (issue 33: a library call changes no interpreter-wide state).

The child is a ``subprocess`` running this module's :func:`serve` with the caller's interpreter
(``sys.executable``). Not ``multiprocessing``'s spawn: it starts the child by re-running the caller's
main script, whose top-level code runs again (or fails) unless it sits under
``if __name__ == "__main__":`` (Python docs, multiprocessing, "Safe importing of main module"), which
a library cannot ask of its callers.

Reading a test file (planner.validate.validation's sections) puts the file in ``sys.modules`` while it
runs and its folder on ``sys.path``: done in a worker too, the caller's import state stays its own.

One worker serves any number of calls, one at a time, so torch and Transformers are imported once per
worker (:func:`planner.validate.measure.run_grid` uses one for a whole grid). The protocol: each
request is a pickled ``(target, args, kwargs)`` on the child's standard input, ``target`` a function
of the planner as ``"module:function"``; each answer a pickled ``("ok", result)`` or ``("error",
exception, traceback text)`` on a copy of the child's standard output, whose own descriptor is pointed
at its standard error first, so what a library prints cannot corrupt the answers. Results are plain
values and exceptions Python's or the planner's, so the caller's process never imports torch. Closing
the standard input ends the child. Both ends are this module's: nothing but the worker's own answers
is unpickled.

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
        # the child's first path entry is the package's folder, in place of the current directory that
        # '-c' puts first (a file there named like a module would shadow it)
        code = (f"import sys; sys.path[:1] = [{root!r}] + ([] if sys.path[:1] == [''] else sys.path[:1]); "
                "from planner.validate.worker import serve; serve()")
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

    def call(self, target: str, *args: Any, **kwargs: Any) -> Any:
        """``target(*args, **kwargs)`` run in the worker, ``target`` a planner function as
        ``"module:function"`` (``"planner.validate.runs:train_step"``); what it returns. An exception it
        raises is raised here, its traceback in the worker as the cause (:class:`WorkerTraceback`).

        Raises:
            ValueError: ``target`` is not a function of the planner package.
            RuntimeError: the worker could not start, or ended before it answered.
        """
        if not target.startswith("planner.") or ":" not in target:
            raise ValueError(f"target must be a planner function as 'module:function', not {target!r}")
        return self._ask((target, args, kwargs))

    def measure(self, kind: str, config: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
        """One measurement: ``kind`` "train" (planner.validate.runs.train_step) or "inference"
        (planner.validate.runs.inference) of ``config`` with keyword ``settings``; its result."""
        function = {"train": "train_step", "inference": "inference"}[kind]
        return self.call(f"planner.validate.runs:{function}", dict(config), **settings)

    def versions(self) -> dict[str, str]:
        """The worker's Python, torch, Transformers, PEFT and bitsandbytes versions
        (planner.validate.builders.versions)."""
        return self.call("planner.validate.builders:versions")

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


def _portable(exc: Exception) -> Exception:
    """``exc`` if its class is Python's or the planner's; else a RuntimeError naming it, so that the
    caller's process does not import the library that raised it (torch) to unpickle it."""
    if type(exc).__module__.partition(".")[0] in ("builtins", "planner"):
        return exc
    return RuntimeError(f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}")


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


def call_in_worker(target: str, *args: Any, **kwargs: Any) -> Any:
    """``target(*args, **kwargs)`` (:meth:`MeasureWorker.call`) in a worker started for this call."""
    with MeasureWorker() as worker:
        return worker.call(target, *args, **kwargs)


def serve() -> None:
    """The worker's loop (run in the child process, never in a caller's): read requests from the
    standard input until it closes, run each, write its answer (module docstring)."""
    import gc
    import importlib

    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # what a library prints goes to standard error
    requests = sys.stdin.buffer
    while True:
        try:
            target, args, kwargs = pickle.load(requests)
        except EOFError:
            return
        try:
            module, _, name = target.partition(":")
            answer: tuple[Any, ...] = ("ok", getattr(importlib.import_module(module), name)(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the caller
            answer = ("error", _portable(exc), traceback.format_exc())
        _answer(out, answer)
        del answer
        gc.collect()  # between runs, as a grid has always run them
