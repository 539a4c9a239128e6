//! The opt-in commit of a patch: exactly the patch's files, with git, never the
//! user's other staged or unstaged changes (`git commit --only -- FILES`). Off
//! unless asked for (`--commit`, `tinycoder.commit`); a folder outside git or a
//! machine without git is an error that leaves the written files as they are.
//! Also the patch's diff against HEAD: what such a commit would hold, the
//! user's uncommitted changes to those files included.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A commit tinycoder made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The new commit's full hash.
    pub id: String,
    /// Its message's first line.
    pub subject: String,
    /// The files it holds.
    pub files: Vec<String>,
}

/// Why the commit was not made. The files stay as they are in every case.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No `git` program.
    #[error(
        "git is not installed (or not on PATH), so nothing was committed and the files stay as they are; \
         install git, or commit them yourself"
    )]
    Missing,
    /// The workspace is not in a git work tree.
    #[error(
        "{root} is not in a git repository, so nothing was committed and the files stay as they are; \
         run `git init` there first, or commit them another way"
    )]
    NotARepository { root: PathBuf },
    /// The files already match HEAD.
    #[error("nothing to commit: {files} already match the last commit")]
    NothingToCommit { files: String },
    /// A git command failed; its own message is kept.
    #[error("`git {args}` failed in {root}: {message}; nothing was committed and the files stay as they are")]
    Failed { args: String, root: PathBuf, message: String },
}

/// Runs `git -C root ARGS`, never waiting on a prompt.
fn git(root: &Path, args: &[&str]) -> Result<Output, GitError> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => GitError::Missing,
            _ => GitError::Failed { args: args.join(" "), root: root.to_path_buf(), message: e.to_string() },
        })
}

/// [`git`], an error unless it exits 0.
fn git_ok(root: &Path, args: &[&str]) -> Result<Output, GitError> {
    let out = git(root, args)?;
    if out.status.success() {
        return Ok(out);
    }
    let text = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let text = if text.is_empty() { String::from_utf8_lossy(&out.stdout).trim().to_string() } else { text };
    Err(GitError::Failed { args: args.join(" "), root: root.to_path_buf(), message: text })
}

/// The commit message of a patch: the task's summary (first line) cut to
/// `subject_chars` characters, and the task's id below it when there is one.
pub fn commit_message(summary: &str, task_id: Option<&str>, subject_chars: usize) -> String {
    let line = summary.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("changes by tinycoder");
    let subject = if line.chars().count() > subject_chars {
        let cut: String = line.chars().take(subject_chars.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    } else {
        line.to_string()
    };
    match task_id {
        Some(id) => format!("{subject}\n\nMade by tinycoder, task {id}."),
        None => subject,
    }
}

/// Whether `root` is inside a git work tree (not a bare repository or a `.git` folder).
fn in_work_tree(root: &Path) -> Result<bool, GitError> {
    let inside = git(root, &["rev-parse", "--is-inside-work-tree"])?;
    Ok(inside.status.success() && String::from_utf8_lossy(&inside.stdout).trim() == "true")
}

/// Whether the repository around `root` has a first commit.
fn has_head(root: &Path) -> Result<bool, GitError> {
    Ok(git(root, &["rev-parse", "--verify", "--quiet", "HEAD"])?.status.success())
}

/// The diff from HEAD to the patched files (what committing them would hold);
/// `None` when there is no HEAD to compare with: not a git work tree, no commit
/// yet, or no git. A file HEAD lacks shows as new.
pub fn diff_against_head(root: &Path, patch: &crate::edits::Patch) -> Option<String> {
    if !in_work_tree(root).ok()? || !has_head(root).ok()? {
        return None;
    }
    let mut diff = String::new();
    for change in &patch.changes {
        // `HEAD:./path` is relative to `root`, which may be a folder inside the repository.
        let shown = git(root, &["show", &format!("HEAD:./{}", change.path)]).ok()?;
        let at_head =
            if shown.status.success() { String::from_utf8_lossy(&shown.stdout).into_owned() } else { String::new() };
        diff.push_str(&crate::edits::unified_diff(&change.path, &at_head, &change.after));
    }
    Some(diff)
}

/// Commits `files` (workspace-relative) of the repository around `root` with
/// `message`: stages them (new files too), then commits only them.
pub fn commit(root: &Path, files: &[String], message: &str) -> Result<Commit, GitError> {
    if !in_work_tree(root)? {
        return Err(GitError::NotARepository { root: root.to_path_buf() });
    }
    let paths: Vec<&str> = files.iter().map(String::as_str).collect();
    let with_paths =
        |head: &[&'static str]| -> Vec<&str> { head.iter().copied().chain(paths.iter().copied()).collect() };
    git_ok(root, &with_paths(&["add", "--all", "--"]))?;
    // With a first commit to compare with, "no difference" is said plainly rather than as git's failure.
    if has_head(root)? && git(root, &with_paths(&["diff", "--cached", "--quiet", "HEAD", "--"]))?.status.success() {
        return Err(GitError::NothingToCommit { files: files.join(", ") });
    }
    let mut args = vec!["commit", "--quiet", "--only", "-m", message, "--"];
    args.extend(paths.iter().copied());
    git_ok(root, &args)?;
    let head = git_ok(root, &["rev-parse", "HEAD"])?;
    Ok(Commit {
        id: String::from_utf8_lossy(&head.stdout).trim().to_string(),
        subject: message.lines().next().unwrap_or_default().to_string(),
        files: files.to_vec(),
    })
}
