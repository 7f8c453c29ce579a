//! Table sinks: in memory (batches concatenated per table at the end), or streamed to
//! one Parquet file per table (zstd, fixed settings, so the same tables give the same
//! bytes; row groups bounded in size, so what a writer holds does not grow with the
//! run), plus `summary.json` and the canonical `scenario.toml`. Also Arrow IPC stream
//! bytes, for handing tables across processes.

use crate::page_store::CompactPageStores;
use crate::run::RunOutput;
use crate::tables::TableSink;
use arrow_array::RecordBatch;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most rows in one Parquet row group.
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// A writer closes its row group once the group's encoded size reaches this (the
/// library's estimate; it splits a batch rather than overshoot). The open group is what a
/// writer holds in memory besides its encoders, whose size the page limits below fix:
/// a writer's memory does not grow with the run, and a table that grows slowly (as
/// `messages` does) is not held whole in memory until it reaches `ROW_GROUP_ROWS`.
pub const ROW_GROUP_BYTES: usize = 2 << 20;

/// Data and dictionary pages are cut at this many bytes before compression. The
/// library's default, 1 MiB, lets each column's encoders hold up to 2 MiB.
pub const PAGE_BYTES: usize = 64 << 10;

/// zstd level 1. Every column writer has its own compression context; at benchmark 2's
/// peak the contexts took 3.2 MB at level 1 against 12.9 MB at level 3. Files are about
/// 3% larger and written about 23% faster (benchmark 2 at 10x its duration).
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

/// Streams each table into `<dir>/<table>.parquet`.
pub struct ParquetSink {
    dir: PathBuf,
    writers: BTreeMap<&'static str, ArrowWriter<File>>,
}

impl ParquetSink {
    pub fn new(dir: &Path) -> std::io::Result<ParquetSink> {
        std::fs::create_dir_all(dir)?;
        Ok(ParquetSink { dir: dir.to_path_buf(), writers: BTreeMap::new() })
    }

    /// Closes every file and writes `summary.json` and `scenario.toml`.
    pub fn finish(self, out: &RunOutput) -> std::io::Result<()> {
        for (_, w) in self.writers {
            w.close().map_err(std::io::Error::other)?;
        }
        write_summary(&self.dir, out)
    }
}

impl TableSink for ParquetSink {
    fn write(&mut self, name: &'static str, batch: RecordBatch) -> std::io::Result<()> {
        if !self.writers.contains_key(name) {
            let props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL).expect("valid level")))
                .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
                .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
                .set_data_page_size_limit(PAGE_BYTES)
                .set_dictionary_page_size_limit(PAGE_BYTES)
                .build();
            let f = File::create(self.dir.join(format!("{name}.parquet")))?;
            let options = ArrowWriterOptions::new().with_properties(props).with_page_store_factory(Arc::new(CompactPageStores));
            let w = ArrowWriter::try_new_with_options(f, batch.schema(), options).map_err(std::io::Error::other)?;
            self.writers.insert(name, w);
        }
        // The writer closes row groups at ROW_GROUP_ROWS rows or ROW_GROUP_BYTES.
        self.writers.get_mut(name).expect("inserted").write(&batch).map_err(std::io::Error::other)
    }
}

impl ParquetSink {
    /// Memory the writers hold, as the Parquet library estimates it (encoders, and the
    /// pages of open row groups).
    pub fn memory(&self) -> usize {
        self.writers.values().map(|w| w.memory_size()).sum()
    }
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

    /// A wide table of incompressible values (32 MB, sixteen times the row-group bound)
    /// next to a narrow, slowly growing one: row groups close on their encoded size, far
    /// below `ROW_GROUP_ROWS`, so what the writers hold stays near the bound however much
    /// is written, and no row is lost.
    #[test]
    fn row_groups_close_on_their_size_and_memory_stays_bounded() {
        let dir = std::env::temp_dir().join(format!("pl2-rowgroups-{}", std::process::id()));
        let mut sink = ParquetSink::new(&dir).unwrap();
        let (batches, wide_rows, narrow_rows) = (50u64, 4000u64, 100u64);
        let mut most = 0;
        for b in 0..batches {
            sink.write("wide", batch(20, wide_rows, b * wide_rows)).unwrap();
            sink.write("narrow", batch(2, narrow_rows, b * narrow_rows)).unwrap();
            most = most.max(sink.memory());
        }
        // The open groups, plus each column's encoder (a page being filled, at most
        // PAGE_BYTES, and its dictionary, at most PAGE_BYTES).
        let bound = 2 * ROW_GROUP_BYTES + 22 * 2 * PAGE_BYTES;
        assert!(most <= bound, "writers held {most} bytes, bound {bound}");
        for (_, w) in std::mem::take(&mut sink.writers) {
            w.close().unwrap();
        }
        let groups = |name: &str| -> Vec<(i64, i64)> {
            let f = File::open(dir.join(format!("{name}.parquet"))).unwrap();
            let reader = SerializedFileReader::new(f).unwrap();
            reader.metadata().row_groups().iter().map(|g| (g.num_rows(), g.compressed_size())).collect()
        };
        let (wide, narrow) = (groups("wide"), groups("narrow"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(wide.iter().map(|g| g.0).sum::<i64>(), (batches * wide_rows) as i64);
        assert_eq!(narrow.iter().map(|g| g.0).sum::<i64>(), (batches * narrow_rows) as i64);
        assert!(wide.len() >= 12, "groups {wide:?}: the size bound never closed them");
        for &(rows, bytes) in &wide {
            assert!((rows as usize) < ROW_GROUP_ROWS && bytes as usize <= ROW_GROUP_BYTES + PAGE_BYTES, "row groups {wide:?}");
        }
    }
}
