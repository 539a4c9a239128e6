//! The memory write policy: a pure, deterministic function from a candidate's
//! signals to a [`MemoryDecision`]. Thresholds and the weighting formula come
//! from `[memory]` (documented in `config/tinycoder.toml`); the critic only
//! suggests, this decides, the runtime applies.
//!
//! Order of rules (first match wins):
//! 1. unsafe content (`safety.unsafe_content`) → skip;
//! 2. critic safety < `policy_min_safety` → skip;
//! 3. no critic score: source `user` → store; else `policy_critic_fallback` (skip | store);
//! 4. critic says "don't store" and the source is not `user` → skip;
//! 5. w = (c·critic.weight + q·mean(correctness, usefulness) + r·runtime_weight) / (c + q + r),
//!    raised to `policy_user_min_weight` for source `user`;
//! 6. w < `policy_min_store_weight` → skip;
//! 7. a duplicate of similarity ≥ `policy_merge_similarity` → merge, weight 1 − (1 − old)(1 − w);
//! 8. otherwise store with weight w.

use super::DuplicateMatch;
use crate::config::MemoryConfig;
use crate::contracts::{CriticScore, MemoryDecision, MemoryKind, MemorySource};

/// Safety signals about the candidate's content (computed by the runtime, e.g. a secret scan).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SafetySignals {
    /// The text holds something that must never be remembered (a secret, a token).
    pub unsafe_content: bool,
}

/// Everything the policy looks at.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyInput<'a> {
    /// The critic's score; `None` when the critic was unavailable.
    pub critic: Option<&'a CriticScore>,
    pub kind: MemoryKind,
    pub source: MemorySource,
    /// The runtime's own weight for the candidate (0..1), e.g. 1.0 after tests pass.
    pub runtime_weight: f32,
    /// The closest existing item of the same kind, if any.
    pub duplicate: Option<&'a DuplicateMatch>,
    pub safety: SafetySignals,
}

fn skip(reason: impl Into<String>) -> MemoryDecision {
    MemoryDecision::Skip { reason: reason.into() }
}

/// Decides what to do with one memory candidate. Pure: same input, same decision.
pub fn decide(input: &PolicyInput<'_>, cfg: &MemoryConfig) -> MemoryDecision {
    if input.safety.unsafe_content {
        return skip("the text contains content that must not be stored (e.g. a secret)");
    }
    let runtime_weight = input.runtime_weight.clamp(0.0, 1.0);
    let is_user = input.source == MemorySource::User;
    let weight = match input.critic {
        Some(critic) => {
            if critic.safety < cfg.policy_min_safety {
                return skip(format!(
                    "critic safety {:.2} is below memory.policy_min_safety {:.2}",
                    critic.safety, cfg.policy_min_safety
                ));
            }
            if !critic.memory_store && !is_user {
                return skip(format!("the critic advised against storing it: {}", critic.explanation));
            }
            let (c, q, r) = (cfg.policy_critic_share, cfg.policy_quality_share, cfg.policy_runtime_share);
            let quality = (critic.correctness.clamp(0.0, 1.0) + critic.usefulness.clamp(0.0, 1.0)) / 2.0;
            let blended = (c * critic.weight.clamp(0.0, 1.0) + q * quality + r * runtime_weight) / (c + q + r);
            if is_user {
                blended.max(cfg.policy_user_min_weight)
            } else {
                blended
            }
        }
        None if is_user => runtime_weight.max(cfg.policy_user_min_weight),
        None if cfg.policy_critic_fallback == "store" => runtime_weight,
        None => return skip("no critic score (critic unavailable) and memory.policy_critic_fallback is \"skip\""),
    };
    if weight < cfg.policy_min_store_weight {
        return skip(format!(
            "weight {weight:.2} is below memory.policy_min_store_weight {:.2}",
            cfg.policy_min_store_weight
        ));
    }
    if let Some(dup) = input.duplicate {
        if dup.similarity >= cfg.policy_merge_similarity {
            let combined = 1.0 - (1.0 - dup.weight.clamp(0.0, 1.0)) * (1.0 - weight);
            return MemoryDecision::MergeWithExisting { id: dup.id.clone(), new_weight: combined };
        }
    }
    if input.critic.is_none() && (weight - runtime_weight).abs() < f32::EPSILON {
        MemoryDecision::Store
    } else {
        MemoryDecision::StoreWithWeight { weight }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> MemoryConfig {
        crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).expect("defaults").config.memory
    }

    fn critic(correctness: f32, usefulness: f32, safety: f32, store: bool, weight: f32) -> CriticScore {
        CriticScore { correctness, usefulness, safety, memory_store: store, weight, explanation: "because".into() }
    }

    #[test]
    fn decisions_follow_the_table() {
        let good = critic(0.9, 0.8, 1.0, true, 0.8);
        let weak = critic(0.3, 0.2, 1.0, true, 0.2);
        let unsafe_ = critic(0.9, 0.9, 0.2, true, 0.9);
        let declined = critic(0.9, 0.9, 1.0, false, 0.9);
        let dup_close = DuplicateMatch { id: "m1".into(), weight: 0.5, similarity: 0.9 };
        let dup_far = DuplicateMatch { id: "m2".into(), weight: 0.5, similarity: 0.3 };
        let none = SafetySignals::default();
        let secret = SafetySignals { unsafe_content: true };
        use MemoryKind::*;
        use MemorySource::*;
        // (name, critic, kind, source, runtime weight, duplicate, safety, expected)
        type Row<'a> = (
            &'a str,
            Option<&'a CriticScore>,
            MemoryKind,
            MemorySource,
            f32,
            Option<&'a DuplicateMatch>,
            SafetySignals,
            &'a str,
        );
        let table: Vec<Row<'_>> = vec![
            (
                "good fix stored with blended weight",
                Some(&good),
                ErrorFix,
                Tool,
                1.0,
                None,
                none,
                "store_with_weight 0.855",
            ),
            ("weak result skipped", Some(&weak), Fact, Tool, 0.2, None, none, "skip weight"),
            ("unsafe by critic skipped", Some(&unsafe_), Fact, Tool, 1.0, None, none, "skip safety"),
            (
                "secret never stored, even from the user",
                Some(&good),
                UserPreference,
                User,
                1.0,
                None,
                secret,
                "skip secret",
            ),
            ("critic declines", Some(&declined), Decision, Critic, 1.0, None, none, "skip advised"),
            (
                "user overrides a declining critic, floor weight",
                Some(&declined),
                UserPreference,
                User,
                0.0,
                None,
                none,
                "store_with_weight 0.8",
            ),
            (
                "near duplicate merged, weights combined",
                Some(&good),
                ErrorFix,
                Tool,
                1.0,
                Some(&dup_close),
                none,
                "merge m1 0.9275",
            ),
            (
                "distant duplicate stored separately",
                Some(&good),
                ErrorFix,
                Tool,
                1.0,
                Some(&dup_far),
                none,
                "store_with_weight 0.855",
            ),
            ("critic down, fallback skip", None, Fact, Tool, 0.9, None, none, "skip unavailable"),
            ("critic down, user statement stored", None, UserPreference, User, 0.9, None, none, "store"),
            (
                "critic down, user below floor raised",
                None,
                UserPreference,
                User,
                0.1,
                None,
                none,
                "store_with_weight 0.8",
            ),
        ];
        let config = cfg();
        for (name, critic, kind, source, runtime_weight, duplicate, safety, expected) in table {
            let input = PolicyInput { critic, kind, source, runtime_weight, duplicate, safety };
            let got = decide(&input, &config);
            let shown = match &got {
                MemoryDecision::Store => "store".to_string(),
                MemoryDecision::StoreWithWeight { weight } => {
                    format!("store_with_weight {}", (weight * 10000.0).round() / 10000.0)
                }
                MemoryDecision::MergeWithExisting { id, new_weight } => {
                    format!("merge {id} {}", (new_weight * 10000.0).round() / 10000.0)
                }
                MemoryDecision::Skip { reason } => format!("skip {reason}"),
            };
            if let Some(word) = expected.strip_prefix("skip ") {
                assert!(
                    shown.starts_with("skip") && shown.contains(word),
                    "{name}: expected skip mentioning `{word}`, got {shown}"
                );
            } else {
                assert_eq!(shown, expected, "{name}");
            }
            assert_eq!(decide(&input, &config), got, "{name}: deterministic");
        }
    }

    #[test]
    fn critic_down_with_store_fallback_keeps_the_runtime_weight() {
        let mut config = cfg();
        config.policy_critic_fallback = "store".into();
        let input = PolicyInput {
            critic: None,
            kind: MemoryKind::Fact,
            source: MemorySource::Tool,
            runtime_weight: 0.7,
            duplicate: None,
            safety: SafetySignals::default(),
        };
        assert_eq!(decide(&input, &config), MemoryDecision::Store);
        let low = PolicyInput { runtime_weight: 0.1, ..input };
        assert!(matches!(decide(&low, &config), MemoryDecision::Skip { .. }));
    }
}
