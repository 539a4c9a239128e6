//! Long jobs under `window/workDoneProgress/create` + `$/progress`, cancellable
//! from the client (`window/workDoneProgress/cancel`) or by id (`tinycoder.cancel`).
//!
//! A [`ProgressHandle`] is used synchronously by the job: reports go over an
//! unbounded channel to one spawned task that first awaits the client's answer to
//! `create` (never awaited inside a handler), then sends begin / report / end in order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::ls_types::notification::Progress;
use tower_lsp_server::ls_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressEnd,
    WorkDoneProgressReport,
};
use tower_lsp_server::Client;

/// A running job as `tinycoder.cancel` and the client see it.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    pub id: String,
    pub title: String,
}

/// The running jobs, by id (= their progress token).
#[derive(Default, Clone)]
pub struct JobRegistry {
    jobs: Arc<Mutex<HashMap<String, (String, CancellationToken)>>>,
}

impl JobRegistry {
    /// Registers a job; the returned token is cancelled by [`JobRegistry::cancel`].
    pub fn register(&self, id: &str, title: &str) -> CancellationToken {
        let token = CancellationToken::new();
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.insert(id.to_string(), (title.to_string(), token.clone()));
        }
        token
    }

    /// Cancels the job `id`; `false` when no such job runs.
    pub fn cancel(&self, id: &str) -> bool {
        let Ok(jobs) = self.jobs.lock() else {
            return false;
        };
        match jobs.get(id) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Removes a finished job.
    pub fn finish(&self, id: &str) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.remove(id);
        }
    }

    /// The running jobs.
    pub fn list(&self) -> Vec<JobInfo> {
        let Ok(jobs) = self.jobs.lock() else {
            return Vec::new();
        };
        let mut out: Vec<JobInfo> =
            jobs.iter().map(|(id, (title, _))| JobInfo { id: id.clone(), title: title.clone() }).collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }
}

enum ProgressEvent {
    Report { message: String, percentage: Option<u32> },
}

/// A cloneable way to report on a job from another task (the progress ends once the handle and every sender are gone).
#[derive(Clone)]
pub struct ProgressSender {
    tx: Option<mpsc::UnboundedSender<ProgressEvent>>,
}

impl ProgressSender {
    /// Reports a step.
    pub fn report(&self, message: impl Into<String>, percentage: Option<u32>) {
        if let Some(tx) = &self.tx {
            let _ =
                tx.send(ProgressEvent::Report { message: message.into(), percentage: percentage.map(|p| p.min(100)) });
        }
    }
}

/// A job's handle: report progress (non-blocking), watch for cancellation; dropping it ends the progress.
pub struct ProgressHandle {
    id: String,
    cancel: CancellationToken,
    tx: Option<mpsc::UnboundedSender<ProgressEvent>>,
    registry: JobRegistry,
}

impl ProgressHandle {
    /// Starts a job titled `title`; shows progress in the client when it supports work-done progress.
    pub fn start(client: &Client, registry: &JobRegistry, title: &str, client_supports_progress: bool) -> Self {
        let id = format!("tinycoder-{}", uuid::Uuid::new_v4());
        let cancel = registry.register(&id, title);
        let (tx, rx) = mpsc::unbounded_channel();
        if client_supports_progress {
            tokio::spawn(forward_progress(client.clone(), id.clone(), title.to_string(), rx));
        }
        Self { id, cancel, tx: Some(tx), registry: registry.clone() }
    }

    /// The job id (also its progress token).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The job's cancellation token.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// A sender for reports from another task.
    pub fn sender(&self) -> ProgressSender {
        ProgressSender { tx: self.tx.clone() }
    }

    /// Reports a step, with a percentage (0–100) where known.
    pub fn report(&self, message: impl Into<String>, percentage: Option<u32>) {
        if let Some(tx) = &self.tx {
            let _ =
                tx.send(ProgressEvent::Report { message: message.into(), percentage: percentage.map(|p| p.min(100)) });
        }
    }
}

impl Drop for ProgressHandle {
    fn drop(&mut self) {
        // Closing the channel makes the forwarder send `end`.
        self.tx.take();
        self.registry.finish(&self.id);
    }
}

async fn forward_progress(client: Client, id: String, title: String, mut rx: mpsc::UnboundedReceiver<ProgressEvent>) {
    let token = NumberOrString::String(id.clone());
    if let Err(e) = client.create_work_done_progress(token.clone()).await {
        tracing::debug!(%id, "client refused work-done progress: {e}");
        return;
    }
    let send = |value: WorkDoneProgress| {
        let client = client.clone();
        let token = token.clone();
        async move {
            client
                .send_notification::<Progress>(ProgressParams { token, value: ProgressParamsValue::WorkDone(value) })
                .await
        }
    };
    send(WorkDoneProgress::Begin(WorkDoneProgressBegin {
        title,
        cancellable: Some(true),
        message: None,
        percentage: Some(0),
    }))
    .await;
    while let Some(ev) = rx.recv().await {
        let ProgressEvent::Report { message, percentage } = ev;
        send(WorkDoneProgress::Report(WorkDoneProgressReport {
            cancellable: Some(true),
            message: Some(message),
            percentage,
        }))
        .await;
    }
    send(WorkDoneProgress::End(WorkDoneProgressEnd { message: None })).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_by_id_reaches_the_job_token() {
        let reg = JobRegistry::default();
        let token = reg.register("j1", "indexing");
        assert_eq!(reg.list().len(), 1);
        assert!(!reg.cancel("nope"));
        assert!(reg.cancel("j1"));
        assert!(token.is_cancelled());
        reg.finish("j1");
        assert!(reg.list().is_empty());
    }
}
