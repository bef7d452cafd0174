//! PyTorch's CUDA caching allocator, rule for rule: what the GPU holds for
//! a program's tensors (`torch.cuda.memory_reserved()`, the segments)
//! given its allocations and frees in program order, and whether the
//! program completes on a GPU with a given room.
//!
//! Source: `c10/cuda/CUDACachingAllocator.cpp` (pytorch commit 001074d, the
//! allocator torch 2.x ships; the rules below are unchanged since torch
//! 2.1, expandable segments included), `DeviceCachingAllocator`:
//! - `malloc`: sizes rounded up to 512 bytes (`round_size`); at most 1 MiB
//!   from the small pool, more from the large one (`get_pool`); the
//!   smallest cached block of the stream that fits (`get_free_block`, the
//!   pool ordered by stream, size, address); else a new segment of
//!   `get_allocation_size` (2 MiB for small requests, 20 MiB for requests
//!   under 10 MiB, the request rounded up to 2 MiB above); at the device's
//!   limit, oversize cached blocks released (`release_available_cached_blocks`),
//!   then every unsplit cached segment (`release_cached_blocks`) and one
//!   retry, then the out-of-memory error;
//! - a block split when the rest is worth keeping (`should_split`: 512
//!   bytes in the small pool, more than 1 MiB in the large one, never for
//!   requests of `max_split_size` or more); freed blocks merged with free
//!   neighbours of their segment (`free_block`, `try_merge_blocks`);
//! - `expandable_segments:True`: one segment per stream and pool that
//!   grows by pages (2 MiB small, 20 MiB large) at its lowest free address
//!   (`try_allocate_expandable_block`, `map_block`), whose free whole pages
//!   are unmapped at the device's limit (`unmap_block`).
//!
//! Not modelled: blocks used on a second stream (`recordStream`: their
//! reuse waits for an event), CUDA graphs' private pools,
//! `roundup_power2_divisions` and `garbage_collection_threshold` (both off
//! by default), `set_per_process_memory_fraction`.

use std::collections::BTreeSet;

/// `kMinBlockSize`: every size is rounded up to a multiple of it.
pub const MIN_BLOCK: u64 = 512;
/// `kSmallSize`: the largest request served by the small pool.
pub const SMALL_SIZE: u64 = 1 << 20;
/// `kSmallBuffer`: the small pool's segments (and its expandable pages).
pub const SMALL_BUFFER: u64 = 2 << 20;
/// `kLargeBuffer`: the segment of a request under 10 MiB (and the large
/// pool's expandable pages).
pub const LARGE_BUFFER: u64 = 20 << 20;
/// `kMinLargeAlloc`: requests from here get a segment of their own size.
pub const MIN_LARGE_ALLOC: u64 = 10 << 20;
/// `kRoundLarge`: such segments are rounded up to 2 MiB.
pub const ROUND_LARGE: u64 = 2 << 20;

/// The allocator's settings (`PYTORCH_CUDA_ALLOC_CONF`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// `expandable_segments:True`.
    pub expandable_segments: bool,
    /// `max_split_size_mb`, in bytes (`None`: unlimited, the default).
    pub max_split_size: Option<u64>,
}

impl Config {
    fn max_split(&self) -> u64 {
        self.max_split_size.unwrap_or(u64::MAX)
    }
}

/// A CUDA stream: blocks are cached per stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stream(pub u8);

/// One live allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle(u32);

/// The allocator's counters (`torch.cuda.memory_stats()`), in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes requested by live allocations (`requested_bytes`).
    pub requested: u64,
    /// Their blocks, rounded (`allocated_bytes`, `memory_allocated()`).
    pub allocated: u64,
    /// Segments held (`reserved_bytes`, `memory_reserved()`).
    pub reserved: u64,
    pub peak_requested: u64,
    pub peak_allocated: u64,
    pub peak_reserved: u64,
    /// Segments obtained from the device (`num_device_alloc`).
    pub device_allocs: u64,
    /// Allocations that needed every cached segment released first
    /// (`num_alloc_retries`: a slower step, not a failure).
    pub retries: u64,
}

/// `torch.OutOfMemoryError`: the request could not be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory {
    /// "Tried to allocate" of PyTorch's message: the segment size of the
    /// rounded request (`get_allocation_size`, expandable segments too).
    pub requested: u64,
    /// "allocated by PyTorch" at the failure.
    pub allocated: u64,
    /// Reserved at the failure (reserved − allocated: "reserved by PyTorch
    /// but unallocated").
    pub reserved: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pool {
    Small = 0,
    Large = 1,
}

impl Pool {
    /// `get_pool`.
    fn of(size: u64) -> Pool {
        if size <= SMALL_SIZE {
            Pool::Small
        } else {
            Pool::Large
        }
    }

    /// An expandable segment's page (`ExpandableSegment::segment_size_`).
    fn page(self) -> u64 {
        match self {
            Pool::Small => SMALL_BUFFER,
            Pool::Large => LARGE_BUFFER,
        }
    }
}

/// `Block`: a range of a segment, free or allocated.
#[derive(Clone, Copy, Debug)]
struct Block {
    stream: Stream,
    pool: Pool,
    addr: u64,
    size: u64,
    requested: u64,
    allocated: bool,
    /// Backed by memory (false only for an expandable segment's unmapped
    /// address space).
    mapped: bool,
    expandable: bool,
    prev: Option<u32>,
    next: Option<u32>,
}

/// The cached-block order (`BlockComparatorSize`): stream, size, address.
type SizeKey = (Stream, u64, u64, u32);
/// The unmapped-block order (`BlockComparatorAddress`): stream, address.
type AddrKey = (Stream, u64, u32);

/// An expandable segment's address space: far more than any GPU holds
/// (the allocator reserves 1⅛ of the device; only mapped pages count).
const EXPANDABLE_SPACE: u64 = 1 << 46;

/// One device's caching allocator.
#[derive(Clone, Debug)]
pub struct Allocator {
    config: Config,
    /// What the device can give the allocator (its free memory once the
    /// CUDA context and other memory are taken).
    limit: u64,
    blocks: Vec<Block>,
    spare: Vec<u32>,
    /// Cached free blocks, per pool (`BlockPool::blocks`).
    cached: [BTreeSet<SizeKey>; 2],
    /// Expandable segments' unmapped ranges, per pool (`BlockPool::unmapped`).
    unmapped: [BTreeSet<AddrKey>; 2],
    next_addr: u64,
    /// Where the device puts the next segment, where a GPU's trace says.
    placed: Option<u64>,
    stats: Stats,
}

/// `round_size` (no `roundup_power2_divisions`).
pub fn round_size(size: u64) -> u64 {
    size.max(1).div_ceil(MIN_BLOCK) * MIN_BLOCK
}

/// `get_allocation_size`: the segment a request that found no cached
/// block asks the device for.
pub fn allocation_size(size: u64) -> u64 {
    if size <= SMALL_SIZE {
        SMALL_BUFFER
    } else if size < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        size.div_ceil(ROUND_LARGE) * ROUND_LARGE
    }
}

impl Allocator {
    /// An allocator on a device that can give it `limit` bytes
    /// (`u64::MAX`: a device with room for anything).
    pub fn new(config: Config, limit: u64) -> Allocator {
        Allocator {
            config,
            limit,
            blocks: Vec::new(),
            spare: Vec::new(),
            cached: [BTreeSet::new(), BTreeSet::new()],
            unmapped: [BTreeSet::new(), BTreeSet::new()],
            next_addr: 0,
            placed: None,
            stats: Stats::default(),
        }
    }

    /// The device gives the next segment the address `addr` (a GPU's trace
    /// replayed as it ran: cudaMalloc's addresses are not in order, and
    /// among cached blocks of one size the lowest address is taken).
    /// Without it, segments follow one another.
    pub fn place_next_segment(&mut self, addr: u64) {
        self.placed = Some(addr);
    }

    /// The counters now.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// `DeviceCachingAllocator::malloc`.
    pub fn malloc(&mut self, bytes: u64, stream: Stream) -> Result<Handle, OutOfMemory> {
        let size = round_size(bytes);
        let pool = Pool::of(size);
        let alloc_size = allocation_size(size);
        let found = self
            .free_block(stream, pool, size)
            .or_else(|| self.new_block(stream, pool, size, alloc_size))
            .or_else(|| {
                self.release_available(stream, pool, size)
                    .then(|| self.new_block(stream, pool, size, alloc_size))
                    .flatten()
            })
            .or_else(|| {
                self.release_cached();
                self.stats.retries += 1;
                self.new_block(stream, pool, size, alloc_size)
            });
        let Some(id) = found else {
            return Err(OutOfMemory {
                requested: alloc_size,
                allocated: self.stats.allocated,
                reserved: self.stats.reserved,
            });
        };
        let id = self.take(id, size);
        let b = &mut self.blocks[id as usize];
        b.allocated = true;
        b.requested = bytes;
        let s = &mut self.stats;
        s.allocated += b.size;
        s.requested += bytes;
        s.peak_allocated = s.peak_allocated.max(s.allocated);
        s.peak_requested = s.peak_requested.max(s.requested);
        Ok(Handle(id))
    }

    /// `DeviceCachingAllocator::free` (the block used on its own stream
    /// only): back to its pool, merged with free neighbours.
    pub fn free(&mut self, h: Handle) {
        let id = h.0;
        let b = &mut self.blocks[id as usize];
        debug_assert!(b.allocated, "a block freed twice");
        b.allocated = false;
        let b = *b;
        self.stats.allocated -= b.size;
        self.stats.requested -= b.requested;
        self.merge(id, b.prev);
        self.merge(id, b.next);
        self.cache(id);
    }

    /// `alloc_found_block`: split off what the request does not use when
    /// `should_split` says so; the rest stays cached.
    fn take(&mut self, id: u32, size: u64) -> u32 {
        let b = self.blocks[id as usize];
        let rest = b.size - size;
        let split = if b.pool == Pool::Small || self.config.expandable_segments {
            rest >= MIN_BLOCK
        } else {
            size < self.config.max_split() && rest > SMALL_SIZE
        };
        if !split {
            return id;
        }
        let head = self.add(Block {
            size,
            prev: b.prev,
            next: Some(id),
            ..b
        });
        if let Some(p) = b.prev {
            self.blocks[p as usize].next = Some(head);
        }
        let r = &mut self.blocks[id as usize];
        r.prev = Some(head);
        r.addr += size;
        r.size = rest;
        self.cache(id);
        head
    }

    /// `get_free_block`: the smallest cached block of the stream that
    /// fits, taken out of the pool.
    fn free_block(&mut self, stream: Stream, pool: Pool, size: u64) -> Option<u32> {
        let set = &self.cached[pool as usize];
        let mut it = set
            .range((stream, size, 0, 0)..)
            .take_while(|k| k.0 == stream)
            .peekable();
        let mut best = *it.next()?;
        if self.blocks[best.3 as usize].expandable {
            // The block that can grow counts as large as it can grow: a
            // block of fixed size that fits comes first.
            while let Some(next) = it.peek() {
                if self.expandable_size(next.3) >= self.expandable_size(best.3) {
                    break;
                }
                best = **next;
                it.next();
            }
        }
        let max_split = self.config.max_split();
        let found = best.1;
        if (size < max_split && found >= max_split)
            || (size >= max_split && found >= size.saturating_add(LARGE_BUFFER))
        {
            return None;
        }
        self.cached[pool as usize].remove(&best);
        Some(best.3)
    }

    fn expandable_size(&self, id: u32) -> u64 {
        let b = &self.blocks[id as usize];
        let tail = b
            .next
            .map(|n| &self.blocks[n as usize])
            .filter(|n| !n.mapped)
            .map_or(0, |n| n.size);
        b.size + tail
    }

    /// `alloc_block`: a new segment from the device, or (expandable) pages
    /// mapped onto the stream's segment; `None` at the device's limit.
    fn new_block(&mut self, stream: Stream, pool: Pool, size: u64, alloc_size: u64) -> Option<u32> {
        if self.config.expandable_segments {
            return self.expand(stream, pool, size);
        }
        if self.stats.reserved.saturating_add(alloc_size) > self.limit {
            return None;
        }
        let addr = self.placed.take().unwrap_or_else(|| {
            let a = self.next_addr;
            self.next_addr += alloc_size;
            a
        });
        self.reserve(alloc_size);
        Some(self.add(Block {
            stream,
            pool,
            addr,
            size: alloc_size,
            requested: 0,
            allocated: false,
            mapped: true,
            expandable: false,
            prev: None,
            next: None,
        }))
    }

    fn reserve(&mut self, bytes: u64) {
        let s = &mut self.stats;
        s.reserved += bytes;
        s.peak_reserved = s.peak_reserved.max(s.reserved);
        s.device_allocs += 1;
    }

    /// `release_available_cached_blocks`: with `max_split_size` set, the
    /// oversize cached segments that make room for the request.
    fn release_available(&mut self, stream: Stream, pool: Pool, size: u64) -> bool {
        let Some(max_split) = self.config.max_split_size else {
            return false;
        };
        let key = size.max(max_split);
        let set = &self.cached[pool as usize];
        if let Some(k) = set
            .range((stream, key, 0, 0)..)
            .next()
            .filter(|k| k.0 == stream)
        {
            let id = k.3;
            return self.release(id);
        }
        let mut oversize: Vec<SizeKey> = set
            .range((stream, max_split, 0, 0)..(stream, key, 0, 0))
            .rev()
            .copied()
            .collect();
        let mut released = 0;
        for k in oversize.drain(..) {
            if released >= key {
                break;
            }
            if self.release(k.3) {
                released += k.1;
            }
        }
        released >= key
    }

    /// `release_cached_blocks`: every whole cached segment back to the
    /// device, every free whole page of the expandable segments unmapped.
    fn release_cached(&mut self) {
        for pool in [Pool::Large, Pool::Small] {
            let free: Vec<u32> = self.cached[pool as usize].iter().map(|k| k.3).collect();
            for id in free {
                if self.blocks[id as usize].expandable {
                    self.unmap(id);
                } else {
                    self.release(id);
                }
            }
        }
    }

    /// `release_block`: a cached segment that is not split, back to the
    /// device.
    fn release(&mut self, id: u32) -> bool {
        let b = self.blocks[id as usize];
        if b.expandable || b.prev.is_some() || b.next.is_some() {
            return false;
        }
        self.cached[b.pool as usize].remove(&(b.stream, b.size, b.addr, id));
        self.stats.reserved -= b.size;
        self.spare.push(id);
        true
    }

    fn add(&mut self, b: Block) -> u32 {
        match self.spare.pop() {
            Some(id) => {
                self.blocks[id as usize] = b;
                id
            }
            None => {
                self.blocks.push(b);
                (self.blocks.len() - 1) as u32
            }
        }
    }

    /// Puts a free block in its set: the cached pool, or the unmapped
    /// ranges.
    fn cache(&mut self, id: u32) {
        let b = self.blocks[id as usize];
        if b.mapped {
            self.cached[b.pool as usize].insert((b.stream, b.size, b.addr, id));
        } else {
            self.unmapped[b.pool as usize].insert((b.stream, b.addr, id));
        }
    }

    fn uncache(&mut self, id: u32) {
        let b = self.blocks[id as usize];
        if b.mapped {
            self.cached[b.pool as usize].remove(&(b.stream, b.size, b.addr, id));
        } else {
            self.unmapped[b.pool as usize].remove(&(b.stream, b.addr, id));
        }
    }

    /// `try_merge_blocks`: `src`, a free neighbour in the same mapped
    /// state, joins `dst` (which is in no set).
    fn merge(&mut self, dst: u32, src: Option<u32>) {
        let Some(src) = src else {
            return;
        };
        let (d, s) = (self.blocks[dst as usize], self.blocks[src as usize]);
        if s.allocated || s.mapped != d.mapped {
            return;
        }
        self.uncache(src);
        let d = &mut self.blocks[dst as usize];
        d.size += s.size;
        if d.prev == Some(src) {
            d.addr = s.addr;
            d.prev = s.prev;
            if let Some(p) = s.prev {
                self.blocks[p as usize].next = Some(dst);
            }
        } else {
            d.next = s.next;
            if let Some(n) = s.next {
                self.blocks[n as usize].prev = Some(dst);
            }
        }
        self.spare.push(src);
    }
}

/// Expandable segments (`find_expandable_block`, `map_block`,
/// `unmap_block`).
impl Allocator {
    /// `try_allocate_expandable_block`: the lowest address of the stream's
    /// segment where free and unmapped space hold `size`, its pages
    /// mapped; a new segment when there is none.
    fn expand(&mut self, stream: Stream, pool: Pool, size: u64) -> Option<u32> {
        let mut c = self.expandable_start(stream, pool, size);
        if !self.blocks[c as usize].mapped {
            let n = self.blocks[c as usize].size.min(size);
            c = self.map(c, n)?;
        }
        while self.blocks[c as usize].size < size {
            let next = self.blocks[c as usize].next?;
            let n = (size - self.blocks[c as usize].size).min(self.blocks[next as usize].size);
            c = self.map(next, n)?;
        }
        self.uncache(c);
        Some(c)
    }

    /// `find_expandable_block`.
    fn expandable_start(&mut self, stream: Stream, pool: Pool, size: u64) -> u32 {
        let starts: Vec<u32> = self.unmapped[pool as usize]
            .range((stream, 0, 0)..)
            .take_while(|k| k.0 == stream)
            .map(|k| k.2)
            .collect();
        for u in starts {
            let c = match self.blocks[u as usize].prev {
                Some(p) if !self.blocks[p as usize].allocated => p,
                _ => u,
            };
            if self.room_from(c) >= size {
                return c;
            }
        }
        let addr = self.next_addr.div_ceil(LARGE_BUFFER) * LARGE_BUFFER;
        self.next_addr = addr + EXPANDABLE_SPACE;
        let id = self.add(Block {
            stream,
            pool,
            addr,
            size: EXPANDABLE_SPACE,
            requested: 0,
            allocated: false,
            mapped: false,
            expandable: true,
            prev: None,
            next: None,
        });
        self.cache(id);
        id
    }

    /// Free and unmapped bytes from block `c` on.
    fn room_from(&self, mut c: u32) -> u64 {
        let mut bytes = 0u64;
        loop {
            let b = &self.blocks[c as usize];
            if b.allocated {
                return bytes;
            }
            bytes = bytes.saturating_add(b.size);
            match b.next {
                Some(n) => c = n,
                None => return bytes,
            }
        }
    }

    /// `map_block`: the pages under the first `size` bytes of unmapped
    /// block `u`, merged with free neighbours; the merged block's id.
    fn map(&mut self, u: u32, size: u64) -> Option<u32> {
        let b = self.blocks[u as usize];
        let page = b.pool.page();
        let bytes = (b.addr + size).div_ceil(page) * page - b.addr;
        if self.stats.reserved.saturating_add(bytes) > self.limit {
            return None;
        }
        self.uncache(u);
        if bytes < b.size {
            let rest = self.add(Block {
                addr: b.addr + bytes,
                size: b.size - bytes,
                prev: Some(u),
                ..b
            });
            if let Some(n) = b.next {
                self.blocks[n as usize].prev = Some(rest);
            }
            self.blocks[u as usize].next = Some(rest);
            self.cache(rest);
        }
        let m = &mut self.blocks[u as usize];
        m.mapped = true;
        m.size = bytes;
        let (prev, next) = (m.prev, m.next);
        self.merge(u, prev);
        self.merge(u, next);
        self.cache(u);
        self.reserve(bytes);
        Some(u)
    }

    /// `unmap_block`: free block `id`'s whole pages back to the device.
    fn unmap(&mut self, id: u32) {
        let b = self.blocks[id as usize];
        let page = b.pool.page();
        let begin = b.addr.div_ceil(page) * page;
        let end = (b.addr + b.size) / page * page;
        if begin >= end {
            return;
        }
        self.uncache(id);
        if begin > b.addr {
            let before = self.add(Block {
                size: begin - b.addr,
                next: Some(id),
                ..b
            });
            if let Some(p) = b.prev {
                self.blocks[p as usize].next = Some(before);
            }
            self.blocks[id as usize].prev = Some(before);
            self.cache(before);
        }
        if end < b.addr + b.size {
            let after = self.add(Block {
                addr: end,
                size: b.addr + b.size - end,
                prev: Some(id),
                ..b
            });
            if let Some(n) = b.next {
                self.blocks[n as usize].prev = Some(after);
            }
            self.blocks[id as usize].next = Some(after);
            self.cache(after);
        }
        let u = &mut self.blocks[id as usize];
        u.addr = begin;
        u.size = end - begin;
        u.mapped = false;
        let (prev, next) = (u.prev, u.next);
        self.merge(id, prev);
        self.merge(id, next);
        self.cache(id);
        self.stats.reserved -= end - begin;
    }
}

/// One step of a program's allocations, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Allocation `id` of `bytes` on `stream`.
    Alloc { id: u32, bytes: u64, stream: Stream },
    /// Allocation `id` freed.
    Free { id: u32 },
    /// The device puts the next segment at `addr`
    /// ([`Allocator::place_next_segment`]).
    Place { addr: u64 },
}

/// A program's allocations replayed through the allocator on a device
/// that can give it `limit` bytes: its counters at the end, or the
/// out-of-memory error it stops at.
pub fn replay(events: &[Event], config: Config, limit: u64) -> Result<Stats, OutOfMemory> {
    let mut a = Allocator::new(config, limit);
    let mut live: Vec<Option<Handle>> = Vec::new();
    for e in events {
        match *e {
            Event::Alloc { id, bytes, stream } => {
                let h = a.malloc(bytes, stream)?;
                let i = id as usize;
                if live.len() <= i {
                    live.resize(i + 1, None);
                }
                live[i] = Some(h);
            }
            Event::Free { id } => {
                if let Some(h) = live.get_mut(id as usize).and_then(Option::take) {
                    a.free(h);
                }
            }
            Event::Place { addr } => a.place_next_segment(addr),
        }
    }
    Ok(a.stats())
}

/// The least room (a multiple of 2 MiB, the device's page) with which the
/// program completes, searched between its requested and reserved peaks:
/// below the reserved peak when releasing cached segments at the limit
/// (slower steps) is enough.
pub fn min_capacity(events: &[Event], config: Config) -> Result<u64, OutOfMemory> {
    let free = replay(events, config, u64::MAX)?;
    let page = ROUND_LARGE;
    let mut hi = free.peak_reserved.div_ceil(page);
    // Fewer pages than the requested peak cannot hold it (the allocated
    // peak can be lower on a smaller device: with `max_split_size`, an
    // oversize block reused whole there is a segment of the right size).
    let mut lo = free.peak_requested.div_ceil(page).saturating_sub(1);
    // Invariant: `hi` pages complete, `lo` pages do not (or `lo` is 0).
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if replay(events, config, mid * page).is_ok() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi * page)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Stream = Stream(0);
    const MIB: u64 = 1 << 20;

    fn alloc(id: u32, bytes: u64) -> Event {
        Event::Alloc {
            id,
            bytes,
            stream: S,
        }
    }

    fn free(id: u32) -> Event {
        Event::Free { id }
    }

    fn run(events: &[Event], config: Config) -> Stats {
        replay(events, config, u64::MAX).expect("room")
    }

    #[test]
    fn rounding_and_segment_sizes() {
        // (request, round_size, get_allocation_size): the constants of
        // CUDACachingAllocator.cpp.
        for (req, round, seg) in [
            (1, 512, 2 * MIB),
            (512, 512, 2 * MIB),
            (513, 1024, 2 * MIB),
            (MIB, MIB, 2 * MIB),
            (MIB + 1, MIB + 512, 20 * MIB),
            (10 * MIB - 1, 10 * MIB, 10 * MIB),
            (10 * MIB - 512, 10 * MIB - 512, 20 * MIB),
            (10 * MIB, 10 * MIB, 10 * MIB),
            (21 * MIB + 3, 21 * MIB + 512, 22 * MIB),
        ] {
            assert_eq!(round_size(req), round, "round_size({req})");
            assert_eq!(allocation_size(round), seg, "allocation_size({round})");
        }
    }

    #[test]
    fn small_requests_share_a_2_mib_segment() {
        // Four 100 KB tensors: one 2 MiB segment, split four times.
        let ev: Vec<Event> = (0..4).map(|i| alloc(i, 100_000)).collect();
        let s = run(&ev, Config::default());
        assert_eq!(s.reserved, 2 * MIB);
        assert_eq!(s.allocated, 4 * 100_352);
        assert_eq!(s.device_allocs, 1);
    }

    #[test]
    fn mid_requests_share_a_20_mib_segment() {
        // 3 MiB, 3 MiB, 3 MiB: one 20 MiB segment (the rest, over 1 MiB,
        // is split off each time); a fourth 12 MiB does not fit the 11 MiB
        // left and gets a segment of its own.
        let s = run(
            &[
                alloc(0, 3 * MIB),
                alloc(1, 3 * MIB),
                alloc(2, 3 * MIB),
                alloc(3, 12 * MIB),
            ],
            Config::default(),
        );
        assert_eq!(s.reserved, 32 * MIB);
        assert_eq!(s.device_allocs, 2);
    }

    #[test]
    fn a_freed_block_is_reused_best_fit_and_merged() {
        // 30 and 40 MiB segments; both freed; a 35 MiB request takes the
        // 40 MiB one (best fit), splitting off 5 MiB (> 1 MiB).
        let s = run(
            &[
                alloc(0, 30 * MIB),
                alloc(1, 40 * MIB),
                free(0),
                free(1),
                alloc(2, 35 * MIB),
                alloc(3, 5 * MIB),
            ],
            Config::default(),
        );
        assert_eq!(s.reserved, 70 * MIB);
        assert_eq!(s.device_allocs, 2);
        // The 5 MiB request took the split-off rest of the 40 MiB segment.
        assert_eq!(s.allocated, 40 * MIB);
    }

    #[test]
    fn a_growing_tensor_fragments_without_expandable_segments() {
        // A cache grown by torch.cat, one token at a time: each step
        // allocates old + 1 row and frees the old tensor. The freed blocks
        // are too small for the next, larger request.
        let row = 3 * MIB;
        let mut ev = Vec::new();
        for i in 0..20u32 {
            ev.push(alloc(i, u64::from(i + 1) * row));
            if i > 0 {
                ev.push(free(i - 1));
            }
        }
        let plain = run(&ev, Config::default());
        let grown = run(
            &ev,
            Config {
                expandable_segments: true,
                max_split_size: None,
            },
        );
        // The same tensors; a block that is not split counts whole.
        assert_eq!(plain.peak_requested, grown.peak_requested);
        assert!(plain.peak_allocated >= grown.peak_allocated);
        assert!(
            plain.peak_reserved > grown.peak_reserved,
            "{plain:?} {grown:?}"
        );
        // Expandable: two live tensors at most, whole 20 MiB pages.
        assert_eq!(grown.peak_reserved % LARGE_BUFFER, 0);
        // Plain: every larger request a new segment (the freed ones, each
        // in a segment of its own, never merge): 624 MiB held for 117 MiB
        // live. Expandable: the freed range at the segment's start is
        // reused once it holds the next request: 180 MiB.
        assert_eq!(plain.peak_reserved, 624 * MIB);
        assert_eq!(grown.peak_reserved, 180 * MIB);
    }

    #[test]
    fn at_the_limit_cached_segments_are_released_and_retried() {
        // 40 MiB then freed, then 60 MiB: with room for 64 MiB, the cached
        // 40 MiB segment is released and the request retried.
        let ev = [alloc(0, 40 * MIB), free(0), alloc(1, 60 * MIB)];
        let roomy = replay(&ev, Config::default(), u64::MAX).expect("room");
        assert_eq!(roomy.peak_reserved, 100 * MIB);
        let tight = replay(&ev, Config::default(), 64 * MIB).expect("fits after a retry");
        assert_eq!(tight.peak_reserved, 60 * MIB);
        assert_eq!(tight.retries, 1);
        let err = replay(&ev, Config::default(), 50 * MIB).expect_err("too small");
        assert_eq!(err.requested, 60 * MIB);
        assert_eq!(min_capacity(&ev, Config::default()), Ok(60 * MIB));
    }

    #[test]
    fn max_split_size_keeps_oversize_blocks_whole() {
        // max_split_size_mb=32: a freed 40 MiB block serves neither a
        // 10 MiB request (under the limit) nor a 64 MiB one.
        let cfg = Config {
            expandable_segments: false,
            max_split_size: Some(32 * MIB),
        };
        let s = run(&[alloc(0, 40 * MIB), free(0), alloc(1, 10 * MIB)], cfg);
        assert_eq!(s.reserved, 50 * MIB);
        // Within 20 MiB of the request, an oversize block is reused whole.
        let s = run(&[alloc(0, 40 * MIB), free(0), alloc(1, 36 * MIB)], cfg);
        assert_eq!((s.reserved, s.allocated), (40 * MIB, 40 * MIB));
    }

    #[test]
    fn expandable_pages_are_unmapped_at_the_limit() {
        let cfg = Config {
            expandable_segments: true,
            max_split_size: None,
        };
        // 100 MiB, 100 MiB, free the first, then 150 MiB with room for
        // 280 MiB: the first range's whole pages are unmapped and the
        // request mapped at the end.
        let ev = [
            alloc(0, 100 * MIB),
            alloc(1, 100 * MIB),
            free(0),
            alloc(2, 150 * MIB),
        ];
        let roomy = run(&ev, cfg);
        assert_eq!(roomy.peak_reserved, 360 * MIB);
        let tight = replay(&ev, cfg, 280 * MIB).expect("fits after unmapping");
        assert_eq!(tight.retries, 1);
        assert_eq!(tight.reserved, 260 * MIB);
    }

    #[test]
    fn counters_return_to_zero() {
        let mut ev = Vec::new();
        for i in 0..50u32 {
            ev.push(alloc(i, u64::from(i) * 377_777 + 1));
        }
        for i in (0..50u32).rev() {
            ev.push(free(i));
        }
        for cfg in [
            Config::default(),
            Config {
                expandable_segments: true,
                max_split_size: None,
            },
        ] {
            let s = run(&ev, cfg);
            assert_eq!((s.allocated, s.requested), (0, 0));
            assert!(s.peak_reserved >= s.peak_allocated);
        }
    }
}
