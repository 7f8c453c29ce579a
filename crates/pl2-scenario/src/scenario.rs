//! The scenario file: one TOML document describing a whole run. Every section is a typed
//! struct with documented defaults (most live beside the model they configure in
//! `pl2-sim`); unknown keys are errors. [`Scenario::parse`] gives either a scenario or a
//! [`ScenarioError`] naming the field path.

use crate::error::ScenarioError;
use crate::workload_spec::Workload;
use pl2_sim::config::NetworkConfig;
use pl2_sim::sim::{FaultSpec, MetricsConfig, TransportConfig};
use pl2_sim::units::Duration;
use serde::{Deserialize, Serialize};

/// How long to run and which messages count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// Simulated time at which the run stops (unless it stops earlier). Default 10 ms.
    pub duration: Duration,
    /// Messages arriving before this are excluded from statistics. Default 0.
    pub warmup: Duration,
    /// Messages arriving at or after this are excluded from statistics. Default: the
    /// run's duration.
    pub measure_until: Option<Duration>,
    /// Stop as soon as every message of finite workloads is delivered, or lost for good (a
    /// frame dropped by a transport that never resends, raw Ethernet: nothing can finish
    /// it). Default true.
    pub stop_when_delivered: bool,
    /// Stop after this many events (a safety net for exploratory runs). Default none.
    pub event_budget: Option<u64>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            duration: Duration::from_ms(10),
            warmup: Duration::ZERO,
            measure_until: None,
            stop_when_delivered: true,
            event_budget: None,
        }
    }
}

/// A complete scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-form name, shown in outputs. Default empty.
    #[serde(default)]
    pub name: String,
    /// Master seed: every random stream derives from it and a component name. Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Duration, warm-up and measurement window: `[run]`.
    #[serde(default)]
    pub run: RunConfig,
    /// Topology, links, hosts, switches, framing: `[network]`.
    #[serde(default)]
    pub network: NetworkConfig,
    /// The default transport, selected by `kind`: `[transport]`. Every workload uses it
    /// unless it names one of `transports`.
    #[serde(default)]
    pub transport: TransportConfig,
    /// Further transports by name, `[transports.NAME]`, for runs that mix them (say TCP
    /// RPCs beside UDP background): a workload selects one with `transport = "NAME"`.
    /// Every host runs all of them. Transports over PL2 share the ToR's scheduler and
    /// must configure it alike. At most 7. Default none.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub transports: std::collections::BTreeMap<String, TransportConfig>,
    /// Traffic: any number of `[[workload]]` tables.
    #[serde(default, rename = "workload")]
    pub workloads: Vec<Workload>,
    /// Fault injection: any number of `[[fault]]` tables.
    #[serde(default, rename = "fault")]
    pub faults: Vec<FaultSpec>,
    /// What to record: `[metrics]`.
    #[serde(default)]
    pub metrics: MetricsConfig,
}

fn default_seed() -> u64 {
    1
}

impl Scenario {
    /// Parses and fully validates a scenario. `base_dir` resolves relative file paths.
    pub fn parse(text: &str, base_dir: &std::path::Path) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::parse(text).map_err(|e| ScenarioError::syntax(&e))?;
        let mut sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| ScenarioError::from_serde(e, text))?;
        // Derived settings (Homa's RTTbytes and cut-offs) join the canonical form.
        crate::homa::derive(&mut sc, base_dir)?;
        sc.check(base_dir)?;
        Ok(sc)
    }

    /// The canonical form: defaults filled, units normalised, keys in a fixed order.
    /// Parsing it gives back the same scenario.
    pub fn canonical(&self) -> String {
        toml::to_string(self).expect("a scenario always serialises")
    }

    /// A stable 16-hex-digit hash of the canonical form.
    pub fn hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(self.canonical().as_bytes());
        d.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// Files the scenario reads (size distributions, message lists), as written.
    pub fn input_files(&self) -> Vec<String> {
        use crate::workload_spec::WorkloadConfig;
        let mut v = Vec::new();
        for w in &self.workloads {
            match &w.kind {
                WorkloadConfig::Poisson { sizes, .. }
                    if sizes.parse::<pl2_sim::units::Bytes>().is_err() && !pl2_sim::workload::BUILTIN_NAMES.contains(&sizes.as_str()) =>
                {
                    v.push(sizes.clone())
                }
                WorkloadConfig::List { file } => v.push(file.clone()),
                _ => {}
            }
        }
        v
    }

    /// The identity of a run: the hash of the canonical form and of the contents of every
    /// file it reads, so editing a distribution file changes the identity while moving
    /// the scenario and its files elsewhere does not.
    pub fn identity(&self, base_dir: &std::path::Path) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(self.canonical().as_bytes());
        for f in self.input_files() {
            h.update(f.as_bytes());
            h.update(std::fs::read(base_dir.join(&f)).unwrap_or_default());
        }
        h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// Cross-field checks serde cannot do (the model's own checks run when it is built).
    fn check(&self, base_dir: &std::path::Path) -> Result<(), ScenarioError> {
        let r = &self.run;
        if r.duration.0 == 0 {
            return Err(ScenarioError::field("run.duration", "0s", "a positive duration", "e.g. \"10ms\""));
        }
        if r.warmup >= r.duration {
            return Err(ScenarioError::field(
                "run.warmup",
                r.warmup,
                format!("shorter than run.duration ({})", r.duration),
                "shorten the warm-up or lengthen the run",
            ));
        }
        if let Some(m) = r.measure_until {
            if m <= r.warmup {
                return Err(ScenarioError::field("run.measure_until", m, "later than run.warmup", "or omit it to measure until the end"));
            }
        }
        crate::compile::compile(self, base_dir).map(|_| ())
    }
}
