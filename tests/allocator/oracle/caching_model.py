"""The project's own oracle for the caching-allocator tests: PyTorch's
CUDACachingAllocator (native backend) reduced to what its statistics depend
on. One device, one stream, no cross-stream events, expandable segments off,
unlimited device memory (no OOM, no retry path).

Written from the documented rules of c10/cuda/CUDACachingAllocator.cpp
(round_size, get_allocation_size, get_free_block, should_split, free_block,
release_cached_blocks), not from another model. reserved bytes and segments
are read off the segment list, and each segment's inactive_split share is
recounted from its blocks after every change, rather than adjusted by
deltas as c10 does: a slip in one operation's bookkeeping shows at once.

Addresses: the first segment starts at 0x7f0000000000, each new segment
2**32 above the previous one (a segment over 4 GiB: its size rounded up to
4 GiB), never reused; a split remainder sits right after the part handed
out. Equal-size free blocks are taken lowest address first, so this scheme
is part of the oracle: the replay under test uses the same one.
"""
import bisect

MIN_BLOCK = 512               # kMinBlockSize: every size rounds to a multiple
SMALL_SIZE = 1 << 20          # kSmallSize: rounded sizes up to this are "small"
SMALL_BUFFER = 2 << 20        # kSmallBuffer: segment size of the small pool
LARGE_BUFFER = 20 << 20       # kLargeBuffer: segment for sizes under 10 MiB
MIN_LARGE_ALLOC = 10 << 20    # kMinLargeAlloc
ROUND_LARGE = 2 << 20         # kRoundLarge: bigger segments round to 2 MiB
MAX_NON_SPLIT_ROUNDING = LARGE_BUFFER  # max_non_split_rounding_mb default
FIRST_SEGMENT = 0x7F0000000000
SEGMENT_STRIDE = 1 << 32


def round_up(n, step):
    return -(-n // step) * step


class Block:
    __slots__ = ("addr", "size", "requested", "segment")

    def __init__(self, addr, size, segment):
        self.addr, self.size, self.segment = addr, size, segment
        self.requested = None  # None: free (cached); else the caller's size


class Segment:
    __slots__ = ("size", "small", "blocks", "counted")

    def __init__(self, size, small):
        self.size, self.small = size, small
        self.blocks = []       # address order; neighbours are list neighbours
        self.counted = (0, 0)  # this segment's share of inactive_split


class CachingModel:
    """malloc(size) -> handle (None for size 0), free(handle), empty_cache(),
    memory_stats() -> counters under torch.cuda.memory_stats() names."""

    def __init__(self, max_split_size=float("inf"), divisions=lambda size: 0):
        self.max_split_size = max_split_size
        self.divisions = divisions  # roundup_power2_divisions for a request
        self.free_blocks = {True: [], False: []}  # per pool: sorted (size, addr)
        self.by_addr = {}                         # free blocks by address
        self.segments = []
        self.next_segment = FIRST_SEGMENT
        self.allocated = self.requested = 0
        self.split_free = [0, 0]  # inactive_split count and bytes

    # --- sizes -----------------------------------------------------------
    def round_size(self, size):
        if size < MIN_BLOCK:
            return MIN_BLOCK
        d = self.divisions(size)
        if d > 1 and size > MIN_BLOCK * d:
            # next of the d equal steps between two powers of two
            floor = 1 << (size.bit_length() - 1)
            return round_up(size, max(floor // d, 1))
        return round_up(size, MIN_BLOCK)

    @staticmethod
    def segment_size(rounded):
        if rounded <= SMALL_SIZE:
            return SMALL_BUFFER
        if rounded < MIN_LARGE_ALLOC:
            return LARGE_BUFFER
        return round_up(rounded, ROUND_LARGE)

    # --- free lists --------------------------------------------------------
    def _cache(self, block):
        bisect.insort(self.free_blocks[block.segment.small], (block.size, block.addr))
        self.by_addr[block.addr] = block

    def _uncache(self, block):
        pool = self.free_blocks[block.segment.small]
        del pool[bisect.bisect_left(pool, (block.size, block.addr))]
        del self.by_addr[block.addr]

    def _best_fit(self, rounded, small):
        """Only the smallest candidate is looked at; an oversize mismatch
        rejects it outright (no further search), as get_free_block does."""
        pool = self.free_blocks[small]
        i = bisect.bisect_left(pool, (rounded, 0))
        if i == len(pool):
            return None
        size, addr = pool[i]
        if rounded < self.max_split_size <= size:
            return None
        if rounded >= self.max_split_size and size >= rounded + MAX_NON_SPLIT_ROUNDING:
            return None
        block = self.by_addr[addr]
        self._uncache(block)
        return block

    def _new_segment(self, rounded, small):
        segment = Segment(self.segment_size(rounded), small)
        block = Block(self.next_segment, segment.size, segment)
        self.next_segment += round_up(segment.size, SEGMENT_STRIDE)
        segment.blocks.append(block)
        self.segments.append(segment)
        return block

    def _recount(self, segment):
        """Free blocks of a segment that is split are 'inactive_split'."""
        count = nbytes = 0
        if len(segment.blocks) > 1:
            for b in segment.blocks:
                if b.requested is None:
                    count, nbytes = count + 1, nbytes + b.size
        self.split_free[0] += count - segment.counted[0]
        self.split_free[1] += nbytes - segment.counted[1]
        segment.counted = (count, nbytes)

    # --- the allocator's operations ---------------------------------------
    def malloc(self, size):
        if size == 0:
            return None  # PyTorch hands out nullptr and counts nothing
        rounded = self.round_size(size)
        small = rounded <= SMALL_SIZE
        block = self._best_fit(rounded, small) or self._new_segment(rounded, small)
        rest = block.size - rounded
        if small:
            split = rest >= MIN_BLOCK
        else:
            split = rounded < self.max_split_size and rest > SMALL_SIZE
        if split:
            tail = Block(block.addr + rounded, rest, block.segment)
            blocks = block.segment.blocks
            blocks.insert(blocks.index(block) + 1, tail)
            block.size = rounded
            self._cache(tail)
        block.requested = size
        self.allocated += block.size
        self.requested += size
        self._recount(block.segment)
        return block

    def free(self, block):
        if block is None:
            return
        self.allocated -= block.size
        self.requested -= block.requested
        block.requested = None
        blocks = block.segment.blocks
        i = blocks.index(block)
        # merge with a free right neighbour, then a free left one
        if i + 1 < len(blocks) and blocks[i + 1].requested is None:
            right = blocks.pop(i + 1)
            self._uncache(right)
            block.size += right.size
        if i > 0 and blocks[i - 1].requested is None:
            left = blocks[i - 1]
            self._uncache(left)
            left.size += block.size
            blocks.pop(i)
            block = left
        self._cache(block)
        self._recount(block.segment)

    def empty_cache(self):
        """Return every segment that is one free block to the device."""
        kept = []
        for segment in self.segments:
            if len(segment.blocks) == 1 and segment.blocks[0].requested is None:
                self._uncache(segment.blocks[0])
            else:
                kept.append(segment)
        self.segments = kept

    def memory_stats(self):
        return {
            "allocated_bytes.all.current": self.allocated,
            "reserved_bytes.all.current": sum(s.size for s in self.segments),
            "requested_bytes.all.current": self.requested,
            "segment.all.current": len(self.segments),
            "inactive_split.all.current": self.split_free[0],
            "inactive_split_bytes.all.current": self.split_free[1],
        }
