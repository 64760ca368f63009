"""Stopping on SIGINT, SIGTERM and SIGHUP (and the other signals that end a process by default: SIGQUIT,
SIGXCPU, SIGALRM, ...: :data:`OTHER_FATAL_SIGNALS`) without leaving half a report set.

While a :class:`SignalGuard` is active, each of these signals raises :class:`Interrupted` in
the main thread, so that ``finally`` blocks and context managers clean up (a report set's staging
folder is removed, its lock released: :mod:`planner.core.reportset`), and the command exits with
the shell's code for death by that signal, 128 + the signal number: 130 (SIGINT, Ctrl-C), 143
(SIGTERM, what ``timeout`` and ``kill`` send), 129 (SIGHUP, the terminal closed).

Inside :meth:`SignalGuard.critical` (moving a finished report set into place) a signal is held
and raised when the block ends, so the block runs whole. :class:`Interrupted` derives from
BaseException, as KeyboardInterrupt does: ``except Exception`` does not swallow it.

Sources: POSIX ``signal.h`` (SIGHUP 1, SIGINT 2, SIGTERM 15); bash manual, "Exit Status" (a command
killed by signal N exits 128 + N); Python ``signal`` docs (handlers run in the main thread, between
bytecodes).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: The signals a guard turns into :class:`Interrupted` (unless inherited as ignored).
STOP_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None),
                                 getattr(signal, "SIGHUP", None)) if s is not None)
#: The other signals whose default action ends the process (Linux man-pages signal(7), "Standard signals":
#: Term or Core): Ctrl-\ (SIGQUIT), ``ulimit -t`` (SIGXCPU), timers (SIGALRM, SIGVTALRM, SIGPROF), SIGUSR1/2,
#: power failure (SIGPWR), SIGIO, SIGSYS, SIGTRAP, SIGSTKFLT and the real-time signals (signal(7), "Real-time
#: signals": "The default action for an unhandled real-time signal is to terminate the receiving process").
#: A guard turns each into :class:`Interrupted` only while it has its default action:
#: a handler someone installed (a profiler's SIGPROF, a test timeout's SIGALRM) is left as it is.
OTHER_FATAL_SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in (
    "SIGQUIT", "SIGXCPU", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGUSR1", "SIGUSR2", "SIGPWR", "SIGIO", "SIGSYS",
    "SIGTRAP", "SIGSTKFLT")) if s is not None) + tuple(
    range(signal.SIGRTMIN, signal.SIGRTMAX + 1) if hasattr(signal, "SIGRTMIN") else ())  # real-time: Term
#: Every signal a guard may turn into :class:`Interrupted`; all are held (masked) while a set moves into place.
SIGNALS = STOP_SIGNALS + OTHER_FATAL_SIGNALS


class Interrupted(BaseException):
    """The run was stopped by ``signum``; ``exit_code`` is 128 + ``signum``."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + int(signum)
        #: files a report set moved into place before the signal was acted on (it came while they moved,
        #: which completes): for the command to say they were written
        self.written: list = []
        #: the stale reports that set removed with it
        self.removed: list = []
        super().__init__(signum)

    @property
    def name(self) -> str:
        """'SIGTERM', 'SIGINT', 'SIGHUP'."""
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


class SignalGuard:
    """A context manager that turns SIGINT, SIGTERM and SIGHUP (and :data:`OTHER_FATAL_SIGNALS` left at their
    default action) into :class:`Interrupted`.

    Installs its handlers on entry and restores the previous ones on exit. A signal the process
    inherited as ignored (``nohup`` ignores SIGHUP; a shell's background job ignores SIGINT) stays
    ignored, as POSIX asks of interactive programs (bash manual, "Signals"). Outside the main
    thread (where Python cannot set handlers) it does nothing.
    """

    def __init__(self) -> None:
        self._saved: dict[int, Any] = {}
        self._depth = 0
        self._pending: int | None = None
        #: the files report sets moved into place under this guard (whole): a signal after them says so
        self.written: list = []
        #: the stale reports those sets removed (said with them: the command's own lines may be lost)
        self.removed: list = []

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                now = signal.getsignal(s)
                if now is signal.SIG_IGN or (s in OTHER_FATAL_SIGNALS and now is not signal.SIG_DFL):
                    continue  # inherited as ignored (nohup, a background job), or another's handler: kept
                self._saved[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for s, old in self._saved.items():
            signal.signal(s, old)
        self._saved.clear()

    def _handle(self, signum: int, frame: Any) -> None:
        if self._depth:
            self._pending = self._pending or signum  # raised when the critical block ends
            return
        raise Interrupted(signum)

    @contextmanager
    def critical(self) -> Iterator[None]:
        """Run the block whole: a signal that arrives inside it is raised when it ends."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if not self._depth and self._pending is not None:
                signum, self._pending = self._pending, None
                raise Interrupted(signum)


def active_guard() -> SignalGuard | None:
    """The :class:`SignalGuard` whose handler is installed for SIGTERM now, if any (the signal
    disposition is the process's own: this reads it, it keeps nothing)."""
    handler = signal.getsignal(signal.SIGTERM) if hasattr(signal, "SIGTERM") else None
    owner = getattr(handler, "__self__", None)
    return owner if isinstance(owner, SignalGuard) else None


@contextmanager
def held(guard: SignalGuard | None = None) -> Iterator[None]:
    """Run the block whole: the guard's signals (:data:`SIGNALS`) are blocked at the process level
    (``signal.pthread_sigmask``) and one the guard (``guard``, else :func:`active_guard`) already
    caught is held by :meth:`SignalGuard.critical`; either is delivered when the block ends (once: the
    guard's hold outlasts the mask, so a signal let through by the unmasking is held too)."""
    guard = guard if guard is not None else active_guard()
    with (guard.critical() if guard is not None else _nothing()):
        mask = getattr(signal, "pthread_sigmask", None)
        main = threading.current_thread() is threading.main_thread()
        old = mask(signal.SIG_BLOCK, SIGNALS) if mask is not None and main else None
        try:
            yield
        finally:
            if old is not None:
                mask(signal.SIG_SETMASK, old)


@contextmanager
def _nothing() -> Iterator[None]:
    yield
