//! The permission policy: what a shell command does (its effects), and whether
//! one of those effects makes it dangerous.
//!
//! Each simple command the parser finds is classified by what it does to the
//! machine: destroys data, escalates privileges, reaches the network, writes
//! outside the workspace, changes permissions, defines code that runs later,
//! changes the system, or cannot be analysed. The shell syntax (redirections,
//! function definitions, assignments, computed names) is read here; which
//! programs, arguments and paths have which effect comes from `[permissions]`.

mod fills;
pub(super) mod inline_code;
mod proof;
pub(super) mod variables;

use super::allowlist::Allowed;
use super::shell_parse::{analyze, assignment_name, resolve_path, CommandUse, RedirectKind};
use super::SandboxError;
use crate::config::PermissionsConfig;
use regex::Regex;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The policy's verdict on one command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionVerdict {
    /// True when the user must decide before it runs.
    pub dangerous: bool,
    /// The effect that makes it dangerous (`destroys-data`, `reaches-network`, … see `[permissions] effects`).
    pub effect: Option<String>,
    /// The rule that matched (a config rule or path rule name, or one of the syntax checks:
    /// `unparseable`, `computed-program`, `computed-redirect`, `redirect-outside-workspace`,
    /// `overwrites-existing-file`, `function-definition`, `code-variable`).
    pub rule: Option<String>,
    /// Why (the rule's reason, or "no rule matched").
    pub reason: String,
    /// The simple command that matched.
    pub sub_command: Option<String>,
}

struct CompiledRule {
    name: String,
    programs: Vec<String>,
    args_match: Option<Regex>,
    args_unless: Option<Regex>,
    piped_into: Vec<String>,
    path_outside_workspace: bool,
    last_only: bool,
    effect: String,
    reason: String,
}

struct CompiledPathRule {
    name: String,
    paths: Vec<Regex>,
    reads_too: bool,
    effect: String,
    reason: String,
}

/// A path a command writes, and how.
struct Written {
    path: PathBuf,
    /// Written into an existing file, not replacing it (redirect, tee, cp): `harmless_write_targets` apply.
    stream: bool,
    /// The file is replaced or truncated if it exists.
    replaces: bool,
}

/// Checks commands against the `[permissions]` settings for one workspace.
pub struct PermissionPolicy {
    rules: Vec<CompiledRule>,
    path_rules: Vec<CompiledPathRule>,
    effects: Vec<String>,
    writers: BTreeMap<String, String>,
    in_place_writers: Vec<String>,
    code_variables: Vec<String>,
    harmless: Vec<PathBuf>,
    workspace: PathBuf,
    allowed: Vec<Allowed>,
    safe_variables: Vec<String>,
    program_dirs: Vec<PathBuf>,
    /// The project's test command lines (never asked about).
    test_commands: Vec<String>,
}

/// (rule name, effect, reason).
type Hit = (String, String, String);

fn hit(rule: &str, effect: &str, reason: String) -> Hit {
    (rule.to_string(), effect.to_string(), reason)
}

fn compile(re: &str, what: &str) -> Result<Regex, SandboxError> {
    Regex::new(re).map_err(|e| SandboxError::Store {
        path: PathBuf::from("config: permissions"),
        reason: format!("{what}: bad regex {re:?}: {e}"),
    })
}

impl PermissionPolicy {
    /// Compiles the configured rules for `workspace`.
    pub fn new(config: &PermissionsConfig, workspace: &Path) -> Result<Self, SandboxError> {
        let mut rules = Vec::new();
        for r in &config.rules {
            let args_match = match &r.args_match {
                Some(re) => Some(compile(re, &format!("rule `{}`", r.name))?),
                None => None,
            };
            let args_unless = match &r.args_unless {
                Some(re) => Some(compile(re, &format!("rule `{}`", r.name))?),
                None => None,
            };
            rules.push(CompiledRule {
                name: r.name.clone(),
                programs: r.programs.clone(),
                args_match,
                args_unless,
                piped_into: r.piped_into.clone(),
                path_outside_workspace: r.path_outside_workspace,
                last_only: r.path_args == "last",
                effect: r.effect.clone(),
                reason: r.reason.clone(),
            });
        }
        let mut path_rules = Vec::new();
        for r in &config.path_rules {
            let paths = r
                .paths
                .iter()
                .map(|p| compile(p, &format!("path rule `{}`", r.name)))
                .collect::<Result<Vec<_>, _>>()?;
            path_rules.push(CompiledPathRule {
                name: r.name.clone(),
                paths,
                reads_too: r.access == "any",
                effect: r.effect.clone(),
                reason: r.reason.clone(),
            });
        }
        let workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
        Ok(Self {
            rules,
            path_rules,
            effects: config.effects.clone(),
            writers: config.writers.clone(),
            in_place_writers: config.in_place_writers.clone(),
            code_variables: config.code_variables.clone(),
            harmless: config.harmless_write_targets.iter().map(PathBuf::from).collect(),
            workspace,
            allowed: config.allow.iter().map(Allowed::new).collect::<Result<_, _>>()?,
            safe_variables: config.safe_variables.clone(),
            program_dirs: config.program_dirs.iter().map(PathBuf::from).collect(),
            test_commands: Vec::new(),
        })
    }

    /// Never asks about the project's test command: the one `detect_test_command` finds for
    /// the workspace with `configured` (`sandbox.test_command`) as written and as displayed.
    pub fn with_test_command(mut self, configured: &str) -> Self {
        let detected = super::detect_test_command(&self.workspace, configured).ok().map(|t| t.display());
        for line in [Some(configured.to_string()), detected].into_iter().flatten() {
            let line = line.trim().to_string();
            if !line.is_empty() && !self.test_commands.contains(&line) {
                self.test_commands.push(line);
            }
        }
        self
    }

    /// The verdict for `command` (nothing is run).
    pub fn check(&self, command: &str) -> PermissionVerdict {
        if self.test_commands.iter().any(|t| t == command.trim()) {
            return PermissionVerdict { reason: "the project's test command".into(), ..Self::safe() };
        }
        let uses = match analyze(command, &self.workspace) {
            Ok(u) => u,
            Err(why) => {
                if !self.enabled("unanalysable") && !self.enabled("unproven") {
                    return Self::safe();
                }
                return PermissionVerdict {
                    dangerous: true,
                    effect: Some("unanalysable".into()),
                    rule: Some("unparseable".into()),
                    reason: format!("cannot be checked before it runs: {why}"),
                    sub_command: None,
                };
            }
        };
        for u in &uses {
            if let Some((rule, effect, reason)) = self.check_use(u) {
                let sub = if u.text.is_empty() { None } else { Some(u.text.clone()) };
                return PermissionVerdict {
                    dangerous: true,
                    effect: Some(effect),
                    rule: Some(rule),
                    reason,
                    sub_command: sub,
                };
            }
        }
        if self.enabled("unproven") {
            for (i, u) in uses.iter().enumerate() {
                if let Err(r) = self.prove(&uses, i) {
                    let sub = if u.text.is_empty() { None } else { Some(u.text.clone()) };
                    return PermissionVerdict {
                        dangerous: true,
                        effect: Some("unproven".into()),
                        rule: Some(r.rule),
                        reason: r.reason,
                        sub_command: sub,
                    };
                }
            }
        }
        Self::safe()
    }

    fn safe() -> PermissionVerdict {
        PermissionVerdict {
            dangerous: false,
            effect: None,
            rule: None,
            reason: "every part is known to be harmless".into(),
            sub_command: None,
        }
    }

    fn enabled(&self, effect: &str) -> bool {
        self.effects.iter().any(|e| e == effect)
    }

    /// The first enabled effect of one simple command: (rule, effect, reason).
    fn check_use(&self, u: &CommandUse) -> Option<Hit> {
        if let Some(found) = self.syntax_effects(u).into_iter().find(|(_, e, _)| self.enabled(e)) {
            return Some(found);
        }
        if u.program.is_empty() {
            return None;
        }
        self.written_paths_effect(u).or_else(|| self.rule_effect(u))
    }

    /// Effects read from the shell syntax alone: redirections, definitions, assignments, computed names.
    fn syntax_effects(&self, u: &CommandUse) -> Vec<Hit> {
        let mut hits = Vec::new();
        if let Some(name) = &u.defines_function {
            hits.push(hit(
                "function-definition",
                "defines-later-code",
                format!("defines the shell function `{name}`, code that runs later, whenever it is called"),
            ));
        }
        let mut assigned: Vec<&str> = u.assignments.iter().map(String::as_str).collect();
        if matches!(u.program.as_str(), "export" | "declare" | "typeset" | "readonly" | "local") {
            assigned.extend(u.args.iter().filter_map(|a| assignment_name(a)));
        }
        if let Some(var) = assigned.iter().find(|v| self.code_variables.iter().any(|c| c == *v)) {
            hits.push(hit(
                "code-variable",
                "defines-later-code",
                format!("sets {var}, whose value is code that runs later"),
            ));
        }
        for r in &u.redirects {
            if r.dynamic && r.writes() {
                hits.push(hit(
                    "computed-redirect",
                    "unanalysable",
                    "redirects output to a file only known at run time".into(),
                ));
                continue;
            }
            let Some(path) = resolve_path(&r.target, u.cwd.as_deref()) else {
                if r.writes() {
                    hits.push(hit(
                        "redirect-outside-workspace",
                        "writes-outside-workspace",
                        format!("redirects output to {} in a directory only known at run time", r.target),
                    ));
                }
                continue;
            };
            let harmless = r.writes() && self.harmless.contains(&path);
            if let Some((name, effect, reason)) = self.path_rule(&path, r.writes()).filter(|_| !harmless) {
                hits.push((name, effect, format!("{reason}: {}", path.display())));
            }
            if !r.writes() || self.harmless.contains(&path) {
                continue;
            }
            if !real_path(&path).starts_with(&self.workspace) {
                hits.push(hit(
                    "redirect-outside-workspace",
                    "writes-outside-workspace",
                    format!("redirects output to {}, outside the workspace", r.target),
                ));
            }
            if r.kind == RedirectKind::Truncate && is_existing_file(&path) {
                hits.push(hit(
                    "overwrites-existing-file",
                    "destroys-data",
                    format!("`>` truncates the existing file {}", r.target),
                ));
            }
        }
        if u.dynamic_program {
            hits.push(hit("computed-program", "unanalysable", "the program to run is only known at run time".into()));
        }
        hits
    }

    fn path_rule(&self, path: &Path, writes: bool) -> Option<Hit> {
        let text = path.to_string_lossy();
        self.path_rules
            .iter()
            .filter(|r| (writes || r.reads_too) && self.enabled(&r.effect))
            .find(|r| r.paths.iter().any(|re| re.is_match(&text)))
            .map(|r| (r.name.clone(), r.effect.clone(), r.reason.clone()))
    }

    /// Effects of the paths a writer program (cp, mv, tee, …) writes.
    fn written_paths_effect(&self, u: &CommandUse) -> Option<Hit> {
        for w in self.written_paths(u) {
            if let Some((name, effect, reason)) = self.path_rule(&w.path, true) {
                if !(w.stream && self.harmless.contains(&w.path)) {
                    return Some((name, effect, format!("{reason}: {}", w.path.display())));
                }
            }
            // The rules table looks at operands; this catches destinations it cannot see (`cp -t DIR`).
            let harmless = self.harmless.contains(&w.path);
            if !harmless && self.enabled("writes-outside-workspace") && !real_path(&w.path).starts_with(&self.workspace)
            {
                return Some((
                    "destination-outside-workspace".into(),
                    "writes-outside-workspace".into(),
                    format!("writes {}, outside the workspace", w.path.display()),
                ));
            }
            if w.replaces && !(w.stream && harmless) && self.enabled("destroys-data") && is_existing_file(&w.path) {
                return Some((
                    "overwrites-existing-file".into(),
                    "destroys-data".into(),
                    format!("replaces the existing file {}", w.path.display()),
                ));
            }
        }
        None
    }

    fn written_paths(&self, u: &CommandUse) -> Vec<Written> {
        let Some(which) = self.writers.get(&u.program) else { return Vec::new() };
        let mut operands = Vec::new();
        let mut target_dir = None;
        let mut no_clobber = false;
        let mut append = false;
        let mut options_done = false;
        let mut k = 0;
        while k < u.args.len() {
            let a = u.args[k].as_str();
            if !options_done && a == "--" {
                options_done = true;
            } else if !options_done && (a == "-t" || a == "--target-directory") {
                target_dir = u.args.get(k + 1).cloned();
                k += 1;
            } else if let Some(dir) = a.strip_prefix("--target-directory=").filter(|_| !options_done) {
                target_dir = Some(dir.to_string());
            } else if !options_done && a.starts_with('-') && a.len() > 1 {
                no_clobber |= a == "--no-clobber" || (!a.starts_with("--") && a.contains('n'));
                append |= a == "--append" || (!a.starts_with("--") && a.contains('a'));
            } else {
                operands.push(a.to_string());
            }
            k += 1;
        }
        let resolve = |p: &str| resolve_path(p, u.cwd.as_deref());
        let mut out = Vec::new();
        if which == "all" {
            let stream = self.in_place_writers.contains(&u.program);
            for p in operands.iter().filter_map(|o| resolve(o)) {
                out.push(Written { path: p, stream, replaces: stream && !append });
            }
            return out;
        }
        let (sources, dest) = match target_dir {
            Some(d) => (operands.clone(), Some(d)),
            None => {
                let dest = operands.pop();
                (operands.clone(), dest)
            }
        };
        let Some(dest) = dest.as_deref().and_then(resolve) else { return out };
        let stream = self.in_place_writers.contains(&u.program);
        if dest.is_dir() {
            for s in &sources {
                if let Some(name) = Path::new(s).file_name() {
                    out.push(Written { path: dest.join(name), stream, replaces: !no_clobber });
                }
            }
        }
        out.push(Written { path: dest, stream, replaces: !no_clobber });
        out
    }

    /// The first configured rule that matches.
    fn rule_effect(&self, u: &CommandUse) -> Option<Hit> {
        let joined = u.args.join(" ");
        for r in &self.rules {
            if !r.programs.contains(&u.program) || !self.enabled(&r.effect) {
                continue;
            }
            if let Some(re) = &r.args_match {
                if !re.is_match(&joined) {
                    continue;
                }
            }
            if r.args_unless.as_ref().is_some_and(|re| re.is_match(&joined)) {
                continue;
            }
            if !r.piped_into.is_empty() && !u.piped_into.iter().any(|p| r.piped_into.contains(p)) {
                continue;
            }
            if r.path_outside_workspace {
                let operands: Vec<&String> = u.args.iter().filter(|a| !a.starts_with('-')).collect();
                let considered: Vec<&String> =
                    if r.last_only { operands.last().copied().into_iter().collect() } else { operands };
                if !considered.iter().any(|a| self.outside(a, u.cwd.as_deref())) {
                    continue;
                }
            }
            return Some((r.name.clone(), r.effect.clone(), r.reason.clone()));
        }
        None
    }

    fn outside(&self, target: &str, cwd: Option<&Path>) -> bool {
        let Some(p) = resolve_path(target, cwd) else {
            return true;
        };
        if self.harmless.contains(&p) {
            return false;
        }
        !p.starts_with(&self.workspace)
    }
}

/// `path` with its links resolved (an existing link in the workspace may point anywhere);
/// for a path that does not exist yet, its folder's links.
fn real_path(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => dir.canonicalize().map(|d| d.join(name)).unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

/// True when `path` names an existing file (or a link), not a directory.
fn is_existing_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir())
}
