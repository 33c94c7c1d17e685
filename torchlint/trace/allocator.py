"""PyTorch's CUDA caching allocator, simulated: what ``torch.cuda.max_memory_reserved()`` would
be for a sequence of allocations and frees.  Standard library only.

The constants are PyTorch's own (``c10/cuda/CUDACachingAllocator.cpp``, unchanged from 1.x to
2.x; the defaults, with no ``PYTORCH_CUDA_ALLOC_CONF``):

* every request is rounded up to a multiple of ``MIN_BLOCK`` (512 bytes);
* requests up to ``SMALL_SIZE`` (1 MiB) come from the small pool, whose segments are
  ``SMALL_BUFFER`` (2 MiB) each; larger ones from the large pool: a request under
  ``MIN_LARGE_ALLOC`` (10 MiB) makes a ``LARGE_BUFFER`` (20 MiB) segment, a larger one a
  segment of its size rounded up to ``ROUND_LARGE`` (2 MiB);
* a free block is reused by the best fit (the smallest cached block of the pool that holds
  the request), split when what is left is at least ``MIN_BLOCK`` (small pool) or more than
  ``SMALL_SIZE`` (large pool); freed blocks merge with free neighbours in their segment;
* segments are never given back (no ``empty_cache()``, no memory pressure): reserved only grows.

Not simulated: ``expandable_segments``, ``max_split_size_mb``, garbage-collection thresholds,
streams (one stream), and the allocator's behaviour when cudaMalloc fails (it frees cached
segments and retries: near a full GPU the reserved figure is then lower).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20
SMALL_BUFFER = 2 << 20
LARGE_BUFFER = 20 << 20
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20
SOURCE = "PyTorch c10/cuda/CUDACachingAllocator.cpp (kMinBlockSize, kSmallSize, kSmallBuffer, " \
         "kLargeBuffer, kMinLargeAlloc, kRoundLarge)"


def round_size(size: int) -> int:
    """The bytes a request of ``size`` takes (``round_size`` in the allocator)."""
    if size < MIN_BLOCK:
        return MIN_BLOCK
    return MIN_BLOCK * ((size + MIN_BLOCK - 1) // MIN_BLOCK)


def segment_size(size: int) -> int:
    """The segment a request of ``size`` (already rounded) makes when no cached block holds it."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * ((size + ROUND_LARGE - 1) // ROUND_LARGE)


@dataclass
class _Block:
    segment: int
    offset: int
    size: int
    free: bool = True


@dataclass
class Allocator:
    """Allocate and free by key; ``allocated``/``reserved`` and their peaks."""

    allocated: int = 0
    reserved: int = 0
    peak_allocated: int = 0
    peak_reserved: int = 0
    _pools: dict[bool, list[tuple[int, int, int]]] = field(default_factory=lambda: {True: [], False: []})
    _starts: dict[tuple[int, int], _Block] = field(default_factory=dict)  # (segment, offset) -> block
    _ends: dict[tuple[int, int], _Block] = field(default_factory=dict)  # (segment, offset + size) -> block
    _segments: list[bool] = field(default_factory=list)  # small pool?
    _live: dict[object, _Block] = field(default_factory=dict)

    def _put(self, block: _Block) -> None:
        self._starts[(block.segment, block.offset)] = block
        self._ends[(block.segment, block.offset + block.size)] = block

    def _drop(self, block: _Block) -> None:
        del self._starts[(block.segment, block.offset)]
        del self._ends[(block.segment, block.offset + block.size)]

    def _cache(self, block: _Block) -> None:
        block.free = True
        bisect.insort(self._pools[self._segments[block.segment]], (block.size, block.segment, block.offset))

    def _uncache(self, block: _Block) -> None:
        pool = self._pools[self._segments[block.segment]]
        del pool[bisect.bisect_left(pool, (block.size, block.segment, block.offset))]

    def malloc(self, key: object, nbytes: int) -> None:
        size = round_size(nbytes)
        small = size <= SMALL_SIZE
        pool = self._pools[small]
        i = bisect.bisect_left(pool, (size, -1, -1))
        if i < len(pool):
            _, seg, off = pool.pop(i)
            block = self._starts[(seg, off)]
        else:
            total = segment_size(size)
            self._segments.append(small)
            self.reserved += total
            self.peak_reserved = max(self.peak_reserved, self.reserved)
            block = _Block(len(self._segments) - 1, 0, total)
            self._put(block)
        rest = block.size - size
        if rest >= MIN_BLOCK if small else rest > SMALL_SIZE:
            self._drop(block)
            tail = _Block(block.segment, block.offset + size, rest)
            block.size = size
            self._put(block)
            self._put(tail)
            self._cache(tail)
        block.free = False
        self._live[key] = block
        self.allocated += block.size
        self.peak_allocated = max(self.peak_allocated, self.allocated)

    def free(self, key: object) -> None:
        block = self._live.pop(key, None)
        if block is None:
            return
        self.allocated -= block.size
        after = self._starts.get((block.segment, block.offset + block.size))
        if after is not None and after.free:
            self._uncache(after)
            self._drop(after)
            self._drop(block)
            block.size += after.size
            self._put(block)
        before = self._ends.get((block.segment, block.offset))
        if before is not None and before.free:
            self._uncache(before)
            self._drop(before)
            self._drop(block)
            before.size += block.size
            block = before
            self._put(block)
        self._cache(block)


def replay(events: list[tuple[object, int | None]], allocator: Allocator | None = None) -> Allocator:
    """Run ``events`` (``(key, nbytes)`` allocates, ``(key, None)`` frees) through an allocator."""
    alloc = allocator or Allocator()
    for key, size in events:
        if size is None:
            alloc.free(key)
        else:
            alloc.malloc(key, size)
    return alloc
