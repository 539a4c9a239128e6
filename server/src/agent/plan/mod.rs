//! Requests that span files: the router decides direct or planned, the planner
//! splits a request into steps (schema-constrained JSON, validated here into a
//! [`TaskGraph`]), and the scheduler runs each step as a coder task on one file
//! over the changes of the steps before it, several at once where they are
//! independent. One task yields one patch, tested once more as a whole.
//!
//! Start reading at [`run_request`] (`run.rs`), then `planner.rs` and
//! `graph.rs` (validation), then `schedule.rs`.
//!
//! Architecture Invariant: the user's files are never written here. Steps see
//! earlier steps' changes through [`LayeredSources`]; a query step never writes,
//! even in the shadow, and a command step runs (through the tool registry, the
//! permission gate and the sandbox) in a shadow that is thrown away.

mod graph;
mod layered;
mod log;
mod planner;
mod route;
mod run;
mod run_end;
mod schedule;
mod tool_steps;

pub(crate) use graph::normalize as normalize_path;
pub use graph::{suggest, validate, PlanError, TaskGraph};
pub use layered::LayeredSources;
pub use log::TaskLog;
pub use planner::{known_files, make_plan, planner_messages, Planned, PlannerError};
pub use route::{named_files, route, said_phrase, Route};
pub use run::{run_request, PlanOutcome, StepResult};
pub use schedule::{run_graph, StepState};

#[cfg(test)]
mod tests;
