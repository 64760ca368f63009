"""planner.memory.caching_allocator: the caching allocator's rules, each against a hand-derived case.

Rules from c10/cuda/CUDACachingAllocator.cpp (round_size, get_allocation_size, get_free_block,
should_split, free_block / try_merge_blocks); every expected value is derived beside its test.
"""

from __future__ import annotations

import pytest

from planner.memory.caching_allocator import CachingAllocator, allocation_size, round_size

KiB, MiB = 2**10, 2**20


@pytest.mark.parametrize("nbytes, rounded", [(0, 512), (1, 512), (512, 512), (513, 1024), (1_000_000, 1_000_448)])
def test_requests_are_rounded_to_512_bytes(nbytes, rounded):
    # 1,000,000 / 512 = 1,953.1 -> 1,954 x 512 = 1,000,448
    assert round_size(nbytes) == rounded


@pytest.mark.parametrize("size, segment", [
    (512, 2 * MiB),                # small pool: kSmallBuffer
    (1 * MiB, 2 * MiB),            # <= kSmallSize is still small
    (1 * MiB + 512, 20 * MiB),     # large, below kMinLargeAlloc: kLargeBuffer
    (10 * MiB - 512, 20 * MiB),
    (10 * MiB, 10 * MiB),          # from kMinLargeAlloc: rounded up to 2 MiB (already a multiple)
    (10 * MiB + 512, 12 * MiB),
])
def test_new_segment_sizes(size, segment):
    assert allocation_size(size) == segment


def test_small_requests_pack_into_one_2_mib_segment():
    a = CachingAllocator()
    for _ in range(4):          # 4 x 512 KiB = 2 MiB: each split leaves >= 512 B until the last takes the rest
        a.malloc(512 * KiB)
    assert (a.reserved, a.segments, a.allocated) == (2 * MiB, 1, 2 * MiB)
    a.malloc(512 * KiB)         # no room: a second segment
    assert (a.reserved, a.segments) == (4 * MiB, 2)


def test_a_large_request_below_10_mib_splits_a_20_mib_segment():
    a = CachingAllocator()
    for _ in range(4):          # 4 x 5 MiB from one 20 MiB segment: remainders 15, 10, 5 MiB (> 1 MiB), then 0
        a.malloc(5 * MiB)
    assert (a.reserved, a.segments, a.allocated) == (20 * MiB, 1, 20 * MiB)


def test_a_large_remainder_of_1_mib_is_not_split_off():
    a = CachingAllocator()
    a.malloc(11 * MiB)          # segment 12 MiB; remaining 1 MiB is not > kSmallSize: the block is all 12 MiB
    assert (a.reserved, a.allocated) == (12 * MiB, 12 * MiB)


def test_best_fit_takes_the_smallest_block_that_fits():
    a = CachingAllocator()
    big, small = a.malloc(40 * MiB), a.malloc(30 * MiB)
    a.free(big)
    a.free(small)
    # 25 MiB: the 30 MiB block fits best; split (5 MiB left > 1 MiB)
    assert a.malloc(25 * MiB) == small
    # 35 MiB: only the 40 MiB block fits
    assert a.malloc(35 * MiB) == big
    assert a.reserved == 70 * MiB


def test_equal_sizes_go_to_the_lowest_address():
    a = CachingAllocator()
    first, second = a.malloc(30 * MiB), a.malloc(30 * MiB)
    a.free(second)
    a.free(first)
    assert a.malloc(30 * MiB) == first


def test_freed_neighbours_merge_inside_their_segment():
    a = CachingAllocator()
    x, y = a.malloc(5 * MiB), a.malloc(5 * MiB)     # one 20 MiB segment: x, y, then 10 MiB free
    a.free(x)
    a.free(y)                                        # y merges with x before it and the 10 MiB after
    a.malloc(20 * MiB)                               # fits the merged 20 MiB block: no new segment
    assert (a.reserved, a.segments) == (20 * MiB, 1)


def test_blocks_of_different_segments_do_not_merge():
    a = CachingAllocator()
    x, y = a.malloc(100 * MiB), a.malloc(100 * MiB)  # two exact segments
    a.free(x)
    a.free(y)
    a.malloc(200 * MiB)                              # neither 100 MiB block holds it
    assert (a.reserved, a.segments) == (400 * MiB, 3)


def test_a_persistent_block_carved_from_a_freed_transient_forces_a_new_segment():
    # The mechanism of torchtune 0.1's QLoRA pool: a 100 MiB transient is freed, a 10 MiB persistent
    # tensor is cut from the front of its cached block (90 MiB left), and the next 100 MiB transient
    # finds no block large enough: reserved 100 + 100 = 200 MiB for 110 MiB allocated at the peak.
    a = CachingAllocator()
    a.free(a.malloc(100 * MiB))
    a.malloc(10 * MiB)
    a.free(a.malloc(100 * MiB))
    assert (a.reserved, a.peak_allocated, a.allocated) == (200 * MiB, 110 * MiB, 10 * MiB)


def test_reserved_never_falls_on_free():
    a = CachingAllocator()
    p = a.malloc(64 * MiB)
    a.free(p)
    assert (a.reserved, a.allocated, a.peak_reserved, a.cached_free_bytes()) == (64 * MiB, 0, 64 * MiB, 64 * MiB)


def test_bad_calls():
    a = CachingAllocator()
    with pytest.raises(ValueError) as e:
        a.malloc(-1)
    assert "sizes are >= 0" in str(e.value)
    with pytest.raises(KeyError):
        a.free(12345)
