//! The simulator core's integration tests, in one binary. Each module checks the model
//! against something independent: an analytic result, a conservation law, or a
//! hand-worked example.

mod model {
    pub mod common;
    mod apps;
    mod breakdown;
    mod determinism;
    mod errors;
    mod homa;
    mod host_cpu;
    mod hybrid;
    mod framing_goodput;
    mod incast_buffer;
    mod md1_queue;
    mod ndp;
    mod offload;
    mod overrides;
    mod paths;
    mod pfc;
    mod sfc;
    mod pl2;
    mod pl2_features;
    mod pl2_racks;
    mod queue_mean;
    mod phost;
    mod polo;
    mod polo_timelines;
    mod raw_loss;
    mod rds;
    mod roce;
    mod tcp;
    mod tcp_handshake;
    mod tcp_pl2;
    mod tcp_rack;
    mod trace;
    mod trimming;
    mod unloaded_latency;
}
