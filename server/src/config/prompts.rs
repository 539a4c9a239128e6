//! Prompt templates: every prompt is a file in `prompts/` (built in at
//! compile time, overridable from a directory), with `{{variable}}`
//! placeholders. All templates are checked when the library loads, so a
//! misspelt or missing variable fails at start-up, not in the middle of a task.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A prompt the code knows, with the variables it is rendered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PromptId {
    /// File name without `.md` in `prompts/`.
    pub name: &'static str,
    /// The variables the caller supplies; the template must use each of them and no other.
    pub vars: &'static [&'static str],
}

macro_rules! prompts {
    ($($konst:ident = $name:literal [$($var:literal),*];)*) => {
        impl PromptId {
            $(pub const $konst: PromptId = PromptId { name: $name, vars: &[$($var),*] };)*
            /// Every prompt the code uses.
            pub const ALL: &'static [PromptId] = &[$(PromptId::$konst),*];
        }
        const BUILTIN: &[(&str, &str)] = &[$(($name, include_str!(concat!("../../../prompts/", $name, ".md")))),*];
    };
}

prompts! {
    CHAT_SYSTEM = "chat_system" [];
    CHAT_FILE_CONTEXT = "chat_file_context" ["path", "language", "code"];
    CHAT_SESSION_SUMMARY = "chat_session_summary" ["summary"];
    STRUCTURED_RETRY = "structured_retry" ["error"];
    SUMMARIZE_SESSION = "summarize_session" ["previous_summary", "turns", "max_tokens"];
    CONTEXT_SYSTEM = "context_system" [];
    CONTEXT_REQUEST_DIAGNOSTIC = "context_request_diagnostic" ["path", "line", "message"];
    CONTEXT_REQUEST_SELECTION = "context_request_selection" ["path", "lines", "instruction"];
    CONTEXT_REQUEST_QUESTION = "context_request_question" ["question"];
    CODER_SYSTEM = "coder_system" [];
    CODER_REQUEST_FIX = "coder_request_fix" ["problem", "path", "format_rules"];
    CODER_REQUEST_FIX_CALLEES = "coder_request_fix_callees" ["problem", "path", "callees", "format_rules"];
    CODER_REQUEST_EDIT = "coder_request_edit" ["path", "lines", "instruction", "format_rules"];
    CODER_PROBLEM_TEST = "coder_problem_test" ["test", "message"];
    CODER_PROBLEM_DIAGNOSTIC = "coder_problem_diagnostic" ["path", "line", "message"];
    CODER_FEEDBACK = "coder_feedback" ["attempt", "error"];
    CODER_FOCUS = "coder_focus" ["name", "path", "lines"];
    CODER_USER_REPORT = "coder_user_report" ["report"];
    CODER_HINT = "coder_hint" ["hints"];
    CODER_OTHER_APPROACH = "coder_other_approach" ["failed"];
    EDIT_FORMAT_WHOLE_SYMBOL = "edit_format_whole_symbol" ["language"];
    EDIT_FORMAT_WHOLE_FILE = "edit_format_whole_file" ["path", "language"];
    EDIT_FORMAT_SEARCH_REPLACE = "edit_format_search_replace" ["path"];
    EDIT_FORMAT_JSON_SYMBOL = "edit_format_json_symbol" ["language"];
    EDIT_FORMAT_LINE_FIX = "edit_format_line_fix" ["language"];
    REPLY_GRAMMAR_CODE_BLOCK = "reply_grammar_code_block" ["language"];
    REPLY_GRAMMAR_LINE_FIX = "reply_grammar_line_fix" ["language"];
    CODER_REQUEST_LINE_FIX = "coder_request_line_fix" ["location", "name", "language", "code", "evidence", "problem", "format_rules"];
    CODER_LINE_FIX_TEST = "coder_line_fix_test" ["location", "language", "code"];
    CODER_OBSERVED_CALLS = "coder_observed_calls" ["name", "calls"];
    CODER_SECTION_SUBJECT = "coder_section_subject" ["location"];
    CODER_SECTION_TEST = "coder_section_test" ["location"];
    CODER_SECTION_RAISES = "coder_section_raises" ["location", "name"];
    CODER_SECTION_CALLEE = "coder_section_callee" ["location", "name"];
    CODER_SECTION_OUTPUT = "coder_section_output" ["command"];
    CODER_OUTPUT_CUT = "coder_output_cut" [];
    CRITIC_SYSTEM = "critic_system" [];
    CRITIC_REQUEST = "critic_request" ["request", "tests", "diff", "questions"];
    CRITIC_QUESTIONS = "critic_questions" ["questions"];
    MEMORY_ERROR_FIX = "memory_error_fix" ["message", "path", "symbols", "change"];
    ASK_REQUEST = "ask_request" ["question"];
    CODER_REQUEST_TESTS = "coder_request_tests" ["path", "subject", "format_rules"];
    EXPLAIN_REQUEST = "explain_request" ["path", "lines"];
    COMPLETE_FIM = "complete_fim" ["prefix", "suffix"];
    DOCUMENT_INSTRUCTION = "document_instruction" ["symbol", "language"];
    EDIT_PRESETS = "edit_presets" [];
    PLANNER_SYSTEM = "planner_system" [];
    PLANNER_REQUEST = "planner_request" ["repo_map", "request", "max_steps"];
    PLANNER_REPLAN = "planner_replan" ["error"];
    PLAN_STEP_INSTRUCTION = "plan_step_instruction" ["step", "notes"];
    PLAN_STEP_NOTES = "plan_step_notes" ["hits"];
    PLAN_COMMAND_OUTPUT = "plan_command_output" ["command", "exit_code", "output"];
}

/// A template that cannot be loaded or rendered.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read prompt {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("prompt `{name}` ({origin}) uses unknown variable `{{{{{var}}}}}`; it may use: {allowed}")]
    UnknownVariable { name: String, origin: String, var: String, allowed: String },
    #[error("prompt `{name}` ({origin}) never uses variable `{{{{{var}}}}}`, which it must show the model")]
    MissingVariable { name: String, origin: String, var: String },
    #[error("prompt `{name}` ({origin}) has an unclosed `{{{{` at byte {at}")]
    Unclosed { name: String, origin: String, at: usize },
    #[error("prompt `{name}` rendered without variable `{var}` (a bug in tinycoder)")]
    NotSupplied { name: String, var: String },
}

#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Var(String),
}

/// All prompt templates, parsed and checked.
#[derive(Debug, Clone)]
pub struct PromptLibrary {
    templates: BTreeMap<&'static str, Vec<Piece>>,
}

impl PromptLibrary {
    /// The prompts `config` names for the workspace at `root`: built in, or from
    /// `prompts.dir` (relative to the workspace), read as the trust check reads it.
    pub fn for_workspace(config: &super::Config, root: Option<&Path>) -> Result<Self, PromptError> {
        Self::load(crate::paths::setting_path(&config.prompts.dir, root).as_deref())
    }

    /// Loads the built-in prompts, each replaced by `dir/NAME.md` where that file exists.
    pub fn load(dir: Option<&Path>) -> Result<Self, PromptError> {
        let mut templates = BTreeMap::new();
        for id in PromptId::ALL {
            let builtin = BUILTIN.iter().find(|(n, _)| *n == id.name).map(|(_, t)| *t).unwrap_or("");
            let (text, origin) = match dir.map(|d| d.join(format!("{}.md", id.name))) {
                Some(path) if path.exists() => {
                    let bytes = crate::paths::read_settings_file(&path)
                        .map_err(|e| PromptError::Read { path: path.clone(), source: std::io::Error::other(e) })?
                        .unwrap_or_default();
                    let text = String::from_utf8(bytes).map_err(|_| PromptError::Read {
                        path: path.clone(),
                        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
                    })?;
                    (text, path.display().to_string())
                }
                _ => (builtin.to_string(), "built in".to_string()),
            };
            templates.insert(id.name, parse(id, &text, &origin)?);
        }
        Ok(Self { templates })
    }

    /// Renders `id` with `vars` (each declared variable exactly once).
    pub fn render(&self, id: PromptId, vars: &[(&str, &str)]) -> Result<String, PromptError> {
        let pieces = self
            .templates
            .get(id.name)
            .ok_or_else(|| PromptError::NotSupplied { name: id.name.into(), var: "(template not loaded)".into() })?;
        let mut out = String::new();
        for p in pieces {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Var(v) => {
                    let value = vars
                        .iter()
                        .find(|(k, _)| k == v)
                        .map(|(_, val)| *val)
                        .ok_or_else(|| PromptError::NotSupplied { name: id.name.into(), var: v.clone() })?;
                    out.push_str(value);
                }
            }
        }
        Ok(out.trim().to_string())
    }
}

fn parse(id: &PromptId, text: &str, origin: &str) -> Result<Vec<Piece>, PromptError> {
    let mut pieces = Vec::new();
    let mut used = BTreeSet::new();
    let mut rest = text;
    let mut offset = 0;
    while let Some(start) = rest.find("{{") {
        pieces.push(Piece::Text(rest[..start].to_string()));
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or_else(|| PromptError::Unclosed {
            name: id.name.into(),
            origin: origin.into(),
            at: offset + start,
        })?;
        let var = after[..end].trim().to_string();
        if !id.vars.contains(&var.as_str()) {
            return Err(PromptError::UnknownVariable {
                name: id.name.into(),
                origin: origin.into(),
                var,
                allowed: if id.vars.is_empty() { "(none)".into() } else { id.vars.join(", ") },
            });
        }
        used.insert(var.clone());
        pieces.push(Piece::Var(var));
        let consumed = start + 2 + end + 2;
        offset += consumed;
        rest = &rest[consumed..];
    }
    pieces.push(Piece::Text(rest.to_string()));
    if let Some(missing) = id.vars.iter().find(|v| !used.contains(**v)) {
        return Err(PromptError::MissingVariable {
            name: id.name.into(),
            origin: origin.into(),
            var: missing.to_string(),
        });
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_prompts_load_and_render() {
        let lib = PromptLibrary::load(None).unwrap();
        let out = lib
            .render(PromptId::CHAT_FILE_CONTEXT, &[("path", "a.py"), ("language", "python"), ("code", "x = 1")])
            .unwrap();
        assert!(out.contains("a.py") && out.contains("x = 1"));
    }

    #[test]
    fn override_with_unknown_variable_fails_at_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("chat_file_context.md"), "{{path}} {{language}} {{code}} {{oops}}").unwrap();
        let err = PromptLibrary::load(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("oops") && err.contains("chat_file_context"), "{err}");
    }

    #[test]
    fn override_missing_a_variable_fails_at_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("chat_file_context.md"), "{{path}} {{language}}").unwrap();
        let err = PromptLibrary::load(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("`{{code}}`"), "{err}");
    }

    #[test]
    fn unclosed_placeholder_fails_at_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("structured_retry.md"), "{{error}} {{ oops").unwrap();
        assert!(matches!(PromptLibrary::load(Some(dir.path())), Err(PromptError::Unclosed { .. })));
    }
}
