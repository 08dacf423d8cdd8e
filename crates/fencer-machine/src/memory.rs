//! The program's objects and their cells: dense or sparse contents, versioned so that
//! `clone_from` copies only what changed, and heap ids that make allocations commute.

use crate::EventId;
use fencer_ir::{ObjId, Value};
use std::collections::BTreeMap;

/// Largest heap object, in cells (see [`fencer_ir::MAX_CELLS`]).
pub const MAX_ALLOC: i64 = fencer_ir::MAX_CELLS;
/// Objects of at most this many cells are stored densely; larger ones keep only the cells
/// that differ from their initial state, so memory follows what a program touches rather
/// than what it declares.
pub const DENSE_MAX: u32 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    pub value: Value,
    /// The store (or read-modify-write, lock, unlock) whose value the cell holds.
    pub writer: Option<EventId>,
    pub state: CellState,
}

/// Whether a cell holds a value a program may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellState {
    Valid,
    /// Never written, in an object that does not start zeroed (`malloc`, stack slots):
    /// loading or read-modify-writing it is a fault; a store makes it valid.
    Uninit,
    /// A destroyed mutex (value 0, so that a lock of it is enabled and faults): locking,
    /// unlocking or read-modify-writing it is a fault; a store re-initialises it.
    Destroyed,
}

/// The cells of one object. Which representation an object uses depends on its size only,
/// and a sparse map never holds a cell equal to the object's blank one, so equal contents
/// are equal representations: derived `Eq` and `Hash` stay right for memoisation.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Cells {
    Dense(Vec<Cell>),
    Sparse { size: u32, map: BTreeMap<u32, Cell> },
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ObjState {
    /// Names these contents: a new one for every change, copied with them by a clone.
    version: Version,
    /// For dense cells, more than [`CHUNK`] of them, the same for each run of that many
    /// cells: `clone_from` copies only the runs that differ (a CAS table of which a
    /// sequence wrote a few cells). Empty for smaller objects, copied whole (a vector
    /// here would cost an allocation in every clone of the state).
    chunks: Chunks,
    cells: Cells,
    /// What every cell holds before it is first written.
    blank: Cell,
    pub alive: bool,
    pub heap: bool,
}

/// A name for an object's contents, made anew for every change (every mutable borrow
/// through [`Memory`], every [`ObjState::set`]) and copied only with the contents: two
/// objects with one version hold the same contents, and `clone_from` copies nothing
/// between them. DPOR refills one scratch state from others for every sequence it runs,
/// and most objects (string constants, tables only the main thread writes) are the same
/// in both.
type Version = Meta<u64>;

/// Cells per [`ObjState::chunks`] version.
pub(crate) const CHUNK: usize = 32;

/// Versions of runs of cells.
type Chunks = Meta<Vec<u64>>;

/// Bookkeeping kept beside an object's contents and not part of them: equal to any
/// other, hashed as nothing, shown as `_`.
#[derive(Clone, Copy)]
struct Meta<T>(T);

impl<T> PartialEq for Meta<T> {
    fn eq(&self, _: &Meta<T>) -> bool {
        true
    }
}

impl<T> Eq for Meta<T> {}

impl<T> std::hash::Hash for Meta<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<T> std::fmt::Debug for Meta<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("_")
    }
}

impl Version {
    /// Every write makes one: a counter of the thread's own, in a block of 2^40 that no
    /// other thread has, so that workers exploring in parallel share no cache line here
    /// (one atomic counter for all of them bounced between the cores on every write).
    fn fresh() -> Version {
        use std::cell::Cell;
        use std::sync::atomic::{AtomicU64, Ordering};
        const BLOCK: u64 = 1 << 40;
        static BLOCKS: AtomicU64 = AtomicU64::new(0);
        thread_local! {
            static NEXT: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
        }
        NEXT.with(|n| {
            let (mut next, mut end) = n.get();
            if next == end {
                next = BLOCKS.fetch_add(1, Ordering::Relaxed) * BLOCK;
                end = next + BLOCK;
            }
            n.set((next + 1, end));
            Meta(next)
        })
    }
}

impl ObjState {
    /// An object of `size` cells, each 0 and valid if `zeroed`, else uninitialised.
    pub fn new(size: u32, zeroed: bool, heap: bool) -> ObjState {
        let blank = Cell {
            value: 0,
            writer: None,
            state: if zeroed {
                CellState::Valid
            } else {
                CellState::Uninit
            },
        };
        let cells = if size <= DENSE_MAX {
            Cells::Dense(vec![blank; size as usize])
        } else {
            Cells::Sparse {
                size,
                map: BTreeMap::new(),
            }
        };
        let version = Version::fresh();
        let chunks = match &cells {
            Cells::Dense(v) if v.len() > CHUNK => Meta(vec![version.0; v.len().div_ceil(CHUNK)]),
            _ => Meta(Vec::new()),
        };
        ObjState {
            version,
            chunks,
            cells,
            blank,
            alive: true,
            heap,
        }
    }

    /// Number of cells.
    pub fn size(&self) -> u32 {
        match &self.cells {
            Cells::Dense(v) => v.len() as u32,
            Cells::Sparse { size, .. } => *size,
        }
    }

    /// Cell `i`, which must be below [`ObjState::size`].
    pub fn get(&self, i: u32) -> Cell {
        match &self.cells {
            Cells::Dense(v) => v[i as usize],
            Cells::Sparse { map, .. } => map.get(&i).copied().unwrap_or(self.blank),
        }
    }

    /// Sets cell `i`, which must be below [`ObjState::size`].
    pub fn set(&mut self, i: u32, c: Cell) {
        self.version = Version::fresh();
        match &mut self.cells {
            Cells::Dense(v) => {
                v[i as usize] = c;
                if let Some(run) = self.chunks.0.get_mut(i as usize / CHUNK) {
                    *run = self.version.0;
                }
            }
            Cells::Sparse { map, .. } if c == self.blank => {
                map.remove(&i);
            }
            Cells::Sparse { map, .. } => {
                map.insert(i, c);
            }
        }
    }
}

/// Bits of a heap object's id that name the allocating thread (the rest count that
/// thread's allocations).
pub(crate) const ALLOC_THREAD_BITS: u32 = 10;

/// The program's objects: its globals, then what each thread allocated. A heap (or
/// escaping stack) object's id is the allocating thread and how many objects that thread
/// allocated before, never a global count: two threads' allocations then commute (the
/// same objects and pointer values in either order), so DPOR need not order them.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Memory {
    globals: Vec<ObjState>,
    /// Per thread, its allocations in order.
    heap: Vec<Vec<ObjState>>,
}

impl Memory {
    pub(crate) fn new(globals: Vec<ObjState>) -> Memory {
        Memory {
            globals,
            heap: Vec::new(),
        }
    }

    pub fn get(&self, id: ObjId) -> Option<&ObjState> {
        let g = self.globals.len() as u32;
        if id < g {
            return self.globals.get(id as usize);
        }
        let rel = id - g;
        self.heap
            .get((rel & ((1 << ALLOC_THREAD_BITS) - 1)) as usize)?
            .get((rel >> ALLOC_THREAD_BITS) as usize)
    }

    /// The object, to change: its contents get a new [`Version`].
    fn get_mut(&mut self, id: ObjId) -> Option<&mut ObjState> {
        let g = self.globals.len() as u32;
        let o = if id < g {
            self.globals.get_mut(id as usize)
        } else {
            let rel = id - g;
            self.heap
                .get_mut((rel & ((1 << ALLOC_THREAD_BITS) - 1)) as usize)?
                .get_mut((rel >> ALLOC_THREAD_BITS) as usize)
        }?;
        o.version = Version::fresh();
        Some(o)
    }

    /// Adds thread `t`'s next object; `None` when its id would not fit a pointer.
    pub(crate) fn alloc(&mut self, t: u32, o: ObjState) -> Option<ObjId> {
        let id = self.next_id(t)?;
        if self.heap.len() <= t as usize {
            self.heap.resize_with(t as usize + 1, Vec::new);
        }
        self.heap[t as usize].push(o);
        Some(id)
    }

    /// The id thread `t`'s next allocation gets, if it can allocate.
    pub(crate) fn next_id(&self, t: u32) -> Option<ObjId> {
        if t >= 1 << ALLOC_THREAD_BITS {
            return None;
        }
        let k = self.heap.get(t as usize).map_or(0, |h| h.len()) as u64;
        let id = self.globals.len() as u64 + ((k << ALLOC_THREAD_BITS) | t as u64);
        // Pointers encode `id + 1` in 31 bits (see `Ptr::encode`).
        (id < (1 << 31) - 1).then_some(id as ObjId)
    }

    /// Whether the two hold the same objects with the same values in every cell, whoever
    /// wrote them (`==` also compares the writers and the versions).
    pub(crate) fn same_values(&self, other: &Memory) -> bool {
        let same_cell = |a: Cell, b: Cell| a.value == b.value && a.state == b.state;
        let same_obj = |a: &ObjState, b: &ObjState| {
            a.alive == b.alive
                && a.heap == b.heap
                && a.size() == b.size()
                && match (&a.cells, &b.cells) {
                    (Cells::Dense(x), Cells::Dense(y)) => {
                        x.iter().zip(y).all(|(&p, &q)| same_cell(p, q))
                    }
                    (Cells::Sparse { map: x, .. }, Cells::Sparse { map: y, .. }) => x
                        .keys()
                        .chain(y.keys())
                        .all(|&i| same_cell(a.get(i), b.get(i))),
                    _ => false,
                }
        };
        self.globals.len() == other.globals.len()
            && self.heap.len() == other.heap.len()
            && self
                .globals
                .iter()
                .zip(&other.globals)
                .all(|(a, b)| same_obj(a, b))
            && self
                .heap
                .iter()
                .zip(&other.heap)
                .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_obj(a, b)))
    }

    /// Every object with its id: globals first, then each thread's allocations.
    pub fn iter(&self) -> impl Iterator<Item = (ObjId, &ObjState)> + '_ {
        let g = self.globals.len() as u32;
        let globals = self
            .globals
            .iter()
            .enumerate()
            .map(|(i, o)| (i as ObjId, o));
        let heap = self.heap.iter().enumerate().flat_map(move |(t, objs)| {
            objs.iter()
                .enumerate()
                .map(move |(k, o)| (g + ((k as u32) << ALLOC_THREAD_BITS | t as u32), o))
        });
        globals.chain(heap)
    }
}

impl std::ops::Index<ObjId> for Memory {
    type Output = ObjState;
    fn index(&self, id: ObjId) -> &ObjState {
        self.get(id).expect("an object the machine made")
    }
}

impl std::ops::IndexMut<ObjId> for Memory {
    fn index_mut(&mut self, id: ObjId) -> &mut ObjState {
        self.get_mut(id).expect("an object the machine made")
    }
}

// Clone by hand, for `clone_from`: the derived one allocates every vector anew, and DPOR
// clones a state into a scratch one for every sequence it simulates (see fencer-dpor's
// `Simulated`). Each `clone_from` names every field, so that a field added later cannot be
// forgotten.
impl Clone for Cells {
    fn clone(&self) -> Self {
        match self {
            Cells::Dense(v) => Cells::Dense(v.clone()),
            Cells::Sparse { size, map } => Cells::Sparse {
                size: *size,
                map: map.clone(),
            },
        }
    }
    fn clone_from(&mut self, src: &Self) {
        match (&mut *self, src) {
            (Cells::Dense(a), Cells::Dense(b)) => a.clone_from(b),
            _ => *self = src.clone(),
        }
    }
}

impl Clone for ObjState {
    fn clone(&self) -> Self {
        let ObjState {
            version,
            chunks,
            cells,
            blank,
            alive,
            heap,
        } = self;
        ObjState {
            version: *version,
            chunks: chunks.clone(),
            cells: cells.clone(),
            blank: *blank,
            alive: *alive,
            heap: *heap,
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let ObjState {
            version,
            chunks,
            cells,
            blank,
            alive,
            heap,
        } = src;
        if self.version.0 == version.0 {
            return;
        }
        self.version = *version;
        match (&mut self.cells, cells) {
            (Cells::Dense(a), Cells::Dense(b))
                if a.len() == b.len()
                    && !chunks.0.is_empty()
                    && self.chunks.0.len() == chunks.0.len() =>
            {
                for (k, (mine, theirs)) in self.chunks.0.iter_mut().zip(&chunks.0).enumerate() {
                    if *mine != *theirs {
                        let run = k * CHUNK..((k + 1) * CHUNK).min(a.len());
                        a[run.clone()].copy_from_slice(&b[run]);
                        *mine = *theirs;
                    }
                }
            }
            _ => {
                self.cells.clone_from(cells);
                self.chunks.0.clone_from(&chunks.0);
            }
        }
        self.blank = *blank;
        self.alive = *alive;
        self.heap = *heap;
    }
}

impl Clone for Memory {
    fn clone(&self) -> Self {
        let Memory { globals, heap } = self;
        Memory {
            globals: globals.clone(),
            heap: heap.clone(),
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let Memory { globals, heap } = src;
        self.globals.clone_from(globals);
        self.heap.clone_from(heap);
    }
}
