//! The scenario reference (`docs/scenario-reference.md`), generated from the config
//! definitions themselves (their doc comments, types and defaults, via a JSON schema),
//! so it cannot drift from the code. A test checks the committed file is current;
//! `cargo run -p pl2-scenario --bin pl2-reference > docs/scenario-reference.md`
//! regenerates it.

use crate::scenario::Scenario;
use serde_json::Value;
use std::fmt::Write;

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

fn type_of(s: &Value) -> String {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        return format!("[{name}](#{})", name.to_lowercase());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array) {
            let parts: Vec<String> = alts.iter().filter(|a| a.get("type") != Some(&Value::from("null"))).map(type_of).collect();
            let optional = alts.len() > parts.len();
            let t = parts.join(" or ");
            return if optional { format!("optional {t}") } else { t };
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return e.iter().map(|v| format!("`{}`", v.as_str().unwrap_or("?"))).collect::<Vec<_>>().join(", ");
    }
    if let Some(c) = s.get("const") {
        return format!("`{}`", c.as_str().unwrap_or("?"));
    }
    match s.get("type") {
        Some(Value::String(t)) if t == "array" => format!("list of {}", s.get("items").map(type_of).unwrap_or_default()),
        Some(Value::String(t)) if t == "object" && s.get("additionalProperties").is_some_and(Value::is_object) => {
            format!("table of {} by name", s.get("additionalProperties").map(type_of).unwrap_or_default())
        }
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => {
            let v: Vec<&str> = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
            format!("optional {}", v.join(" or "))
        }
        _ => s.get("description").map(|_| "see description".into()).unwrap_or_else(|| "any".into()),
    }
}

fn fields_table(out: &mut String, obj: &Value, skip: Option<&str>) {
    let Some(props) = obj.get("properties").and_then(Value::as_object) else { return };
    let required: Vec<&str> = obj.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    out.push_str("| field | type | default | meaning |\n| --- | --- | --- | --- |\n");
    for (name, s) in props {
        if Some(name.as_str()) == skip {
            continue;
        }
        let default = match s.get("default") {
            Some(Value::Object(_)) => "see its section".into(),
            Some(d) => format!("`{}`", one_line(&d.to_string())),
            None if required.contains(&name.as_str()) => "required".into(),
            None => "none".into(),
        };
        let desc = s.get("description").and_then(Value::as_str).map(one_line).unwrap_or_default();
        let _ = writeln!(out, "| `{name}` | {} | {default} | {desc} |", type_of(s));
    }
    out.push('\n');
}

fn section(out: &mut String, name: &str, s: &Value) {
    let _ = writeln!(out, "## {name}\n");
    if let Some(d) = s.get("description").and_then(Value::as_str) {
        let _ = writeln!(out, "{}\n", d.trim());
    }
    fields_table(out, s, None);
    for key in ["oneOf", "anyOf"] {
        if let Some(vs) = s.get(key).and_then(Value::as_array) {
            for v in vs {
                let kind = v.pointer("/properties/kind/const").or_else(|| v.pointer("/properties/kind/enum/0"));
                match kind.and_then(Value::as_str) {
                    Some(k) => {
                        let _ = writeln!(out, "### `kind = \"{k}\"`\n");
                        if let Some(d) = v.get("description").and_then(Value::as_str) {
                            let _ = writeln!(out, "{}\n", d.trim());
                        }
                        fields_table(out, v, Some("kind"));
                    }
                    None => {
                        let d = v.get("description").and_then(Value::as_str).map(one_line).unwrap_or_default();
                        let _ = writeln!(out, "- {}: {d}", type_of(v));
                    }
                }
            }
            out.push('\n');
        }
    }
}

/// Markdown reference of every scenario field.
pub fn scenario_reference() -> String {
    let schema = serde_json::to_value(schemars::schema_for!(Scenario)).expect("schema");
    let mut out = String::from(
        "# Scenario reference\n\nGenerated from the configuration definitions (`cargo run -p pl2-scenario --bin pl2-reference`); do not edit by hand.\nQuantities are strings with units (`\"100Gbps\"`, `\"1us\"`, `\"1500B\"`). A delay distribution is either a plain duration (a constant) or a table with a `kind` (see DelayDist).\n\n",
    );
    section(&mut out, "Scenario (top level)", &schema);
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        for (name, s) in defs {
            section(&mut out, name, s);
        }
    }
    out
}
