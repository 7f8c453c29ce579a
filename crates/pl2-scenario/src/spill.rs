//! Where a table's batches wait during a run: on disk, in an unnamed temporary file of the
//! output directory, as Arrow IPC streams (uncompressed, then zstd-compressed buffers).
//!
//! A Parquet writer keeps per-column state for as long as its file is open: encoders,
//! a compression and a decompression context each, the pages of the open row group and
//! the footer. Held through a run, for every column of every table, that came to more than
//! a third of benchmark 2's peak memory, and it grew with the run as more columns filled
//! pages and the footer grew. An IPC stream writer keeps nothing between batches, so a run
//! holds a slice's records, at most one flush of batches waiting to be appended, and a
//! buffered file handle per table; the Parquet files are
//! written when the run ends ([`crate::output::ParquetSink::finish`]), one table at a time,
//! after the simulation's own memory is freed.
//!
//! A [`Spiller`] does the appending on a thread of its own, so that encoding and
//! compressing a slice's records overlaps simulating the next one.
//!
//! Tables that stay small are not spilled at all: a [`Spiller`] holds batches in memory
//! until they add up to [`HELD_BYTES`], and only then moves the table that crossed the
//! bound to disk (its held batches first, in order). Compressing and decompressing a
//! spill cost about 7% of the instructions of a single rack's run (284 k rows in the
//! ports table) and 16% of a k = 8 incast's (2.16 M rows), for files that are deleted
//! when the run ends: the first [`RAW_SPILL_BYTES`] spilled go uncompressed, and only
//! what follows is compressed to bound the disk a long run takes. The Parquet files
//! receive the same batches in the same order either way, so they are byte-identical.
//!
//! The file has no name (`O_TMPFILE` on Linux, see the `tempfile` crate), so a run that
//! is killed leaves nothing behind, and it lives beside the results rather than in a
//! `/tmp` that may be memory-backed.

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow_ipc::CompressionType;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

/// Bytes buffered before a write to the spill file.
const SPILL_BUFFER_BYTES: usize = 64 << 10;

/// zstd level of the spilled buffers that are compressed. Benchmark 5 at 3x its duration
/// (17.6 M probe rows): 153 MB on disk at level 1, 254 MB with LZ4 frames, 862 MB
/// uncompressed.
const SPILL_ZSTD_LEVEL: i32 = 1;

/// Bytes of batches (Arrow's own accounting) a [`Spiller`] appends uncompressed, over all
/// tables, before it compresses what follows. Compressing is the spill's main cost and
/// reading back compressed buffers the part that cannot overlap the simulation: on
/// benchmark `htsim-dctcp/B` (2.16 M rows in `ports`, about 125 MB spilled) zstd took
/// 16% of the whole run's instructions (21.49 G with it, 17.96 G without; callgrind) and
/// LZ4 frames 10% (20.18 G). Runs whose tables stay below this bound pay nothing; longer
/// ones keep their disk use to the compressed size beyond it.
pub const RAW_SPILL_BYTES: usize = 1 << 30;

/// Most bytes of batches (Arrow's own accounting of their buffers) a [`Spiller`] holds in
/// memory over all tables before it spills the table that crosses it. A run's peak memory
/// grows by at most this much; the tables of short runs never touch the disk.
pub const HELD_BYTES: usize = 32 << 20;

type Segment = StreamWriter<BufWriter<File>>;

/// One table's batches, appended to temporary files and read back in order: a segment of
/// uncompressed buffers and, once the spiller's uncompressed budget is spent, one of
/// zstd-compressed buffers (either may be missing).
pub struct Spill {
    dir: PathBuf,
    /// Segments, oldest first; the last is the one appended to.
    segments: Vec<Segment>,
    compressed: bool,
}

impl Spill {
    /// An empty spill whose files go in `dir`.
    pub fn new(dir: &Path) -> Spill {
        Spill { dir: dir.to_path_buf(), segments: Vec::new(), compressed: false }
    }

    /// Appends a batch (its boundaries are kept), compressed if `compressed` (once a batch
    /// is compressed, every later one is).
    pub fn push(&mut self, batch: &RecordBatch, compressed: bool) -> std::io::Result<()> {
        if self.segments.is_empty() || (compressed && !self.compressed) {
            self.compressed |= compressed;
            self.segments.push(segment(&self.dir, batch, self.compressed)?);
        }
        self.segments.last_mut().expect("a segment").write(batch).map_err(std::io::Error::other)
    }

    /// Bytes on disk so far, including what is still buffered.
    #[cfg(test)]
    fn disk_bytes(&mut self) -> std::io::Result<u64> {
        let mut total = 0;
        for w in &mut self.segments {
            let w = w.get_mut();
            total += w.get_ref().metadata()?.len() + w.buffer().len() as u64;
        }
        Ok(total)
    }

    /// The batches in the order they were pushed, read back one at a time.
    pub fn into_batches(self) -> std::io::Result<impl Iterator<Item = std::io::Result<RecordBatch>>> {
        let mut readers = Vec::new();
        for mut w in self.segments {
            w.finish().map_err(std::io::Error::other)?;
            let mut file = w.into_inner().map_err(std::io::Error::other)?.into_inner().map_err(|e| e.into_error())?;
            file.seek(SeekFrom::Start(0))?;
            readers.push(StreamReader::try_new(BufReader::with_capacity(SPILL_BUFFER_BYTES, file), None).map_err(std::io::Error::other)?);
        }
        Ok(readers.into_iter().flatten().map(|b| b.map_err(std::io::Error::other)))
    }
}

/// A stream writer for `batch`'s schema into a new unnamed file of `dir`.
fn segment(dir: &Path, batch: &RecordBatch, compressed: bool) -> std::io::Result<Segment> {
    let file = tempfile::tempfile_in(dir)?;
    let mut options = IpcWriteOptions::default();
    if compressed {
        options = options
            .try_with_compression(Some(CompressionType::ZSTD))
            .and_then(|o| o.try_with_compression_level(Some(SPILL_ZSTD_LEVEL)))
            .map_err(std::io::Error::other)?;
    }
    StreamWriter::try_new_with_options(BufWriter::with_capacity(SPILL_BUFFER_BYTES, file), &batch.schema(), options).map_err(std::io::Error::other)
}

/// Batches handed to a [`Spiller`] and not yet appended: one flush of the collector's
/// tables (at most eight), after which the caller waits for the thread.
const QUEUED_BATCHES: usize = 8;

/// One table's batches: held in memory, or spilled to disk.
pub enum Held {
    Memory(Vec<RecordBatch>),
    Disk(Spill),
}

impl Held {
    /// The batches in the order they were pushed.
    pub fn into_batches(self) -> std::io::Result<Box<dyn Iterator<Item = std::io::Result<RecordBatch>>>> {
        Ok(match self {
            Held::Memory(v) => Box::new(v.into_iter().map(Ok)),
            Held::Disk(s) => Box::new(s.into_batches()?),
        })
    }
}

/// Every table's batches, held or appended to spills on a thread of their own.
pub struct Spiller {
    tx: Option<SyncSender<(&'static str, RecordBatch)>>,
    thread: Option<JoinHandle<std::io::Result<BTreeMap<&'static str, Held>>>>,
}

impl Spiller {
    /// Starts the thread; spill files go in `dir` once [`HELD_BYTES`] are held.
    pub fn new(dir: &Path) -> std::io::Result<Spiller> {
        Spiller::holding(dir, HELD_BYTES, RAW_SPILL_BYTES)
    }

    /// As [`Spiller::new`], holding at most `held_bytes` in memory and appending at most
    /// `raw_bytes` uncompressed.
    pub fn holding(dir: &Path, held_bytes: usize, raw_bytes: usize) -> std::io::Result<Spiller> {
        let (tx, rx) = sync_channel::<(&'static str, RecordBatch)>(QUEUED_BATCHES);
        let dir = dir.to_path_buf();
        let thread = std::thread::Builder::new().name("pl2-spill".into()).spawn(move || {
            let mut tables: BTreeMap<&'static str, Held> = BTreeMap::new();
            let mut held = 0usize;
            let mut raw = 0usize;
            // Compress from the batch that would take the uncompressed bytes past the bound.
            let mut compress = |batch: &RecordBatch| {
                let bytes = batch.get_array_memory_size();
                if raw + bytes > raw_bytes {
                    return true;
                }
                raw += bytes;
                false
            };
            for (name, batch) in rx {
                let table = tables.entry(name).or_insert_with(|| Held::Memory(Vec::new()));
                if let Held::Memory(v) = table {
                    let bytes = batch.get_array_memory_size();
                    if held + bytes <= held_bytes {
                        held += bytes;
                        v.push(batch);
                        continue;
                    }
                    let mut spill = Spill::new(&dir);
                    for b in v.iter() {
                        spill.push(b, compress(b))?;
                    }
                    held -= v.iter().map(RecordBatch::get_array_memory_size).sum::<usize>();
                    *table = Held::Disk(spill);
                }
                if let Held::Disk(spill) = table {
                    let compressed = compress(&batch);
                    spill.push(&batch, compressed)?;
                }
            }
            Ok(tables)
        })?;
        Ok(Spiller { tx: Some(tx), thread: Some(thread) })
    }

    /// Hands a batch of table `name` to the thread. An error the thread met (a full disk,
    /// say) comes back here or from [`Spiller::finish`].
    pub fn push(&mut self, name: &'static str, batch: RecordBatch) -> std::io::Result<()> {
        let Some(tx) = &self.tx else { return Err(std::io::Error::other("the spill thread stopped after an error")) };
        if tx.send((name, batch)).is_err() {
            // The thread ended early, which it does only on an error: report that error.
            return Err(self.join().err().unwrap_or_else(|| std::io::Error::other("the spill thread stopped")));
        }
        Ok(())
    }

    /// Waits for everything handed over to be appended; every table's batches.
    pub fn finish(mut self) -> std::io::Result<BTreeMap<&'static str, Held>> {
        self.join()
    }

    fn join(&mut self) -> std::io::Result<BTreeMap<&'static str, Held>> {
        self.tx = None;
        let thread = self.thread.take().ok_or_else(|| std::io::Error::other("the spill thread stopped after an error"))?;
        thread.join().map_err(|_| std::io::Error::other("the spill thread panicked"))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, StringArray, UInt64Array};
    use std::sync::Arc;

    fn batch(first: u64, rows: u64) -> RecordBatch {
        let n: UInt64Array = (first..first + rows).collect();
        let s: StringArray = (first..first + rows).map(|i| Some(if i % 3 == 0 { "buffer_full" } else { "link_down" })).collect();
        RecordBatch::try_from_iter([("n", Arc::new(n) as ArrayRef), ("reason", Arc::new(s) as ArrayRef)]).unwrap()
    }

    /// Batches come back equal and in order, with their boundaries, across the switch from
    /// uncompressed to compressed buffers; the files are on disk (the compressed segment:
    /// repeated strings take a fraction of their size) and have no name in the directory,
    /// before or after.
    #[test]
    fn batches_round_trip_through_unnamed_files() {
        let dir = std::env::temp_dir().join(format!("pl2-spill-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut spill = Spill::new(&dir);
        let sent: Vec<RecordBatch> = (0..20).map(|i| batch(i * 5000, 5000 + i)).collect();
        let in_memory = |b: &[RecordBatch]| b.iter().map(|b| b.get_array_memory_size()).sum::<usize>() as u64;
        for b in &sent[..10] {
            spill.push(b, false).unwrap();
        }
        let raw = spill.disk_bytes().unwrap();
        // Uncompressed: the buffers' bytes (Arrow's accounting rounds capacities up).
        assert!(raw > in_memory(&sent[..10]) / 2 && raw <= in_memory(&sent[..10]), "{raw} bytes on disk uncompressed");
        for b in &sent[10..] {
            spill.push(b, true).unwrap();
        }
        let compressed = spill.disk_bytes().unwrap() - raw;
        assert!(compressed > 0 && compressed < in_memory(&sent[10..]) / 2, "{compressed} bytes on disk compressed");
        assert_eq!(spill.segments.len(), 2);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "a spill file has a name");
        let back: Vec<RecordBatch> = spill.into_batches().unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(back, sent);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The spiller's uncompressed budget: batches go uncompressed until the next would pass
    /// it, then compressed, over all tables; a table spilled only after the budget is
    /// spent has a single, compressed segment.
    #[test]
    fn the_uncompressed_budget_is_spent_once_over_all_tables() {
        let dir = std::env::temp_dir().join(format!("pl2-budget-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one = batch(0, 100).get_array_memory_size();
        let mut s = Spiller::holding(&dir, 0, 3 * one + one / 2).unwrap();
        for (name, i) in [("a", 0), ("a", 1), ("b", 2), ("a", 3), ("a", 4), ("c", 5)] {
            s.push(name, batch(i * 100, 100)).unwrap();
        }
        let mut tables = s.finish().unwrap();
        let disk = |h: &Held| match h {
            Held::Disk(s) => (s.segments.len(), s.compressed),
            Held::Memory(_) => panic!("held in memory"),
        };
        assert_eq!(disk(&tables["a"]), (2, true), "a: 2 batches uncompressed, then compressed");
        assert_eq!(disk(&tables["b"]), (1, false));
        assert_eq!(disk(&tables["c"]), (1, true));
        let a: Vec<RecordBatch> = tables.remove("a").unwrap().into_batches().unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(a, [0, 1, 3, 4].map(|i| batch(i * 100, 100)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn is_on_disk(h: &Held) -> bool {
        matches!(h, Held::Disk(_))
    }

    /// Under the bound a table stays in memory; the table whose batch crosses it goes to
    /// disk with the batches it held, and every table's batches come back in order.
    #[test]
    fn tables_are_held_until_the_bound_then_spilled_in_order() {
        let dir = std::env::temp_dir().join(format!("pl2-held-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one = batch(0, 100).get_array_memory_size();
        let mut s = Spiller::holding(&dir, 5 * one, usize::MAX).unwrap();
        // "a" takes 3 batches' worth, "b" 2, then b's third crosses the bound.
        for (name, i) in [("a", 0), ("a", 1), ("a", 2), ("b", 3), ("b", 4), ("b", 5), ("b", 6)] {
            s.push(name, batch(i * 100, 100)).unwrap();
        }
        let mut tables = s.finish().unwrap();
        let (a, b) = (tables.remove("a").unwrap(), tables.remove("b").unwrap());
        assert!(!is_on_disk(&a) && is_on_disk(&b));
        let a: Vec<RecordBatch> = a.into_batches().unwrap().collect::<Result<_, _>>().unwrap();
        let b: Vec<RecordBatch> = b.into_batches().unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(a, (0..3).map(|i| batch(i * 100, 100)).collect::<Vec<_>>());
        assert_eq!(b, (3..7).map(|i| batch(i * 100, 100)).collect::<Vec<_>>());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Through the thread: every table's batches come back in order; an error the thread
    /// meets (here, its directory gone) is reported to the caller, not lost.
    #[test]
    fn the_thread_keeps_order_and_reports_errors() {
        let dir = std::env::temp_dir().join(format!("pl2-spiller-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = Spiller::holding(&dir, 0, 0).unwrap();
        for i in 0..30 {
            s.push(if i % 3 == 0 { "a" } else { "b" }, batch(i * 100, 100)).unwrap();
        }
        let mut spills = s.finish().unwrap();
        let a: Vec<RecordBatch> = spills.remove("a").unwrap().into_batches().unwrap().collect::<Result<_, _>>().unwrap();
        let b: Vec<RecordBatch> = spills.remove("b").unwrap().into_batches().unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(a, (0..30).filter(|i| i % 3 == 0).map(|i| batch(i * 100, 100)).collect::<Vec<_>>());
        assert_eq!(b, (0..30).filter(|i| i % 3 != 0).map(|i| batch(i * 100, 100)).collect::<Vec<_>>());

        std::fs::remove_dir_all(&dir).unwrap();
        let mut s = Spiller::holding(&dir, 0, 0).unwrap();
        let pushed = (0..3).map(|i| s.push("a", batch(i, 1))).collect::<Result<Vec<()>, _>>();
        let err = pushed.and_then(|_| s.finish().map(|_| ())).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
    }
}
