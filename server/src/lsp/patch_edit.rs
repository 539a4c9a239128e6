//! A patch as an LSP `WorkspaceEdit`: versioned `documentChanges` with one
//! small text edit per changed hunk (so the client's diff preview shows just the
//! change) and a change annotation that asks for confirmation.

use super::convert::to_lsp_position;
use crate::edits::Patch;
use crate::text::{Document, PositionEncoding};
use std::collections::HashMap;
use std::path::Path;
use tower_lsp_server::ls_types::{
    AnnotatedTextEdit, ChangeAnnotation, CreateFile, CreateFileOptions, DeleteFile, DeleteFileOptions,
    DocumentChangeOperation, DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, Range, ResourceOp,
    TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};

/// Why a patch or an undo cannot become a workspace edit.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// A file would be written outside the workspace (through a symbolic link out of it):
    /// the edit is not offered at all.
    #[error(transparent)]
    Outside(#[from] crate::paths::OutsideWorkspace),
    /// A path that makes no `file:` URI.
    #[error("`{0}` is not a path that makes a file URI")]
    NotUri(String),
}

/// The URI of workspace-relative `rel`, checked to stay inside `root` (no link out of it).
fn file_uri(root: &Path, rel: &str) -> Result<Uri, EditError> {
    let path = crate::paths::resolve_inside(root, rel)?;
    Uri::from_file_path(&path).ok_or_else(|| EditError::NotUri(rel.to_string()))
}

/// Every path of an edit checked before any part of it is built: one refusal refuses all.
fn check_all<'a>(root: &Path, rels: impl IntoIterator<Item = &'a str>) -> Result<(), EditError> {
    crate::paths::resolve_all_inside(root, rels)?;
    Ok(())
}

/// The change annotation's id.
pub const ANNOTATION_ID: &str = "tinycoder.patch";

/// Text edits turning `before` into `after`, one per changed run of lines, in `enc` units.
pub fn hunk_edits(before: &str, after: &str, enc: PositionEncoding) -> Vec<TextEdit> {
    let doc = Document::new(before, 0, "");
    let old_lines: Vec<&str> = before.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = after.split_inclusive('\n').collect();
    let offsets: Vec<usize> = std::iter::once(0)
        .chain(old_lines.iter().scan(0usize, |acc, l| {
            *acc += l.len();
            Some(*acc)
        }))
        .collect();
    let diff =
        similar::TextDiff::configure().algorithm(similar::Algorithm::Patience).diff_slices(&old_lines, &new_lines);
    let mut out = Vec::new();
    for op in diff.ops() {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            continue;
        }
        let start = doc.byte_to_position(offsets[old.start], enc);
        let end = doc.byte_to_position(offsets[old.end], enc);
        out.push(TextEdit {
            range: Range { start: to_lsp_position(start), end: to_lsp_position(end) },
            new_text: new_lines[new.clone()].concat(),
        });
    }
    out
}

/// The workspace edit of `patch` under `root`; `versions` holds the version each
/// open document had when the task read it (files not open get no version).
pub fn workspace_edit(
    root: &Path,
    patch: &Patch,
    versions: &HashMap<String, i32>,
    enc: PositionEncoding,
    annotation: Option<ChangeAnnotation>,
) -> Result<WorkspaceEdit, EditError> {
    check_all(root, patch.changes.iter().map(|c| c.path.as_str()))?;
    let mut edits = Vec::new();
    // A file the patch creates needs a create operation before its text edit.
    let mut creates = Vec::new();
    for c in &patch.changes {
        let uri = file_uri(root, &c.path)?;
        if c.before.is_empty() && !root.join(&c.path).exists() {
            creates.push((edits.len(), uri.clone()));
        }
        let hunks = hunk_edits(&c.before, &c.after, enc);
        let edits_of: Vec<OneOf<TextEdit, AnnotatedTextEdit>> = hunks
            .into_iter()
            .map(|text_edit| match &annotation {
                Some(_) => OneOf::Right(AnnotatedTextEdit { text_edit, annotation_id: ANNOTATION_ID.to_string() }),
                None => OneOf::Left(text_edit),
            })
            .collect();
        edits.push(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier { uri, version: versions.get(&c.path).copied() },
            edits: edits_of,
        });
    }
    let document_changes = if creates.is_empty() {
        DocumentChanges::Edits(edits)
    } else {
        let mut ops = Vec::new();
        for (i, edit) in edits.into_iter().enumerate() {
            if let Some((_, uri)) = creates.iter().find(|(at, _)| *at == i) {
                ops.push(DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                    uri: uri.clone(),
                    options: Some(CreateFileOptions { overwrite: Some(false), ignore_if_exists: Some(true) }),
                    annotation_id: annotation.as_ref().map(|_| ANNOTATION_ID.to_string()),
                })));
            }
            ops.push(DocumentChangeOperation::Edit(edit));
        }
        DocumentChanges::Operations(ops)
    };
    let change_annotations = annotation.map(|a| HashMap::from([(ANNOTATION_ID.to_string(), a)]));
    Ok(WorkspaceEdit { changes: None, document_changes: Some(document_changes), change_annotations })
}

/// The workspace edit of `patch` as plain `changes` (for clients without document changes).
pub fn plain_workspace_edit(root: &Path, patch: &Patch, enc: PositionEncoding) -> Result<WorkspaceEdit, EditError> {
    check_all(root, patch.changes.iter().map(|c| c.path.as_str()))?;
    let mut changes = HashMap::new();
    for c in &patch.changes {
        changes.insert(file_uri(root, &c.path)?, hunk_edits(&c.before, &c.after, enc));
    }
    Ok(WorkspaceEdit { changes: Some(changes), document_changes: None, change_annotations: None })
}

/// One file of an undo as the editor is to change it.
pub enum UndoFileEdit<'a> {
    /// Turn `current` back into `before`; `version` is the open buffer's (none when not open).
    Restore { path: &'a str, current: &'a str, before: &'a str, version: Option<i32> },
    /// Delete the file (the patch created it).
    Delete { path: &'a str },
}

/// The workspace edit of an undo under `root`: hunks back to the old text, and
/// delete operations (which need `documentChanges` and the client's `delete`
/// resource operation; the caller checks). Without `document_changes`, plain `changes`.
pub fn undo_workspace_edit(
    root: &Path,
    files: &[UndoFileEdit],
    enc: PositionEncoding,
    document_changes: bool,
) -> Result<WorkspaceEdit, EditError> {
    check_all(
        root,
        files.iter().map(|f| match f {
            UndoFileEdit::Restore { path, .. } | UndoFileEdit::Delete { path } => *path,
        }),
    )?;
    if !document_changes {
        let mut changes = HashMap::new();
        for f in files {
            if let UndoFileEdit::Restore { path, current, before, .. } = f {
                changes.insert(file_uri(root, path)?, hunk_edits(current, before, enc));
            }
        }
        return Ok(WorkspaceEdit { changes: Some(changes), document_changes: None, change_annotations: None });
    }
    let mut ops = Vec::new();
    for f in files {
        ops.push(match f {
            UndoFileEdit::Restore { path, current, before, version } => {
                DocumentChangeOperation::Edit(TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri: file_uri(root, path)?,
                        version: *version,
                    },
                    edits: hunk_edits(current, before, enc).into_iter().map(OneOf::Left).collect(),
                })
            }
            UndoFileEdit::Delete { path } => DocumentChangeOperation::Op(ResourceOp::Delete(DeleteFile {
                uri: file_uri(root, path)?,
                options: Some(DeleteFileOptions { recursive: Some(false), ignore_if_not_exists: Some(true) }),
                annotation_id: None,
            })),
        });
    }
    Ok(WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Operations(ops)),
        change_annotations: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, edits: &[TextEdit]) -> String {
        // Apply from the end, with UTF-16 positions, as a client would.
        let mut doc = Document::new(text, 0, "");
        let mut sorted = edits.to_vec();
        sorted.sort_by_key(|e| std::cmp::Reverse((e.range.start.line, e.range.start.character)));
        for e in sorted {
            let change = crate::text::TextChange {
                range: Some(super::super::convert::to_text_range(e.range)),
                text: e.new_text.clone(),
            };
            doc.apply_change(&change, PositionEncoding::Utf16);
        }
        doc.text()
    }

    #[test]
    fn hunks_apply_back_to_the_new_text() {
        let cases = [
            ("def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n"),
            ("a\nb\nc\nd\ne\n", "a\nB\nc\nd\nE\nf\n"),
            ("x = 'é🙂'\ny = 1", "x = 'é🙂'\ny = 2"),
            ("one\n", "zero\none\n"),
            ("keep\ndrop\n", "keep\n"),
        ];
        for (before, after) in cases {
            let edits = hunk_edits(before, after, PositionEncoding::Utf16);
            assert_eq!(apply(before, &edits), after, "{before:?} -> {after:?}: {edits:?}");
        }
        assert_eq!(hunk_edits("a\nb\n", "a\nc\n", PositionEncoding::Utf16).len(), 1);
    }

    #[test]
    fn a_new_file_is_created_before_its_text_is_inserted() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("old.py"), "a = 1\n").expect("write");
        let patch = Patch {
            changes: vec![
                crate::edits::FileChange { path: "old.py".into(), before: "a = 1\n".into(), after: "a = 2\n".into() },
                crate::edits::FileChange { path: "pkg/new.py".into(), before: String::new(), after: "b = 1\n".into() },
            ],
        };
        let edit = workspace_edit(dir.path(), &patch, &HashMap::new(), PositionEncoding::Utf16, None).expect("edit");
        let Some(DocumentChanges::Operations(ops)) = edit.document_changes else { panic!("operations expected") };
        assert_eq!(ops.len(), 3, "edit, create, edit: {ops:?}");
        assert!(
            matches!(&ops[0], DocumentChangeOperation::Edit(e) if e.text_document.uri.as_str().ends_with("old.py"))
        );
        assert!(
            matches!(&ops[1], DocumentChangeOperation::Op(ResourceOp::Create(c)) if c.uri.as_str().ends_with("pkg/new.py"))
        );
        assert!(matches!(&ops[2], DocumentChangeOperation::Edit(e) if e.edits.len() == 1));
        // Without new files the edit stays a plain list of document edits.
        let only_old = Patch { changes: patch.changes[..1].to_vec() };
        let edit = workspace_edit(dir.path(), &only_old, &HashMap::new(), PositionEncoding::Utf16, None).expect("edit");
        assert!(matches!(edit.document_changes, Some(DocumentChanges::Edits(_))));
    }

    #[test]
    fn no_edit_is_offered_through_a_link_out_of_the_workspace() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (ws, outside) = (dir.path().join("ws"), dir.path().join("outside"));
        std::fs::create_dir_all(&ws).expect("ws");
        std::fs::create_dir_all(&outside).expect("outside");
        std::fs::write(ws.join("old.py"), "a = 1\n").expect("write");
        std::fs::write(outside.join("x.py"), "a = 1\n").expect("write");
        std::os::unix::fs::symlink(&outside, ws.join("link")).expect("link");
        let change = |path: &str, before: &str| crate::edits::FileChange {
            path: path.into(),
            before: before.into(),
            after: "a = 2\n".into(),
        };
        let enc = PositionEncoding::Utf16;
        for patch in [
            Patch { changes: vec![change("old.py", "a = 1\n"), change("link/new.py", "")] },
            Patch { changes: vec![change("old.py", "a = 1\n"), change("link/x.py", "a = 1\n")] },
        ] {
            let err = workspace_edit(&ws, &patch, &HashMap::new(), enc, None).expect_err("refused");
            let msg = err.to_string();
            assert!(msg.contains("symbolic link `link`") && msg.contains("outside"), "{msg}");
            assert!(plain_workspace_edit(&ws, &patch, enc).is_err(), "the plain edit is refused too");
        }
        let undo = [
            UndoFileEdit::Restore { path: "old.py", current: "a = 2\n", before: "a = 1\n", version: None },
            UndoFileEdit::Delete { path: "link/x.py" },
        ];
        assert!(undo_workspace_edit(&ws, &undo, enc, true).is_err(), "an undo through the link is refused");
        assert!(undo_workspace_edit(&ws, &undo, enc, false).is_err());
        // A link that stays inside the workspace is offered.
        std::os::unix::fs::symlink(".", ws.join("here")).expect("link");
        let inside = Patch { changes: vec![change("here/new.py", "")] };
        assert!(workspace_edit(&ws, &inside, &HashMap::new(), enc, None).is_ok());
    }
}
