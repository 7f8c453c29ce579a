//! Workloads: which messages the hosts send, when, and how large.
//!
//! A workload ends as a stream of [`MessageSpec`]s. They come from empirical size
//! distributions ([`SizeCdf`], `cdf.rs`), open-loop Poisson sources and closed-loop
//! fixed-size streams (`arrivals.rs`), communication patterns that pick sender/receiver
//! pairs (`patterns.rs`), or a user's message-list CSV file (`msglist.rs`). Every input
//! is validated; a [`WorkloadError`] names the file or field, the line where there is
//! one, the bad value and how to fix it.

mod apps;
mod arrivals;
mod cdf;
mod cdf_parse;
mod msglist;
mod patterns;
mod wire_sum;

pub(crate) use apps::{AppIo, AppMessage, AppTag, Apps};
pub use apps::{AppSpec, PsShuffleSpec, RpcSpec, MEMCACHED_GET_REQUEST_BYTES, MEMCACHED_GET_RESPONSE_HEADER_BYTES, VGG16_GRADIENT_BYTES};
pub use arrivals::{DestChooser, FixedSizeStream, ListOrder, PoissonParams, PoissonSource};
pub use cdf::SizeCdf;
pub use cdf_parse::{CdfFormat, BUILTIN_NAMES, HOMA_W5_BYTES_PER_PACKET};
pub use msglist::MessageList;
pub use patterns::{all_to_all, incast, outcast, permutation, poisson_incasts, shuffle, IncastEvent, Pair};

use crate::units::SimTime;

/// One message a host hands to its transport.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MessageSpec {
    /// When the application submits the message.
    pub time: SimTime,
    /// Sending host.
    pub src: u32,
    /// Receiving host (never `src`).
    pub dst: u32,
    /// Payload bytes, at least 1 (framing is added by the network model).
    pub size: u64,
    /// Application thread (connection) on the sender that submits it.
    pub thread: u16,
    /// 802.1Q priority, 0..=7.
    pub priority: u8,
}

/// Highest 802.1Q priority a message may carry.
pub const MAX_PRIORITY: u8 = 7;

/// An invalid workload input. Every message says where the problem is, what the bad
/// value was and what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// A file could not be read.
    #[error("{file}: cannot read the file ({reason}); check the path and permissions")]
    Io { file: String, reason: String },
    /// A problem on one line of a size-distribution file.
    #[error("{file} line {line}: {problem}; {fix}")]
    Line {
        file: String,
        line: usize,
        problem: String,
        fix: String,
    },
    /// A problem in one field of one line of a message-list CSV file.
    #[error("{file} line {line}, column {column} ({column_name}): {problem}; {fix}")]
    Field {
        file: String,
        line: usize,
        column: usize,
        column_name: &'static str,
        problem: String,
        fix: String,
    },
    /// A problem with a file as a whole (empty, incomplete).
    #[error("{file}: {problem}; {fix}")]
    File {
        file: String,
        problem: String,
        fix: String,
    },
    /// A built-in distribution name that does not exist.
    #[error("unknown built-in size distribution {name:?}; use one of {known}")]
    UnknownBuiltin { name: String, known: String },
    /// A parameter outside its allowed range.
    #[error("{field} = {value}: {problem}; {fix}")]
    Param {
        field: &'static str,
        value: String,
        problem: String,
        fix: String,
    },
}

impl WorkloadError {
    pub fn param(
        field: &'static str,
        value: impl ToString,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> WorkloadError {
        WorkloadError::Param {
            field,
            value: value.to_string(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}
