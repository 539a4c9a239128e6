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

/// Conservative token estimate of `messages`: UTF-8 bytes / `chars_per_token`
/// (bytes over-count non-ASCII text, the safe side) plus the safety margin
/// for chat-template overhead.
pub fn estimate_tokens(messages: &[ChatMessage], budget: &BudgetConfig) -> usize {
    let bytes: usize = messages.iter().map(|m| m.content.len()).sum();
    let per_token = f64::from(budget.chars_per_token.max(1.0));
    (bytes as f64 / per_token).ceil() as usize + budget.safety_margin_tokens as usize
}

/// The tokens the reply may use: the request's cap, else the role's `max_output_tokens`.
pub fn reply_tokens(model: &ModelConfig, max_tokens: Option<u32>) -> u32 {
    max_tokens.unwrap_or(model.max_output_tokens)
}

/// `Ok` when `size` plus `reserved` reply tokens fit `num_ctx`, else [`LlmError::OverBudget`] with the numbers.
pub fn check_fits(
    role: ModelRole,
    model: &ModelConfig,
    size: PromptSize,
    reserved: u32,
) -> Result<(), LlmError> {
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
        LoadedConfig::load(&ConfigInputs::default())
            .expect("defaults load")
            .config
    }

    #[test]
    fn estimate_over_counts_and_adds_the_margin() {
        let c = config();
        let msgs = vec![ChatMessage::user("a".repeat(250))];
        let expected = (250.0 / f64::from(c.budget.chars_per_token)).ceil() as usize
            + c.budget.safety_margin_tokens as usize;
        assert_eq!(estimate_tokens(&msgs, &c.budget), expected);
        // Non-ASCII counts by bytes: "é" is 2 bytes.
        let accents = vec![ChatMessage::user("é".repeat(100))];
        assert!(
            estimate_tokens(&accents, &c.budget)
                > estimate_tokens(&[ChatMessage::user("e".repeat(100))], &c.budget)
        );
    }

    #[test]
    fn over_budget_is_refused_with_the_numbers() {
        let c = config();
        let model = c.models.get(ModelRole::Coder);
        let reserved = reply_tokens(model, Some(100));
        let fits = PromptSize {
            tokens: model.num_ctx as usize - 100,
            exact: false,
        };
        assert!(check_fits(ModelRole::Coder, model, fits, reserved).is_ok());
        let over = PromptSize {
            tokens: model.num_ctx as usize - 99,
            exact: false,
        };
        match check_fits(ModelRole::Coder, model, over, reserved) {
            Err(LlmError::OverBudget {
                needed,
                num_ctx,
                reserved,
                role,
                ..
            }) => {
                assert_eq!(
                    (needed, num_ctx, reserved, role.as_str()),
                    (model.num_ctx as usize - 99, model.num_ctx, 100, "coder")
                );
            }
            other => panic!("expected OverBudget, got {other:?}"),
        }
    }
}
