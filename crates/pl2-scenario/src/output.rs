//! Writing a run to a directory: one Parquet file per table (zstd, fixed settings, so the
//! same tables give the same bytes), `summary.json` and the canonical `scenario.toml`.
//! Also Arrow IPC stream bytes, for handing tables across processes.

use crate::run::RunOutput;
use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::path::Path;

/// Rows per Parquet row group: bounds the memory a reader needs per group.
pub const ROW_GROUP_ROWS: usize = 1 << 16;

pub fn write_parquet(path: &Path, batch: &RecordBatch) -> std::io::Result<()> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).expect("valid level")))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build();
    let f = std::fs::File::create(path)?;
    let mut w = ArrowWriter::try_new(f, batch.schema(), Some(props)).map_err(std::io::Error::other)?;
    w.write(batch).map_err(std::io::Error::other)?;
    w.close().map_err(std::io::Error::other)?;
    Ok(())
}

/// Writes every table, the summary and the scenario into `dir` (created if needed).
pub fn write_run(dir: &Path, out: &RunOutput) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, b) in &out.tables {
        write_parquet(&dir.join(format!("{name}.parquet")), b)?;
    }
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
