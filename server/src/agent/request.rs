//! What a user asks the agent for, as plain Rust data (no LSP, no CLI types).

use serde::{Deserialize, Serialize};

/// A place in the workspace: a relative path and an optional 1-based line range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// 1-based first line (0 = the whole file).
    pub start_line: usize,
    /// 1-based last line, inclusive (≥ start_line; 0 = the whole file).
    pub end_line: usize,
}

impl Location {
    /// A whole file.
    pub fn file(path: impl Into<String>) -> Self {
        Self { path: path.into(), start_line: 0, end_line: 0 }
    }

    /// One line of a file.
    pub fn line(path: impl Into<String>, line: usize) -> Self {
        Self { path: path.into(), start_line: line, end_line: line }
    }

    /// `path`, `path:LINE` or `path:START-END`.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let Some((path, lines)) =
            spec.rsplit_once(':').filter(|(_, l)| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        else {
            return Ok(Self::file(spec));
        };
        let bad = || format!("`{spec}`: expected FILE, FILE:LINE or FILE:START-END with 1-based line numbers");
        let (a, z) = match lines.split_once('-') {
            Some((a, z)) => (a.parse::<usize>().map_err(|_| bad())?, z.parse::<usize>().map_err(|_| bad())?),
            None => {
                let l = lines.parse::<usize>().map_err(|_| bad())?;
                (l, l)
            }
        };
        if a == 0 || z < a {
            return Err(bad());
        }
        Ok(Self { path: path.to_string(), start_line: a, end_line: z })
    }

    /// The 1-based focus line (1 for a whole file).
    pub fn focus(&self) -> usize {
        self.start_line.max(1)
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.start_line, self.end_line) {
            (0, _) => write!(f, "{}", self.path),
            (a, z) if a == z => write!(f, "{}:{a}", self.path),
            (a, z) => write!(f, "{}:{a}-{z}", self.path),
        }
    }
}

/// Who reported a diagnostic: the editor's `source` (`rustc`, `ruff`) and its code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticOrigin {
    pub source: String,
    /// `E0425`, `F821`; empty when the diagnostic has none.
    #[serde(default)]
    pub code: String,
}

/// What the agent is asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentRequest {
    /// Make a failing test or a diagnostic go away. With no target, the first
    /// failure of the project's tests is fixed.
    Fix {
        target: Option<Location>,
        /// The diagnostic's or error's message, if the user has one.
        message: Option<String>,
        /// The diagnostic came from tinycoder's own test run (its test must pass afterwards).
        from_tests: bool,
        /// The tool that reported the diagnostic, so its checker proves the fix.
        #[serde(default)]
        origin: Option<DiagnosticOrigin>,
    },
    /// Change the given lines as instructed.
    Edit {
        target: Location,
        instruction: String,
        /// Only comments and docstrings may change (documentation): code changes
        /// are refused and definitions the file lacks are left out of the reply.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        comments_only: bool,
    },
    /// Write tests for the definition at `target`, added to `test_file` (or a test
    /// file of the project that the agent picks); they must pass before they are proposed.
    AddTests { target: Location, test_file: Option<String> },
}

impl AgentRequest {
    /// One line for the task list and the event log.
    pub fn summary(&self) -> String {
        match self {
            Self::Fix { target: None, message: None, .. } => "fix the first failing test".into(),
            Self::Fix { target, message, .. } => {
                let at = target.as_ref().map(|t| format!(" at {t}")).unwrap_or_default();
                let what = message.as_deref().map(|m| m.lines().next().unwrap_or("").to_string()).unwrap_or_default();
                format!("fix{at}: {what}").trim_end_matches(": ").to_string()
            }
            Self::Edit { target, instruction, .. } => format!("edit {target}: {instruction}"),
            Self::AddTests { target, .. } => format!("write tests for {target}"),
        }
    }

    /// The file the request names, if any.
    pub fn target(&self) -> Option<&Location> {
        match self {
            Self::Fix { target, .. } => target.as_ref(),
            Self::Edit { target, .. } | Self::AddTests { target, .. } => Some(target),
        }
    }
}

/// Choices of the person who asked, for this one task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskOptions {
    /// When no attempt passes the tests, still hand back the best attempt (clearly marked).
    pub best_attempt: bool,
    /// Where the request came from (`cli`, `lsp`, `acp`), for the event log.
    pub origin: String,
    /// The chat session the task belongs to, if any.
    pub session_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_and_print() {
        assert_eq!(Location::parse("a/b.py").unwrap(), Location::file("a/b.py"));
        assert_eq!(Location::parse("a/b.py:12").unwrap(), Location::line("a/b.py", 12));
        let r = Location::parse("src/lib.rs:3-9").unwrap();
        assert_eq!((r.start_line, r.end_line, r.to_string()), (3, 9, "src/lib.rs:3-9".to_string()));
        assert!(Location::parse("a.py:0").is_err());
        assert!(Location::parse("a.py:9-3").is_err());
        assert_eq!(Location::parse("C:dir").unwrap(), Location::file("C:dir"));
    }
}
