//! The permission policy: is a shell command dangerous, and by which rule.

use super::shell_parse::{analyze, resolve_path, CommandUse};
use super::SandboxError;
use crate::config::PermissionsConfig;
use regex::Regex;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The policy's verdict on one command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionVerdict {
    /// True when the user must decide before it runs.
    pub dangerous: bool,
    /// The rule that matched (`unparseable`, `redirect-outside-workspace`, `computed-program`, or a config rule name).
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
    piped_into: Vec<String>,
    path_outside_workspace: bool,
    last_only: bool,
    reason: String,
}

/// Checks commands against the `[permissions]` rules for one workspace.
pub struct PermissionPolicy {
    rules: Vec<CompiledRule>,
    harmless: Vec<PathBuf>,
    workspace: PathBuf,
}

impl PermissionPolicy {
    /// Compiles the configured rules for `workspace`.
    pub fn new(config: &PermissionsConfig, workspace: &Path) -> Result<Self, SandboxError> {
        let mut rules = Vec::new();
        for r in &config.rules {
            let args_match = match &r.args_match {
                Some(re) => Some(Regex::new(re).map_err(|e| SandboxError::Store {
                    path: PathBuf::from("config: permissions.rules"),
                    reason: format!("rule `{}`: bad args_match regex: {e}", r.name),
                })?),
                None => None,
            };
            rules.push(CompiledRule {
                name: r.name.clone(),
                programs: r.programs.clone(),
                args_match,
                piped_into: r.piped_into.clone(),
                path_outside_workspace: r.path_outside_workspace,
                last_only: r.path_args == "last",
                reason: r.reason.clone(),
            });
        }
        let workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
        Ok(Self { rules, harmless: config.harmless_write_targets.iter().map(PathBuf::from).collect(), workspace })
    }

    /// The verdict for `command` (nothing is run).
    pub fn check(&self, command: &str) -> PermissionVerdict {
        let uses = match analyze(command, &self.workspace) {
            Ok(u) => u,
            Err(why) => {
                return PermissionVerdict {
                    dangerous: true,
                    rule: Some("unparseable".into()),
                    reason: format!("cannot be checked before it runs: {why}"),
                    sub_command: None,
                }
            }
        };
        for u in &uses {
            if let Some(v) = self.check_use(u) {
                return v;
            }
        }
        PermissionVerdict { dangerous: false, rule: None, reason: "no rule matched".into(), sub_command: None }
    }

    fn check_use(&self, u: &CommandUse) -> Option<PermissionVerdict> {
        let hit = |rule: &str, reason: String| {
            Some(PermissionVerdict {
                dangerous: true,
                rule: Some(rule.to_string()),
                reason,
                sub_command: Some(u.text.clone()),
            })
        };
        if u.dynamic_redirect {
            return hit("redirect-outside-workspace", "redirects output to a file only known at run time".into());
        }
        for target in &u.redirect_writes {
            if self.outside(target, u.cwd.as_deref()) {
                return hit(
                    "redirect-outside-workspace",
                    format!("redirects output to {target}, outside the workspace"),
                );
            }
        }
        if u.program.is_empty() && u.redirect_writes.is_empty() {
            return None;
        }
        if u.dynamic_program {
            return hit("computed-program", "the program to run is only known at run time".into());
        }
        let joined = u.args.join(" ");
        for r in &self.rules {
            if !r.programs.contains(&u.program) {
                continue;
            }
            if let Some(re) = &r.args_match {
                if !re.is_match(&joined) {
                    continue;
                }
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
            return hit(&r.name, r.reason.clone());
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
