//! Shell lexer: words (quotes, escapes, `$…`, `$(…)`, backticks, `<(…)`) and operators.

/// A word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    /// The literal text (variables and substitutions kept as written).
    pub text: String,
    /// True when its value is only known at run time (`$VAR`, `$(…)`, backticks, globs are not counted).
    pub dynamic: bool,
    /// Sources of `$(…)`, backtick and `<(…)` substitutions inside the word.
    pub substitutions: Vec<String>,
    /// True when any part was quoted or escaped: such a word is never a reserved word.
    pub quoted: bool,
    /// Why the shell may turn this word into something the gate cannot know (a `${…}` with an
    /// operator, arithmetic, `$'…'` quoting); None when the word is literal or only holds plain
    /// `$NAME` expansions and substitutions (which are analysed on their own).
    pub unevaluable: Option<String>,
    /// An unquoted `*`, `?` or `[`: the shell may expand the word to file names.
    pub glob: bool,
    /// Unquoted `{…,…}` or `{a..b}`: the shell may expand the word to several words.
    pub brace: bool,
    /// The text holds a `$` that starts no expansion (quoted, escaped, or before a character
    /// that names nothing): without it, every `$` of the text is an expansion as written.
    pub literal_dollar: bool,
}

/// A lexer token: a word, or an operator (`|`, `&&`, `;`, `>`, `(`, newline …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Word(Word),
    Op(&'static str),
}

/// Splits a line into tokens.
// The flush! macro resets `in_word`; its last reset is never read.
#[allow(unused_assignments)]
pub(super) fn tokenize(line: &str, depth: usize) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = line.chars().collect();
    let mut tokens = Vec::new();
    let mut cur = Word::default();
    let mut in_word = false;
    let mut i = 0;
    // Unquoted `{` seen in this word, then an unquoted `,` or `..` after it (brace expansion).
    let mut brace_open = false;
    let mut brace_list = false;
    // Unquoted `[` seen: with a later `]` the word is a pattern (`[` alone is the test program).
    let mut bracket_open = false;
    macro_rules! flush {
        () => {
            if in_word {
                tokens.push(Token::Word(std::mem::take(&mut cur)));
                in_word = false;
                brace_open = false;
                brace_list = false;
                bracket_open = false;
            }
        };
    }
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => {
                flush!();
                i += 1;
            }
            '\n' => {
                flush!();
                tokens.push(Token::Op("\n"));
                i += 1;
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\\' => {
                if let Some(&n) = chars.get(i + 1) {
                    if n != '\n' {
                        cur.text.push(n);
                        cur.literal_dollar |= n == '$';
                        cur.quoted = true;
                        in_word = true;
                    }
                    i += 2;
                } else {
                    return Err("trailing backslash".into());
                }
            }
            '\'' => {
                let end = chars[i + 1..].iter().position(|&x| x == '\'').ok_or("unclosed single quote")?;
                cur.text.extend(&chars[i + 1..i + 1 + end]);
                cur.literal_dollar |= chars[i + 1..i + 1 + end].contains(&'$');
                cur.quoted = true;
                in_word = true;
                i += end + 2;
            }
            '"' => {
                in_word = true;
                cur.quoted = true;
                i += 1;
                loop {
                    let Some(&d) = chars.get(i) else {
                        return Err("unclosed double quote".into());
                    };
                    match d {
                        '"' => {
                            i += 1;
                            break;
                        }
                        '\\' => {
                            let n = *chars.get(i + 1).ok_or("unclosed double quote")?;
                            if !matches!(n, '$' | '`' | '"' | '\\' | '\n') {
                                cur.text.push('\\');
                            }
                            if n != '\n' {
                                cur.text.push(n);
                            }
                            cur.literal_dollar |= n == '$';
                            i += 2;
                        }
                        '$' | '`' => i = dollar_or_backtick(&chars, i, &mut cur, depth)?,
                        _ => {
                            cur.text.push(d);
                            i += 1;
                        }
                    }
                }
            }
            '$' | '`' => {
                in_word = true;
                i = dollar_or_backtick(&chars, i, &mut cur, depth)?;
            }
            '<' | '>' if chars.get(i + 1) == Some(&'(') => {
                // Process substitution <(…) / >(…)
                let end = matching_paren(&chars, i + 1)?;
                cur.substitutions.push(chars[i + 2..end].iter().collect());
                cur.text.push_str("/dev/fd/N");
                cur.dynamic = true;
                in_word = true;
                i = end + 1;
            }
            '|' | '&' | ';' | '<' | '>' | '(' | ')' => {
                // A bare fd number in front of a redirection belongs to it.
                if matches!(c, '<' | '>')
                    && in_word
                    && !cur.text.is_empty()
                    && cur.text.chars().all(|d| d.is_ascii_digit())
                    && cur.substitutions.is_empty()
                {
                    cur = Word::default();
                    in_word = false;
                }
                flush!();
                let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
                let op = [
                    "&>>", "<<<", "<<-", "&&", "||", "|&", ";;", ">>", "<<", ">&", "<&", "&>", ">|", "<>", "|", "&",
                    ";", "<", ">", "(", ")",
                ]
                .into_iter()
                .find(|o| rest.starts_with(o))
                .ok_or("unknown operator")?;
                if op == ";;" {
                    return Err("`case` syntax is not checked".into());
                }
                tokens.push(Token::Op(if op == "<&" || op == "<<<" { "<" } else { op }));
                i += op.chars().count();
            }
            _ => {
                match c {
                    '*' | '?' => cur.glob = true,
                    '[' => bracket_open = true,
                    ']' if bracket_open => cur.glob = true,
                    '{' => brace_open = true,
                    ',' if brace_open => brace_list = true,
                    '.' if brace_open && chars.get(i + 1) == Some(&'.') => brace_list = true,
                    '}' if brace_list => cur.brace = true,
                    _ => {}
                }
                cur.text.push(c);
                in_word = true;
                i += 1;
            }
        }
    }
    flush!();
    Ok(tokens)
}

/// Handles `$…` or a backtick at `i`; returns the index after it.
fn dollar_or_backtick(chars: &[char], i: usize, cur: &mut Word, _depth: usize) -> Result<usize, String> {
    if chars[i] == '`' {
        let mut j = i + 1;
        let mut inner = String::new();
        loop {
            match chars.get(j) {
                None => return Err("unclosed backtick".into()),
                Some('`') => break,
                Some('\\') => {
                    if let Some(&n) = chars.get(j + 1) {
                        inner.push(n);
                    }
                    j += 2;
                }
                Some(&x) => {
                    inner.push(x);
                    j += 1;
                }
            }
        }
        cur.text.push_str("$(…)");
        cur.dynamic = true;
        cur.substitutions.push(inner);
        return Ok(j + 1);
    }
    match chars.get(i + 1) {
        Some('(') if chars.get(i + 2) == Some(&'(') => {
            // Arithmetic $((…)): no command runs, but it may contain $(…). A shell that
            // cannot read the inside as arithmetic runs it as `$( (…) )`, a subshell.
            let end = matching_paren(chars, i + 1)?;
            let inner: String = chars[i + 3..end.saturating_sub(1)].iter().collect();
            // `$((a) b)` is not `$((…))`: the inner parenthesis must close right before the outer one.
            let closes_together = matching_paren(chars, i + 2).is_ok_and(|e| e + 1 == end);
            if !closes_together || !looks_arithmetic(&inner) {
                cur.substitutions.push(chars[i + 2..end].iter().collect());
            } else if inner.contains("$(") || inner.contains('`') {
                cur.substitutions.push(inner);
            }
            cur.text.push_str("$((…))");
            cur.dynamic = true;
            // Variables in arithmetic are evaluated as expressions again: `a[$(…)]` in one runs it.
            cur.unevaluable.get_or_insert_with(|| "arithmetic expansion `$((…))`".into());
            Ok(end + 1)
        }
        Some('(') => {
            let end = matching_paren(chars, i + 1)?;
            cur.substitutions.push(chars[i + 2..end].iter().collect());
            cur.text.push_str("$(…)");
            cur.dynamic = true;
            Ok(end + 1)
        }
        Some('{') => {
            let end = chars[i..].iter().position(|&x| x == '}').ok_or("unclosed ${")? + i;
            let inner: String = chars[i + 2..end].iter().collect();
            let plain = !inner.is_empty()
                && !inner.starts_with(|c: char| c.is_ascii_digit())
                && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !plain {
                cur.unevaluable.get_or_insert_with(|| format!("the parameter expansion `${{{inner}}}`"));
            }
            cur.text.push('$');
            cur.text.push('{');
            cur.text.push_str(&inner);
            cur.text.push('}');
            cur.dynamic = true;
            Ok(end + 1)
        }
        Some(&n) if n.is_ascii_alphanumeric() || n == '_' || "@*#?$!-".contains(n) => {
            let mut j = i + 1;
            if n.is_ascii_alphabetic() || n == '_' {
                while chars.get(j).is_some_and(|x| x.is_ascii_alphanumeric() || *x == '_') {
                    j += 1;
                }
            } else {
                j += 1;
            }
            cur.text.extend(&chars[i..j]);
            cur.dynamic = true;
            Ok(j)
        }
        Some('\'') | Some('"') => {
            // `$'\x72\x6d'` and `$"…"`: bash decodes escapes or translates; dash does not.
            cur.unevaluable.get_or_insert_with(|| "`$'…'` or `$\"…\"` quoting".into());
            cur.text.push('$');
            cur.literal_dollar = true;
            Ok(i + 1)
        }
        _ => {
            cur.text.push('$');
            cur.literal_dollar = true;
            Ok(i + 1)
        }
    }
}

/// True when `text` can be an arithmetic expression: only operands, operators and
/// parentheses, never two operands side by side, ending with an operand (`rm -rf x`
/// is a command; erring that way only asks the user more often).
fn looks_arithmetic(text: &str) -> bool {
    let mut last_was_operand = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '#' {
            if last_was_operand {
                return false;
            }
            while chars.peek().is_some_and(|n| n.is_ascii_alphanumeric() || *n == '_' || *n == '#') {
                chars.next();
            }
            last_was_operand = true;
        } else if "+-*/%<>=!&|^~?:,()[]{}".contains(c) {
            last_was_operand = c == ')' || c == ']' || c == '}';
        } else {
            return false;
        }
    }
    // An expression ends with an operand (`rm -rf /` does not): otherwise it is read as a command.
    last_was_operand
}

/// Index of the `)` matching the `(` at `open`, skipping quotes and nested parens.
fn matching_paren(chars: &[char], open: usize) -> Result<usize, String> {
    let mut level = 0i32;
    let mut j = open;
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 1,
            '\'' => {
                let end = chars[j + 1..].iter().position(|&x| x == '\'').ok_or("unclosed single quote")?;
                j += end + 1;
            }
            '"' => {
                j += 1;
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' {
                        j += 1;
                    }
                    j += 1;
                }
                if j >= chars.len() {
                    return Err("unclosed double quote".into());
                }
            }
            '(' => level += 1,
            ')' => {
                level -= 1;
                if level == 0 {
                    return Ok(j);
                }
            }
            _ => {}
        }
        j += 1;
    }
    Err("unclosed `$(`".into())
}
