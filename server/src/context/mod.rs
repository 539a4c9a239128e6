//! The context builder: for a request (a diagnostic at a location, a
//! selection with an instruction, a question) it assembles the system prompt,
//! the request, code, memory and the repo map, and proves with a
//! tokenizer-faithful count that `system + reserved output + memory + code ≤ num_ctx`.
//!
//! Architecture invariant: every model call's prompt goes through
//! [`ContextBuilder::build`]; a context that cannot fit is an error, never a
//! silent truncation by the model server.

mod budget;
mod builder;
mod line_index;

pub use budget::{TokenBudget, TokenCounter, TokenEstimator};
pub use builder::{
    BudgetBreakdown, BuiltContext, ContextBuilder, ContextError, ContextExtras, ContextRequest, ContextSection,
    MemorySource, NoMemory, RequestKind, SectionKind, StaticMemory,
};
pub use line_index::{FileOutline, OutlineEntry};
