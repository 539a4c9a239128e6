//! Refusing a prompt that cannot fit the model's context window, before sending it.

use super::{ChatMessage, LlmError};
use crate::config::{BudgetConfig, ModelConfig, ModelRole};

/// How many tokens a prompt needs, by estimate or by the server's tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptSize {
    pub tokens: usize,
    /// True when counted by the model's tokenizer, false when estimated from bytes.
    pub exact: bool,
}

/// The conservative token estimate used when the backend cannot tokenize.
///
/// Calibrated on the real tokenizers of the test models (see
/// `tests/fixtures/token_calibration`): every digit, punctuation mark and
/// non-ASCII byte is one token (byte-level BPEs split digits and rare
/// symbols), each run of ASCII letters counts `ceil(len / chars_per_token)`,
/// each run of one whitespace character `ceil(len / whitespace_chars_per_token)`,
/// and the sum is scaled by `estimate_factor`. It never under-counts the samples.
#[derive(Debug, Clone, Copy, PartialEq)]
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

    /// An estimator with explicit parameters (tests; config uses [`TokenEstimator::new`]).
    pub fn with_ratios(letters_per_token: f32, whitespace_per_token: f32, factor: f32) -> Self {
        Self { letters_per_token, whitespace_per_token, factor }
    }

    /// The longest prefix of `text` (cut at a character boundary) whose estimate is at most `tokens`.
    pub fn truncate<'a>(&self, text: &'a str, tokens: usize) -> &'a str {
        if self.estimate(text) <= tokens {
            return text;
        }
        let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        // The estimate grows with the prefix, so the cut point can be found by bisection.
        let (mut lo, mut hi) = (0usize, bounds.len() - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.estimate(&text[..bounds[mid]]) <= tokens {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        &text[..bounds[lo]]
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

/// Conservative token estimate of `messages` (the calibrated [`TokenEstimator`])
/// plus the safety margin for chat-template overhead.
pub fn estimate_tokens(messages: &[ChatMessage], budget: &BudgetConfig) -> usize {
    let estimator = TokenEstimator::new(budget);
    messages.iter().map(|m| estimator.estimate(&m.content)).sum::<usize>() + budget.safety_margin_tokens as usize
}

/// The tokens the reply may use: the request's cap, else the role's `max_output_tokens`.
pub fn reply_tokens(model: &ModelConfig, max_tokens: Option<u32>) -> u32 {
    max_tokens.unwrap_or(model.max_output_tokens)
}

/// `Ok` when `size` plus `reserved` reply tokens fit `num_ctx`, else [`LlmError::OverBudget`] with the numbers.
pub fn check_fits(role: ModelRole, model: &ModelConfig, size: PromptSize, reserved: u32) -> Result<(), LlmError> {
    if size.tokens + reserved as usize <= model.num_ctx as usize {
        return Ok(());
    }
    Err(LlmError::OverBudget {
        role: role.to_string(),
        model: model.name.clone(),
        needed: size.tokens,
        num_ctx: model.num_ctx,
        reserved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigInputs, LoadedConfig};

    fn config() -> crate::config::Config {
        LoadedConfig::load(&ConfigInputs::default()).expect("defaults load").config
    }

    #[test]
    fn estimate_over_counts_and_adds_the_margin() {
        let c = config();
        let msgs = vec![ChatMessage::user("a".repeat(250))];
        let expected =
            TokenEstimator::new(&c.budget).estimate(&"a".repeat(250)) + c.budget.safety_margin_tokens as usize;
        assert_eq!(estimate_tokens(&msgs, &c.budget), expected);
        // Non-ASCII counts by bytes: "é" is 2 bytes.
        let accents = vec![ChatMessage::user("é".repeat(100))];
        assert!(
            estimate_tokens(&accents, &c.budget) > estimate_tokens(&[ChatMessage::user("e".repeat(100))], &c.budget)
        );
    }

    #[test]
    fn over_budget_is_refused_with_the_numbers() {
        let c = config();
        let model = c.models.get(ModelRole::Coder);
        let reserved = reply_tokens(model, Some(100));
        let fits = PromptSize { tokens: model.num_ctx as usize - 100, exact: false };
        assert!(check_fits(ModelRole::Coder, model, fits, reserved).is_ok());
        let over = PromptSize { tokens: model.num_ctx as usize - 99, exact: false };
        match check_fits(ModelRole::Coder, model, over, reserved) {
            Err(LlmError::OverBudget { needed, num_ctx, reserved, role, .. }) => {
                assert_eq!(
                    (needed, num_ctx, reserved, role.as_str()),
                    (model.num_ctx as usize - 99, model.num_ctx, 100, "coder")
                );
            }
            other => panic!("expected OverBudget, got {other:?}"),
        }
    }
}
