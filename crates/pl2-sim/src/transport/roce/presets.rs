//! The DCQCN parameter sets behind `preset`, each value with its source. The reasoning
//! for the values a source leaves open is in `docs/model.md`, "RoCE with DCQCN".
//!
//! - `dcqcn_paper`: Zhu et al., SIGCOMM 2015, §3.1 (the algorithm: F = 5, K = 55 µs,
//!   N = 50 µs, α initially 1, T = 55 µs, B = 10 MB, g = 1/256, R_AI = 40 Mbps). The
//!   paper's own text could not be retrieved to check these against (its PDF is not in
//!   the public corpora searched); each value is instead checked against public
//!   implementations, and none contradicts them except where said:
//!   - the authors' simulator, bobzhuyb/ns3-rdma e8a27d0, sample configuration
//!     `windows/ns-3-dev/x64/Release/mix/config.txt`: `DCTCP_GAIN 0.00390625` (g = 1/256),
//!     `ALPHA_RESUME_INTERVAL 55` (K), `CNP_INTERVAL 50` (N), `FAST_RECOVERY_TIMES 5` (F),
//!     `RATE_AI 40Mb/s`, `RATE_HAI 200Mb/s`, `CLAMP_TARGET_RATE 1`; `qbb-net-device.cc:117-121`
//!     `MinRate` 100 Mb/s. The paper gives no R_HAI and no minimum rate: these two are
//!     the simulator's. Its sample differs on two: `RP_TIMER 60` (T = 60 µs) and
//!     `BYTE_COUNTER 300000000` (300 MB: the byte counter practically off), and it starts
//!     α at 0.5 (`qbb-net-device.cc:204`), not 1;
//!   - htsim's DCQCN (`dcqcn.cpp`): N = 50 µs, one 55 µs period for both the α and the
//!     increase timers, g = 1/256, B = 10,000,000 B, F = 5, α initially 1, and the i-th
//!     hyper increase adding i × R_HAI (`(min(T, BC) − F) × RHAI`); it takes R_AI and
//!     R_HAI as 1/20 and 1/10 of the line rate instead;
//!   - Mellanox's NIC defaults (as google/isekai `rdma_roce_cc_dcqcn.h` lists them from
//!     Mellanox's "DCQCN parameters" note): `initial_alpha_value` 1023 of 1023, α = 1.
//! - `hpcc_mellanox`: HPCC's simulator (alibaba-edu/High-Precision-Congestion-Control
//!   9f4be2a), `simulation/run.py:19-28,99-104` for `--cc dcqcn`: `t_alpha` 1 µs, `t_dec`
//!   4 µs, `t_inc` 300 µs, g = 1/256, `FAST_RECOVERY_TIMES 1`, `CLAMP_TARGET_RATE 0`,
//!   `MIN_RATE 1000Mb/s`, AI = 5 Mbps and HAI = 50 Mbps per 25 Gbps of NIC rate; the
//!   Mellanox algorithm is `rdma-hw.cc:614-739` (no byte counter; CNP as a flag on the ACK
//!   of a marked packet, `:321-322`).
//! - `hpcc_mellanox_win`: the same with `HAS_WIN 1`, `VAR_WIN 1` (`run.py:107-108`).
//! - `sfc_seed`: `../shared/seeds/003_eda4436261382f03.txt:240-251`; what it does not give
//!   is the paper preset's.

use super::config::{RocePreset, SeedAiUnit, SeedReading, SeedTimer};
use crate::layer::dcqcn::{AlphaUpdate, ClampTarget, DcqcnParams, HyperIncrease};
use crate::units::{BitsPerSec, Bytes, Duration};

const fn mbps(m: u64) -> BitsPerSec {
    BitsPerSec(m * 1_000_000)
}

/// `line_rate` × `f`, to the bit per second below.
fn share(line_rate: BitsPerSec, f: f64) -> BitsPerSec {
    BitsPerSec((line_rate.0 as f64 * f) as u64)
}

fn paper(line_rate: BitsPerSec) -> DcqcnParams {
    DcqcnParams {
        line_rate,
        g: 1.0 / 256.0,
        alpha_init: 1.0,
        alpha_timer: Duration::from_us(55),
        alpha_update: AlphaUpdate::OnCnp,
        decrease_interval: Duration::ZERO,
        clamp_target: ClampTarget::Always,
        fast_recovery_steps: 5,
        increase_timer: Duration::from_us(55),
        byte_counter: Some(Bytes(10_000_000)),
        rate_ai: mbps(40),
        rate_hai: mbps(200),
        hyper_increase: HyperIncrease::Multiplied,
        min_rate: mbps(100),
        cnp_interval: Duration::from_us(50),
        cnp_on_ack: false,
        window: None,
        window_scales_with_rate: false,
    }
}

fn hpcc(line_rate: BitsPerSec) -> DcqcnParams {
    DcqcnParams {
        line_rate,
        g: 1.0 / 256.0,
        alpha_init: 1.0,
        alpha_timer: Duration::from_us(1),
        alpha_update: AlphaUpdate::PerTick,
        decrease_interval: Duration::from_us(4),
        clamp_target: ClampTarget::AfterIncrease,
        fast_recovery_steps: 1,
        increase_timer: Duration::from_us(300),
        byte_counter: None,
        // 5 Mb/s and 50 Mb/s per 25 Gb/s (run.py:100-101).
        rate_ai: share(line_rate, 5e6 / 25e9),
        rate_hai: share(line_rate, 50e6 / 25e9),
        hyper_increase: HyperIncrease::Constant,
        min_rate: mbps(1000),
        cnp_interval: Duration::ZERO,
        cnp_on_ack: true,
        window: None,
        window_scales_with_rate: false,
    }
}

fn seed(reading: SeedReading, line_rate: BitsPerSec) -> DcqcnParams {
    let (decrease_interval, increase_timer) = match reading.timer {
        SeedTimer::IncreaseTimer => (Duration::ZERO, Duration::from_us(4)),
        // T from Mellanox's default rpg_time_reset and HPCC's t_inc (run.py:104).
        SeedTimer::DecreaseInterval => (Duration::from_us(4), Duration::from_us(300)),
    };
    let (rate_ai, rate_hai) = match reading.ai {
        SeedAiUnit::Gbps => (BitsPerSec(12_500_000), BitsPerSec(25_000_000)),
        SeedAiUnit::LineRateFraction => (share(line_rate, 0.0125), share(line_rate, 0.025)),
    };
    DcqcnParams {
        g: 0.0009813,
        alpha_timer: Duration::from_us(5),
        decrease_interval,
        fast_recovery_steps: 1,
        increase_timer,
        byte_counter: Some(Bytes(2_097_152)),
        rate_ai,
        rate_hai,
        cnp_interval: Duration::from_us(4),
        window: window_at(line_rate, Duration::from_us(15)),
        ..paper(line_rate)
    }
}

/// A window given as the time `line_rate` takes to send it, in bytes (`None` for 0).
pub(super) fn window_at(line_rate: BitsPerSec, t: Duration) -> Option<Bytes> {
    (t.0 > 0).then(|| Bytes(line_rate.bytes_in(t)))
}

/// The values of `p` for a host whose link runs at `line_rate` (`hpcc_mellanox_win`'s
/// window is left to the configuration: HPCC sets it to the network's base RTT).
pub(super) fn preset(p: RocePreset, reading: SeedReading, line_rate: BitsPerSec) -> DcqcnParams {
    match p {
        RocePreset::DcqcnPaper => paper(line_rate),
        RocePreset::HpccMellanox => hpcc(line_rate),
        RocePreset::HpccMellanoxWin => DcqcnParams { window_scales_with_rate: true, ..hpcc(line_rate) },
        RocePreset::SfcSeed => seed(reading, line_rate),
    }
}
