//! The error of building a model ([`BuildError`]), shared by the simulation's wiring and
//! the modules it builds (transports, switch programs), so neither imports the other for it.

use crate::net::topology::TopologyError;

/// A model that cannot be built. Each variant names the field and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Topology(#[from] TopologyError),
    #[error("{field}: {problem}")]
    Invalid { field: String, problem: String },
}

/// A [`BuildError::Invalid`]: `field` holds a value that cannot be built, for `problem`.
pub fn invalid(field: impl Into<String>, problem: impl Into<String>) -> BuildError {
    BuildError::Invalid { field: field.into(), problem: problem.into() }
}
