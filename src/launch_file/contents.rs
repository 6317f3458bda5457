//! What a buffer or by-value argument will hold: decided while the launch file is read, made
//! only once the whole file has been read without error.
//!
//! `fill`, `range` and `noinit` contents take no room in the file however large they are, so
//! they are kept as a [`Planned`] recipe (checked, but not yet expanded) until [`make_all`]
//! has checked the sizes of all buffers together against [`MAX_BUFFER_BYTES`] and the machine's
//! memory. Inline values are read at once: they are already in the text. This module sees the
//! argument's descriptor and the reader, not the kernel.

use super::reader::{Reader, is_space_byte};
use super::scalar::{Elem, ScanError, digit_value};
use super::{ElemType, LaunchError};

/// The largest buffer a launch file may ask for (1 TiB): larger sizes are refused as they are
/// read, before anything is allocated.
pub const MAX_BUFFER_BYTES: usize = 1 << 40;

/// How a buffer's bytes are to be made.
#[derive(Debug)]
enum How {
    /// Read from the file already.
    Bytes(Vec<u8>),
    /// `noinit`: zeros, from pages the system zeroes when first touched.
    Zeros,
    /// `fill=V`: one element's bytes, repeated.
    Fill(Vec<u8>),
    /// `range=A:B:C` (its text, already checked), in elements of this type.
    Range { elem: ElemType, text: String, hex: bool },
}

/// A buffer's size and contents, not yet made; `line` and `arg` say where it was described.
#[derive(Debug)]
pub(super) struct Planned {
    pub(super) size: usize,
    how: How,
    line: usize,
    arg: (usize, String),
}

impl Planned {
    /// Made from `noinit`: its contents count as uninitialised (check 9).
    pub(super) fn noinit(&self) -> bool {
        matches!(self.how, How::Zeros)
    }
}

/// Where an argument is being read, for error messages.
pub(super) struct At<'a> {
    pub(super) line: usize,
    pub(super) index: usize,
    pub(super) name: &'a str,
}

impl At<'_> {
    fn error(&self, message: impl Into<String>) -> LaunchError {
        LaunchError { line: self.line, message: message.into(), arg: Some((self.index, self.name.to_owned())) }
    }
}

/// The argument's contents from `fill`, `range`, inline values (`elem` is their type), or
/// zeros for `noinit`.
pub(super) fn plan(
    reader: &mut Reader,
    source: Source,
    elem: ElemType,
    hex: bool,
    size: usize,
    at: &At,
) -> Result<Planned, LaunchError> {
    if size > MAX_BUFFER_BYTES {
        return Err(
            at.error(format!("size={size} is more than the {MAX_BUFFER_BYTES} bytes (1 TiB) a buffer may have"))
        );
    }
    let count = size / elem.size();
    let how = match source {
        Source::Zeros => How::Zeros,
        Source::Fill(text) => How::Fill(with_elem!(elem, T => fill_value::<T>(text, hex)).map_err(|m| at.error(m))?),
        Source::Range(text) => {
            with_elem!(elem, T => range_start::<T>(text, hex, count).map(|_| ())).map_err(|m| at.error(m))?;
            How::Range { elem, text: text.to_owned(), hex }
        }
        Source::Inline => How::Bytes(with_elem!(elem, T => inline_values::<T>(reader, elem, hex, count, at))?),
    };
    Ok(Planned { size, how, line: at.line, arg: (at.index, at.name.to_owned()) })
}

/// Where an argument's values come from.
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    Zeros,
    Fill(&'a str),
    Range(&'a str),
    Inline,
}

impl Planned {
    /// The first `len` bytes of the contents (all of them when `len` is the size): a by-value
    /// argument keeps only its own size, however large its descriptor said it was.
    pub(super) fn make(&self, len: usize) -> Result<Vec<u8>, LaunchError> {
        let filler = self.chunk_filler();
        let mut data = self.make_unfilled(len, filler.is_some())?;
        if let Some((fill, _)) = filler {
            fill(0, &mut data);
        }
        Ok(data)
    }

    /// What fills the contents a chunk at a time, for [`fill_all`], and the chunks' unit (each
    /// starts at a multiple of it): a `fill`, or a `range` of integers (whose values do not
    /// depend on the ones before).
    fn chunk_filler(&self) -> Option<(Box<ChunkFill<'_>>, usize)> {
        match &self.how {
            // Zeros are what the buffer is made of already: its pages are only mapped in, here
            // rather than at the kernel's first stores (as the driver's copy of a snapshot maps
            // the layer's), so the kernel's time is the kernel's.
            How::Fill(element) if element.iter().all(|&b| b == 0) => {
                Some((Box::new(|_, chunk: &mut [u8]| crate::big_bytes::map_in(chunk)), element.len()))
            }
            How::Fill(element) => Some((Box::new(|_, chunk: &mut [u8]| fill_repeating(chunk, element)), element.len())),
            How::Range { elem, text, hex } => {
                let count = self.size / elem.size();
                with_elem!(*elem, T => range_filler::<T>(text, *hex, count)).map(|f| (f, elem.size()))
            }
            _ => None,
        }
    }

    /// As [`Planned::make`], but zeroed when `filled` (a [`Planned::chunk_filler`] fills it).
    fn make_unfilled(&self, len: usize, filled: bool) -> Result<Vec<u8>, LaunchError> {
        let len = len.min(self.size);
        let error = |message: String| LaunchError { line: self.line, message, arg: Some(self.arg.clone()) };
        match &self.how {
            How::Bytes(bytes) => {
                let mut data = bytes.clone();
                data.resize(len, 0);
                Ok(data)
            }
            _ if filled => zeroed(len).map_err(error),
            How::Zeros | How::Fill(_) => zeroed(len).map_err(error),
            How::Range { elem, text, hex } => {
                let mut data = allocate(len).map_err(error)?;
                let count = self.size / elem.size();
                with_elem!(*elem, T => range_values::<T>(text, *hex, count, len, &mut data)).map_err(error)?;
                Ok(data)
            }
        }
    }
}

/// Makes every buffer, once their total is known to fit in the machine's memory; fills take up to
/// `threads` threads.
pub(super) fn make_all(planned: &[Planned], threads: usize) -> Result<Vec<Vec<u8>>, LaunchError> {
    let total = planned.iter().fold(0usize, |sum, p| sum.saturating_add(p.size));
    if let (Some(memory), Some(last)) = (physical_memory(), planned.last())
        && total as u64 > memory
    {
        let message = format!("the buffers need {total} bytes, more than the {memory} bytes of this machine's memory");
        return Err(LaunchError { line: last.line, message, arg: None });
    }
    let fillers: Vec<_> = planned.iter().map(Planned::chunk_filler).collect();
    let made = planned.iter().zip(&fillers).map(|(p, filler)| p.make_unfilled(p.size, filler.is_some()));
    let mut buffers = made.collect::<Result<Vec<_>, _>>()?;
    let fills = buffers
        .iter_mut()
        .zip(&fillers)
        .filter_map(|(data, filler)| filler.as_ref().map(|(fill, unit)| (data.as_mut_slice(), fill.as_ref(), *unit)));
    fill_all(fills.collect(), threads);
    Ok(buffers)
}

/// Fills a chunk of a buffer, given the chunk's first byte offset.
type ChunkFill<'a> = dyn Fn(usize, &mut [u8]) + Sync + 'a;

/// The chunk filler of a `range` whose values can be computed from their index; None for floats.
fn range_filler<T: Elem + Send + Sync + 'static>(
    text: &str,
    hex: bool,
    count: usize,
) -> Option<Box<ChunkFill<'static>>> {
    let (start, inc) = range_start::<T>(text, hex, count).ok()?;
    start.nth(inc, 1)?;
    let size = std::mem::size_of::<T>();
    Some(Box::new(move |at: usize, chunk: &mut [u8]| {
        let Some(mut value) = start.nth(inc, (at / size) as u64) else { return };
        let mut bytes = Vec::with_capacity(chunk.len() + size);
        while bytes.len() < chunk.len() {
            value.put(&mut bytes);
            value = value.step(inc);
        }
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }))
}

/// Below this many bytes a buffer is filled by one thread: a thread costs more than the copy.
const FILL_CHUNK: usize = 1 << 20;

/// Fills each buffer, on up to `threads` threads. A large buffer is cut in chunks that start on
/// a multiple of its unit (an element), so each chunk is filled on its own; the page faults of
/// fresh memory, most of the cost, are then taken in parallel too.
fn fill_all(fills: Vec<(&mut [u8], &ChunkFill<'_>, usize)>, threads: usize) {
    let mut chunks = Vec::new();
    let mut total = 0usize;
    for (data, fill, unit) in fills {
        let step = FILL_CHUNK.div_ceil(unit.max(1)) * unit.max(1);
        total += data.len();
        chunks.extend(data.chunks_mut(step).enumerate().map(|(i, chunk)| (i * step, chunk, fill)));
    }
    // Small buffers together are one thread's work, however many there are.
    let threads = threads.min(chunks.len()).min(total / FILL_CHUNK);
    if threads <= 1 {
        chunks.into_iter().for_each(|(at, chunk, fill)| fill(at, chunk));
        return;
    }
    let queue = parking_lot::Mutex::new(chunks.into_iter());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    // The lock is let go before the chunk is filled.
                    let Some((at, chunk, fill)) = queue.lock().next() else { break };
                    fill(at, chunk);
                }
            });
        }
    });
}

/// `element` repeated over `data` (cut short at the end).
fn fill_repeating(data: &mut [u8], element: &[u8]) {
    let first = element.len().min(data.len());
    data[..first].copy_from_slice(&element[..first]);
    // Doubling what is there: a few large copies rather than one per element.
    let mut done = first;
    while done > 0 && done < data.len() {
        let take = done.min(data.len() - done);
        data.copy_within(..take, done);
        done += take;
    }
}

/// The machine's memory in bytes (`MemTotal`), if the system says.
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// An empty vector with room for `size` bytes, or an error if there is no memory for it.
fn allocate(size: usize) -> Result<Vec<u8>, String> {
    crate::big_bytes::with_capacity(size).ok_or_else(|| format!("Cannot allocate {size} bytes"))
}

/// `size` zero bytes, or an error if there is no memory for them. No byte is written: a large
/// `noinit` buffer costs nothing until the kernel touches it.
fn zeroed(size: usize) -> Result<Vec<u8>, String> {
    crate::big_bytes::zeroed(size).ok_or_else(|| format!("Cannot allocate {size} bytes"))
}

fn char_or(error: ScanError, otherwise: &str) -> String {
    match error {
        ScanError::CharRange => "Invalid char value".into(),
        ScanError::Invalid => otherwise.into(),
    }
}

/// `fill=V`: V, which must be the whole token, as one element's bytes.
fn fill_value<T: Elem>(text: &str, hex: bool) -> Result<Vec<u8>, String> {
    let (value, len) = T::scan(text, hex).map_err(|e| char_or(e, "Invalid fill value"))?;
    if len != text.len() {
        return Err("Invalid fill value".into());
    }
    let mut bytes = Vec::new();
    value.put(&mut bytes);
    Ok(bytes)
}

/// `range=START:INC:END` for `count` elements: START and INC, if START, START+INC, ... up to
/// END inclusive are exactly `count` values.
fn range_start<T: Elem>(text: &str, hex: bool, count: usize) -> Result<(T, T), String> {
    let mut rest = text;
    let mut values = Vec::with_capacity(3);
    for i in 0..3 {
        let (value, len) = T::scan(rest, hex).map_err(|e| char_or(e, "Invalid range format"))?;
        values.push(value);
        rest = &rest[len..];
        if i < 2 {
            rest = rest.strip_prefix(':').ok_or("Invalid range format")?;
        }
    }
    if !rest.is_empty() {
        return Err("Invalid range format".into());
    }
    let (start, inc, end) = (values[0], values[1], values[2]);
    let steps = T::range_count(start, inc, end);
    if steps != count as f64 {
        return Err(format!("Range doesn't produce correct buffer size ({steps} values for {count} elements)"));
    }
    Ok((start, inc))
}

/// The first `len` bytes of the range's `count` values.
fn range_values<T: Elem>(text: &str, hex: bool, count: usize, len: usize, out: &mut Vec<u8>) -> Result<(), String> {
    let (mut value, inc) = range_start::<T>(text, hex, count)?;
    while out.len() < len {
        value.put(out);
        value = value.step(inc);
    }
    out.truncate(len);
    Ok(())
}

/// `count` values following the header, anywhere on the following lines.
fn inline_values<T: Elem>(
    reader: &mut Reader,
    elem: ElemType,
    hex: bool,
    count: usize,
    at: &At,
) -> Result<Vec<u8>, LaunchError> {
    // Grown as values are read, so bounded by the text rather than by `size`.
    let mut out = Vec::new();
    // Bytes as `clrace export` writes buffers: the line's two-digit ones in one pass.
    let hex_bytes = hex && elem == ElemType::UChar;
    let mut read = 0;
    while read < count {
        if !reader.skip_space() {
            let message = format!("Unexpected EOF: expected {count} values, found {read}");
            return Err(LaunchError { line: reader.line_no(), ..at.error(message) });
        }
        if hex_bytes {
            let (taken, used) = two_digit_hex_bytes(reader.rest().as_bytes(), count - read, &mut out);
            reader.advance(used);
            read += taken;
            if taken > 0 {
                continue;
            }
        }
        read += 1;
        let text = reader.rest();
        let (value, len) = T::scan(text, hex).map_err(|e| {
            let word = text.split(super::reader::is_space).next().unwrap_or("");
            let base = if hex { " (hex)" } else { "" };
            let message = format!("Failed to parse '{word}' as {}{base}", elem.keyword());
            LaunchError { line: reader.line_no(), ..at.error(char_or(e, &message)) }
        })?;
        reader.advance(len);
        value.put(&mut out);
    }
    Ok(out)
}

/// The whitespace-separated bytes written as two hex digits at the start of `line` (at most
/// `max`), appended to `out`: how many, and the length of `line` they took. Stops before
/// anything else (a longer or shorter word, a sign, a prefix), which the general path reads.
fn two_digit_hex_bytes(line: &[u8], max: usize, out: &mut Vec<u8>) -> (usize, usize) {
    let digit = |b: Option<&u8>| b.and_then(|&b| digit_value(b, 16));
    let (mut taken, mut used, mut i) = (0, 0, 0);
    while taken < max {
        while line.get(i).is_some_and(|&b| is_space_byte(b)) {
            i += 1;
        }
        let (Some(high), Some(low)) = (digit(line.get(i)), digit(line.get(i + 1))) else { break };
        if line.get(i + 2).is_some_and(|&b| !is_space_byte(b)) {
            break;
        }
        out.push((high * 16 + low) as u8);
        (taken, i) = (taken + 1, i + 2);
        used = i;
    }
    (taken, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunked fills on several threads give the bytes one thread gives, for elements that do
    /// not divide a chunk and a buffer that cuts its last element short.
    #[test]
    fn parallel_fill_matches_serial() {
        let element: Vec<u8> = (1..=12).collect();
        let len = 5 * FILL_CHUNK / 2 + 7;
        let serial: Vec<u8> = element.iter().copied().cycle().take(len).collect();
        let repeat = |_, chunk: &mut [u8]| fill_repeating(chunk, &element);
        for threads in [1, 2, 3, 8] {
            let (mut a, mut b) = (vec![0u8; len], vec![0u8; 5]);
            fill_all(vec![(&mut a[..], &repeat, element.len()), (&mut b[..], &repeat, element.len())], threads);
            assert!(a == serial, "{threads} threads");
            assert_eq!(b, &element[..5]);
        }
    }

    /// An integer range made a chunk at a time on several threads is the one made in order
    /// (wrapping past the type's end); a float range is made in order, its sums rounding there.
    #[test]
    fn parallel_integer_ranges_match_serial() {
        let count = 3 * FILL_CHUNK / 4 + 3;
        let serial: Vec<u8> =
            (0..count as u32).flat_map(|k| 4_294_967_200u32.wrapping_add(7 * k).to_le_bytes()).collect();
        let fill = range_filler::<u32>("4294967200:7:5504942", false, count).unwrap();
        for threads in [1, 2, 3] {
            let mut data = vec![0u8; 4 * count];
            fill_all(vec![(&mut data[..], fill.as_ref(), 4)], threads);
            assert!(data == serial, "{threads} threads");
        }
        assert!(range_filler::<f32>("0:0.1:100", false, 1001).is_none());
    }
}
