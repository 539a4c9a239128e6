//! Assembling one model call's context within its token budget.

use super::budget::{TokenBudget, TokenCounter};
use super::line_index::FileOutline;
use crate::config::{Config, ModelRole, PromptError, PromptId, PromptLibrary};
use crate::index::repo_map::identifiers_in;
use crate::index::{analyse, IndexError, RepoMapFocus, WorkspaceIndex};
use serde::Serialize;
use std::path::Path;

/// What the user asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestKind {
    /// A diagnostic at 1-based `line` of `path` (relative to the workspace).
    Diagnostic { path: String, line: usize, message: String },
    /// An instruction for 1-based lines `start_line..=end_line` of `path`.
    Selection { path: String, start_line: usize, end_line: usize, instruction: String },
    /// A question, optionally about a file.
    Question { text: String, path: Option<String> },
}

/// A request for a context, for the model of `role`.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRequest {
    pub kind: RequestKind,
    pub role: ModelRole,
}

/// Long-term memory as the context builder sees it (the store implements it).
#[async_trait::async_trait]
pub trait MemorySource: Send + Sync {
    /// Up to `limit` memory entries relevant to `query`, best first.
    async fn relevant(&self, query: &str, limit: usize) -> Vec<String>;
}

/// No memory at all.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMemory;

#[async_trait::async_trait]
impl MemorySource for NoMemory {
    async fn relevant(&self, _query: &str, _limit: usize) -> Vec<String> {
        Vec::new()
    }
}

/// A fixed list of entries (tests, CLI `--memory`).
#[derive(Debug, Clone, Default)]
pub struct StaticMemory(pub Vec<String>);

#[async_trait::async_trait]
impl MemorySource for StaticMemory {
    async fn relevant(&self, _query: &str, limit: usize) -> Vec<String> {
        self.0.iter().take(limit).cloned().collect()
    }
}

/// Which part of the context a section is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SectionKind {
    System,
    Request,
    Code,
    Outline,
    Related,
    Memory,
    RepoMap,
    FolderSummaries,
    /// What a request rests on besides the code (a failing test, its output); pinned by the caller.
    Evidence,
}

/// One part of the assembled context.
#[derive(Debug, Clone, Serialize)]
pub struct ContextSection {
    pub kind: SectionKind,
    /// Where it comes from (e.g. `src/a.rs:10-40`).
    pub title: String,
    pub text: String,
    pub tokens: usize,
}

/// Where the tokens went.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BudgetBreakdown {
    pub num_ctx: usize,
    pub reserved_output: usize,
    pub safety_margin: usize,
    pub system: usize,
    pub request: usize,
    pub code: usize,
    pub memory: usize,
    pub repo_map: usize,
    pub evidence: usize,
    /// Tokens of the whole rendered prompt (counted as one text).
    pub total: usize,
    /// Whether the counts came from the model's tokenizer.
    pub exact: bool,
    /// What was dropped or trimmed to fit, in order.
    pub dropped: Vec<String>,
}

/// The assembled context of one call.
#[derive(Debug, Clone, Serialize)]
pub struct BuiltContext {
    pub sections: Vec<ContextSection>,
    pub budget: BudgetBreakdown,
}

impl BuiltContext {
    /// The system prompt.
    pub fn system(&self) -> &str {
        self.sections.iter().find(|s| s.kind == SectionKind::System).map(|s| s.text.as_str()).unwrap_or("")
    }

    /// Everything but the system prompt, as the user message.
    pub fn user_message(&self) -> String {
        render(self.sections.iter().filter(|s| s.kind != SectionKind::System))
    }

    /// The whole prompt as counted (system, then the user message).
    pub fn prompt(&self) -> String {
        render(self.sections.iter())
    }
}

fn render<'a>(sections: impl Iterator<Item = &'a ContextSection>) -> String {
    let mut out = String::new();
    for s in sections {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        if !s.title.is_empty() {
            out.push_str(&s.title);
            out.push('\n');
        }
        out.push_str(&s.text);
    }
    out
}

/// Why no context could be built.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("cannot read {path}: it is not in the workspace or not a text file")]
    NoSuchFile { path: String },
    #[error(
        "the request alone needs {needed} tokens but the {role} model has {available} for its prompt \
         (num_ctx {num_ctx} minus reserved output and margin); shorten the request or raise models.{role}.num_ctx"
    )]
    DoesNotFit { needed: usize, available: usize, num_ctx: usize, role: ModelRole },
}

/// What a caller adds to or changes in a context (the agent's coder calls).
#[derive(Debug, Clone, Default)]
pub struct ContextExtras {
    /// Replaces the system prompt.
    pub system: Option<String>,
    /// Replaces the rendered request (the search query stays the request's own words).
    pub request: Option<String>,
    /// Sections shown after the code (a failing test, its output), dropped only after the repo map.
    pub evidence: Vec<ContextSection>,
    /// The primary file's current text (e.g. an unsaved buffer) instead of the index's copy.
    pub primary_text: Option<String>,
    /// Tokens kept free on top of the reserved output (e.g. feedback added to the prompt later).
    pub reserve_tokens: usize,
    /// Leave out the repo map and folder summaries (a coder sees one file).
    pub without_repo_map: bool,
    /// Put the request after everything else (small models follow the last instruction best).
    pub request_last: bool,
    /// Files whose symbols are not offered as related code (e.g. the tests themselves).
    pub exclude_related: Vec<String>,
    /// Definitions already shown by the caller (path, 1-based first line): not repeated as related code.
    pub shown: Vec<(String, usize)>,
}

/// Builds contexts from the index, prompts, memory and configuration.
pub struct ContextBuilder<'a> {
    pub index: &'a WorkspaceIndex,
    pub prompts: &'a PromptLibrary,
    pub config: &'a Config,
    pub memory: &'a dyn MemorySource,
    pub counter: &'a TokenCounter,
}

/// A request's text, its search query, its file and 1-based focus lines.
type RequestParts = (String, String, Option<String>, (usize, usize));

struct Primary {
    path: String,
    lines: Vec<String>,
    outline: Option<FileOutline>,
    /// 1-based inclusive focus range.
    focus: (usize, usize),
}

impl ContextBuilder<'_> {
    /// Builds the context of `req` within the budget of its role's model (see the module doc for the drop order).
    pub async fn build(&self, req: &ContextRequest) -> Result<BuiltContext, ContextError> {
        self.build_with(req, &ContextExtras::default()).await
    }

    /// [`ContextBuilder::build`] with a caller's additions and changes.
    pub async fn build_with(&self, req: &ContextRequest, extras: &ContextExtras) -> Result<BuiltContext, ContextError> {
        let mut budget = TokenBudget::for_role(self.config, req.role);
        budget.reserved_output += extras.reserve_tokens;
        let b = &self.config.budget;
        let system = match &extras.system {
            Some(s) => s.clone(),
            None => self.prompts.render(PromptId::CONTEXT_SYSTEM, &[])?,
        };
        let (request, query, path, focus) = self.request_text(req)?;
        let request = extras.request.clone().unwrap_or(request);
        let mut sections = vec![section(SectionKind::System, "", system), section(SectionKind::Request, "", request)];
        let primary = match &path {
            Some(p) => Some(self.primary(p, focus, extras.primary_text.as_deref())?),
            None => None,
        };
        let mut focus_ids = identifiers_in(&query);
        // Code sections: the file (or its focused symbol), its outline, related symbols.
        if let Some(p) = &primary {
            if let Some(o) = &p.outline {
                focus_ids.extend(o.enclosing(p.focus.0).iter().map(|e| e.name.clone()));
            }
            sections.push(code_section(p, self.config.budget.large_file_lines as usize));
            if let Some(o) = &p.outline {
                sections.push(section(SectionKind::Outline, &format!("Outline of {}:", p.path), o.render()));
            }
        }
        // The identifiers go on a line of their own, so error output in the request still parses as such.
        let hits = self.index.search(&format!("{query}\n{}", focus_ids.join(" ")), b.related_symbols as usize * 3)?;
        let mut related = 0;
        for h in hits {
            if related >= b.related_symbols as usize {
                break;
            }
            let overlaps = primary.as_ref().is_some_and(|p| p.path == h.path);
            let shown = extras.shown.iter().any(|(p, l)| *p == h.path && (h.start_line..=h.end_line).contains(l));
            if overlaps || shown || h.symbol.is_empty() || extras.exclude_related.contains(&h.path) {
                continue;
            }
            let what =
                if h.symbol.starts_with(&h.kind) { h.symbol.clone() } else { format!("{} {}", h.kind, h.symbol) };
            let title = format!("{}:{}-{} ({what})", h.path, h.start_line, h.end_line);
            sections.push(section(SectionKind::Related, &title, trim_lines(&h.body, 60)));
            related += 1;
        }
        sections.extend(extras.evidence.iter().cloned());
        // Memory, capped by its own budget.
        let mut mem_used = 0;
        for m in self.memory.relevant(&query, b.memory_entries as usize).await {
            let t = self.counter.estimator().estimate(&m);
            if mem_used + t > b.memory_tokens_max as usize {
                break;
            }
            mem_used += t;
            sections.push(section(SectionKind::Memory, "Remembered:", m));
        }
        // Repo map and folder summaries.
        if !extras.without_repo_map {
            let focus = RepoMapFocus { files: path.iter().cloned().collect(), identifiers: focus_ids };
            let map = self.index.repo_map(&focus);
            let est = self.counter.estimator();
            let count = |s: &str| est.estimate(s);
            let folder_budget = b.folder_summary_tokens as usize;
            let files_text = map.render_files((b.repo_map_tokens as usize).saturating_sub(folder_budget), &count);
            if !files_text.is_empty() {
                sections.push(section(SectionKind::RepoMap, "Repository map:", files_text));
            }
            let folders = map.render_folders(folder_budget, &count);
            if !folders.is_empty() {
                sections.push(section(SectionKind::FolderSummaries, "Folders:", folders));
            }
        }
        if extras.request_last {
            if let Some(i) = sections.iter().position(|s| s.kind == SectionKind::Request) {
                let request = sections.remove(i);
                sections.push(request);
            }
        }
        self.fit(sections, budget, primary.as_ref(), req.role).await
    }

    /// Drops and trims until the whole prompt fits, then counts every section.
    async fn fit(
        &self,
        mut sections: Vec<ContextSection>,
        budget: TokenBudget,
        primary: Option<&Primary>,
        role: ModelRole,
    ) -> Result<BuiltContext, ContextError> {
        let available = budget.available();
        let mut dropped = Vec::new();
        let mut window: Option<(usize, usize)> = None;
        loop {
            let (total, _) = self.counter.count(&render(sections.iter())).await;
            if total <= available {
                break;
            }
            let has = |k: SectionKind, s: &[ContextSection]| s.iter().any(|x| x.kind == k);
            if has(SectionKind::FolderSummaries, &sections) {
                sections.retain(|s| s.kind != SectionKind::FolderSummaries);
                dropped.push("folder summaries".into());
            } else if has(SectionKind::Memory, &sections) {
                sections.retain(|s| s.kind != SectionKind::Memory);
                dropped.push("memory".into());
            } else if let Some(i) = sections.iter().rposition(|s| s.kind == SectionKind::Related) {
                dropped.push(format!("related {}", sections[i].title));
                sections.remove(i);
            } else if let Some(p) = primary.filter(|_| window.is_none()) {
                // Trim the code to the innermost enclosing symbol (per-file line index) or the focus.
                let outline = p.outline.clone().unwrap_or_else(|| outline_of(&p.path, &p.lines, &self.config.index));
                let range = outline
                    .enclosing(p.focus.0)
                    .first()
                    .map(|e| (e.start_line, e.end_line.max(p.focus.1)))
                    .unwrap_or(p.focus);
                window = Some(range);
                replace_code(&mut sections, p, range);
                dropped.push(format!("code trimmed to lines {}-{}", range.0, range.1));
            } else if has(SectionKind::RepoMap, &sections) {
                sections.retain(|s| s.kind != SectionKind::RepoMap);
                dropped.push("repo map".into());
            } else if has(SectionKind::Outline, &sections) {
                sections.retain(|s| s.kind != SectionKind::Outline);
                dropped.push("outline".into());
            } else if let Some(i) = sections.iter().rposition(|s| s.kind == SectionKind::Evidence) {
                dropped.push(format!("evidence {}", sections[i].title));
                sections.remove(i);
            } else if let (Some(p), Some((a, z))) = (primary, window.filter(|(a, z)| z >= a)) {
                if z > a {
                    // Halve the window around the focus line until it fits.
                    let len = (z - a + 1).div_ceil(2);
                    let f = p.focus.0.clamp(a, z);
                    let start = f.saturating_sub(len / 2).max(a);
                    let end = (start + len.saturating_sub(1)).min(z);
                    window = Some((start, end));
                    replace_code(&mut sections, p, (start, end));
                    dropped.push(format!("code trimmed to lines {start}-{end}"));
                } else {
                    sections.retain(|s| s.kind != SectionKind::Code);
                    dropped.push("code".into());
                    window = Some((1, 0));
                }
            } else {
                let needed = total;
                return Err(ContextError::DoesNotFit { needed, available, num_ctx: budget.num_ctx, role });
            }
        }
        let mut breakdown = BudgetBreakdown {
            num_ctx: budget.num_ctx,
            reserved_output: budget.reserved_output,
            safety_margin: budget.safety_margin,
            dropped,
            ..Default::default()
        };
        for s in sections.iter_mut() {
            let (n, exact) = self.counter.count(&render(std::iter::once(&*s))).await;
            s.tokens = n;
            breakdown.exact = exact;
            match s.kind {
                SectionKind::System => breakdown.system += n,
                SectionKind::Request => breakdown.request += n,
                SectionKind::Code | SectionKind::Outline | SectionKind::Related => breakdown.code += n,
                SectionKind::Memory => breakdown.memory += n,
                SectionKind::RepoMap | SectionKind::FolderSummaries => breakdown.repo_map += n,
                SectionKind::Evidence => breakdown.evidence += n,
            }
        }
        breakdown.total = self.counter.count(&render(sections.iter())).await.0;
        Ok(BuiltContext { sections, budget: breakdown })
    }

    /// The request's text, its search query, its file and 1-based focus lines.
    fn request_text(&self, req: &ContextRequest) -> Result<RequestParts, ContextError> {
        Ok(match &req.kind {
            RequestKind::Diagnostic { path, line, message } => {
                let line_s = line.to_string();
                let t = self.prompts.render(
                    PromptId::CONTEXT_REQUEST_DIAGNOSTIC,
                    &[("path", path), ("line", &line_s), ("message", message)],
                )?;
                (t, message.clone(), Some(path.clone()), (*line, *line))
            }
            RequestKind::Selection { path, start_line, end_line, instruction } => {
                let lines = format!("{start_line}-{end_line}");
                let t = self.prompts.render(
                    PromptId::CONTEXT_REQUEST_SELECTION,
                    &[("path", path), ("lines", &lines), ("instruction", instruction)],
                )?;
                (t, instruction.clone(), Some(path.clone()), (*start_line, (*end_line).max(*start_line)))
            }
            RequestKind::Question { text, path } => {
                let t = self.prompts.render(PromptId::CONTEXT_REQUEST_QUESTION, &[("question", text)])?;
                (t, text.clone(), path.clone(), (1, 1))
            }
        })
    }

    fn primary(&self, path: &str, focus: (usize, usize), text: Option<&str>) -> Result<Primary, ContextError> {
        let rel = crate::index::walk::relative(self.index.root(), &self.index.root().join(path))
            .unwrap_or_else(|| path.to_string());
        let text: std::sync::Arc<str> = match text {
            Some(t) => t.into(),
            None => self.index.file_text(&rel).ok_or_else(|| ContextError::NoSuchFile { path: path.to_string() })?,
        };
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let outline = (lines.len() > self.config.budget.large_file_lines as usize)
            .then(|| outline_of(&rel, &lines, &self.config.index));
        let n = lines.len().max(1);
        Ok(Primary { path: rel, lines, outline, focus: (focus.0.clamp(1, n), focus.1.clamp(1, n)) })
    }
}

/// The line index of a file, built from a fresh parse (the text may be an unsaved buffer).
fn outline_of(path: &str, lines: &[String], cfg: &crate::config::IndexConfig) -> FileOutline {
    let text = lines.join("\n");
    FileOutline::from_symbols(&analyse(path, &text, cfg).symbols)
}

fn section(kind: SectionKind, title: &str, text: String) -> ContextSection {
    ContextSection { kind, title: title.to_string(), text, tokens: 0 }
}

/// The primary code: the whole file when small, else the innermost enclosing symbol (or the focus).
fn code_section(p: &Primary, large: usize) -> ContextSection {
    let range = if p.lines.len() <= large {
        (1, p.lines.len())
    } else {
        p.outline
            .as_ref()
            .and_then(|o| o.enclosing(p.focus.0).last().map(|e| (e.start_line, e.end_line.max(p.focus.1))))
            .unwrap_or((p.focus.0.saturating_sub(large / 2).max(1), (p.focus.1 + large / 2).min(p.lines.len())))
    };
    code_lines(p, range)
}

fn code_lines(p: &Primary, (a, z): (usize, usize)) -> ContextSection {
    let lang = crate::syntax::language_for_path(Path::new(&p.path)).map(|l| l.name).unwrap_or("");
    let body: Vec<&str> =
        p.lines.iter().skip(a.saturating_sub(1)).take(z + 1 - a.min(z + 1)).map(String::as_str).collect();
    let text = format!("```{lang}\n{}\n```", body.join("\n"));
    section(SectionKind::Code, &format!("{}:{}-{}", p.path, a, z), text)
}

fn replace_code(sections: &mut [ContextSection], p: &Primary, range: (usize, usize)) {
    if let Some(s) = sections.iter_mut().find(|s| s.kind == SectionKind::Code) {
        *s = code_lines(p, range);
    }
}

fn trim_lines(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max {
        text.trim_end().to_string()
    } else {
        format!("{}\n…", lines[..max].join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(kind: SectionKind, title: &str, text: &str) -> ContextSection {
        ContextSection { kind, title: title.into(), text: text.into(), tokens: 0 }
    }

    #[test]
    fn the_system_section_is_the_system_prompt_and_the_rest_the_user_message() {
        let ctx = BuiltContext {
            sections: vec![
                section(SectionKind::System, "", "You fix code."),
                section(SectionKind::Code, "a.py:1-2", "x = 1"),
                section(SectionKind::Request, "", "Fix it."),
            ],
            budget: BudgetBreakdown::default(),
        };
        assert_eq!(ctx.system(), "You fix code.");
        assert_eq!(ctx.user_message(), "a.py:1-2\nx = 1\n\nFix it.");
        assert_eq!(ctx.prompt(), "You fix code.\n\na.py:1-2\nx = 1\n\nFix it.");
        let no_system =
            BuiltContext { sections: vec![section(SectionKind::Request, "", "q")], budget: Default::default() };
        assert_eq!(no_system.system(), "");
    }

    #[tokio::test]
    async fn memory_sources_give_nothing_or_their_first_entries() {
        assert!(NoMemory.relevant("anything", 5).await.is_empty());
        let fixed = StaticMemory(vec!["a".into(), "b".into(), "c".into()]);
        assert_eq!(fixed.relevant("q", 2).await, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(fixed.relevant("q", 9).await.len(), 3);
    }
}
