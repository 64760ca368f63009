"""Count live tensor storages the way the CUDA caching allocator counts them (planner.validate.measure).

How it counts (see docs/validation-method.md for the limits):

* :class:`StorageTracker` is a ``TorchDispatchMode``. After every ATen operator it looks at the
  storages of the operator's outputs (new allocations) and of its inputs (a storage made before
  tracking began and not registered, or without going through the dispatcher, is caught at its
  first use and reported as ``external``). Each new storage gets a weak reference whose callback fires when the
  storage itself is freed, so views and in-place ops cost nothing and frees are seen at once.
* Storages that exist when tracking starts (parameters, buffers, optimizer state) are registered
  with :meth:`StorageTracker.track_existing`.
* Phases ("forward", "backward", "optimizer", "prefill", "decode") are marked by the caller; each
  records its start, peak and end live bytes and which operators allocated in it. A "window"
  (one training step, or one prefill+decode run) records the overall peak, the phase and operator
  where it happened, and the set of live storages at that moment (copied lazily, at the first
  free after a new peak), from which a breakdown into parameters, gradients, optimizer state and
  the rest is made.

Importing this module does not import torch; :func:`make_tracker` does.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from typing import Any, Iterable, Iterator


ALLOCATOR_ROUNDING = 512


def round_alloc(nbytes: int, rounding: int = ALLOCATOR_ROUNDING) -> int:
    """``nbytes`` rounded up to a multiple of ``rounding``; 0 stays 0 (no block is allocated)."""
    if nbytes <= 0:
        return 0
    return -(-nbytes // rounding) * rounding


# --------------------------------------------------------------------------- tracker


class _Entry:
    __slots__ = ("uid", "raw", "nbytes", "phase", "op", "ref", "excluded")

    def __init__(self, uid: int, raw: int, nbytes: int, phase: str | None, op: str) -> None:
        self.uid = uid  # never reused, unlike the storage's address
        self.raw = raw
        self.nbytes = nbytes
        self.phase = phase
        self.op = op
        self.ref: Any = None
        self.excluded = False


class _PhaseStats:
    __slots__ = ("start", "peak", "end", "allocated", "ops", "entries")

    def __init__(self, live: int) -> None:
        self.start = live
        self.peak = live
        self.end = live
        self.allocated = 0
        self.ops: dict[str, int] = {}
        self.entries = 0

    def as_dict(self, top: int = 6) -> dict[str, Any]:
        ops = sorted(self.ops.items(), key=lambda kv: -kv[1])[:top]
        return {
            "start_bytes": self.start,
            "peak_bytes": self.peak,
            "end_bytes": self.end,
            "peak_minus_start_bytes": self.peak - self.start,
            "allocated_bytes": self.allocated,
            "top_allocating_ops": dict(ops),
        }


class Window:
    """Statistics of one measured stretch (a training step, an inference run).

    ``snapshot`` maps storage id -> (bytes, phase that created it, operator that created it)
    for every storage live at the peak."""

    def __init__(self, live: int, raw: int = 0) -> None:
        self.start = live
        self.peak = live
        self.raw_start = raw
        self.raw_peak = raw
        self.peak_phase: str | None = None
        self.peak_op: str | None = None
        self.end = live
        self.phases: dict[str, _PhaseStats] = {}
        self.snapshot: dict[int, tuple[int, str | None, str]] | None = None
        self.dirty = True  # the start is the peak until something grows
        self.external_bytes = 0

    def phase_dict(self) -> dict[str, dict[str, Any]]:
        return {name: st.as_dict() for name, st in self.phases.items()}


class _StorageCounter:
    """Counts live tensor storages (rounded to the allocator's granularity) and their peak: the body
    of :class:`StorageTracker`, which :func:`make_tracker` makes a ``TorchDispatchMode`` (torch is
    imported then, not with this module)."""

    def __init__(self, rounding: int = ALLOCATOR_ROUNDING) -> None:
        super().__init__()
        import torch
        from torch.utils._pytree import tree_flatten

        self._tensor_type, self._flatten = torch.Tensor, tree_flatten
        self.rounding = rounding
        self.live_bytes = 0
        #: the same without rounding (bytes the storages asked for)
        self.live_raw = 0
        self.peak_bytes = 0
        self._live: dict[int, _Entry] = {}
        self._next_uid = 0
        self._lock = threading.RLock()
        self._phase: str | None = None
        self._window: Window | None = None
        self._opnames: dict[Any, str] = {}
        #: operator names seen, with counts (for finding which SDPA kernel ran)
        self.ops_seen: dict[str, int] = {}

    # ---- storages

    def _storage(self, t: Any) -> Any:
        if not isinstance(t, self._tensor_type) or t.device.type == "meta":
            return None
        try:
            return t.untyped_storage()
        except (RuntimeError, NotImplementedError):  # sparse, nested, storage-less tensors
            return None

    def _see(self, st: Any, op: str, external: bool) -> None:
        key = st._cdata
        entry = self._live.get(key)
        if entry is not None:
            if not entry.excluded:
                raw = st.nbytes()
                if raw != entry.raw:  # resized in place (resize_, out= arguments)
                    new = round_alloc(raw, self.rounding)
                    old, old_raw = entry.nbytes, entry.raw
                    entry.raw, entry.nbytes = raw, new
                    if raw > old_raw:
                        self._grow(new - old, op, raw - old_raw)
                    else:
                        self._shrink(old - new, old_raw - raw)
            return
        raw = st.nbytes()
        nbytes = round_alloc(raw, self.rounding)
        entry = _Entry(self._uid(), raw, nbytes, self._phase, "<external>" if external else op)
        entry.ref = weakref.ref(st, functools.partial(self._on_free, key))
        self._live[key] = entry
        if external and self._window is not None:
            self._window.external_bytes += nbytes
        self._grow(nbytes, entry.op, raw)

    def _uid(self) -> int:
        self._next_uid += 1
        return self._next_uid

    def _on_free(self, key: int, _ref: Any) -> None:
        with self._lock:
            entry = self._live.get(key)
            if entry is None or entry.ref is not _ref:
                return
            if not entry.excluded:
                self._shrink(entry.nbytes, entry.raw)  # snapshots a pending peak first
            del self._live[key]

    def _grow(self, nbytes: int, op: str, raw: int) -> None:
        self.live_bytes += nbytes
        self.live_raw += raw
        if self.live_bytes > self.peak_bytes:
            self.peak_bytes = self.live_bytes
        w = self._window
        if w is None:
            return
        if self.live_raw > w.raw_peak:
            w.raw_peak = self.live_raw
        if self.live_bytes > w.peak:
            w.peak = self.live_bytes
            w.peak_phase = self._phase
            w.peak_op = op
            w.dirty = True
        if self._phase is not None:
            ps = w.phases[self._phase]
            ps.allocated += nbytes
            ps.ops[op] = ps.ops.get(op, 0) + nbytes
            if self.live_bytes > ps.peak:
                ps.peak = self.live_bytes

    def _shrink(self, nbytes: int, raw: int) -> None:
        w = self._window
        if w is not None and w.dirty:
            w.snapshot = self._snapshot()
            w.dirty = False
        self.live_bytes -= nbytes
        self.live_raw -= raw

    def _snapshot(self) -> dict[int, tuple[int, str | None, str]]:
        return {e.uid: (e.nbytes, e.phase, e.op) for e in self._live.values() if e.nbytes}

    # ---- public API

    def track_existing(self, tensors: Iterable[Any], label: str = "<existing>") -> int:
        """Count storages that already exist (parameters, buffers, optimizer state).

        Returns the bytes newly added."""
        before = self.live_bytes
        with self._lock:
            for t in tensors:
                st = self._storage(t)
                if st is not None:
                    self._see(st, label, external=False)
        return self.live_bytes - before

    def exclude(self, tensors: Iterable[Any]) -> int:
        """Stop counting these tensors' storages (e.g. tensors that live on the host when the
        run is on a GPU). Returns the bytes removed."""
        removed = 0
        with self._lock:
            for t in tensors:
                st = self._storage(t)
                if st is None:
                    continue
                key = st._cdata
                entry = self._live.get(key)
                if entry is None:  # not counted yet: remember it so it never is
                    entry = _Entry(self._uid(), st.nbytes(), 0, self._phase, "<excluded>")
                    entry.ref = weakref.ref(st, functools.partial(self._on_free, key))
                    entry.excluded = True
                    self._live[key] = entry
                if not entry.excluded:
                    removed += entry.nbytes
                    self._shrink(entry.nbytes, entry.raw)
                    entry.excluded = True
                    entry.nbytes = 0
        return removed

    def _entries_of(self, tensors: Iterable[Any]) -> dict[int, _Entry]:
        found = {}
        for t in tensors:
            st = self._storage(t)
            if st is not None:
                entry = self._live.get(st._cdata)
                if entry is not None:
                    found[entry.uid] = entry
        return found

    def keys_of(self, tensors: Iterable[Any]) -> set[int]:
        """Ids (as used in window snapshots) of these tensors' tracked storages."""
        return set(self._entries_of(tensors))

    def bytes_of(self, tensors: Iterable[Any]) -> int:
        """Counted bytes of the distinct, tracked storages of these tensors."""
        return sum(e.nbytes for e in self._entries_of(tensors).values())

    def begin_window(self) -> Window:
        with self._lock:
            self._window = Window(self.live_bytes, self.live_raw)
            if self._phase is not None:
                self._window.phases[self._phase] = _PhaseStats(self.live_bytes)
            return self._window

    def end_window(self) -> Window:
        with self._lock:
            w = self._window
            if w is None:
                raise RuntimeError("end_window() without begin_window()")
            if w.dirty:
                w.snapshot = self._snapshot()
                w.dirty = False
            w.end = self.live_bytes
            self._window = None
            return w

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Attribute everything inside the block to phase ``name`` (re-entering adds to it)."""
        with self._lock:
            outer = self._phase
            self._phase = name
            w = self._window
            if w is not None:
                ps = w.phases.get(name)
                if ps is None:
                    w.phases[name] = ps = _PhaseStats(self.live_bytes)
                ps.entries += 1
        try:
            yield
        finally:
            with self._lock:
                if w is not None and self._window is w:
                    w.phases[name].end = self.live_bytes
                self._phase = outer

    # ---- dispatch

    def _opname(self, func: Any) -> str:
        name = self._opnames.get(func)
        if name is None:
            name = self._opnames[func] = str(func)
        return name

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = self._opname(func)
        with self._lock:
            self.ops_seen[name] = self.ops_seen.get(name, 0) + 1
            for t in self._flatten(out)[0]:
                st = self._storage(t)
                if st is not None:
                    self._see(st, name, external=False)
            for t in self._flatten((args, kwargs))[0]:
                st = self._storage(t)
                if st is not None:
                    self._see(st, name, external=True)
        return out


def make_tracker(rounding: int = ALLOCATOR_ROUNDING) -> Any:
    """A new :class:`StorageTracker` (a ``TorchDispatchMode``; use it as a context manager).

    The class is made here, at each call, so that importing this module does not import torch and
    no module keeps a class it made (:class:`_StorageCounter` holds its methods)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class StorageTracker(_StorageCounter, TorchDispatchMode):
        """Counts live tensor storages (rounded to the allocator's granularity) and their peak."""

    return StorageTracker(rounding)
