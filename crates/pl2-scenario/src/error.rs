//! Scenario errors. Every error names the field path (`network.link.rate`,
//! `workload[2].load`), the offending value, what is allowed, and a hint; the Python
//! binding maps all of them to one exception type in one place.

use std::fmt;

/// Something a user wrote that pl2 cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ScenarioError {
    /// Dotted path of the field, e.g. `network.switch.alpha` (empty for syntax errors).
    pub path: String,
    pub value: String,
    pub allowed: String,
    pub hint: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.allowed)?;
        } else {
            write!(f, "{}: ", self.path)?;
            if !self.value.is_empty() {
                write!(f, "{} is not allowed; ", self.value)?;
            }
            write!(f, "{}", self.allowed)?;
        }
        if !self.hint.is_empty() {
            write!(f, " (hint: {})", self.hint)?;
        }
        Ok(())
    }
}

impl ScenarioError {
    pub fn field(path: &str, value: impl fmt::Display, allowed: impl Into<String>, hint: impl Into<String>) -> ScenarioError {
        ScenarioError { path: path.into(), value: value.to_string(), allowed: allowed.into(), hint: hint.into() }
    }

    pub fn syntax(e: &toml::de::Error) -> ScenarioError {
        ScenarioError {
            path: String::new(),
            value: String::new(),
            allowed: format!("not valid TOML: {}", e.message()),
            hint: "check quotes, brackets and `key = value` lines".into(),
        }
    }

    pub fn from_serde(e: serde_path_to_error::Error<toml::de::Error>) -> ScenarioError {
        let path = e.path().to_string().replace("?.", "").replace(".?", "");
        let msg = e.inner().message().to_string();
        let hint = if msg.starts_with("unknown field") {
            "check the spelling against the scenario reference (docs/scenario-reference.md)"
        } else if msg.starts_with("unknown variant") {
            "use one of the listed kinds"
        } else if msg.contains("unit") || msg.contains("invalid") {
            "quantities are strings with a unit: \"100Gbps\", \"1us\", \"1500B\""
        } else {
            ""
        };
        ScenarioError { path: if path == "." { String::new() } else { path }, value: String::new(), allowed: msg, hint: hint.into() }
    }

    /// A model-building error from the simulator core, with its field path.
    pub fn from_build(e: pl2_sim::sim::BuildError) -> ScenarioError {
        match e {
            pl2_sim::sim::BuildError::Topology(t) => {
                ScenarioError::field(&format!("network.topology.{}", t.field), "", t.problem, "")
            }
            pl2_sim::sim::BuildError::Invalid { field, problem } => {
                let path = if ["host.", "switch", "link.", "override"].iter().any(|p| field.starts_with(p)) || field == "mtu" {
                    format!("network.{field}")
                } else if let Some(rest) = field.strip_prefix("faults") {
                    format!("fault{rest}")
                } else {
                    field
                };
                ScenarioError::field(&path, "", problem, "")
            }
        }
    }
}
