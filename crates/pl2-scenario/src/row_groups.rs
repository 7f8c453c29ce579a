//! Parquet row groups whose columns are encoded on several threads: the library's
//! `ArrowWriter` encodes and compresses a table's columns one after another on the
//! calling thread, after the simulation has ended and the other cores idle. This
//! writer makes the same decisions (where a row group ends, by rows and by the library's
//! estimate of its encoded bytes, splitting a batch as `ArrowWriter::write` does) from
//! the same column writers, and hands each column to one of a few threads, so its files
//! are byte for byte the library's (tested against it below).

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter, ArrowLeafColumn, ArrowRowGroupWriterFactory};
use parquet::errors::Result;
use parquet::file::writer::SerializedFileWriter;
use std::io::Write;

/// Most threads encoding one row group's columns (each column stays on one thread) when
/// the caller allows any number.
const MAX_THREADS: usize = 4;

/// The open row group: its column writers and the rows they hold.
struct Open {
    writers: Vec<ArrowColumnWriter>,
    rows: usize,
}

impl Open {
    /// `ArrowRowGroupWriter::get_estimated_total_bytes`.
    fn estimated_bytes(&self) -> usize {
        self.writers.iter().map(ArrowColumnWriter::get_estimated_total_bytes).sum()
    }
}

/// A Parquet file written row group by row group, each group's columns in parallel.
pub struct ParallelWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    open: Option<Open>,
    /// The properties' row-group limits (`None`: unlimited), as `ArrowWriter` reads them.
    max_rows: Option<usize>,
    max_bytes: Option<usize>,
    threads: usize,
}

/// At most `asked` threads, and no more than the machine's cores, [`MAX_THREADS`] or
/// `columns`; the cores are looked up (files under `/proc` and `/sys` on Linux) only
/// when more than one thread is asked for.
fn thread_count(asked: usize, columns: usize) -> usize {
    if asked <= 1 {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    asked.min(cores).min(MAX_THREADS).min(columns).max(1)
}

impl<W: Write + Send> ParallelWriter<W> {
    /// Takes over an `ArrowWriter` that has written nothing (its file header, schema and
    /// properties, whose row-group limits it keeps); at most `threads` threads (and no
    /// more than the machine's cores, [`MAX_THREADS`] or the columns) encode a group.
    pub fn new(writer: parquet::arrow::ArrowWriter<W>, schema: SchemaRef, threads: usize) -> Result<Self> {
        let (file, factory) = writer.into_serialized_writer()?;
        let (max_rows, max_bytes) = (file.properties().max_row_group_row_count(), file.properties().max_row_group_bytes());
        let threads = thread_count(threads, schema.fields().len());
        Ok(ParallelWriter { file, factory, schema, open: None, max_rows, max_bytes, threads })
    }

    /// Sets up the next row group's column writers (their encoders and compressors) now
    /// rather than at the next row written. A group that never receives a row is not
    /// written.
    pub fn open_group(&mut self) -> Result<()> {
        if self.open.is_none() {
            let writers = self.factory.create_column_writers(self.file.flushed_row_groups().len())?;
            self.open = Some(Open { writers, rows: 0 });
        }
        Ok(())
    }

    /// Writes `batch`, closing row groups where `ArrowWriter::write` would.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let mut remaining = batch.clone();
        loop {
            self.open_group()?;
            let open = self.open.as_ref().expect("opened above");
            let mut split_at = match self.max_rows {
                Some(max) if open.rows + remaining.num_rows() > max => Some(max - open.rows),
                _ => None,
            };
            let candidate = split_at.unwrap_or(remaining.num_rows());
            // With rows in the group (the average row is defined): its estimated bytes.
            let current = open.estimated_bytes();
            if let (Some(max), Some(avg_row)) = (self.max_bytes, current.checked_div(open.rows)) {
                if current >= max {
                    self.flush()?;
                    continue;
                }
                if let Some(fit) = (max - current).checked_div(avg_row) {
                    if candidate > fit {
                        if fit == 0 {
                            self.flush()?;
                            continue;
                        }
                        split_at = Some(fit);
                    }
                }
            }
            let rest = split_at.map(|n| {
                let rest = remaining.slice(n, remaining.num_rows() - n);
                remaining = remaining.slice(0, n);
                rest
            });
            self.encode(&remaining)?;
            let open = self.open.as_ref().expect("opened above");
            if self.max_rows.is_some_and(|m| open.rows >= m) || self.max_bytes.is_some_and(|m| open.estimated_bytes() >= m) {
                self.flush()?;
            }
            match rest {
                Some(r) => remaining = r,
                None => return Ok(()),
            }
        }
    }

    /// Encodes `batch` into the open group, column `i` on thread `i % threads`.
    fn encode(&mut self, batch: &RecordBatch) -> Result<()> {
        let open = self.open.as_mut().expect("an open row group");
        open.rows += batch.num_rows();
        let mut leaves: Vec<ArrowLeafColumn> = Vec::with_capacity(open.writers.len());
        for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
            leaves.extend(compute_leaves(field, column)?);
        }
        let mut shares: Vec<Vec<(&mut ArrowColumnWriter, &ArrowLeafColumn)>> = (0..self.threads).map(|_| Vec::new()).collect();
        for (i, pair) in open.writers.iter_mut().zip(&leaves).enumerate() {
            shares[i % self.threads].push(pair);
        }
        let write = |share: Vec<(&mut ArrowColumnWriter, &ArrowLeafColumn)>| share.into_iter().try_for_each(|(w, leaf)| w.write(leaf));
        let mut shares = shares.into_iter();
        let own = shares.next().expect("at least one thread");
        std::thread::scope(|s| {
            let others: Vec<_> = shares.map(|share| s.spawn(move || write(share))).collect();
            let mut result = write(own);
            for h in others {
                let r = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                result = result.and(r);
            }
            result
        })
    }

    /// Closes the open row group, if it has rows, and appends its column chunks in column
    /// order.
    fn flush(&mut self) -> Result<()> {
        let Some(open) = self.open.take().filter(|o| o.rows > 0) else { return Ok(()) };
        let mut group = self.file.next_row_group()?;
        for w in open.writers {
            w.close()?.append_to_row_group(&mut group)?;
        }
        group.close()?;
        Ok(())
    }

    /// `ArrowWriter::memory_size`: what the open group's column writers hold.
    pub fn memory_size(&self) -> usize {
        self.open.as_ref().map_or(0, |o| o.writers.iter().map(ArrowColumnWriter::memory_size).sum())
    }

    /// Writes the last row group and the footer; returns the sink.
    pub fn into_inner(mut self) -> Result<W> {
        self.flush()?;
        self.file.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Float64Array, StringArray, UInt32Array, UInt64Array};
    use parquet::arrow::arrow_writer::ArrowWriterOptions;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::WriterProperties;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use std::sync::Arc;

    /// A ports-like batch: repeated small strings, a slowly rising counter, noisy values.
    fn batch(first: u64, rows: u64) -> RecordBatch {
        let mix = |r: u64| (r.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % 100_000;
        let port: UInt32Array = (first..first + rows).map(|r| (r % 37) as u32).collect();
        let node: StringArray = (first..first + rows).map(|r| Some(format!("s{}", r % 37))).collect();
        let window: UInt64Array = (first..first + rows).map(|r| r / 37 * 10_000_000).collect();
        let noisy: UInt64Array = (first..first + rows).map(mix).collect();
        let mean: Float64Array = (first..first + rows).map(|r| mix(r) as f64 / 7.0).collect();
        let cols = [("port", Arc::new(port) as ArrayRef), ("node", Arc::new(node)), ("window", Arc::new(window)), ("noisy", Arc::new(noisy)), ("mean", Arc::new(mean))];
        RecordBatch::try_from_iter(cols).unwrap()
    }

    fn library_writer(batches: &[RecordBatch], max_rows: usize, max_bytes: usize) -> ArrowWriter<Vec<u8>> {
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).unwrap()))
            .set_max_row_group_row_count(Some(max_rows))
            .set_max_row_group_bytes(Some(max_bytes))
            .set_data_page_size_limit(16 << 10)
            .set_dictionary_page_size_limit(16 << 10)
            .build();
        ArrowWriter::try_new_with_options(Vec::new(), batches[0].schema(), ArrowWriterOptions::new().with_properties(props)).unwrap()
    }

    /// The same batches give the library's bytes exactly: row groups closed by rows, by
    /// estimated bytes (batches split inside), and dictionary pages falling back to plain.
    #[test]
    fn files_are_the_librarys_byte_for_byte() {
        let batches: Vec<RecordBatch> = (0..40).map(|i| batch(i * 3000, 3000 + 7 * i)).collect();
        for (max_rows, max_bytes) in [(1 << 20, 64 << 10), (10_000, 1 << 30), (25_000, 200 << 10)] {
            let mut lib = library_writer(&batches, max_rows, max_bytes);
            for b in &batches {
                lib.write(b).unwrap();
            }
            let expected = lib.into_inner().unwrap();
            let mut ours = ParallelWriter::new(library_writer(&batches, max_rows, max_bytes), batches[0].schema(), 3).unwrap();
            // Three threads whatever the machine's cores (`new` caps them), so that
            // columns are shared unevenly between threads.
            ours.threads = 3;
            for b in &batches {
                ours.write(b).unwrap();
            }
            let got = ours.into_inner().unwrap();
            let reader = SerializedFileReader::new(bytes::Bytes::from(got.clone())).unwrap();
            let groups = reader.metadata().num_row_groups();
            assert!(groups > 2, "limits ({max_rows}, {max_bytes}): {groups} row groups, too few to test");
            assert!(got == expected, "limits ({max_rows}, {max_bytes}): {} bytes against the library's {}", got.len(), expected.len());
        }
    }
}
