//! Token counting and the budget of one model call.

use crate::config::{BudgetConfig, Config, ModelRole};
use crate::llm::ModelClient;
use std::sync::Arc;

pub use crate::llm::TokenEstimator;

/// Counts tokens: exactly through the model server where it can tokenize, else by [`TokenEstimator`].
#[derive(Clone)]
pub struct TokenCounter {
    estimator: TokenEstimator,
    exact: Option<(Arc<dyn ModelClient>, ModelRole)>,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCounter").field("exact", &self.exact.as_ref().map(|(_, r)| *r)).finish()
    }
}

impl TokenCounter {
    /// A counter that only estimates.
    pub fn estimating(budget: &BudgetConfig) -> Self {
        Self { estimator: TokenEstimator::new(budget), exact: None }
    }

    /// A counter asking `client` for exact counts of `role`'s model, estimating when it cannot.
    pub fn with_model(budget: &BudgetConfig, client: Arc<dyn ModelClient>, role: ModelRole) -> Self {
        Self { estimator: TokenEstimator::new(budget), exact: Some((client, role)) }
    }

    /// The estimator (synchronous; used for ranking decisions before the exact check).
    pub fn estimator(&self) -> TokenEstimator {
        self.estimator
    }

    /// Tokens of `text`, and whether the count is exact.
    pub async fn count(&self, text: &str) -> (usize, bool) {
        if let Some((client, role)) = &self.exact {
            match client.count_tokens(*role, text).await {
                Ok(Some(n)) => return (n, true),
                Ok(None) => {}
                Err(e) => tracing::debug!("exact token count unavailable ({e}); estimating"),
            }
        }
        (self.estimator.estimate(text), false)
    }
}

/// How a model's context window is shared out for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TokenBudget {
    pub num_ctx: usize,
    pub reserved_output: usize,
    pub safety_margin: usize,
}

impl TokenBudget {
    /// The budget of `role`'s model as configured.
    pub fn for_role(config: &Config, role: ModelRole) -> Self {
        Self {
            num_ctx: config.models.get(role).num_ctx as usize,
            reserved_output: config.budget.reserved_output_tokens as usize,
            safety_margin: config.budget.safety_margin_tokens as usize,
        }
    }

    /// Tokens the prompt may take.
    pub fn available(&self) -> usize {
        self.num_ctx.saturating_sub(self.reserved_output + self.safety_margin)
    }

    /// `prompt + reserved output + safety margin ≤ num_ctx`.
    pub fn can_fit(&self, prompt_tokens: usize) -> bool {
        prompt_tokens + self.reserved_output + self.safety_margin <= self.num_ctx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_counts_classes() {
        let b = crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).unwrap().config.budget;
        let e = TokenEstimator::with_ratios(b.chars_per_token, b.whitespace_chars_per_token, 1.0);
        assert_eq!(e.estimate(""), 0);
        assert_eq!(e.estimate("12"), 2);
        assert_eq!(e.estimate("abcdefghij"), 2); // 10 letters / 5
        assert_eq!(e.estimate("é"), 2); // two UTF-8 bytes
        assert_eq!(e.estimate("a(b)"), 4);
        let t = TokenBudget { num_ctx: 100, reserved_output: 30, safety_margin: 10 };
        assert!(t.can_fit(60) && !t.can_fit(61));
        assert_eq!(t.available(), 60);
    }
}
