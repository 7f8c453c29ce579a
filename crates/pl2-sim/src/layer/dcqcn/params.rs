//! DCQCN's parameters, every one decided (a preset applied): what the reaction point
//! ([`super::rp`]) reads. The scenario sets them through the transport over the layer
//! (RoCE's `preset` and fields, `transport/roce/config.rs`).

use crate::units::{BitsPerSec, Bytes, Duration};
use serde::{Deserialize, Serialize};

/// When α takes in a CNP.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AlphaUpdate {
    /// α ← (1 − g)α + g at each CNP, and α ← (1 − g)α after each α timer with no CNP;
    /// a CNP restarts the timer (paper §3.1 eqs. 1-2; ns3-rdma `qbb-net-device.cc:1406-1409`).
    OnCnp,
    /// A free-running α timer: per tick α ← (1 − g)α + g if a CNP arrived since the last
    /// tick, else (1 − g)α (HPCC `UpdateAlphaMlx`, `rdma-hw.cc:618-636`).
    PerTick,
}

/// When a rate cut first remembers the current rate as the target.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClampTarget {
    /// At every cut (paper eq. 1, RT = RC; ns3-rdma's sample `CLAMP_TARGET_RATE 1`).
    Always,
    /// Only if the rate increased since the last cut, so back-to-back cuts keep the
    /// older, higher target (HPCC `CLAMP_TARGET_RATE 0`, `rdma-hw.cc:661-667`).
    AfterIncrease,
}

/// Hyper increase's step.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HyperIncrease {
    /// The i-th hyper-increase event adds i × R_HAI (QCN; ns3-rdma `rpr_hyper_increase`,
    /// `qbb-net-device.cc:1352-1357`).
    Multiplied,
    /// Every hyper-increase event adds R_HAI (HPCC `HyperIncreaseMlx`, `rdma-hw.cc:724-739`).
    Constant,
}

/// Every DCQCN parameter decided (preset applied), for a host of a given link rate.
#[derive(Clone, Debug, PartialEq)]
pub struct DcqcnParams {
    pub line_rate: BitsPerSec,
    pub g: f64,
    pub alpha_init: f64,
    pub alpha_timer: Duration,
    pub alpha_update: AlphaUpdate,
    pub decrease_interval: Duration,
    pub clamp_target: ClampTarget,
    pub fast_recovery_steps: u32,
    pub increase_timer: Duration,
    /// `None`: no byte counter.
    pub byte_counter: Option<Bytes>,
    pub rate_ai: BitsPerSec,
    pub rate_hai: BitsPerSec,
    pub hyper_increase: HyperIncrease,
    pub min_rate: BitsPerSec,
    pub cnp_interval: Duration,
    pub cnp_on_ack: bool,
    /// Bytes in flight allowed at line rate (`None`: no window).
    pub window: Option<Bytes>,
    pub window_scales_with_rate: bool,
}
