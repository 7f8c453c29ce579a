//! The simulation runs the application workloads ([`crate::workload::Apps`]): it is their
//! [`AppIo`] (messages, wake-ups, records), and hands them their wake-up events and the
//! deliveries of their messages.

use super::Simulation;
use crate::engine::Ev;
use crate::metrics::{IterationRecord, RpcRecord};
use crate::workload::{AppIo, AppMessage, AppTag};
use crate::units::{Duration, SimTime};

impl AppIo for Simulation {
    fn now(&self) -> SimTime {
        self.now
    }

    fn start_message(&mut self, m: AppMessage) -> u64 {
        let slot = self.new_message(m.src, m.dst, m.size, m.thread, m.prio, m.transport, m.workload);
        let msg = &mut self.msgs[slot as usize];
        msg.tag = m.tag;
        let id = msg.rec.id;
        self.enqueue_message(slot, m.thread);
        id
    }

    fn wake(&mut self, at: SimTime, event: u32) {
        self.events.push(at, Ev::App(event));
    }

    fn rpc_record(&mut self, r: RpcRecord) {
        self.records.rpcs.push(r);
    }

    fn iteration_record(&mut self, r: IterationRecord) {
        self.records.iterations.push(r);
    }
}

impl Simulation {
    /// Application wake-up `i` is due.
    #[inline(never)]
    pub(crate) fn on_app_event(&mut self, i: u32) {
        let mut apps = std::mem::take(&mut self.apps);
        apps.on_event(i, self);
        self.apps = apps;
    }

    /// A message tagged `tag` (ideal completion time `ideal`) was delivered now.
    pub(crate) fn app_delivered(&mut self, tag: AppTag, ideal: Duration) {
        let mut apps = std::mem::take(&mut self.apps);
        apps.delivered(tag, ideal, self);
        self.apps = apps;
    }

    /// Reports RPCs and iterations still running (at the end of the run).
    pub(crate) fn finish_apps(&mut self) {
        let mut apps = std::mem::take(&mut self.apps);
        apps.finish(self);
        self.apps = apps;
    }
}
