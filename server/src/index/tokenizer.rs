//! The code tokenizer: each identifier is emitted whole (lower-cased) and
//! also as its camelCase / snake_case / digit parts, so `HttpServerConfig`
//! matches `http server config`, `httpserverconfig` and `server`. Paths split
//! at `/` and `.` into their parts the same way. [`StemmedCodeTokenizer`]
//! adds the English stem of each word (`parsing` also as `pars`, like `parse`),
//! for names and signatures; [`prose_analyzer`] reads docstrings and comments
//! as English: code-aware words, stop words dropped, stemmed.

use tantivy::tokenizer::{Language, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer};

/// Name under which the tokenizer is registered in the index.
pub const CODE_TOKENIZER: &str = "code";
/// Name of [`StemmedCodeTokenizer`] in the index.
pub const CODE_STEM_TOKENIZER: &str = "code_stem";
/// Name of [`prose_analyzer`] in the index.
pub const PROSE_TOKENIZER: &str = "prose";

/// Splits code into identifiers and their parts (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct CodeTokenizer;

/// The tokens of one text, computed eagerly (texts are chunk-sized).
pub struct CodeTokenStream {
    tokens: Vec<Token>,
    index: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        CodeTokenStream { tokens: tokenize(text), index: 0 }
    }
}

/// [`CodeTokenizer`] plus the English stem of every lower-case word that has one.
#[derive(Debug, Clone, Default)]
pub struct StemmedCodeTokenizer;

impl Tokenizer for StemmedCodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        CodeTokenStream { tokens: tokenize_stemmed(text), index: 0 }
    }
}

/// Docstrings and comments as English: the code tokenizer's words, English stop words dropped, stemmed.
pub fn prose_analyzer() -> TextAnalyzer {
    let stop = StopWordFilter::new(Language::English).unwrap_or_else(|| StopWordFilter::remove(Vec::new()));
    TextAnalyzer::builder(CodeTokenizer).filter(stop).filter(Stemmer::new(Language::English)).build()
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        if self.index < self.tokens.len() {
            self.index += 1;
            true
        } else {
            false
        }
    }
    fn token(&self) -> &Token {
        &self.tokens[self.index - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.index - 1]
    }
}

/// Longest token kept; longer runs (hashes, base64) are noise.
const MAX_TOKEN_BYTES: usize = 64;

/// The tokens of `text`: whole identifiers then their parts, lower-cased.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut position = 0;
    let mut i = 0;
    while i < text.len() {
        let c = text[i..].chars().next().unwrap_or(' ');
        if !(c.is_alphanumeric() || c == '_') {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        while i < text.len() {
            let c = text[i..].chars().next().unwrap_or(' ');
            if !(c.is_alphanumeric() || c == '_') {
                break;
            }
            i += c.len_utf8();
        }
        let word = &text[start..i];
        if word.len() > MAX_TOKEN_BYTES || word.bytes().all(|b| b == b'_') {
            continue;
        }
        let parts = split_identifier(word);
        let whole = word.to_lowercase();
        let mut emit = |from: usize, to: usize, t: String, pos: usize| {
            out.push(Token { offset_from: from, offset_to: to, position: pos, text: t, position_length: 1 });
        };
        emit(start, i, whole.clone(), position);
        for (k, (ps, pe)) in parts.iter().enumerate() {
            let part = text[start + ps..start + pe].to_lowercase();
            if part != whole {
                emit(start + ps, start + pe, part, position + k);
            }
        }
        position += parts.len().max(1);
    }
    out
}

/// Shortest word that is stemmed (shorter ones are names like `os`, `io`, `re`).
const MIN_STEMMED_BYTES: usize = 4;

/// The tokens of [`tokenize`], each lower-case ASCII word followed by its English stem when that differs.
pub fn tokenize_stemmed(text: &str) -> Vec<Token> {
    let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    let base = tokenize(text);
    let mut out = Vec::with_capacity(base.len() + base.len() / 2);
    for t in base {
        let stem = (t.text.len() >= MIN_STEMMED_BYTES && t.text.bytes().all(|b| b.is_ascii_lowercase()))
            .then(|| stemmer.stem(&t.text).into_owned())
            .filter(|s| *s != t.text);
        let extra = stem.map(|s| Token { text: s, ..t.clone() });
        out.push(t);
        out.extend(extra);
    }
    out
}

/// Byte ranges of the parts of an identifier: split at `_`, lower→Upper, ACRONYMWord and letter↔digit.
pub fn split_identifier(word: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(idx, c)) in chars.iter().enumerate() {
        if c == '_' {
            if let Some(s) = start.take() {
                parts.push((s, idx));
            }
            continue;
        }
        let Some(s) = start else {
            start = Some(idx);
            continue;
        };
        let prev = chars[k - 1].1;
        let next = chars.get(k + 1).map(|&(_, n)| n);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            || (prev.is_alphabetic() && c.is_ascii_digit())
            || (prev.is_ascii_digit() && c.is_alphabetic());
        if boundary && prev != '_' {
            parts.push((s, idx));
            start = Some(idx);
        }
    }
    if let Some(s) = start {
        parts.push((s, word.len()));
    }
    parts
}

/// The lower-cased terms of `text` (for queries and tests).
pub fn terms(text: &str) -> Vec<String> {
    tokenize(text).into_iter().map(|t| t.text).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_whole_and_parts() {
        let cases: &[(&str, &[&str])] = &[
            ("HttpServerConfig", &["httpserverconfig", "http", "server", "config"]),
            ("parse_config_file", &["parse_config_file", "parse", "config", "file"]),
            ("a/b/c.rs", &["a", "b", "c", "rs"]),
            ("HTTPServer", &["httpserver", "http", "server"]),
            ("utf8Decode", &["utf8decode", "utf", "8", "decode"]),
            ("__init__", &["__init__", "init"]),
            ("x", &["x"]),
            ("größe_überall", &["größe_überall", "größe", "überall"]),
        ];
        for (input, want) in cases {
            assert_eq!(terms(input), want.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{input}");
        }
    }

    #[test]
    fn stemmed_tokens_follow_their_word() {
        let t: Vec<String> = tokenize_stemmed("parsing_files os").into_iter().map(|t| t.text).collect();
        assert_eq!(t, ["parsing_files", "parsing", "pars", "files", "file", "os"]);
        let mut prose = prose_analyzer();
        let mut stream = prose.token_stream("Removes the files, in order");
        let mut words = Vec::new();
        while stream.advance() {
            words.push(stream.token().text.clone());
        }
        assert_eq!(words, ["remov", "file", "order"]);
    }

    #[test]
    fn offsets_point_into_the_text() {
        let text = "fn loadConfig(path: &Path)";
        for t in tokenize(text) {
            assert_eq!(text[t.offset_from..t.offset_to].to_lowercase(), t.text);
        }
    }
}
