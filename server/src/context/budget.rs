//! Token counting and the budget of one model call.

use crate::config::{BudgetConfig, Config, ModelRole};
use crate::llm::ModelClient;
use std::sync::Arc;

/// The conservative token estimate used when the backend cannot tokenize.
///
/// Calibrated on the real tokenizers of the test models (see
/// `tests/fixtures/token_calibration`): every digit, punctuation mark and
/// non-ASCII byte is one token (byte-level BPEs split digits and rare
/// symbols), each run of ASCII letters counts `ceil(len / chars_per_token)`,
/// each run of one whitespace character `ceil(len / whitespace_chars_per_token)`,
/// and the sum is scaled by `estimate_factor`. It never under-counts the samples.
#[derive(Debug, Clone, Copy)]
pub struct TokenEstimator {
    letters_per_token: f32,
    whitespace_per_token: f32,
    factor: f32,
}

impl TokenEstimator {
    /// The estimator configured by `[budget]`.
    pub fn new(b: &BudgetConfig) -> Self {
        Self {
            letters_per_token: b.chars_per_token,
            whitespace_per_token: b.whitespace_chars_per_token,
            factor: b.estimate_factor,
        }
    }

    /// Estimated tokens of `text` (an over-count).
    pub fn estimate(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        let mut units = 0.0f64;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii_alphabetic() || b == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
                    i += 1;
                }
                units += ((i - start) as f64 / self.letters_per_token as f64).ceil();
            } else if b.is_ascii_whitespace() {
                let start = i;
                while i < bytes.len() && bytes[i] == b {
                    i += 1;
                }
                units += ((i - start) as f64 / self.whitespace_per_token as f64).ceil();
            } else {
                // Digits, punctuation, control characters and each byte of a non-ASCII character.
                units += 1.0;
                i += 1;
            }
        }
        (units * self.factor as f64).ceil() as usize
    }
}

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
        let e = TokenEstimator { factor: 1.0, ..TokenEstimator::new(&b) };
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
