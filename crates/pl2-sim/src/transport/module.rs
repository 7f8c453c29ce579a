//! What a transport module declares about itself ([`Transport`]): its scenario settings,
//! its state on a host, its counters, the headers of its data frames and, optionally, the
//! switch program it installs. The list in [`super`] turns these declarations into the
//! closed enums the simulation dispatches on statically ([`super::TransportConfig`],
//! [`super::HostTransport`], [`super::ModuleStats`]); nothing outside `transport/` and
//! the program list names a protocol.

use super::{ModuleStats, Protocol, TransportConfig};
use crate::config::{EcmpMode, NetworkConfig, SwitchConfig};
use crate::error::BuildError;
use crate::framing::L4Headers;
use crate::programs::SwitchProgram;
use crate::rng::SimRng;
use crate::units::{BitsPerSec, Duration};
use serde::Serialize;

/// A transport module. Implemented by a marker type in the module's folder (e.g.
/// `raw::Raw`) and listed once in [`super`].
pub trait Transport {
    /// Its scenario settings: the fields of `[transport]` beside `kind = "<module>"`.
    type Config;
    /// Its state on one host (boxed when large, so the enum of all hosts stays small).
    type Host: Protocol;
    /// Its counters summed over a run, written to the summary under the module's name
    /// (`()`: none, and no key).
    type Stats: StatsSection;
    /// Headers between Ethernet and the payload of its data frames.
    fn l4(cfg: &Self::Config) -> L4Headers;
    /// Its instance on the host `at` describes.
    fn host(cfg: &Self::Config, at: &HostSite<'_>) -> Result<Self::Host, BuildError>;
    /// Its switch-side half, if the run needs one: programs for some switches (one each),
    /// given every transport of the run (a module may serve several of them). Default:
    /// none.
    fn install(_cfgs: &[TransportConfig], _net: &NetSite<'_>) -> Result<Vec<Installed>, BuildError> {
        Ok(Vec::new())
    }
    /// The host layer it runs over on the host `at` describes (`crate::layer`), built
    /// beside each of its instances. Default: none.
    fn layer(_cfg: &Self::Config, _at: &HostSite<'_>) -> Result<Option<crate::layer::LayerConfig>, BuildError> {
        Ok(None)
    }
    /// Adds a host instance's counters to the run's. Default: nothing to report.
    fn report(_host: &Self::Host, _stats: &mut ModuleStats) {}
    /// How its frames spread over equal-cost paths, overriding the switches' `ecmp`
    /// setting for them (`None`, the default: the switches' setting).
    fn paths(_cfg: &Self::Config) -> Option<EcmpMode> {
        None
    }
    /// Whether it can pace a closed-loop thread: it holds a sending thread until a
    /// bound on what the thread has queued (its transmit ring, a send buffer, the
    /// message's last packet) releases it. A transport that takes every message whole
    /// and releases the thread at once returns false, and a persistent stream on it is
    /// refused (it would start messages without end at one instant). Default true.
    fn holds_thread(_cfg: &Self::Config) -> bool {
        true
    }
}

/// Counters one module reports in the run summary.
pub trait StatsSection: Clone + std::fmt::Debug + Default + PartialEq + Serialize {
    /// Whether the summary has a key for them.
    const IN_SUMMARY: bool = true;
    /// What went wrong in the run, in a sentence each, from these counters and the run's
    /// (e.g. which mechanism lost frames, and the setting that avoids it). Default none.
    fn diagnose(&self, _run: &crate::metrics::Counters) -> Vec<String> {
        Vec::new()
    }
}

impl StatsSection for () {
    const IN_SUMMARY: bool = false;
}

/// Where a transport instance is built: for error messages, the scenario field that
/// configures it.
pub struct HostSite<'a> {
    /// The host's index.
    pub host: u32,
    pub net: &'a NetworkConfig,
    /// Rate of the hosts' links as one figure for the whole network (host 0's uplink):
    /// what a rack-wide scheduler (PL2's timeslot) is built on.
    pub host_rate: BitsPerSec,
    /// Rate of this host's own link (its uplink): what its pacing is built on.
    pub link_rate: BitsPerSec,
    /// `transport` for the default transport, `transports[i]` for the others.
    pub field: &'a str,
    /// The run's master seed (draw through [`HostSite::rng`]).
    pub seed: u64,
    /// Path numbers a sender choosing its own paths may use ([`EcmpMode::Source`]): each
    /// in `0..paths` names a distinct path between hosts whose route climbs to the top
    /// tier (1 when no switch has a choice).
    pub paths: u32,
    /// The network's base round trip: a full data frame from host 0 to the host farthest
    /// from it and a minimum-size frame back, alone, every delay at its minimum
    /// ([`crate::sim::base_round_trip`]).
    pub base_rtt: Duration,
}

impl HostSite<'_> {
    /// The instance's own random stream named `name`: independent of every other
    /// component's, and of the same name on other hosts and transports.
    pub fn rng(&self, name: &str) -> SimRng {
        SimRng::stream(self.seed, &format!("{}/{name}/host{}", self.field, self.host))
    }

    /// Payload bytes of a full data frame with headers `l4` at the network's MTU.
    pub fn max_payload(&self, l4: L4Headers) -> u64 {
        self.net.framing.max_payload(l4, self.net.mtu.0)
    }
}

/// One direction of a link, as an installing module sees it.
#[derive(Copy, Clone, Debug)]
pub struct LinkSite {
    pub rate: BitsPerSec,
    pub delay: Duration,
}

/// The built network, as a module installing a switch program sees it.
pub struct NetSite<'a> {
    pub net: &'a NetworkConfig,
    /// Host 0's uplink (host → switch) and downlink (switch → host).
    pub host_uplink: LinkSite,
    pub host_downlink: LinkSite,
    /// Each switch's settings (overrides applied), by switch index.
    pub switches: &'a [SwitchConfig],
}

/// A switch program a module installs, and the switch (index) it runs on.
pub struct Installed {
    pub switch: u32,
    pub program: SwitchProgram,
}

/// The scenario field that configures the run's transport `t`: `transport` for the
/// default, `transports[i]` for the others.
pub fn field_of(t: usize) -> String {
    if t == 0 {
        "transport".to_string()
    } else {
        format!("transports[{}]", t - 1)
    }
}
