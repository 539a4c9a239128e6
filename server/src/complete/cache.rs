//! Recent suggestions, so that typing through one answers without a model call.
//!
//! When the user types the first characters of the ghost text, the editor asks
//! again one position further on; the rest of the same suggestion is still the
//! model's best guess (greedy decoding would write it again), so it comes from
//! here at once. A hit needs the same document, the same text after the cursor,
//! the cursor moved forward by exactly the typed characters, and the text before
//! the old cursor unchanged.

use super::window::FimWindow;
use std::collections::VecDeque;

/// One suggestion and where it was made.
#[derive(Debug, Clone)]
struct Entry {
    doc: String,
    /// Char index of the cursor in the document when the model was asked.
    cursor: usize,
    window: FimWindow,
    suggestion: String,
}

/// The last `capacity` suggestions, oldest first.
#[derive(Debug)]
pub struct SuggestionCache {
    capacity: usize,
    entries: VecDeque<Entry>,
}

impl SuggestionCache {
    /// An empty cache keeping at most `capacity` suggestions (0 keeps none).
    pub fn new(capacity: usize) -> Self {
        Self { capacity, entries: VecDeque::new() }
    }

    /// Keeps at most `capacity` suggestions from now on (the oldest go first).
    pub fn resize(&mut self, capacity: usize) {
        self.capacity = capacity;
        while self.entries.len() > capacity {
            self.entries.pop_front();
        }
    }

    /// Remembers `suggestion`, made for `window` at char index `cursor` of `doc`.
    pub fn put(&mut self, doc: &str, cursor: usize, window: &FimWindow, suggestion: &str) {
        if self.capacity == 0 {
            return;
        }
        self.entries.retain(|e| !(e.doc == doc && e.cursor == cursor));
        self.entries.push_back(Entry {
            doc: doc.to_string(),
            cursor,
            window: window.clone(),
            suggestion: suggestion.to_string(),
        });
        while self.entries.len() > self.capacity {
            self.entries.pop_front();
        }
    }

    /// The rest of a remembered suggestion that the text before `cursor` has typed the
    /// start of (all of it when nothing was typed yet); `None` when none fits.
    pub fn get(&self, doc: &str, cursor: usize, window: &FimWindow) -> Option<String> {
        self.entries.iter().rev().find_map(|e| e.rest_at(doc, cursor, window))
    }

    /// Forgets every suggestion of `doc` (it was closed).
    pub fn forget(&mut self, doc: &str) {
        self.entries.retain(|e| e.doc != doc);
    }
}

impl Entry {
    fn rest_at(&self, doc: &str, cursor: usize, window: &FimWindow) -> Option<String> {
        if self.doc != doc || cursor < self.cursor || self.window.suffix != window.suffix {
            return None;
        }
        let typed_chars = cursor - self.cursor;
        let typed_bytes = match self.suggestion.char_indices().nth(typed_chars) {
            Some((i, _)) => i,
            // Typed all of it (or more): nothing left to suggest.
            None => return None,
        };
        let typed = &self.suggestion[..typed_bytes];
        let before = window.prefix.strip_suffix(typed)?;
        // Either window may have been cut further back than the other: one ends the other.
        let old = self.window.prefix.as_str();
        if !(before.ends_with(old) || old.ends_with(before)) {
            return None;
        }
        let rest = &self.suggestion[typed_bytes..];
        (!rest.trim().is_empty()).then(|| rest.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(prefix: &str, suffix: &str) -> FimWindow {
        FimWindow { prefix: prefix.into(), suffix: suffix.into() }
    }

    #[test]
    fn typing_through_a_suggestion_answers_its_rest() {
        let mut c = SuggestionCache::new(4);
        c.put("a.py", 20, &w("def f(a, b):\n    return ", "\n"), "a + b");
        assert_eq!(c.get("a.py", 20, &w("def f(a, b):\n    return ", "\n")).as_deref(), Some("a + b"));
        assert_eq!(c.get("a.py", 21, &w("def f(a, b):\n    return a", "\n")).as_deref(), Some(" + b"));
        assert_eq!(c.get("a.py", 23, &w("def f(a, b):\n    return a +", "\n")).as_deref(), Some(" b"));
        assert_eq!(c.get("a.py", 24, &w("def f(a, b):\n    return a + ", "\n")).as_deref(), Some("b"));
        // Typed all of it: no suggestion from here.
        assert_eq!(c.get("a.py", 25, &w("def f(a, b):\n    return a + b", "\n")), None);
    }

    #[test]
    fn a_different_character_document_suffix_or_edit_before_is_a_miss() {
        let mut c = SuggestionCache::new(4);
        c.put("a.py", 20, &w("x = ", "\n"), "foo(1)");
        assert_eq!(c.get("a.py", 21, &w("x = g", "\n")), None, "typed something else");
        assert_eq!(c.get("b.py", 21, &w("x = f", "\n")), None, "another document");
        assert_eq!(c.get("a.py", 21, &w("x = f", ")\n")), None, "the text after the cursor changed");
        assert_eq!(c.get("a.py", 21, &w("y = f", "\n")), None, "the text before changed");
        assert_eq!(c.get("a.py", 19, &w("x =", "\n")), None, "the cursor went back");
        assert_eq!(c.get("a.py", 22, &w("x = f", "\n")), None, "the cursor moved by more than was typed");
    }

    #[test]
    fn a_window_cut_further_back_still_matches() {
        let mut c = SuggestionCache::new(4);
        c.put("a.py", 100, &w("line1\nline2\nx = ", "\n"), "1 + 2");
        // The budget now drops the first line.
        assert_eq!(c.get("a.py", 102, &w("line2\nx = 1 ", "\n")).as_deref(), Some("+ 2"));
    }

    #[test]
    fn the_oldest_suggestion_goes_first_and_a_closed_document_is_forgotten() {
        let mut c = SuggestionCache::new(2);
        c.put("a.py", 1, &w("a", ""), "1");
        c.put("b.py", 1, &w("b", ""), "2");
        c.put("c.py", 1, &w("c", ""), "3");
        assert_eq!(c.get("a.py", 1, &w("a", "")), None);
        assert_eq!(c.get("b.py", 1, &w("b", "")).as_deref(), Some("2"));
        c.forget("b.py");
        assert_eq!(c.get("b.py", 1, &w("b", "")), None);
        assert_eq!(c.get("c.py", 1, &w("c", "")).as_deref(), Some("3"));
        let mut off = SuggestionCache::new(0);
        off.put("a.py", 1, &w("a", ""), "1");
        assert_eq!(off.get("a.py", 1, &w("a", "")), None, "capacity 0 keeps nothing");
    }

    #[test]
    fn multi_byte_suggestions_are_typed_through_by_chars() {
        let mut c = SuggestionCache::new(2);
        c.put("a.py", 5, &w("s = ", "\n"), "'é😀x'");
        assert_eq!(c.get("a.py", 7, &w("s = 'é", "\n")).as_deref(), Some("😀x'"));
        assert_eq!(c.get("a.py", 8, &w("s = 'é😀", "\n")).as_deref(), Some("x'"));
    }
}
