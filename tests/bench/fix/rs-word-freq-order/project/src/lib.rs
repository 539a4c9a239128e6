//! Word frequencies for the search page's "popular terms" box.
use std::collections::HashMap;

/// Words that carry no meaning on their own.
const STOP_WORDS: &[&str] = &["a", "an", "and", "the", "of", "to", "in", "is", "it", "for", "on"];

/// Lower-cased words of `text`, split on anything that is not alphanumeric or an apostrophe.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty())
}

pub fn counts(text: &str) -> HashMap<String, usize> {
    let mut map = HashMap::new();
    for w in words(text) {
        if !STOP_WORDS.contains(&w.as_str()) {
            *map.entry(w).or_insert(0) += 1;
        }
    }
    map
}

/// The `n` most frequent words, most frequent first; ties in alphabetical order.
pub fn top_words(text: &str, n: usize) -> Vec<(String, usize)> {
    let mut pairs: Vec<(String, usize)> = counts(text).into_iter().collect();
    pairs.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    pairs.truncate(n);
    pairs
}

pub fn render(top: &[(String, usize)]) -> String {
    top.iter().map(|(w, c)| format!("{w} ({c})")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUERIES: &str = "Rust async runtime. rust borrow checker; async traits in Rust? \
                           the borrow checker and lifetimes; Rust's async book";

    #[test]
    fn words_are_normalised() {
        assert_eq!(words("Don't STOP—'now'").collect::<Vec<_>>(), ["don't", "stop", "now"]);
    }

    #[test]
    fn stop_words_are_ignored() {
        assert!(!counts(QUERIES).contains_key("the"));
    }

    #[test]
    fn most_common_first() {
        let top = top_words(QUERIES, 3);
        assert_eq!(render(&top), "async (3), rust (3), borrow (2)");
    }
}
