//! pl2-scenario: the scenario layer. A TOML file becomes a validated, canonical
//! [`Scenario`]; a scenario becomes a simulation run; a run becomes Arrow tables, Parquet
//! files and a JSON summary. Arrow and Parquet live here, never in the engine.

mod columns;
pub mod compile;
pub mod error;
pub mod heap_trim;
pub mod homa;
pub mod output;
pub mod page_store;
pub mod provenance;
pub mod reference;
pub mod row_groups;
pub mod run;
pub mod scenario;
pub mod table_files;
pub mod summary;
pub mod tables;
pub mod window_stats;
pub mod workload_spec;

pub use error::ScenarioError;
pub use run::{run_scenario, RunError, RunOutput};
pub use scenario::Scenario;
