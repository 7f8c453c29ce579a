//! No congestion control (TCP over PL2, where the scheduler prevents congestion): the
//! window never limits sending; only the receive window and the send buffer do.

use super::{AckInfo, CongestionControl, Window};
use crate::units::SimTime;

/// The window value meaning "unlimited".
pub const UNLIMITED: u64 = u64::MAX / 4;

#[derive(Clone, Debug, Default)]
pub struct NoCc;

impl CongestionControl for NoCc {
    fn on_ack(&mut self, w: &mut Window, _a: &AckInfo) {
        w.cwnd = UNLIMITED;
    }
    fn on_loss(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        w.cwnd = UNLIMITED;
        w.ssthresh = UNLIMITED;
    }
    fn on_rto(&mut self, w: &mut Window, _now: SimTime, _flight: u64) {
        w.cwnd = UNLIMITED;
        w.ssthresh = UNLIMITED;
    }
}
