"""A replay of PyTorch's CUDA caching allocator: reserved bytes from a sequence of mallocs and frees.

``torch.cuda.memory_reserved`` is the sum of the segments the allocator has taken from the driver
(``cudaMalloc``); it never falls unless an allocation fails and the allocator releases cached blocks
or the program calls ``empty_cache``. Which segments exist depends on the order of requests and
frees, by these rules of ``DeviceCachingAllocator`` in c10/cuda/CUDACachingAllocator.cpp
(pytorch/pytorch; the rules below are the same from v2.0 to v2.5: read at the stored commit
001074d25084fdb87a799823e395a50f5ec044d3 and in the v2.x copies indexed with it; function names
given so each rule can be found in any of them):

- ``round_size``: a request is rounded up to a multiple of ``kMinBlockSize`` = 512 B (512 B at least;
  ``roundup_power2_divisions`` unset, the default).
- ``get_pool``: rounded sizes <= ``kSmallSize`` = 1 MiB go to the small pool, larger to the large pool.
- ``get_free_block``: ``pool.blocks.lower_bound(search_key)`` in a set ordered by
  ``BlockComparatorSize`` (stream, then size, then address): the smallest cached block at least
  as large, the lowest address among equal sizes (one stream here).
- ``get_allocation_size`` (no cached block fits: a new segment from ``cudaMalloc``): 2 MiB
  (``kSmallBuffer``) for the small pool; 20 MiB (``kLargeBuffer``) for requests below 10 MiB
  (``kMinLargeAlloc``); else the size rounded up to 2 MiB (``kRoundLarge``).
- ``should_split`` / ``alloc_found_block``: the block is split when the rest is >= 512 B (small
  pool) or > 1 MiB (large pool, with ``max_split_size`` unset: unlimited); the request takes the
  front and the rest stays cached.
- ``free_block`` / ``try_merge_blocks``: a freed block merges with its free neighbours in the same
  segment (``prev``/``next``), and returns to its pool.
- Nothing is given back to the driver unless ``cudaMalloc`` fails (the replay assumes a card large
  enough that it never does) or the program calls ``torch.cuda.empty_cache()`` (``emptyCache`` ->
  ``release_cached_blocks`` -> ``release_blocks`` of the large and the small pool: "Frees all
  non-split blocks", the cached blocks with neither ``prev`` nor ``next``, i.e. whole free
  segments; a segment with any block in use stays): :meth:`CachingAllocator.empty_cache`.

Not modelled: several streams, CUDA graphs' private pools, ``expandable_segments``,
``max_split_size_mb`` and ``garbage_collection_threshold`` (all off by default). Segment addresses
are increasing in the order they are taken (``cudaMalloc`` gives no such promise; an address only
breaks ties between free blocks of equal size).

No work at import time and no module state: each :class:`CachingAllocator` holds its own.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field

#: c10/cuda/CUDACachingAllocator.cpp: "all sizes are rounded to at least 512 bytes".
K_MIN_BLOCK_SIZE = 512
#: c10/cuda/CUDACachingAllocator.cpp: "largest 'small' allocation is 1 MiB".
K_SMALL_SIZE = 1_048_576
#: c10/cuda/CUDACachingAllocator.cpp: "'small' allocations are packed in 2 MiB blocks".
K_SMALL_BUFFER = 2_097_152
#: c10/cuda/CUDACachingAllocator.cpp: "'large' allocations may be packed in 20 MiB blocks".
K_LARGE_BUFFER = 20_971_520
#: c10/cuda/CUDACachingAllocator.cpp: "allocations between 1 and 10 MiB may use kLargeBuffer".
K_MIN_LARGE_ALLOC = 10_485_760
#: c10/cuda/CUDACachingAllocator.cpp: "round up large allocations to 2 MiB".
K_ROUND_LARGE = 2_097_152


def round_size(nbytes: int) -> int:
    """Bytes of the block a request of ``nbytes`` takes (``round_size``: 512 B multiples, 512 B at least)."""
    if nbytes < K_MIN_BLOCK_SIZE:
        return K_MIN_BLOCK_SIZE
    return K_MIN_BLOCK_SIZE * -(-nbytes // K_MIN_BLOCK_SIZE)


def allocation_size(size: int) -> int:
    """Bytes of the new segment for a rounded request ``size`` that no cached block fits
    (``get_allocation_size``)."""
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return K_ROUND_LARGE * -(-size // K_ROUND_LARGE)


@dataclass(eq=False)
class _Block:
    ptr: int
    size: int
    small: bool
    allocated: bool = False
    prev: _Block | None = None
    next: _Block | None = None


@dataclass
class CachingAllocator:
    """One device's caching allocator on one stream (module docstring for the rules and sources).

    All sizes are integer bytes. ``reserved`` is the segments' total (``memory_reserved``),
    ``allocated`` the blocks handed out (``memory_allocated``: rounded sizes), ``peak_*`` their
    maxima (``max_memory_reserved`` / ``max_memory_allocated``).
    """

    reserved: int = 0
    allocated: int = 0
    peak_reserved: int = 0
    peak_allocated: int = 0
    segments: int = 0
    _free: dict = field(default_factory=lambda: {True: [], False: []})
    _live: dict = field(default_factory=dict)
    _next_address: int = 0

    def malloc(self, nbytes: int) -> int:
        """Serve a request of ``nbytes`` (>= 0); returns the block's address, the handle for :meth:`free`.

        Raises:
            ValueError: for a negative size.
        """
        if nbytes < 0:
            raise ValueError(f"a request of {nbytes} bytes: sizes are >= 0")
        size = round_size(nbytes)
        small = size <= K_SMALL_SIZE
        block = self._take_free(size, small)
        if block is None:
            seg = allocation_size(size)
            block = _Block(self._next_address, seg, small)
            # segments are never adjacent: merging only follows prev/next inside one segment
            self._next_address += seg + K_SMALL_BUFFER
            self.reserved += seg
            self.segments += 1
            self.peak_reserved = max(self.peak_reserved, self.reserved)
        remaining = block.size - size
        if (remaining >= K_MIN_BLOCK_SIZE) if small else (remaining > K_SMALL_SIZE):
            rest = _Block(block.ptr + size, remaining, small, prev=block, next=block.next)
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = size
            self._insert(rest)
        block.allocated = True
        self._live[block.ptr] = block
        self.allocated += block.size
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return block.ptr

    def free(self, ptr: int) -> None:
        """Return the block at ``ptr`` to its pool, merged with free neighbours in its segment.

        Raises:
            KeyError: ``ptr`` is not a live block.
        """
        block = self._live.pop(ptr)
        block.allocated = False
        self.allocated -= block.size
        for neighbour in (block.prev, block.next):
            if neighbour is not None and not neighbour.allocated:
                self._remove(neighbour)
                if neighbour is block.prev:
                    block.ptr = neighbour.ptr
                    block.prev = neighbour.prev
                    if block.prev is not None:
                        block.prev.next = block
                else:
                    block.next = neighbour.next
                    if block.next is not None:
                        block.next.prev = block
                block.size += neighbour.size
        self._insert(block)

    def empty_cache(self) -> int:
        """``torch.cuda.empty_cache()``: give every whole free segment (a free block with neither
        ``prev`` nor ``next``) back to the driver (``release_blocks``, module docstring).
        ``peak_reserved`` keeps its maximum (``max_memory_reserved`` is not reset by it).

        Returns:
            the bytes released.
        """
        released = 0
        for small in (True, False):
            keep = []
            for entry in self._free[small]:
                block = entry[2]
                if block.prev is None and block.next is None:
                    released += block.size
                    self.segments -= 1
                else:
                    keep.append(entry)
            self._free[small] = keep
        self.reserved -= released
        return released

    def cached_free_bytes(self) -> int:
        """Bytes reserved but not allocated (the pool's free blocks)."""
        return self.reserved - self.allocated

    # ----- the pools: (size, address) sorted lists, BlockComparatorSize's order -----

    def _take_free(self, size: int, small: bool) -> _Block | None:
        pool = self._free[small]
        i = bisect_left(pool, (size, -1))
        if i == len(pool):
            return None
        _, _, block = pool.pop(i)
        return block

    def _insert(self, block: _Block) -> None:
        insort(self._free[block.small], (block.size, block.ptr, block))

    def _remove(self, block: _Block) -> None:
        pool = self._free[block.small]
        i = bisect_left(pool, (block.size, block.ptr))
        assert pool[i][2] is block
        pool.pop(i)


class AllocationTrace:
    """A program's allocations by id, replayed on a :class:`CachingAllocator` in the order they come (the
    replays of planner.memory.nf4_replay and planner.memory.bnb_load_replay): :meth:`alloc` returns an id,
    :meth:`free` takes ids; ``calls`` counts the allocator calls made."""

    def __init__(self, allocator: CachingAllocator):
        self.allocator = allocator
        self._ptr: dict[int, int] = {}
        self._n = 0
        self.calls = 0

    def alloc(self, nbytes: int) -> int:
        """Allocate ``nbytes`` (B); the allocation's id."""
        self._n += 1
        self._ptr[self._n] = self.allocator.malloc(nbytes)
        self.calls += 1
        return self._n

    def free(self, *ids: int) -> None:
        """Free the allocations ``ids``."""
        for i in ids:
            self.allocator.free(self._ptr.pop(i))
            self.calls += 1
