//! A switch's shared packet buffer: admission by per-queue dynamic thresholds
//! (Choudhury–Hahne: a queue may hold at most α × the unused buffer) and by static
//! per-port limits, drop-tail. Occupancy is tracked by (egress port, priority) and, at a
//! switch whose PFC or ingress pool reads it, by (ingress port, priority).
//!
//! With `pools` (`config::BufferPools`) admission is by an ingress pool and an egress
//! pool instead, as shared-memory switch chips account: each side gives every port a
//! guaranteed minimum, and what a port holds beyond it comes from the side's shared pool,
//! limited per (port, priority) by α × the pool's free space or a static limit. A frame
//! is admitted if every enabled side admits it and the physical buffer has room; it is
//! counted on both sides until its last bit leaves its egress port.

use crate::config::{BufferPools, PoolConfig, PoolLimit};
use crate::metrics::DropReason;

/// One side's pool (ingress or egress).
#[derive(Clone, Debug)]
pub struct Pool {
    size: u64,
    guaranteed: u64,
    limit: PoolLimit,
    /// Bytes per port, all priorities.
    port_total: Vec<u64>,
    /// Bytes held beyond the ports' guarantees: the shared part in use.
    shared_used: u64,
}

impl Pool {
    fn new(c: &PoolConfig, ports: usize) -> Pool {
        Pool { size: c.size.0, guaranteed: c.guaranteed.0, limit: c.limit, port_total: vec![0; ports], shared_used: 0 }
    }

    /// Whether `bytes` more for (`port`, a queue now holding `queue` bytes) fit.
    fn admits(&self, port: usize, queue: u64, bytes: u64) -> bool {
        let total = self.port_total[port];
        if total + bytes <= self.guaranteed {
            return true;
        }
        let extra = (total + bytes).saturating_sub(self.guaranteed) - total.saturating_sub(self.guaranteed);
        if self.shared_used + extra > self.size {
            return false;
        }
        // The limit applies to what the queue holds beyond its port's guarantee.
        let shared = (queue + bytes).saturating_sub(self.guaranteed);
        match self.limit {
            PoolLimit::Bytes(b) => shared <= b.0,
            PoolLimit::Alpha(a) => shared as f64 <= a * self.size.saturating_sub(self.shared_used) as f64,
        }
    }

    fn add(&mut self, port: usize, bytes: u64) {
        let before = self.port_total[port].saturating_sub(self.guaranteed);
        self.port_total[port] += bytes;
        self.shared_used += self.port_total[port].saturating_sub(self.guaranteed) - before;
    }

    fn remove(&mut self, port: usize, bytes: u64) {
        let before = self.port_total[port].saturating_sub(self.guaranteed);
        self.port_total[port] -= bytes;
        self.shared_used -= before - self.port_total[port].saturating_sub(self.guaranteed);
    }

    /// The shared part left free.
    pub fn free(&self) -> u64 {
        self.size.saturating_sub(self.shared_used)
    }
}

/// What one egress port's queues hold.
///
/// Laid out (C order, one cache line aligned) so that a frame's enqueue or dequeue at
/// priorities 0 to 2 updates one line (total, frames, bytes) rather than the two that
/// the counters' 104 bytes in declaration order always span.
#[derive(Copy, Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct EgressCounts {
    /// Bytes, all priorities.
    pub total: u64,
    /// Frames per priority, for marking thresholds in packets.
    pub frames: [u32; 8],
    /// Bytes per priority.
    pub bytes: [u64; 8],
}

pub struct SharedBuffer {
    pub size: u64,
    pub used: u64,
    pub alpha: Option<f64>,
    pub port_limit: Option<u64>,
    /// What each local egress port holds (one record per port: a frame's enqueue and
    /// dequeue touch one).
    pub egress: Vec<EgressCounts>,
    /// Bytes per (local ingress port, priority); the extra last row counts frames the
    /// switch generated itself.
    pub ingress: Vec<[u64; 8]>,
    /// The ingress and egress pools, when admission is by pools (`None`: by the dynamic
    /// thresholds and port limit above).
    pub ingress_pool: Option<Pool>,
    pub egress_pool: Option<Pool>,
    pools: bool,
    /// Whether `ingress` is kept. Only PFC and an ingress pool's admission read it, so a
    /// switch with neither skips a store per frame in and out (at k = 16 the counts are
    /// 348 KB of memory, touched at random).
    count_ingress: bool,
}

impl SharedBuffer {
    pub fn new(size: u64, alpha: Option<f64>, port_limit: Option<u64>, ports: usize) -> SharedBuffer {
        SharedBuffer {
            size,
            used: 0,
            alpha,
            port_limit,
            egress: vec![EgressCounts::default(); ports],
            ingress: vec![[0; 8]; ports + 1],
            ingress_pool: None,
            egress_pool: None,
            pools: false,
            count_ingress: true,
        }
    }

    /// Keeps the per-(ingress, priority) counts only if `on` (the default keeps them):
    /// set off where nothing reads them (no PFC at this switch, no ingress pool).
    pub fn counting_ingress(mut self, on: bool) -> SharedBuffer {
        self.count_ingress = on || self.ingress_pool.is_some();
        self
    }

    /// Admission by ingress and egress pools (either may be disabled).
    pub fn with_pools(mut self, p: &BufferPools) -> SharedBuffer {
        let ports = self.egress.len();
        self.ingress_pool = p.ingress.as_ref().map(|c| Pool::new(c, ports + 1));
        self.egress_pool = p.egress.as_ref().map(|c| Pool::new(c, ports));
        self.pools = true;
        self.count_ingress |= self.ingress_pool.is_some();
        self
    }

    /// Pool admission of `bytes` for (egress, ingress, prio); why not, if not. `egress`:
    /// whether the egress side is checked (lossless frames skip it).
    #[inline(never)]
    pub fn admit_pools(&self, egress: usize, ingress: usize, prio: usize, bytes: u64, check_egress: bool) -> Result<(), DropReason> {
        if self.used + bytes > self.size {
            return Err(DropReason::BufferFull);
        }
        if let Some(p) = &self.ingress_pool {
            if !p.admits(ingress, self.ingress[ingress][prio], bytes) {
                return Err(DropReason::IngressPool);
            }
        }
        if check_egress {
            if let Some(p) = &self.egress_pool {
                if !p.admits(egress, self.egress[egress].bytes[prio], bytes) {
                    return Err(DropReason::BufferFull);
                }
            }
        }
        Ok(())
    }

    /// Whether admission is by pools.
    #[inline]
    pub fn has_pools(&self) -> bool {
        self.pools
    }

    /// Whether `bytes` may join queue (egress, prio); why not, if not.
    #[inline]
    pub fn admit(&self, egress: usize, prio: usize, bytes: u64) -> Result<(), DropReason> {
        if self.used + bytes > self.size {
            return Err(DropReason::BufferFull);
        }
        if let Some(limit) = self.port_limit {
            if self.egress[egress].total + bytes > limit {
                return Err(DropReason::PortLimit);
            }
        }
        if let Some(alpha) = self.alpha {
            let free = self.size.saturating_sub(self.used) as f64;
            if (self.egress[egress].bytes[prio] + bytes) as f64 > alpha * free {
                return Err(DropReason::BufferFull);
            }
        }
        Ok(())
    }

    /// Counts one frame of `bytes` into queue (egress, prio), arrived through `ingress`.
    #[inline]
    pub fn add(&mut self, egress: usize, ingress: usize, prio: usize, bytes: u64) {
        self.used += bytes;
        let e = &mut self.egress[egress];
        e.bytes[prio] += bytes;
        e.frames[prio] += 1;
        e.total += bytes;
        if self.count_ingress {
            self.ingress[ingress][prio] += bytes;
        }
        if self.pools {
            self.pools_add(egress, ingress, bytes);
        }
    }

    #[inline(never)]
    fn pools_add(&mut self, egress: usize, ingress: usize, bytes: u64) {
        if let Some(p) = &mut self.ingress_pool {
            p.add(ingress, bytes);
        }
        if let Some(p) = &mut self.egress_pool {
            p.add(egress, bytes);
        }
    }

    #[inline(never)]
    fn pools_remove(&mut self, egress: usize, ingress: usize, bytes: u64) {
        if let Some(p) = &mut self.ingress_pool {
            p.remove(ingress, bytes);
        }
        if let Some(p) = &mut self.egress_pool {
            p.remove(egress, bytes);
        }
    }

    /// Takes one frame of `bytes` out of queue (egress, prio), arrived through `ingress`.
    #[inline]
    pub fn remove(&mut self, egress: usize, ingress: usize, prio: usize, bytes: u64) {
        self.used -= bytes;
        let e = &mut self.egress[egress];
        e.bytes[prio] -= bytes;
        e.frames[prio] -= 1;
        e.total -= bytes;
        if self.count_ingress {
            self.ingress[ingress][prio] -= bytes;
        }
        if self.pools {
            self.pools_remove(egress, ingress, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_low_priority_frame_updates_one_line_of_its_port_counts() {
        use std::mem::{align_of, offset_of};
        assert_eq!(align_of::<EgressCounts>(), 64);
        assert_eq!(offset_of!(EgressCounts, total), 0);
        assert!(offset_of!(EgressCounts, frames) + 3 * 4 <= 64);
        assert!(offset_of!(EgressCounts, bytes) + 3 * 8 <= 64);
    }

    /// The per-ingress counts follow every frame unless turned off, and an ingress pool,
    /// whose admission reads them, keeps them on; the egress side is counted either way.
    #[test]
    fn ingress_counts_are_kept_where_they_are_read() {
        let mut on = SharedBuffer::new(1_000_000, None, None, 2);
        on.add(0, 1, 3, 100);
        assert_eq!(on.ingress[1][3], 100);
        let mut off = SharedBuffer::new(1_000_000, None, None, 2).counting_ingress(false);
        off.add(0, 1, 3, 100);
        assert_eq!((off.ingress[1][3], off.egress[0].bytes[3], off.egress[0].total, off.used), (0, 100, 100, 100));
        off.remove(0, 1, 3, 100);
        assert_eq!((off.egress[0].total, off.used), (0, 0));
        let mut pooled = pools(Some((1_000_000, 0, PoolLimit::Alpha(1.0))), None).counting_ingress(false);
        pooled.add(0, 1, 3, 100);
        assert_eq!(pooled.ingress[1][3], 100);
        let c = PoolConfig { size: crate::units::Bytes(1_000_000), guaranteed: crate::units::Bytes(0), limit: PoolLimit::Alpha(1.0) };
        let mut pooled_later = SharedBuffer::new(10_000_000, None, None, 3).counting_ingress(false).with_pools(&BufferPools { ingress: Some(c), egress: None });
        pooled_later.add(0, 1, 3, 100);
        assert_eq!(pooled_later.ingress[1][3], 100, "a pool added after turning the counts off turns them on");
    }

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

    fn pools(ing: Option<(u64, u64, PoolLimit)>, eg: Option<(u64, u64, PoolLimit)>) -> SharedBuffer {
        let c = |(size, g, limit): (u64, u64, PoolLimit)| PoolConfig { size: crate::units::Bytes(size), guaranteed: crate::units::Bytes(g), limit };
        SharedBuffer::new(10_000_000, None, None, 3).with_pools(&BufferPools { ingress: ing.map(c), egress: eg.map(c) })
    }

    /// One egress queue alone with α = 1 reaches α·B/(1 + α) of the shared pool beyond its
    /// guarantee: 1,000,000 B pool, 50,000 B guaranteed → 50,000 + 500,000.
    #[test]
    fn a_pool_gives_the_guarantee_then_its_dynamic_share() {
        let mut b = pools(None, Some((1_000_000, 50_000, PoolLimit::Alpha(1.0))));
        let mut q = 0;
        while b.admit_pools(0, 1, 0, 100, true).is_ok() {
            b.add(0, 1, 0, 100);
            q += 100;
        }
        assert!((q as i64 - 550_000).abs() <= 100, "{q}");
        // Another port still has its own guarantee.
        assert!(b.admit_pools(1, 1, 0, 50_000, true).is_ok());
        // Removing frees the shared part exactly.
        b.remove(0, 1, 0, q);
        assert_eq!(b.egress_pool.as_ref().unwrap().free(), 1_000_000);
    }

    /// A static ingress limit of 800,000 B per (port, priority) drops the next frame with
    /// reason `ingress_pool`; with the egress side disabled nothing is dropped there.
    #[test]
    fn a_static_ingress_limit_drops_at_the_ingress() {
        let mut b = pools(Some((16_000_000, 0, PoolLimit::Bytes(crate::units::Bytes(800_000)))), None);
        for _ in 0..8 {
            assert!(b.admit_pools(0, 2, 3, 100_000, true).is_ok());
            b.add(0, 2, 3, 100_000);
        }
        assert_eq!(b.admit_pools(0, 2, 3, 1, true), Err(DropReason::IngressPool));
        assert!(b.admit_pools(0, 1, 3, 100_000, true).is_ok(), "another ingress port has its own limit");
    }
}
