//! [`Columns`]: an Arrow record batch built one column at a time, each column's name,
//! type and nullability given beside its values so that schema and data cannot drift
//! apart. A plain column is not nullable; an `opt_` column is.

use arrow_array::builder::{Float64Builder, StringBuilder, UInt32Builder, UInt64Builder};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, RecordBatch, UInt16Array, UInt32Array, UInt64Array, UInt8Array};
use arrow_schema::{Field, Schema};
use std::sync::Arc;

/// Columns of one table, in order.
#[derive(Default)]
pub(crate) struct Columns {
    fields: Vec<Field>,
    arrays: Vec<ArrayRef>,
}

/// A typed column method: an optional column (a builder's `append_option`, nullable) or a
/// plain one (an array from its values, not nullable). The optional arm comes first:
/// `Option<T>` is a type too.
macro_rules! column {
    ($name:ident: $builder:ty, Option<$t:ty>) => {
        pub(crate) fn $name(self, name: &str, values: impl IntoIterator<Item = Option<$t>>) -> Self {
            let mut b = <$builder>::new();
            values.into_iter().for_each(|x| b.append_option(x));
            self.push(name, true, Arc::new(b.finish()))
        }
    };
    ($name:ident: $array:ty, $t:ty) => {
        pub(crate) fn $name(self, name: &str, values: impl IntoIterator<Item = $t>) -> Self {
            // Values straight into one buffer: no validity bitmap to keep for a column
            // that has no nulls.
            self.push(name, false, Arc::new(<$array>::from_iter_values(values)))
        }
    };
}

impl Columns {
    fn push(mut self, name: &str, nullable: bool, a: ArrayRef) -> Self {
        self.fields.push(Field::new(name, a.data_type().clone(), nullable));
        self.arrays.push(a);
        self
    }

    column!(u8: UInt8Array, u8);
    column!(u16: UInt16Array, u16);
    column!(u32: UInt32Array, u32);
    column!(opt_u32: UInt32Builder, Option<u32>);
    column!(u64: UInt64Array, u64);
    column!(opt_u64: UInt64Builder, Option<u64>);
    column!(f64: Float64Array, f64);
    column!(opt_f64: Float64Builder, Option<f64>);

    /// A boolean column (not nullable).
    pub(crate) fn bool(self, name: &str, values: impl IntoIterator<Item = bool>) -> Self {
        self.push(name, false, Arc::new(BooleanArray::from(values.into_iter().collect::<Vec<bool>>())))
    }

    /// A text column (not nullable).
    pub(crate) fn str<S: AsRef<str>>(self, name: &str, values: impl IntoIterator<Item = S>) -> Self {
        // Sized once: growing the value buffer by doubling copied it again and again.
        let values: Vec<S> = values.into_iter().collect();
        let bytes = values.iter().map(|x| x.as_ref().len()).sum();
        let mut b = StringBuilder::with_capacity(values.len(), bytes);
        values.iter().for_each(|x| b.append_value(x));
        self.push(name, false, Arc::new(b.finish()))
    }

    pub(crate) fn finish(self) -> RecordBatch {
        RecordBatch::try_new(Arc::new(Schema::new(self.fields)), self.arrays).expect("columns match the schema")
    }
}
