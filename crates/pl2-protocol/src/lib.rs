//! pl2-protocol: the PL2 algorithms (Le et al., "PL2: Towards Predictable Low Latency in
//! Rack-Scale Networks", and the talk's low-latency priorities) as pure sans-IO state
//! machines. Time (`u64` picoseconds) and messages go in, actions come out; there is no
//! I/O, no clock and no simulator type here.
//!
//! - [`switch::Scheduler`]: Algorithm 1 (faithful), the ideal scheduler of §4.2, the T
//!   rule for unsolicited bursts, priorities, GRT copies, cancels, the inter-rack share,
//!   and an improved variant closing two holes of the faithful design.
//! - [`sender::Sender`]: bursts of at most K packets, equation (1), Algorithm 2,
//!   blocking or pipelined contexts, retries, priorities, probes.
//! - [`receiver::Receiver`]: duplicate counting and §4.5 pending-burst tracking.
//! - [`timeslot`]: the timeslot length.
//!
//! # Header fields a driver must carry
//!
//! | frame  | fields (width)                                                              |
//! |--------|-----------------------------------------------------------------------------|
//! | RSV    | src, dst (host ids); burst (32); attempt (8); demand (8, ≤ K); flags: high priority, unsolicited follows |
//! | GRT    | src, dst of the RSV; burst (32); attempt (8); send slot (32); recv slot (32); granted (8); flag: unsolicited admitted; copy-to-receiver marker (driver's) |
//! | CANCEL | src, dst; packets (32, in practice ≤ a few K)                               |
//! | data   | src, dst; burst (32); index in burst (8, < K); flags: unsolicited, resent    |
//!
//! The two slot fields of a GRT fill a 64-bit word exactly (32-bit registers, §5); the
//! burst id, attempt and granted count need a further 48 bits.

pub mod error;
pub mod estimator;
pub mod msg;
pub mod receiver;
pub mod sender;
pub mod switch;
pub mod timeslot;

pub use error::{ConfigError, ProtocolError};
pub use msg::{BurstId, Cancel, DataTag, Grt, HostId, MsgId, Rsv, TimerToken};
