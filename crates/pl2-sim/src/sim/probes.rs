//! Protocol probes on a time grid (`metrics.probe_interval`). Protocols publish a value
//! whenever it changes (a TCP sender's cwnd on every ACK, a PL2 burst's slots on every
//! GRT), which on long runs makes the probe table the largest output. With an interval,
//! each (host, transport, flow, name) series keeps the last value published in each grid window, at
//! the time it was published: a sample-and-hold reading of the series at every window's
//! end is unchanged, and the table holds at most one row per series and window.

use crate::metrics::ProbeRecord;
use crate::units::SimTime;
use rustc_hash::FxHashMap;

/// The last value of each series in its current window, not yet written.
#[derive(Default)]
pub(crate) struct ProbeGrid {
    interval_ps: u64,
    pending: FxHashMap<(u32, u8, u32, &'static str), (u64, SimTime, f64)>,
}

impl ProbeGrid {
    /// `interval_ps` = 0 keeps every published value.
    pub fn new(interval_ps: u64) -> ProbeGrid {
        ProbeGrid { interval_ps, pending: FxHashMap::default() }
    }

    /// Takes a published value; writes into `out` the value it supersedes if that one
    /// was the last of an earlier window.
    pub fn offer(&mut self, rec: ProbeRecord, out: &mut Vec<ProbeRecord>) {
        if self.interval_ps == 0 {
            out.push(rec);
            return;
        }
        let w = rec.time.0 / self.interval_ps;
        let ProbeRecord { time, host, transport, flow, name, value } = rec;
        if let Some(p) = self.pending.insert((host, transport, flow, name), (w, time, value)) {
            if p.0 < w {
                out.push(ProbeRecord { time: p.1, host, transport, flow, name, value: p.2 });
            }
        }
    }

    /// Writes every series' last value (at the end of the run), in (time, host,
    /// transport, flow, name) order so the output does not depend on the map's order.
    pub fn flush(&mut self, out: &mut Vec<ProbeRecord>) {
        let mut rest: Vec<ProbeRecord> = self
            .pending
            .drain()
            .map(|((host, transport, flow, name), (_, time, value))| ProbeRecord { time, host, transport, flow, name, value })
            .collect();
        rest.sort_by(|a, b| (a.time, a.host, a.transport, a.flow, a.name).cmp(&(b.time, b.host, b.transport, b.flow, b.name)));
        out.extend(rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u64, flow: u32, v: f64) -> ProbeRecord {
        ProbeRecord { time: SimTime(t), host: 0, transport: 0, flow, name: "cwnd", value: v }
    }

    #[test]
    fn keeps_the_last_value_of_each_window_per_series() {
        let mut g = ProbeGrid::new(10);
        let mut out = Vec::new();
        for r in [rec(1, 0, 1.0), rec(4, 0, 2.0), rec(5, 1, 7.0), rec(9, 0, 3.0), rec(12, 0, 4.0), rec(35, 0, 5.0), rec(36, 0, 6.0)] {
            g.offer(r, &mut out);
        }
        assert_eq!(out, vec![rec(9, 0, 3.0), rec(12, 0, 4.0)]);
        g.flush(&mut out);
        assert_eq!(out, vec![rec(9, 0, 3.0), rec(12, 0, 4.0), rec(5, 1, 7.0), rec(36, 0, 6.0)]);
    }

    #[test]
    fn a_zero_interval_keeps_everything() {
        let mut g = ProbeGrid::new(0);
        let mut out = Vec::new();
        g.offer(rec(1, 0, 1.0), &mut out);
        g.offer(rec(1, 0, 2.0), &mut out);
        g.flush(&mut out);
        assert_eq!(out.len(), 2);
    }
}
