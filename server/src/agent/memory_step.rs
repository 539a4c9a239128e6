//! Long-term memory in the loop: what a coder is reminded of, and the write of
//! an error and its fix after a patch passed (the policy decides, this applies).

use super::env::AgentEnv;
use super::state::TaskProgress;
use crate::config::PromptId;
use crate::contracts::{MemoryDecision, MemoryKind, MemorySource};
use crate::memory::policy::{decide, PolicyInput, SafetySignals};
use crate::memory::{MemoryRetriever, MemoryStore, NewMemory};
use serde_json::json;

/// Memory as the context builder sees it: past fixes above the weight floor.
pub struct MemoryContext {
    retriever: MemoryRetriever,
}

impl MemoryContext {
    /// Memory of the workspace store of `env` (text search; embeddings when configured).
    pub fn new(env: &AgentEnv) -> Self {
        let store = MemoryStore::new(env.bus.store().clone());
        let embedder = (!env.config.memory.embedding_model.is_empty()).then(|| env.model.clone());
        Self { retriever: MemoryRetriever::new(store, env.config.memory.clone(), embedder) }
    }
}

#[async_trait::async_trait]
impl crate::context::MemorySource for MemoryContext {
    async fn relevant(&self, query: &str, limit: usize) -> Vec<String> {
        match self.retriever.for_context(query, limit).await {
            Ok(found) => found.into_iter().map(|m| m.entry.text).collect(),
            Err(e) => {
                tracing::warn!(error = %e, "memory is unavailable for this call; going on without it");
                Vec::new()
            }
        }
    }
}

/// Secrets must never be remembered: a cheap scan for the usual shapes.
fn looks_secret(text: &str) -> bool {
    const MARKERS: [&str; 6] = ["-----BEGIN", "api_key", "apikey", "secret_key", "password=", "token="];
    let lower = text.to_lowercase();
    MARKERS.iter().any(|m| lower.contains(&m.to_lowercase()))
}

/// What the memory step did.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryWrite {
    pub text: String,
    pub decision: MemoryDecision,
    /// The item stored or merged into.
    pub id: Option<String>,
}

/// The memory entry for the passing attempt of `p`: the error and its fix.
pub fn candidate_text(env: &AgentEnv, p: &TaskProgress) -> Option<String> {
    let target = p.target.as_ref()?;
    let ok = p.success()?;
    let diff = p.patch_of(ok)?.diff();
    let diff: String =
        diff.lines().skip(2).take(env.config.memory.remembered_diff_lines as usize).collect::<Vec<_>>().join("\n");
    let message: String = target.message.lines().take(3).collect::<Vec<_>>().join(" ");
    let symbols = if ok.changed_symbols.is_empty() { "-".to_string() } else { ok.changed_symbols.join(", ") };
    env.prompts
        .render(
            PromptId::MEMORY_ERROR_FIX,
            &[("message", message.trim()), ("path", &target.path), ("symbols", &symbols), ("change", &diff)],
        )
        .ok()
}

/// Decides with the write policy and applies the decision.
pub async fn write(
    env: &AgentEnv,
    task_id: &str,
    p: &TaskProgress,
    text: String,
) -> Result<MemoryWrite, crate::store::StoreError> {
    let store = MemoryStore::new(env.bus.store().clone());
    let duplicate = store.find_near_duplicate(&text, MemoryKind::ErrorFix).await?;
    let critic = p.critic.as_ref().and_then(|c| c.score());
    let input = PolicyInput {
        critic,
        kind: MemoryKind::ErrorFix,
        source: MemorySource::Tool,
        // The tests passed: the runtime trusts the fix fully; the critic adjusts.
        runtime_weight: 1.0,
        duplicate: duplicate.as_ref(),
        safety: SafetySignals { unsafe_content: looks_secret(&text) },
    };
    let decision = decide(&input, &env.config.memory);
    let candidate = NewMemory {
        text: text.clone(),
        kind: MemoryKind::ErrorFix,
        source: MemorySource::Tool,
        weight: 1.0,
        task_id: Some(task_id.to_string()),
        session_id: None,
        metadata: json!({"path": p.target.as_ref().map(|t| t.path.clone())}),
    };
    let id = store.apply_decision(&decision, candidate).await?;
    Ok(MemoryWrite { text, decision, id })
}
