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

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        CodeTokenStream::new(text, None)
    }
}

/// [`CodeTokenizer`] plus the English stem of every lower-case word that has one.
#[derive(Debug, Clone, Default)]
pub struct StemmedCodeTokenizer;

impl Tokenizer for StemmedCodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        CodeTokenStream::new(text, Some(rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)))
    }
}

/// Docstrings and comments as English: the code tokenizer's words, English stop words dropped, stemmed.
pub fn prose_analyzer() -> TextAnalyzer {
    let stop = StopWordFilter::new(Language::English).unwrap_or_else(|| StopWordFilter::remove(Vec::new()));
    TextAnalyzer::builder(CodeTokenizer).filter(stop).filter(Stemmer::new(Language::English)).build()
}

/// The tokens of one text, produced one at a time into a single reused
/// [`Token`] (indexing tokenizes every chunk: no allocation per token).
pub struct CodeTokenStream<'a> {
    text: &'a str,
    /// Where the scan for the next word starts.
    cursor: usize,
    /// Byte range of the current word.
    word: (usize, usize),
    /// Byte ranges (within the word) of the current word's parts.
    parts: Vec<(usize, usize)>,
    /// The next part to emit; `parts.len()` when the word is done.
    next_part: usize,
    /// Position of the current word's whole token.
    position: usize,
    /// Whether a word has been emitted (positions start at 0).
    started: bool,
    stemmer: Option<rust_stemmers::Stemmer>,
    /// The token just emitted may be followed by its stem.
    stem_due: bool,
    token: Token,
}

impl<'a> CodeTokenStream<'a> {
    fn new(text: &'a str, stemmer: Option<rust_stemmers::Stemmer>) -> Self {
        Self {
            text,
            cursor: 0,
            word: (0, 0),
            parts: Vec::new(),
            next_part: 0,
            position: 0,
            started: false,
            stemmer,
            stem_due: false,
            token: Token::default(),
        }
    }

    /// Replaces the current token's text by its stem, if it is a stemmed word with a different stem.
    fn stem_token(&mut self) -> bool {
        let Some(stemmer) = &self.stemmer else { return false };
        let text = &self.token.text;
        if text.len() < MIN_STEMMED_BYTES || !text.bytes().all(|b| b.is_ascii_lowercase()) {
            return false;
        }
        let stem = stemmer.stem(text);
        if *stem == **text {
            return false;
        }
        self.token.text = stem.into_owned();
        true
    }

    /// Sets the token to `text[from..to]`, lower-cased, at `position`.
    fn set_token(&mut self, from: usize, to: usize, position: usize) {
        let t = &mut self.token;
        t.offset_from = from;
        t.offset_to = to;
        t.position = position;
        t.position_length = 1;
        t.text.clear();
        let s = &self.text[from..to];
        if s.is_ascii() {
            t.text.push_str(s);
            t.text.make_ascii_lowercase();
        } else {
            t.text.push_str(&s.to_lowercase());
        }
    }

    /// Moves to the next word worth a token; false at the end of the text.
    fn next_word(&mut self) -> bool {
        if self.started {
            self.position += self.parts.len().max(1);
        }
        let text = self.text;
        loop {
            let Some(start) = scan(text, self.cursor, is_word_char) else {
                self.cursor = text.len();
                return false;
            };
            let end = scan(text, start, |c| !is_word_char(c)).unwrap_or(text.len());
            self.cursor = end;
            let word = &text[start..end];
            if word.len() > MAX_TOKEN_BYTES || word.bytes().all(|b| b == b'_') {
                continue;
            }
            self.word = (start, end);
            split_identifier_into(word, &mut self.parts);
            self.next_part = 0;
            self.started = true;
            return true;
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Byte offset of the first char at or after `from` for which `pred` holds.
fn scan(text: &str, from: usize, pred: impl Fn(char) -> bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if pred(b as char) {
                return Some(i);
            }
            i += 1;
        } else {
            let c = text[i..].chars().next()?;
            if pred(c) {
                return Some(i);
            }
            i += c.len_utf8();
        }
    }
    None
}

impl TokenStream for CodeTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if std::mem::take(&mut self.stem_due) && self.stem_token() {
            return true;
        }
        let (start, end) = self.word;
        // The parts of the current word (one that is the whole word adds nothing).
        while self.next_part < self.parts.len() {
            let k = self.next_part;
            self.next_part += 1;
            let (ps, pe) = self.parts[k];
            if (start + ps, start + pe) != (start, end) {
                self.set_token(start + ps, start + pe, self.position + k);
                self.stem_due = true;
                return true;
            }
        }
        if !self.next_word() {
            return false;
        }
        let (start, end) = self.word;
        self.set_token(start, end, self.position);
        self.stem_due = true;
        true
    }
    fn token(&self) -> &Token {
        &self.token
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

/// Longest token kept; longer runs (hashes, base64) are noise.
const MAX_TOKEN_BYTES: usize = 64;

/// Shortest word that is stemmed (shorter ones are names like `os`, `io`, `re`).
const MIN_STEMMED_BYTES: usize = 4;

fn collect(mut stream: CodeTokenStream<'_>) -> Vec<Token> {
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token.clone());
    }
    out
}

/// The tokens of `text`: whole identifiers then their parts, lower-cased.
pub fn tokenize(text: &str) -> Vec<Token> {
    collect(CodeTokenStream::new(text, None))
}

/// The tokens of [`tokenize`], each lower-case ASCII word followed by its English stem when that differs.
pub fn tokenize_stemmed(text: &str) -> Vec<Token> {
    collect(CodeTokenStream::new(text, Some(rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English))))
}

/// Byte ranges of the parts of an identifier: split at `_`, lower→Upper, ACRONYMWord and letter↔digit.
pub fn split_identifier(word: &str) -> Vec<(usize, usize)> {
    let mut parts = Vec::new();
    split_identifier_into(word, &mut parts);
    parts
}

/// [`split_identifier`] into a reused vector (cleared first).
fn split_identifier_into(word: &str, parts: &mut Vec<(usize, usize)>) {
    parts.clear();
    let mut start: Option<usize> = None;
    let mut prev: Option<char> = None;
    let mut chars = word.char_indices().peekable();
    while let Some((idx, c)) = chars.next() {
        let last = prev.replace(c);
        if c == '_' {
            if let Some(s) = start.take() {
                parts.push((s, idx));
            }
            continue;
        }
        let (Some(s), Some(prev)) = (start, last) else {
            start = Some(idx);
            continue;
        };
        let next = chars.peek().map(|&(_, n)| n);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            || (prev.is_alphabetic() && c.is_ascii_digit())
            || (prev.is_ascii_digit() && c.is_alphabetic());
        if boundary {
            parts.push((s, idx));
            start = Some(idx);
        }
    }
    if let Some(s) = start {
        parts.push((s, word.len()));
    }
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
    fn parts_share_positions_with_their_word_and_stems_with_their_token() {
        let got: Vec<(String, usize)> =
            tokenize_stemmed("parse_config x HTTPServer").into_iter().map(|t| (t.text, t.position)).collect();
        let want = [
            ("parse_config", 0),
            ("parse", 0),
            ("pars", 0),
            ("config", 1),
            ("x", 2),
            ("httpserver", 3),
            ("http", 3),
            ("server", 4),
        ];
        assert_eq!(got, want.map(|(t, p)| (t.to_string(), p)));
        // The tantivy stream (what the index reads) gives the same tokens as the collected list.
        let mut tokenizer = CodeTokenizer;
        let mut stream = tokenizer.token_stream("größe_überall __ aVeryLong");
        let mut streamed = Vec::new();
        while stream.advance() {
            streamed.push(stream.token().text.clone());
        }
        assert_eq!(streamed, terms("größe_überall __ aVeryLong"));
        assert_eq!(streamed, ["größe_überall", "größe", "überall", "averylong", "a", "very", "long"]);
    }

    #[test]
    fn offsets_point_into_the_text() {
        let text = "fn loadConfig(path: &Path)";
        for t in tokenize(text) {
            assert_eq!(text[t.offset_from..t.offset_to].to_lowercase(), t.text);
        }
    }
}
