//! `[memory]`: long-term memory retrieval weights and the write policy thresholds.
//! The meaning of each key is documented in `config/tinycoder.toml`.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[memory]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// Items below this weight never reach a model's context.
    pub min_weight_for_context: f32,
    /// Retrieval: weight of the normalised BM25 text score.
    pub text_weight: f32,
    /// Retrieval: weight of the cosine similarity (embeddings only).
    pub semantic_weight: f32,
    /// Retrieval: weight of the item's own weight.
    pub item_weight: f32,
    /// Retrieval: weight of the recency term.
    pub recency_weight: f32,
    /// Retrieval: BM25 score at which the text term is half its weight.
    pub text_half_score: f32,
    /// Retrieval: age in days at which recency halves.
    pub recency_half_life_days: f32,
    /// Retrieval: full-text candidates scored per search.
    pub candidates: u32,
    /// Embedding model name; empty = full-text retrieval only.
    pub embedding_model: String,
    /// Lines of a fix's diff kept in its memory entry.
    pub remembered_diff_lines: u32,
    /// Policy: minimum critic safety score to store anything.
    pub policy_min_safety: f32,
    /// Policy: share of the critic's weight in the blended weight.
    pub policy_critic_share: f32,
    /// Policy: share of mean(correctness, usefulness) in the blended weight.
    pub policy_quality_share: f32,
    /// Policy: share of the runtime's weight in the blended weight.
    pub policy_runtime_share: f32,
    /// Policy: blended weights below this are skipped.
    pub policy_min_store_weight: f32,
    /// Policy: floor weight of items the user states.
    pub policy_user_min_weight: f32,
    /// Policy: similarity at or above which a new item merges into an existing one.
    pub policy_merge_similarity: f32,
    /// Policy: "skip" or "store" when no critic score is available.
    pub policy_critic_fallback: String,
}

impl MemoryConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        let unit = [
            ("memory.min_weight_for_context", self.min_weight_for_context),
            ("memory.text_weight", self.text_weight),
            ("memory.semantic_weight", self.semantic_weight),
            ("memory.item_weight", self.item_weight),
            ("memory.recency_weight", self.recency_weight),
            ("memory.policy_min_safety", self.policy_min_safety),
            ("memory.policy_critic_share", self.policy_critic_share),
            ("memory.policy_quality_share", self.policy_quality_share),
            ("memory.policy_runtime_share", self.policy_runtime_share),
            ("memory.policy_min_store_weight", self.policy_min_store_weight),
            ("memory.policy_user_min_weight", self.policy_user_min_weight),
            ("memory.policy_merge_similarity", self.policy_merge_similarity),
        ];
        for (key, value) in unit {
            if !(0.0..=1.0).contains(&value) {
                return Err(Invalid::new(key, value, "a number from 0 to 1"));
            }
        }
        if self.policy_critic_share + self.policy_quality_share + self.policy_runtime_share <= 0.0 {
            return Err(Invalid::new(
                "memory.policy_critic_share",
                self.policy_critic_share,
                "shares summing to more than 0",
            ));
        }
        if self.recency_half_life_days <= 0.0 || !self.recency_half_life_days.is_finite() {
            return Err(Invalid::new(
                "memory.recency_half_life_days",
                self.recency_half_life_days,
                "a positive number of days",
            ));
        }
        if self.text_half_score <= 0.0 || !self.text_half_score.is_finite() {
            return Err(Invalid::new("memory.text_half_score", self.text_half_score, "a positive number"));
        }
        if self.candidates == 0 {
            return Err(Invalid::new("memory.candidates", 0, "at least 1"));
        }
        if !matches!(self.policy_critic_fallback.as_str(), "skip" | "store") {
            return Err(Invalid::new(
                "memory.policy_critic_fallback",
                &self.policy_critic_fallback,
                "\"skip\" or \"store\"",
            ));
        }
        Ok(())
    }
}
