//! Long-term memory: items persisted in the workspace store ([`MemoryStore`]),
//! retrieval by BM25 + weight + recency (+ cosine with embeddings)
//! ([`MemoryRetriever`]), and the pure write policy ([`policy::decide`]).
//!
//! Architecture Invariant: items below `memory.min_weight_for_context` never
//! leave [`MemoryRetriever::for_context`]; the policy is a pure function and
//! writes nothing itself (the runtime applies its [`MemoryDecision`](crate::contracts::MemoryDecision)).

pub mod policy;
mod retrieval;
mod store;

pub use retrieval::{MemoryRetriever, RetrievalError, ScoredMemory};
pub use store::{DuplicateMatch, MemoryFilter, MemoryStore, NewMemory};
