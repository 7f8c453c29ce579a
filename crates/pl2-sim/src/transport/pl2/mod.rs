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
//! - [`install`]: the ToR's scheduler settings derived from the network (timeslot,
//!   RSV–GRT exchange) and the one scheduler every transport over PL2 shares.
//!
//! Counters: [`Pl2Stats`], summary key `pl2` (the ToR's program, PL2 hosts, and the PL2
//! layer of TCP over PL2).
//!
//! Scope: a single rack, or several racks joined by a fabric (dumbbell, leaf–spine,
//! three-tier), each ToR scheduling its own hosts' ports and its uplinks as one port,
//! frames between racks crossing the fabric unscheduled into the share of each downlink
//! kept for them (§7; [`switch`], [`install`]). Fat trees and custom graphs are refused
//! at build time (which switch is whose ToR is not given there).

pub mod config;
pub mod driver;
pub mod host;
pub mod install;
pub mod switch;
pub mod wire;

pub use config::Pl2Config;
pub use host::Pl2Host;
pub use switch::Pl2Switch;

use crate::error::{invalid, BuildError};
use crate::framing::L4Headers;
use crate::transport::{HostSite, Installed, ModuleStats, NetSite, StatsSection, Transport, TransportConfig};
use pl2_protocol::receiver::ReceiverStats;
use pl2_protocol::sender::SenderStats;

/// The PL2 module: hosts that send messages in scheduled bursts, and the ToR's scheduler,
/// installed when any transport of the run uses PL2 (this one or TCP over PL2).
pub struct Pl2;

impl Transport for Pl2 {
    type Config = Pl2Config;
    type Host = Box<Pl2Host>;
    type Stats = Pl2Stats;

    fn l4(cfg: &Pl2Config) -> L4Headers {
        cfg.l4()
    }

    fn host(cfg: &Pl2Config, at: &HostSite<'_>) -> Result<Box<Pl2Host>, BuildError> {
        cfg.validate().map_err(|e| invalid(at.field, e))?;
        let slot = pl2_protocol::timeslot::timeslot_ps(at.net.mtu.0, at.host_rate.0, cfg.slot_basis());
        let t = Pl2Host::new(cfg, at.host, at.max_payload(cfg.l4()), slot).map_err(|e| invalid(at.field, e))?;
        Ok(Box::new(t))
    }

    fn install(cfgs: &[TransportConfig], net: &NetSite<'_>) -> Result<Vec<Installed>, BuildError> {
        install::install(cfgs, net)
    }

    fn report(host: &Box<Pl2Host>, stats: &mut ModuleStats) {
        let st = stats.pl2.get_or_insert_default();
        st.late_frames += host.stats().late_frames;
        st.add_host(host.sender_stats(), host.receiver_stats());
    }
}

/// PL2 counters of a whole run: the ToR's program's and every host's (PL2 hosts and the
/// PL2 layer of TCP over PL2), summed.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pl2Stats {
    /// Arrival of scheduled bursts' first packets at the switch against their slots.
    pub arrival_error: switch::ArrivalError,
    /// Most granted bursts the ToR awaited a first scheduled packet from at once
    /// (bounded: at most `ledger_bursts_per_host` per source host, 1024 by default; a
    /// burst's row is taken over by its host's burst that many later).
    pub arrival_pending_peak: u64,
    /// Scheduled frames leaving their rack (§7), counted at the source ToR as they
    /// release its uplink reservation.
    pub inter_rack_out_frames: u64,
    /// Scheduled frames entering a rack from another, counted at the destination ToR,
    /// which forwards them unscheduled into the downlink's external share (§7).
    pub inter_rack_in_frames: u64,
    /// The ToR schedulers' counters, summed (one ToR per rack): RSVs, grants, the
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

impl StatsSection for Pl2Stats {
    /// Frames lost to full buffers under PL2 come from one of the two holes of Algorithms
    /// 1 and 2 as the paper writes them (issue 24): counter drift, or unsolicited bursts
    /// the counters cannot see. Both are named, with the setting that avoids them.
    fn diagnose(&self, run: &crate::metrics::Counters) -> Vec<String> {
        use crate::metrics::DropReason;
        let lost = run.drops[DropReason::BufferFull as usize] + run.drops[DropReason::PortLimit as usize];
        if lost == 0 {
            return Vec::new();
        }
        let sw = &self.switch;
        let mut out = Vec::new();
        if sw.counter_drift_packets > 0 {
            out.push(format!(
                "PL2 lost {lost} frames to full buffers with the ToR's counters {} packets low for good (counter drift: an unsolicited burst passed the T rule, its GRT then chose a slot above t, and the resent copy was counted again). low_load = false avoids it (no unsolicited bursts), at one RSV–GRT exchange per burst.",
                sw.counter_drift_packets
            ));
        }
        if sw.unsolicited_passed > 0 {
            out.push(format!(
                "PL2 lost {lost} frames to full buffers while {} unsolicited packets passed the T rule: an unsolicited burst holds its reservation for well under a microsecond, so neither t at the sender nor T at the switch sees the queue such bursts build. low_load = false avoids it.",
                sw.unsolicited_passed
            ));
        }
        if self.inter_rack_in_frames > 0 {
            out.push(format!(
                "PL2 lost {lost} frames to full buffers in a run where {} scheduled frames left their rack and {} entered another (the difference was lost between the ToRs): a ToR schedules its uplinks for its own senders only, so unscheduled traffic on an uplink beyond the external share (external_share_ppm) overflows it, and at the destination ToR frames from other racks are coordinated with nothing (§7) and have only the share of each downlink.",
                self.inter_rack_out_frames, self.inter_rack_in_frames
            ));
        }
        if out.is_empty() {
            out.push(format!("PL2 lost {lost} frames to full buffers with no unsolicited burst and no counter drift: the scheduled traffic itself overflowed (check the buffer size against K × senders)."));
        }
        out
    }
}

impl Pl2Stats {
    /// Adds one host's sender and receiver counters.
    pub(crate) fn add_host(&mut self, s: &SenderStats, r: &ReceiverStats) {
        self.bursts += s.bursts;
        self.rsvs += s.rsvs;
        self.rsv_retries += s.rsv_retries;
        self.unsolicited_bursts += s.unsolicited_bursts;
        self.resent_bursts += s.resent_bursts;
        self.stale_grts += s.stale_grts;
        self.cancels_sent += s.cancels_sent;
        self.duplicates += r.duplicates;
    }
}
