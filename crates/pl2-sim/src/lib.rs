//! pl2-sim: the simulator core. Integer-picosecond event engine, the network model
//! (links, NICs, host delay lines, switches with shared buffers), transports as sans-IO
//! state machines, workloads and metrics. No I/O and no global state: many simulations
//! can run in one process.

pub mod config;
pub mod dist;
pub mod engine;
pub mod error;
pub mod framing;
pub mod layer;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod prefetch;
pub mod programs;
pub mod radix_heap;
#[cfg(test)]
mod queue_check;
pub mod timing_wheel;
pub mod rng;
pub mod sim;
pub mod slab;
pub mod transport;
pub mod units;
pub mod workload;
