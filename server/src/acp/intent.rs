//! What a prompt asks for, decided from its words (`[acp]` and `[runtime]` in
//! the configuration): a slash command first, then a question, a fix, a request
//! that spans files (run through the planner like `tinycoder run`), an edit of
//! one named file, or else a question. A pure function; the words live in config.

use crate::agent::Location;
use crate::config::{AcpConfig, RuntimeConfig};

/// The kind of turn a prompt starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Intent {
    /// Answer from retrieved context, about `file` when one is named.
    Ask { question: String, file: Option<String> },
    /// Fix the first failing test, or the error at `target`.
    Fix { target: Option<Location>, message: Option<String> },
    /// Change `target` as `instruction` says.
    Edit { target: Location, instruction: String },
    /// Carry out a request that may span files through the planner (`tinycoder run`).
    Run { request: String },
    /// Run the project's tests and report them.
    Test,
    /// Doc comments for the function or class at `target` (`/document FILE:LINE`).
    Document { target: Location },
    /// Tests for the function or class at `target`, added to `test_file` or one the agent picks
    /// (`/tests FILE:LINE [TEST_FILE]`).
    AddTests { target: Location, test_file: Option<String> },
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

fn has_any(text: &str, list: &[String]) -> bool {
    words(text).any(|w| list.iter().any(|l| l.eq_ignore_ascii_case(&w)))
}

/// The request handed to the planner: the prompt's words, plus the files it attached
/// (links, embedded files) that its words do not name, so the planner sees them too.
fn run_request(text: &str, files: &[Location]) -> String {
    let attached: Vec<&str> = files.iter().map(|f| f.path.as_str()).filter(|p| !text.contains(p)).collect();
    if attached.is_empty() {
        text.to_string()
    } else {
        format!("{text} (files: {})", attached.join(", "))
    }
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
/// embedded files, then paths in its text), first the most specific. An edit that
/// names `runtime.plan_min_files` files or more, or says one of `runtime.plan_keywords`,
/// spans files and is planned, by the same thresholds and words as `tinycoder run`.
pub fn classify(text: &str, files: &[Location], cfg: &AcpConfig, runtime: &RuntimeConfig) -> Intent {
    let trimmed = text.trim();
    let file = files.first().cloned();
    if let Some(rest) = trimmed.strip_prefix('/') {
        let (command, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let args = args.trim();
        match command {
            "ask" => return Intent::Ask { question: args.to_string(), file: file.map(|f| f.path) },
            "test" | "tests" => {
                // `/tests FILE:LINE [TEST_FILE]` writes tests for that definition; bare `/test` runs them.
                return match file {
                    Some(target) if command == "tests" => {
                        let test_file = files.get(1).map(|f| f.path.clone());
                        Intent::AddTests { target, test_file }
                    }
                    _ => Intent::Test,
                };
            }
            "document" | "doc" => {
                if let Some(target) = file {
                    return Intent::Document { target };
                }
                return Intent::Ask { question: args.to_string(), file: None };
            }
            "run" => return Intent::Run { request: run_request(args, files) },
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
        let many = !files.is_empty() && files.len() >= runtime.plan_min_files as usize;
        if many || crate::agent::plan::said_phrase(trimmed, &runtime.plan_keywords).is_some() {
            return Intent::Run { request: run_request(trimmed, files) };
        }
        if let Some(target) = file {
            return Intent::Edit { target, instruction: trimmed.to_string() };
        }
    }
    Intent::Ask { question: trimmed.to_string(), file: file.map(|f| f.path) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> crate::config::Config {
        crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).expect("defaults").config
    }

    fn files(text: &str) -> Vec<Location> {
        mentioned_files(text, &|p| {
            matches!(p, "shop/prices.py" | "shop/cart.py" | "tests/test_prices.py" | "README.md")
        })
    }

    fn intent(text: &str) -> Intent {
        let c = cfg();
        classify(text, &files(text), &c.acp, &c.runtime)
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
            intent("change total_price in shop/prices.py to use sum()"),
            Intent::Edit {
                target: Location::file("shop/prices.py"),
                instruction: "change total_price in shop/prices.py to use sum()".into()
            }
        );
        // An edit word without a file (and no word that spans files) is a question: there is nothing to edit.
        assert!(matches!(intent("add logging"), Intent::Ask { file: None, .. }));
        // A question that mentions a fix word stays a question.
        assert!(matches!(intent("Why does the test fail?"), Intent::Ask { .. }));
        assert_eq!(intent("/test"), Intent::Test);
        assert_eq!(intent("/fix"), Intent::Fix { target: None, message: None });
        assert!(
            matches!(intent("/edit shop/prices.py:4-6 use sum()"), Intent::Edit { target, .. } if target == Location { path: "shop/prices.py".into(), start_line: 4, end_line: 6 })
        );
        assert!(matches!(intent("/ask fix words inside"), Intent::Ask { .. }));
        assert_eq!(
            intent("/document shop/prices.py:7"),
            Intent::Document { target: Location::line("shop/prices.py", 7) }
        );
        assert!(matches!(intent("/document"), Intent::Ask { file: None, .. }), "nothing named: nothing to document");
        assert_eq!(
            intent("/tests shop/prices.py:3 tests/test_prices.py"),
            Intent::AddTests {
                target: Location::line("shop/prices.py", 3),
                test_file: Some("tests/test_prices.py".into())
            }
        );
        assert_eq!(intent("/tests"), Intent::Test, "bare /tests runs the tests");
        assert_eq!(intent("/test shop/prices.py:3"), Intent::Test, "/test always runs them");
    }

    #[test]
    fn edits_that_span_files_are_planned() {
        // Two named files.
        let two = "add a rate parameter to with_tax in shop/prices.py and pass it from shop/cart.py";
        assert_eq!(intent(two), Intent::Run { request: two.into() });
        // A word of `runtime.plan_keywords` with an edit word, with or without a file.
        let callers = "add a timeout parameter to fetch and pass it from every caller";
        assert_eq!(intent(callers), Intent::Run { request: callers.into() });
        assert!(matches!(intent("add logging everywhere"), Intent::Run { .. }));
        assert!(matches!(intent("rename item_price to line_price in shop/prices.py"), Intent::Run { .. }));
        // Keywords match whole words: "remove" does not say "move".
        assert!(matches!(intent("remove the print from shop/prices.py"), Intent::Edit { .. }));
        // Without an edit word it is not a change; a question stays a question; a fix stays a fix.
        assert!(matches!(intent("shop/prices.py and shop/cart.py"), Intent::Ask { .. }));
        assert!(matches!(intent("how would I add a parameter to every caller?"), Intent::Ask { .. }));
        assert!(matches!(intent("fix the bug in shop/prices.py and shop/cart.py"), Intent::Fix { .. }));
        // The slash command, with the attached files the words do not name.
        let attached = [Location::file("shop/cart.py"), Location::file("shop/prices.py")];
        let c = cfg();
        assert_eq!(
            classify("/run add a rate to shop/cart.py", &attached, &c.acp, &c.runtime),
            Intent::Run { request: "add a rate to shop/cart.py (files: shop/prices.py)".into() }
        );
    }

    #[test]
    fn the_thresholds_and_words_come_from_config() {
        let mut c = cfg();
        let two = "add a rate parameter in shop/prices.py and shop/cart.py";
        c.runtime.plan_min_files = 3;
        assert!(matches!(classify(two, &files(two), &c.acp, &c.runtime), Intent::Edit { .. }));
        c.runtime.plan_min_files = 1;
        let one = "change total_price in shop/prices.py";
        assert!(matches!(classify(one, &files(one), &c.acp, &c.runtime), Intent::Run { .. }));
        c.runtime.plan_min_files = 2;
        c.runtime.plan_keywords = vec!["across the project".into()];
        let across = "add type hints across the project";
        assert!(matches!(classify(across, &[], &c.acp, &c.runtime), Intent::Run { .. }));
        assert!(matches!(classify("add logging everywhere", &[], &c.acp, &c.runtime), Intent::Ask { .. }));
    }

    #[test]
    fn only_existing_files_are_mentioned() {
        let found = files("see `shop/prices.py`, not shop/none.py nor https://x.org/a.py (README.md).");
        assert_eq!(found, vec![Location::file("shop/prices.py"), Location::file("README.md")]);
    }
}
