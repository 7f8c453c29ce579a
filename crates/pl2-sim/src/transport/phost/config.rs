//! `PhostConfig`: every knob of pHost, with the reference simulator's values (YAPS,
//! `NetSys/simulator` @ 179b64e, the pHost template `py/run_experiments.py:54-99`) as
//! defaults, and Polo's evaluation setting as a named preset (`docs/model.md`, "pHost").
//!
//! Timers are multiples of one MTU wire time, as YAPS writes them (`capability_timeout`,
//! `capability_resend_timeout`, `capability_window_timeout` multiply
//! `get_full_pkt_tran_delay()` = 1500 B at the host rate, `run/params.h:79-82`).

use crate::config::EcmpMode;
use crate::framing::L4Headers;
use crate::units::{BitsPerSec, Duration};
use serde::{Deserialize, Serialize};

/// pHost (Gao et al., CoNEXT 2015) parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PhostConfig {
    /// Which defaults `free_tokens` and `scheduling` take when left out: `yaps` (the
    /// reference simulator, default) or `polo` (Polo's evaluation: 12 free packets per
    /// flow, tokens round robin).
    pub preset: PhostPreset,
    /// Headers between Ethernet and the payload. Default `none` (raw Ethernet);
    /// `{ bytes = { bytes = 38 } }` with PPP framing gives YAPS's 40 B header per packet.
    pub headers: L4Headers,
    /// Which packets of a flow go out before any token. Default: the preset's (`yaps`:
    /// `{ kind = "short_flows", max_packets = 8 }`, YAPS's `capability_initial` rule,
    /// `ext/capabilityflow.cpp:375-377`; `polo`: `{ kind = "first_packets", packets = 12 }`).
    pub free_tokens: Option<FreeTokens>,
    /// How the receiver picks the flow for its next token. Default: the preset's (`yaps`:
    /// `srpt`, `ext/capabilityhost.cpp:65-86`; `polo`: `round_robin`).
    pub scheduling: Option<TokenScheduling>,
    /// A token's life at the sender from its arrival, in MTU wire times. Default 1.5
    /// (`capability_timeout`, `ext/capabilityflow.cpp:170,299`).
    pub token_ttl_mtus: f64,
    /// Tokens a flow may have outstanding (sent, not yet answered by data) before the
    /// receiver skips it. Default 8 (`capability_window`, `ext/capabilityhost.cpp:313`).
    pub window_tokens: u32,
    /// A flow skipped for its window is retried this long after its last token, in MTU
    /// wire times. Default 25 (`capability_window_timeout`, `ext/capabilityhost.cpp:315`).
    pub window_timeout_mtus: f64,
    /// After a flow's last token, the receiver waits this long, in MTU wire times, then
    /// grants again every packet still missing. Default 9 (`capability_resend_timeout`,
    /// `ext/capabilityhost.cpp:332-333`).
    pub resend_timeout_mtus: f64,
    /// 802.1Q priority of data. Default 0 (YAPS: every data packet at pFabric priority 2,
    /// below control, `ext/capabilityflow.cpp:58`).
    pub data_priority: u8,
    /// 802.1Q priority of RTS, token and ACK packets. Default 7 (YAPS: priority 0, the
    /// highest, `coresim/packet.cpp:47-75`).
    pub control_priority: u8,
    /// How pHost's frames spread over equal-cost paths. Default `per_packet` (packet
    /// spraying, pHost §3; YAPS `load_balancing: 0`, `coresim/topology.cpp:82-115`).
    pub paths: EcmpMode,
    /// A sender that has heard neither a token nor the ACK of a flow for this long sends
    /// its RTS again (a lost RTS or ACK). Not in YAPS, where control is never the first to
    /// be dropped (pFabric queues drop data first). Default 1 ms.
    pub rts_timeout: Duration,
    /// Reproduce YAPS's sizing of data packets: the sender's k-th data packet carries the
    /// next bytes in order, so once every byte has been sent, a packet sent again is a
    /// bare header, yet the receiver counts the packet it names as received
    /// (`ext/capabilityflow.cpp:57-63,128-135,230-235`). Only for the cross-check with
    /// YAPS (`validation/yaps/`): with losses, the receiver delivers a message whose
    /// resent bytes never arrived. Default false: a packet carries the payload it names.
    pub yaps_header_only_resends: bool,
}

/// Named sets of defaults.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhostPreset {
    /// The reference simulator YAPS (`NetSys/simulator` @ 179b64e). Default.
    #[default]
    Yaps,
    /// Polo's evaluation (seed slides): "pHost schedules flows in a round robin way, free
    /// number of tokens is 12".
    Polo,
}

/// Which packets of a flow the sender may send before its first token.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FreeTokens {
    /// A flow of at most `max_packets` packets is sent whole without asking; a longer one
    /// sends nothing before its first token (YAPS `init_capa_size`,
    /// `ext/capabilityflow.cpp:375-377`, `capability_initial: 8`).
    ShortFlows {
        /// Largest flow, in packets, sent whole without tokens (0: none). Required.
        max_packets: u32,
    },
    /// Every flow sends its first `packets` packets without asking (Polo's preset: 12).
    FirstPackets {
        /// Packets every flow sends before its first token (all of a shorter flow; 0:
        /// none). Required.
        packets: u32,
    },
    /// Every flow sends one round trip's worth without asking, as the paper describes
    /// (pHost §3: free tokens hide the RTS round trip): ⌈`rtt` × host rate / one full
    /// frame⌉ packets.
    RoundTrip {
        /// The round trip the free packets cover, a duration (`"6us"`). Required.
        rtt: Duration,
    },
}

/// How the receiver orders its flows for tokens.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenScheduling {
    /// Fewest packets still missing first, ties to the earlier arrival (YAPS).
    Srpt,
    /// Each flow in turn, in arrival order (Polo's preset).
    RoundRobin,
}

impl Default for PhostConfig {
    fn default() -> Self {
        PhostConfig {
            preset: PhostPreset::Yaps,
            headers: L4Headers::None,
            free_tokens: None,
            scheduling: None,
            token_ttl_mtus: 1.5,
            window_tokens: 8,
            window_timeout_mtus: 25.0,
            resend_timeout_mtus: 9.0,
            data_priority: 0,
            control_priority: 7,
            paths: EcmpMode::PerPacket,
            rts_timeout: Duration::from_ms(1),
            yaps_header_only_resends: false,
        }
    }
}

/// A pHost setting out of range: the field and how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PhostConfigError {
    #[error("{field} = {value}; 802.1Q priorities are 0..7")]
    Priority { field: &'static str, value: u8 },
    #[error("control_priority = {0}; must be above data_priority so RTS, tokens and ACKs overtake data (YAPS: control highest)")]
    ControlNotHighest(u8),
    #[error("{field} = {value}; must be a positive number of MTU wire times (YAPS: {yaps})")]
    Timer { field: &'static str, value: f64, yaps: f64 },
    #[error("window_tokens = 0; the receiver could never send a token (YAPS uses 8)")]
    ZeroWindow,
    #[error("rts_timeout = 0; must be positive, e.g. \"1ms\"")]
    ZeroRtsTimeout,
    #[error("headers leave no payload under the MTU; use smaller headers or a larger network.mtu")]
    NoPayload,
}

/// Everything the protocol reads, with the preset applied and times in picoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub free: FreeTokens,
    pub scheduling: TokenScheduling,
    /// Payload of a full data frame.
    pub max_payload: u64,
    /// Wire time of a full data frame at the host rate: the token pacing interval.
    pub mtu_time: Duration,
    pub token_ttl: Duration,
    pub window_tokens: u32,
    pub window_timeout: Duration,
    pub resend_timeout: Duration,
    pub rts_timeout: Duration,
    pub yaps_header_only_resends: bool,
    pub l4: L4Headers,
    pub data_priority: u8,
    pub control_priority: u8,
}

impl Params {
    /// `n` MTU wire times.
    pub fn mtu_time_times(&self, n: u64) -> Duration {
        Duration(self.mtu_time.0 * n)
    }

    /// Packets of a flow of `n_pkts` packets sent before any token.
    pub fn free_packets(&self, n_pkts: u32) -> u32 {
        match self.free {
            FreeTokens::ShortFlows { max_packets } => {
                if n_pkts <= max_packets {
                    n_pkts
                } else {
                    0
                }
            }
            FreeTokens::FirstPackets { packets } => packets.min(n_pkts),
            FreeTokens::RoundTrip { .. } => unreachable!("resolved to first_packets"),
        }
    }
}

impl PhostConfig {
    pub fn l4(&self) -> L4Headers {
        self.headers
    }

    /// Checks what serde cannot.
    pub fn validate(&self) -> Result<(), PhostConfigError> {
        for (field, value) in [("data_priority", self.data_priority), ("control_priority", self.control_priority)] {
            if value > 7 {
                return Err(PhostConfigError::Priority { field, value });
            }
        }
        if self.control_priority <= self.data_priority {
            return Err(PhostConfigError::ControlNotHighest(self.control_priority));
        }
        for (field, value, yaps) in [
            ("token_ttl_mtus", self.token_ttl_mtus, 1.5),
            ("window_timeout_mtus", self.window_timeout_mtus, 25.0),
            ("resend_timeout_mtus", self.resend_timeout_mtus, 9.0),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(PhostConfigError::Timer { field, value, yaps });
            }
        }
        if self.window_tokens == 0 {
            return Err(PhostConfigError::ZeroWindow);
        }
        if self.rts_timeout.0 == 0 {
            return Err(PhostConfigError::ZeroRtsTimeout);
        }
        Ok(())
    }

    /// The preset applied, given the full frame's payload and wire bytes and the host rate.
    pub fn resolve(&self, max_payload: u64, frame_wire_bytes: u64, host_rate: BitsPerSec) -> Result<Params, PhostConfigError> {
        self.validate()?;
        if max_payload == 0 {
            return Err(PhostConfigError::NoPayload);
        }
        let mtu_time = host_rate.tx_time(frame_wire_bytes);
        let times = |m: f64| Duration((mtu_time.0 as f64 * m).round() as u64);
        let free = match (self.free_tokens, self.preset) {
            (Some(FreeTokens::RoundTrip { rtt }), _) => FreeTokens::FirstPackets { packets: host_rate.bytes_in(rtt).div_ceil(frame_wire_bytes) as u32 },
            (Some(f), _) => f,
            (None, PhostPreset::Yaps) => FreeTokens::ShortFlows { max_packets: 8 },
            (None, PhostPreset::Polo) => FreeTokens::FirstPackets { packets: 12 },
        };
        let scheduling = self.scheduling.unwrap_or(match self.preset {
            PhostPreset::Yaps => TokenScheduling::Srpt,
            PhostPreset::Polo => TokenScheduling::RoundRobin,
        });
        Ok(Params {
            free,
            scheduling,
            max_payload,
            mtu_time,
            token_ttl: times(self.token_ttl_mtus),
            window_tokens: self.window_tokens,
            window_timeout: times(self.window_timeout_mtus),
            resend_timeout: times(self.resend_timeout_mtus),
            rts_timeout: self.rts_timeout,
            yaps_header_only_resends: self.yaps_header_only_resends,
            l4: self.headers,
            data_priority: self.data_priority,
            control_priority: self.control_priority,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_round_trip_resolve() {
        let rate = BitsPerSec::gbps(10);
        let y = PhostConfig::default().resolve(1460, 1500, rate).unwrap();
        assert_eq!((y.free, y.scheduling), (FreeTokens::ShortFlows { max_packets: 8 }, TokenScheduling::Srpt));
        assert_eq!((y.mtu_time.0, y.token_ttl.0, y.resend_timeout.0, y.window_timeout.0), (1_200_000, 1_800_000, 10_800_000, 30_000_000));
        assert_eq!((y.free_packets(8), y.free_packets(9)), (8, 0));
        let p = PhostConfig { preset: PhostPreset::Polo, ..PhostConfig::default() }.resolve(1460, 1500, rate).unwrap();
        assert_eq!((p.free, p.scheduling), (FreeTokens::FirstPackets { packets: 12 }, TokenScheduling::RoundRobin));
        assert_eq!((p.free_packets(5), p.free_packets(40)), (5, 12));
        // 6 µs at 10 Gbps is 7500 B: five frames of 1500 B.
        let r = PhostConfig { free_tokens: Some(FreeTokens::RoundTrip { rtt: Duration::from_us(6) }), ..PhostConfig::default() };
        assert_eq!(r.resolve(1460, 1500, rate).unwrap().free, FreeTokens::FirstPackets { packets: 5 });
    }

    #[test]
    fn errors_name_the_field() {
        let e = PhostConfig { token_ttl_mtus: 0.0, ..PhostConfig::default() }.validate().unwrap_err();
        assert!(e.to_string().starts_with("token_ttl_mtus = 0"), "{e}");
        let e = PhostConfig { control_priority: 0, ..PhostConfig::default() }.validate().unwrap_err();
        assert!(e.to_string().starts_with("control_priority = 0"), "{e}");
    }
}
