//! The per-frame trace: events of frames that match the configured filter. When tracing
//! is off the engine pays one branch per event.

use super::spec::TraceConfig;
use super::Simulation;
use crate::metrics::{TraceEvent, TraceRecord};
use crate::packet::PktId;

/// A trace filter with node names resolved.
pub(crate) struct Tracer {
    pub cfg: TraceConfig,
    pub nodes: Vec<u32>,
    pub written: u64,
}

impl Simulation {
    /// Records `event` if a trace is on: the check is inlined into every call site, the
    /// recording is not (a run without a trace pays one branch per call).
    #[inline(always)]
    pub(crate) fn trace(&mut self, event: TraceEvent, node: u32, port: u32, pkt: PktId) {
        if self.tracer.is_some() {
            std::hint::cold_path();
            self.trace_record(event, node, port, pkt);
        }
    }

    #[inline(never)]
    fn trace_record(&mut self, event: TraceEvent, node: u32, port: u32, pkt: PktId) {
        let Some(t) = self.tracer.as_mut() else { return };
        let now = self.now;
        let p = self.arena.get(pkt);
        let c = &t.cfg;
        let in_time = now.0 >= c.from.0 && c.until.is_none_or(|u| now.0 < u.0);
        let ok = in_time
            && t.written < c.max_records
            && (c.flows.is_empty() || c.flows.contains(&p.flow))
            && (t.nodes.is_empty() || t.nodes.contains(&node))
            && (c.ports.is_empty() || c.ports.contains(&port));
        if ok {
            t.written += 1;
            self.records.trace.push(TraceRecord { time: now, event, node, port, packet: *p });
        }
    }
}
