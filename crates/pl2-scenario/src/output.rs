//! Table sinks: in memory (batches concatenated per table at the end), or one Parquet
//! file per table (zstd, fixed settings, so the same tables give the same bytes), encoded
//! as the run goes on a thread of its own ([`crate::table_files`]) and named when it ends;
//! plus `summary.json` and the canonical `scenario.toml`. Also
//! Arrow IPC stream bytes, for handing tables across processes.

use crate::page_store::CompactPageStores;
use crate::row_groups::ParallelWriter;
use crate::table_files::TableFiles;
use crate::run::RunOutput;
use crate::tables::{BuildBatch, TableSink};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most rows in one Parquet row group.
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// A writer closes its row group once the group's encoded size reaches this (the
/// library's estimate; it splits a batch rather than overshoot). The open group is what a
/// writer holds in memory besides its encoders, whose size the page limits below fix, and
/// its footer, which gains about 1 KB per column per group: the bound keeps writing a
/// large table within a few MB without making the footer of a long run's table large.
pub const ROW_GROUP_BYTES: usize = 2 << 20;

/// Data and dictionary pages are cut at this many bytes before compression. The
/// library's default, 1 MiB, lets each column's encoders hold up to 2 MiB.
pub const PAGE_BYTES: usize = 64 << 10;

/// zstd level 1. Every column writer has its own compression context: when every table's
/// writer stayed open through the run, benchmark 2's contexts took 3.2 MB at level 1
/// against 12.9 MB at level 3. Files are about 3% larger and written about 23% faster
/// (benchmark 2 at 10x its duration).
pub const ZSTD_LEVEL: i32 = 1;

/// Keeps every table in memory.
#[derive(Default)]
pub struct MemorySink {
    tables: BTreeMap<&'static str, Vec<RecordBatch>>,
}

impl TableSink for MemorySink {
    fn write(&mut self, name: &'static str, batch: RecordBatch) -> std::io::Result<()> {
        self.tables.entry(name).or_default().push(batch);
        Ok(())
    }
}

impl MemorySink {
    /// Every table's batches as written, in table order.
    pub fn into_batches(self) -> Vec<(&'static str, Vec<RecordBatch>)> {
        self.tables.into_iter().collect()
    }

    /// One batch per table, in table order. Panics if a string column outgrows one
    /// batch's 32-bit offsets (2 GiB); [`MemorySink::into_batches`] never concatenates.
    pub fn into_tables(self) -> Vec<(&'static str, RecordBatch)> {
        self.tables
            .into_iter()
            .map(|(name, batches)| {
                let schema = batches[0].schema();
                let b = arrow_select::concat::concat_batches(&schema, &batches).expect("same schema");
                (name, b)
            })
            .collect()
    }
}

/// Writes each table to `<dir>/<table>.parquet`: its batches are encoded as they come, on
/// a thread of its own ([`TableFiles`]), into an unnamed file that [`ParquetSink::finish`]
/// names.
pub struct ParquetSink {
    dir: PathBuf,
    files: TableFiles,
}

impl ParquetSink {
    pub fn new(dir: &Path) -> std::io::Result<ParquetSink> {
        std::fs::create_dir_all(dir)?;
        Ok(ParquetSink { dir: dir.to_path_buf(), files: TableFiles::new(dir)? })
    }

    /// Finishes every table's Parquet file, then writes `summary.json` and `scenario.toml`.
    pub fn finish(self, out: &RunOutput) -> std::io::Result<()> {
        for (name, written) in self.files.finish()? {
            written.persist(&self.dir.join(format!("{name}.parquet")))?;
        }
        write_summary(&self.dir, out)
    }
}

impl TableSink for ParquetSink {
    fn write(&mut self, name: &'static str, batch: RecordBatch) -> std::io::Result<()> {
        self.files.push(name, batch)
    }

    /// Built on the table thread, off the simulation's.
    fn write_rows(&mut self, name: &'static str, build: BuildBatch) -> std::io::Result<()> {
        self.files.push_rows(name, build)
    }

    /// The table's file and writer are set up on the table thread while the simulation
    /// starts.
    fn prepare(&mut self, name: &'static str, empty: BuildBatch) -> std::io::Result<()> {
        self.files.push_rows(name, empty)
    }
}

/// What writing one Parquet file took.
#[derive(Debug, Default)]
pub struct ParquetWritten {
    pub rows: u64,
    /// Most memory the writer held, as the Parquet library estimates it (encoders, and
    /// the pages of the open row group), checked after each batch.
    pub most_memory: usize,
}

/// Writes `batches` (all of one schema, at least one) to the Parquet file `path` with
/// pl2's fixed settings (zstd, bounded pages and row groups), so the same batches give
/// the same bytes.
pub fn write_parquet(path: &Path, batches: impl IntoIterator<Item = std::io::Result<RecordBatch>>) -> std::io::Result<ParquetWritten> {
    let mut batches = batches.into_iter();
    let Some(first) = batches.next().transpose()? else {
        return Err(std::io::Error::other(format!("{}: no batch to write", path.display())));
    };
    let mut w = parquet_writer(File::create(path)?, first.schema(), usize::MAX)?;
    let mut written = ParquetWritten::default();
    for batch in std::iter::once(Ok(first)).chain(batches) {
        let batch = batch?;
        written.rows += batch.num_rows() as u64;
        // The writer closes row groups at ROW_GROUP_ROWS rows or ROW_GROUP_BYTES.
        w.write(&batch).map_err(std::io::Error::other)?;
        written.most_memory = written.most_memory.max(w.memory_size());
    }
    w.into_inner().map_err(std::io::Error::other)?;
    Ok(written)
}

/// A Parquet writer for tables of `schema` with pl2's fixed settings (zstd, bounded pages
/// and row groups), encoding each row group's columns on up to `threads` threads.
pub fn parquet_writer<W: Write + Send>(sink: W, schema: SchemaRef, threads: usize) -> std::io::Result<ParallelWriter<W>> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL).expect("valid level")))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
        .set_data_page_size_limit(PAGE_BYTES)
        .set_dictionary_page_size_limit(PAGE_BYTES)
        .build();
    let options = ArrowWriterOptions::new().with_properties(props).with_page_store_factory(Arc::new(CompactPageStores));
    let w = ArrowWriter::try_new_with_options(sink, schema.clone(), options).map_err(std::io::Error::other)?;
    ParallelWriter::new(w, schema, threads).map_err(std::io::Error::other)
}

/// Writes `summary.json` and the canonical `scenario.toml` into `dir`.
pub fn write_summary(dir: &Path, out: &RunOutput) -> std::io::Result<()> {
    let summary = serde_json::to_string_pretty(&out.summary).expect("json");
    std::fs::write(dir.join("summary.json"), summary + "\n")?;
    if let Some(s) = out.summary.get("scenario").and_then(|s| s.as_str()) {
        std::fs::write(dir.join("scenario.toml"), s)?;
    }
    Ok(())
}

/// Arrow IPC stream bytes of one batch.
pub fn ipc_bytes(batch: &RecordBatch) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut buf, &batch.schema()).expect("ipc writer");
    w.write(batch).expect("ipc write");
    w.finish().expect("ipc finish");
    drop(w);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, UInt64Array};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use std::sync::Arc;

    /// Incompressible values: a 64-bit mixing function of the row and column.
    fn noise(row: u64, col: u64) -> u64 {
        let mut x = row.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ col.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        x ^= x >> 31;
        x.wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ (x >> 29)
    }

    fn batch(cols: u64, rows: u64, first: u64) -> RecordBatch {
        let cols: Vec<(String, ArrayRef)> = (0..cols)
            .map(|c| {
                let v: UInt64Array = (first..first + rows).map(|r| noise(r, c)).collect();
                (format!("c{c}"), Arc::new(v) as ArrayRef)
            })
            .collect();
        RecordBatch::try_from_iter(cols).unwrap()
    }

    /// A wide table of incompressible values (32 MB, sixteen times the row-group bound):
    /// row groups close on their encoded size, far below `ROW_GROUP_ROWS`, so what the
    /// writer holds stays near the bound however much is written, and no row is lost.
    #[test]
    fn row_groups_close_on_their_size_and_memory_stays_bounded() {
        let dir = std::env::temp_dir().join(format!("pl2-rowgroups-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("wide.parquet");
        let (batches, rows) = (50u64, 4000u64);
        let written = write_parquet(&path, (0..batches).map(|b| Ok(batch(20, rows, b * rows)))).unwrap();
        assert_eq!(written.rows, batches * rows);
        // The open group, plus each column's encoder: a page being filled, its dictionary
        // and the dictionary's indices, each at most about PAGE_BYTES.
        let bound = ROW_GROUP_BYTES + 20 * 3 * PAGE_BYTES;
        assert!(written.most_memory <= bound, "the writer held {} bytes, bound {bound}", written.most_memory);
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let groups: Vec<(i64, i64)> = reader.metadata().row_groups().iter().map(|g| (g.num_rows(), g.compressed_size())).collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(groups.iter().map(|g| g.0).sum::<i64>(), (batches * rows) as i64);
        assert!(groups.len() >= 12, "groups {groups:?}: the size bound never closed them");
        for &(rows, bytes) in &groups {
            assert!((rows as usize) < ROW_GROUP_ROWS && bytes as usize <= ROW_GROUP_BYTES + PAGE_BYTES, "row groups {groups:?}");
        }
    }

    /// Through the sink: each table's file has all its rows, in order, and nothing else is
    /// left in the directory; a file of a table's name already there is replaced. Tables
    /// set up before their rows (`prepare`: writer and row group made early), one of them
    /// never given a row, are byte for byte what `write_parquet` makes of their batches.
    #[test]
    fn the_sink_writes_every_table_whole_and_leaves_no_other_file() {
        let dir = std::env::temp_dir().join(format!("pl2-sink-{}", std::process::id()));
        let mut sink = ParquetSink::new(&dir).unwrap();
        std::fs::write(dir.join("narrow.parquet"), b"an earlier run's table").unwrap();
        sink.prepare("wide", Box::new(|| batch(5, 0, 0))).unwrap();
        sink.prepare("empty", Box::new(|| batch(3, 0, 0))).unwrap();
        for b in 0..20 {
            sink.write("wide", batch(5, 1000, b * 1000)).unwrap();
            sink.write("narrow", batch(2, 10, b * 10)).unwrap();
        }
        let out = RunOutput { summary: serde_json::json!({}), stop: pl2_sim::sim::StopReason::EndTime, wall: Default::default(), sink_wall: Default::default() };
        sink.finish(&out).unwrap();
        let read = |name: &str, cols: u64, rows: u64| {
            let f = File::open(dir.join(format!("{name}.parquet"))).unwrap();
            let r = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(f, 1 << 20).unwrap();
            let got: Vec<RecordBatch> = r.collect::<Result<_, _>>().unwrap();
            let got = arrow_select::concat::concat_batches(&got[0].schema(), &got).unwrap();
            assert_eq!(got, batch(cols, rows, 0), "{name}");
        };
        read("wide", 5, 20_000);
        read("narrow", 2, 200);
        let mut files: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        files.sort();
        let expected = dir.join("expected");
        std::fs::create_dir(&expected).unwrap();
        write_parquet(&expected.join("wide.parquet"), (0..20).map(|b| Ok(batch(5, 1000, b * 1000)))).unwrap();
        write_parquet(&expected.join("empty.parquet"), [Ok(batch(3, 0, 0))]).unwrap();
        let same = |name: &str| std::fs::read(dir.join(name)).unwrap() == std::fs::read(expected.join(name)).unwrap();
        let (wide, empty) = (same("wide.parquet"), same("empty.parquet"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(files, ["empty.parquet", "narrow.parquet", "summary.json", "wide.parquet"]);
        assert!(wide && empty, "prepared tables differ from write_parquet's: wide {wide}, empty {empty}");
    }
}
