"""Stopping on SIGINT, SIGTERM and SIGHUP (and the other signals that end a process by default: SIGQUIT,
SIGXCPU, SIGALRM, SIGABRT, ...: :data:`OTHER_FATAL_SIGNALS`) without leaving half a report set.

While a :class:`SignalGuard` is active, each of these signals raises :class:`Interrupted` in
the main thread, so that ``finally`` blocks and context managers clean up (a report set's staging
folder is removed, its lock released: :mod:`planner.core.reportset`), and the command exits with
the shell's code for death by that signal, 128 + the signal number: 130 (SIGINT, Ctrl-C), 143
(SIGTERM, what ``timeout`` and ``kill`` send), 129 (SIGHUP, the terminal closed).

Inside :meth:`SignalGuard.critical` (moving a finished report set into place) a signal is held
and raised when the block ends, so the block runs whole. :class:`Interrupted` derives from
BaseException, as KeyboardInterrupt does: ``except Exception`` does not swallow it.

A signal that would end the process at once when let through, with no Python handler to turn it into
:class:`Interrupted` (the fault signals of :data:`FAULT_SIGNALS`, sent by ``kill``; or, in the Python API
where the caller installed no handler, SIGTERM and the rest at their default action), is *deferred* by
:func:`held`: it stays blocked (pending) when the block ends, :class:`Interrupted` is raised instead, and
once the run has cleaned up and said what it did, :func:`release` unblocks it and it takes its default action
(the process ends by that signal, as it would have). Known limit: only the main thread blocks them, and a
signal sent to the process goes to any thread that does not block it (numpy's BLAS worker threads), so a
``kill`` of one without a handler can still end the run part-way; one sent to the main thread is held. A Python
handler the program installed (the API's caller) runs in the main thread whichever thread the signal landed on, so
one that lands on a BLAS thread runs mid-block; planner does not swap the program's handlers for the block (a
library call changes no process-wide setting, even for a moment: tests/test_global_state.py).

Known limit: glibc keeps the signals 32 and 33 for itself (Linux man-pages ``signal(7)``, "Real-time signals":
"the glibc POSIX threads implementation internally uses two (for NPTL) ... real-time signals", and adjusts
SIGRTMIN to 34); Python cannot handle or block them, so ``kill -32`` during the moves can leave a mixed set.

Sources: POSIX ``signal.h`` (SIGHUP 1, SIGINT 2, SIGTERM 15); bash manual, "Exit Status" (a command
killed by signal N exits 128 + N); Python ``signal`` docs (handlers run in the main thread, between
bytecodes; ``pthread_sigmask``, ``sigpending``).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: The signals a guard turns into :class:`Interrupted` (unless inherited as ignored).
STOP_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None),
                                 getattr(signal, "SIGHUP", None)) if s is not None)
#: The other signals whose default action ends the process (Linux man-pages signal(7), "Standard signals":
#: Term or Core): Ctrl-\ (SIGQUIT), ``ulimit -t`` (SIGXCPU), timers (SIGALRM, SIGVTALRM, SIGPROF), SIGUSR1/2,
#: power failure (SIGPWR), SIGIO, SIGSYS, SIGTRAP, SIGSTKFLT, SIGABRT (``kill -ABRT``, ``timeout -s ABRT``, systemd's
#: watchdog: ``WatchdogSignal=`` defaults to SIGABRT, systemd.service(5)) and the real-time signals (signal(7),
#: "Real-time signals": "The default action for an unhandled real-time signal is to terminate the receiving
#: process"). A guard turns each into :class:`Interrupted` only while it has its default action:
#: a handler someone installed (a profiler's SIGPROF, a test timeout's SIGALRM) is left as it is.
#: ``abort()`` called from C still ends the process: glibc's abort() unblocks SIGABRT and raises it, and when a
#: handler returns, resets it to the default action and raises it again (glibc manual, "Aborting a Program";
#: POSIX ``abort()``: "overriding blocking or ignoring the SIGABRT signal").
OTHER_FATAL_SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in (
    "SIGQUIT", "SIGXCPU", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGUSR1", "SIGUSR2", "SIGPWR", "SIGIO", "SIGSYS",
    "SIGTRAP", "SIGSTKFLT", "SIGABRT")) if s is not None) + tuple(
    range(signal.SIGRTMIN, signal.SIGRTMAX + 1) if hasattr(signal, "SIGRTMIN") else ())  # real-time: Term
#: Every signal a guard may turn into :class:`Interrupted`; all are held (masked) while a set moves into place.
SIGNALS = STOP_SIGNALS + OTHER_FATAL_SIGNALS
#: The signals of a fault (a bad memory access, an illegal instruction, an arithmetic error): never given a
#: Python handler (after a real fault the handler would return to the faulting instruction, which faults again,
#: for ever), only blocked while a set moves into place (:func:`held`). A real fault still ends the process while
#: they are blocked (the kernel unblocks the signal and resets it to its default action: Linux
#: ``kernel/signal.c``, ``force_sig_info_to_task``; POSIX ``pthread_sigmask``: blocking them is defined only for
#: one "generated by ... kill(), pthread_kill(), raise(), or sigqueue()"); one sent by ``kill`` waits, pending,
#: and is deferred (module docstring).
FAULT_SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in ("SIGBUS", "SIGSEGV", "SIGFPE", "SIGILL"))
                      if s is not None)


class Interrupted(BaseException):
    """The run was stopped by ``signum``; ``exit_code`` is 128 + ``signum``. ``blocked``: the signals :func:`held`
    deferred (still pending, kept blocked), for :func:`release` to let take their default action."""

    def __init__(self, signum: int, blocked: tuple[int, ...] = ()) -> None:
        self.signum = signum
        self.blocked = tuple(blocked)
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

    A signal that comes while the handlers are being put back (the block is over) raises nothing there (h41a N8: a
    traceback from ``__exit__``, exit 1): it is delivered again once the previous handlers are in place, to them; with
    ``final`` (the ``planner`` process's own run, which exits right after: planner.cli.main) the guard's signals are
    ignored from then on instead, so that the finished run exits with its own status, never 128+N with no line
    (h40a N10, h41a N9).
    """

    def __init__(self, *, final: bool = False) -> None:
        self._final = final
        self._closing = False
        self._late: int | None = None
        self._saved: dict[int, Any] = {}
        self._blocked: list[int] = []  # signals held() deferred under this guard: released as it ends
        self._depth = 0
        self._pending: int | None = None
        #: the last signal the guard's handler took (turned into Interrupted, or held): one whose Interrupted was
        #: swallowed where Python ignores exceptions (a weakref or gc callback, such as importlib's module-lock
        #: callback: "Exception ignored in ...") is still known here, for the command to act on
        self.received: int | None = None
        self._saved_hook: Any = None
        #: the files report sets moved into place under this guard (whole): a signal after them says so
        self.written: list = []
        #: the stale reports those sets removed (said with them: the command's own lines may be lost)
        self.removed: list = []
        #: the notes those sets gave ('Left ...', 'Kept ...', 'Removed ...' of a stopped run's leftovers): said
        #: with an error about standard output, which would have carried them (h34a m5, h35a m7)
        self.left: list = []

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                now = signal.getsignal(s)
                if now is signal.SIG_IGN or (s in OTHER_FATAL_SIGNALS and now is not signal.SIG_DFL):
                    continue  # inherited as ignored (nohup, a background job), or another's handler: kept
                if s == getattr(signal, "SIGABRT", None) and _faulthandler_on():
                    continue  # faulthandler's own (C) handler, which Python reports as SIG_DFL: deferred instead
                self._saved[s] = signal.signal(s, self._handle)
            if self._saved:  # an Interrupted raised inside a callback is not printed as a traceback: it is received
                self._saved_hook = sys.unraisablehook
                sys.unraisablehook = self._unraisable
        return self

    def _unraisable(self, info: Any) -> None:
        if isinstance(getattr(info, "exc_value", None), Interrupted):
            return  # known from self.received; the command says it in its own line
        (self._saved_hook or sys.__unraisablehook__)(info)

    def __exit__(self, *exc: object) -> None:
        self._closing = True  # from here a signal is held (_handle), not raised inside this method
        for s, old in self._saved.items():
            signal.signal(s, signal.SIG_IGN if self._final else old)
        self._saved.clear()
        if self._saved_hook is not None:
            sys.unraisablehook, self._saved_hook = self._saved_hook, None
        blocked, self._blocked = self._blocked, []
        release(blocked)  # a fault signal sent during the moves: its default action, now the run has said its line
        late, self._late = self._late, None
        if late is not None and not self._final:
            signal.raise_signal(late)  # to the handler put back (the caller's, or the default action)

    def _handle(self, signum: int, frame: Any) -> None:
        self.received = signum
        if self._closing:
            self._late = signum
            return
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
    """Run the block whole: the guard's signals (:data:`SIGNALS`) and :data:`FAULT_SIGNALS` are blocked
    (``signal.pthread_sigmask``, in the main thread) and one the guard (``guard``, else :func:`active_guard`)
    already caught is held by :meth:`SignalGuard.critical`; either is delivered when the block ends (once: the
    guard's hold outlasts the mask, so a signal let through by the unmasking is held too). One that would end
    the process at once when unblocked (a fault signal sent by ``kill``; without a guard, SIGTERM and the rest at
    their default action) stays blocked, deferred, and :class:`Interrupted` is raised for it when the block ends
    (by the guard's critical block, when there is a guard, which :func:`release`-s it as it ends; else with
    :attr:`Interrupted.blocked`, for the caller to :func:`release`).

    Raises:
        Interrupted: a signal came during the block.
    """
    guard = guard if guard is not None else active_guard()
    with (guard.critical() if guard is not None else _nothing()):
        mask = getattr(signal, "pthread_sigmask", None)
        main = threading.current_thread() is threading.main_thread()
        old = mask(signal.SIG_BLOCK, SIGNALS + FAULT_SIGNALS) if mask is not None and main else None
        first = None
        try:
            yield
        finally:
            if old is not None:
                kept = _defer(old)  # pending, and nothing would turn them into Interrupted: they stay blocked
                mask(signal.SIG_SETMASK, set(old) | set(kept))
                first = kept[0] if kept else None
            if first is not None:  # (an exception in flight is replaced: the signal ends the run all the same)
                if guard is None:
                    raise Interrupted(first, kept)
                guard._blocked.extend(kept)
                guard._pending = first  # raised when the guard's critical block ends: the signal that will end it


def _defer(old: set[int]) -> list[int]:
    """The signals pending now that were not blocked before the hold (``old``) and that would end the process at
    once when unblocked (their default action, or a C handler such as faulthandler's that ends it), in signal
    order."""
    try:
        pending = signal.sigpending()
    except (AttributeError, OSError):
        return []
    kept = []
    for s in sorted(pending - set(old)):
        if s in SIGNALS + FAULT_SIGNALS and signal.getsignal(s) in (signal.SIG_DFL, None):
            kept.append(s)
    return kept


def release(sigs: list[int] | tuple[int, ...]) -> None:
    """Let the signals :func:`held` deferred (``sigs``, still pending) take their default action: standard output
    and error are flushed, then they are unblocked, and the first ends the process. Returns when ``sigs`` is
    empty, or none ended it (taken meanwhile, or its handler changed)."""
    if not sigs:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    _end_by(list(sigs))


def _end_by(sigs: list[int]) -> None:
    """Unblock ``sigs`` in this thread (where they are pending)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, sigs)


def _faulthandler_on() -> bool:
    import faulthandler

    return faulthandler.is_enabled()


@contextmanager
def _nothing() -> Iterator[None]:
    yield
