//! Table sinks: in memory (batches concatenated per table at the end), or streamed to
//! one Parquet file per table (zstd, fixed settings, bounded row groups, so the same
//! tables give the same bytes and a long run's memory stays flat), plus `summary.json`
//! and the canonical `scenario.toml`. Also Arrow IPC stream bytes, for handing tables
//! across processes.

use crate::run::RunOutput;
use crate::tables::TableSink;
use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Rows per Parquet row group: bounds the memory a writer (and a reader) needs.
pub const ROW_GROUP_ROWS: usize = 1 << 16;

/// A writer also closes its row group once it holds this much memory (encoded pages,
/// dictionaries, encoder buffers)...
pub const ROW_GROUP_MEMORY: usize = 4 << 20;
/// ...and has at least this many rows (a wide table's empty encoders alone take a few
/// MiB, which must not close a group per batch). Without the memory bound a table that
/// grows slowly, as `messages` does, would keep its whole run in one open row group until
/// it reached `ROW_GROUP_ROWS`: memory growing with the run's length.
pub const ROW_GROUP_MIN_ROWS: usize = 4096;

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
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).expect("valid level")))
                .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
                .build();
            let f = File::create(self.dir.join(format!("{name}.parquet")))?;
            let w = ArrowWriter::try_new(f, batch.schema(), Some(props)).map_err(std::io::Error::other)?;
            self.writers.insert(name, w);
        }
        // The writer closes a row group whenever ROW_GROUP_ROWS rows are buffered.
        let w = self.writers.get_mut(name).expect("inserted");
        w.write(&batch).map_err(std::io::Error::other)?;
        if w.in_progress_rows() >= ROW_GROUP_MIN_ROWS && w.memory_size() >= ROW_GROUP_MEMORY {
            w.flush().map_err(std::io::Error::other)?;
        }
        Ok(())
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

    /// A slowly growing wide table (20 columns of distinct values, 1,000 rows a batch)
    /// closes row groups on memory long before `ROW_GROUP_ROWS`, none smaller than
    /// `ROW_GROUP_MIN_ROWS` but the last, and loses no row.
    #[test]
    fn a_wide_table_closes_row_groups_on_memory() {
        let dir = std::env::temp_dir().join(format!("pl2-rowgroups-{}", std::process::id()));
        let mut sink = ParquetSink::new(&dir).unwrap();
        let (batches, rows) = (40u64, 1000u64);
        for b in 0..batches {
            let cols: Vec<(String, ArrayRef)> = (0..20u64)
                .map(|c| {
                    let v: UInt64Array = (0..rows).map(|r| (b * rows + r) * 7_919 + c * 1_000_003).collect();
                    (format!("c{c}"), Arc::new(v) as ArrayRef)
                })
                .collect();
            sink.write("wide", RecordBatch::try_from_iter(cols).unwrap()).unwrap();
        }
        for (_, w) in std::mem::take(&mut sink.writers) {
            w.close().unwrap();
        }
        let reader = SerializedFileReader::new(File::open(dir.join("wide.parquet")).unwrap()).unwrap();
        let groups: Vec<i64> = reader.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(groups.iter().sum::<i64>(), (batches * rows) as i64);
        assert!(groups.len() >= 2, "one group of {} rows: the memory bound never closed it", groups[0]);
        for g in &groups[..groups.len() - 1] {
            assert!(*g as usize >= ROW_GROUP_MIN_ROWS && (*g as usize) < ROW_GROUP_ROWS, "row groups {groups:?}");
        }
    }
}
