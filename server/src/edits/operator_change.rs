//! Operators a fix turned into another kind (`//` into `/`, `<` into `<=`)
//! where the changed definition's own words speak for the old kind: such a
//! patch can pass the tests (900 == 900.0) and still be wrong, so it is
//! questioned before it is proposed.

use crate::config::QuestionedOperator;
use crate::syntax::{code_token_spans, extract_symbols, language_for_path, parse, Symbol};
use similar::{capture_diff_slices, Algorithm, DiffOp};
use std::path::Path;

/// One questioned operator change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorQuestion {
    /// 1-based line of the new text.
    pub line: usize,
    pub from: String,
    pub to: String,
    /// The definition the operator is in.
    pub definition: String,
    /// The evidence word found in its signature or docstring.
    pub evidence: String,
    pub meaning: String,
}

impl OperatorQuestion {
    /// The question, in one line for people and the critic.
    pub fn question(&self) -> String {
        format!(
            "line {} changes `{}` to `{}` in `{}`: {}, while its signature or docstring says \"{}\"; is that intended?",
            self.line, self.from, self.to, self.definition, self.meaning, self.evidence
        )
    }
}

/// Every operator of `before` that `after` turned into another as `table` lists,
/// inside a definition whose signature or docstring holds one of that entry's
/// evidence words (the longest found is named). Files without a grammar have none.
pub fn questioned_operators(
    path: &str,
    before: &str,
    after: &str,
    table: &[QuestionedOperator],
) -> Vec<OperatorQuestion> {
    let Some(lang) = language_for_path(Path::new(path)) else {
        return Vec::new();
    };
    let (Some(old_spans), Some(new_spans)) = (code_token_spans(lang, before), code_token_spans(lang, after)) else {
        return Vec::new();
    };
    let old: Vec<&str> = old_spans.iter().map(|r| &before[r.clone()]).collect();
    let new: Vec<&str> = new_spans.iter().map(|r| &after[r.clone()]).collect();
    let symbols = parse(lang, before).map(|t| extract_symbols(lang, &t, before.as_bytes())).unwrap_or_default();
    let mut out = Vec::new();
    // A changed operator and a changed operand next to it (`// 10` to `/ 100`) come as one
    // replaced run of tokens: its tokens are paired in order.
    let pairs = capture_diff_slices(Algorithm::Myers, &old, &new).into_iter().flat_map(|op| match op {
        DiffOp::Replace { old_index, old_len, new_index, new_len } => {
            (0..old_len.min(new_len)).map(|i| (old_index + i, new_index + i)).collect::<Vec<_>>()
        }
        _ => Vec::new(),
    });
    for (old_index, new_index) in pairs {
        let Some(entry) = table.iter().find(|q| q.from == old[old_index] && q.to == new[new_index]) else {
            continue;
        };
        let Some(symbol) = innermost(&symbols, old_spans[old_index].start) else {
            continue;
        };
        let words = format!("{} {}", symbol.signature, symbol.doc.as_deref().unwrap_or("")).to_lowercase();
        if let Some(evidence) =
            entry.evidence.iter().filter(|e| has_phrase(&words, &e.to_lowercase())).max_by_key(|e| e.len())
        {
            out.push(OperatorQuestion {
                line: after[..new_spans[new_index].start].matches('\n').count() + 1,
                from: entry.from.clone(),
                to: entry.to.clone(),
                definition: symbol.name.clone(),
                evidence: evidence.clone(),
                meaning: entry.meaning.clone(),
            });
        }
    }
    out
}

/// The smallest definition around `byte`.
fn innermost(symbols: &[Symbol], byte: usize) -> Option<&Symbol> {
    symbols.iter().filter(|s| s.byte_range.contains(&byte)).min_by_key(|s| s.byte_range.len())
}

/// `phrase` in `text` with no letter or digit right before or after it.
fn has_phrase(text: &str, phrase: &str) -> bool {
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(phrase)
        .any(|(i, _)| !is_word(text[..i].chars().next_back()) && !is_word(text[i + phrase.len()..].chars().next()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Vec<QuestionedOperator> {
        crate::config::LoadedConfig::load(&Default::default()).unwrap().config.runtime.questioned_operators
    }

    const CART: &str = "def apply_discount(cents, percent):\n    \"\"\"`cents` reduced by `percent` percent, rounded down to a whole cent.\"\"\"\n    return cents - cents * percent // 10\n\n\ndef half(x):\n    return x // 3\n";

    #[test]
    fn true_division_where_the_docstring_says_whole_cents_is_questioned() {
        let after = CART.replace("percent // 10", "percent / 100");
        let q = questioned_operators("cart.py", CART, &after, &table());
        assert_eq!(q.len(), 1, "{q:?}");
        assert_eq!(
            (q[0].line, q[0].definition.as_str(), q[0].evidence.as_str()),
            (3, "apply_discount", "rounded down")
        );
        assert!(q[0].question().contains("`//` to `/`"), "{}", q[0].question());
        // The right fix keeps the operator; nothing to ask.
        assert!(questioned_operators("cart.py", CART, &CART.replace("// 10", "// 100"), &table()).is_empty());
        // No word of `half` speaks for integer division.
        assert!(questioned_operators("cart.py", CART, &CART.replace("x // 3", "x / 3"), &table()).is_empty());
    }

    #[test]
    fn a_comparison_made_inclusive_against_a_strict_docstring_is_questioned() {
        let before = "def below(xs, limit):\n    \"\"\"The items strictly below limit.\"\"\"\n    return [x for x in xs if x > limit]\n";
        let after = before.replace("x > limit", "x <= limit");
        assert!(questioned_operators("m.py", before, &after, &table()).is_empty(), "`>` to `<=` is not in the table");
        let after = before.replace("x > limit", "x < limit").replace("x < limit", "x <= limit");
        let before2 = before.replace("x > limit", "x < limit");
        let q = questioned_operators("m.py", &before2, &after, &table());
        assert_eq!(q.len(), 1, "{q:?}");
        assert_eq!(q[0].evidence, "strictly");
        assert!(!has_phrase("print the point", "int") && has_phrase("-> int:", "int"));
    }
}
