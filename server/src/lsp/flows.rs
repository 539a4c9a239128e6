//! Commands that run a core flow: `tinycoder.runTests` (sandbox → diagnostics),
//! `tinycoder.tasks`, `tinycoder.memory.search` / `.delete`. Each converts LSP
//! arguments to core calls and core results back; the work lives in the core.

use super::commands::{request_failed, string_arg};
use super::progress::ProgressHandle;
use super::server::Backend;
use crate::memory::{MemoryFilter, MemoryRetriever, MemoryStore};
use crate::sandbox::{run_project_tests, BufferOverlay, TestFailure};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range, Uri};

/// The `source` of diagnostics tinycoder publishes.
pub const DIAGNOSTIC_SOURCE: &str = "tinycoder";

/// `tinycoder.runTests [{uri?}]`: runs the tests of the folder holding `uri` (else of the
/// first folder) in a shadow workspace (with the unsaved buffers) under progress, publishes
/// failures as diagnostics at their lines, and clears the ones of that folder's files that no longer fail.
pub async fn run_tests(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let folder = backend.root_for_args(args)?;
    let (config, paths) = backend.config_and_paths_in(&folder)?;
    let overlays: Vec<BufferOverlay> = backend
        .open_buffers()
        .into_iter()
        .filter_map(|(path, text)| {
            let rel = path.strip_prefix(&paths.root).ok()?.to_path_buf();
            Some(BufferOverlay { rel_path: rel, text })
        })
        .collect();
    let progress = ProgressHandle::start(
        backend.client(),
        backend.jobs(),
        "tinycoder: running tests",
        backend.progress_supported(),
    );
    progress.report("running the tests in a sandboxed copy of the workspace", None);
    let cancel = progress.cancel_token();
    let report = run_project_tests(&config, &paths, &overlays, &cancel)
        .await
        .map_err(|e| request_failed(format!("the tests could not run: {e}")))?;
    if cancel.is_cancelled() {
        return Err(Error::request_cancelled());
    }
    tracing::info!(command = %report.command, why = %report.why, passed = report.passed, "test run");

    publish_test_report(&backend.flow_handles(), &paths.root, &report).await;
    let summary = if report.passed {
        format!("tests passed: `{}` in {:.1} s", report.command, report.duration.as_secs_f64())
    } else {
        format!("{} test failure(s) from `{}`", report.failures.len().max(1), report.command)
    };
    progress.report(summary.clone(), Some(100));
    Ok(Some(json!({
        "passed": report.passed,
        "command": report.command,
        "summary": summary,
        "durationMs": report.duration.as_millis() as u64,
        "failures": report.failures.iter().map(|f| json!({
            "file": f.file, "line": f.line, "test": f.test, "message": f.message,
        })).collect::<Vec<_>>(),
        "outputTail": report.output_tail,
    })))
}

/// Publishes a test run's failures as diagnostics at their lines and clears
/// those of files that no longer fail.
pub async fn publish_test_report(h: &super::agent_flow::FlowHandles, root: &Path, report: &crate::sandbox::TestReport) {
    let by_file = diagnostics_by_file(root, &report.failures);
    let published: HashSet<String> = by_file.keys().map(|u| u.as_str().to_string()).collect();
    // Only this folder's diagnostics are replaced: another folder's tests did not run.
    let in_root = |uri: &String| {
        uri.parse::<Uri>().ok().and_then(|u| u.to_file_path().map(|p| p.starts_with(root))).unwrap_or(false)
    };
    let stale: Vec<String> = match h.test_diagnostics.lock() {
        Ok(mut current) => {
            let stale: Vec<String> =
                current.iter().filter(|u| in_root(u) && !published.contains(*u)).cloned().collect();
            current.retain(|u| !in_root(u));
            current.extend(published);
            stale
        }
        Err(_) => Vec::new(),
    };
    for uri in stale.iter().filter_map(|s| s.parse::<Uri>().ok()) {
        h.client.publish_diagnostics(uri, Vec::new(), None).await;
    }
    for (uri, diags) in by_file {
        h.client.publish_diagnostics(uri, diags, None).await;
    }
}

/// Failures grouped into diagnostics per file; failures without a file or line are
/// left to the command's result (there is no place to show them).
fn diagnostics_by_file(root: &Path, failures: &[TestFailure]) -> BTreeMap<Uri, Vec<Diagnostic>> {
    let mut out: BTreeMap<Uri, Vec<Diagnostic>> = BTreeMap::new();
    for f in failures.iter().filter(|f| !f.file.is_empty() && f.line > 0) {
        let Some(uri) = Uri::from_file_path(root.join(&f.file)) else { continue };
        let line = f.line - 1;
        // The whole line: from its start to the start of the next one.
        let range = Range { start: Position { line, character: 0 }, end: Position { line: line + 1, character: 0 } };
        out.entry(uri).or_default().push(Diagnostic {
            range,
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String(f.test.clone())),
            source: Some(DIAGNOSTIC_SOURCE.to_string()),
            message: format!("{}: {}", f.test, f.message),
            ..Default::default()
        });
    }
    out
}

/// `tinycoder.index [{uri?}]`: brings the index of the folder holding `uri` (else of every
/// folder, one after the other) up to date under cancellable progress. The answer is the first
/// folder's summary, with every folder's under `folders`.
pub async fn index(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let mut summaries = Vec::new();
    for folder in backend.roots_for_args(args)? {
        let (config, paths) = backend.config_and_paths_in(&folder)?;
        let title = format!("tinycoder: indexing {}", super::indexing::folder_name(&paths.root));
        let progress = ProgressHandle::start(backend.client(), backend.jobs(), &title, backend.progress_supported());
        let (_, summary) = tokio::task::spawn_blocking(folder.index.job(paths.root.clone(), config, progress))
            .await
            .map_err(|e| request_failed(format!("indexing stopped: {e}")))?
            .map_err(|e| request_failed(format!("indexing {} failed: {e}", paths.root.display())))?;
        let mut value = serde_json::to_value(summary).map_err(|e| request_failed(e.to_string()))?;
        value["root"] = json!(paths.root.display().to_string());
        summaries.push(value);
    }
    let mut answer = summaries.first().cloned().unwrap_or_else(|| json!({}));
    answer["folders"] = Value::Array(summaries);
    Ok(Some(answer))
}

/// `tinycoder.tasks [{"unfinishedOnly": bool, "limit": n}]`: recent tasks, newest first.
pub async fn tasks(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let opts = args.first();
    let unfinished = opts.and_then(|o| o.get("unfinishedOnly")).and_then(Value::as_bool).unwrap_or(false);
    let limit = opts.and_then(|o| o.get("limit")).and_then(Value::as_u64).unwrap_or(50) as usize;
    let bus = crate::store::EventBus::new(backend.store_for_args(args)?);
    let tasks = bus.tasks(unfinished, limit).await.map_err(|e| request_failed(e.to_string()))?;
    Ok(Some(serde_json::to_value(tasks).map_err(|e| request_failed(e.to_string()))?))
}

/// `tinycoder.memory.search ["query"]` or `[{"query": .., "limit": n}]`.
pub async fn memory_search(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let first = args.first();
    let query = string_arg(args, "query").ok_or_else(|| {
        Error::invalid_params("tinycoder.memory.search needs a query: [\"text\"] or [{\"query\": \"text\"}]")
    })?;
    let limit = first.and_then(|a| a.get("limit")).and_then(Value::as_u64).unwrap_or(10) as usize;
    let folder = backend.root_for_args(args)?;
    let (config, _) = backend.config_and_paths_in(&folder)?;
    // Text search only: an embedding model would make listing depend on the model server.
    let retriever = MemoryRetriever::new(MemoryStore::new(backend.store_in(&folder)?), config.memory.clone(), None);
    let found = retriever
        .search(&query, MemoryFilter::default(), limit)
        .await
        .map_err(|e| request_failed(format!("memory search failed: {e}")))?;
    Ok(Some(serde_json::to_value(found).map_err(|e| request_failed(e.to_string()))?))
}

/// `tinycoder.memory.delete ["id"]` or `[{"id": ..}]`.
pub async fn memory_delete(backend: &Backend, args: &[Value]) -> Result<Option<Value>> {
    let id = string_arg(args, "id").ok_or_else(|| {
        Error::invalid_params("tinycoder.memory.delete needs an id: [\"<id>\"] or [{\"id\": \"<id>\"}]")
    })?;
    let store = backend.store_for_args(args)?;
    let deleted = MemoryStore::new(store).delete(&id).await.map_err(|e| request_failed(e.to_string()))?;
    Ok(Some(json!({ "id": id, "deleted": deleted })))
}
