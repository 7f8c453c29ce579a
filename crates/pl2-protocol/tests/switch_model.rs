//! Randomised check of the switch scheduler against a simple reference model of the
//! counters (hand-rolled property test, fixed seeds, no extra crates).
//!
//! 200 sequences of 500 steps each, per scenario, mixing RSVs (some announcing an
//! unsolicited copy), data arrivals in random order (unsolicited copies, scheduled
//! packets, resends), sender crashes whose outstanding reservations a receiver cancels,
//! and, in some scenarios, injected duplicate packets. Six hosts on four ports (two
//! pairs share a port). K = 4, T = 8 and t = 3 are small so both holes occur often.
//!
//! Checked at every step: GRT fields and every counter equal the model's, and every
//! statistic (drift, saturations, unrecovered drops, suppressed decrements, drops) equals
//! the model's count. Without injected duplicates and before any drift, the counters are
//! the unsaturated sums (never negative). After draining all packets: the counters equal
//! the reservations leaked by unrecovered drops, so they are zero when no hole occurred;
//! the improved switch has neither hole and always ends at zero.

use std::collections::HashMap;

use pl2_protocol::switch::{Scheduler, SchedulerConfig, SwitchAction, Verdict};
use pl2_protocol::{BurstId, Cancel, DataTag, Rsv};

const PORT_OF: [u32; 6] = [0, 0, 1, 2, 3, 3];
const PORTS: usize = 4;
const K: u64 = 4;
const T_BIG: u64 = 8;
const T_SMALL: u64 = 3;

/// xorshift64*: a tiny deterministic generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % n
    }
}

#[derive(Clone, Copy, Debug)]
struct Scenario {
    improved: bool,
    duplicates: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct BurstRec {
    dst: u32,
    reserved: u64,
    arrived: u64,
    cancelled: u64,
    chosen: u64,
    admitted: bool,
    unrecovered: bool,
    crashed: bool,
}

/// The reference: per-port counters in packets, saturating like the switch, plus
/// unsaturated shadows and the expected statistics.
#[derive(Default)]
struct Model {
    inr: [u64; PORTS],
    outr: [u64; PORTS],
    shadow_in: [i64; PORTS],
    shadow_out: [i64; PORTS],
    bursts: HashMap<(u32, u32), BurstRec>,
    drift: u64,
    saturations: u64,
    unrecovered: u64,
    suppressed: u64,
    dropped: u64,
}

impl Model {
    fn decrement(&mut self, sp: usize, dp: usize) {
        for (c, s) in [
            (&mut self.inr[sp], &mut self.shadow_in[sp]),
            (&mut self.outr[dp], &mut self.shadow_out[dp]),
        ] {
            if *c == 0 {
                self.saturations += 1;
            }
            *c = c.saturating_sub(1);
            *s -= 1;
        }
    }
}

struct World {
    sc: Scenario,
    sw: Scheduler,
    m: Model,
    pending: Vec<DataTag>,
    delivered: Vec<DataTag>,
    next_burst: [u32; 6],
    injected: bool,
}

impl World {
    fn new(sc: Scenario) -> World {
        let cfg = SchedulerConfig {
            k_max_packets: K as u32,
            t_unsolicited_slots: T_BIG,
            t_sender_slots: T_SMALL,
            improved: sc.improved,
            ..Default::default()
        };
        World {
            sc,
            sw: Scheduler::new(cfg, PORT_OF.to_vec(), PORTS as u32).unwrap(),
            m: Model::default(),
            pending: Vec::new(),
            delivered: Vec::new(),
            next_burst: [0; 6],
            injected: false,
        }
    }

    fn rsv(&mut self, rng: &mut Rng) {
        let src = rng.below(6) as u32;
        let dst = (src + 1 + rng.below(5) as u32) % 6;
        let demand = 1 + rng.below(6);
        let unsolicited = rng.below(10) < 4;
        let burst = self.next_burst[src as usize];
        self.next_burst[src as usize] += 1;
        let r = Rsv {
            src,
            dst,
            burst: BurstId(burst),
            attempt: 0,
            demand_packets: demand as u32,
            high_priority: false,
            unsolicited_follows: unsolicited,
        };
        let mut out = Vec::new();
        self.sw.on_rsv(0, &r, &mut out).unwrap();
        let SwitchAction::SendGrt(g) = out[0] else {
            panic!("no GRT")
        };
        let (sp, dp) = (
            PORT_OF[src as usize] as usize,
            PORT_OF[dst as usize] as usize,
        );
        let granted = demand.min(K);
        let (send, recv) = (self.m.inr[sp], self.m.outr[dp]);
        let chosen = send.max(recv);
        let admitted = self.sc.improved && unsolicited && chosen <= T_BIG;
        assert_eq!(
            (
                u64::from(g.send_timeslot_slots),
                u64::from(g.recv_timeslot_slots),
                u64::from(g.granted_packets)
            ),
            (send, recv, granted)
        );
        assert_eq!(g.unsolicited_admitted, admitted);
        self.m.inr[sp] += granted;
        self.m.outr[dp] += granted;
        self.m.shadow_in[sp] += granted as i64;
        self.m.shadow_out[dp] += granted as i64;
        let rec = BurstRec {
            dst,
            reserved: granted,
            chosen,
            admitted,
            ..Default::default()
        };
        self.m.bursts.insert((src, burst), rec);
        // The sender's Algorithm 2 (or the improved rule) decides the resend.
        let resend = if self.sc.improved {
            !admitted
        } else {
            chosen > T_SMALL
        };
        for i in 0..granted as u32 {
            let tag = DataTag {
                src,
                dst,
                burst: BurstId(burst),
                index_in_burst: i,
                unsolicited,
                resent: false,
            };
            if unsolicited {
                self.pending.push(tag);
            }
            if !unsolicited || resend {
                self.pending.push(DataTag {
                    unsolicited: false,
                    resent: unsolicited,
                    ..tag
                });
            }
        }
    }

    fn arrive(&mut self, rng: &mut Rng) {
        if self.pending.is_empty() {
            return;
        }
        let tag = self
            .pending
            .swap_remove(rng.below(self.pending.len() as u64) as usize);
        let verdict = self.sw.on_data_ingress(0, &tag).unwrap();
        let (sp, dp) = (
            PORT_OF[tag.src as usize] as usize,
            PORT_OF[tag.dst as usize] as usize,
        );
        let (inr, outr) = (self.m.inr[sp], self.m.outr[dp]);
        let improved = self.sc.improved;
        let rec = self.m.bursts.get_mut(&(tag.src, tag.burst.0)).unwrap();
        if tag.unsolicited {
            let pass = if improved {
                rec.admitted
            } else {
                inr.max(outr) <= T_BIG
            };
            if !pass {
                assert_eq!(verdict, Verdict::Drop);
                self.m.dropped += 1;
                let resent = if improved {
                    !rec.admitted
                } else {
                    rec.chosen > T_SMALL
                };
                if !resent {
                    self.m.unrecovered += 1;
                    rec.unrecovered = true;
                }
                return;
            }
        }
        assert_eq!(verdict, Verdict::Forward);
        self.delivered.push(tag);
        rec.arrived += 1;
        if rec.arrived > rec.reserved {
            if improved {
                self.m.suppressed += 1;
                return;
            }
            self.m.drift += 1;
        }
        self.m.decrement(sp, dp);
    }

    fn duplicate(&mut self, rng: &mut Rng) {
        if !self.sc.duplicates || self.delivered.is_empty() {
            return;
        }
        let tag = self.delivered[rng.below(self.delivered.len() as u64) as usize];
        self.pending.push(DataTag {
            unsolicited: false,
            resent: true,
            ..tag
        });
        self.injected = true;
    }

    /// A sender crashes: its packets in flight vanish and the receivers cancel what each
    /// of its bursts had reserved and not received (§4.5).
    fn crash(&mut self, rng: &mut Rng) {
        let h = rng.below(6) as u32;
        self.pending.retain(|t| t.src != h);
        let mut keys: Vec<_> = self.m.bursts.keys().copied().filter(|k| k.0 == h).collect();
        keys.sort_unstable();
        for key in keys {
            let rec = self.m.bursts.get_mut(&key).unwrap();
            if rec.crashed {
                continue;
            }
            rec.crashed = true;
            let n = rec.reserved.saturating_sub(rec.arrived);
            if n == 0 {
                continue;
            }
            rec.cancelled += n;
            let c = Cancel {
                src: h,
                dst: rec.dst,
                packets: n as u32,
            };
            self.sw.on_cancel(0, &c).unwrap();
            let (sp, dp) = (
                PORT_OF[h as usize] as usize,
                PORT_OF[c.dst as usize] as usize,
            );
            self.m.inr[sp] = self.m.inr[sp].saturating_sub(n);
            self.m.outr[dp] = self.m.outr[dp].saturating_sub(n);
            self.m.shadow_in[sp] -= n as i64;
            self.m.shadow_out[dp] -= n as i64;
        }
    }

    fn check(&self, ctx: &str) {
        for p in 0..PORTS {
            assert_eq!(
                self.sw.in_backlog_slots(0, p as u32),
                self.m.inr[p],
                "{ctx}: in[{p}]"
            );
            assert_eq!(
                self.sw.out_backlog_slots(0, p as u32),
                self.m.outr[p],
                "{ctx}: out[{p}]"
            );
        }
        let s = self.sw.stats();
        assert_eq!(s.counter_drift_packets, self.m.drift, "{ctx}: drift");
        assert_eq!(
            s.decrement_saturations, self.m.saturations,
            "{ctx}: saturations"
        );
        assert_eq!(
            s.unsolicited_unrecovered_packets, self.m.unrecovered,
            "{ctx}: unrecovered"
        );
        assert_eq!(
            s.suppressed_decrements, self.m.suppressed,
            "{ctx}: suppressed"
        );
        assert_eq!(s.unsolicited_dropped, self.m.dropped, "{ctx}: dropped");
        if !self.injected && self.m.drift == 0 {
            assert_eq!(self.m.saturations, 0, "{ctx}: saturation without drift");
            for p in 0..PORTS {
                assert!(
                    self.m.shadow_in[p] >= 0 && self.m.shadow_out[p] >= 0,
                    "{ctx}: negative"
                );
                assert_eq!(
                    self.m.shadow_in[p], self.m.inr[p] as i64,
                    "{ctx}: in[{p}] saturated"
                );
                assert_eq!(
                    self.m.shadow_out[p], self.m.outr[p] as i64,
                    "{ctx}: out[{p}] saturated"
                );
            }
        }
        if self.sc.improved {
            assert_eq!(s.counter_drift_packets, 0, "{ctx}: improved drifted");
            assert_eq!(
                s.unsolicited_unrecovered_packets, 0,
                "{ctx}: improved lost a burst"
            );
        }
    }

    /// After every packet has arrived: what remains reserved is what unrecovered drops
    /// leaked (when nothing saturated).
    fn check_drained(&self, ctx: &str) {
        assert!(self.pending.is_empty());
        let (mut leak_in, mut leak_out) = ([0u64; PORTS], [0u64; PORTS]);
        for (&(src, _), r) in &self.m.bursts {
            let leak = r.reserved.saturating_sub(r.arrived + r.cancelled);
            if leak > 0 && !self.injected {
                assert!(
                    r.unrecovered,
                    "{ctx}: a burst leaked without an unrecovered drop"
                );
            }
            leak_in[PORT_OF[src as usize] as usize] += leak;
            leak_out[PORT_OF[r.dst as usize] as usize] += leak;
        }
        if self.m.saturations == 0 {
            assert_eq!(self.m.inr, leak_in, "{ctx}: in after drain");
            assert_eq!(self.m.outr, leak_out, "{ctx}: out after drain");
        }
        if self.sc.improved || (self.m.unrecovered == 0 && self.m.drift == 0 && !self.injected) {
            assert_eq!(self.m.inr, [0; PORTS], "{ctx}: in not zero");
            assert_eq!(self.m.outr, [0; PORTS], "{ctx}: out not zero");
        }
    }
}

/// Runs 200 sequences; returns the totals of (drift, unrecovered, suppressed).
fn run(sc: Scenario) -> (u64, u64, u64) {
    let mut totals = (0, 0, 0);
    for seed in 1..=200u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut w = World::new(sc);
        for step in 0..500 {
            match rng.below(100) {
                0..=34 => w.rsv(&mut rng),
                35..=84 => w.arrive(&mut rng),
                85..=89 => w.duplicate(&mut rng),
                90..=92 => w.crash(&mut rng),
                _ => {}
            }
            w.check(&format!("{sc:?} seed {seed} step {step}"));
        }
        while !w.pending.is_empty() {
            w.arrive(&mut rng);
            w.check(&format!("{sc:?} seed {seed} drain"));
        }
        w.check_drained(&format!("{sc:?} seed {seed}"));
        totals.0 += w.m.drift;
        totals.1 += w.m.unrecovered;
        totals.2 += w.m.suppressed;
    }
    totals
}

#[test]
fn faithful_matches_the_model_and_counts_both_holes() {
    let (drift, unrecovered, suppressed) = run(Scenario {
        improved: false,
        duplicates: false,
    });
    assert!(drift > 0, "the sequences never exercised counter drift");
    assert!(
        unrecovered > 0,
        "the sequences never exercised an unrecovered drop"
    );
    assert_eq!(suppressed, 0);
}

#[test]
fn faithful_with_injected_duplicates_matches_the_model() {
    let (drift, _, _) = run(Scenario {
        improved: false,
        duplicates: true,
    });
    assert!(drift > 0);
}

#[test]
fn improved_closes_both_holes() {
    let (drift, unrecovered, suppressed) = run(Scenario {
        improved: true,
        duplicates: false,
    });
    assert_eq!((drift, unrecovered, suppressed), (0, 0, 0));
}

#[test]
fn improved_with_injected_duplicates_suppresses_them() {
    let (drift, unrecovered, suppressed) = run(Scenario {
        improved: true,
        duplicates: true,
    });
    assert_eq!((drift, unrecovered), (0, 0));
    assert!(suppressed > 0);
}
