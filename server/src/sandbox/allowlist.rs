//! The allowlist side of the permission policy: a simple command is proven harmless
//! when a `[[permissions.allow]]` entry accepts its program and every argument, and no
//! word holds an expansion the gate cannot evaluate. Anything else is "unproven" and
//! asks, with the part and the reason. Which programs and arguments are harmless is
//! config; what is read here is shell syntax (options, operands, expansions, paths).

use super::permission::inline_code::PythonCheck;
use super::shell_parse::{basename, resolve_path, CommandUse, Word};
use super::SandboxError;
use crate::config::AllowRule;
use regex::Regex;
use std::path::{Path, PathBuf};

/// What the first operand of an allowed program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operand {
    Any,
    Script,
    Code,
}

/// One compiled `[[permissions.allow]]` entry.
pub(super) struct Allowed {
    name: String,
    programs: Vec<String>,
    subcommands: Vec<Vec<String>>,
    forbid: Vec<(Regex, String)>,
    max_operands: Option<usize>,
    value_flags: Vec<String>,
    operand: Operand,
    code_flags: Vec<String>,
    code_allowed: Vec<Regex>,
    code_forbid: Vec<(Regex, String)>,
    pub(super) runs_workspace_code: bool,
    wrapper: bool,
    operands: usize,
    appends_args: bool,
    output_flags: Vec<String>,
    pub(super) writes_cwd: bool,
    options: Vec<Regex>,
    output_operand: Option<Regex>,
    folder_flags: Vec<String>,
    pub(super) fills_folder: bool,
    makes_link: bool,
    pub(super) path_variables: Vec<String>,
    pub(super) path_dirs: Vec<PathBuf>,
    python: Option<PythonCheck>,
}

/// Why a simple command is not proven harmless.
#[derive(Debug, Clone)]
pub(super) struct Rejection {
    /// Rule name for the verdict (`unknown-program`, `argument-not-allowed`, …).
    pub rule: String,
    /// The reason shown to the user.
    pub reason: String,
    /// A reason about one argument (preferred over "not one of the allowed forms").
    specific: bool,
}

pub(super) fn reject(rule: &str, reason: String) -> Rejection {
    Rejection { rule: rule.to_string(), reason, specific: true }
}

/// What an entry accepted.
pub(super) struct Accepted<'a> {
    /// The entry.
    pub entry: &'a Allowed,
    /// For a wrapper: the index (into the use's words) where the wrapped command starts.
    pub wrapped_at: Option<usize>,
    /// The values of its `output_flags` options: paths it writes (checked by the policy).
    pub outputs: Vec<String>,
    /// For an entry that fills a folder: the values of its `folder_flags` options.
    pub folders: Vec<String>,
    /// For an entry that makes a link: (TARGET, LINK).
    pub link: Option<(String, String)>,
}

fn compile(re: &str, what: &str) -> Result<Regex, SandboxError> {
    Regex::new(re).map_err(|e| SandboxError::Store {
        path: PathBuf::from("config: permissions.allow"),
        reason: format!("{what}: bad regex {re:?}: {e}"),
    })
}

fn compile_map(
    map: &std::collections::BTreeMap<String, String>,
    what: &str,
) -> Result<Vec<(Regex, String)>, SandboxError> {
    map.iter().map(|(re, why)| Ok((compile(re, what)?, why.clone()))).collect()
}

impl Allowed {
    pub(super) fn new(rule: &AllowRule) -> Result<Self, SandboxError> {
        let what = format!("allow entry `{}`", rule.name);
        Ok(Self {
            name: rule.name.clone(),
            programs: rule.programs.clone(),
            subcommands: rule.subcommands.iter().map(|s| s.split_whitespace().map(str::to_string).collect()).collect(),
            forbid: compile_map(&rule.forbid, &what)?,
            max_operands: rule.max_operands,
            value_flags: rule.value_flags.clone(),
            operand: match rule.operand.as_str() {
                "script" => Operand::Script,
                "code" => Operand::Code,
                _ => Operand::Any,
            },
            code_flags: rule.code_flags.clone(),
            code_allowed: rule.code_allowed.iter().map(|r| compile(r, &what)).collect::<Result<_, _>>()?,
            code_forbid: compile_map(&rule.code_forbid, &what)?,
            runs_workspace_code: rule.runs_workspace_code,
            wrapper: rule.wrapper,
            operands: rule.operands,
            appends_args: rule.appends_args,
            output_flags: rule.output_flags.clone(),
            writes_cwd: rule.writes_cwd,
            options: rule.options.iter().map(|r| compile(r, &what)).collect::<Result<_, _>>()?,
            output_operand: rule.output_operand.as_deref().map(|r| compile(r, &what)).transpose()?,
            folder_flags: rule.folder_flags.clone(),
            fills_folder: rule.fills_folder,
            makes_link: rule.makes_link,
            path_variables: rule.path_variables.clone(),
            path_dirs: rule.path_dirs.iter().map(|d| super::permission::variables::home_path(d)).collect(),
            python: match &rule.python {
                Some(p) => Some(PythonCheck::new(p).map_err(|e| SandboxError::Store {
                    path: PathBuf::from("config: permissions.allow"),
                    reason: format!("{what}: python.read_mode: {e}"),
                })?),
                None => None,
            },
        })
    }

    pub(super) fn covers(&self, program: &str) -> bool {
        self.programs.iter().any(|p| p == program)
    }

    /// Harmless with any arguments at all (so arguments only known at run time are fine too).
    pub(super) fn unconstrained(&self) -> bool {
        self.subcommands.is_empty()
            && self.forbid.is_empty()
            && self.max_operands.is_none()
            && self.operand == Operand::Any
            && !self.wrapper
            && self.output_flags.is_empty()
            && self.options.is_empty()
            && self.output_operand.is_none()
            && !self.fills_folder
            && !self.makes_link
    }

    /// Rejects option `t` when the entry lists its options and `t` is not one of them.
    fn check_option(&self, head: &str, t: &str) -> Result<(), Rejection> {
        if self.options.is_empty() || self.options.iter().any(|re| re.is_match(t)) {
            return Ok(());
        }
        Err(reject("argument-not-allowed", format!("`{head} {t}` is not one of the options known to be harmless")))
    }

    /// The value of folder option `t` (with the next word `next`): Some((value, words used)).
    fn folder_value<'w>(
        &self,
        t: &'w str,
        next: Option<&'w Word>,
    ) -> Option<(Option<&'w Word>, Option<&'w str>, usize)> {
        for f in &self.folder_flags {
            if t == f {
                return Some((next, next.map(|w| w.text.as_str()), 2));
            }
            if let Some(v) = t.strip_prefix(f.as_str()).and_then(|v| v.strip_prefix('=')) {
                return Some((None, Some(v), 1));
            }
        }
        None
    }

    /// The value of output option `t` (with the next word `next`): Some((value, words used)).
    fn output_value<'w>(&self, t: &'w str, next: Option<&'w Word>) -> Option<(Option<&'w str>, usize)> {
        for f in &self.output_flags {
            if t == f {
                return Some((next.map(|w| w.text.as_str()), 2));
            }
            if let Some(v) = t.strip_prefix(f.as_str()) {
                let long = f.starts_with("--");
                if long && v.starts_with('=') {
                    return Some((Some(&v[1..]), 1));
                }
                if !long && f.len() == 2 && !v.is_empty() {
                    return Some((Some(v), 1));
                }
            }
        }
        None
    }

    pub(super) fn appends_args(&self) -> bool {
        self.appends_args
    }
}

/// The facts about the line and the workspace an entry needs.
pub(super) struct Context<'a> {
    pub workspace: &'a Path,
    pub safe_variables: &'a [String],
    /// The program is one whose operands are written (`permissions.writers`).
    pub writer: bool,
}

/// True when the shell could expand the glob `w` to a file name that starts with `-` (an option).
fn glob_may_be_option(w: &Word, cwd: Option<&Path>) -> bool {
    if !w.text.starts_with(['*', '?', '[']) {
        return false;
    }
    let Some(dir) = cwd else { return true };
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with('-')),
        Err(_) => true,
    }
}

fn shown(w: &Word) -> &str {
    if w.text.chars().count() > 60 {
        "…"
    } else {
        &w.text
    }
}

impl Allowed {
    /// Accepts `u` (whose program this entry covers), or says why not.
    pub(super) fn accept(&self, u: &CommandUse, ctx: &Context) -> Result<Accepted<'_>, Rejection> {
        let args = u.words.get(1..).unwrap_or(&[]);
        let prog = &u.program;
        let mut start = 0;
        if !self.subcommands.is_empty() {
            let found = self.subcommands.iter().find(|sc| {
                args.len() >= sc.len() && sc.iter().zip(args).all(|(a, w)| *a == w.text && !w.dynamic && !w.glob)
            });
            match found {
                Some(sc) => start = sc.len(),
                None => {
                    let forms: Vec<String> = self.subcommands.iter().map(|s| s.join(" ")).collect();
                    let given = args.first().map(|w| format!(" {}", shown(w))).unwrap_or_default();
                    return Err(Rejection {
                        rule: "arguments-not-allowed".into(),
                        reason: format!(
                            "`{prog}{given}` is not one of the forms known to be harmless ({}: {})",
                            self.name,
                            forms.join(", ")
                        ),
                        specific: false,
                    });
                }
            }
        }
        let rest = &args[start..];
        // The program with its subcommand, for reasons (`git diff`, `python3 -m pytest`).
        let head: String = std::iter::once(prog.as_str())
            .chain(args[..start].iter().map(|w| w.text.as_str()))
            .collect::<Vec<_>>()
            .join(" ");
        // `tar xzf -C DIR`: the bundle's `f` takes `-C` as the archive, and DIR is a member.
        if self.fills_folder && rest.first().is_some_and(|w| w.text.starts_with('-')) {
            return Err(reject("argument-not-allowed", format!("`{head}` with an option where the archive goes")));
        }
        let constrained = !self.unconstrained() || ctx.writer;
        let code_by_flag = self.operand == Operand::Code
            && rest
                .iter()
                .any(|w| self.code_flags.iter().any(|f| w.text == *f || w.text.starts_with(&format!("{f}="))));
        let mut operands = 0;
        let mut outputs = Vec::new();
        let mut folders = Vec::new();
        let mut operand_words: Vec<&Word> = Vec::new();
        let mut options_done = false;
        let mut k = 0;
        while k < rest.len() {
            let w = &rest[k];
            if w.dynamic || !w.substitutions.is_empty() {
                // `export PATH=…`: the policy reads the value itself (see `path_dirs`).
                if !self.path_dirs.is_empty() && w.text.starts_with("PATH=") {
                    k += 1;
                    operands += 1;
                    continue;
                }
                if constrained {
                    return Err(reject(
                        "unevaluable-argument",
                        format!(
                            "`{}` is only known at run time (a variable or a command substitution), and `{prog}` is harmless only with known arguments",
                            shown(w)
                        ),
                    ));
                }
                k += 1;
                operands += 1;
                continue;
            }
            if constrained && w.brace {
                return Err(reject(
                    "unevaluable-argument",
                    format!("`{}` is a brace expansion, which may add options to `{prog}`", shown(w)),
                ));
            }
            if constrained && w.glob && glob_may_be_option(w, u.cwd.as_deref()) {
                return Err(reject(
                    "unevaluable-argument",
                    format!("`{}` may expand to a file name that `{prog}` reads as an option", shown(w)),
                ));
            }
            if let Some((_, why)) = self.forbid.iter().find(|(re, _)| re.is_match(&w.text)) {
                return Err(reject("argument-not-allowed", format!("`{head} {}`: {why}", shown(w))));
            }
            let t = w.text.as_str();
            if self.wrapper {
                if t == "--" {
                    k += 1;
                    break;
                }
                if let Some(name) = super::shell_parse::assignment_name(t) {
                    if !ctx.safe_variables.iter().any(|v| v == name) {
                        return Err(reject("unsafe-variable", unsafe_variable(name)));
                    }
                    k += 1;
                    continue;
                }
                if t.starts_with('-') && t != "-" {
                    self.check_option(&head, t)?;
                    k += if self.value_flags.iter().any(|f| f == t) { 2 } else { 1 };
                    continue;
                }
                break;
            }
            if !options_done && t == "--" {
                options_done = true;
                k += 1;
                continue;
            }
            if !options_done && t.starts_with('-') && t != "-" {
                self.check_option(&head, t)?;
                if let Some((word, value, used)) = self.folder_value(t, rest.get(k + 1)) {
                    let unknown = word.is_some_and(|n| n.dynamic || n.glob || n.brace || !n.substitutions.is_empty());
                    match value {
                        Some(v) if !unknown => folders.push(v.to_string()),
                        _ => {
                            return Err(reject(
                                "argument-not-allowed",
                                format!("`{head} {}` without a folder known before it runs", shown(w)),
                            ))
                        }
                    }
                    k += used;
                    continue;
                }
                if let Some((value, used)) = self.output_value(t, rest.get(k + 1)) {
                    let next_unknown = used == 2
                        && rest
                            .get(k + 1)
                            .is_some_and(|n| n.dynamic || n.glob || n.brace || !n.substitutions.is_empty());
                    match value {
                        Some(v) if !next_unknown => outputs.push(v.to_string()),
                        _ => {
                            return Err(reject(
                                "argument-not-allowed",
                                format!("`{head} {}` without a file name known before it runs", shown(w)),
                            ))
                        }
                    }
                    k += used;
                    continue;
                }
                if self.operand == Operand::Code {
                    if let Some(f) = self.code_flags.iter().find(|f| t == f.as_str()) {
                        let code = rest.get(k + 1).ok_or_else(|| {
                            reject("argument-not-allowed", format!("`{prog} {f}` without program text"))
                        })?;
                        self.check_code(prog, code)?;
                        k += 2;
                        continue;
                    }
                    if let Some(code) = self.code_flags.iter().find_map(|f| t.strip_prefix(&format!("{f}="))) {
                        self.check_code(prog, &Word { text: code.to_string(), ..Default::default() })?;
                        k += 1;
                        continue;
                    }
                }
                if self.operand == Operand::Script && operands == 0 && self.options.is_empty() {
                    return Err(reject(
                        "argument-not-allowed",
                        format!("`{prog} {}` before the script is not known to be harmless", shown(w)),
                    ));
                }
                k += if self.value_flags.iter().any(|f| f == t) { 2 } else { 1 };
                continue;
            }
            if operands == 0 {
                match self.operand {
                    Operand::Script => {
                        self.check_script(prog, w, u.cwd.as_deref(), ctx.workspace)?;
                        // What follows is the script's own argument list.
                        return Ok(Accepted { entry: self, wrapped_at: None, outputs, folders, link: None });
                    }
                    Operand::Code if !code_by_flag => self.check_code(prog, w)?,
                    _ => {}
                }
                if let Some(re) = &self.output_operand {
                    if w.glob || w.brace || !re.is_match(t) {
                        return Err(reject(
                            "argument-not-allowed",
                            format!(
                                "`{head} {}`: the file it writes is not one of the names known to be harmless",
                                shown(w)
                            ),
                        ));
                    }
                    outputs.push(t.to_string());
                }
            }
            operand_words.push(w);
            operands += 1;
            k += 1;
        }
        if self.wrapper {
            k += self.operands;
            let at = (k < rest.len()).then_some(1 + start + k);
            return Ok(Accepted { entry: self, wrapped_at: at, outputs, folders, link: None });
        }
        if self.operand == Operand::Script {
            return Err(reject(
                "argument-not-allowed",
                format!("`{prog}` without a script file reads the code to run from its input"),
            ));
        }
        if let Some(max) = self.max_operands {
            if operands > max {
                return Err(reject(
                    "argument-not-allowed",
                    format!(
                        "`{prog}` with {operands} operands: at most {max} are known to be harmless ({})",
                        self.name
                    ),
                ));
            }
        }
        if folders.len() > 1 {
            return Err(reject("argument-not-allowed", format!("`{prog}` told more than one folder to write into")));
        }
        let mut link = None;
        if self.makes_link {
            match operand_words.as_slice() {
                [target, name] if !target.glob && !name.glob => link = Some((target.text.clone(), name.text.clone())),
                _ => {
                    return Err(reject(
                        "argument-not-allowed",
                        format!("`{head}` is known to be harmless only as `{head} TARGET LINK`, both written out"),
                    ))
                }
            }
        }
        Ok(Accepted { entry: self, wrapped_at: None, outputs, folders, link })
    }

    fn check_code(&self, prog: &str, w: &Word) -> Result<(), Rejection> {
        if w.dynamic || !w.substitutions.is_empty() || w.unevaluable.is_some() {
            return Err(reject("unevaluable-argument", format!("the `{prog}` program text is only known at run time")));
        }
        if let Some((_, why)) = self.code_forbid.iter().find(|(re, _)| re.is_match(&w.text)) {
            return Err(reject("code-not-allowed", format!("`{prog} '{}'`: {why}", shown(w))));
        }
        if !self.code_allowed.is_empty() && !self.code_allowed.iter().any(|re| re.is_match(&w.text)) {
            return Err(reject(
                "code-not-allowed",
                format!("the `{prog}` program `{}` is not one of the forms known to be harmless", shown(w)),
            ));
        }
        if let Some(python) = &self.python {
            python.check(&w.text).map_err(|why| reject("code-not-allowed", format!("the `{prog}` program {why}")))?;
        }
        Ok(())
    }

    fn check_script(&self, prog: &str, w: &Word, cwd: Option<&Path>, workspace: &Path) -> Result<(), Rejection> {
        if w.dynamic || w.glob || w.brace || !w.substitutions.is_empty() {
            return Err(reject(
                "unevaluable-argument",
                format!("the script `{}` that `{prog}` runs is only known at run time", shown(w)),
            ));
        }
        let inside =
            resolve_path(&w.text, cwd).map(|p| p.canonicalize().unwrap_or(p)).is_some_and(|p| p.starts_with(workspace));
        if inside {
            Ok(())
        } else {
            Err(reject(
                "script-outside-workspace",
                format!("`{prog} {}` runs a script outside the workspace", shown(w)),
            ))
        }
    }
}

pub(super) fn unsafe_variable(name: &str) -> String {
    format!("sets `{name}`, which is not in permissions.safe_variables (it may change what the program runs or loads)")
}

/// The best reason among entries that all rejected: one about an argument before "not one of the forms".
pub(super) fn best(rejections: Vec<Rejection>) -> Option<Rejection> {
    let specific = rejections.iter().position(|r| r.specific);
    match specific {
        Some(i) => rejections.into_iter().nth(i),
        None => rejections.into_iter().next(),
    }
}

/// True when the words from `at` on are what the parser unwrapped into `next`.
pub(super) fn wrapped_matches(u: &CommandUse, at: usize, next: Option<&CommandUse>) -> bool {
    let Some(next) = next else { return false };
    let Some(words) = u.words.get(at..) else { return false };
    let Some(first) = words.first() else { return false };
    next.program == basename(&first.text)
        && next.args.len() + 1 == words.len()
        && next.args.iter().zip(&words[1..]).all(|(a, w)| *a == w.text)
}
