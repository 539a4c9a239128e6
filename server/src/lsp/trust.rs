//! Workspace trust in the editor: security keys that the workspace's own
//! settings (its `.tinycoder.toml`, or the editor's settings) loosen are
//! ignored, logged by key, and put to the user once with
//! `window/showMessageRequest`. The question is spawned, never awaited inside a
//! handler; the answer is recorded in the user's trust records and, when the
//! user trusts the workspace, the configuration is loaded again. Each workspace
//! folder is asked about its own settings.

use super::folders::load_folder_config;
use super::roots::WorkspaceRoot;
use super::server::{build_settings, Backend};
use crate::config::trust::{TrustDecision, WorkspaceTrust};
use crate::config::TrustReport;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};

/// The action that trusts the workspace's settings.
pub const TRUST: &str = "Trust this workspace";
/// The action that keeps ignoring them (and does not ask again for this content).
pub const KEEP_IGNORED: &str = "Keep ignored";

/// One key of `tinycoder/configuration`.
#[derive(Debug, Serialize)]
pub struct ConfigurationEntry {
    pub key: String,
    pub value: String,
    pub origin: String,
}

/// A security key loosening in `tinycoder/configuration`.
#[derive(Debug, Serialize)]
pub struct LooseningEntry {
    pub key: String,
    pub requested: String,
    pub kept: String,
    pub origin: String,
}

/// The result of `tinycoder/configuration`: the effective configuration and the trust report.
#[derive(Debug, Serialize)]
pub struct ConfigurationResult {
    pub entries: Vec<ConfigurationEntry>,
    /// Loosenings ignored because the workspace is not trusted.
    pub ignored: Vec<LooseningEntry>,
    /// Loosenings applied because the user trusted the workspace.
    pub applied: Vec<LooseningEntry>,
}

fn entries(list: &[crate::config::Loosening]) -> Vec<LooseningEntry> {
    list.iter()
        .map(|l| LooseningEntry {
            key: l.key.clone(),
            requested: l.requested.clone(),
            kept: l.kept.clone(),
            origin: l.origin.to_string(),
        })
        .collect()
}

impl Backend {
    /// `tinycoder/configuration`: every key with its value and origin, and what workspace trust did.
    pub async fn configuration(&self, _params: Value) -> Result<ConfigurationResult> {
        let settings =
            self.settings().ok_or_else(|| super::commands::request_failed("tinycoder is not initialized yet"))?;
        let loaded = &settings.loaded;
        Ok(ConfigurationResult {
            entries: loaded
                .describe()
                .into_iter()
                .map(|(key, value, origin)| ConfigurationEntry { key, value, origin: origin.to_string() })
                .collect(),
            ignored: entries(&loaded.trust.ignored),
            applied: entries(&loaded.trust.applied),
        })
    }

    /// Logs every ignored loosening (stderr and `window/logMessage`).
    pub(super) fn report_trust(&self, report: &TrustReport) {
        if report.ignored.is_empty() {
            return;
        }
        let mut lines = Vec::new();
        for l in &report.ignored {
            tracing::warn!(key = %l.key, origin = %l.origin, "workspace setting ignored: {l}");
            lines.push(format!("tinycoder: ignored {l}"));
        }
        lines.push("tinycoder: trust the workspace (asked once, or `tinycoder trust` in a terminal) to apply these, or move them into your own config file".into());
        let client = self.client.clone();
        tokio::spawn(async move {
            for line in lines {
                client.log_message(MessageType::WARNING, line).await;
            }
        });
    }

    /// Puts the first folder's untrusted loosenings to the user once per content, off the
    /// handler; once trusted, the server's settings are built again.
    pub(super) fn ask_about_trust(&self) {
        let Some(settings) = self.settings() else { return };
        let settings_slot = self.settings.clone();
        let init_options = self.init_options.clone();
        let factory = self.options.model_factory.clone();
        let root = self.roots.read().ok().and_then(|r| r.primary()).map(|r| r.root.clone());
        self.put_trust_question(&settings.loaded.trust, move |client| async move {
            let options = init_options.lock().ok().and_then(|o| o.clone());
            let rebuilt = tokio::task::spawn_blocking(move || build_settings(root, options, &factory)).await;
            match rebuilt {
                Ok(Ok(settings)) => {
                    let applied = settings.loaded.trust.applied.len();
                    if let Ok(mut slot) = settings_slot.write() {
                        *slot = Some(Arc::new(settings));
                    }
                    client
                        .log_message(
                            MessageType::INFO,
                            format!("tinycoder: workspace trusted; {applied} loosened setting(s) now apply"),
                        )
                        .await;
                }
                Ok(Err(e)) => client.show_message(MessageType::ERROR, e).await,
                Err(e) => tracing::error!("configuration not reloaded after trust: {e}"),
            }
        });
    }

    /// The same question for a workspace folder other than the first (`report` from its own
    /// settings); once trusted, that folder's settings are read again.
    pub(super) fn ask_about_folder_trust(&self, folder: Arc<WorkspaceRoot>, report: &TrustReport) {
        let init_options = self.init_options.clone();
        self.put_trust_question(report, move |client| async move {
            let options = init_options.lock().ok().and_then(|o| o.clone());
            let root = folder.root.clone();
            let reloaded = tokio::task::spawn_blocking(move || load_folder_config(root, options)).await;
            match reloaded {
                Ok(Ok(loaded)) => {
                    let applied = loaded.trust.applied.len();
                    if let Ok(mut slot) = folder.config.write() {
                        *slot = Some(loaded.config);
                    }
                    let message = format!(
                        "tinycoder: workspace folder {} trusted; {applied} loosened setting(s) now apply",
                        folder.root.display()
                    );
                    client.log_message(MessageType::INFO, message).await;
                }
                Ok(Err(e)) => client.show_message(MessageType::ERROR, format!("tinycoder: {e}")).await,
                Err(e) => tracing::error!("folder settings not reloaded after trust: {e}"),
            }
        });
    }

    /// Asks once per content whether to trust the loosenings of `report`, records the
    /// answer in the user's trust records, and runs `reload` when the user trusts them.
    fn put_trust_question<F, Fut>(&self, report: &TrustReport, reload: F)
    where
        F: FnOnce(tower_lsp_server::Client) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        let Some(workspace) = report.workspace.clone() else { return };
        let pending: Vec<_> = report.requests.iter().filter(|r| r.recorded.is_none()).cloned().collect();
        if pending.is_empty() {
            return;
        }
        {
            let Ok(mut asked) = self.trust_asked.lock() else { return };
            let key: String = pending.iter().map(|r| r.sha256.as_str()).collect::<Vec<_>>().join("+");
            if !asked.insert(key) {
                return;
            }
        }
        let keys: Vec<String> = report.ignored.iter().map(|l| l.key.clone()).collect();
        let sources: Vec<String> = pending.iter().map(|r| r.source.to_string()).collect();
        let message = format!(
            "tinycoder: {} in {} asks to loosen security settings ({}). They are ignored unless you trust \
             this workspace's settings.",
            sources.join(" and "),
            workspace.display(),
            keys.join(", ")
        );
        let client = self.client.clone();
        tokio::spawn(async move {
            let actions = [TRUST, KEEP_IGNORED]
                .map(|title| MessageActionItem { title: title.to_string(), properties: Default::default() })
                .to_vec();
            let answer = client.show_message_request(MessageType::WARNING, message, Some(actions)).await;
            let decision = match answer {
                Ok(Some(item)) if item.title == TRUST => TrustDecision::Trusted,
                Ok(Some(item)) if item.title == KEEP_IGNORED => TrustDecision::Declined,
                _ => return tracing::info!("workspace trust question dismissed; asked again next start"),
            };
            let ws = workspace.clone();
            let recorded = tokio::task::spawn_blocking(move || {
                let mut trust = WorkspaceTrust::load_user();
                pending.iter().try_for_each(|r| trust.record(&ws, r.source, &r.sha256, decision))
            })
            .await;
            match recorded {
                Ok(Ok(())) => tracing::info!(?decision, workspace = %workspace.display(), "workspace trust recorded"),
                Ok(Err(e)) => return client.show_message(MessageType::ERROR, format!("tinycoder: {e}")).await,
                Err(e) => return tracing::error!("workspace trust not recorded: {e}"),
            }
            if decision == TrustDecision::Trusted {
                reload(client).await;
            }
        });
    }
}
