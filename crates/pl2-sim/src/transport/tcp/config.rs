//! `TcpConfig`: every knob of the TCP model, with datacenter defaults (each documented
//! where it departs from the RFC or Linux default).

use crate::framing::L4Headers;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// TCP parameters (one byte stream per sending thread and destination, pre-established).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Congestion control: `new_reno` (RFC 5681), `cubic` (RFC 9438, default), `dctcp`
    /// (RFC 8257; needs `switch.ecn`) or `none` (no window limit besides the receive
    /// window: TCP over PL2). Only DCTCP sends ECT segments (no RFC 3168 ECN for the
    /// others).
    pub cc: CcKind,
    /// SACK-based loss recovery (RFC 2018 / RFC 6675). `false`: NewReno recovery (RFC
    /// 6582). Default true.
    pub sack: bool,
    /// Initial window in segments (RFC 6928). Default 10.
    pub initial_window: u32,
    /// Delayed ACKs (RFC 1122 / 5681): acknowledge every second full segment, or after
    /// `delayed_ack_timeout`. Out-of-order, duplicate and hole-filling segments are
    /// acknowledged at once either way. Default true.
    pub delayed_ack: bool,
    /// Delayed-ACK timer. Default 40 µs (datacenter; Linux's minimum is 40 ms).
    pub delayed_ack_timeout: Duration,
    /// Minimum retransmission timeout (RFC 6298 says 1 s; Linux 200 ms). Default 1 ms.
    pub min_rto: Duration,
    /// RTO before the first RTT sample (RFC 6298: 1 s). Default 1 ms.
    pub initial_rto: Duration,
    /// Largest RTO after backoff. Default 60 s (RFC 6298 §2.5).
    pub max_rto: Duration,
    /// Receive window: the receiving application reads at once, so this is the window
    /// every ACK advertises. Default 16 MiB.
    pub receive_window: Bytes,
    /// Send buffer: bytes written and not yet acknowledged. The sending thread is
    /// released when its message's last byte is in the buffer. Default 16 MiB.
    pub send_buffer: Bytes,
    /// 802.1Q priority of data segments and ACKs. Default 0.
    pub priority: u8,
    /// Publish per-connection probes (cwnd, ssthresh, srtt, bytes in flight,
    /// retransmissions, DCTCP alpha) at every ACK. Default true.
    pub probes: bool,
}

/// Congestion control algorithm.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    NewReno,
    #[default]
    Cubic,
    Dctcp,
    None,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcKind::Cubic,
            sack: true,
            initial_window: 10,
            delayed_ack: true,
            delayed_ack_timeout: Duration::from_us(40),
            min_rto: Duration::from_ms(1),
            initial_rto: Duration::from_ms(1),
            max_rto: Duration::from_ms(60_000),
            receive_window: Bytes(16 << 20),
            send_buffer: Bytes(16 << 20),
            priority: 0,
            probes: true,
        }
    }
}

impl TcpConfig {
    /// Data segments carry no options (no timestamps): IPv4 20 + TCP 20 bytes.
    pub fn l4(&self) -> L4Headers {
        L4Headers::Tcp { options: 0 }
    }

    /// Checks ranges serde cannot; the message names the field and the fix.
    pub fn validate(&self, mss: u64) -> Result<(), String> {
        if self.priority > 7 {
            return Err(format!("priority = {}; 802.1Q priorities are 0..7", self.priority));
        }
        if mss == 0 {
            return Err("the MTU leaves no room for TCP payload (IPv4 + TCP headers are 40 B)".into());
        }
        if self.initial_window == 0 {
            return Err("initial_window = 0; use at least 1 segment (default 10)".into());
        }
        if self.min_rto.0 == 0 || self.initial_rto.0 == 0 || self.max_rto < self.min_rto {
            return Err("min_rto and initial_rto must be positive and max_rto ≥ min_rto".into());
        }
        if self.delayed_ack && self.delayed_ack_timeout.0 == 0 {
            return Err("delayed_ack_timeout must be positive, e.g. \"40us\"".into());
        }
        if self.receive_window.0 < mss || self.send_buffer.0 < mss {
            return Err(format!("receive_window and send_buffer must hold at least one segment ({mss} B)"));
        }
        Ok(())
    }
}
