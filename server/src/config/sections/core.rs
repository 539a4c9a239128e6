//! Backend, models per role, token budget, runtime limits, logging, prompts.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// Which wire protocol the model server speaks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// Ollama at `backend.url` when it answers, else the embedded backend when the
    /// roles' models are found on disk, else Ollama (whose error then says how to start it).
    Auto,
    Ollama,
    Openai,
    /// llama.cpp inside tinycoder's own process: no model server.
    Embedded,
}

/// `[backend]`: where the model server is and how long to wait for it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    pub kind: BackendKind,
    pub url: String,
    pub api_key_env: String,
    pub connect_timeout_ms: u64,
    pub first_token_timeout_ms: u64,
    pub idle_timeout_ms: u64,
    pub request_timeout_ms: u64,
    pub max_loaded_models: u32,
    /// Ask an OpenAI-compatible server to reuse its cached prompt prefix (llama-server `cache_prompt`).
    pub prompt_cache: bool,
    /// Idle milliseconds (no interactive model call) before a background call may start.
    pub background_idle_ms: u64,
    /// Embedded backend: a folder of `<model name>.gguf` files ("" = none).
    pub models_dir: String,
    /// Embedded backend: Ollama's model store ("" = `$OLLAMA_MODELS`, `~/.ollama/models`, Linux service's store).
    pub ollama_models: String,
    /// Embedded backend: inference threads (0 = the machine's physical cores).
    pub threads: u32,
    /// Embedded backend: most prompt-lookup draft tokens evaluated beside each reply token (0 = off).
    pub lookup_draft_tokens: u32,
    /// Embedded backend: shortest run of reply tokens that must match the context for a draft.
    pub lookup_ngram_min: u32,
    /// Embedded backend: longest run tried first.
    pub lookup_ngram_max: u32,
}

impl BackendConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            return Err(Invalid::new("backend.url", &self.url, "an http:// or https:// URL"));
        }
        for (key, v) in [
            ("backend.connect_timeout_ms", self.connect_timeout_ms),
            ("backend.first_token_timeout_ms", self.first_token_timeout_ms),
            ("backend.idle_timeout_ms", self.idle_timeout_ms),
            ("backend.request_timeout_ms", self.request_timeout_ms),
        ] {
            if v == 0 {
                return Err(Invalid::new(key, v, "a positive number of milliseconds"));
            }
        }
        if self.max_loaded_models == 0 {
            return Err(Invalid::new("backend.max_loaded_models", 0, "at least 1"));
        }
        if self.lookup_draft_tokens > 64 {
            return Err(Invalid::new("backend.lookup_draft_tokens", self.lookup_draft_tokens, "0 (off) to 64"));
        }
        if self.lookup_ngram_min == 0 || self.lookup_ngram_max < self.lookup_ngram_min || self.lookup_ngram_max > 16 {
            return Err(Invalid::new(
                "backend.lookup_ngram_min",
                format!("{}..{}", self.lookup_ngram_min, self.lookup_ngram_max),
                "1 <= lookup_ngram_min <= lookup_ngram_max <= 16",
            ));
        }
        Ok(())
    }
}

/// The four model roles of the agent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum ModelRole {
    Planner,
    Coder,
    Critic,
    Summarizer,
}

impl ModelRole {
    pub const ALL: [ModelRole; 4] = [Self::Planner, Self::Coder, Self::Critic, Self::Summarizer];

    /// The role's name as used in config keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planner => "planner",
            Self::Coder => "coder",
            Self::Critic => "critic",
            Self::Summarizer => "summarizer",
        }
    }
}

impl std::fmt::Display for ModelRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[[runtime.questioned_operators]]`: one operator turned into another of a
/// different kind, and the words of a definition's signature or docstring that
/// say the old kind was meant.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QuestionedOperator {
    pub from: String,
    pub to: String,
    /// What the change does, for people and the critic ("integer division becomes true division").
    pub meaning: String,
    /// Whole words or phrases (any case) that speak for `from`.
    pub evidence: Vec<String>,
}

/// `[models.*]`: one model per role.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelsConfig {
    pub planner: ModelConfig,
    pub coder: ModelConfig,
    pub critic: ModelConfig,
    pub summarizer: ModelConfig,
}

impl ModelsConfig {
    /// The model settings of `role`.
    pub fn get(&self, role: ModelRole) -> &ModelConfig {
        match role {
            ModelRole::Planner => &self.planner,
            ModelRole::Coder => &self.coder,
            ModelRole::Critic => &self.critic,
            ModelRole::Summarizer => &self.summarizer,
        }
    }
}

/// The settings of one role's model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub name: String,
    /// A GGUF file for the embedded backend ("" = find `name` in `backend.models_dir` or Ollama's store).
    #[serde(default)]
    pub path: String,
    pub num_ctx: u32,
    pub temperature: f32,
    pub seed: i64,
    pub keep_alive: String,
    pub max_output_tokens: u32,
}

impl ModelConfig {
    pub(super) fn validate(&self, role: ModelRole, budget: &BudgetConfig) -> Result<(), Invalid> {
        let key = |k: &str| format!("models.{role}.{k}");
        if self.name.trim().is_empty() {
            return Err(Invalid::new(&key("name"), "\"\"", "a model name, e.g. \"qwen2.5-coder:1.5b\""));
        }
        if self.num_ctx < 512 {
            return Err(Invalid::new(&key("num_ctx"), self.num_ctx, "a context window of at least 512 tokens"));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(Invalid::new(&key("temperature"), self.temperature, "a number from 0 to 2"));
        }
        if self.max_output_tokens == 0 || self.max_output_tokens >= self.num_ctx {
            return Err(Invalid::new(
                &key("max_output_tokens"),
                self.max_output_tokens,
                &format!("between 1 and num_ctx ({})", self.num_ctx),
            ));
        }
        if budget.reserved_output_tokens + budget.safety_margin_tokens >= self.num_ctx {
            return Err(Invalid::new(
                &key("num_ctx"),
                self.num_ctx,
                &format!(
                    "more than budget.reserved_output_tokens + budget.safety_margin_tokens ({})",
                    budget.reserved_output_tokens + budget.safety_margin_tokens
                ),
            ));
        }
        parse_keep_alive(&self.keep_alive).map_err(|e| Invalid::new(&key("keep_alive"), &self.keep_alive, &e))?;
        Ok(())
    }
}

/// Parses an Ollama keep_alive ("5m", "30s", "1h", "0", "-1") into seconds (-1 = forever).
pub fn parse_keep_alive(s: &str) -> Result<i64, String> {
    const EXPECTED: &str = "a duration like \"30s\", \"5m\", \"1h\", \"0\" (unload at once) or \"-1\" (keep forever)";
    let s = s.trim();
    if let Ok(n) = s.parse::<i64>() {
        return if n >= -1 { Ok(n) } else { Err(EXPECTED.into()) };
    }
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: i64 = num.parse().map_err(|_| EXPECTED.to_string())?;
    match unit {
        "s" => Ok(n),
        "m" => Ok(n * 60),
        "h" => Ok(n * 3600),
        _ => Err(EXPECTED.into()),
    }
}

/// `[budget]`: how a model's context window is shared out.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    pub reserved_output_tokens: u32,
    pub system_tokens_max: u32,
    pub memory_entries: u32,
    pub memory_tokens_max: u32,
    pub repo_map_tokens: u32,
    pub chars_per_token: f32,
    pub whitespace_chars_per_token: f32,
    pub estimate_factor: f32,
    pub safety_margin_tokens: u32,
    pub large_file_lines: u32,
    pub folder_summary_tokens: u32,
    pub related_symbols: u32,
    /// Calls followed from the failing test to related definitions in other files.
    pub related_hops: u32,
    /// Lines of one module-level value (test data) shown with the failing test at most.
    pub test_value_lines: u32,
    /// Index hits searched for the definition that writes a failure's message.
    pub message_search_hits: u32,
    /// Characters a fixed piece of a string literal needs to count as the message's source.
    pub message_piece_chars: u32,
}

impl BudgetConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if !(1.0..=8.0).contains(&self.chars_per_token) {
            return Err(Invalid::new(
                "budget.chars_per_token",
                self.chars_per_token,
                "a number from 1 to 8 (lower over-counts, which is the safe side)",
            ));
        }
        if !(1.0..=16.0).contains(&self.whitespace_chars_per_token) {
            return Err(Invalid::new(
                "budget.whitespace_chars_per_token",
                self.whitespace_chars_per_token,
                "a number from 1 to 16",
            ));
        }
        if !(1.0..=3.0).contains(&self.estimate_factor) {
            return Err(Invalid::new(
                "budget.estimate_factor",
                self.estimate_factor,
                "a number from 1 to 3 (below 1 would under-count)",
            ));
        }
        if self.reserved_output_tokens == 0 {
            return Err(Invalid::new("budget.reserved_output_tokens", 0, "at least 1 token"));
        }
        Ok(())
    }
}

/// `[runtime]`: limits of the agent loop.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RuntimeConfig {
    pub max_retries: u32,
    /// How many times one task may ask the user for a strategy after its attempts failed (0: never).
    pub strategy_rounds: u32,
    /// Coder attempts each strategy the user picks buys.
    pub attempts_per_strategy: u32,
    /// The strategy when nobody can be asked: `stop`, `more_context` or `other_approach`.
    pub non_interactive_strategy: String,
    /// How much larger the context gets with "more context" (a factor on the budgets).
    pub more_context_factor: f32,
    pub max_replans: u32,
    /// A request naming fewer files than this (and at least one) skips the planner.
    pub plan_min_files: u32,
    /// Words that send a request to the planner even when it names one file.
    pub plan_keywords: Vec<String>,
    pub step_timeout_s: u64,
    pub task_timeout_s: u64,
    pub max_steps: u32,
    pub parallel_edits: u32,
    /// Fixes one "fix all in this file" runs at most (the rest are reported as skipped).
    pub fix_all_max_diagnostics: u32,
    /// Seconds one tool call (file read, search, test run, shell command) may take.
    pub tool_timeout_s: u64,
    /// Last lines of a command step's output passed on to the steps after it.
    pub command_output_lines: u32,
    /// Index hits a query step (the `search` tool) returns.
    pub query_hits: u32,
    pub structured_output_retries: u32,
    pub edit_format: String,
    pub whole_file_max_lines: u32,
    pub whole_file_min_line_share: f32,
    pub whole_file_elision_markers: Vec<String>,
    pub syntax_errors_shown: u32,
    /// Put back the comments and docstrings a fix's reply deleted whole.
    pub fix_keeps_documentation: bool,
    /// Hold a coder reply to its edit format's grammar where the backend takes one.
    pub reply_grammar: bool,
    /// Operator changes a passing fix is questioned about when its definition's documentation disagrees.
    pub questioned_operators: Vec<QuestionedOperator>,
    pub critic_diff_lines: u32,
    pub failure_output_lines: u32,
    pub feedback_tokens: u32,
    pub retry_temperature_step: f32,
    pub retry_temperature_max: f32,
    /// A fix's reply may take this many tokens per token of the file it edits (0: only the role's cap).
    pub fix_reply_file_factor: f32,
    /// The fewest reply tokens a fix is allowed, however small its file.
    pub fix_reply_min_tokens: u32,
    /// Whether a retry shows the model its previous reply as its own turn.
    pub retry_shows_previous_reply: bool,
    /// From which attempt the coder is pointed at one suspect definition (0: never).
    pub focus_from_attempt: u32,
    /// The edit format of an attempt pointed at one suspect ("": the same as the others).
    pub focus_edit_format: String,
    /// Run a failing Python test once more under the call tracer before the first attempt.
    pub trace_calls: bool,
    /// Calls one trace records at most.
    pub trace_max_calls: u32,
    /// Characters of one traced argument or result at most.
    pub trace_value_chars: u32,
    /// Traced calls of a suspect shown to the coder at most.
    pub observed_calls_shown: u32,
    pub critic: bool,
    pub critic_fallback: String,
    pub rerun_tests_after_apply: bool,
}

impl RuntimeConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if !(0.0..=1.0).contains(&self.whole_file_min_line_share) {
            return Err(Invalid::new(
                "runtime.whole_file_min_line_share",
                self.whole_file_min_line_share,
                "a share of the file's lines from 0 to 1",
            ));
        }
        if self.max_steps == 0 {
            return Err(Invalid::new("runtime.max_steps", 0, "at least 1"));
        }
        if !["stop", "more_context", "other_approach"].contains(&self.non_interactive_strategy.as_str()) {
            return Err(Invalid::new(
                "runtime.non_interactive_strategy",
                &self.non_interactive_strategy,
                "\"stop\", \"more_context\" or \"other_approach\" (a hint needs a person)",
            ));
        }
        if !(1.0..=4.0).contains(&self.more_context_factor) {
            return Err(Invalid::new("runtime.more_context_factor", self.more_context_factor, "a number from 1 to 4"));
        }
        if self.attempts_per_strategy == 0 {
            return Err(Invalid::new("runtime.attempts_per_strategy", 0, "at least 1"));
        }
        if self.fix_all_max_diagnostics == 0 {
            return Err(Invalid::new("runtime.fix_all_max_diagnostics", 0, "at least 1"));
        }
        if self.parallel_edits == 0 {
            return Err(Invalid::new("runtime.parallel_edits", 0, "at least 1"));
        }
        if self.tool_timeout_s == 0 || self.tool_timeout_s > self.step_timeout_s {
            return Err(Invalid::new(
                "runtime.tool_timeout_s",
                self.tool_timeout_s,
                "a positive number of seconds, at most runtime.step_timeout_s",
            ));
        }
        if self.command_output_lines == 0 {
            return Err(Invalid::new("runtime.command_output_lines", 0, "at least 1"));
        }
        if self.query_hits == 0 {
            return Err(Invalid::new("runtime.query_hits", 0, "at least 1"));
        }
        const FORMATS: [&str; 6] = ["auto", "whole_symbol", "search_replace", "whole_file", "json_symbol", "line_fix"];
        if !FORMATS.contains(&self.edit_format.as_str()) {
            return Err(Invalid::new(
                "runtime.edit_format",
                &self.edit_format,
                "one of auto, whole_symbol, search_replace, whole_file, json_symbol, line_fix",
            ));
        }
        if !self.focus_edit_format.is_empty() && !FORMATS[1..].contains(&self.focus_edit_format.as_str()) {
            return Err(Invalid::new(
                "runtime.focus_edit_format",
                &self.focus_edit_format,
                "empty, or one of whole_symbol, search_replace, whole_file, json_symbol, line_fix",
            ));
        }
        if self.trace_max_calls == 0 || self.trace_value_chars < 8 {
            return Err(Invalid::new(
                "runtime.trace_max_calls",
                self.trace_max_calls,
                "at least 1 call, and runtime.trace_value_chars at least 8",
            ));
        }
        if !(0.0..=100.0).contains(&self.fix_reply_file_factor) || self.fix_reply_min_tokens < 64 {
            return Err(Invalid::new(
                "runtime.fix_reply_file_factor",
                self.fix_reply_file_factor,
                "a factor from 0 to 100, and runtime.fix_reply_min_tokens at least 64",
            ));
        }
        if !(0.0..=2.0).contains(&self.retry_temperature_step) || !(0.0..=2.0).contains(&self.retry_temperature_max) {
            return Err(Invalid::new(
                "runtime.retry_temperature_step",
                self.retry_temperature_step,
                "a temperature step and maximum from 0 to 2",
            ));
        }
        if !["accept", "reject"].contains(&self.critic_fallback.as_str()) {
            return Err(Invalid::new("runtime.critic_fallback", &self.critic_fallback, "\"accept\" or \"reject\""));
        }
        if self.step_timeout_s == 0 || self.task_timeout_s < self.step_timeout_s {
            return Err(Invalid::new(
                "runtime.task_timeout_s",
                self.task_timeout_s,
                "a positive number of seconds, at least runtime.step_timeout_s",
            ));
        }
        Ok(())
    }
}

/// `[log]`: stderr logging.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    pub level: String,
}

/// `[prompts]`: where prompt templates come from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PromptsConfig {
    pub dir: String,
}
