//! Review before anything lands: a task's patch goes out as `workspace/applyEdit`
//! with versioned document changes and a change annotation that asks for
//! confirmation (its label: the test result and the critic's score). Clients
//! without annotation support get "Apply / Show diff / Discard" instead. A patch
//! made from text that has changed since (the user typed) is never applied: the
//! user is told, and may have it recomputed on the new text. After the user
//! applies a patch it becomes an undo point (`tinycoder.undo`), the tests run
//! again and the test diagnostics follow.

use super::agent_flow::{FlowHandles, Redo};
use super::patch_edit::{plain_workspace_edit, workspace_edit};
use crate::agent::{read_workspace_file, AgentEnv, CriticOutcome, ReportStatus, SourceView, TaskReport, TestSummary};
use crate::edits::Patch;
use crate::sandbox::BufferOverlay;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tower_lsp_server::ls_types::{ChangeAnnotation, MessageActionItem, MessageType, ShowDocumentParams, Uri};

const APPLY: &str = "Apply";
const SHOW_DIFF: &str = "Show diff";
const DISCARD: &str = "Discard";
const RECOMPUTE: &str = "Recompute";
const SHOW_BEST: &str = "Show best attempt";

/// Offers the patch of `report` (or says why there is none).
pub async fn deliver(
    h: &FlowHandles,
    env: &AgentEnv,
    snapshot: &super::agent_flow::BufferSnapshot,
    report: TaskReport,
    redo: Option<Redo>,
) {
    let client = &h.client;
    match report.status {
        ReportStatus::Patched | ReportStatus::BestAttempt => {}
        ReportStatus::NothingToFix => {
            return client.show_message(MessageType::INFO, format!("tinycoder: {}", report.summary)).await
        }
        ReportStatus::Cancelled => return,
        ReportStatus::Failed => {
            // Attempts that only repeat the reason (a model server that went away) add nothing.
            let log: Vec<&str> = report
                .attempt_log
                .iter()
                .map(String::as_str)
                .filter(|a| report.summary.is_empty() || !a.contains(report.summary.as_str()))
                .collect();
            let tried = if log.is_empty() { String::new() } else { format!(" ({})", log.join("; ")) };
            let message = format!("tinycoder could not do it: {}{tried}", report.summary);
            if report.diff.is_empty() {
                return client.show_message(MessageType::WARNING, message).await;
            }
            // Stopped by the user: the best attempt can be looked at, never applied.
            if ask(h, MessageType::WARNING, message, &[SHOW_BEST]).await.as_deref() == Some(SHOW_BEST) {
                show_diff(h, env, &report.task_id, &report.diff).await;
            }
            return;
        }
    }
    let Some(patch) = report.patch.clone() else { return };
    // A file through a symbolic link out of the workspace: the patch is not offered at all.
    if let Err(e) = crate::paths::resolve_all_inside(&env.paths.root, patch.changes.iter().map(|c| c.path.as_str())) {
        tracing::warn!("patch not offered: {e}");
        return client.show_message(MessageType::ERROR, format!("tinycoder: the patch was not offered: {e}")).await;
    }
    let versions = match current_versions(h, &env.paths.root, &patch) {
        Ok(v) => v,
        Err(stale) => return refuse_stale(h, &stale, redo).await,
    };
    let label = patch_label(&report);
    let applied = if h.edits.document_changes && h.edits.change_annotations {
        let annotation = ChangeAnnotation {
            label: label.clone(),
            needs_confirmation: Some(true),
            description: Some(report.summary.clone()),
        };
        apply(h, env, &patch, &versions, Some(annotation), &report).await
    } else {
        ask_then_apply(h, env, &patch, &report, &label, redo).await
    };
    if applied && env.config.runtime.rerun_tests_after_apply {
        rerun_tests(h, env, snapshot, &patch).await;
    }
}

/// For each changed file, the version of its open buffer now (files not open have
/// none); `Err` with the files whose text is no longer what the patch was made from.
pub fn current_versions(
    h: &FlowHandles,
    root: &Path,
    patch: &Patch,
) -> std::result::Result<HashMap<String, i32>, Vec<String>> {
    let mut versions = HashMap::new();
    let mut stale = Vec::new();
    let docs = h.docs.lock().ok();
    for c in &patch.changes {
        let open = Uri::from_file_path(root.join(&c.path))
            .and_then(|uri| docs.as_ref().and_then(|d| d.get(uri.as_str()).map(|o| (o.doc.text(), o.doc.version()))));
        match open {
            Some((text, version)) if text == c.before => {
                versions.insert(c.path.clone(), version);
            }
            Some(_) => stale.push(c.path.clone()),
            None if read_workspace_file(root, &c.path).unwrap_or_default() == c.before => {}
            None => stale.push(c.path.clone()),
        }
    }
    if stale.is_empty() {
        Ok(versions)
    } else {
        Err(stale)
    }
}

/// The buffers changed while the patch was made: say so, and recompute it when the user asks.
async fn refuse_stale(h: &FlowHandles, stale: &[String], redo: Option<Redo>) {
    let msg = format!(
        "tinycoder: {} changed while the patch was made, so it was not applied (it would undo your typing).",
        stale.join(", ")
    );
    tracing::info!("{msg}");
    let Some(redo) = redo else {
        return h.client.show_message(MessageType::WARNING, format!("{msg} Run the command again.")).await;
    };
    let choice =
        ask(h, MessageType::WARNING, format!("{msg} Recompute it on the new text?"), &[RECOMPUTE, DISCARD]).await;
    if choice.as_deref() == Some(RECOMPUTE) {
        if let Err(e) = redo.launcher.start(redo.request, &redo.title) {
            h.client.show_message(MessageType::ERROR, format!("tinycoder: {}", e.message)).await;
        }
    }
}

/// `window/showMessageRequest` with `titles`; the chosen title (`None`: dismissed or failed).
pub async fn ask(h: &FlowHandles, kind: MessageType, message: String, titles: &[&str]) -> Option<String> {
    let actions: Vec<MessageActionItem> =
        titles.iter().map(|t| MessageActionItem { title: t.to_string(), properties: Default::default() }).collect();
    h.client.show_message_request(kind, message, Some(actions)).await.ok().flatten().map(|a| a.title)
}

/// The annotation label: what the patch is and what checked it.
fn patch_label(report: &TaskReport) -> String {
    let best = report.status == ReportStatus::BestAttempt;
    let mut label = label_of(best, report.tests_after.as_ref(), report.critic.as_ref());
    if let Some(check) = &report.diagnostic_check {
        label = format!("{label}; {check}");
    }
    // The reviewer sees what the tests could not vouch for before agreeing.
    for q in &report.questions {
        label = format!("{label}; question: {q}");
    }
    label
}

/// "tinycoder: tests pass (`pytest`, 1.2 s); critic 0.90": the tests after the patch, and the
/// critic's correctness score when it gave one.
fn label_of(best_attempt: bool, tests: Option<&TestSummary>, critic: Option<&CriticOutcome>) -> String {
    let tests = tests.map(|t| t.headline()).unwrap_or_else(|| "not tested".into());
    let critic = match critic.and_then(|c| c.score()) {
        Some(s) => format!("; critic {:.2}", s.correctness),
        None => String::new(),
    };
    let best = if best_attempt { " (best attempt, checks fail)" } else { "" };
    format!("tinycoder{best}: {tests}{critic}")
}

async fn apply(
    h: &FlowHandles,
    env: &AgentEnv,
    patch: &Patch,
    versions: &HashMap<String, i32>,
    annotation: Option<ChangeAnnotation>,
    report: &TaskReport,
) -> bool {
    let edit = if h.edits.document_changes {
        workspace_edit(&env.paths.root, patch, versions, h.encoding, annotation)
    } else {
        plain_workspace_edit(&env.paths.root, patch, h.encoding)
    };
    let edit = match edit {
        Ok(edit) => edit,
        Err(e) => {
            tracing::warn!("patch not offered: {e}");
            h.client.show_message(MessageType::ERROR, format!("tinycoder: the patch was not offered: {e}")).await;
            return false;
        }
    };
    match h.client.apply_edit(edit).await {
        Ok(r) if r.applied => {
            super::undo_flow::record_applied(h, env, patch, &report.summary, &report.task_id).await;
            true
        }
        Ok(r) => {
            let why = r.failure_reason.unwrap_or_else(|| "declined".into());
            tracing::info!("patch not applied: {why}");
            false
        }
        Err(e) => {
            h.client
                .show_message(MessageType::ERROR, format!("tinycoder: the editor did not apply the patch: {e}"))
                .await;
            false
        }
    }
}

/// For clients without change annotations: "Apply / Show diff / Discard"; Show diff opens the diff and asks again.
async fn ask_then_apply(
    h: &FlowHandles,
    env: &AgentEnv,
    patch: &Patch,
    report: &TaskReport,
    label: &str,
    redo: Option<Redo>,
) -> bool {
    loop {
        let msg = format!("{label}. {} — apply it?", report.summary);
        match ask(h, MessageType::INFO, msg, &[APPLY, SHOW_DIFF, DISCARD]).await.as_deref() {
            Some(APPLY) => {
                // The user may have typed while the question was open.
                return match current_versions(h, &env.paths.root, patch) {
                    Ok(versions) => apply(h, env, patch, &versions, None, report).await,
                    Err(stale) => {
                        refuse_stale(h, &stale, redo).await;
                        false
                    }
                };
            }
            Some(SHOW_DIFF) => show_diff(h, env, &report.task_id, &report.diff).await,
            _ => return false,
        }
    }
}

/// Opens `diff` as a document (`window/showDocument`), or shows it in a message when the client cannot.
async fn show_diff(h: &FlowHandles, env: &AgentEnv, task_id: &str, diff: &str) {
    let dir = env.paths.cache_dir.join("diffs");
    let file = dir.join(format!("{task_id}.diff"));
    let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, diff));
    match (written, Uri::from_file_path(&file)) {
        (Ok(()), Some(uri)) if h.edits.show_document => {
            let params = ShowDocumentParams { uri, external: Some(false), take_focus: Some(true), selection: None };
            if let Err(e) = h.client.show_document(params).await {
                tracing::debug!("showDocument failed: {e}");
            }
        }
        _ => h.client.show_message(MessageType::INFO, format!("tinycoder: the diff:\n{diff}")).await,
    }
}

/// After a patch is applied: the tests again (on the buffers with the patch), and their diagnostics.
async fn rerun_tests(h: &FlowHandles, env: &AgentEnv, snapshot: &super::agent_flow::BufferSnapshot, patch: &Patch) {
    let mut overlays = snapshot.overlays();
    for c in &patch.changes {
        overlays.retain(|o| o.rel_path != Path::new(&c.path));
        overlays.push(BufferOverlay { rel_path: PathBuf::from(&c.path), text: c.after.clone() });
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    let client = &h.client;
    match crate::sandbox::run_project_tests(&env.config, &env.paths, &overlays, &cancel).await {
        Ok(tests) => {
            super::flows::publish_test_report(h, &env.paths.root, &tests).await;
            let verdict = if tests.passed {
                "tests pass".to_string()
            } else {
                format!("{} test failure(s) remain", tests.failures.len().max(1))
            };
            let msg = format!("tinycoder: applied {}; {verdict}", patch.files().join(", "));
            client.show_message(MessageType::INFO, msg).await;
        }
        Err(e) => {
            let msg = format!("tinycoder: applied, but the tests could not run again: {e}");
            client.show_message(MessageType::WARNING, msg).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::CriticScore;

    #[test]
    fn the_label_carries_the_test_summary_and_the_critics_score() {
        let green = TestSummary {
            available: true,
            command: "python3 -m pytest".into(),
            passed: true,
            duration_ms: 1200,
            ..Default::default()
        };
        let score = CriticScore {
            correctness: 0.9,
            usefulness: 0.8,
            safety: 1.0,
            memory_store: true,
            weight: 0.7,
            explanation: "fixes the off-by-one".into(),
        };
        let scored = CriticOutcome::Scored { score };
        assert_eq!(
            label_of(false, Some(&green), Some(&scored)),
            "tinycoder: tests pass (`python3 -m pytest`, 1.2 s); critic 0.90"
        );
        let down = CriticOutcome::Unavailable { error: "timed out".into(), fallback: "skip".into() };
        assert_eq!(label_of(false, Some(&green), Some(&down)), "tinycoder: tests pass (`python3 -m pytest`, 1.2 s)");
        let red = TestSummary { passed: false, failing: vec!["test_a".into(), "test_b".into()], ..green };
        assert_eq!(
            label_of(true, Some(&red), Some(&CriticOutcome::Skipped)),
            "tinycoder (best attempt, checks fail): 2 failing (`python3 -m pytest`)"
        );
        assert_eq!(label_of(false, None, None), "tinycoder: not tested");
    }
}
