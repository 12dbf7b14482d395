//! The binary's memory allocator: small blocks come from size classes, are reused once
//! freed and are never given back to the system; everything else goes to the C library's
//! allocator.
//!
//! Why: musl's allocator, in the static release build, maps a new group of blocks for each
//! size it runs short of and unmaps a group as soon as it is empty. The start of a run
//! (defining and parsing the command line, the configuration) allocates and frees many
//! short-lived small blocks of growing sizes, so a no-op run made about 60 `mmap` and 40
//! `munmap` calls for them, each `munmap` flushing the other cores' TLBs once the output
//! threads run: a quarter of crontap-run's own time. Here a block, once used, stays ready
//! for the next block of its size class; the memory kept is at most what was in use at the
//! busiest moment, rounded up to the classes (at most a quarter more) and to 64 KiB chunks.
//!
//! Blocks of up to [`MAX`] bytes with an alignment of at most 16 are the small ones: their
//! class follows from the size alone, which `dealloc` and `realloc` are given too, so no
//! block carries a header. A chunk is taken from the C library when the current one is used
//! up; what is left of it is not used. One spin lock guards the classes: crontap-run's
//! threads (output copies, pings, the reaper) allocate rarely, and it is held for a few
//! instructions. Nothing here panics or allocates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, Ordering};

/// The largest small block.
const MAX: usize = 4096;
/// The alignment every small block has (class sizes are multiples of it).
const ALIGN: usize = 16;
/// How much memory is taken from the C library at a time for small blocks.
const CHUNK: usize = 64 * 1024;
/// Size classes: 16 to 64 in steps of 16, then four steps to each power of two up to MAX.
const CLASSES: usize = 28;

/// The allocator (`#[global_allocator]` in the binary).
pub struct Pool {
    /// Held while `state` is used: a spin lock, since it is held for a few instructions.
    locked: AtomicBool,
    state: UnsafeCell<State>,
}

/// The free blocks of each class, and the rest of the current chunk.
struct State {
    free: [Option<NonNull<Free>>; CLASSES],
    next: *mut u8,
    end: *mut u8,
}

/// A free block: the next free block of its class.
struct Free {
    next: Option<NonNull<Free>>,
}

// SAFETY: `state` is used only under `locked`; its pointers refer to memory only the pool
// hands out.
unsafe impl Sync for Pool {}

impl Pool {
    pub const fn new() -> Pool {
        Pool {
            locked: AtomicBool::new(false),
            state: UnsafeCell::new(State {
                free: [None; CLASSES],
                next: ptr::null_mut(),
                end: ptr::null_mut(),
            }),
        }
    }

    /// Runs `f` on the state under the lock. A thread that finds it held spins a little,
    /// then yields the processor, in case the holder was preempted.
    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut spins = 0u32;
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            match spins {
                ..64 => std::hint::spin_loop(),
                _ => std::thread::yield_now(),
            }
        }
        // SAFETY: the lock is held, so no other reference to the state exists.
        let result = f(unsafe { &mut *self.state.get() });
        self.locked.store(false, Ordering::Release);
        result
    }
}

impl Default for Pool {
    fn default() -> Pool {
        Pool::new()
    }
}

/// The class of a block of `layout`, if it is a small one.
fn class_of(layout: Layout) -> Option<usize> {
    (layout.align() <= ALIGN && layout.size() <= MAX).then(|| class(layout.size()))
}

/// The smallest class that holds `size` bytes (1 to MAX; 0 is served as 1).
fn class(size: usize) -> usize {
    let size = size.max(1);
    if size <= 64 {
        return (size - 1) / 16;
    }
    // 2^(p-1) < size <= 2^p, p >= 7: four steps of 2^(p-3) above 2^(p-1).
    let p = usize::BITS - (size - 1).leading_zeros();
    let p = p as usize;
    4 + (p - 7) * 4 + (size - (1 << (p - 1)) - 1) / (1 << (p - 3))
}

/// The size of the blocks of class `class`.
const fn class_size(class: usize) -> usize {
    if class < 4 {
        return 16 * (class + 1);
    }
    let p = 7 + (class - 4) / 4;
    (1 << (p - 1)) + ((class - 4) % 4 + 1) * (1 << (p - 3))
}

impl State {
    /// A block of class `class`: a free one, else the next one of the chunk.
    ///
    /// # Safety
    /// `class` < CLASSES.
    unsafe fn take(&mut self, class: usize) -> *mut u8 {
        if let Some(block) = self.free[class] {
            // SAFETY: a free block holds its successor, written by `give`.
            self.free[class] = unsafe { block.as_ref().next };
            return block.as_ptr().cast();
        }
        let size = class_size(class);
        if (self.end as usize) - (self.next as usize) < size {
            // SAFETY: CHUNK is a valid, non-zero size with ALIGN a power of two.
            let chunk = unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, ALIGN)) };
            if chunk.is_null() {
                return chunk;
            }
            self.next = chunk;
            self.end = chunk.wrapping_add(CHUNK);
        }
        let block = self.next;
        self.next = block.wrapping_add(size);
        block
    }

    /// Makes `block`, of class `class`, free.
    ///
    /// # Safety
    /// `block` came from `take(class)` and is no longer used.
    unsafe fn give(&mut self, block: *mut u8, class: usize) {
        let block = block.cast::<Free>();
        // SAFETY: the block is ours, at least 16 bytes and 16-aligned.
        unsafe {
            block.write(Free {
                next: self.free[class],
            })
        };
        self.free[class] = NonNull::new(block);
    }
}

// SAFETY: small blocks are handed out once until freed, are at least their layout's size and
// 16-aligned; the others are the C library's, with their layout.
unsafe impl GlobalAlloc for Pool {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match class_of(layout) {
            // SAFETY: class_of returns classes below CLASSES.
            Some(class) => self.with(|s| unsafe { s.take(class) }),
            // SAFETY: the caller's layout, as GlobalAlloc requires.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match class_of(layout) {
            Some(_) => {
                // SAFETY: as in alloc; a block is zeroed over its layout's size.
                let block = unsafe { self.alloc(layout) };
                if !block.is_null() {
                    unsafe { block.write_bytes(0, layout.size()) };
                }
                block
            }
            // SAFETY: as in alloc.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match class_of(layout) {
            // SAFETY: the caller gives back a block this allocator made with `layout`.
            Some(class) => self.with(|s| unsafe { s.give(block, class) }),
            None => unsafe { System.dealloc(block, layout) },
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: GlobalAlloc's contract: new_size, rounded to the alignment, fits isize.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class_of(layout), class_of(new_layout)) {
            (Some(old), Some(new)) if old == new => block,
            // SAFETY: the caller's block and layout, as GlobalAlloc requires.
            (None, None) => unsafe { System.realloc(block, layout, new_size) },
            _ => {
                // SAFETY: both layouts are valid; the copy is of what both blocks hold.
                unsafe {
                    let moved = self.alloc(new_layout);
                    if !moved.is_null() {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                    moved
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_size_gets_the_smallest_class_that_holds_it() {
        let sizes: Vec<usize> = (0..CLASSES).map(class_size).collect();
        assert_eq!(&sizes[..8], &[16, 32, 48, 64, 80, 96, 112, 128]);
        assert_eq!(sizes[CLASSES - 1], MAX);
        for size in 1..=MAX {
            let c = class(size);
            assert!(class_size(c) >= size, "{size}");
            assert!(c == 0 || class_size(c - 1) < size, "{size}");
            assert_eq!(class_size(c) % ALIGN, 0);
        }
        assert_eq!(class(0), 0);
    }

    #[test]
    fn blocks_are_distinct_aligned_reused_and_keep_their_bytes() {
        let pool = Pool::new();
        let layouts = [
            (1, 1),
            (16, 8),
            (17, 16),
            (100, 4),
            (4096, 16),
            (4097, 8),
            (64, 32),
        ];
        let mut held = Vec::new();
        for round in 0..3u8 {
            for (i, &(size, align)) in layouts.iter().enumerate() {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a valid layout; the block is written within it and freed once.
                unsafe {
                    let block = pool.alloc(layout);
                    assert!(!block.is_null());
                    assert_eq!(block as usize % align, 0);
                    block.write_bytes(round ^ i as u8, size);
                    held.push((block, layout, round ^ i as u8));
                }
            }
        }
        for &(block, layout, byte) in &held {
            // SAFETY: each block is alive and was filled with `byte`.
            let bytes = unsafe { std::slice::from_raw_parts(block, layout.size()) };
            assert!(bytes.iter().all(|&b| b == byte));
        }
        let mut addresses: Vec<usize> = held.iter().map(|(b, _, _)| *b as usize).collect();
        addresses.sort();
        addresses.dedup();
        assert_eq!(addresses.len(), held.len());
        // The block of 16 bytes of the last round: the last one of its class to be freed.
        let (last, layout, _) = held[2 * layouts.len() + 1];
        // SAFETY: blocks of `held` are freed once each; the one taken again is freed again.
        unsafe {
            for &(block, layout, _) in &held {
                pool.dealloc(block, layout);
            }
            assert_eq!(pool.alloc(layout), last);
            pool.dealloc(last, layout);
        }
    }

    #[test]
    fn realloc_keeps_the_bytes_across_classes_and_to_the_c_library() {
        let pool = Pool::new();
        let mut layout = Layout::from_size_align(10, 1).unwrap();
        // SAFETY: each step reallocates the live block with its current layout.
        unsafe {
            let mut block = pool.alloc(layout);
            block.copy_from_nonoverlapping(b"0123456789".as_ptr(), 10);
            for new_size in [12, 16, 17, 300, 4096, 5000, 100_000, 3000, 10] {
                block = pool.realloc(block, layout, new_size);
                assert!(!block.is_null());
                layout = Layout::from_size_align(new_size, 1).unwrap();
                assert_eq!(std::slice::from_raw_parts(block, 10), b"0123456789");
            }
            let zeroed = pool.alloc_zeroed(Layout::from_size_align(64, 8).unwrap());
            assert!(
                std::slice::from_raw_parts(zeroed, 64)
                    .iter()
                    .all(|&b| b == 0)
            );
            pool.dealloc(zeroed, Layout::from_size_align(64, 8).unwrap());
            pool.dealloc(block, layout);
        }
    }

    #[test]
    fn threads_never_get_the_same_block() {
        static POOL: Pool = Pool::new();
        let threads: Vec<_> = (1..=4u8)
            .map(|id| {
                std::thread::spawn(move || {
                    let mut held = Vec::new();
                    for i in 0..20_000usize {
                        let size = 1 + (i * 37 + usize::from(id) * 101) % 600;
                        let layout = Layout::from_size_align(size, 8).unwrap();
                        // SAFETY: each block is written within its layout, checked, freed once.
                        unsafe {
                            let block = POOL.alloc(layout);
                            block.write_bytes(id, size);
                            held.push((block, layout));
                            if held.len() > 50 {
                                let (old, layout) = held.swap_remove(i % held.len());
                                let bytes = std::slice::from_raw_parts(old, layout.size());
                                assert!(bytes.iter().all(|&b| b == id));
                                POOL.dealloc(old, layout);
                            }
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
    }
}
