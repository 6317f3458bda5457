//! Shadow memory: access state in flat arrays, allocated lazily by pages, at word granularity
//! where the accesses are aligned words and per byte where they are not.
//!
//! Two shadows:
//! - [`GroupShadow`] (per worker thread, for the group it runs): a [`Cell`] per word of a page
//!   ([`GroupPage::Words`]) until an access to the page is not a run of whole aligned words; the
//!   page then turns into a cell per byte ([`GroupPage::Bytes`]) for as long as it is in use.
//!   A cell holds up to two writes and two reads by distinct work-items in the current barrier
//!   interval, for intra-group checks, plus the group's most telling write and read of its whole
//!   life, merged into the kernel-wide shadow when the group ends. Cells are never cleared:
//!   stamps from earlier groups read as "before a barrier". Local memory has only these cells,
//!   reused by the worker's next group. A global page whose first touch by a group is a store by
//!   consecutive work-items of a word each (`c[i] = ...`) keeps it as one deferred run, in the
//!   page table's entry alone (no page of cells is made), until the group touches the page
//!   otherwise ([`GroupShadow::defer_store`]).
//! - [`KernelShadow`] (one for the launch): the last write and last read merged from finished
//!   groups, in separate arrays made only when the page sees a write (resp. a read). A word page
//!   keeps one 8-byte record per word and kind (plus the 4 stored bytes of a write), so a buffer
//!   only read costs 2 bytes per byte and one only written 3; a page some group touched in
//!   pieces smaller than words keeps records per byte, a byte's write and read packed into 8
//!   bytes (`packed.rs`).
//!
//! A word cell stands for four byte cells in the same state: it is only made by accesses that
//! cover the whole word, so the four bytes never part. What differs per byte, the stored bytes,
//! is kept beside the records as a [`Payload`].

use super::packed::ByteRecords;
use super::pages::{GROUP_PAGE, KERNEL_PAGE, WORD, Zeroed, zeroed};
use super::record::{Record, Stamped};

// SAFETY: every field is an integer (or a struct of integers) whose default is 0.
unsafe impl<P: Payload> Zeroed for Cell<P> {}
// SAFETY: a record is one u64; 0 is `Record::EMPTY`, its default.
unsafe impl Zeroed for Record {}

/// What a cell keeps of the bytes a write stored: one byte, or the four of a word (the lowest
/// address in the low bits).
pub trait Payload: Copy + Default + PartialEq + Eq + std::fmt::Debug + 'static {
    /// Bytes of memory one cell covers.
    const BYTES: usize;
    /// The bytes at `at..` of `stored` (zero past its end: loads store nothing).
    fn from_stored(stored: &[u8], at: usize) -> Self;
    /// Byte `i` of the cell.
    fn byte(self, i: usize) -> u8;
    /// Appends the cell's bytes to `out`.
    fn put(self, out: &mut Vec<u8>);
}

impl Payload for u8 {
    const BYTES: usize = 1;
    #[inline(always)]
    fn from_stored(stored: &[u8], at: usize) -> u8 {
        stored.get(at).copied().unwrap_or(0)
    }
    #[inline(always)]
    fn byte(self, _: usize) -> u8 {
        self
    }
    #[inline(always)]
    fn put(self, out: &mut Vec<u8>) {
        out.push(self);
    }
}

impl Payload for u32 {
    const BYTES: usize = WORD;
    #[inline(always)]
    fn from_stored(stored: &[u8], at: usize) -> u32 {
        match stored.get(at..at + WORD) {
            Some(word) => u32::from_le_bytes([word[0], word[1], word[2], word[3]]),
            None => (0..WORD).fold(0, |w, i| w | (u8::from_stored(stored, at + i) as u32) << (8 * i)),
        }
    }
    #[inline(always)]
    fn byte(self, i: usize) -> u8 {
        (self >> (8 * i)) as u8
    }
    #[inline(always)]
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

/// Per-group state of one byte or one word. Records carry no stored byte here; the stored bytes
/// are kept beside them, so that cells of a run compare equal and share one check.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cell<P> {
    pub write: Stamped,
    /// A write by a work-item other than `write`'s, in the same interval.
    pub other_write: Stamped,
    pub read: Stamped,
    /// A read by a work-item other than `read`'s, in the same interval.
    pub other_read: Stamped,
    /// The group's write and read to merge (a plain one when there was one). Kept on global
    /// cells only: `__local` cells hand nothing to the launch, and the checks leave theirs as
    /// they are.
    pub summary_write: Stamped,
    pub summary_read: Stamped,
    /// What `write`, `other_write` and `summary_write` stored.
    pub write_data: P,
    pub other_data: P,
    pub summary_data: P,
}

pub type ByteCell = Cell<u8>;
pub type WordCell = Cell<u32>;

impl<P: Payload> Cell<P> {
    /// The same accesses as `other`, stored bytes aside: one check serves both.
    #[inline]
    pub fn same_state(&self, other: &Cell<P>) -> bool {
        self.write == other.write
            && self.other_write == other.other_write
            && self.read == other.read
            && self.other_read == other.other_read
            && self.summary_write == other.summary_write
            && self.summary_read == other.summary_read
    }

    /// No access yet by the group whose stamps start at `serial`.
    #[inline]
    pub fn untouched(&self, serial: u32) -> bool {
        self.summary_write.stamp < serial && self.summary_read.stamp < serial
    }

    /// Records the first access to an untouched cell: what checking it would do, without checks.
    #[inline]
    pub fn record_first(&mut self, now: &Stamped, write: bool, data: P) {
        if write {
            self.write = *now;
            self.other_write = Stamped::EMPTY;
            self.summary_write = *now;
            self.write_data = data;
            self.summary_data = data;
        } else {
            self.read = *now;
            self.summary_read = *now;
        }
    }

    /// This cell (in the same state as `before`) after the update that turned `before` into
    /// `after`, by the access `now` that stores `data` here.
    #[inline]
    pub fn updated_like(&self, before: &Cell<P>, after: &Cell<P>, now: &Stamped, data: P) -> Cell<P> {
        let mut cell = *after;
        if after.write == before.write && after.other_write == before.other_write {
            // A load, or a write that changed neither slot: the bytes stay.
            cell.write_data = self.write_data;
            cell.other_data = self.other_data;
        } else {
            // A kept write is the new one, or one of the two before (perhaps moved to the other slot).
            let data_of = |write: &Stamped| match write {
                w if w == now => data,
                w if w == &before.write => self.write_data,
                w if w == &before.other_write => self.other_data,
                _ => P::default(),
            };
            cell.write_data = data_of(&after.write);
            cell.other_data = data_of(&after.other_write);
        }
        cell.summary_data = if after.summary_write != before.summary_write { data } else { self.summary_data };
        cell
    }

    /// Byte `i` of this cell as a byte cell of its own.
    fn byte_cell(&self, i: usize) -> ByteCell {
        Cell {
            write: self.write,
            other_write: self.other_write,
            read: self.read,
            other_read: self.other_read,
            summary_write: self.summary_write,
            summary_read: self.summary_read,
            write_data: self.write_data.byte(i),
            other_data: self.other_data.byte(i),
            summary_data: self.summary_data.byte(i),
        }
    }
}

/// One page of a group's shadow: word cells until an access splits a word.
pub enum GroupPage {
    Words(Box<[WordCell]>),
    Bytes(Box<[ByteCell]>),
}

/// Pages per chunk of a worker's page table.
const CHUNK: usize = 256;

/// A piece of a worker's page table: [`CHUNK`] consecutive pages of one allocation, made when
/// one of them is first used and handed back (for reuse) when the last of them is released, so
/// that the table follows what the current group touches, not the size of the allocation.
struct Chunk {
    pages: Box<[Option<GroupPage>]>,
    marks: Box<[Mark]>,
    /// Pages present, and deferred stores kept without a page ([`GroupShadow::defer_store`]):
    /// what [`GroupShadow::take_page`] has yet to take.
    present: usize,
}

/// Per page of a chunk: the mark last set by [`GroupShadow::marked_page`] or
/// [`GroupShadow::defer_store`], and the bytes touched since, `start..end`; [`DEFERRED`] in
/// `start` when they are one deferred store, whose stored bytes are then at `data..` of
/// [`GroupShadow::deferred`], and `first` is the first word's write. A `__local` page uses
/// `mark` alone, for the stamp [`GroupShadow::stamped_page`] last gave it.
#[derive(Clone, Copy, Default)]
struct Mark {
    mark: u32,
    start: u16,
    end: u16,
    data: u32,
    first: Stamped,
}

/// The flag of [`Mark::start`] that says the touched bytes are one run of words stored by
/// consecutive work-items that no cell holds (the page may not even be there): [`Mark::first`]
/// is the first word's write (word `k` was written by the work-item `k` places after its one),
/// and [`GroupShadow::deferred`] holds the stored bytes, from [`Mark::data`] on. Pages have fewer
/// bytes than this bit's value.
const DEFERRED: u16 = 1 << 15;

impl Mark {
    fn start(&self) -> usize {
        (self.start & !DEFERRED) as usize
    }

    fn deferred(&self) -> bool {
        self.start & DEFERRED != 0
    }
}

/// The cells of one address space of a worker, by allocation index, in pages of [`GROUP_PAGE`]
/// bytes of data, with free lists of pages and of page-table chunks.
#[derive(Default)]
pub struct GroupShadow {
    /// By allocation, then by chunk.
    allocations: Vec<Vec<Option<Chunk>>>,
    spare_chunks: Vec<Chunk>,
    spare_words: Vec<Box<[WordCell]>>,
    spare_bytes: Vec<Box<[ByteCell]>>,
    /// Bytes of pages and page tables made so far (pages and chunks are reused, never freed).
    bytes: usize,
    /// Pages looked up by [`GroupShadow::stamped_page`] for accesses that may change a cell
    /// otherwise than a work-item's plain load does: while this stays the same, such cells
    /// changed only by plain loads.
    changes: u64,
    /// The bytes that the group's deferred stores ([`GroupShadow::defer_store`]) stored, each
    /// run's where its page's mark says, one after another: copied as they come and copied out
    /// at the group's end in one piece each, not word by word into the cells and out again.
    deferred: Vec<u8>,
}

impl GroupShadow {
    /// Bytes of pages and page tables this shadow has made (for memory accounting).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many accesses that may change cells otherwise than plain loads do have looked up
    /// pages so far ([`GroupShadow::stamped_page`]).
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The chunk holding page `index` of an allocation, made (or reused) on first use.
    #[inline]
    fn chunk(&mut self, allocation: usize, index: usize) -> &mut Chunk {
        let at = index / CHUNK;
        if let Some(Some(_)) = self.allocations.get(allocation).and_then(|a| a.get(at)) {
            return self.allocations[allocation][at].as_mut().expect("present");
        }
        self.fresh_chunk(allocation, at)
    }

    #[cold]
    #[inline(never)]
    fn fresh_chunk(&mut self, allocation: usize, at: usize) -> &mut Chunk {
        if allocation >= self.allocations.len() {
            self.bytes += (allocation + 1 - self.allocations.len()) * std::mem::size_of::<Vec<Option<Chunk>>>();
            self.allocations.resize_with(allocation + 1, Vec::new);
        }
        let chunks = &mut self.allocations[allocation];
        if at >= chunks.len() {
            self.bytes += (at + 1 - chunks.len()) * std::mem::size_of::<Option<Chunk>>();
            chunks.resize_with(at + 1, || None);
        }
        let chunk = match self.spare_chunks.pop() {
            // Its marks are earlier groups' (stamps only grow on a worker, and chunks are
            // handed back only when a group ends): none reads as the current group's.
            Some(chunk) => chunk,
            None => {
                self.bytes += CHUNK * (std::mem::size_of::<Option<GroupPage>>() + std::mem::size_of::<Mark>());
                Chunk {
                    pages: (0..CHUNK).map(|_| None).collect(),
                    marks: vec![Mark::default(); CHUNK].into_boxed_slice(),
                    present: 0,
                }
            }
        };
        self.allocations[allocation][at].insert(chunk)
    }

    /// Page `index` of an allocation, made (or taken from the free list) on first use; a fresh
    /// page has word cells.
    #[inline]
    pub fn page(&mut self, allocation: usize, index: usize) -> &mut GroupPage {
        if let Some(Some(chunk)) = self.allocations.get(allocation).and_then(|a| a.get(index / CHUNK))
            && chunk.pages[index % CHUNK].is_some()
        {
            let chunk = self.allocations[allocation][index / CHUNK].as_mut().expect("present");
            return chunk.pages[index % CHUNK].as_mut().expect("present");
        }
        self.fresh_page(allocation, index)
    }

    #[cold]
    #[inline(never)]
    fn fresh_page(&mut self, allocation: usize, index: usize) -> &mut GroupPage {
        self.new_page(allocation, index, true)
    }

    /// A page of word cells (from the free list, or made) put at `index`, counted as present
    /// unless it takes the place of a deferred store counted already.
    fn new_page(&mut self, allocation: usize, index: usize, count: bool) -> &mut GroupPage {
        let fresh = match self.spare_words.pop() {
            Some(page) => page,
            None => {
                self.bytes += GROUP_PAGE / WORD * std::mem::size_of::<WordCell>();
                zeroed(GROUP_PAGE / WORD)
            }
        };
        let chunk = self.chunk(allocation, index);
        chunk.present += count as usize;
        chunk.pages[index % CHUNK].insert(GroupPage::Words(fresh))
    }

    /// Page `index` of an allocation, as [`GroupShadow::page`] gives it, with the stamp it was
    /// last given here (0 if never), replaced by `stamp`. For `__local` pages, which have no
    /// other use for their marks: every check of a cell of such a page looks it up here with
    /// the group's stamp of that moment, so no record on the page is newer than that stamp.
    /// `changes` says the access may change a cell otherwise than a work-item's plain load
    /// does (it is counted: [`GroupShadow::changes`]).
    #[inline(always)]
    pub fn stamped_page(
        &mut self,
        allocation: usize,
        index: usize,
        stamp: u32,
        changes: bool,
    ) -> (u32, &mut GroupPage) {
        self.changes += changes as u64;
        if let Some(Some(chunk)) = self.allocations.get(allocation).and_then(|a| a.get(index / CHUNK))
            && chunk.pages[index % CHUNK].is_some()
        {
            let chunk = self.allocations[allocation][index / CHUNK].as_mut().expect("present");
            let last = std::mem::replace(&mut chunk.marks[index % CHUNK].mark, stamp);
            return (last, chunk.pages[index % CHUNK].as_mut().expect("present"));
        }
        self.fresh_stamped_page(allocation, index, stamp)
    }

    #[cold]
    #[inline(never)]
    fn fresh_stamped_page(&mut self, allocation: usize, index: usize, stamp: u32) -> (u32, &mut GroupPage) {
        let chunk = self.chunk(allocation, index);
        let last = std::mem::replace(&mut chunk.marks[index % CHUNK].mark, stamp);
        (last, self.present_page(allocation, index))
    }

    /// Marks bytes `start..end` of a page as touched under `mark` and returns the page, made on
    /// first use, with its cells holding any deferred store ([`GroupShadow::defer_store`]); true
    /// if the page did not carry that mark yet (its touched range then starts afresh).
    #[inline]
    pub fn marked_page(
        &mut self,
        allocation: usize,
        index: usize,
        mark: u32,
        start: usize,
        end: usize,
    ) -> (bool, &mut GroupPage) {
        let (fresh, deferred) = self.mark(allocation, index, mark, start, end);
        if let Some((start, end, data, first)) = deferred {
            // A deferred store without a page was counted as present: its page takes its place.
            let chunk = self.allocations[allocation][index / CHUNK].as_mut().expect("marked");
            if chunk.pages[index % CHUNK].is_none() {
                self.new_page(allocation, index, false);
            }
            let stored = std::mem::take(&mut self.deferred);
            write_deferred(self.present_page(allocation, index), (start, end), first, &stored[data..]);
            self.deferred = stored;
        }
        (fresh, self.present_page(allocation, index))
    }

    /// Page `index` of an allocation, whose chunk is present.
    #[inline(always)]
    fn present_page(&mut self, allocation: usize, index: usize) -> &mut GroupPage {
        let chunk = self.allocations[allocation][index / CHUNK].as_mut().expect("marked");
        if chunk.pages[index % CHUNK].is_some() {
            let chunk = self.allocations[allocation][index / CHUNK].as_mut().expect("marked");
            return chunk.pages[index % CHUNK].as_mut().expect("present");
        }
        self.fresh_page(allocation, index)
    }

    /// A store by consecutive work-items of one word each to bytes `start..end` of a page, whose
    /// first word's write is `first`, kept as a run rather than written into the cells, when
    /// it is the first touch of the page under `mark` (a page of word cells) or continues the
    /// run the page keeps (the next work-items' words right after it, at the same site and
    /// stamp, whose stored bytes are the last the group deferred): no cell is checked or
    /// written, nor a page made, and the stored bytes, `stored` (`end - start` of them), are
    /// kept apart ([`GroupShadow::deferred_bytes`]). Any other touch of the page
    /// ([`GroupShadow::marked_page`]) writes the run into its cells first. Returns whether the
    /// page was fresh under `mark`; None, and nothing changed, when the store cannot be deferred.
    #[inline]
    pub fn defer_store(
        &mut self,
        allocation: usize,
        index: usize,
        mark: u32,
        (start, end): (usize, usize),
        first: Stamped,
        stored: &[u8],
    ) -> Option<bool> {
        debug_assert_eq!(stored.len(), end - start, "a stored byte per byte of the run");
        let held = self.deferred.len();
        let chunk = self.chunk(allocation, index);
        let at = index % CHUNK;
        let entry = chunk.marks[at];
        let fresh = entry.mark != mark;
        if fresh {
            match chunk.pages[at] {
                Some(GroupPage::Bytes(_)) => return None,
                // Counted as present until taken, like a page.
                None => chunk.present += 1,
                Some(GroupPage::Words(_)) => {}
            }
            chunk.marks[at] = Mark { mark, start: start as u16 | DEFERRED, end: end as u16, data: held as u32, first };
        } else {
            let run_start = entry.start();
            let next =
                entry.deferred() && start == entry.end as usize && entry.data as usize + (start - run_start) == held;
            if !next || first != entry.first.advanced(((start - run_start) / WORD) as u32) {
                return None;
            }
            chunk.marks[at].end = end as u16;
        }
        let room = self.deferred.capacity();
        self.deferred.extend_from_slice(stored);
        self.bytes += self.deferred.capacity() - room;
        Some(fresh)
    }

    /// The bytes deferred stores kept ([`GroupShadow::defer_store`]): a deferred page's run at
    /// the offset [`GroupShadow::take_page`] gives ([`TakenPage::deferred`]).
    pub fn deferred_bytes(&self) -> &[u8] {
        &self.deferred
    }

    /// Forgets the deferred stores' bytes (at a group's end, once its pages are summarised).
    pub fn clear_deferred(&mut self) {
        self.deferred.clear();
    }

    /// The byte cells of a page, turning its word cells into byte cells first if it has them.
    pub fn byte_cells(&mut self, allocation: usize, index: usize) -> &mut [ByteCell] {
        if let GroupPage::Words(_) = self.page(allocation, index) {
            self.split_page(allocation, index);
        }
        match self.page(allocation, index) {
            GroupPage::Bytes(cells) => cells,
            GroupPage::Words(_) => unreachable!("just split"),
        }
    }

    #[cold]
    #[inline(never)]
    fn split_page(&mut self, allocation: usize, index: usize) {
        let mut bytes = match self.spare_bytes.pop() {
            Some(page) => page,
            None => {
                self.bytes += GROUP_PAGE * std::mem::size_of::<ByteCell>();
                zeroed(GROUP_PAGE)
            }
        };
        let slot = &mut self.chunk(allocation, index).pages[index % CHUNK];
        let Some(GroupPage::Words(words)) = slot.take() else { unreachable!("a word page") };
        for (w, word) in words.iter().enumerate() {
            for i in 0..WORD {
                bytes[w * WORD + i] = word.byte_cell(i);
            }
        }
        *slot = Some(GroupPage::Bytes(bytes));
        self.spare_words.push(words);
    }

    /// Marks bytes `start..end` of a page as touched under `mark`; true if the page did not
    /// carry that mark yet (its touched range then starts afresh). A deferred store the page
    /// kept ends: returned as its bytes and first write, for the caller to write into the cells.
    #[inline]
    fn mark(
        &mut self,
        allocation: usize,
        index: usize,
        mark: u32,
        start: usize,
        end: usize,
    ) -> (bool, Option<(usize, usize, usize, Stamped)>) {
        let entry = &mut self.chunk(allocation, index).marks[index % CHUNK];
        if entry.mark != mark {
            *entry = Mark { mark, start: start as u16, end: end as u16, data: 0, first: Stamped::EMPTY };
            return (true, None);
        }
        let deferred = entry.deferred().then(|| (entry.start(), entry.end as usize, entry.data as usize, entry.first));
        entry.start = (entry.start() as u16).min(start as u16);
        entry.end = entry.end.max(end as u16);
        (false, deferred)
    }

    /// The bytes of a page touched under its current mark and, when they are one deferred
    /// store, where its stored bytes start in [`GroupShadow::deferred_bytes`] (else the cells
    /// hold every access).
    #[cfg(test)]
    pub fn touched(&mut self, allocation: usize, index: usize) -> (std::ops::Range<usize>, Option<usize>) {
        let entry = self.chunk(allocation, index).marks[index % CHUNK];
        (entry.start()..entry.end as usize, entry.deferred().then_some(entry.data as usize))
    }

    /// Takes page `index` of an allocation out of the table (at its group's end), with the bytes
    /// touched under its mark and where a deferred store's bytes are, in one look-up; its chunk
    /// of the page table is kept for reuse once it holds no page. Give the page back with [`GroupShadow::recycle`]. None
    /// when the page is not there.
    #[inline]
    pub fn take_page(&mut self, allocation: usize, index: usize) -> Option<TakenPage> {
        let slot = self.allocations.get_mut(allocation)?.get_mut(index / CHUNK)?;
        let chunk = slot.as_mut()?;
        let page = chunk.pages[index % CHUNK].take();
        let entry = chunk.marks[index % CHUNK];
        if page.is_none() && !entry.deferred() {
            return None;
        }
        // Taken once: a deferred store's flag goes with it.
        chunk.marks[index % CHUNK].start &= !DEFERRED;
        chunk.present -= 1;
        if chunk.present == 0 {
            self.spare_chunks.extend(slot.take());
        }
        let deferred = entry.deferred().then_some((entry.data as usize, entry.first));
        Some(TakenPage { touched: entry.start()..entry.end as usize, deferred, page })
    }

    /// Keeps a page taken by [`GroupShadow::take_page`] for reuse, so memory follows what is in
    /// use. Cells are left as they are: users tell old cells from new ones by stamps.
    pub fn recycle(&mut self, page: Option<GroupPage>) {
        match page {
            Some(GroupPage::Words(page)) => self.spare_words.push(page),
            Some(GroupPage::Bytes(page)) => self.spare_bytes.push(page),
            None => {}
        }
    }
}

/// A page taken out of a group's table at its end ([`GroupShadow::take_page`]).
pub struct TakenPage {
    /// The bytes touched under the page's mark.
    pub touched: std::ops::Range<usize>,
    /// When they are one deferred store, where its stored bytes start in
    /// [`GroupShadow::deferred_bytes`] and its first word's write (else the cells hold every
    /// access).
    pub deferred: Option<(usize, Stamped)>,
    /// None for a deferred store that nothing else touched (no page was made for it).
    pub page: Option<GroupPage>,
}

/// Writes a deferred store ([`GroupShadow::defer_store`]) of bytes `start..end`, whose first
/// word's write is `first`, into the page's cells, as recording each word's store on its
/// untouched cell would have; `stored` begins with its stored bytes.
#[cold]
#[inline(never)]
fn write_deferred(page: &mut GroupPage, (start, end): (usize, usize), first: Stamped, stored: &[u8]) {
    let GroupPage::Words(words) = page else { unreachable!("deferred stores are on pages of word cells") };
    for (k, cell) in words[start / WORD..end / WORD].iter_mut().enumerate() {
        cell.record_first(&first.advanced(k as u32), true, u32::from_stored(stored, k * WORD));
    }
}

/// A merged group's run of cells, kept as such by a page that no second group has touched yet:
/// cell `k` holds `write` and `read` made by the work-item `k * stride` places on.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    /// The run's first byte in the page, and its length in bytes.
    pub start: u16,
    pub len: u16,
    /// Bytes per cell (1 or 4).
    pub cell_bytes: u8,
    pub write_stride: u8,
    pub read_stride: u8,
    pub write: Record,
    pub read: Record,
    /// The bytes its writes stored are one word over and over, kept once (set by
    /// [`KernelPage::defer`]).
    pub repeated: bool,
}

impl Run {
    fn end(&self) -> usize {
        self.start as usize + self.len as usize
    }

    /// Bytes of [`KernelPage::data`] that hold what its writes stored.
    #[inline]
    fn kept(&self) -> usize {
        let bytes = if self.repeated { WORD } else { self.len as usize };
        if self.write.is_empty() { 0 } else { bytes }
    }

    /// Byte `i` of what its writes stored, from the run's `kept` bytes.
    #[inline]
    fn stored_byte(&self, kept: &[u8], i: usize) -> u8 {
        if self.repeated { kept[i % WORD] } else { u8::from_stored(kept, i) }
    }

    /// The word at byte `i` (a multiple of four) of what its writes stored.
    #[inline]
    fn stored_word(&self, kept: &[u8], i: usize) -> u32 {
        if self.repeated { u32::from_stored(kept, 0) } else { u32::from_stored(kept, i) }
    }

    /// The write and read of cell `k`.
    fn at(&self, k: usize) -> (Record, Record) {
        (
            self.write.advanced(k as u32 * self.write_stride as u32),
            self.read.advanced(k as u32 * self.read_stride as u32),
        )
    }

    /// Whether its records can be kept per word: whole aligned words, each one access.
    fn in_words(&self) -> bool {
        (self.cell_bytes as usize == WORD || (self.write_stride == 0 && self.read_stride == 0))
            && (self.start as usize).is_multiple_of(WORD)
            && (self.len as usize).is_multiple_of(WORD)
    }
}

/// Runs a page keeps before it makes records: past this many, records are smaller.
const MAX_RUNS: usize = KERNEL_PAGE / WORD / 4;

/// Whether `data` is one word over and over (more than once): a run that stored it keeps the
/// word once (a buffer filled with a constant, or computed from constant inputs).
fn repeats_a_word(data: &[u8]) -> bool {
    // Periodic with period four: each byte equals the one a word before it (one `memcmp`).
    data.len() > WORD && data.len().is_multiple_of(WORD) && data[WORD..] == data[..data.len() - WORD]
}

/// The kernel-wide records of one page of global memory. Until a second group touches bytes a
/// group touched, the page keeps the groups' runs instead (disjoint, by offset), with the bytes
/// their writes stored (one word, when they are one word over and over): a page each group
/// touched in one piece costs a few dozen bytes.
#[derive(Default)]
pub struct KernelPage {
    /// The runs were replaced by records.
    materialized: bool,
    runs: Vec<Run>,
    /// The bytes the runs' writes stored, run after run ([`Run::kept`] bytes each).
    data: Vec<u8>,
    /// Records per byte (else per word).
    bytes_mode: bool,
    /// Word mode: the last write merged per word, with the stored word in `stored`.
    writes: Option<Box<[Record]>>,
    stored: Option<Box<[u32]>>,
    /// Word mode: the last read merged per word.
    reads: Option<Box<[Record]>>,
    /// Byte mode: the last write (with its stored byte) and read merged per byte.
    bytes: Option<Box<ByteRecords>>,
}

impl KernelPage {
    /// Keeps `run` (whose writes stored `data`) as a run when the page still keeps runs and no
    /// earlier run touched its bytes (nothing can race then); false when it must be merged into
    /// records ([`KernelPage::materialize`] first).
    pub fn defer(&mut self, mut run: Run, data: &[u8], made: &mut usize) -> bool {
        if self.materialized || self.runs.len() >= MAX_RUNS {
            return false;
        }
        // Groups mostly merge in address order: a run after the last one goes at the end, with
        // no search of the page's (up to 64) runs.
        let at = match self.runs.last() {
            Some(last) if last.start >= run.start => self.runs.partition_point(|r| r.start < run.start),
            _ => self.runs.len(),
        };
        let clear_before = at == 0 || self.runs[at - 1].end() <= run.start as usize;
        let clear_after = at == self.runs.len() || self.runs[at].start as usize >= run.end();
        if !(clear_before && clear_after) {
            return false;
        }
        run.repeated = !run.write.is_empty() && repeats_a_word(data);
        let kept = if run.repeated { &data[..WORD] } else { data };
        let capacity = self.runs.capacity() * std::mem::size_of::<Run>() + self.data.capacity();
        if self.runs.len() == 1 {
            // A second run: the page is filled piece by piece (a row of work-groups, each
            // writing a stretch), so the room a page of such pieces needs is taken now rather
            // than by doubling (stencil: 64 runs of 64 bytes a page, six reallocations and
            // copies of each list otherwise).
            let expected = (KERNEL_PAGE / (run.len as usize).max(1)).clamp(2, MAX_RUNS);
            self.runs.reserve_exact(expected - 1);
            if !run.write.is_empty() {
                let more = if run.repeated { (expected - 1) * WORD } else { KERNEL_PAGE - self.data.len() };
                self.data.reserve_exact(more);
            }
        }
        // Data is kept in run order: a run inserted before others moves theirs (groups usually
        // merge in address order, and then it goes at the end). Its place is counted from the
        // nearer end.
        let data_at = if at == self.runs.len() {
            self.data.len()
        } else if at < self.runs.len() / 2 {
            self.runs[..at].iter().map(Run::kept).sum::<usize>()
        } else {
            self.data.len() - self.runs[at..].iter().map(Run::kept).sum::<usize>()
        };
        if data_at == self.data.len() {
            self.data.extend_from_slice(&kept[..run.kept()]);
        } else {
            self.data.splice(data_at..data_at, kept[..run.kept()].iter().copied());
        }
        self.runs.insert(at, run);
        *made += (self.runs.capacity() * std::mem::size_of::<Run>() + self.data.capacity()).saturating_sub(capacity);
        true
    }

    /// Replaces the kept runs by the records they stand for.
    #[cold]
    #[inline(never)]
    pub fn materialize(&mut self, made: &mut usize, freed: &mut usize) {
        if self.materialized {
            return;
        }
        self.materialized = true;
        let runs = std::mem::take(&mut self.runs);
        let data = std::mem::take(&mut self.data);
        *freed += runs.capacity() * std::mem::size_of::<Run>() + data.capacity();
        self.bytes_mode = !runs.iter().all(Run::in_words);
        let mut next = 0;
        for run in &runs {
            let (start, len, cell_bytes) = (run.start as usize, run.len as usize, run.cell_bytes as usize);
            let stored = &data[next..next + run.kept()];
            next += stored.len();
            if self.bytes_mode {
                for i in 0..len {
                    let (write, read) = run.at(i / cell_bytes);
                    if !write.is_empty() {
                        self.set_byte_write(start + i, write.with_byte(run.stored_byte(stored, i)), made);
                    }
                    if !read.is_empty() {
                        self.set_read(start + i, read, made);
                    }
                }
            } else {
                // Every word of the run is one access: one record, and its four stored bytes.
                for i in (0..len).step_by(WORD) {
                    let (write, read) = run.at(i / cell_bytes);
                    if !write.is_empty() {
                        self.set_word_write((start + i) / WORD, write, run.stored_word(stored, i), made);
                    }
                    if !read.is_empty() {
                        self.set_read((start + i) / WORD, read, made);
                    }
                }
            }
        }
    }

    /// Records per byte rather than per word.
    pub fn bytes_mode(&self) -> bool {
        self.bytes_mode
    }

    /// The write and read of word `w` (word mode), with the stored word.
    #[inline]
    pub fn word(&self, w: usize) -> (Record, u32, Record) {
        let write = self.writes.as_ref().map_or(Record::EMPTY, |r| r[w]);
        let stored = self.stored.as_ref().map_or(0, |s| s[w]);
        (write, stored, self.reads.as_ref().map_or(Record::EMPTY, |r| r[w]))
    }

    /// The write (with its stored byte) and read of byte `b` (byte mode).
    #[inline]
    pub fn byte(&self, b: usize) -> (Record, Record) {
        self.bytes.as_ref().map_or((Record::EMPTY, Record::EMPTY), |r| r.get(b))
    }

    fn byte_records(&mut self, made: &mut usize) -> &mut ByteRecords {
        self.bytes.get_or_insert_with(|| Box::new(ByteRecords::new(made)))
    }

    /// Sets the write of word `w` (word mode); counts bytes made in `made`.
    #[inline]
    pub fn set_word_write(&mut self, w: usize, write: Record, stored: u32, made: &mut usize) {
        made_if_none(&mut self.writes, KERNEL_PAGE / WORD, made)[w] = write;
        made_if_none(&mut self.stored, KERNEL_PAGE / WORD, made)[w] = stored;
    }

    /// Sets the read of cell `c` (a word or a byte, as the page keeps them).
    #[inline]
    pub fn set_read(&mut self, c: usize, read: Record, made: &mut usize) {
        if self.bytes_mode {
            self.byte_records(made).set_read(c, read, made);
        } else {
            made_if_none(&mut self.reads, KERNEL_PAGE / WORD, made)[c] = read;
        }
    }

    /// Sets the write of byte `b` (byte mode), its stored byte in the record.
    #[inline]
    pub fn set_byte_write(&mut self, b: usize, write: Record, made: &mut usize) {
        self.byte_records(made).set_write(b, write, made);
    }

    /// Turns word records into byte records (the page's words are no longer accessed whole).
    #[cold]
    #[inline(never)]
    pub fn split(&mut self, made: &mut usize, freed: &mut usize) {
        if self.bytes_mode {
            return;
        }
        self.bytes_mode = true;
        let (writes, stored, reads) = (self.writes.take(), self.stored.take(), self.reads.take());
        for w in 0..KERNEL_PAGE / WORD {
            let write = writes.as_ref().map_or(Record::EMPTY, |r| r[w]);
            let read = reads.as_ref().map_or(Record::EMPTY, |r| r[w]);
            for i in 0..WORD {
                if !write.is_empty() {
                    let byte = stored.as_ref().map_or(0, |s| s[w].byte(i));
                    self.set_byte_write(w * WORD + i, write.with_byte(byte), made);
                }
                if !read.is_empty() {
                    self.set_read(w * WORD + i, read, made);
                }
            }
        }
        let record_bytes = std::mem::size_of::<Record>();
        *freed += writes.map_or(0, |r| r.len() * record_bytes) + reads.map_or(0, |r| r.len() * record_bytes);
        *freed += stored.map_or(0, |s| s.len() * std::mem::size_of::<u32>());
    }
}

fn made_if_none<'a, T: Zeroed>(slot: &'a mut Option<Box<[T]>>, cells: usize, made: &mut usize) -> &'a mut [T] {
    slot.get_or_insert_with(|| {
        *made += cells * std::mem::size_of::<T>();
        zeroed(cells)
    })
}

/// The kernel-wide shadow of global memory, by allocation, in pages of [`KERNEL_PAGE`] bytes.
#[derive(Default)]
pub struct KernelShadow {
    allocations: Vec<Vec<Option<Box<KernelPage>>>>,
    /// Bytes held now (page tables and record arrays).
    bytes: usize,
}

impl KernelShadow {
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Page `index` of an allocation, made empty on first use.
    #[inline]
    pub fn page(&mut self, allocation: usize, index: usize) -> &mut KernelPage {
        if allocation >= self.allocations.len() {
            self.bytes += (allocation + 1 - self.allocations.len()) * std::mem::size_of::<Vec<()>>();
            self.allocations.resize_with(allocation + 1, Vec::new);
        }
        let pages = &mut self.allocations[allocation];
        if index >= pages.len() {
            self.bytes += (index + 1 - pages.len()) * std::mem::size_of::<Option<Box<KernelPage>>>();
            pages.resize_with(index + 1, || None);
        }
        pages[index].get_or_insert_with(|| {
            self.bytes += std::mem::size_of::<KernelPage>();
            Box::default()
        })
    }

    /// Accounts for arrays a page made (`made`) and dropped (`freed`).
    pub fn account(&mut self, made: usize, freed: usize) {
        self.bytes = self.bytes + made - freed;
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::Entity;
    use super::*;

    fn stamped(item: u32, stamp: u32) -> Stamped {
        Stamped { record: Record::new(3, Entity::Item(item), stamp, false, 0), stamp }
    }

    #[test]
    fn word_payload_reads_little_endian_and_pads_with_zeros() {
        assert_eq!(u32::from_stored(&[1, 2, 3, 4, 5], 1), 0x0504_0302);
        assert_eq!(u32::from_stored(&[1, 2], 0), 0x0201);
        assert_eq!(u32::from_stored(&[], 0), 0);
        assert_eq!(0x0403_0201u32.byte(2), 3);
    }

    #[test]
    fn deferred_stores_keep_their_bytes_apart_until_the_page_is_touched_otherwise() {
        let mut shadow = GroupShadow::default();
        let bytes = |from: u8, n: usize| (0..n as u8).map(|k| from + k).collect::<Vec<u8>>();
        let (first, mark) = (stamped(40, 9), 9);
        assert_eq!(shadow.defer_store(1, 0, mark, (0, 16), first, &bytes(0, 16)), Some(true));
        // The next work-items' words right after: the same run, its bytes appended.
        assert_eq!(shadow.defer_store(1, 0, mark, (16, 32), first.advanced(4), &bytes(16, 16)), Some(false));
        // Not the next work-items: refused, nothing kept.
        assert_eq!(shadow.defer_store(1, 0, mark, (32, 36), first.advanced(9), &bytes(99, 4)), None);
        assert_eq!(shadow.defer_store(1, 3, mark, (8, 16), stamped(7, 9), &bytes(100, 8)), Some(true));
        // Page 0's run is no longer the last one kept: refused.
        assert_eq!(shadow.defer_store(1, 0, mark, (32, 36), first.advanced(8), &bytes(32, 4)), None);
        assert_eq!(shadow.touched(1, 0), (0..32, Some(0)));
        assert_eq!(shadow.touched(1, 3), (8..16, Some(32)));
        assert_eq!(&shadow.deferred_bytes()[..32], &bytes(0, 32)[..]);
        assert_eq!(&shadow.deferred_bytes()[32..], &bytes(100, 8)[..]);

        // Any other touch writes the run into the cells: each word's store by its work-item.
        let (fresh, page) = shadow.marked_page(1, 0, mark, 40, 44);
        assert!(!fresh);
        let GroupPage::Words(words) = page else { panic!("word cells") };
        for (k, cell) in words[..8].iter().enumerate() {
            let word = u32::from_le_bytes([0, 1, 2, 3].map(|i| (4 * k + i) as u8));
            assert_eq!((cell.write, cell.write_data, cell.summary_data), (first.advanced(k as u32), word, word));
        }
        assert_eq!(shadow.touched(1, 0), (0..44, None));
        // The group's end takes both: page 0 with its cells, page 3's run without a page (none
        // was made for it) but with its first write.
        let taken = shadow.take_page(1, 0).expect("page 0");
        assert!(taken.page.is_some() && taken.deferred.is_none());
        shadow.recycle(taken.page);
        let taken = shadow.take_page(1, 3).expect("page 3's run");
        assert!(taken.page.is_none());
        assert_eq!((taken.touched, taken.deferred), (8..16, Some((32, stamped(7, 9)))));
        assert!(shadow.take_page(1, 3).is_none(), "taken once");
        // A deferred page of the next group (another mark) starts afresh, in the chunk the
        // last group handed back.
        shadow.clear_deferred();
        let made = shadow.bytes();
        assert_eq!(shadow.defer_store(1, 3, mark + 1, (0, 4), stamped(1, 10), &bytes(7, 4)), Some(true));
        assert_eq!(shadow.touched(1, 3), (0..4, Some(0)));
        assert_eq!(shadow.bytes(), made, "no page nor chunk made, the stored bytes kept where the last were");
        let taken = shadow.take_page(1, 3).expect("the run");
        assert_eq!((taken.touched, taken.deferred), (0..4, Some((0, stamped(1, 10)))));
    }

    #[test]
    fn splitting_a_group_page_keeps_every_byte_state() {
        let mut shadow = GroupShadow::default();
        let GroupPage::Words(words) = shadow.page(2, 1) else { panic!("fresh pages hold words") };
        words[3].record_first(&stamped(7, 9), true, 0xaabb_ccdd);
        words[3].record_first(&stamped(8, 9), false, 0);
        let bytes = shadow.byte_cells(2, 1);
        for (i, expected) in [0xdd, 0xcc, 0xbb, 0xaa].into_iter().enumerate() {
            let cell = bytes[3 * WORD + i];
            assert_eq!((cell.write, cell.summary_write, cell.read), (stamped(7, 9), stamped(7, 9), stamped(8, 9)));
            assert_eq!((cell.write_data, cell.summary_data), (expected, expected));
        }
        assert_eq!(bytes[3 * WORD + 4], ByteCell::default());
        // The word page went to the free list and comes back for the next fresh page.
        let taken = shadow.take_page(2, 1).expect("the page is there");
        shadow.recycle(taken.page);
        assert!(matches!(shadow.page(0, 0), GroupPage::Words(_)));
        assert!(matches!(shadow.byte_cells(0, 0).len(), GROUP_PAGE));
    }

    #[test]
    fn a_worker_shadow_follows_what_is_touched_not_the_allocation_size() {
        let mut shadow = GroupShadow::default();
        // A "group" touching two pages of one chunk, far into a large allocation.
        let touch = |shadow: &mut GroupShadow, chunk: usize, mark: u32| {
            for index in [chunk * CHUNK, chunk * CHUNK + 7] {
                assert!(shadow.marked_page(1, index, mark, 0, 4).0, "a fresh mark for every page of a reused chunk");
            }
            for index in [chunk * CHUNK, chunk * CHUNK + 7] {
                let taken = shadow.take_page(1, index).expect("the page is there");
                shadow.recycle(taken.page);
            }
        };
        touch(&mut shadow, 0, 1);
        let after_one = shadow.bytes();
        for (g, chunk) in (1..100).map(|c| c * 37).enumerate() {
            touch(&mut shadow, chunk, g as u32 + 2);
        }
        // Only the index of chunks grew (one entry per 256 pages of the allocation).
        let table = 99 * 37 * std::mem::size_of::<Option<Chunk>>();
        assert_eq!(shadow.bytes(), after_one + table);
    }

    #[test]
    fn a_run_storing_one_word_over_and_over_keeps_it_once_and_gives_back_every_byte() {
        let write = Record::new(4, Entity::Item(10), 0, false, 0);
        let run = |start: u16, len: u16, cell_bytes: u8| Run {
            start,
            len,
            cell_bytes,
            write_stride: 1,
            read_stride: 0,
            write,
            read: Record::EMPTY,
            repeated: false,
        };
        let word = [0x11, 0x22, 0x33, 0x44];
        let repeated: Vec<u8> = word.iter().copied().cycle().take(64).collect();
        let varied: Vec<u8> = (0..8).collect();
        for split in [false, true] {
            let mut page = KernelPage::default();
            let mut made = 0;
            assert!(page.defer(run(64, 8, 4), &varied, &mut made));
            // Before the other run: its bytes move behind this one's word.
            assert!(page.defer(run(0, 64, 4), &repeated, &mut made));
            assert_eq!(page.data.len(), WORD + varied.len(), "the repeated word is kept once");
            assert_eq!(made, page.data.capacity() + page.runs.capacity() * std::mem::size_of::<Run>());
            if split {
                // A run of bytes turns the page into records per byte.
                assert!(page.defer(run(100, 3, 1), &[7, 8, 9], &mut made));
            }
            let (mut made, mut freed) = (0, 0);
            page.materialize(&mut made, &mut freed);
            assert_eq!(page.bytes_mode(), split);
            for i in 0..16 {
                let expected = write.advanced(i as u32);
                if split {
                    for (b, &byte) in word.iter().enumerate() {
                        assert_eq!(page.byte(i * WORD + b).0, expected.with_byte(byte));
                    }
                } else {
                    assert_eq!(page.word(i), (expected, 0x4433_2211, Record::EMPTY));
                }
            }
            if split {
                assert_eq!(page.byte(64 + 5).0, write.advanced(1).with_byte(5));
                assert_eq!(page.byte(101).0, write.advanced(1).with_byte(8));
            } else {
                assert_eq!(page.word(17), (write.advanced(1), 0x0706_0504, Record::EMPTY));
            }
        }
    }

    #[test]
    fn kernel_pages_make_only_the_arrays_they_need() {
        let mut shadow = KernelShadow::default();
        let mut made = 0;
        let read = Record::new(5, Entity::Item(1), 0, false, 0);
        shadow.page(1, 0).set_read(7, read, &mut made);
        assert_eq!(made, KERNEL_PAGE / WORD * 8, "a read-only page holds one record per word");
        let write = Record::new(6, Entity::Item(2), 0, false, 0);
        shadow.page(1, 0).set_word_write(7, write, 0x1122_3344, &mut made);
        assert_eq!(shadow.page(1, 0).word(7), (write, 0x1122_3344, read));
        let (mut made, mut freed) = (0, 0);
        shadow.page(1, 0).split(&mut made, &mut freed);
        let page = shadow.page(1, 0);
        assert!(page.bytes_mode());
        assert_eq!(page.byte(7 * WORD + 2), (write.with_byte(0x22), read));
        assert_eq!(page.byte(7 * WORD + 4), (Record::EMPTY, Record::EMPTY));
        // One packed slot per byte for both kinds, and a table of their two heads.
        assert_eq!(made, KERNEL_PAGE * 8 + 4 * 8);
        assert_eq!(freed, 2 * KERNEL_PAGE / WORD * 8 + KERNEL_PAGE / WORD * 4);
    }
}
