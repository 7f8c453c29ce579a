//! `RdsConfig`: every knob of the receiver-driven baseline, with the PL2 paper's
//! prototype values (§6.1, "Transport protocols") as defaults.

use crate::framing::L4Headers;
use crate::transport::raw::RawHeaders;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// RDS (the PL2 paper's receiver-driven baseline, modelled after Homa) parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RdsConfig {
    /// Headers between Ethernet and the data payload: `none` (raw Ethernet, default) or
    /// `udp`. Control frames (GRANT, NACK, DONE) are minimum-size frames either way.
    pub headers: RawHeaders,
    /// 802.1Q priority of data frames. Default 0. (Control frames always use 7.)
    pub data_priority: u8,
    /// RTTbytes: the first this many bytes of a message (rounded up to whole packets) go
    /// out unscheduled, at line rate; it is also the cap on granted-but-not-received
    /// bytes per sender. Default 61 KiB (62,464 B: the paper's bandwidth-delay product at
    /// 100 Gbps).
    pub rtt_bytes: Bytes,
    /// Packets per grant at most ("we schedule up to 4 packets"). Default 4.
    pub grant_packets: u32,
    /// Senders the receiver grants to at once. Default 1.
    pub overcommit: u32,
    /// Which waiting message the receiver admits when a grant slot frees:
    /// `round_robin` (default; over senders) or `srpt` (fewest bytes left to receive).
    pub policy: RdsPolicy,
    /// A message the receiver is responsible for (it granted or NACKed) that makes no
    /// progress for this long has its missing packets NACKed. Default 1 ms.
    pub receiver_timeout: Duration,
    /// A sender that heard nothing from the receiver this long after handing over its
    /// last unscheduled packet resends all unscheduled packets. Default 1 ms.
    pub sender_timeout: Duration,
}

/// Grant scheduling policy at the receiver.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RdsPolicy {
    /// Next sender in cyclic host order after the last one admitted (its oldest message).
    #[default]
    RoundRobin,
    /// The message with the fewest bytes left to receive (ties: the oldest).
    Srpt,
}

impl Default for RdsConfig {
    fn default() -> Self {
        RdsConfig {
            headers: RawHeaders::None,
            data_priority: 0,
            rtt_bytes: Bytes(61 * 1024),
            grant_packets: 4,
            overcommit: 1,
            policy: RdsPolicy::RoundRobin,
            receiver_timeout: Duration::from_ms(1),
            sender_timeout: Duration::from_ms(1),
        }
    }
}

impl RdsConfig {
    pub fn l4(&self) -> L4Headers {
        match self.headers {
            RawHeaders::None => L4Headers::None,
            RawHeaders::Udp => L4Headers::Udp,
        }
    }

    /// Checks ranges serde cannot; the message names the field and the fix.
    pub fn validate(&self, max_payload: u64) -> Result<(), String> {
        if self.data_priority > 7 {
            return Err(format!("data_priority = {}; 802.1Q priorities are 0..7", self.data_priority));
        }
        if self.rtt_bytes.0 < max_payload {
            return Err(format!("rtt_bytes = {}; must be at least one full payload ({max_payload} B)", self.rtt_bytes.0));
        }
        if self.grant_packets == 0 || u64::from(self.grant_packets) * max_payload > self.rtt_bytes.0 {
            return Err(format!("grant_packets = {}; must be ≥ 1 and one grant must fit in rtt_bytes", self.grant_packets));
        }
        if self.overcommit == 0 {
            return Err("overcommit = 0; the receiver must grant to at least one sender".into());
        }
        if self.receiver_timeout.0 == 0 || self.sender_timeout.0 == 0 {
            return Err("receiver_timeout and sender_timeout must be positive, e.g. \"1ms\"".into());
        }
        Ok(())
    }

    /// Unscheduled packets of a message of `n_pkts` packets: those whose first byte lies
    /// within the first `rtt_bytes`.
    pub fn unscheduled_packets(&self, n_pkts: u32, max_payload: u64) -> u32 {
        (self.rtt_bytes.0.div_ceil(max_payload) as u32).min(n_pkts)
    }
}
