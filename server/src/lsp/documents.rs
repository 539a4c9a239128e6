//! The open documents, owned behind one `std::sync::Mutex` that handlers touch
//! synchronously (never across an `.await`), so changes apply in arrival order.

use crate::syntax::{extract_symbols, language_by_name, language_for_path, IncrementalTree, Symbol};
use crate::text::{Document, PositionEncoding, TextChange};
use std::collections::HashMap;
use std::path::Path;

/// One open buffer: its text and, for languages tinycoder parses, its syntax tree.
pub struct OpenDocument {
    pub doc: Document,
    pub tree: Option<IncrementalTree>,
}

impl OpenDocument {
    /// The symbols of the current text (reparses incrementally if needed); empty without a tree.
    pub fn symbols(&mut self) -> (Vec<Symbol>, String) {
        let text = self.doc.text();
        let Some(tree) = &mut self.tree else {
            return (Vec::new(), text);
        };
        let lang = tree.language();
        match tree.tree(self.doc.rope()) {
            Some(t) => (extract_symbols(lang, t, text.as_bytes()), text),
            None => (Vec::new(), text),
        }
    }
}

/// Every open document, keyed by URI string.
#[derive(Default)]
pub struct DocumentStore {
    docs: HashMap<String, OpenDocument>,
}

impl DocumentStore {
    /// Opens (or reopens) a document; binary text (NUL bytes) gets no syntax tree.
    pub fn open(&mut self, uri: &str, path: Option<&Path>, language_id: &str, version: i32, text: &str) {
        let lang = language_by_name(language_id).or_else(|| path.and_then(language_for_path));
        let binary = text.as_bytes().contains(&0);
        if binary {
            tracing::warn!(uri, "document holds NUL bytes; kept as text without a syntax tree");
        }
        let tree = lang.filter(|_| !binary).map(IncrementalTree::new);
        self.docs.insert(uri.to_string(), OpenDocument { doc: Document::new(text, version, language_id), tree });
    }

    /// Applies one `didChange`; unknown documents are logged and ignored.
    pub fn change(&mut self, uri: &str, version: i32, changes: &[TextChange], enc: PositionEncoding) {
        let Some(open) = self.docs.get_mut(uri) else {
            tracing::warn!(uri, "didChange for a document that is not open; ignored");
            return;
        };
        let edits = open.doc.apply_changes(changes, enc, version);
        if let Some(tree) = &mut open.tree {
            if changes.iter().any(|c| c.range.is_none()) {
                tree.reset();
            } else {
                tree.edit(&edits);
            }
        }
    }

    /// Closes a document.
    pub fn close(&mut self, uri: &str) {
        if self.docs.remove(uri).is_none() {
            tracing::warn!(uri, "didClose for a document that is not open; ignored");
        }
    }

    /// Every open document with its URI.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &OpenDocument)> {
        self.docs.iter()
    }

    /// An open document.
    pub fn get(&self, uri: &str) -> Option<&OpenDocument> {
        self.docs.get(uri)
    }

    /// An open document, mutably (to reparse).
    pub fn get_mut(&mut self, uri: &str) -> Option<&mut OpenDocument> {
        self.docs.get_mut(uri)
    }
}
