//! [`Columns`]: an Arrow record batch built one column at a time, each column's name,
//! type and nullability given beside its values so that schema and data cannot drift
//! apart. A plain column is not nullable; an `opt_` column is.

use arrow_array::builder::{BooleanBuilder, Float64Builder, StringBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema};
use std::sync::Arc;

/// Columns of one table, in order.
#[derive(Default)]
pub(crate) struct Columns {
    fields: Vec<Field>,
    arrays: Vec<ArrayRef>,
}

/// A typed column method: an optional column (`append_option`, nullable) or a plain one
/// (`append_value`, not nullable). The optional arm comes first: `Option<T>` is a type too.
macro_rules! column {
    ($name:ident: $builder:ty, Option<$t:ty>) => {
        pub(crate) fn $name(self, name: &str, values: impl IntoIterator<Item = Option<$t>>) -> Self {
            let mut b = <$builder>::new();
            values.into_iter().for_each(|x| b.append_option(x));
            self.push(name, true, Arc::new(b.finish()))
        }
    };
    ($name:ident: $builder:ty, $t:ty) => {
        pub(crate) fn $name(self, name: &str, values: impl IntoIterator<Item = $t>) -> Self {
            let mut b = <$builder>::new();
            values.into_iter().for_each(|x| b.append_value(x));
            self.push(name, false, Arc::new(b.finish()))
        }
    };
}

impl Columns {
    fn push(mut self, name: &str, nullable: bool, a: ArrayRef) -> Self {
        self.fields.push(Field::new(name, a.data_type().clone(), nullable));
        self.arrays.push(a);
        self
    }

    column!(u8: UInt8Builder, u8);
    column!(u16: UInt16Builder, u16);
    column!(u32: UInt32Builder, u32);
    column!(opt_u32: UInt32Builder, Option<u32>);
    column!(u64: UInt64Builder, u64);
    column!(opt_u64: UInt64Builder, Option<u64>);
    column!(f64: Float64Builder, f64);
    column!(opt_f64: Float64Builder, Option<f64>);
    column!(bool: BooleanBuilder, bool);

    /// A text column (not nullable).
    pub(crate) fn str<S: AsRef<str>>(self, name: &str, values: impl IntoIterator<Item = S>) -> Self {
        let mut b = StringBuilder::new();
        values.into_iter().for_each(|x| b.append_value(x));
        self.push(name, false, Arc::new(b.finish()))
    }

    pub(crate) fn finish(self) -> RecordBatch {
        RecordBatch::try_new(Arc::new(Schema::new(self.fields)), self.arrays).expect("columns match the schema")
    }
}
