//! The expected share of unsolicited bursts for one thread sending 64 KiB messages back to
//! back at low load (every GRT returns chosen = 0), derived here and checked against the
//! sender driven through a deterministic event sequence.
//!
//! Derivation. A message of B bytes is `n = ceil(B / P)` packets (P payload bytes per
//! packet) and `b = ceil(n / K)` bursts. With B = 65536, P = 1500, K = 4: n = 44, b = 11.
//! A burst goes unsolicited iff (Algorithm 2 line 8) the last chosen slot is below t and
//! the last GRT is within 2 estimates of now. With every GRT at chosen 0, the first
//! condition holds after the first GRT. For the second, in blocking mode the next RSV goes
//! at max(GRT, end of the burst's transmission): for an unsolicited burst the GRT comes
//! `d` after the RSV and the burst (sent at the RSV) is done after K slots = 0.49 µs < d,
//! so the next RSV is at the GRT itself (0 ≤ 2d); for a solicited burst, equation (1)
//! gives wait = max(0, 0 − d) = 0, so the burst leaves at the GRT and the next RSV is
//! K slots later (0.49 µs ≤ 2d = 2 µs). Back to back, a new message starts at that same
//! moment, so it is no different from the next burst of the same message. Hence only the
//! very first burst is solicited: over M messages the share is `1 − 1/(b·M)`
//! (1099/1100 for M = 100). If instead the thread pauses longer than 2d between messages,
//! every message starts solicited and the share is `(b − 1)/b` = 10/11. With P = 1472
//! (UDP/IPv4 payload in a 1500 B MTU) n = 45, b = 12 (the last burst has one packet).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use pl2_protocol::sender::{AppMessage, Sender, SenderAction, SenderConfig};
use pl2_protocol::{BurstId, Grt, MsgId};

const SLOT: u64 = 123_360;
const D: u64 = 1_000_000;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ev {
    Grt(BurstId, u8, u32),
    Handed(BurstId, u32),
    Transmitted(BurstId),
    Message(u64),
}

/// Drives one sender: GRTs come back `D` after each RSV with chosen 0; bursts are handed
/// over at their time and transmitted K slots later; message i + 1 is submitted when
/// message i is handed over plus `gap_ps`. Returns (unsolicited bursts, all bursts).
fn run(messages: u64, payload: u64, gap_ps: u64) -> (u64, u64) {
    let cfg = SenderConfig {
        payload_per_packet_bytes: payload,
        ..Default::default()
    };
    let mut s = Sender::new(cfg).unwrap();
    let mut q: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |q: &mut BinaryHeap<_>, t: u64, e: Ev| {
        seq += 1;
        q.push(Reverse((t, seq, e)));
    };
    push(&mut q, 0, Ev::Message(0));
    let mut out = Vec::new();
    let (mut resends, mut handed_over) = (0, 0);
    while let Some(Reverse((now, _, ev))) = q.pop() {
        out.clear();
        match ev {
            Ev::Message(i) => {
                let m = AppMessage {
                    id: MsgId(i),
                    dst: 1,
                    bytes: 65536,
                    ctx: 0,
                    high_priority: false,
                };
                s.on_app_message(now, m, &mut out).unwrap();
            }
            Ev::Grt(burst, attempt, packets) => {
                let g = Grt {
                    src: 0,
                    dst: 1,
                    burst,
                    attempt,
                    send_timeslot_slots: 0,
                    recv_timeslot_slots: 0,
                    granted_packets: packets,
                    unsolicited_admitted: false,
                };
                s.on_grt(now, &g, 0, &mut out);
            }
            Ev::Handed(b, packets) => {
                s.on_burst_handed_to_nic(now, b, &mut out);
                push(&mut q, now + u64::from(packets) * SLOT, Ev::Transmitted(b));
            }
            Ev::Transmitted(b) => s.on_burst_transmitted(now, b, &mut out),
        }
        for a in &out {
            match *a {
                SenderAction::SendRsv(r) => push(
                    &mut q,
                    now + D,
                    Ev::Grt(r.burst, r.attempt, r.demand_packets),
                ),
                SenderAction::SendBurst(b) => {
                    resends += u64::from(b.resent);
                    push(&mut q, b.at_ps, Ev::Handed(b.burst, b.packets));
                }
                SenderAction::MessageHandedOver { msg } => {
                    handed_over += 1;
                    if msg.0 + 1 < messages {
                        push(&mut q, now + gap_ps, Ev::Message(msg.0 + 1));
                    }
                }
                SenderAction::SetTimer { .. }
                | SenderAction::Probe(_)
                | SenderAction::SendCancel(_) => {}
            }
        }
    }
    assert_eq!(handed_over, messages);
    assert_eq!(resends, 0, "chosen 0 never exceeds t");
    assert_eq!(s.stats().rsv_retries, 0);
    (s.stats().unsolicited_bursts, s.stats().bursts)
}

#[test]
fn back_to_back_64k_messages_are_all_unsolicited_but_the_first_burst() {
    let m = 100;
    let b = 11; // ceil(ceil(65536 / 1500) / 4)
    assert_eq!(run(m, 1500, 0), (b * m - 1, b * m));
    let b = 12; // ceil(ceil(65536 / 1472) / 4)
    assert_eq!(run(m, 1472, 0), (b * m - 1, b * m));
}

#[test]
fn paused_64k_messages_start_solicited() {
    // The next message comes 4 d after the last one was handed over, i.e. 3 d > 2 d
    // after its last GRT: its first burst no longer has a recent GRT.
    let m = 50;
    let b = 11;
    assert_eq!(run(m, 1500, 4 * D), ((b - 1) * m, b * m));
}
