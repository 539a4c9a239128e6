//! Direct or planned: a pure rule over the request text and the workspace's
//! files, with its thresholds from `[runtime]`. A request about one named file
//! goes straight to the coder and never costs a planner call.

use serde::Serialize;

/// What the router decided for a free-text request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "route", rename_all = "snake_case")]
pub enum Route {
    /// One coder step on `file`, no planner call.
    Direct { file: String, reason: String },
    /// The planner splits the request into steps.
    Planned { reason: String },
    /// The user gave the plan (`tinycoder run --plan FILE`): no planner call.
    Given { reason: String },
}

impl Route {
    /// Why, in words.
    pub fn reason(&self) -> &str {
        match self {
            Self::Direct { reason, .. } | Self::Planned { reason } | Self::Given { reason } => reason,
        }
    }
}

/// Workspace files the request names: by path, or by a file name only one file has.
pub fn named_files(request: &str, known: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let words = request
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ',' | ';' | '(' | ')'))
        .map(|w| w.trim_end_matches(['.', ':', '?', '!']).trim_start_matches("./"))
        .filter(|w| w.contains('.') || w.contains('/'));
    for w in words {
        let hit = if known.iter().any(|k| k == w) {
            Some(w.to_string())
        } else {
            let mut by_name = known.iter().filter(|k| k.rsplit('/').next() == Some(w));
            match (by_name.next(), by_name.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        };
        if let Some(f) = hit.filter(|f| !out.contains(f)) {
            out.push(f);
        }
    }
    out
}

/// The first of `phrases` that `text` says as whole words, case aside
/// ("move" is not in "remove", "tests for" matches "Tests  for").
pub fn said_phrase<'a>(text: &str, phrases: &'a [String]) -> Option<&'a String> {
    fn words(text: &str) -> Vec<String> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    }
    let padded = format!(" {} ", words(text).join(" "));
    phrases.iter().find(|p| {
        let p = words(p);
        !p.is_empty() && padded.contains(&format!(" {} ", p.join(" ")))
    })
}

/// Decides how `request` runs. `plan_min_files` and `keywords` come from `[runtime]`.
pub fn route(request: &str, known: &[String], plan_min_files: usize, keywords: &[String]) -> Route {
    let named = named_files(request, known);
    if let Some(k) = said_phrase(request, keywords) {
        return Route::Planned { reason: format!("the request says \"{k}\", which usually spans files") };
    }
    match named.as_slice() {
        [] => Route::Planned { reason: "the request names no file of the workspace".into() },
        [only] if plan_min_files > 1 => {
            Route::Direct { file: only.clone(), reason: format!("the request is about one file, {only}") }
        }
        many => Route::Planned { reason: format!("the request names {} files", many.len()) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<String> {
        ["src/net/fetch.py", "src/app.py", "app/app.py", "README.md"].iter().map(|s| s.to_string()).collect()
    }

    fn words() -> Vec<String> {
        vec!["callers".into(), "tests for".into()]
    }

    #[test]
    fn one_named_file_goes_straight_to_the_coder() {
        let r = route("In `fetch.py`, make retries 3.", &known(), 2, &words());
        assert!(matches!(&r, Route::Direct { file, .. } if file == "src/net/fetch.py"), "{r:?}");
        let r = route("rename x in src/app.py", &known(), 2, &words());
        assert!(matches!(&r, Route::Direct { file, .. } if file == "src/app.py"), "{r:?}");
    }

    #[test]
    fn several_files_no_file_or_a_keyword_need_a_plan() {
        assert!(matches!(route("move f from src/app.py to fetch.py", &known(), 2, &words()), Route::Planned { .. }));
        assert!(matches!(route("add a timeout everywhere", &known(), 2, &words()), Route::Planned { .. }));
        let r = route("write tests for fetch.py", &known(), 2, &words());
        assert!(r.reason().contains("tests for"), "{r:?}");
        // `app.py` is ambiguous (two files have that name): it names nothing.
        assert!(matches!(route("fix app.py", &known(), 2, &words()), Route::Planned { .. }));
        // plan_min_files = 1 plans every request.
        assert!(matches!(route("fix src/app.py", &known(), 1, &words()), Route::Planned { .. }));
    }

    #[test]
    fn keywords_match_whole_words_only() {
        let keys = vec!["move".to_string(), "tests for".to_string()];
        assert_eq!(said_phrase("remove the check from src/app.py", &keys), None);
        assert_eq!(said_phrase("Move `fetch` into net", &keys).map(String::as_str), Some("move"));
        assert_eq!(said_phrase("write Tests  for parser.rs", &keys).map(String::as_str), Some("tests for"));
        let r = route("remove the check from src/app.py", &known(), 2, &keys);
        assert!(matches!(r, Route::Direct { .. }), "{r:?}");
    }
}
