//! `[[workload]]` tables: Poisson traffic from a size distribution, one-shot patterns
//! (incast, outcast, permutation, all-to-all), persistent closed-loop streams, and
//! users' message-list files.

use pl2_sim::units::{Bytes, Duration};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A set of hosts: `"all"`, a range `"0..4"` (end excluded), or a list `[0, 2, 5]`.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum HostSet {
    #[default]
    All,
    Range(u32, u32),
    List(Vec<u32>),
}

impl HostSet {
    /// The hosts, checked against the network's `n` hosts.
    pub fn resolve(&self, n: u32) -> Result<Vec<u32>, String> {
        let v: Vec<u32> = match self {
            HostSet::All => (0..n).collect(),
            HostSet::Range(a, b) => (*a..*b).collect(),
            HostSet::List(l) => l.clone(),
        };
        if v.is_empty() {
            return Err("the set is empty".into());
        }
        if let Some(h) = v.iter().find(|&&h| h >= n) {
            return Err(format!("host {h} does not exist (hosts are 0..{n})"));
        }
        Ok(v)
    }
}

impl schemars::JsonSchema for HostSet {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "HostSet".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "description": "\"all\", a range \"0..4\" (end excluded), or a list of host indices [0, 2, 5]" })
    }
}

impl Serialize for HostSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HostSet::All => s.serialize_str("all"),
            HostSet::Range(a, b) => s.serialize_str(&format!("{a}..{b}")),
            HostSet::List(l) => l.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for HostSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = HostSet;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"all\", a range \"0..4\", or a list of host indices [0, 1]")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<HostSet, E> {
                if v == "all" {
                    return Ok(HostSet::All);
                }
                let bad = || E::custom(format!("{v:?} is not a host set; write \"all\", \"0..4\" or [0, 1]"));
                let (a, b) = v.split_once("..").ok_or_else(bad)?;
                let (a, b): (u32, u32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                if a >= b {
                    return Err(E::custom(format!("range {v:?} is empty; the end is excluded")));
                }
                Ok(HostSet::Range(a, b))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<HostSet, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element::<u32>()? {
                    v.push(x);
                }
                Ok(HostSet::List(v))
            }
        }
        d.deserialize_any(V)
    }
}

fn one() -> u32 {
    1
}
fn one16() -> u16 {
    1
}
fn all() -> HostSet {
    HostSet::All
}

/// One source of traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// Open-loop Poisson message arrivals at each host of `hosts`, offering `load` (a
    /// fraction of the host's link rate counted in wire bytes, ≤ 1) with sizes from
    /// `sizes`: a built-in distribution (`w1`–`w5`, `websearch`, `fb_hadoop`,
    /// `google_rpc_2008`, `ali_storage_2019`), a fixed size (`"6KiB"`), or a file path
    /// (with `sizes_format` = `homa` | `homa_packets` | `percent`). Messages go to
    /// `dests` (default: uniformly to every other host) and wait for a free thread of
    /// the sender's pool.
    Poisson {
        #[serde(default = "all")]
        hosts: HostSet,
        load: f64,
        sizes: String,
        #[serde(default)]
        sizes_format: Option<String>,
        /// Keep only sizes ≤ this (the conditional distribution). Default none.
        #[serde(default)]
        truncate: Option<Bytes>,
        #[serde(default = "all")]
        dests: HostSet,
        #[serde(default)]
        priority: u8,
        #[serde(default)]
        start: Duration,
        /// Last arrival before this. Default: the run's duration.
        #[serde(default)]
        stop: Option<Duration>,
    },
    /// Every host of `senders` sends `count` messages of `size` to `receiver`, the
    /// first at `start`, then every `interval`.
    Incast {
        senders: HostSet,
        receiver: u32,
        size: Bytes,
        #[serde(default = "one")]
        count: u32,
        #[serde(default)]
        interval: Duration,
        #[serde(default)]
        start: Duration,
        #[serde(default)]
        priority: u8,
    },
    /// `sender` sends `count` messages of `size` to every host of `receivers`.
    Outcast {
        sender: u32,
        receivers: HostSet,
        size: Bytes,
        #[serde(default = "one")]
        count: u32,
        #[serde(default)]
        interval: Duration,
        #[serde(default)]
        start: Duration,
        #[serde(default)]
        priority: u8,
    },
    /// A random derangement of all hosts: each sends one message of `size` to another.
    Permutation {
        size: Bytes,
        #[serde(default)]
        start: Duration,
        #[serde(default)]
        priority: u8,
    },
    /// Every host of `hosts` sends one message of `size` to every other.
    AllToAll {
        #[serde(default = "all")]
        hosts: HostSet,
        size: Bytes,
        #[serde(default)]
        start: Duration,
        #[serde(default)]
        priority: u8,
    },
    /// Closed loop: `threads` threads on each host of `senders` always have a message of
    /// `size` for `receiver`; the next starts as soon as the transport releases the
    /// thread. Needs `network.host.threads` ≥ `threads`.
    Persistent {
        senders: HostSet,
        receiver: u32,
        size: Bytes,
        #[serde(default = "one16")]
        threads: u16,
        #[serde(default)]
        start: Duration,
        #[serde(default)]
        priority: u8,
    },
    /// Messages from a CSV file `time,src,dst,size,thread,priority` (see the user guide).
    List { file: String },
}
