//! Where a Parquet writer keeps the finished pages of a row group until the group is
//! written out: on the heap, each page copied to a buffer of exactly its length.
//!
//! The library's own in-memory store keeps every page in the buffer it was compressed
//! into, whose capacity is the compressor's worst case for the page's uncompressed
//! size. Simulation records compress about tenfold, so an open row group held about
//! ten times the bytes it reported, and a memory bound on the writers bounded nothing
//! real. Copying costs one `memcpy` of the compressed bytes.

use bytes::Bytes;
use parquet::arrow::arrow_writer::{PageKey, PageStore, PageStoreArgs, PageStoreFactory};
use parquet::errors::{ParquetError, Result};

/// Pages of one column chunk, each in a buffer of its own length.
#[derive(Debug, Default)]
pub struct CompactPageStore {
    pages: Vec<Bytes>,
    resident: usize,
}

impl PageStore for CompactPageStore {
    fn put(&mut self, value: Bytes) -> Result<PageKey> {
        let key = PageKey::new(self.pages.len() as u64);
        self.resident += value.len();
        self.pages.push(Bytes::copy_from_slice(&value));
        Ok(key)
    }

    fn take(&mut self, key: PageKey) -> Result<Bytes> {
        let page = self
            .pages
            .get_mut(key.get() as usize)
            .map(std::mem::take)
            .ok_or_else(|| ParquetError::General(format!("no page {}", key.get())))?;
        self.resident -= page.len();
        Ok(page)
    }

    fn memory_size(&self) -> usize {
        self.resident
    }
}

/// Gives every column chunk a [`CompactPageStore`].
#[derive(Debug, Default)]
pub struct CompactPageStores;

impl PageStoreFactory for CompactPageStores {
    fn create(&self, _args: &PageStoreArgs<'_>) -> Result<Box<dyn PageStore>> {
        Ok(Box::new(CompactPageStore::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page handed over in an oversized buffer is kept in a copy of its length (not in
    /// that buffer), comes back intact, and leaves the store's count when taken.
    #[test]
    fn pages_are_kept_at_their_length() {
        let mut store = CompactPageStore::default();
        let mut big = Vec::with_capacity(1 << 16);
        big.extend_from_slice(b"compressed page");
        let oversized = big.as_ptr();
        let a = store.put(Bytes::from(big)).unwrap();
        let b = store.put(Bytes::from_static(b"header")).unwrap();
        assert_eq!(store.memory_size(), 21);
        assert_ne!(store.pages[0].as_ptr(), oversized, "the oversized buffer was kept");
        assert_eq!(store.take(a).unwrap(), Bytes::from_static(b"compressed page"));
        assert_eq!(store.memory_size(), 6);
        assert_eq!(store.take(b).unwrap(), Bytes::from_static(b"header"));
        assert_eq!(store.memory_size(), 0);
        assert!(store.take(PageKey::new(7)).is_err());
    }
}
