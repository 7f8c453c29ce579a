//! A switch's shared packet buffer: admission by per-queue dynamic thresholds
//! (Choudhury–Hahne: a queue may hold at most α × the unused buffer) and by static
//! per-port limits, drop-tail. Occupancy is tracked by (egress port, priority) and by
//! (ingress port, priority), the latter for PFC- and SFC-style mechanisms.

use crate::metrics::DropReason;

pub struct SharedBuffer {
    pub size: u64,
    pub used: u64,
    pub alpha: Option<f64>,
    pub port_limit: Option<u64>,
    /// Bytes per (local egress port, priority).
    pub egress: Vec<[u64; 8]>,
    /// Bytes per local egress port, all priorities.
    pub egress_total: Vec<u64>,
    /// Bytes per (local ingress port, priority); the extra last row counts frames the
    /// switch generated itself.
    pub ingress: Vec<[u64; 8]>,
}

impl SharedBuffer {
    pub fn new(size: u64, alpha: Option<f64>, port_limit: Option<u64>, ports: usize) -> SharedBuffer {
        SharedBuffer {
            size,
            used: 0,
            alpha,
            port_limit,
            egress: vec![[0; 8]; ports],
            egress_total: vec![0; ports],
            ingress: vec![[0; 8]; ports + 1],
        }
    }

    /// Whether `bytes` may join queue (egress, prio); why not, if not.
    #[inline]
    pub fn admit(&self, egress: usize, prio: usize, bytes: u64) -> Result<(), DropReason> {
        if self.used + bytes > self.size {
            return Err(DropReason::BufferFull);
        }
        if let Some(limit) = self.port_limit {
            if self.egress_total[egress] + bytes > limit {
                return Err(DropReason::PortLimit);
            }
        }
        if let Some(alpha) = self.alpha {
            let free = self.size.saturating_sub(self.used) as f64;
            if (self.egress[egress][prio] + bytes) as f64 > alpha * free {
                return Err(DropReason::BufferFull);
            }
        }
        Ok(())
    }

    #[inline]
    pub fn add(&mut self, egress: usize, ingress: usize, prio: usize, bytes: u64) {
        self.used += bytes;
        self.egress[egress][prio] += bytes;
        self.egress_total[egress] += bytes;
        self.ingress[ingress][prio] += bytes;
    }

    #[inline]
    pub fn remove(&mut self, egress: usize, ingress: usize, prio: usize, bytes: u64) {
        self.used -= bytes;
        self.egress[egress][prio] -= bytes;
        self.egress_total[egress] -= bytes;
        self.ingress[ingress][prio] -= bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_threshold_caps_one_queue_at_alpha_b_over_one_plus_alpha() {
        let mut b = SharedBuffer::new(1_000_000, Some(1.0), None, 2);
        let mut q = 0;
        while b.admit(0, 0, 100).is_ok() {
            b.add(0, 1, 0, 100);
            q += 100;
        }
        assert!((q as i64 - 500_000).abs() <= 100, "{q}");
    }
}
