//! Health checks of the model backend for `tinycoder doctor`.

use super::{client_from_config, ollama::full_name, ModelClient, ModelInfo};
use crate::config::{BackendKind, Config, ModelRole};

/// One check's outcome, with the fix when it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCheck {
    /// What was checked, e.g. "backend" or "model for coder".
    pub subject: String,
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do about a failure.
    pub fix: Option<String>,
}

impl ModelCheck {
    fn pass(subject: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }
    fn fail(subject: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Checks that the backend answers, and for each role that its model is there
/// and its context length covers the configured `num_ctx`.
pub async fn diagnose(config: &Config) -> Vec<ModelCheck> {
    let client = match client_from_config(config) {
        Ok(c) => c,
        Err(e) => {
            return vec![ModelCheck::fail(
                "backend",
                e.to_string(),
                "check [backend] in the configuration",
            )]
        }
    };
    diagnose_with(client.as_ref(), config).await
}

/// [`diagnose`] with a given client.
pub async fn diagnose_with(client: &dyn ModelClient, config: &Config) -> Vec<ModelCheck> {
    let kind = config.backend.kind;
    let models = match client.list_models().await {
        Ok(m) => m,
        Err(e) => {
            let fix = match kind {
                BackendKind::Ollama => format!(
                    "start Ollama (`ollama serve`) or set backend.url (now {})",
                    client.url()
                ),
                BackendKind::Openai => {
                    format!("start the server (e.g. `llama-server --models-dir DIR --port 8080`) or set backend.url (now {})", client.url())
                }
            };
            return vec![ModelCheck::fail("backend", e.to_string(), fix)];
        }
    };
    let mut checks = vec![ModelCheck::pass(
        "backend",
        format!(
            "{} server reachable at {} ({} models)",
            kind_name(kind),
            client.url(),
            models.len()
        ),
    )];
    for role in ModelRole::ALL {
        checks.push(check_role(kind, role, config, &models));
    }
    checks
}

fn kind_name(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Ollama => "Ollama",
        BackendKind::Openai => "OpenAI-compatible",
    }
}

fn check_role(
    kind: BackendKind,
    role: ModelRole,
    config: &Config,
    models: &[ModelInfo],
) -> ModelCheck {
    let m = config.models.get(role);
    let subject = format!("model for {role}");
    let found = models.iter().find(|info| match kind {
        BackendKind::Ollama => full_name(&info.name) == full_name(&m.name),
        BackendKind::Openai => info.name == m.name,
    });
    let Some(info) = found else {
        let fix = match kind {
            BackendKind::Ollama => format!("run `ollama pull {}`, or set models.{role}.name", m.name),
            BackendKind::Openai => format!("serve a model with id `{}` (llama-server: {}.gguf in --models-dir), or set models.{role}.name", m.name, m.name),
        };
        let have: Vec<&str> = models.iter().map(|i| i.name.as_str()).collect();
        return ModelCheck::fail(
            subject,
            format!(
                "`{}` is not on the server (it has: {})",
                m.name,
                have.join(", ")
            ),
            fix,
        );
    };
    match info.context_length {
        Some(ctx) if u64::from(m.num_ctx) > ctx => ModelCheck::fail(
            subject,
            format!(
                "`{}`: num_ctx {} is more than the model's context length {ctx}",
                m.name, m.num_ctx
            ),
            format!("set models.{role}.num_ctx to at most {ctx}"),
        ),
        Some(ctx) => ModelCheck::pass(
            subject,
            format!(
                "`{}` present, context length {ctx}, num_ctx {}",
                m.name, m.num_ctx
            ),
        ),
        None => ModelCheck::pass(
            subject,
            format!(
                "`{}` present (context length not reported), num_ctx {}",
                m.name, m.num_ctx
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigInputs, LoadedConfig};

    #[test]
    fn role_checks_name_the_fix() {
        let mut config = LoadedConfig::load(&ConfigInputs::default())
            .expect("defaults")
            .config;
        config.models.coder.name = "smollm2".into();
        config.models.coder.num_ctx = 16384;
        let models = vec![ModelInfo {
            name: "smollm2:latest".into(),
            context_length: Some(8192),
            size_bytes: None,
        }];
        let c = check_role(BackendKind::Ollama, ModelRole::Coder, &config, &models);
        assert!(!c.ok);
        assert_eq!(
            c.fix.as_deref(),
            Some("set models.coder.num_ctx to at most 8192")
        );
        config.models.coder.num_ctx = 4096;
        assert!(check_role(BackendKind::Ollama, ModelRole::Coder, &config, &models).ok);
        let missing = check_role(BackendKind::Ollama, ModelRole::Critic, &config, &models);
        assert!(!missing.ok);
        assert!(missing
            .fix
            .unwrap_or_default()
            .contains("ollama pull gemma3:1b"));
    }
}
