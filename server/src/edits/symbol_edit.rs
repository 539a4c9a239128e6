//! Whole-symbol edits: the reply rewrites whole definitions (functions, methods,
//! classes), and each is put in place of the definition of the same name in the
//! file, re-indented to where it goes. Small models rewrite a function far more
//! reliably than they reproduce text to search for.

use super::EditError;
use crate::syntax::{extract_symbols, language_for_path, parse, LanguageSpec, Symbol, SymbolKind};
use std::ops::Range;
use std::path::Path;

/// How a whole-symbol edit is applied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SymbolEdit {
    /// 1-based line of the file the request is about: breaks ties between symbols of the same name.
    pub focus_line: Option<usize>,
    /// Refuse changes to tests (a fix must change the code under test).
    pub protect_tests: bool,
    /// The definition a line fix is about: its wrong lines are looked for there first.
    pub region: Option<super::LineRegion>,
}

struct Parsed<'a> {
    text: &'a str,
    symbols: Vec<Symbol>,
}

impl<'a> Parsed<'a> {
    fn new(lang: &'static LanguageSpec, text: &'a str) -> Self {
        let symbols = parse(lang, text).map(|t| extract_symbols(lang, &t, text.as_bytes())).unwrap_or_default();
        Self { text, symbols }
    }

    fn children(&self, parent: usize) -> Vec<usize> {
        (0..self.symbols.len()).filter(|&i| self.symbols[i].parent == Some(parent)).collect()
    }

    fn top_level(&self) -> Vec<usize> {
        (0..self.symbols.len()).filter(|&i| self.symbols[i].parent.is_none()).collect()
    }

    /// The byte where the definition's line starts, moved up over the decorators,
    /// attributes and comments directly above it.
    fn start_with_prefix(&self, i: usize) -> usize {
        let mut start = line_start(self.text, self.symbols[i].byte_range.start);
        while start > 0 {
            let prev = line_start(self.text, start - 1);
            let line = self.text[prev..start].trim();
            if is_prefix_line(line) {
                start = prev;
            } else {
                break;
            }
        }
        start
    }

    fn has_prefix(&self, i: usize) -> bool {
        self.start_with_prefix(i) < line_start(self.text, self.symbols[i].byte_range.start)
    }

    /// The definition with its line's indentation (and prefix lines when `with_prefix`).
    fn range(&self, i: usize, with_prefix: bool) -> Range<usize> {
        let start = if with_prefix {
            self.start_with_prefix(i)
        } else {
            line_start(self.text, self.symbols[i].byte_range.start)
        };
        start..self.symbols[i].byte_range.end
    }

    fn indent_of(&self, i: usize) -> String {
        let start = line_start(self.text, self.symbols[i].byte_range.start);
        self.text[start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect()
    }

    fn is_test(&self, i: usize, path: &str) -> bool {
        let s = &self.symbols[i];
        let mut ancestors = std::iter::successors(s.parent, |&p| self.symbols[p].parent);
        let in_tests_mod =
            ancestors.any(|p| self.symbols[p].kind == SymbolKind::Module && self.symbols[p].name == "tests");
        let attrs = &self.text[self.start_with_prefix(i)..line_start(self.text, s.byte_range.start)];
        let test_attr = attrs.lines().any(|l| l.trim_start().starts_with("#[") && l.contains("test"));
        let py_test_name = s.name.starts_with("test") || s.name.starts_with("Test");
        in_tests_mod || test_attr || (is_test_path(path) && py_test_name)
    }
}

/// True for a path that holds tests by the usual conventions of Python and Rust projects.
pub fn is_test_path(path: &str) -> bool {
    let p = path.replace('\\', "/");
    let name = p.rsplit('/').next().unwrap_or(&p);
    name.starts_with("test_")
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || p.starts_with("tests/")
        || p.contains("/tests/")
        || p.starts_with("test/")
        || p.contains("/test/")
}

fn is_prefix_line(line: &str) -> bool {
    line.starts_with('@') || line.starts_with('#') || line.starts_with("//")
}

fn line_start(text: &str, byte: usize) -> usize {
    text[..byte].rfind('\n').map(|i| i + 1).unwrap_or(0)
}

/// Removes the indentation all non-blank lines share (a method given on its own).
fn dedent(code: &str) -> String {
    let indent =
        code.lines().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    code.lines().map(|l| if l.len() >= indent { &l[indent..] } else { l.trim_start() }).collect::<Vec<_>>().join("\n")
        + "\n"
}

/// `text` with `from` indentation replaced by `to` on every line.
fn reindent(text: &str, from: &str, to: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else if let Some(rest) = l.strip_prefix(from) {
                format!("{to}{rest}")
            } else {
                format!("{to}{}", l.trim_start())
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn same_kind(a: SymbolKind, b: SymbolKind) -> bool {
    use SymbolKind::*;
    a == b || matches!((a, b), (Function, Method) | (Method, Function))
}

fn is_holder(kind: SymbolKind) -> bool {
    matches!(kind, SymbolKind::Class | SymbolKind::Impl | SymbolKind::Trait | SymbolKind::Module)
}

fn normalized(text: &str) -> String {
    text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n")
}

/// The file symbol `snippet[si]` replaces: same name and kind, under `parent` when
/// given (`None` = anywhere), nearest the focus line when several match.
fn find_match(
    file: &Parsed,
    snippet: &Parsed,
    si: usize,
    parent: Option<Option<usize>>,
    focus: Option<usize>,
) -> Option<usize> {
    let s = &snippet.symbols[si];
    let mut found: Vec<usize> = (0..file.symbols.len())
        .filter(|&fi| {
            let f = &file.symbols[fi];
            f.name == s.name && same_kind(f.kind, s.kind) && parent.is_none_or(|p| f.parent == p)
        })
        .collect();
    if let Some(line) = focus {
        let row = line.saturating_sub(1);
        found.sort_by_key(|&fi| {
            let (a, b) = file.symbols[fi].line_range();
            if (a..=b).contains(&row) {
                0
            } else {
                a.abs_diff(row).min(b.abs_diff(row)) + 1
            }
        });
    }
    found.first().copied()
}

/// Builds the replacements for snippet symbol `si` matched to file symbol `fi`.
#[allow(clippy::too_many_arguments)]
fn plan_replacement(
    file: &Parsed,
    snippet: &Parsed,
    si: usize,
    fi: usize,
    path: &str,
    opts: &SymbolEdit,
    out: &mut Vec<(Range<usize>, String)>,
    changed: &mut Vec<String>,
) -> Result<(), EditError> {
    let s_kind = snippet.symbols[si].kind;
    let f_children = file.children(fi);
    let s_children = snippet.children(si);
    // A holder given with only some of its members (the model left the rest
    // out): replace member by member, never drop what was left out.
    let partial = is_holder(s_kind)
        && !f_children.is_empty()
        && f_children.iter().any(|&fc| !s_children.iter().any(|&sc| snippet.symbols[sc].name == file.symbols[fc].name));
    if partial {
        let mut last_end = None;
        for sc in s_children {
            match find_match(file, snippet, sc, Some(Some(fi)), opts.focus_line) {
                Some(fc) => {
                    plan_replacement(file, snippet, sc, fc, path, opts, out, changed)?;
                    last_end = Some(file.symbols[fc].byte_range.end);
                }
                None => {
                    // A new member: after the last replaced one, else at the end of the holder's body.
                    let at = last_end.unwrap_or_else(|| {
                        f_children
                            .last()
                            .map(|&c| file.symbols[c].byte_range.end)
                            .unwrap_or(file.symbols[fi].byte_range.end)
                    });
                    let indent = f_children.first().map(|&c| file.indent_of(c)).unwrap_or_default();
                    let code = &snippet.text[snippet.range(sc, true)];
                    let text = format!("\n\n{}", reindent(code, &snippet.indent_of(sc), &indent));
                    out.push((at..at, text));
                    changed.push(snippet.symbols[sc].name.clone());
                }
            }
        }
        return Ok(());
    }
    let with_prefix = snippet.has_prefix(si);
    let old_range = file.range(fi, with_prefix);
    let code = &snippet.text[snippet.range(si, with_prefix)];
    let new_text = reindent(code, &snippet.indent_of(si), &file.indent_of(fi));
    if normalized(&file.text[old_range.clone()]) == normalized(&new_text) {
        return Ok(()); // repeated unchanged
    }
    if opts.protect_tests && file.is_test(fi, path) {
        return Err(EditError::EditsTest { name: file.symbols[fi].name.clone() });
    }
    changed.push(file.symbols[fi].name.clone());
    out.push((old_range, new_text));
    Ok(())
}

fn import_lines(lang: &LanguageSpec, text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('\t'))
        .filter(|l| match lang.name {
            "python" => l.starts_with("import ") || l.starts_with("from "),
            "rust" => l.starts_with("use ") && l.trim_end().ends_with(';'),
            _ => false,
        })
        .map(|l| l.trim_end().to_string())
        .collect()
}

fn closest_names(file: &Parsed, wanted: &[String]) -> String {
    let mut best: Vec<(f32, &str)> = file
        .symbols
        .iter()
        .map(|s| {
            let score = wanted
                .iter()
                .map(|w| similar::TextDiff::from_chars(w.as_str(), s.name.as_str()).ratio())
                .fold(0.0, f32::max);
            (score, s.name.as_str())
        })
        .filter(|(score, _)| *score >= 0.5)
        .collect();
    best.sort_by(|a, b| b.0.total_cmp(&a.0));
    best.dedup_by(|a, b| a.1 == b.1);
    match best.first() {
        Some((_, name)) => format!("; did you mean `{name}`?"),
        None if file.symbols.is_empty() => String::new(),
        None => {
            let names: Vec<String> =
                file.top_level().iter().take(8).map(|&i| format!("`{}`", file.symbols[i].name)).collect();
            format!("; it defines {}", names.join(", "))
        }
    }
}

/// Puts every definition of `code` in place of the file's definition of the same
/// name; definitions the file lacks are added next to the replaced ones, and
/// imports the file lacks are added after its imports. Returns the new text and
/// the names of the changed symbols.
pub fn apply_symbol_edits(
    path: &str,
    before: &str,
    code: &str,
    opts: &SymbolEdit,
) -> Result<(String, Vec<String>), EditError> {
    let lang = language_for_path(Path::new(path)).ok_or_else(|| EditError::NoGrammar { path: path.to_string() })?;
    let code = dedent(code);
    let file = Parsed::new(lang, before);
    let snippet = Parsed::new(lang, &code);
    let tops = snippet.top_level();
    if tops.is_empty() {
        return Err(EditError::NoCode);
    }
    let mut replacements: Vec<(Range<usize>, String)> = Vec::new();
    let mut changed = Vec::new();
    let mut unmatched = Vec::new();
    let mut first_matched: Option<usize> = None;
    for &si in &tops {
        match find_match(&file, &snippet, si, None, opts.focus_line) {
            Some(fi) => {
                first_matched.get_or_insert(fi);
                plan_replacement(&file, &snippet, si, fi, path, opts, &mut replacements, &mut changed)?;
            }
            None => unmatched.push(si),
        }
    }
    let Some(anchor) = first_matched else {
        let mut names: Vec<String> = Vec::new();
        for &i in &tops {
            // A rambling reply repeats one name many times; name each once.
            if !names.contains(&snippet.symbols[i].name) {
                names.push(snippet.symbols[i].name.clone());
            }
        }
        let found = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        return Err(EditError::UnknownSymbol {
            path: path.to_string(),
            is_are: if names.len() == 1 { "is" } else { "are" },
            hint: closest_names(&file, &names),
            found,
        });
    };
    // New helpers go just above the first replaced definition, at its indentation.
    let at = file.range(anchor, true).start;
    for si in unmatched {
        let text = reindent(&snippet.text[snippet.range(si, true)], &snippet.indent_of(si), &file.indent_of(anchor));
        replacements.push((at..at, format!("{text}\n\n")));
        changed.push(snippet.symbols[si].name.clone());
    }
    let have: Vec<String> = import_lines(lang, before);
    let missing: Vec<String> = import_lines(lang, &code).into_iter().filter(|l| !have.contains(l)).collect();
    if !missing.is_empty() && !replacements.is_empty() {
        let last_import_end = before
            .lines()
            .scan(0usize, |pos, l| {
                let start = *pos;
                *pos += l.len() + 1;
                Some((start, l))
            })
            .filter(|(_, l)| have.iter().any(|h| h == l.trim_end()))
            .map(|(start, l)| (start + l.len() + 1).min(before.len()))
            .last();
        let (at, text) = match last_import_end {
            Some(end) => (end, format!("{}\n", missing.join("\n"))),
            None => (file.range(file.top_level()[0], true).start, format!("{}\n\n", missing.join("\n"))),
        };
        replacements.push((at..at, text));
    }
    if replacements.is_empty() {
        return Err(EditError::Unchanged { path: path.to_string() });
    }
    // Apply from the end so earlier ranges stay valid; insertions at one place keep their order.
    replacements.sort_by(|a, b| b.0.start.cmp(&a.0.start).then(b.0.end.cmp(&a.0.end)));
    let mut after = before.to_string();
    let mut limit = usize::MAX;
    for (range, text) in replacements {
        if range.end > limit {
            continue; // overlaps a replacement already made (a symbol given twice)
        }
        after.replace_range(range.clone(), &text);
        limit = range.start;
    }
    changed.dedup();
    Ok((after, changed))
}

/// [`apply_symbol_edits`] over several files: each definition in `code` goes to
/// the first file (primary first) that defines its name; definitions no file has,
/// and imports, go to the primary file. Returns the changed files with their new
/// text, primary first.
pub fn apply_symbol_edits_across(
    files: &[(String, String)],
    code: &str,
    opts: &SymbolEdit,
) -> Result<Vec<(String, String)>, EditError> {
    let Some((primary, primary_before)) = files.first() else {
        return Err(EditError::NoCode);
    };
    if files.len() == 1 {
        return apply_symbol_edits(primary, primary_before, code, opts)
            .map(|(after, _)| vec![(primary.clone(), after)]);
    }
    let lang = language_for_path(Path::new(primary)).ok_or_else(|| EditError::NoGrammar { path: primary.clone() })?;
    let code = dedent(code);
    let snippet = Parsed::new(lang, &code);
    let parsed: Vec<Parsed> = files.iter().map(|(_, text)| Parsed::new(lang, text)).collect();
    let defines = |fi: usize, name: &str| parsed[fi].symbols.iter().any(|s| s.name == name);
    // Which file each top-level definition of the reply belongs to.
    let mut parts: Vec<String> = vec![String::new(); files.len()];
    let mut names: Vec<Vec<String>> = vec![Vec::new(); files.len()];
    for si in snippet.top_level() {
        let name = &snippet.symbols[si].name;
        let fi = if defines(0, name) { 0 } else { (1..files.len()).find(|&fi| defines(fi, name)).unwrap_or(0) };
        parts[fi].push_str(&snippet.text[snippet.range(si, true)]);
        parts[fi].push_str("\n\n");
        names[fi].push(format!("`{name}` ({})", files[fi].0));
    }
    let imports = import_lines(lang, &code);
    if !imports.is_empty() && !parts[0].is_empty() {
        parts[0] = format!("{}\n\n{}", imports.join("\n"), parts[0]);
    }
    let mut out = Vec::new();
    let mut first_error = None;
    let mut repeated: Vec<String> = Vec::new();
    for (fi, part) in parts.iter().enumerate() {
        if part.trim().is_empty() {
            continue;
        }
        let (path, before) = &files[fi];
        match apply_symbol_edits(path, before, part, opts) {
            Ok((after, _)) => out.push((path.clone(), after)),
            Err(EditError::Unchanged { .. }) => repeated.extend(names[fi].iter().cloned()),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    if out.is_empty() {
        // Name what came back as it was: "changes nothing in the target file" misleads when the
        // reply rewrote a called definition in another file.
        return Err(if repeated.is_empty() {
            EditError::Unchanged { path: primary.clone() }
        } else {
            EditError::UnchangedDefinitions { names: repeated.join(", ") }
        });
    }
    Ok(out)
}

/// The names of the definitions of `path` whose text differs between `before` and `after`.
pub fn changed_symbols(path: &str, before: &str, after: &str) -> Vec<String> {
    let Some(lang) = language_for_path(Path::new(path)) else {
        return Vec::new();
    };
    let old = Parsed::new(lang, before);
    let new = Parsed::new(lang, after);
    let text = |p: &Parsed, i: usize| normalized(&p.text[p.symbols[i].byte_range.clone()]);
    let mut out: Vec<String> = Vec::new();
    for (ni, s) in new.symbols.iter().enumerate() {
        let same = old.symbols.iter().enumerate().any(|(oi, o)| o.name == s.name && text(&old, oi) == text(&new, ni));
        let is_leafmost = new.children(ni).is_empty();
        if !same && is_leafmost && !out.contains(&s.name) {
            out.push(s.name.clone());
        }
    }
    out
}

/// The tests among the definitions of `path` that differ between `before` and `after`.
pub(crate) fn touched_tests(path: &str, before: &str, after: &str) -> Vec<String> {
    let Some(lang) = language_for_path(Path::new(path)) else {
        return Vec::new();
    };
    let changed = changed_symbols(path, before, after);
    let old = Parsed::new(lang, before);
    let mut out: Vec<String> = Vec::new();
    for (i, s) in old.symbols.iter().enumerate() {
        if changed.contains(&s.name) && old.is_test(i, path) && !out.contains(&s.name) {
            out.push(s.name.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests;
