//! Undo against real files and real git in temp folders.

use super::*;
use crate::config::UndoConfig;
use crate::edits::{FileChange, Patch};
use crate::paths::WorkspacePaths;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

const CRLF_BEFORE: &str = "def f():\r\n    return 1\r\n";
const CRLF_AFTER: &str = "def f():\r\n    return 2\r\n";
const BARE_BEFORE: &str = "x = 1\ny = 2";
const BARE_AFTER: &str = "x = 1\ny = 3";
const BINARY: &[u8] = b"\xff\xfe\x00not utf-8 \xc3\x28 bytes\n";

fn config(max_points: u32) -> UndoConfig {
    UndoConfig { max_points, commit_subject_chars: 72 }
}

/// A workspace in `dir/ws` whose data directory is `dir/data`.
fn workspace(dir: &Path) -> WorkspacePaths {
    let root = dir.join("ws");
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(root.join("pkg/crlf.py"), CRLF_BEFORE).unwrap();
    std::fs::write(root.join("bare.py"), BARE_BEFORE).unwrap();
    std::fs::set_permissions(root.join("bare.py"), std::fs::Permissions::from_mode(0o750)).unwrap();
    std::fs::write(root.join("pkg/blob.bin"), BINARY).unwrap();
    WorkspacePaths { root, cache_dir: dir.join("cache"), data_dir: dir.join("data") }
}

fn change(path: &str, before: &str, after: &str) -> FileChange {
    FileChange { path: path.into(), before: before.into(), after: after.into() }
}

fn the_patch() -> Patch {
    Patch {
        changes: vec![
            change("pkg/crlf.py", CRLF_BEFORE, CRLF_AFTER),
            change("bare.py", BARE_BEFORE, BARE_AFTER),
            change("pkg/new/made.py", "", "def made():\n    pass\n"),
        ],
    }
}

fn info(summary: &str) -> PatchInfo {
    PatchInfo { summary: summary.into(), task_id: Some("task-1".into()) }
}

fn bytes(root: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(root.join(rel)).unwrap()
}

fn mode(root: &Path, rel: &str) -> u32 {
    std::fs::metadata(root.join(rel)).unwrap().permissions().mode() & 0o7777
}

#[test]
fn undo_restores_every_file_byte_for_byte_and_deletes_the_created_one() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let root = &paths.root;
    let point = apply_patch(&paths, &config(5), &the_patch(), &info("patched 3 files")).unwrap();
    assert_eq!(bytes(root, "pkg/crlf.py"), CRLF_AFTER.as_bytes());
    assert_eq!(bytes(root, "bare.py"), BARE_AFTER.as_bytes());
    assert_eq!(mode(root, "bare.py"), 0o750, "the write keeps the file's permissions");
    std::fs::write(root.join("pkg/new/plain.txt"), "x").unwrap();
    assert_eq!(mode(root, "pkg/new/made.py"), mode(root, "pkg/new/plain.txt"), "a new file gets the usual mode");
    std::fs::remove_file(root.join("pkg/new/plain.txt")).unwrap();

    let history = UndoHistory::new(&paths, &config(5));
    let last = history.last().unwrap().expect("the point is recorded");
    assert_eq!(last, point);
    assert_eq!(last.files[2].before, None, "a created file is recorded as absent");
    let plan = plan_undo(&last, |p| read_current(root, p)).unwrap();
    let actions: Vec<UndoAction> = plan.iter().map(|f| f.action).collect();
    assert_eq!(actions, [UndoAction::Restore, UndoAction::Restore, UndoAction::Delete]);
    let changed = restore(root, &last, &plan).unwrap();
    assert_eq!(changed, ["pkg/crlf.py", "bare.py", "pkg/new/made.py"]);
    assert_eq!(bytes(root, "pkg/crlf.py"), CRLF_BEFORE.as_bytes(), "CRLF kept");
    assert_eq!(bytes(root, "bare.py"), BARE_BEFORE.as_bytes(), "no newline added at the end");
    assert_eq!(mode(root, "bare.py"), 0o750, "the restore keeps the file's permissions");
    assert!(!root.join("pkg/new/made.py").exists(), "the file the patch created is gone");
    assert_eq!(bytes(root, "pkg/blob.bin"), BINARY, "a file outside the patch is untouched");
    let leftovers: Vec<_> = std::fs::read_dir(root.join("pkg"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tinycoder-"))
        .collect();
    assert!(leftovers.is_empty(), "no temp files left: {leftovers:?}");

    history.remove(&last.id).unwrap();
    assert_eq!(history.last().unwrap(), None);
}

#[test]
fn a_file_changed_since_the_patch_refuses_the_whole_undo() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let root = &paths.root;
    let point = apply_patch(&paths, &config(5), &the_patch(), &info("patched 3 files")).unwrap();
    std::fs::write(root.join("bare.py"), "x = 1\ny = 4").unwrap();
    let err = plan_undo(&point, |p| read_current(root, p)).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, UndoError::ChangedSinceApplied { ref path, .. } if path == "bare.py"), "{text}");
    assert!(text.contains("bare.py changed since tinycoder applied the patch (patched 3 files)"), "{text}");
    assert!(text.contains("nothing was restored"), "{text}");

    std::fs::remove_file(root.join("bare.py")).unwrap();
    let err = plan_undo(&point, |p| read_current(root, p)).unwrap_err();
    assert!(err.to_string().contains("bare.py was deleted since"), "{err}");
    assert_eq!(bytes(root, "pkg/crlf.py"), CRLF_AFTER.as_bytes(), "nothing written");
}

#[test]
fn an_interrupted_undo_finishes_the_files_it_had_not_reached() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let root = &paths.root;
    let point = apply_patch(&paths, &config(5), &the_patch(), &info("p")).unwrap();
    std::fs::write(root.join("pkg/crlf.py"), CRLF_BEFORE).unwrap();
    let plan = plan_undo(&point, |p| read_current(root, p)).unwrap();
    assert_eq!(plan[0].action, UndoAction::AlreadyRestored);
    assert_eq!(restore(root, &point, &plan).unwrap(), ["bare.py", "pkg/new/made.py"]);
    assert_eq!(bytes(root, "bare.py"), BARE_BEFORE.as_bytes());
}

#[test]
fn a_patch_made_from_other_text_writes_nothing_and_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let mut patch = the_patch();
    patch.changes[1].before = "x = 0\n".into();
    let err = apply_patch(&paths, &config(5), &patch, &info("p")).unwrap_err();
    assert!(matches!(err, UndoError::ChangedBeforeWrite { ref path } if path == "bare.py"), "{err}");
    assert_eq!(bytes(&paths.root, "pkg/crlf.py"), CRLF_BEFORE.as_bytes());
    assert!(!paths.root.join("pkg/new/made.py").exists());
    assert_eq!(UndoHistory::new(&paths, &config(5)).ids().unwrap(), Vec::<String>::new());
}

#[test]
fn the_history_keeps_the_newest_points_and_undoes_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let history = UndoHistory::new(&paths, &config(2));
    let mut text = BARE_BEFORE.to_string();
    for i in 0..3 {
        let next = format!("{text}\n# {i}");
        let patch = Patch { changes: vec![change("bare.py", &text, &next)] };
        apply_patch(&paths, &config(2), &patch, &info(&format!("step {i}"))).unwrap();
        text = next;
    }
    let ids = history.ids().unwrap();
    assert_eq!(ids.len(), 2, "undo.max_points bounds the history: {ids:?}");
    let last = history.last().unwrap().unwrap();
    assert_eq!(last.summary, "step 2");
    history.remove(&last.id).unwrap();
    assert_eq!(history.last().unwrap().unwrap().summary, "step 1", "the previous patch is next");
    let names: Vec<String> =
        std::fs::read_dir(history.dir()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    assert_eq!(names.len(), 1, "nothing but the points is left: {names:?}");
}

#[test]
fn a_damaged_point_is_named_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let point = apply_patch(&paths, &config(5), &the_patch(), &info("p")).unwrap();
    let history = UndoHistory::new(&paths, &config(5));
    std::fs::write(history.dir().join(&point.id).join("1.before"), "x").unwrap();
    let err = history.last().unwrap_err().to_string();
    assert!(err.contains(&point.id) && err.contains("1.before holds 1 bytes") && err.contains("delete it"), "{err}");
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo(root: &Path) {
    git(root, &["init", "--quiet"]);
    git(root, &["config", "user.name", "Test"]);
    git(root, &["config", "user.email", "test@example.com"]);
    git(root, &["config", "commit.gpgsign", "false"]);
}

#[test]
fn commit_takes_only_the_patch_files_and_leaves_the_users_changes_alone() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let root = &paths.root;
    std::fs::write(root.join("other.txt"), "one\n").unwrap();
    std::fs::write(root.join("staged.txt"), "one\n").unwrap();
    repo(root);
    git(root, &["add", "-A"]);
    git(root, &["commit", "--quiet", "-m", "base"]);
    // The user's own work: one change staged, one not.
    std::fs::write(root.join("staged.txt"), "two\n").unwrap();
    git(root, &["add", "staged.txt"]);
    std::fs::write(root.join("other.txt"), "two\n").unwrap();

    let point = apply_patch(&paths, &config(5), &the_patch(), &info("patched 3 files in 1 attempt(s)")).unwrap();
    let message = commit_message(&point.summary, point.task_id.as_deref(), 72);
    let made = commit(root, &point.paths(), &message).unwrap();
    assert_eq!(git(root, &["rev-parse", "HEAD"]).trim(), made.id);
    let shown = git(root, &["show", "--name-only", "--format=%s", "HEAD"]);
    let mut lines: Vec<&str> = shown.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.remove(0), "patched 3 files in 1 attempt(s)");
    lines.sort();
    assert_eq!(lines, ["bare.py", "pkg/crlf.py", "pkg/new/made.py"]);
    assert_eq!(
        git(root, &["diff", "--cached", "--name-only"]),
        "staged.txt\n",
        "the user's staged change stays staged"
    );
    assert_eq!(git(root, &["diff", "--name-only"]), "other.txt\n", "the unstaged change stays unstaged");
    assert_eq!(git(root, &["show", "HEAD:bare.py"]), BARE_AFTER);

    let again = commit(root, &point.paths(), &message).unwrap_err();
    assert!(matches!(again, GitError::NothingToCommit { .. }), "{again}");
}

#[test]
fn commit_outside_a_repository_says_so_and_leaves_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let out =
        Command::new("git").arg("-C").arg(&paths.root).args(["rev-parse", "--is-inside-work-tree"]).output().unwrap();
    assert!(!out.status.success(), "the temp folder is not in a repository");
    let point = apply_patch(&paths, &config(5), &the_patch(), &info("p")).unwrap();
    let err = commit(&paths.root, &point.paths(), "m").unwrap_err();
    assert!(matches!(err, GitError::NotARepository { .. }), "{err}");
    assert!(err.to_string().contains("git init"), "{err}");
    assert_eq!(bytes(&paths.root, "bare.py"), BARE_AFTER.as_bytes(), "the written files stay");
}

#[test]
fn the_commit_subject_is_the_summary_cut_to_the_setting() {
    assert_eq!(commit_message("fixed add\nmore", None, 72), "fixed add");
    assert_eq!(commit_message("abcdefghij", Some("t1"), 6), "abcde…\n\nMade by tinycoder, task t1.");
    assert_eq!(commit_message("  ", None, 72), "changes by tinycoder");
}

#[test]
fn a_path_outside_the_workspace_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let patch = Patch { changes: vec![change("bare.py", BARE_BEFORE, BARE_AFTER), change("../escape.txt", "", "x")] };
    let err = apply_patch(&paths, &config(5), &patch, &info("p")).unwrap_err();
    assert!(matches!(err, UndoError::OutsideWorkspace { ref path } if path == "../escape.txt"), "{err}");
    assert!(!dir.path().join("escape.txt").exists());
    assert_eq!(bytes(&paths.root, "bare.py"), BARE_BEFORE.as_bytes(), "nothing written");
}

#[test]
fn the_diff_against_head_holds_the_users_uncommitted_changes_and_new_files() {
    let dir = tempfile::tempdir().unwrap();
    // The workspace is a folder inside the repository, as a monorepo's package would be.
    let repo_root = dir.path();
    let root = repo_root.join("pkg");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("calc.py"), "a = 1\n").unwrap();
    repo(repo_root);
    assert_eq!(diff_against_head(&root, &Patch::default()), None, "no commit yet: nothing to compare with");
    git(repo_root, &["add", "-A"]);
    git(repo_root, &["commit", "--quiet", "-m", "base"]);
    // The user's own uncommitted line, then the patch on top of it, and a new file.
    let patch = Patch {
        changes: vec![
            FileChange {
                path: "calc.py".into(),
                before: "a = 1\nb = 2\n".into(),
                after: "a = 1\nb = 2\nc = 3\n".into(),
            },
            FileChange { path: "new.py".into(), before: String::new(), after: "d = 4\n".into() },
        ],
    };
    let head = diff_against_head(&root, &patch).expect("a diff against HEAD");
    expect_test::expect![[r#"
        --- a/calc.py
        +++ b/calc.py
        @@ -1 +1,3 @@
         a = 1
        +b = 2
        +c = 3
        --- a/new.py
        +++ b/new.py
        @@ -0,0 +1 @@
        +d = 4
    "#]]
    .assert_eq(&head);
    assert_ne!(head, patch.diff(), "the patch's own diff leaves out the user's line");
    // Outside any repository there is no HEAD.
    let outside = tempfile::tempdir().unwrap();
    assert_eq!(diff_against_head(outside.path(), &patch), None);
}

/// `dir/outside`, and a committed link `ws/link` to it.
fn link_out(dir: &Path, root: &Path) -> std::path::PathBuf {
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    outside
}

#[test]
fn a_patch_through_a_link_out_of_the_workspace_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let outside = link_out(dir.path(), &paths.root);
    let patch = Patch { changes: vec![change("bare.py", BARE_BEFORE, BARE_AFTER), change("link/x", "", "pwned\n")] };
    let err = apply_patch(&paths, &config(5), &patch, &info("p")).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, UndoError::ThroughLink(_)), "{msg}");
    assert!(msg.contains("`link/x`") && msg.contains("symbolic link `link`") && msg.contains("outside"), "{msg}");
    assert!(!outside.join("x").exists(), "nothing written outside");
    assert_eq!(bytes(&paths.root, "bare.py"), BARE_BEFORE.as_bytes(), "nothing of the patch written");
    assert!(UndoHistory::new(&paths, &config(5)).last().unwrap().is_none(), "no undo point");
    assert!(write_patch(&paths.root, &patch).is_err(), "the scratch write refuses it too");
    assert!(!outside.join("x").exists());
    // A link that stays inside the workspace is written through.
    std::os::unix::fs::symlink("./pkg", paths.root.join("lib")).unwrap();
    let inside = Patch { changes: vec![change("lib/y.py", "", "y = 1\n")] };
    apply_patch(&paths, &config(5), &inside, &info("q")).unwrap();
    assert_eq!(bytes(&paths.root, "pkg/y.py"), b"y = 1\n");
}

#[test]
fn an_undo_never_restores_through_a_link_out_of_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let paths = workspace(dir.path());
    let patch = Patch { changes: vec![change("bare.py", BARE_BEFORE, BARE_AFTER), change("sub/x.py", "", "made\n")] };
    let point = apply_patch(&paths, &config(5), &patch, &info("p")).unwrap();
    // After the patch, `sub` becomes a link to a folder outside holding the same bytes.
    std::fs::remove_dir_all(paths.root.join("sub")).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x.py"), "made\n").unwrap();
    std::os::unix::fs::symlink(&outside, paths.root.join("sub")).unwrap();
    let plan = plan_undo(&point, |p| read_current(&paths.root, p)).unwrap();
    let err = restore(&paths.root, &point, &plan).unwrap_err().to_string();
    assert!(err.contains("`sub/x.py`") && err.contains("symbolic link `sub`"), "{err}");
    assert!(outside.join("x.py").exists(), "nothing deleted outside");
    assert_eq!(bytes(&paths.root, "bare.py"), BARE_AFTER.as_bytes(), "nothing restored");
}
