//! Per-burst ledger of the switch, keyed by (source host, burst id).
//!
//! In faithful mode it is measurement only (Algorithm 1 keeps no per-burst state): it lets
//! the scheduler count the two holes exactly. In the improved variant it is part of the
//! algorithm: a register table indexed by a hash of (src, burst) holding the admission
//! bit and an arrival count, one read-modify-write per packet (we model it with exact keys
//! and no hash collisions). Capacity is bounded per source host; the oldest burst is
//! evicted first.

use std::collections::{HashMap, VecDeque};

use crate::msg::{BurstId, HostId};

/// What the switch remembers about one burst.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct BurstRecord {
    /// Packets reserved for this burst (summed over retried RSVs).
    pub reserved_packets: u64,
    /// Packets of this burst that released a reservation (arrivals or dequeues).
    pub arrived_packets: u64,
    /// `max(sendTimeslot, recvTimeslot)` of the latest GRT.
    pub chosen_slots: u64,
    /// Improved variant: the unsolicited copy may pass.
    pub admitted: bool,
    /// An unrecovered drop was already counted for this burst.
    pub unrecovered_counted: bool,
}

/// Bounded map of burst records.
#[derive(Debug)]
pub struct Ledger {
    records: HashMap<(HostId, BurstId), BurstRecord>,
    order: HashMap<HostId, VecDeque<BurstId>>,
    cap_per_host: usize,
}

impl Ledger {
    pub fn new(cap_per_host: usize) -> Self {
        Ledger {
            records: HashMap::new(),
            order: HashMap::new(),
            cap_per_host,
        }
    }

    /// The record of a burst, created (and the oldest of its host evicted) if new.
    pub fn entry(&mut self, src: HostId, burst: BurstId) -> &mut BurstRecord {
        if !self.records.contains_key(&(src, burst)) {
            let order = self.order.entry(src).or_default();
            order.push_back(burst);
            if order.len() > self.cap_per_host {
                if let Some(old) = order.pop_front() {
                    self.records.remove(&(src, old));
                }
            }
        }
        self.records.entry((src, burst)).or_default()
    }

    pub fn get(&self, src: HostId, burst: BurstId) -> Option<&BurstRecord> {
        self.records.get(&(src, burst))
    }

    pub fn get_mut(&mut self, src: HostId, burst: BurstId) -> Option<&mut BurstRecord> {
        self.records.get_mut(&(src, burst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_oldest_per_host() {
        let mut l = Ledger::new(2);
        l.entry(1, BurstId(0)).reserved_packets = 4;
        l.entry(1, BurstId(1));
        l.entry(2, BurstId(0));
        l.entry(1, BurstId(2));
        assert!(l.get(1, BurstId(0)).is_none());
        assert!(l.get(1, BurstId(1)).is_some());
        assert!(l.get(2, BurstId(0)).is_some());
        // Touching an existing record does not reorder or evict.
        l.entry(1, BurstId(1)).reserved_packets += 1;
        assert!(l.get(1, BurstId(2)).is_some());
    }
}
