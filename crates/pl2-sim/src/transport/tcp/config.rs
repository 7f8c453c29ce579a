//! `TcpConfig`: every knob of the TCP model, with datacenter defaults (each documented
//! where it departs from the RFC or Linux default).

use crate::framing::L4Headers;
use crate::transport::pl2::Pl2Config;
use crate::transport::raw::RawHeaders;
use crate::units::{Bytes, Duration};
use serde::{Deserialize, Serialize};

/// TCP parameters (one byte stream per sending thread and destination, pre-established
/// unless `handshake` is on).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Congestion control: `new_reno` (RFC 5681), `cubic` (RFC 9438), `dctcp` (RFC 8257;
    /// needs `switch.ecn` or `network.voq.mark_threshold_packets`), `retcp` (NSDI 2020,
    /// see `retcp`), `bbr` (BBR v1 as in Linux 4.15, with pacing; see `bbr`) or `none`
    /// (no window limit besides the receive window). Only
    /// DCTCP sends ECT segments (no RFC 3168 ECN for the others). Default: `cubic`, or
    /// `none` when `scheduler = "pl2"` (the paper turns TCP's congestion control off over
    /// PL2, §5). Another algorithm with PL2 is allowed: its window then caps what TCP
    /// releases and PL2 still times every segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcKind>,
    /// Who decides when data segments leave: `none` (default: TCP hands them to the NIC as
    /// its window allows) or `pl2` (TCP over PL2, the paper's "TCP VMA PL2": segments are
    /// grouped per connection into bursts of at most K, each sent at the slot its RSV–GRT
    /// exchange with the ToR gives; pure ACKs are not scheduled). `pl2` needs a single
    /// rack (`network.topology kind = "single_rack"`), whose ToR then runs the PL2
    /// scheduler.
    pub scheduler: TcpScheduler,
    /// The PL2 layer under TCP (`scheduler = "pl2"` only): a `[transport.pl2]` table with
    /// the keys of `kind = "pl2"` (`k`, `t`, `pipeline`, `exchanges`, `low_load`, ...)
    /// except `headers`, `data_priority` and `priorities` (segments carry TCP/IP headers
    /// and `priority`). Default: PL2's defaults (K = 4, t = 15, blocking, per thread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pl2: Option<Pl2Config>,
    /// SACK-based loss recovery (RFC 2018 / RFC 6675). `false`: NewReno recovery (RFC
    /// 6582). Default true.
    pub sack: bool,
    /// RACK-TLP loss detection (RFC 8985; needs `sack`): RACK marks a segment lost once a
    /// segment sent after it is delivered and one RACK.rtt plus a reordering window has
    /// passed since it left (§6), in addition to RFC 6675's duplicate-ACK rules, as Linux
    /// 4.4–4.17 ran them together (4.18 on uses RACK alone); a tail loss probe resends the
    /// last segment, or sends the next one, 2·SRTT after the last transmission or ACK
    /// (plus `delayed_ack_timeout` with one segment out, when ACKs are delayed) instead of
    /// waiting for the RTO (§7). Not with `scheduler = "pl2"`. Default false, as RFC 6675
    /// alone (ns-3 3.44's default; Linux has had it on by default since 4.4: the reTCP
    /// experiments set it, see `docs/model.md`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub rack_tlp: bool,
    /// Initial window in segments (RFC 6928). Default 10.
    pub initial_window: u32,
    /// How NewReno and DCTCP grow the window (slow start and congestion avoidance; CUBIC
    /// always counts bytes). `true` (default): byte counting, as Linux and ns-3's
    /// `TcpLinuxReno`, `TcpDctcp` and `TcpCubic` (slow start): slow start adds the bytes each ACK newly delivers (RFC 3465),
    /// congestion avoidance one SMSS per cwnd of bytes delivered (RFC 5681 §3.1, the
    /// RECOMMENDED way). `false`: ACK counting, as ns-3's `TcpNewReno`: slow start adds
    /// min(delivered, SMSS) per ACK (RFC 5681 eq. 2), congestion avoidance SMSS·SMSS/cwnd
    /// per ACK (eq. 3). With delayed ACKs (one ACK per two segments) ACK counting grows
    /// 1.5× per RTT in slow start and ½ SMSS per RTT in congestion avoidance.
    pub byte_counting: bool,
    /// Delayed ACKs (RFC 1122 / 5681): acknowledge every second full segment, or after
    /// `delayed_ack_timeout`. Out-of-order, duplicate and hole-filling segments are
    /// acknowledged at once either way. Default true.
    pub delayed_ack: bool,
    /// Delayed-ACK timer. Default 40 µs (datacenter; Linux's minimum is 40 ms).
    pub delayed_ack_timeout: Duration,
    /// With `delayed_ack`: the first `quick_acks` in-order data segments of each
    /// connection are acknowledged at once, one ACK each, before delayed ACKs start.
    /// RFC 5681 §4.2 only bounds the delay ("at least every second full-sized segment");
    /// stacks ACK the start of a connection sooner so that slow start is not held back by
    /// the delayed-ACK pairing: ns-3 (3.44, `TcpSocketBase::ProcessSynRcvd`) ACKs the
    /// first data segment after the handshake at once (1), Linux enters quick-ACK mode on
    /// a connection's first data (`tcp_incr_quickack`, up to `TCP_MAX_QUICKACKS` = 16).
    /// Default 0: every second segment from the first on.
    // Left out of the serialised (canonical) form while 0, so earlier scenarios keep
    // their form and hash; the schema (and so the reference) still shows the default.
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(!skip_serializing_if)]
    pub quick_acks: u32,
    /// CUBIC's Reno-friendly α (RFC 9438 §4.3): `rfc9438` (default): W_est grows by
    /// α = 3(1 − β)/(1 + β) segments per RTT until it reaches `cwnd_prior`, then by 1.
    /// `linux`: by 3(1 − β)/(1 + β) at every window, as Linux (`tcp_cubic.c`, its
    /// `beta_scale`) and ns-3's `TcpCubic` do.
    #[serde(skip_serializing_if = "CubicAlpha::is_rfc9438")]
    #[schemars(!skip_serializing_if)]
    pub cubic_alpha: CubicAlpha,
    /// Run CUBIC (`cc = "cubic"`, or reTCP's CUBIC base) as Linux 4.15's `tcp_cubic.c`
    /// on the kernel's jiffy clock instead of RFC 9438 (`cubic_alpha` then does not
    /// apply: Linux's α is built in). Off by default; its fields: `CubicLinux`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(!skip_serializing_if)]
    pub cubic_linux: Option<CubicLinux>,
    /// Count a retransmitted segment the receiver then SACKs as still in flight, until
    /// the cumulative ACK passes it or a timeout clears the retransmission marks, as
    /// ns-3 3.44 does (`TcpTxBuffer::BytesInFlight`: sent − SACKed − lost +
    /// retransmitted, with a segment's retransmitted flag cleared only by
    /// `SetSentListLost`). Default false: RFC 6675's pipe (§4 `SetPipe`) and Linux count
    /// no SACKed octet. For comparisons with ns-3 (`validation/ns3/`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub sacked_retransmissions_in_flight: bool,
    /// What the receiver's ACK sent when a data segment's CE bit differs from the previous
    /// one's, with an ACK delayed (RFC 8257 §3.2), acknowledges: `rfc8257` (default): every
    /// segment received so far, with the old ECE state, as Linux
    /// (`dctcp_ece_ack_update`); `ns3`: only up to the segment before the delayed one, as
    /// ns-3 3.44's `TcpDctcp::CeState0to1`/`CeState1to0` (its `m_priorRcvNxt` is taken
    /// before the delayed segment is received), so that ACK is a duplicate ACK. For
    /// comparisons with ns-3.
    #[serde(skip_serializing_if = "CeChangeAck::is_rfc8257")]
    #[schemars(!skip_serializing_if)]
    pub ce_change_ack: CeChangeAck,
    /// DCTCP's window after a loss (fast recovery or timeout): `half` (default; RFC 8257
    /// §3.5, Linux since 5.1, `dctcp_react_to_loss`) or `alpha`, cwnd · (1 − α/2) as for
    /// an ECN mark (Linux 4.x to 5.0, whose `dctcp_ssthresh` served both; etalon's hosts
    /// ran 4.15).
    #[serde(skip_serializing_if = "DctcpLoss::is_half")]
    #[schemars(!skip_serializing_if)]
    pub dctcp_loss: DctcpLoss,
    /// Run DCTCP (`cc = "dctcp"`) as Linux 4.15's `tcp_dctcp.c` with the kernel's CWR
    /// state (`cc/dctcp_linux.rs`): α in 1/1024 units, windows in segments, and on the
    /// first ECE a reduction that carries cwnd to cwnd · (1 − α/2) by Proportional Rate
    /// Reduction (RFC 6937) over the next window of data, with no growth until it ends
    /// (an ACK above the snd_nxt it began at). Default false: the window is cut at once
    /// and keeps growing as Reno's (`cc/dctcp.rs`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub dctcp_linux: bool,
    /// Run Reno (`cc = "new_reno"`, or reTCP's base, `retcp.base = "reno"`) as Linux
    /// 4.15's `tcp_cong.c` (`cc/reno_linux.rs`): windows in whole segments
    /// (`tcp_slow_start`, `tcp_cong_avoid_ai`), ssthresh = max(cwnd / 2, 2 segments) after
    /// a loss (`tcp_reno_ssthresh`: half of cwnd, where RFC 5681 halves the flight), and
    /// reTCP's jumps on whole segments. Default false: RFC 5681 in bytes (`cc/newreno.rs`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub reno_linux: bool,
    /// Proportional Rate Reduction (RFC 6937) in fast recovery, as Linux 4.15's
    /// `tcp_cwnd_reduction` runs it (`tcp/prr.rs`): the window falls to ssthresh over the
    /// recovery's ACKs, ⌈ssthresh · delivered / prior cwnd⌉ segments sent by then while
    /// more than ssthresh is in flight, then as many as each ACK delivers (one more if it
    /// delivered a retransmission), and is ssthresh when recovery ends. Not for BBR (it
    /// sets its own window). Default false: cwnd = ssthresh when recovery begins (RFC 6675).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub prr: bool,
    /// Receive offload (Linux GRO) in front of the receiver: in-order data segments of a
    /// connection that arrive within `gro.window` of the first of them, up to
    /// `gro.max_bytes` of payload, reach TCP as one unit, and the ACK rules apply per
    /// unit (so a unit of two or more full segments is acknowledged at once, by one
    /// stretched ACK). Off by default: each segment reaches TCP on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(!skip_serializing_if)]
    pub gro: Option<GroConfig>,
    /// Minimum retransmission timeout (RFC 6298 says 1 s; Linux 200 ms). Default 1 ms.
    pub min_rto: Duration,
    /// Where `min_rto` applies: `false` (default): RTO = max(SRTT + 4·RTTVAR, min_rto)
    /// (RFC 6298 §2.4); `true`: RTO = SRTT + max(4·RTTVAR, min_rto), as Linux (its
    /// `tcp_rtt_estimator` floors the variance term `mdev_max` at `tcp_rto_min`, and
    /// `__tcp_set_rto` adds SRTT), so a Linux RTO is the minimum plus the smoothed RTT.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub linux_rto: bool,
    /// Floor of RACK-TLP's probe timeout (`rack_tlp`): PTO = max(2·SRTT, min_pto) (plus the
    /// delayed-ACK allowance with one segment out). Default 0 s (RFC 8985 §7.2); Linux 4.x
    /// floors it at 10 ms (`tcp_schedule_loss_probe`: `max_t(u32, timeout,
    /// msecs_to_jiffies(10))`).
    #[serde(skip_serializing_if = "is_zero_duration")]
    #[schemars(!skip_serializing_if)]
    pub min_pto: Duration,
    /// RTO before the first RTT sample (RFC 6298: 1 s). Default 1 ms.
    pub initial_rto: Duration,
    /// Largest RTO after backoff. Default 60 s (RFC 6298 §2.5).
    pub max_rto: Duration,
    /// Open every connection with a three-way handshake (RFC 9293 §3.5): the first
    /// message on a (sending thread, destination) pair sends a SYN and its data waits
    /// for the SYN-ACK, so that message's latency includes one extra round trip (the
    /// ideal completion time leaves the handshake out: it shows in the slowdown).
    /// Connections then stay open for the rest of the run (closing is not modelled).
    /// Default false: connections are pre-established and the first segment leaves at
    /// once, as in a long-lived connection pool.
    // Left out of the serialised (canonical) form while false, like `syn_rto` at its
    // default, so scenarios written before these keys existed keep their form and hash;
    // the schema (and so the reference) still shows the default.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(!skip_serializing_if)]
    pub handshake: bool,
    /// How the data's sender acknowledges the SYN-ACK (`handshake` only): `separate`
    /// (default): a pure ACK, then the data, as Linux does when the application writes
    /// after `connect()` returns (`tcp_rcv_synsent_state_process` sends the ACK at once
    /// unless a write is already pending) and as ns-3 does; `with_data`: the ACK rides on
    /// the first data segment (RFC 9293 §3.5 allows either).
    #[serde(skip_serializing_if = "HandshakeAck::is_separate")]
    #[schemars(!skip_serializing_if)]
    pub handshake_ack: HandshakeAck,
    /// Retransmission timeout of a SYN (`handshake` only), doubled at each SYN
    /// retransmission up to `max_rto`, with no limit on the number of retries (as for data
    /// segments). RFC 6298 §2.1 and Linux start at 1 s; the default follows `initial_rto`'s
    /// datacenter scale instead: 1 ms, since a 1 s SYN timeout would dwarf every other time
    /// in a datacenter run.
    #[serde(skip_serializing_if = "is_default_syn_rto")]
    #[schemars(!skip_serializing_if)]
    pub syn_rto: Duration,
    /// Receive window: the receiving application reads at once, so this is the window
    /// every ACK advertises. Default 16 MiB.
    pub receive_window: Bytes,
    /// Send buffer: bytes written and not yet acknowledged. The sending thread is
    /// released when its message's last byte is in the buffer. Default 16 MiB.
    pub send_buffer: Bytes,
    /// 802.1Q priority of data segments and ACKs. Default 0.
    pub priority: u8,
    /// reTCP's base and β (`cc = "retcp"` only). Default Reno, β = 2.
    #[serde(skip_serializing_if = "is_default_retcp")]
    #[schemars(!skip_serializing_if)]
    pub retcp: RetcpConfig,
    /// BBR's clock-bound constants (`cc = "bbr"` only). Default Linux's.
    #[serde(skip_serializing_if = "is_default_bbr")]
    #[schemars(!skip_serializing_if)]
    pub bbr: BbrConfig,
    /// Publish per-connection probes (cwnd, ssthresh, srtt, bytes in flight,
    /// retransmissions, DCTCP alpha) at every ACK. Default true.
    pub probes: bool,
}

/// Receive offload (GRO, Linux `net/core/dev.c` `napi_gro_receive`, `net/ipv4/tcp_offload.c`
/// `tcp_gro_receive`): the NIC's interrupt hands the stack the frames that arrived since
/// the last poll, and GRO merges consecutive in-order segments of one flow into one skb of
/// at most 64 KB, flushed at the end of the poll. A unit here opens with an in-order data
/// segment and closes `window` later (the poll's end: the NIC's interrupt moderation time),
/// when the next segment would not fit in `max_bytes`, or early when a segment of the
/// connection arrives out of order, as a duplicate or with its CE bit changed (GRO flushes
/// a flow whose next segment is not contiguous or whose IP header differs). The bytes are
/// delivered to the application as they arrive; only the acknowledgement waits for the
/// unit's end, where the unit's segments count as received at once (Linux's
/// `__tcp_ack_snd_check`: more than one full segment unacknowledged, ACK now).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroConfig {
    /// How long a unit collects segments after its first (the receiving NIC's interrupt
    /// moderation time). 0: every segment is its own unit (GRO on, nothing to merge).
    pub window: Duration,
    /// Largest payload of one unit. Default 65536 B (GRO's 64 KB skb limit).
    #[serde(default = "gro_max_default")]
    pub max_bytes: Bytes,
}

fn gro_max_default() -> Bytes {
    Bytes(65_536)
}

/// The kernel clock of Linux's CUBIC (`TcpConfig::cubic_linux`). Linux recomputes
/// CUBIC's growth step at most once per HZ/32 jiffies while the window is unchanged
/// (`bictcp_update`), so right after a reduction the window holds for about 28 ms of the
/// kernel's time at HZ = 250 before it catches up with its Reno-friendly estimate
/// (`docs/model.md`, "CUBIC as Linux runs it").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CubicLinux {
    /// The kernel's timer frequency, CONFIG_HZ. Default 250 (Ubuntu's generic kernels).
    #[serde(default = "cubic_linux_hz")]
    pub hz: u32,
    /// How many times faster the kernel's clock runs than simulated time: 1 (default)
    /// for hosts on the network's own clock; an emulator's time dilation factor for
    /// hosts whose kernels keep real time while the emulated network runs slower (the
    /// reTCP emulator etalon: 20).
    #[serde(default = "cubic_linux_dilation")]
    pub dilation: u32,
}

fn cubic_linux_hz() -> u32 {
    250
}

fn cubic_linux_dilation() -> u32 {
    1
}

impl Default for CubicLinux {
    fn default() -> Self {
        CubicLinux { hz: cubic_linux_hz(), dilation: cubic_linux_dilation() }
    }
}

/// What schedules TCP's data segments.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TcpScheduler {
    /// Segments go to the NIC as soon as TCP releases them.
    #[default]
    None,
    /// PL2 reserves a slot for every burst of ≤ K segments (TCP over PL2).
    Pl2,
}

/// Congestion control algorithm.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    /// NewReno (RFC 5681).
    NewReno,
    /// CUBIC (RFC 9438). Default.
    #[default]
    Cubic,
    /// DCTCP (RFC 8257).
    Dctcp,
    /// reTCP (NSDI 2020): `retcp.base` plus one jump by `retcp.beta` per change of the
    /// circuit-state signal carried in ECN-Echo (`network.circuit.signal_lead`).
    Retcp,
    /// BBR v1 (Cardwell et al., ACM Queue 2016; Linux 4.15 `net/ipv4/tcp_bbr.c`): a
    /// model of the path's bandwidth and minimum RTT sets a pacing rate and the window.
    Bbr,
    /// No congestion window (the receive window only).
    None,
}

/// reTCP's settings (`cc = "retcp"`).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RetcpConfig {
    /// The algorithm that grows the window between jumps: `reno` (default, as the
    /// authors' kernel module `retcp.c`) or `cubic`.
    pub base: RetcpBase,
    /// β: cwnd × β on a 0 → 1 transition of the signal, cwnd / β on 1 → 0. Default 2
    /// (slide 31).
    pub beta: f64,
}

impl Default for RetcpConfig {
    fn default() -> Self {
        RetcpConfig { base: RetcpBase::Reno, beta: 2.0 }
    }
}

/// BBR's constants that are times (`cc = "bbr"`), Linux's by default. They are kept
/// separate so that an emulation that dilates time (etalon runs real-time kernels under
/// a time dilation factor) can scale them as its kernel's clock does.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BbrConfig {
    /// Window of the minimum-RTT filter (`bbr_min_rtt_win_sec`): when it expires
    /// without a lower sample, BBR enters PROBE_RTT. Default 10 s.
    pub min_rtt_window: Duration,
    /// Time PROBE_RTT holds the window at 4 segments (`bbr_probe_rtt_mode_ms`), and at
    /// least one round trip. Default 200 ms.
    pub probe_rtt_duration: Duration,
    /// The data of this much time at the pacing rate is one sending unit (Linux 4.15's
    /// `tcp_tso_autosize`: `sk_pacing_rate >> sk_pacing_shift`, shift 10), of at least
    /// 2 and at most 127 segments and 64 KiB; BBR also budgets 3 units into its window.
    /// Default 2^-10 s (976.5625 µs).
    pub unit_time: Duration,
    /// The RTT assumed for the initial pacing rate before any sample (Linux: 1 ms).
    pub initial_rtt: Duration,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            min_rtt_window: Duration::from_ms(10_000),
            probe_rtt_duration: Duration::from_ms(200),
            unit_time: Duration(976_562_500),
            initial_rtt: Duration::from_ms(1),
        }
    }
}

/// reTCP's base algorithm.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetcpBase {
    /// NewReno's window (RFC 5681). Default.
    #[default]
    Reno,
    /// CUBIC (RFC 9438).
    Cubic,
}

/// How the SYN-ACK is acknowledged (see `TcpConfig::handshake_ack`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandshakeAck {
    /// A pure ACK before the data (Linux, ns-3).
    #[default]
    Separate,
    /// On the first data segment.
    WithData,
}

impl HandshakeAck {
    fn is_separate(&self) -> bool {
        *self == HandshakeAck::Separate
    }
}

/// CUBIC's Reno-friendly α (see `TcpConfig::cubic_alpha`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CubicAlpha {
    /// 3(1 − β)/(1 + β), then 1 from `cwnd_prior` on (RFC 9438 §4.3).
    #[default]
    Rfc9438,
    /// 3(1 − β)/(1 + β) at every window (Linux, ns-3).
    Linux,
}

impl CubicAlpha {
    fn is_rfc9438(&self) -> bool {
        *self == CubicAlpha::Rfc9438
    }
}

/// The ACK point of the ACK a CE change flushes (see `TcpConfig::ce_change_ack`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CeChangeAck {
    /// Everything received (RFC 8257 §3.2, Linux).
    #[default]
    Rfc8257,
    /// Up to the segment before the delayed one (ns-3 3.44).
    Ns3,
}

/// DCTCP's response to a loss (see `TcpConfig::dctcp_loss`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DctcpLoss {
    /// Halve the window as NewReno does (RFC 8257 §3.5, Linux ≥ 5.1).
    #[default]
    Half,
    /// cwnd · (1 − α/2), the ECN response (Linux 4.x–5.0 `dctcp_ssthresh`).
    Alpha,
}

impl DctcpLoss {
    fn is_half(&self) -> bool {
        *self == DctcpLoss::Half
    }
}

impl CeChangeAck {
    fn is_rfc8257(&self) -> bool {
        *self == CeChangeAck::Rfc8257
    }
}

/// `syn_rto`'s default: 1 ms.
const DEFAULT_SYN_RTO: Duration = Duration::from_ms(1);

fn is_default_syn_rto(d: &Duration) -> bool {
    *d == DEFAULT_SYN_RTO
}

fn is_default_retcp(r: &RetcpConfig) -> bool {
    *r == RetcpConfig::default()
}

fn is_default_bbr(b: &BbrConfig) -> bool {
    *b == BbrConfig::default()
}

fn is_zero_duration(d: &Duration) -> bool {
    d.0 == 0
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: None,
            scheduler: TcpScheduler::None,
            pl2: None,
            sack: true,
            rack_tlp: false,
            initial_window: 10,
            byte_counting: true,
            delayed_ack: true,
            delayed_ack_timeout: Duration::from_us(40),
            quick_acks: 0,
            cubic_alpha: CubicAlpha::Rfc9438,
            cubic_linux: None,
            sacked_retransmissions_in_flight: false,
            ce_change_ack: CeChangeAck::Rfc8257,
            dctcp_loss: DctcpLoss::Half,
            dctcp_linux: false,
            reno_linux: false,
            prr: false,
            gro: None,
            min_rto: Duration::from_ms(1),
            linux_rto: false,
            min_pto: Duration::ZERO,
            initial_rto: Duration::from_ms(1),
            max_rto: Duration::from_ms(60_000),
            handshake: false,
            handshake_ack: HandshakeAck::Separate,
            syn_rto: DEFAULT_SYN_RTO,
            receive_window: Bytes(16 << 20),
            send_buffer: Bytes(16 << 20),
            priority: 0,
            retcp: RetcpConfig::default(),
            bbr: BbrConfig::default(),
            probes: true,
        }
    }
}

impl TcpConfig {
    /// Data segments carry no options (no timestamps): IPv4 20 + TCP 20 bytes.
    pub fn l4(&self) -> L4Headers {
        L4Headers::Tcp { options: 0 }
    }

    /// The congestion control in force (see `cc`).
    pub fn cc_kind(&self) -> CcKind {
        match (self.cc, self.scheduler) {
            (Some(c), _) => c,
            (None, TcpScheduler::None) => CcKind::Cubic,
            (None, TcpScheduler::Pl2) => CcKind::None,
        }
    }

    /// The PL2 layer's configuration (`scheduler = "pl2"`), defaults filled in.
    pub fn pl2_config(&self) -> Option<Pl2Config> {
        (self.scheduler == TcpScheduler::Pl2).then(|| self.pl2.clone().unwrap_or_default())
    }

    /// Checks the scheduler fields: `Err((field, problem and fix))`.
    pub fn validate_scheduler(&self) -> Result<(), (&'static str, String)> {
        if self.rack_tlp && self.scheduler == TcpScheduler::Pl2 {
            return Err(("transport.rack_tlp", "RACK-TLP is not modelled under TCP over PL2 (PL2 decides when segments leave); set rack_tlp = false or scheduler = \"none\"".into()));
        }
        let Some(p) = &self.pl2 else { return Ok(()) };
        if self.scheduler != TcpScheduler::Pl2 {
            return Err(("transport.pl2", "is set but transport.scheduler = \"none\"; set scheduler = \"pl2\" to run TCP over PL2, or remove [transport.pl2]".into()));
        }
        if p.headers != RawHeaders::None {
            return Err(("transport.pl2.headers", "TCP over PL2 frames carry TCP/IP headers; remove the key".into()));
        }
        if p.data_priority != 0 {
            return Err(("transport.pl2.data_priority", "TCP over PL2 sends segments at transport.priority; remove the key and set priority instead".into()));
        }
        if p.priorities {
            return Err(("transport.pl2.priorities", "the priority scheme is not available under TCP (a burst may mix messages of different priorities); remove the key".into()));
        }
        p.validate().map_err(|e| ("transport.pl2", e))
    }

    /// Checks ranges serde cannot; the message names the field and the fix.
    pub fn validate(&self, mss: u64) -> Result<(), String> {
        if !(self.retcp.beta.is_finite() && self.retcp.beta >= 1.0) {
            return Err(format!("retcp.beta = {}; β must be a finite factor ≥ 1 (the slides use 2)", self.retcp.beta));
        }
        let b = &self.bbr;
        for (name, d) in [("bbr.min_rtt_window", b.min_rtt_window), ("bbr.probe_rtt_duration", b.probe_rtt_duration), ("bbr.unit_time", b.unit_time), ("bbr.initial_rtt", b.initial_rtt)] {
            if d.0 == 0 {
                return Err(format!("{name} = 0 s; it must be positive (Linux: min_rtt_window \"10s\", probe_rtt_duration \"200ms\", unit_time \"976562500ps\", initial_rtt \"1ms\")"));
            }
        }
        if let Some(c) = &self.cubic_linux {
            if c.hz == 0 || c.dilation == 0 || u64::from(c.hz) * u64::from(c.dilation) > 1_000_000_000_000 {
                return Err(format!("cubic_linux.hz = {}, cubic_linux.dilation = {}; both must be at least 1 and a jiffy, 1 s / (hz × dilation), at least 1 ps (Linux: hz = 250; dilation 1 unless the hosts' kernels run on an undilated clock)", c.hz, c.dilation));
            }
            let cubic_base = self.cc_kind() == CcKind::Retcp && self.retcp.base == RetcpBase::Cubic;
            if self.cc_kind() != CcKind::Cubic && !cubic_base {
                return Err("cubic_linux is set but the congestion control runs no CUBIC; remove cubic_linux, or set cc = \"cubic\" (or cc = \"retcp\" with retcp.base = \"cubic\")".into());
            }
        }
        if self.prr && matches!(self.cc_kind(), CcKind::Bbr | CcKind::None) {
            return Err("prr = true needs a window-based congestion control (BBR sets its own window, as Linux's BBR bypasses PRR; none has no window to reduce); remove prr, or set cc to new_reno, cubic, dctcp or retcp".into());
        }
        if self.dctcp_linux && self.cc_kind() != CcKind::Dctcp {
            return Err("dctcp_linux = true but the congestion control is not DCTCP; remove dctcp_linux, or set cc = \"dctcp\"".into());
        }
        if self.reno_linux {
            let reno_base = self.cc_kind() == CcKind::Retcp && self.retcp.base == RetcpBase::Reno;
            if self.cc_kind() != CcKind::NewReno && !reno_base {
                return Err("reno_linux = true but the congestion control runs no Reno; remove reno_linux, or set cc = \"new_reno\" (or cc = \"retcp\" with retcp.base = \"reno\")".into());
            }
            if !self.byte_counting {
                return Err("reno_linux = true counts the segments each ACK delivers, as Linux does; byte_counting = false (one segment per ACK) contradicts it: remove one of the two".into());
            }
        }
        if self.rack_tlp && !self.sack {
            return Err("rack_tlp = true needs sack = true (RACK-TLP needs SACK, RFC 8985 §5); set sack = true or rack_tlp = false".into());
        }
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
        if self.syn_rto.0 == 0 {
            return Err("syn_rto = 0 s; the SYN retransmission timeout must be positive, e.g. \"1ms\" (default)".into());
        }
        if self.delayed_ack && self.delayed_ack_timeout.0 == 0 {
            return Err("delayed_ack_timeout must be positive, e.g. \"40us\"".into());
        }
        if let Some(g) = &self.gro {
            if g.max_bytes.0 < mss {
                return Err(format!("gro.max_bytes = {}; a GRO unit must hold at least one segment ({mss} B; Linux: \"64KiB\")", g.max_bytes));
            }
        }
        if self.receive_window.0 < mss || self.send_buffer.0 < mss {
            return Err(format!("receive_window and send_buffer must hold at least one segment ({mss} B)"));
        }
        Ok(())
    }
}
