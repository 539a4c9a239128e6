//! Variables a command sets: `NAME=DIR cmd` where the entry lists NAME in `path_variables`
//! (a folder it writes), and `export PATH=…` with only `path_dirs` added around `$PATH`.

use super::super::allowlist::{self, Rejection};
use super::super::shell_parse::{normalize, resolve_path, CommandUse, Word};
use super::PermissionPolicy;
use std::path::{Path, PathBuf};

/// A configured folder with `~/` or `$HOME/` in front read as the home folder.
pub(in crate::sandbox) fn home_path(dir: &str) -> PathBuf {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    for prefix in ["~/", "$HOME/", "${HOME}/"] {
        if let Some(rest) = dir.strip_prefix(prefix) {
            return normalize(&Path::new(&home).join(rest));
        }
    }
    PathBuf::from(dir)
}

/// Why `export PATH=VALUE` (`word`) is not known to be harmless, or None when every entry it
/// adds is one of `dirs` and `$PATH` stays, once.
pub(super) fn search_path_problem(word: &Word, dirs: &[PathBuf]) -> Option<String> {
    let value = word.text.split_once('=').map(|(_, v)| v).unwrap_or_default();
    if word.literal_dollar || word.glob || word.brace || !word.substitutions.is_empty() || word.unevaluable.is_some() {
        return Some(format!("sets PATH to `{value}`, whose value the gate cannot read exactly"));
    }
    let mut keeps = 0;
    for entry in value.split(':') {
        if entry == "$PATH" || entry == "${PATH}" {
            keeps += 1;
            continue;
        }
        let dir = ["$HOME/", "${HOME}/"]
            .iter()
            .find_map(|p| entry.strip_prefix(p).map(|rest| format!("~/{rest}")))
            .unwrap_or_else(|| entry.to_string());
        let odd = entry.starts_with('~') || dir.split('/').any(|c| c == "." || c == "..");
        if odd
            || dir.contains('$')
            || !(dir.starts_with('/') || dir.starts_with("~/"))
            || !dirs.contains(&home_path(&dir))
        {
            return Some(format!(
                "puts `{entry}` in PATH, which is not one of the folders known to hold only installed programs"
            ));
        }
    }
    (keeps != 1).then(|| "sets PATH without keeping `$PATH` once".to_string())
}

impl PermissionPolicy {
    /// `NAME=DIR cmd` with NAME in the entry's `path_variables`: DIR is a folder it writes.
    pub(super) fn check_path_variables(&self, u: &CommandUse, unsafe_assigned: &[usize]) -> Result<(), Rejection> {
        for &k in unsafe_assigned {
            let Some(w) = u.assigned.get(k) else {
                return Err(allowlist::reject("unsafe-variable", allowlist::unsafe_variable(&u.assignments[k])));
            };
            let value = w.text.split_once('=').map(|(_, v)| v).unwrap_or_default();
            if value.is_empty() || w.dynamic || w.glob || w.brace || w.literal_dollar || !w.substitutions.is_empty() {
                return Err(allowlist::reject(
                    "unsafe-variable",
                    format!("sets `{}` to a path only known at run time", u.assignments[k]),
                ));
            }
            self.check_folder_path(u, value)?;
        }
        Ok(())
    }

    /// A folder the command writes into: in the workspace, through no link out, matching no
    /// path rule (nor anything inside it), and not an existing file.
    pub(super) fn check_folder_path(&self, u: &CommandUse, value: &str) -> Result<PathBuf, Rejection> {
        self.check_outputs(u, &[value.to_string()], false)?;
        let path = resolve_path(value, u.cwd.as_deref()).unwrap_or_default();
        if let Some((_, _, reason)) = self.path_rule(&path.join("x"), true) {
            return Err(allowlist::reject(
                "output-path",
                format!("`{}` writes into {}: {reason}", u.program, path.display()),
            ));
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fills::tests::{policy, workspace};

    #[test]
    fn path_variables_and_path_are_proven_narrowly() {
        let ws = workspace();
        let p = policy(ws.path());
        for line in [
            "CARGO_TARGET_DIR=target/alt cargo build",
            "RUST_LOG=debug CARGO_TARGET_DIR=empty cargo test",
            "export PATH=\"$HOME/.cargo/bin:$PATH\"",
            "export PATH=$PATH:/usr/local/go/bin",
            "export PATH=${HOME}/.cargo/bin:${PATH}",
            "export PATH=\"$HOME/.cargo/bin:$PATH\"; cargo build",
        ] {
            let v = p.check(line);
            assert!(!v.dangerous, "{line}: {v:?}");
        }
        for line in [
            "CARGO_TARGET_DIR=/tmp/x cargo build",
            "CARGO_TARGET_DIR=README.md cargo build",
            "CARGO_TARGET_DIR=out cargo build",
            "CARGO_TARGET_DIR=../x cargo build",
            "CARGO_TARGET_DIR=.git/hooks cargo build",
            "CARGO_TARGET_DIR=x; cargo build",
            "CARGO_TARGET_DIR=x make",
            "CARGO_TARGET_DIR=$X cargo build",
            "CARGO_TARGET_DIR= cargo build",
            "CARGO_TARGET_DIR=x env cargo build",
            "export CARGO_TARGET_DIR=x",
            "export PATH='$HOME/.cargo/bin':$PATH",
            "export PATH=\"$HOME/.cargo/bin:\"'$PATH'",
            "export PATH=\\$HOME/.cargo/bin:$PATH",
            "export PATH=~/.cargo/bin:$PATH",
            "export PATH=\"bin:$PATH\"",
            "export PATH=\":$PATH\"",
            "export PATH=\"$HOME/.cargo/bin\"",
            "export PATH=\"$PATH:$PATH\"",
            "export PATH=\"$HOME/.cargo/bin/../../../tmp:$PATH\"",
            "export PATH=\"$(pwd)/bin:$PATH\"",
            "export PATH+=:/tmp",
            "export PATH=\"$HOME/x:$PATH\"",
            "PATH=\"$HOME/.cargo/bin:$PATH\" ls",
            "declare -x PATH=\"$HOME/.cargo/bin:$PATH\"",
            "read PATH < README.md",
        ] {
            assert!(p.check(line).dangerous, "not asked: {line}");
        }
    }
}
