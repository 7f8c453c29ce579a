//! PL2 (Le et al., "PL2: Towards Predictable Low Latency in Rack-Scale Networks"): the
//! simulator's driver of the sans-IO `pl2-protocol` crate.
//!
//! - [`wire`]: how RSV, GRT, CANCEL and the data tag ride in [`crate::packet::Packet`].
//! - [`config`]: [`Pl2Config`], every knob with its default.
//! - [`driver`]: [`driver::Pl2Driver`], the host side's plumbing around pl2-protocol's
//!   sender and receiver, shared by [`Pl2Host`] and TCP over PL2
//!   ([`crate::transport::tcp::pl2`]).
//! - [`host`]: [`Pl2Host`], the end-host transport (sender and receiver) for messages.
//! - [`switch`]: [`Pl2Switch`], the ToR's scheduler as a switch program.
//!
//! Scope: one rack (the ToR schedules every host's ports); inter-rack PL2 (§7) is future
//! work and other topologies are rejected at build time.

pub mod config;
pub mod driver;
pub mod host;
pub mod switch;
pub mod wire;

pub use config::Pl2Config;
pub use host::Pl2Host;
pub use switch::Pl2Switch;

/// PL2 counters of a whole run (see [`crate::sim::Simulation::pl2_stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pl2Stats {
    /// Arrival of scheduled bursts' first packets at the switch against their slots.
    pub arrival_error: switch::ArrivalError,
    /// The ToR schedulers' counters, summed (one ToR in a rack): RSVs, grants, the
    /// unsolicited passed/dropped, and the two holes `counter_drift_packets` and
    /// `unsolicited_unrecovered_packets`/`_bursts`.
    pub switch: pl2_protocol::switch::SwitchStats,
    /// Frames dropped by the PL2 switch program (the T rule), counted apart from buffer
    /// drops (`DropReason::Program`; equals `switch.unsolicited_dropped`).
    pub program_drops: u64,
    /// Sender counters summed over hosts.
    pub bursts: u64,
    pub rsvs: u64,
    pub rsv_retries: u64,
    pub unsolicited_bursts: u64,
    pub resent_bursts: u64,
    pub stale_grts: u64,
    pub cancels_sent: u64,
    /// Duplicate data frames the receivers recognised and ignored.
    pub duplicates: u64,
    /// Data frames of already delivered messages that slipped past duplicate detection.
    pub late_frames: u64,
}
