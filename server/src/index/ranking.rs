//! How search results are ranked: the weights of `[index]` (fields, parts of
//! error output, locations, test code) and the weighted words of a query.

use super::query::{ParsedQuery, Role};
use super::IndexError;
use crate::config::{ConfigInputs, FieldWeights, IndexConfig, LoadedConfig};
use std::collections::HashSet;
use std::sync::OnceLock;

/// A searchable field and its weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SearchField {
    Symbol,
    Container,
    Signature,
    Path,
    Code,
    Doc,
}

impl SearchField {
    /// Every searchable field.
    pub const ALL: [SearchField; 6] =
        [Self::Symbol, Self::Container, Self::Signature, Self::Path, Self::Code, Self::Doc];

    /// The schema field's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Symbol => "symbol",
            Self::Container => "container",
            Self::Signature => "signature",
            Self::Path => "path",
            Self::Code => "code",
            Self::Doc => "doc",
        }
    }
}

/// A query word as the ranking uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryWord {
    pub text: String,
    pub weight: f32,
    /// A name (identifier, exception type, quoted name, word of a short query) rather than a plain word.
    pub name: bool,
    /// What the split parts of the word weigh, relative to the whole word.
    pub part_weight: f32,
    /// A compound of consecutive words (matched against names and code only).
    pub compound: bool,
}

/// Longest compound name tried (the tokenizer keeps identifiers up to this long).
const MAX_COMPOUND_BYTES: usize = 64;

/// Whether a piece of text is written like code: `_`, camelCase or an inner
/// capital, letters next to digits, or `.`, `::`, `()`, `!` between or after names.
fn looks_like_code(s: &str) -> bool {
    let chars: Vec<char> = s.chars().collect();
    let inner_upper = chars.windows(2).any(|w| w[0].is_lowercase() && w[1].is_uppercase());
    let letter_digit = chars.windows(2).any(|w| w[0].is_alphabetic() && w[1].is_ascii_digit());
    let joined = s.trim_end_matches(['.', ',', ':', ';', '?']);
    inner_upper
        || letter_digit
        || s.contains('_')
        || joined.contains("::")
        || joined.contains("()")
        || joined.ends_with('!')
        || joined.split('.').filter(|p| !p.is_empty()).count() > 1
}

/// The ranking settings of `[index]` (see config/tinycoder.toml for each one).
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Field weights of names.
    pub name_fields: Vec<(SearchField, f32)>,
    /// Field weights of plain words.
    pub word_fields: Vec<(SearchField, f32)>,
    pub identifier_part_weight: f32,
    pub field_tie_breaker: f32,
    pub error_message_weight: f32,
    pub error_type_weight: f32,
    pub error_name_weight: f32,
    pub error_code_weight: f32,
    pub location_weight: f32,
    pub location_decay: f32,
    pub module_weight: f32,
    pub test_rank_factor: f32,
    pub test_query_words: HashSet<String>,
    pub stop_words: HashSet<String>,
    pub max_query_words: usize,
    /// A query of at most this many words, none a stop word, is a list of names.
    pub short_query_words: usize,
    pub compound_weight: f32,
    pub compound_max_words: usize,
}

impl Ranking {
    /// The ranking `cfg` describes.
    pub fn from_config(cfg: &IndexConfig) -> Self {
        let lower = |v: &[String]| v.iter().map(|w| w.to_lowercase()).collect();
        let fields = |w: &FieldWeights| {
            vec![
                (SearchField::Symbol, w.symbol),
                (SearchField::Container, w.container),
                (SearchField::Signature, w.signature),
                (SearchField::Path, w.path),
                (SearchField::Code, w.code),
                (SearchField::Doc, w.doc),
            ]
        };
        Self {
            name_fields: fields(&cfg.name_weights),
            word_fields: fields(&cfg.word_weights),
            identifier_part_weight: cfg.identifier_part_weight,
            field_tie_breaker: cfg.field_tie_breaker,
            error_message_weight: cfg.error_message_weight,
            error_type_weight: cfg.error_type_weight,
            error_name_weight: cfg.error_name_weight,
            error_code_weight: cfg.error_code_weight,
            location_weight: cfg.location_weight,
            location_decay: cfg.location_decay,
            module_weight: cfg.module_weight,
            test_rank_factor: cfg.test_rank_factor,
            test_query_words: lower(&cfg.test_query_words),
            stop_words: lower(&cfg.query_stop_words),
            max_query_words: cfg.max_query_words,
            short_query_words: cfg.short_query_words,
            compound_weight: cfg.compound_weight,
            compound_max_words: cfg.compound_max_words,
        }
    }

    /// The ranking of the built-in configuration (for searches without a configuration at hand).
    pub fn builtin() -> Result<Ranking, IndexError> {
        static BUILTIN: OnceLock<Result<Ranking, String>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                LoadedConfig::load(&ConfigInputs::default())
                    .map(|l| Ranking::from_config(&l.config.index))
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(IndexError::Config)
    }

    /// How much a word in a part of `role` weighs.
    pub fn role_weight(&self, role: Role) -> f32 {
        match role {
            Role::ExceptionType => self.error_type_weight,
            Role::Message => self.error_message_weight,
            Role::Name => self.error_name_weight,
            Role::CodeLine => self.error_code_weight,
            Role::Text => 1.0,
        }
    }

    /// The words of a query with their weights: identifiers and words as written
    /// (the fields' analyzers split and stem them), stop words, numbers and single
    /// letters dropped, each word once at its highest weight, the most important
    /// parts first, at most `max_query_words`. A word is a name when its part is one
    /// (exception type, quoted name, source line), when it is written like an
    /// identifier (`_`, camelCase, digits, `.`/`::`/`()` around it), or when the
    /// whole query is a few words without stop words (`textwrap dedent`).
    pub fn query_words(&self, q: &ParsedQuery) -> Vec<QueryWord> {
        let mut parts: Vec<&(Role, String)> = q.parts.iter().collect();
        parts.sort_by_key(|(role, _)| *role);
        let all_words: Vec<&str> = q
            .parts
            .iter()
            .flat_map(|(_, t)| t.split(|c: char| !(c.is_alphanumeric() || c == '_')))
            .filter(|w| !w.is_empty())
            .collect();
        let single = all_words.len() == 1;
        let short = !q.is_error
            && all_words.len() <= self.short_query_words
            && !all_words.iter().any(|w| self.stop_words.contains(&w.to_lowercase()));
        let mut out: Vec<QueryWord> = Vec::new();
        for (role, text) in parts {
            let weight = self.role_weight(*role);
            let role_name = matches!(role, Role::ExceptionType | Role::Name | Role::CodeLine);
            let part_weight = if *role == Role::ExceptionType { 0.0 } else { self.identifier_part_weight };
            for chunk in text.split_whitespace() {
                let chunk_name = role_name || short || looks_like_code(chunk);
                for word in chunk.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                    let noise = word.is_empty()
                        || word.chars().all(|c| c.is_ascii_digit() || c == '_')
                        || (!single && (word.chars().count() < 2 || self.stop_words.contains(&word.to_lowercase())));
                    if noise {
                        continue;
                    }
                    let name = chunk_name || looks_like_code(word);
                    if let Some(old) = out.iter_mut().find(|w| w.text == word) {
                        old.weight = old.weight.max(weight);
                        old.name |= name;
                    } else if out.len() < self.max_query_words {
                        out.push(QueryWord { text: word.to_string(), weight, name, part_weight, compound: false });
                    }
                }
            }
        }
        let words = out.len();
        for c in self.compounds(q) {
            if out.len() >= words + self.max_query_words {
                break;
            }
            if !out.iter().any(|w| w.text.eq_ignore_ascii_case(&c)) {
                out.push(QueryWord {
                    text: c,
                    weight: self.compound_weight,
                    name: true,
                    part_weight: 0.0,
                    compound: true,
                });
            }
        }
        out
    }

    /// Names made of consecutive words of a message or plain text, joined as
    /// code joins them (`trailing comma` → `trailingcomma`, matching `TrailingComma`,
    /// and `trailing_comma`), with and without the stop words between them.
    fn compounds(&self, q: &ParsedQuery) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        if self.compound_weight <= 0.0 {
            return out;
        }
        for (_, text) in q.parts.iter().filter(|(r, _)| matches!(r, Role::Message | Role::Text)) {
            let all: Vec<String> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty() && !w.chars().all(|c| c.is_ascii_digit()))
                .map(str::to_lowercase)
                .collect();
            let content: Vec<String> = all.iter().filter(|w| !self.stop_words.contains(*w)).cloned().collect();
            for seq in [&all, &content] {
                for n in 2..=self.compound_max_words {
                    for window in seq.windows(n) {
                        for joined in [window.concat(), window.join("_")] {
                            if joined.len() <= MAX_COMPOUND_BYTES && !out.contains(&joined) {
                                out.push(joined);
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// Whether the query asks about tests (then test code is not ranked down).
    pub fn about_tests(&self, q: &ParsedQuery) -> bool {
        q.parts.iter().any(|(_, t)| {
            t.split(|c: char| !c.is_alphanumeric()).any(|w| self.test_query_words.contains(&w.to_lowercase()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::query::parse_query;

    fn ranking() -> Ranking {
        let cfg = crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).unwrap().config.index;
        Ranking::from_config(&cfg)
    }

    #[test]
    fn words_drop_noise_and_keep_the_best_weight() {
        let r = ranking();
        let q = parse_query("how do I split a URL into its 5 parts");
        let words: Vec<(String, bool)> =
            r.query_words(&q).into_iter().filter(|w| !w.compound).map(|w| (w.text, w.name)).collect();
        assert_eq!(words, [("split".into(), false), ("URL".into(), false), ("parts".into(), false)]);
        let q = parse_query("TypeError: namedtuple() got an unexpected keyword argument 'verbose'");
        let w: Vec<(String, f32, bool)> = r.query_words(&q).into_iter().map(|w| (w.text, w.weight, w.name)).collect();
        assert_eq!(w[0], ("TypeError".to_string(), r.error_type_weight, true));
        assert!(w.contains(&("verbose".to_string(), r.error_name_weight, true)), "{w:?}");
        assert!(w.contains(&("namedtuple".to_string(), r.error_message_weight, true)), "{w:?}");
        assert!(w.contains(&("unexpected".to_string(), r.error_message_weight, false)), "{w:?}");
        // A single word is kept even when short or a stop word: it may be a name.
        let os = r.query_words(&parse_query("os"));
        assert_eq!((os[0].text.as_str(), os[0].name), ("os", true));
        let short: Vec<bool> = r
            .query_words(&parse_query("textwrap dedent"))
            .into_iter()
            .filter(|w| !w.compound)
            .map(|w| w.name)
            .collect();
        assert_eq!(short, [true, true]);
    }

    #[test]
    fn messages_also_give_the_names_code_makes_of_them() {
        let r = ranking();
        let q = parse_query("Error: EOF while parsing a value");
        let w: Vec<String> = r.query_words(&q).into_iter().map(|w| w.text).collect();
        assert!(w.contains(&"eofwhileparsinga".to_string()) && w.contains(&"parsing_a_value".to_string()), "{w:?}");
        assert!(w.contains(&"eofwhileparsingvalue".to_string()), "stop words left out too: {w:?}");
    }

    #[test]
    fn queries_about_tests() {
        let r = ranking();
        assert!(r.about_tests(&parse_query("where are the tests of urlsplit")));
        assert!(!r.about_tests(&parse_query("urlsplit rejects an invalid IPv6 URL")));
    }
}
