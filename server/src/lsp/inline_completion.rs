//! `textDocument/inlineCompletion` (LSP 3.18) and `textDocument/completion`:
//! ghost text from [`crate::complete`], and the same suggestion as a completion
//! item for clients without inline completion.
//!
//! The document is read under the store's lock only to cut the prefix and suffix
//! (no model call, no lock across an `.await`); `didChange` never waits for a
//! suggestion. Each request takes a turn per document: a suggestion the user is
//! typing through comes from the cache at once; otherwise it waits
//! `completion.debounce_ms` and answers with no items when a newer request for the
//! same document came meanwhile. A newer request also cancels the generation of
//! the one before, and a `$/cancelRequest` drops the handler's future
//! (tower-lsp-server answers RequestCancelled), which drops the HTTP request.

use super::commands::request_failed;
use super::convert::to_text_position;
use super::server::{lock_err, uri_key, Backend};
use crate::complete::{suggest, FimWindow, SuggestionCache};
use crate::text::{Document, PositionEncoding};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

/// Completion state shared by all requests: the latest request of each document,
/// recent suggestions, and whether the client shows inline completions itself.
pub struct Completions {
    latest: Mutex<HashMap<String, (u64, CancellationToken)>>,
    next: AtomicU64,
    cache: Mutex<SuggestionCache>,
    /// The client announced `textDocument.inlineCompletion`: completion items stay empty.
    client_inline: AtomicBool,
}

impl Default for Completions {
    fn default() -> Self {
        Self {
            latest: Mutex::default(),
            next: AtomicU64::new(0),
            cache: Mutex::new(SuggestionCache::new(0)),
            client_inline: AtomicBool::new(false),
        }
    }
}

/// One request's turn; leaving it removes it from the table if it is still the latest.
pub struct Turn {
    owner: Arc<Completions>,
    key: String,
    number: u64,
    /// Cancelled when a newer request for the same document arrives.
    pub cancel: CancellationToken,
}

impl Completions {
    /// Starts the turn of a new request for `key`, cancelling the one before.
    pub fn begin(self: &Arc<Self>, key: &str) -> Turn {
        let number = self.next.fetch_add(1, Ordering::SeqCst);
        let cancel = CancellationToken::new();
        if let Ok(mut latest) = self.latest.lock() {
            if let Some((_, older)) = latest.insert(key.to_string(), (number, cancel.clone())) {
                older.cancel();
            }
        }
        Turn { owner: self.clone(), key: key.to_string(), number, cancel }
    }

    /// Records whether the client shows inline completions (from its capabilities).
    pub fn set_client_inline(&self, yes: bool) {
        self.client_inline.store(yes, Ordering::Relaxed);
    }

    /// Forgets the suggestions of a closed document.
    pub fn forget(&self, key: &str) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.forget(key);
        }
    }
}

impl Turn {
    /// Whether no newer request for the document has arrived.
    pub fn is_latest(&self) -> bool {
        self.owner.latest.lock().ok().and_then(|l| l.get(&self.key).map(|(n, _)| *n == self.number)).unwrap_or(false)
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Ok(mut latest) = self.owner.latest.lock() {
            if latest.get(&self.key).is_some_and(|(n, _)| *n == self.number) {
                latest.remove(&self.key);
            }
        }
    }
}

/// The char index of `pos` in `doc`, or an error when it is not in the document.
pub fn cursor_in(doc: &Document, pos: Position, enc: PositionEncoding) -> Result<usize> {
    let past_end = || {
        Error::invalid_params(format!(
            "position {}:{} is past the end of the document ({} lines); ask again at a position inside it",
            pos.line,
            pos.character,
            doc.rope().len_lines()
        ))
    };
    if pos.line as usize >= doc.rope().len_lines() {
        return Err(past_end());
    }
    let idx = doc.position_to_char(to_text_position(pos), enc);
    // A column past the end of its line clamps; a clamped position does not come back the same.
    if doc.char_to_position(idx, enc) != to_text_position(pos) {
        return Err(past_end());
    }
    Ok(idx)
}

fn no_items() -> Option<InlineCompletionResponse> {
    Some(InlineCompletionResponse::List(InlineCompletionList { items: Vec::new() }))
}

/// The identifier characters just before the cursor (what a completion item replaces).
fn word_before(line_before_cursor: &str) -> &str {
    let start = line_before_cursor
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map_or(line_before_cursor.len(), |(i, _)| i);
    &line_before_cursor[start..]
}

impl Backend {
    /// The suggestion at `pos` of the document `uri` (cache first, else the model after
    /// the debounce), with the window it was made for; `None` when there is none or a
    /// newer request took over.
    async fn suggestion_at(&self, uri: &Uri, pos: Position) -> Result<Option<(String, FimWindow)>> {
        let settings = self.settings().ok_or_else(|| request_failed("tinycoder is not initialized yet"))?;
        let config = settings.loaded.config.completion.clone();
        if !config.enabled {
            return Ok(None);
        }
        let key = uri_key(uri);
        let (cursor, window) = {
            let docs = self.docs.lock().map_err(lock_err)?;
            let open = docs.get(&key).ok_or_else(|| Error::invalid_params(format!("document {key} is not open")))?;
            let cursor = cursor_in(&open.doc, pos, self.encoding())?;
            let window = FimWindow::around(
                open.doc.rope(),
                cursor,
                config.max_prefix_chars as usize,
                config.max_suffix_chars as usize,
            );
            (cursor, window)
        };
        let turn = self.completions.begin(&key);
        let cached = self.completions.cache.lock().ok().and_then(|mut cache| {
            cache.resize(config.cache_entries as usize);
            cache.get(&key, cursor, &window)
        });
        if let Some(rest) = cached {
            tracing::debug!(chars = rest.chars().count(), "inline completion from the cache");
            return Ok(Some((rest, window)));
        }
        let model = settings.model.clone().map_err(request_failed)?;
        tokio::select! {
            _ = turn.cancel.cancelled() => return Ok(None),
            _ = tokio::time::sleep(std::time::Duration::from_millis(config.debounce_ms)) => {}
        }
        if !turn.is_latest() {
            return Ok(None);
        }
        match suggest(model.as_ref(), &settings.prompts, &config, &window, turn.cancel.clone()).await {
            Ok(Some(text)) => {
                if let Ok(mut cache) = self.completions.cache.lock() {
                    cache.put(&key, cursor, &window, &text);
                }
                Ok(Some((text, window)))
            }
            Ok(None) => Ok(None),
            Err(e) if e.is_cancelled() => Ok(None),
            Err(e) => Err(request_failed(e.to_string())),
        }
    }

    /// `textDocument/inlineCompletion`: at most one suggestion, inserted at the cursor.
    pub async fn inline_completion(&self, params: InlineCompletionParams) -> Result<Option<InlineCompletionResponse>> {
        let tdp = params.text_document_position;
        let Some((text, _)) = self.suggestion_at(&tdp.text_document.uri, tdp.position).await? else {
            return Ok(no_items());
        };
        let at = tdp.position;
        Ok(Some(InlineCompletionResponse::List(InlineCompletionList {
            items: vec![InlineCompletionItem {
                insert_text: text,
                filter_text: None,
                range: Some(Range::new(at, at)),
                command: None,
                insert_text_format: Some(InsertTextFormat::PLAIN_TEXT),
            }],
        })))
    }

    /// `textDocument/completion`: the suggestion as one item replacing the word before the
    /// cursor with that word and the suggestion (so clients that filter by the typed word
    /// keep it). Empty for clients that show inline completions, and while disabled.
    pub async fn completion_items(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let empty = || Ok(Some(CompletionResponse::List(CompletionList { is_incomplete: true, items: Vec::new() })));
        let enabled = self.settings().is_some_and(|s| s.loaded.config.completion.items);
        if !enabled || self.completions.client_inline.load(Ordering::Relaxed) {
            return empty();
        }
        let tdp = params.text_document_position;
        let Some((text, window)) = self.suggestion_at(&tdp.text_document.uri, tdp.position).await? else {
            return empty();
        };
        let word = word_before(window.line_before_cursor());
        let enc = self.encoding();
        let word_units = word.chars().map(|c| enc.len_of(c) as u32).sum::<u32>();
        let at = tdp.position;
        let start = Position::new(at.line, at.character.saturating_sub(word_units));
        let new_text = format!("{word}{text}");
        let label = new_text.lines().next().unwrap_or_default().to_string();
        Ok(Some(CompletionResponse::List(CompletionList {
            // The suggestion changes as the user types: ask again on every keystroke.
            is_incomplete: true,
            items: vec![CompletionItem {
                label,
                kind: Some(CompletionItemKind::TEXT),
                detail: Some("tinycoder".into()),
                filter_text: Some(new_text.clone()),
                sort_text: Some(String::new()),
                insert_text_format: Some(InsertTextFormat::PLAIN_TEXT),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(Range::new(start, at), new_text))),
                ..Default::default()
            }],
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::word_before;

    #[test]
    fn the_word_before_the_cursor_is_its_identifier_characters() {
        assert_eq!(word_before("    return tot"), "tot");
        assert_eq!(word_before("    print(na_me2"), "na_me2");
        assert_eq!(word_before("x = "), "");
        assert_eq!(word_before("s = 'é"), "é");
        assert_eq!(word_before(""), "");
    }
}
