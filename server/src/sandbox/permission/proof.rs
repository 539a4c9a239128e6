//! The allowlist half of the policy: proving one simple command harmless, and checking what
//! an accepted entry says it writes (outputs, its working directory).

use super::super::allowlist::{self, Context, Rejection};
use super::super::shell_parse::{assignment_name, resolve_path, CommandUse};
use super::{is_existing_file, real_path, PermissionPolicy};
use std::path::PathBuf;

impl PermissionPolicy {
    /// Proves the simple command `uses[i]` harmless with the allowlist, or says why it is not.
    pub(super) fn prove(&self, uses: &[CommandUse], i: usize) -> Result<(), Rejection> {
        let u = &uses[i];
        if let Some(why) = &u.unevaluable {
            return Err(allowlist::reject(
                "unevaluable-expansion",
                format!("{why} cannot be evaluated before it runs"),
            ));
        }
        // Assignments other than safe_variables are checked against the entry that accepts the
        // command (its `path_variables`); alone (`NAME=value` with no command) they ask.
        let unsafe_assigned: Vec<usize> =
            (0..u.assignments.len()).filter(|&k| !self.safe_variables.contains(&u.assignments[k])).collect();
        if let Some(&k) = unsafe_assigned.first().filter(|_| u.program.is_empty()) {
            return Err(allowlist::reject("unsafe-variable", allowlist::unsafe_variable(&u.assignments[k])));
        }
        let Some(first) = u.words.first() else {
            return Ok(());
        };
        if first.dynamic || !first.substitutions.is_empty() {
            return Err(allowlist::reject("computed-program", "the program to run is only known at run time".into()));
        }
        if first.glob || first.brace {
            return Err(allowlist::reject(
                "unevaluable-expansion",
                format!("the program name `{}` is a pattern the shell expands", first.text),
            ));
        }
        let mut workspace_program = false;
        if first.text.contains('/') {
            let path = resolve_path(&first.text, u.cwd.as_deref());
            let in_dirs =
                path.as_ref().and_then(|p| p.parent()).is_some_and(|d| self.program_dirs.iter().any(|p| p == d));
            workspace_program = path.is_some_and(|p| p.canonicalize().unwrap_or(p).starts_with(&self.workspace));
            if !in_dirs && !workspace_program {
                return Err(allowlist::reject(
                    "program-path",
                    format!("runs `{}`, which is neither in permissions.program_dirs nor in the workspace", first.text),
                ));
            }
        }
        // `export NAME=value`: the names must be safe to set; PATH only as the entries say.
        if matches!(u.program.as_str(), "export" | "declare" | "typeset" | "readonly" | "local") {
            for w in u.words.iter().skip(1).filter(|w| !w.text.starts_with('-')) {
                let name = assignment_name(&w.text).unwrap_or(&w.text);
                if self.safe_variables.iter().any(|v| v == name) {
                    continue;
                }
                if name == "PATH" && u.program == "export" && w.text.contains('=') {
                    let dirs: Vec<PathBuf> = self
                        .allowed
                        .iter()
                        .filter(|e| e.covers(&u.program))
                        .flat_map(|e| e.path_dirs.iter().cloned())
                        .collect();
                    match super::variables::search_path_problem(w, &dirs) {
                        None => continue,
                        Some(why) => return Err(allowlist::reject("unsafe-variable", why)),
                    }
                }
                return Err(allowlist::reject("unsafe-variable", allowlist::unsafe_variable(name)));
            }
        }
        let ctx = Context {
            workspace: &self.workspace,
            safe_variables: &self.safe_variables,
            writer: self.writers.contains_key(&u.program),
        };
        let mut rejections = Vec::new();
        let mut accepted = None;
        for entry in self.allowed.iter().filter(|e| e.covers(&u.program)) {
            match entry.accept(u, &ctx) {
                Ok(a) => match unsafe_assigned.iter().find(|&&k| !entry.path_variables.contains(&u.assignments[k])) {
                    Some(&k) => rejections
                        .push(allowlist::reject("unsafe-variable", allowlist::unsafe_variable(&u.assignments[k]))),
                    None => {
                        accepted = Some(a);
                        break;
                    }
                },
                Err(r) => rejections.push(r),
            }
        }
        let Some(accepted) = accepted else {
            return Err(allowlist::best(rejections).unwrap_or_else(|| {
                allowlist::reject(
                    "unknown-program",
                    format!("unknown program `{}`: not in [[permissions.allow]]", u.program),
                )
            }));
        };
        if let Some(at) = accepted.wrapped_at {
            let next = uses.get(i + 1);
            if !allowlist::wrapped_matches(u, at, next) {
                return Err(allowlist::reject(
                    "wrapper-not-understood",
                    format!("cannot tell which command `{}` runs", u.program),
                ));
            }
            if accepted.entry.appends_args() {
                let inner = next.map(|n| n.program.as_str()).unwrap_or_default();
                let free = !self.writers.contains_key(inner)
                    && self.allowed.iter().any(|e| e.covers(inner) && e.unconstrained());
                if !free {
                    return Err(allowlist::reject(
                        "appended-arguments",
                        format!(
                            "`{}` adds arguments only known at run time to `{inner}`, which is harmless only with known arguments",
                            u.program
                        ),
                    ));
                }
            }
        }
        self.check_outputs(u, &accepted.outputs, accepted.entry.writes_cwd)?;
        self.check_path_variables(u, &unsafe_assigned)?;
        self.check_fills(uses, i, &accepted)?;
        if accepted.entry.runs_workspace_code || workspace_program {
            // `cd /tmp && make` runs the project found there, not the workspace's.
            if !u.cwd.as_deref().is_some_and(|c| real_path(c).starts_with(&self.workspace)) {
                return Err(allowlist::reject(
                    "code-outside-workspace",
                    format!(
                        "`{}` runs the code of the project in its directory, which is not known to be the workspace",
                        u.text
                    ),
                ));
            }
            if let Some(w) = uses
                .iter()
                .enumerate()
                .find(|(j, w)| *j != i && !(w.pipeline == u.pipeline && w.stage > u.stage) && self.writes_something(w))
            {
                return Err(allowlist::reject(
                    "writes-then-runs",
                    format!(
                        "`{}` writes a file in the same line that runs the workspace's code (`{}`), which could run what was written",
                        w.1.text, u.text
                    ),
                ));
            }
        }
        Ok(())
    }

    /// True when `u` writes a file (a redirect other than the harmless targets, or a writer program).
    fn writes_something(&self, u: &CommandUse) -> bool {
        let redirect = u.redirects.iter().filter(|r| r.writes()).any(|r| {
            r.dynamic || resolve_path(&r.target, u.cwd.as_deref()).is_none_or(|p| !self.harmless.contains(&p))
        });
        redirect || self.writers.contains_key(&u.program)
    }

    /// The files an accepted entry says the command writes: each output path (and, for a
    /// program that writes into its working directory, that directory) must lie in the
    /// workspace, match no path rule, and not replace an existing file.
    pub(super) fn check_outputs(&self, u: &CommandUse, outputs: &[String], writes_cwd: bool) -> Result<(), Rejection> {
        if writes_cwd && !u.cwd.as_deref().is_some_and(|c| real_path(c).starts_with(&self.workspace)) {
            return Err(allowlist::reject(
                "output-outside-workspace",
                format!("`{}` writes into its directory, which is not known to be in the workspace", u.text),
            ));
        }
        for out in outputs {
            let Some(path) = resolve_path(out, u.cwd.as_deref()) else {
                return Err(allowlist::reject(
                    "output-outside-workspace",
                    format!("`{}` writes {out} in a directory only known at run time", u.program),
                ));
            };
            if let Some((_, _, reason)) = self.path_rule(&path, true) {
                return Err(allowlist::reject(
                    "output-path",
                    format!("`{}` writes {}: {reason}", u.program, path.display()),
                ));
            }
            if !real_path(&path).starts_with(&self.workspace) {
                return Err(allowlist::reject(
                    "output-outside-workspace",
                    format!("`{}` writes {}, outside the workspace", u.program, path.display()),
                ));
            }
            if is_existing_file(&path) {
                return Err(allowlist::reject(
                    "output-replaces-file",
                    format!("`{}` would replace the existing file {}", u.program, path.display()),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::fills::tests::{policy, workspace};

    #[test]
    fn inline_code_of_other_interpreters_passes_in_one_shape_only() {
        let ws = workspace();
        let p = policy(ws.path());
        for line in [
            "node -e \"console.log(1 + 1)\"",
            "node -p \"console.log('a' + 2 * (3 - 1))\"",
            "ruby -e 'puts 1'",
            "ruby -e 'puts(\"a\", 2 * 3)'",
            "perl -ne 'print if /TODO/' src/lib.rs",
            "perl -lne 'print unless m/^\\s*#/' README.md",
            "python3 -c \"import sys, json; print(json.dumps(sys.argv), sys.version)\"",
            "python3 -c \"import json; print(json.load(open('data.json')))\"",
            "nohup cargo run &",
            "valgrind --leak-check=full ./a.out",
            "valgrind ls",
        ] {
            let v = p.check(line);
            assert!(!v.dangerous, "{line}: {v:?}");
        }
        for line in [
            "node -e \"console.log(process.exit())\"",
            "node -e 'console.log(`${1}`)'",
            "node -e \"console.log(1)\" -r ./x.js",
            "node -e \"console.log(1)\" x.js",
            "node -e \"console.log(/'/+require(\\\"fs\\\").rmSync(\\\"x\\\")+/'/)\"",
            "node -e \"console.log(1 / 2)\"",
            "ruby -e 'puts \"#{1}\"'",
            "ruby -e 'puts %(x)'",
            "ruby -e 'puts /x/'",
            "perl -ne 'print if /(?{ 1 })/' a",
            "perl -ne 'print if /$x/' a",
            "perl -ne 'print if /x/' 'ls|'",
            "perl -ne 'print if /x/' '>a'",
            "perl -ne 'print if /x/e' a",
            "perl -e 'print if /x/' a",
            "perl -ne 'print if /x/; system(1)' a",
            "python3 -c 'import os' -i",
            "python3 -c \"print(open('README.md', 'w'))\"",
            "perl -e 'open(my $f, \">\", \"README.md\")'",
            "cd /tmp && python3 -c 'print(1)'",
            "echo x > json.py && python3 -c 'import json'",
            "nohup setsid cargo run &",
            "nohup -p 1 cargo run",
            "valgrind --log-file=x ./a.out",
            "valgrind /bin/rm -rf src",
            "valgrind ../a.out",
            "cd /tmp && valgrind ./a.out",
        ] {
            assert!(p.check(line).dangerous, "not asked: {line}");
        }
    }
}
