//! Entries that make links or fill folders: `ln -s TARGET LINK` inside the workspace, and
//! archives unpacked into an empty or missing folder (`makes_link`, `fills_folder`).

use super::super::allowlist::{self, Accepted, Rejection};
use super::super::shell_parse::{resolve_path, CommandUse};
use super::{real_path, PermissionPolicy};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

impl PermissionPolicy {
    /// The checks of entries that make links or fill folders (see `makes_link`, `fills_folder`).
    pub(super) fn check_fills(&self, uses: &[CommandUse], i: usize, accepted: &Accepted) -> Result<(), Rejection> {
        let u = &uses[i];
        if accepted.link.is_none() && !accepted.entry.fills_folder {
            return Ok(());
        }
        // What it makes (a link anywhere, an archive's links) could be written through by
        // another part of the same line, which the gate reads as it is before the line runs.
        if let Some((_, other)) = uses.iter().enumerate().find(|(j, w)| *j != i && !(*j < i && w.program == "cd")) {
            return Err(allowlist::reject(
                "not-alone",
                format!("`{}` is known to be harmless only alone in its line (here with `{}`)", u.text, other.text),
            ));
        }
        if let Some((target, link)) = &accepted.link {
            return self.check_link(u, target, link);
        }
        let folder = match accepted.folders.first() {
            Some(f) => self.check_folder_path(u, f)?,
            None => u.cwd.clone().ok_or_else(|| {
                allowlist::reject(
                    "output-outside-workspace",
                    format!("`{}` writes into a folder only known at run time", u.text),
                )
            })?,
        };
        let real = real_path(&folder);
        if !real.starts_with(&self.workspace) {
            return Err(allowlist::reject(
                "output-outside-workspace",
                format!("`{}` writes into {}, outside the workspace", u.program, folder.display()),
            ));
        }
        let empty = match std::fs::read_dir(&real) {
            Ok(mut entries) => entries.next().is_none(),
            Err(e) => e.kind() == std::io::ErrorKind::NotFound && std::fs::symlink_metadata(&folder).is_err(),
        };
        if !empty {
            return Err(allowlist::reject(
                "folder-not-empty",
                format!(
                    "`{}` writes files it does not name into {}, which holds files it may replace",
                    u.program,
                    folder.display()
                ),
            ));
        }
        Ok(())
    }

    /// `ln -s TARGET LINK`: LINK a new path in the workspace, TARGET (from LINK's folder) an
    /// existing file in the workspace that no path rule names.
    fn check_link(&self, u: &CommandUse, target: &str, link: &str) -> Result<(), Rejection> {
        let bad = |why: String| Err(allowlist::reject("link-not-allowed", format!("`{}`: {why}", u.text)));
        if Path::new(link).components().any(|c| c == Component::ParentDir) || link.starts_with('~') {
            return bad(format!("the link {link} is named through `..` or `~`"));
        }
        let Some(path) = resolve_path(link, u.cwd.as_deref()) else {
            return bad(format!("the link {link} is in a folder only known at run time"));
        };
        if std::fs::symlink_metadata(&path).is_ok() {
            return bad(format!("{link} exists (a folder would get the link inside it; a file would stay)"));
        }
        if !real_path(&path).starts_with(&self.workspace) || self.path_rule(&path, true).is_some() {
            return bad(format!("the link {link} is not a new path inside the workspace that no path rule names"));
        }
        let Some(dir) = path.parent() else { return bad("the link has no folder".into()) };
        let Some(resolved) = follow(dir, target) else {
            return bad(format!("{target}, read from the link's folder, does not exist"));
        };
        if !resolved.starts_with(&self.workspace) || !resolved.is_file() || self.path_rule(&resolved, true).is_some() {
            return bad(format!(
                "{target} leads to {}, which is not a file of the workspace that no path rule names",
                resolved.display()
            ));
        }
        Ok(())
    }
}

/// Where the link target `target`, read from folder `dir`, leads, as the kernel resolves it
/// (links followed, `..` after them physical); folders of `dir` that do not exist yet count as
/// plain folders. None when it does not exist.
fn follow(dir: &Path, target: &str) -> Option<PathBuf> {
    let mut base = if target.starts_with('/') { PathBuf::from("/") } else { dir.to_path_buf() };
    let mut missing: Vec<OsString> = Vec::new();
    while base.canonicalize().is_err() {
        missing.push(base.file_name()?.to_os_string());
        base = base.parent()?.to_path_buf();
    }
    base = base.canonicalize().ok()?;
    missing.reverse();
    for c in Path::new(target).components() {
        match c {
            Component::Normal(name) if missing.is_empty() => match base.join(name).canonicalize() {
                Ok(next) => base = next,
                Err(_) => missing.push(name.to_os_string()),
            },
            Component::Normal(name) => missing.push(name.to_os_string()),
            // `..` leaves a folder still to be made (popped in the guard), else a real one.
            Component::ParentDir if missing.pop().is_none() => {
                base.pop();
            }
            _ => {}
        }
    }
    missing.is_empty().then_some(base)
}

#[cfg(test)]
pub(super) mod tests {
    use crate::sandbox::PermissionPolicy;
    use std::path::Path;

    pub(crate) fn policy(ws: &Path) -> PermissionPolicy {
        let config = crate::config::LoadedConfig::load(&Default::default()).expect("defaults").config;
        PermissionPolicy::new(&config.permissions, ws).expect("policy")
    }

    /// README.md, src/lib.rs, an empty folder, a full one, git hooks, a link out, an archive.
    pub(crate) fn workspace() -> tempfile::TempDir {
        let ws = tempfile::tempdir().unwrap();
        for f in ["README.md", "src/lib.rs", "full/a.txt", "v.tgz", "old.tgz"] {
            let p = ws.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x\n").unwrap();
        }
        std::fs::create_dir_all(ws.path().join("empty")).unwrap();
        std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink(std::env::temp_dir(), ws.path().join("out")).unwrap();
        ws
    }

    fn sort(p: &PermissionPolicy, lines: &[&str]) -> Vec<String> {
        lines.iter().filter(|l| p.check(l).dangerous).map(|l| l.to_string()).collect()
    }

    #[test]
    fn links_are_proven_only_inside_the_workspace_and_alone() {
        let ws = workspace();
        let p = policy(ws.path());
        let fine = [
            "ln -s ../README.md docs/README.md",
            "ln -s README.md readme",
            "ln -s src/lib.rs lib.rs",
            "cd src && ln -s ../README.md r.md",
        ];
        assert_eq!(sort(&p, &fine), Vec::<String>::new());
        let asked = [
            "ln -s /etc/passwd p",
            "ln -s ../../x y",
            "ln -s src s",
            "ln -s README.md src",
            "ln -sf README.md x",
            "ln -s -f README.md x",
            "ln -s README.md x && echo done > x",
            "ln -s README.md x; gcc -o x main.c",
            "ln -s missing.txt x",
            "ln -s README.md .git/hooks/pre-commit",
            "ln -s out/x y",
            "ln -s README.md out/y",
            "ln -s ../README.md sub/../../x",
            "ln -s README.md",
            "ln -s README.md a b",
            "ln -s $F x",
            "ln README.md x",
        ];
        assert_eq!(sort(&p, &asked), asked.to_vec());
    }

    #[test]
    fn archives_write_only_new_files_or_empty_folders() {
        let ws = workspace();
        let p = policy(ws.path());
        let fine = [
            "tar xzf v.tgz -C empty",
            "tar xzf v.tgz -C vendor",
            "tar -xf v.tgz --directory=empty",
            "cd empty && tar xf ../v.tgz",
            "tar czf src.tgz src",
            "tar -cJf src.tar.xz src README.md",
            "zip -r src.zip src",
        ];
        assert_eq!(sort(&p, &fine), Vec::<String>::new());
        let asked = [
            "tar xzf v.tgz",
            "tar xzf v.tgz -C full",
            "tar xzf v.tgz -C out",
            "tar xzf v.tgz -C /tmp/new",
            "tar xzf v.tgz -C empty -C full",
            "tar xzf v.tgz -C empty --overwrite",
            "tar xzf -C empty v.tgz",
            "tar xzf -C empty",
            "tar xzf v.tgz -C empty --to-command=sh",
            "tar xzf v.tgz -C empty src/lib.rs",
            "tar xzf v.tgz -C empty && ls",
            "tar xzf v.tgz -C $DIR",
            "tar xzf host:v.tgz -C empty",
            "tar xzf v.tgz -C .git/hooks",
            "tar czf README.md src",
            "tar czf old.tgz src",
            "tar czf out/x.tgz src",
            "tar czf h:x.tgz src",
            "tar czf x.tgz src --remove-files",
            "tar czf x.tgz -C / etc",
            "tar czf - src",
            "zip -r x.zip src -T -TT sh",
            "zip -rm x.zip src",
            "zip -r src src",
            "zip -r /tmp/x.zip src",
        ];
        assert_eq!(sort(&p, &asked), asked.to_vec());
    }
}
