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

    /// A type or value error from deserialising `text`. The path is the field's where
    /// serde knows it; inside a table chosen by `kind` (a workload, the topology, a
    /// transport) serde only knows the table, so the field is found in `text` by the
    /// value the message quotes.
    pub fn from_serde(e: serde_path_to_error::Error<toml::de::Error>, text: &str) -> ScenarioError {
        let mut path = e.path().to_string().replace("?.", "").replace(".?", "");
        if path == "." {
            path.clear();
        }
        let msg = e.inner().message().to_string();
        if let Some(field) = field_holding(text, &path, &msg) {
            path = if path.is_empty() { field } else { format!("{path}.{field}") };
        }
        let hint = if msg.starts_with("unknown field") {
            "check the spelling against the scenario reference (docs/scenario-reference.md)"
        } else if msg.starts_with("unknown variant") {
            "use one of the listed values"
        } else if msg.contains("as i128") || msg.contains("expected u64") && msg.contains("integer") && msg.contains('-') {
            "a whole number from 0 to 18446744073709551615"
        } else if ["expected u8", "expected u16", "expected u32", "expected u64"].iter().any(|t| msg.contains(t)) {
            "a whole number ≥ 0, without quotes (e.g. 6)"
        } else if msg.contains("expected f64") {
            "a plain number without quotes or % (e.g. 0.6 for 60%)"
        } else if msg.contains("unit") || msg.contains("invalid") {
            "quantities are strings with a unit: \"100Gbps\", \"1us\", \"1500B\""
        } else {
            ""
        };
        ScenarioError { path, value: String::new(), allowed: msg, hint: hint.into() }
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

/// The key of the table at `path` in `text` whose value is the one a serde message quotes
/// (`invalid type: string "six"`, `invalid value: integer \`-1\``), when exactly one key
/// holds it.
fn field_holding(text: &str, path: &str, msg: &str) -> Option<String> {
    let quoted = quoted_value(msg)?;
    let mut node: &toml::Value = &text.parse::<toml::Table>().ok().map(toml::Value::Table)?;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, i.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        node = node.get(name)?;
        if let Some(i) = index {
            node = node.get(i)?;
        }
    }
    let table = node.as_table()?;
    let mut hits = table.iter().filter(|(_, v)| **v == quoted).map(|(k, _)| k.clone());
    let first = hits.next()?;
    hits.next().is_none().then_some(first)
}

/// The value a serde message quotes, as TOML: `string "x"`, `unknown variant \`x\``,
/// `integer \`n\``, `floating point \`x\``, `boolean \`b\``.
fn quoted_value(msg: &str) -> Option<toml::Value> {
    if let Some(rest) = msg.split_once("string \"").map(|(_, r)| r) {
        return rest.rsplit_once('"').map(|(v, _)| toml::Value::String(v.to_string()));
    }
    let inner = msg.split_once('`').and_then(|(_, r)| r.split_once('`')).map(|(v, _)| v)?;
    if msg.starts_with("unknown variant `") {
        Some(toml::Value::String(inner.to_string()))
    } else if msg.contains("integer `") {
        inner.parse::<i64>().ok().map(toml::Value::Integer)
    } else if msg.contains("floating point `") {
        inner.parse::<f64>().ok().map(toml::Value::Float)
    } else if msg.contains("boolean `") {
        inner.parse::<bool>().ok().map(toml::Value::Boolean)
    } else {
        None
    }
}
