//! Where a table's batches go during a run: straight into its Parquet file, built from
//! their rows and encoded on a thread of its own so that building, encoding and
//! compressing a slice's records overlaps simulating the next one, instead of following
//! the run or interrupting it.
//!
//! Each table's file is written unnamed (`O_TMPFILE` on Linux, see the `tempfile` crate)
//! in the output directory and named `<table>.parquet` only when the run ends
//! ([`TableFiles::finish`] then [`Written::persist`]: linked into the directory, or copied
//! where it cannot be), so a run that is killed or fails leaves no file behind, and none
//! it did not finish. A table's writer and its first row group's column writers are made
//! at its first batch, which [`crate::output::ParquetSink::prepare`] hands over empty before the
//! run: on a short run, whose tables all come whole at its end, that setup is much of what
//! encoding them costs after the run (a 16-row, 21-column `messages` table: about 1.3 ms
//! with it, 0.6 ms without).
//!
//! What this costs in memory is the open writers' state: per column, its encoders (pages
//! cut at [`crate::output::PAGE_BYTES`]) and the pages of the open row group (closed at
//! [`crate::output::ROW_GROUP_BYTES`]); per table, the footer (about 1 KB per column per
//! row group). Earlier versions held a run's batches in memory up to 32 MiB and
//! spilled larger tables to Arrow IPC files to encode them after the run: that doubled
//! the work of large tables (benchmark `htsim-dctcp/B`, 2.16 M port-window rows: 16% of
//! the run's instructions compressing and decompressing the spill) and put the whole
//! Parquet encoding after the simulation.

use crate::output::parquet_writer;
use crate::row_groups::ParallelWriter;
use crate::tables::BuildBatch;
use arrow_array::RecordBatch;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

/// Batches handed to the thread and not yet built or encoded: one flush of the
/// collector's tables (at most eight), after which the caller waits for the thread.
const QUEUED_BATCHES: usize = 8;

/// Every table's open writer, by table name.
type Writers = BTreeMap<&'static str, ParallelWriter<File>>;

/// One table's finished Parquet file, still unnamed.
pub struct Written {
    file: File,
}

impl Written {
    /// Names the file `path` (replacing a file of that name): on Linux the unnamed file
    /// itself is linked there, so a large table is not written twice; elsewhere, or if the
    /// file system refuses, it is copied.
    pub fn persist(mut self, path: &Path) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        if link_unnamed(&self.file, path).is_ok() {
            return Ok(());
        }
        self.file.seek(SeekFrom::Start(0))?;
        std::io::copy(&mut self.file, &mut File::create(path)?)?;
        Ok(())
    }
}

/// Gives `file`, created with `O_TMPFILE`, the name `path`: linked under a name of its
/// own beside `path` (`linkat` cannot replace a file), then renamed over `path`. Fails,
/// leaving no name behind, if `file` is not such a file (`tempfile` falls back to a named
/// file it deletes at once where `O_TMPFILE` is missing: that one cannot be linked again).
#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, path: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let name = path.file_name().ok_or_else(|| std::io::Error::other("no file name"))?;
    let mut part = std::ffi::OsString::from(".");
    part.push(name);
    part.push(format!(".{}.part", std::process::id()));
    let part = path.with_file_name(part);
    let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let to = CString::new(part.as_os_str().as_bytes())?;
    // SAFETY: both arguments are NUL-terminated strings that outlive the call; linkat
    // reads them and touches no other memory of this process.
    let r = unsafe { libc::linkat(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    std::fs::rename(&part, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&part);
    })
}

/// Every table's Parquet writer, fed on a thread of its own.
pub struct TableFiles {
    tx: Option<SyncSender<(&'static str, BuildBatch)>>,
    thread: Option<JoinHandle<std::io::Result<Writers>>>,
}

impl TableFiles {
    /// Starts the thread; each table's file is created unnamed in `dir` at its first batch.
    pub fn new(dir: &Path) -> std::io::Result<TableFiles> {
        let (tx, rx) = sync_channel::<(&'static str, BuildBatch)>(QUEUED_BATCHES);
        let dir: PathBuf = dir.to_path_buf();
        let thread = std::thread::Builder::new().name("pl2-tables".into()).spawn(move || {
            let mut tables = Writers::new();
            for (name, build) in rx {
                let batch = build();
                let w = match tables.entry(name) {
                    std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::btree_map::Entry::Vacant(e) => {
                        // One encoding thread: the simulation has the other core.
                        let w = e.insert(parquet_writer(tempfile::tempfile_in(&dir)?, batch.schema(), 1)?);
                        // Column writers allocate and clear their buffers when they are
                        // made: made now, often before the run's first row (see
                        // `ParquetSink::prepare`), so not after its last.
                        w.open_group().map_err(std::io::Error::other)?;
                        w
                    }
                };
                w.write(&batch).map_err(std::io::Error::other)?;
            }
            Ok(tables)
        })?;
        Ok(TableFiles { tx: Some(tx), thread: Some(thread) })
    }

    /// Hands a batch of table `name` to the thread. An error the thread met (a full disk,
    /// say) comes back here or from [`TableFiles::finish`].
    pub fn push(&mut self, name: &'static str, batch: RecordBatch) -> std::io::Result<()> {
        self.push_rows(name, Box::new(move || batch))
    }

    /// Hands the thread a batch of table `name` to build, then encode.
    pub fn push_rows(&mut self, name: &'static str, build: BuildBatch) -> std::io::Result<()> {
        let Some(tx) = &self.tx else { return Err(std::io::Error::other("the table writer stopped after an error")) };
        if tx.send((name, build)).is_err() {
            // The thread ended early, which it does only on an error: report that error.
            return Err(self.join().err().unwrap_or_else(|| std::io::Error::other("the table writer stopped")));
        }
        Ok(())
    }

    /// Waits for everything handed over to be encoded; every table's finished file.
    pub fn finish(mut self) -> std::io::Result<BTreeMap<&'static str, Written>> {
        let mut done = BTreeMap::new();
        for (name, w) in self.join()? {
            done.insert(name, Written { file: w.into_inner().map_err(std::io::Error::other)? });
        }
        Ok(done)
    }

    fn join(&mut self) -> std::io::Result<Writers> {
        self.tx = None;
        let thread = self.thread.take().ok_or_else(|| std::io::Error::other("the table writer stopped after an error"))?;
        thread.join().map_err(|_| std::io::Error::other("the table writer panicked"))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, StringArray, UInt64Array};
    use std::sync::Arc;

    fn batch(first: u64, rows: u64) -> RecordBatch {
        let n: UInt64Array = (first..first + rows).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40).collect();
        let s: StringArray = (first..first + rows).map(|i| Some(if i % 3 == 0 { "buffer_full" } else { "link_down" })).collect();
        RecordBatch::try_from_iter([("n", Arc::new(n) as ArrayRef), ("reason", Arc::new(s) as ArrayRef)]).unwrap()
    }

    /// Through the thread, tables interleaved: each file is byte for byte what
    /// `write_parquet` makes of the same batches, and no file has a name in the directory
    /// until it is persisted.
    #[test]
    fn files_equal_write_parquet_and_stay_unnamed_until_persisted() {
        let dir = std::env::temp_dir().join(format!("pl2-tables-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut t = TableFiles::new(&dir).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..60 {
            let x = batch(i * 7000, 7000 + i);
            if i % 3 == 0 { a.push(x.clone()) } else { b.push(x.clone()) }
            t.push(if i % 3 == 0 { "a" } else { "b" }, x).unwrap();
        }
        let files = t.finish().unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "a table file has a name before it is persisted");
        for (name, w) in files {
            w.persist(&dir.join(format!("{name}.parquet"))).unwrap();
            let expected = dir.join(format!("{name}.expected"));
            crate::output::write_parquet(&expected, (if name == "a" { &a } else { &b }).iter().cloned().map(Ok)).unwrap();
            let got = std::fs::read(dir.join(format!("{name}.parquet"))).unwrap();
            assert!(got == std::fs::read(&expected).unwrap(), "table {name}: {} bytes differ from write_parquet's", got.len());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An error the thread meets (here, its directory gone) is reported to the caller, not
    /// lost.
    #[test]
    fn the_threads_errors_reach_the_caller() {
        let dir = std::env::temp_dir().join(format!("pl2-tables-gone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut t = TableFiles::new(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let pushed = (0..3).map(|i| t.push("a", batch(i, 1))).collect::<Result<Vec<()>, _>>();
        let err = pushed.and_then(|_| t.finish().map(|_| ())).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
    }
}
