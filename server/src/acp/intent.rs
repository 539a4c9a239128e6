//! What a prompt asks for, decided from its words (`[acp]` in the configuration):
//! a slash command first, then a question, a fix, an edit of a named file, or
//! else a question. A pure function; the words live in config.

use crate::agent::Location;
use crate::config::AcpConfig;

/// The kind of turn a prompt starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Intent {
    /// Answer from retrieved context, about `file` when one is named.
    Ask { question: String, file: Option<String> },
    /// Fix the first failing test, or the error at `target`.
    Fix { target: Option<Location>, message: Option<String> },
    /// Change `target` as `instruction` says.
    Edit { target: Location, instruction: String },
    /// Run the project's tests and report them.
    Test,
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

fn has_any(text: &str, list: &[String]) -> bool {
    words(text).any(|w| list.iter().any(|l| l.eq_ignore_ascii_case(&w)))
}

/// The files a prompt names in its text: tokens like `dir/file.ext`, `file.ext:12` or
/// `file.ext:3-9` for which `exists` (workspace-relative path) holds, in order.
pub fn mentioned_files(text: &str, exists: &dyn Fn(&str) -> bool) -> Vec<Location> {
    let mut out: Vec<Location> = Vec::new();
    for raw in text.split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '(' | ')' | ',' | ';')) {
        let token = raw.trim_end_matches(['.', '?', '!', ':']).trim_start_matches("./");
        if !token.contains('.') || token.starts_with('/') || token.contains("://") {
            continue;
        }
        let Ok(loc) = Location::parse(token) else { continue };
        if exists(&loc.path) && !out.iter().any(|l| l.path == loc.path) {
            out.push(loc);
        }
    }
    out
}

/// Decides what `text` asks for. `files` are the files the prompt names (links,
/// embedded files, then paths in its text), first the most specific.
pub fn classify(text: &str, files: &[Location], cfg: &AcpConfig) -> Intent {
    let trimmed = text.trim();
    let file = files.first().cloned();
    if let Some(rest) = trimmed.strip_prefix('/') {
        let (command, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let args = args.trim();
        match command {
            "ask" => return Intent::Ask { question: args.to_string(), file: file.map(|f| f.path) },
            "test" | "tests" => return Intent::Test,
            "fix" => {
                let message = (!args.is_empty()).then(|| args.to_string());
                return Intent::Fix { message: file.as_ref().and(message), target: file };
            }
            "edit" => {
                if let Some(target) = file {
                    return Intent::Edit { target, instruction: args.to_string() };
                }
                return Intent::Ask { question: args.to_string(), file: None };
            }
            _ => {}
        }
    }
    let first = words(trimmed).next().unwrap_or_default();
    let question = trimmed.ends_with('?') || cfg.question_words.iter().any(|w| w.eq_ignore_ascii_case(&first));
    if !question && has_any(trimmed, &cfg.fix_words) {
        let message = file.as_ref().map(|_| trimmed.to_string());
        return Intent::Fix { target: file, message };
    }
    if !question && has_any(trimmed, &cfg.edit_words) {
        if let Some(target) = file {
            return Intent::Edit { target, instruction: trimmed.to_string() };
        }
    }
    Intent::Ask { question: trimmed.to_string(), file: file.map(|f| f.path) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> AcpConfig {
        let loaded = crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).expect("defaults");
        loaded.config.acp
    }

    fn files(text: &str) -> Vec<Location> {
        mentioned_files(text, &|p| matches!(p, "shop/prices.py" | "tests/test_prices.py" | "README.md"))
    }

    fn intent(text: &str) -> Intent {
        classify(text, &files(text), &cfg())
    }

    #[test]
    fn questions_fixes_edits_and_commands() {
        assert_eq!(
            intent("What does total_price in shop/prices.py do?"),
            Intent::Ask {
                question: "What does total_price in shop/prices.py do?".into(),
                file: Some("shop/prices.py".into())
            }
        );
        assert_eq!(intent("fix the failing test"), Intent::Fix { target: None, message: None });
        assert_eq!(
            intent("Fix the error at shop/prices.py:12: ZeroDivisionError"),
            Intent::Fix {
                target: Some(Location::line("shop/prices.py", 12)),
                message: Some("Fix the error at shop/prices.py:12: ZeroDivisionError".into())
            }
        );
        assert_eq!(
            intent("rename item_price to line_price in shop/prices.py"),
            Intent::Edit {
                target: Location::file("shop/prices.py"),
                instruction: "rename item_price to line_price in shop/prices.py".into()
            }
        );
        // An edit word without a file is a question: there is nothing to edit.
        assert!(matches!(intent("add logging everywhere"), Intent::Ask { file: None, .. }));
        // A question that mentions a fix word stays a question.
        assert!(matches!(intent("Why does the test fail?"), Intent::Ask { .. }));
        assert_eq!(intent("/test"), Intent::Test);
        assert_eq!(intent("/fix"), Intent::Fix { target: None, message: None });
        assert!(
            matches!(intent("/edit shop/prices.py:4-6 use sum()"), Intent::Edit { target, .. } if target == Location { path: "shop/prices.py".into(), start_line: 4, end_line: 6 })
        );
        assert!(matches!(intent("/ask fix words inside"), Intent::Ask { .. }));
    }

    #[test]
    fn only_existing_files_are_mentioned() {
        let found = files("see `shop/prices.py`, not shop/none.py nor https://x.org/a.py (README.md).");
        assert_eq!(found, vec![Location::file("shop/prices.py"), Location::file("README.md")]);
    }
}
