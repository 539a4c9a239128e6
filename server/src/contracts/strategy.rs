//! The user's choice of strategy after the coder's attempts all failed.

use serde::{Deserialize, Serialize};

/// What to do after `runtime.max_retries` failed attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "choice")]
pub enum StrategyChoice {
    /// Try again with a wider context (more of the file and more index hits).
    MoreContext,
    /// Try again with the user's hint or example added to the instruction.
    Hint { text: String },
    /// Try again, told to set the failed approaches aside.
    OtherApproach,
    /// Stop; the best attempt is shown as a diff, never applied.
    Stop,
}

/// The kinds of choice, in the order a UI offers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StrategyKind {
    MoreContext,
    Hint,
    OtherApproach,
    Stop,
}

impl StrategyKind {
    /// Every kind, in the order offered.
    pub const ALL: [StrategyKind; 4] = [Self::MoreContext, Self::Hint, Self::OtherApproach, Self::Stop];

    /// The snake_case name (as in config `runtime.non_interactive_strategy`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MoreContext => "more_context",
            Self::Hint => "hint",
            Self::OtherApproach => "other_approach",
            Self::Stop => "stop",
        }
    }

    /// Parses a snake_case name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name.trim())
    }

    /// The label shown to the user (LSP MessageActionItem title, ACP option, CLI choice).
    pub fn label(self) -> &'static str {
        match self {
            Self::MoreContext => "Retry with more context",
            Self::Hint => "Give a hint",
            Self::OtherApproach => "Try another approach",
            Self::Stop => "Stop and show the best attempt",
        }
    }

    /// The kind whose label is `label`.
    pub fn from_label(label: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.label().eq_ignore_ascii_case(label.trim()))
    }

    /// The choice of this kind; a hint needs its text.
    pub fn choice(self, hint: Option<String>) -> Option<StrategyChoice> {
        Some(match self {
            Self::MoreContext => StrategyChoice::MoreContext,
            Self::Hint => StrategyChoice::Hint { text: hint.filter(|h| !h.trim().is_empty())? },
            Self::OtherApproach => StrategyChoice::OtherApproach,
            Self::Stop => StrategyChoice::Stop,
        })
    }
}

impl StrategyChoice {
    /// The kind of this choice.
    pub fn kind(&self) -> StrategyKind {
        match self {
            Self::MoreContext => StrategyKind::MoreContext,
            Self::Hint { .. } => StrategyKind::Hint,
            Self::OtherApproach => StrategyKind::OtherApproach,
            Self::Stop => StrategyKind::Stop,
        }
    }
}

/// The question put to the user after repeated failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrategyQuestion {
    pub task_id: String,
    /// The file the attempts edited.
    pub file: String,
    /// Attempts made so far.
    pub attempts: usize,
    /// How the last attempt ended, in words.
    pub last_failure: String,
    /// The best attempt as a unified diff, when one applied.
    pub best_diff: Option<String>,
}

impl StrategyQuestion {
    /// One-line text for a prompt or a message box.
    pub fn message(&self) -> String {
        format!(
            "tinycoder: {} attempt(s) at {} failed (last: {}). What next?",
            self.attempts, self.file, self.last_failure
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_names_and_labels() {
        for k in StrategyKind::ALL {
            assert_eq!(StrategyKind::parse(k.as_str()), Some(k));
            assert_eq!(StrategyKind::from_label(&k.label().to_uppercase()), Some(k));
        }
        assert_eq!(StrategyKind::Hint.choice(Some("  ".into())), None, "an empty hint is no hint");
        let c = StrategyKind::Hint.choice(Some("use round()".into())).expect("a hint");
        assert_eq!(serde_json::to_value(&c).ok(), Some(serde_json::json!({"choice": "hint", "text": "use round()"})));
    }
}
