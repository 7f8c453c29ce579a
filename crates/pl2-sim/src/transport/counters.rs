//! `counters!`: declares a transport's counter struct and the `add` that sums two of them
//! (per-host counters into a run's), from one list of fields, so a new counter cannot be
//! left out of the sum. A field is a `u64` count or an array of them, summed; a field
//! written `name: u64 => max` keeps the larger of the two (a high-water mark).

/// A counter that sums into another.
pub trait Count {
    fn add_count(&mut self, other: &Self);
}

impl Count for u64 {
    #[inline]
    fn add_count(&mut self, other: &u64) {
        *self += other;
    }
}

impl<const N: usize> Count for [u64; N] {
    fn add_count(&mut self, other: &[u64; N]) {
        for (a, b) in self.iter_mut().zip(other) {
            *a += b;
        }
    }
}

/// See the module docs.
#[macro_export]
macro_rules! counters {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty $(=> $how:ident)? ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$fmeta])* pub $field : $ty ),*
        }

        impl $name {
            /// Adds `other`'s counters to these (sums; high-water marks keep the larger).
            pub fn add(&mut self, other: &$name) {
                let this = self;
                $( $crate::counters!(@add this, other, $field $(, $how)?); )*
            }
        }
    };
    (@add $this:ident, $other:ident, $field:ident) => {
        $crate::transport::counters::Count::add_count(&mut $this.$field, &$other.$field)
    };
    (@add $this:ident, $other:ident, $field:ident, max) => {
        $this.$field = $this.$field.max($other.$field)
    };
}
