//! The agent: the runtime loop and the parts it drives. It turns a failing
//! test, a diagnostic or an instruction into a patch that passed the project's
//! tests in a shadow workspace.
//!
//! Adapters open a [`Workspace`] (`workspace.rs`) and start jobs through
//! [`Workspace::start`]. Start reading at [`Runtime::run`] (`runtime.rs`), then the router
//! (`router.rs`, a pure function from the task's state to the next
//! [`Step`], a closed enum), then the steps
//! (`steps.rs`). `target.rs` finds the file a fix edits, `observed.rs` which
//! traced call computed a wrong value; `coder.rs` builds the coder's prompt,
//! `focused.rs` the narrow one of an attempt at one suspect; `critic.rs` and `memory_step.rs` judge and remember;
//! `strategy.rs` asks the user what to try when the attempts ran out.
//!
//! Architecture Invariant: this module never imports `lsp`, `acp` or `cli`; they
//! are adapters over it. A task's state changes only inside the runtime loop and
//! the steps it runs, each change persisted through `Task::record`/`Task::save`
//! (events, then a checkpoint); the router, the target ranking, the edit parsing
//! and the memory policy are pure.

mod add_tests;
mod ask;
mod coder;
mod critic;
mod diagnostic_check;
mod env;
mod error;
mod fix_all;
mod focused;
mod locate;
mod memory_step;
mod observed;
pub mod plan;
mod progress;
mod reply_edit;
mod report;
mod request;
mod router;
mod runtime;
mod state;
mod steps;
mod strategy;
pub mod target;
mod test_output;
pub mod tools;
mod workspace;

pub use add_tests::{subject_at, Subject};
pub use ask::{prepare_answer, AnswerRequest};
pub use env::{read_workspace_file, AgentEnv, DiskSources, SourceView};
pub use error::AgentError;
pub use fix_all::{
    fix_all, DiagnosticOutcome, FixAllContext, FixAllError, FixAllProgress, FixAllReport, FixAllState, OutcomeKind,
};
pub use memory_step::MemoryContext;
pub use progress::describe_event;
pub use report::{ReportStatus, TaskReport};
pub use request::{AgentRequest, DiagnosticOrigin, Location, TaskOptions};
pub use router::{next_step, Completion, Decision, RouterLimits, Step};
pub use runtime::{Runtime, PLAN_STEP_ORIGIN};
pub use state::{AttemptRecord, AttemptResult, CriticOutcome, Target, TaskProgress, TestSummary};
pub use steps::{baseline_run, run_tests};
pub use strategy::StrategyEffects;
pub use workspace::{document_request, Job, JobContext, Workspace, WorkspaceError, WorkspaceParts};

#[cfg(test)]
mod diagnostic_check_tests;
#[cfg(test)]
mod scripted_model;
#[cfg(test)]
mod strategy_tests;
#[cfg(test)]
mod tests;
