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
        Self { subject: subject.into(), ok: true, detail: detail.into(), fix: None }
    }
    fn fail(subject: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { subject: subject.into(), ok: false, detail: detail.into(), fix: Some(fix.into()) }
    }
}

/// Checks that the backend answers, and for each role that its model is there
/// and its context length covers the configured `num_ctx`.
pub async fn diagnose(config: &Config) -> Vec<ModelCheck> {
    let client = match client_from_config(config) {
        Ok(c) => c,
        Err(e) => return vec![ModelCheck::fail("backend", e.to_string(), "check [backend] in the configuration")],
    };
    diagnose_with(client.as_ref(), config).await
}

/// [`diagnose`] with a given client.
pub async fn diagnose_with(client: &dyn ModelClient, config: &Config) -> Vec<ModelCheck> {
    let kind = client.backend();
    if kind == BackendKind::Embedded {
        return diagnose_embedded(client, config).await;
    }
    let models = match client.list_models().await {
        Ok(m) => m,
        Err(e) => {
            let fix = match kind {
                BackendKind::Ollama => {
                    format!("start Ollama (`ollama serve`) or set backend.url (now {})", client.url())
                }
                BackendKind::Openai => {
                    format!("start the server (e.g. `llama-server --models-dir DIR --port 8080`) or set backend.url (now {})", client.url())
                }
                BackendKind::Auto | BackendKind::Embedded => format!(
                    "start Ollama (`ollama serve`) or set backend.url (now {}); or, with no server at all, pull the models with `ollama pull` or set backend.models_dir so the embedded backend finds them",
                    client.url()
                ),
            };
            return vec![ModelCheck::fail("backend", e.to_string(), fix)];
        }
    };
    let mut checks = vec![ModelCheck::pass(
        "backend",
        format!("{} server reachable at {} ({} models)", kind_name(kind), client.url(), models.len()),
    )];
    for role in ModelRole::ALL {
        checks.push(check_role(kind, role, config, &models));
    }
    checks
}

fn kind_name(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Ollama | BackendKind::Auto => "Ollama",
        BackendKind::Openai => "OpenAI-compatible",
        BackendKind::Embedded => "embedded",
    }
}

/// The embedded backend: each role's model is found on disk, loads, and its trained context covers `num_ctx`.
async fn diagnose_embedded(client: &dyn ModelClient, config: &Config) -> Vec<ModelCheck> {
    let locator = super::local_models::ModelLocator::new(&config.backend);
    let on_disk = locator.list().len();
    let store = locator.ollama_store().map(|p| p.display().to_string()).unwrap_or_else(|| "none found".into());
    let mut checks = vec![ModelCheck::pass(
        "backend",
        format!("embedded llama.cpp, no server ({on_disk} models on disk; Ollama's store: {store})"),
    )];
    for role in ModelRole::ALL {
        let m = config.models.get(role);
        let subject = format!("model for {role}");
        let found = match locator.find_role(config, role) {
            Ok(f) => f,
            Err(why) => {
                checks.push(ModelCheck::fail(subject, format!("`{}` not found", m.name), why));
                continue;
            }
        };
        let where_ = format!("{} ({})", found.path.display(), found.source.describe());
        let info = match super::local_models::read_gguf_info(&found.path) {
            Ok(i) => i,
            Err(e) => {
                checks.push(ModelCheck::fail(subject, e, format!("point models.{role} at a GGUF model file")));
                continue;
            }
        };
        if let Err(e) = client.count_tokens(role, "hello").await {
            checks.push(ModelCheck::fail(
                subject,
                format!("`{}` at {where_} does not load: {e}", m.name),
                "use a GGUF that llama.cpp supports",
            ));
            continue;
        }
        checks.push(match info.context_length {
            Some(ctx) if u64::from(m.num_ctx) > ctx => ModelCheck::fail(
                subject,
                format!("`{}`: num_ctx {} is more than the model's context length {ctx}", m.name, m.num_ctx),
                format!("set models.{role}.num_ctx to at most {ctx}"),
            ),
            ctx => ModelCheck::pass(
                subject,
                format!(
                    "`{}` loads from {where_}, context length {}, num_ctx {}",
                    m.name,
                    ctx.map(|c| c.to_string()).unwrap_or_else(|| "not in the file".into()),
                    m.num_ctx
                ),
            ),
        });
    }
    checks
}

fn check_role(kind: BackendKind, role: ModelRole, config: &Config, models: &[ModelInfo]) -> ModelCheck {
    let m = config.models.get(role);
    let subject = format!("model for {role}");
    let found = models.iter().find(|info| match kind {
        BackendKind::Ollama | BackendKind::Auto => full_name(&info.name) == full_name(&m.name),
        BackendKind::Openai | BackendKind::Embedded => info.name == m.name,
    });
    let Some(info) = found else {
        let fix = match kind {
            BackendKind::Ollama | BackendKind::Auto | BackendKind::Embedded => {
                format!("run `ollama pull {}`, or set models.{role}.name", m.name)
            }
            BackendKind::Openai => format!(
                "serve a model with id `{}` (llama-server: {}.gguf in --models-dir), or set models.{role}.name",
                m.name, m.name
            ),
        };
        let have: Vec<&str> = models.iter().map(|i| i.name.as_str()).collect();
        return ModelCheck::fail(
            subject,
            format!("`{}` is not on the server (it has: {})", m.name, have.join(", ")),
            fix,
        );
    };
    match info.context_length {
        Some(ctx) if u64::from(m.num_ctx) > ctx => ModelCheck::fail(
            subject,
            format!("`{}`: num_ctx {} is more than the model's context length {ctx}", m.name, m.num_ctx),
            format!("set models.{role}.num_ctx to at most {ctx}"),
        ),
        Some(ctx) => {
            ModelCheck::pass(subject, format!("`{}` present, context length {ctx}, num_ctx {}", m.name, m.num_ctx))
        }
        None => ModelCheck::pass(
            subject,
            format!("`{}` present (context length not reported), num_ctx {}", m.name, m.num_ctx),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigInputs, LoadedConfig};

    #[test]
    fn role_checks_name_the_fix() {
        let mut config = LoadedConfig::load(&ConfigInputs::default()).expect("defaults").config;
        config.models.coder.name = "smollm2".into();
        config.models.coder.num_ctx = 16384;
        let models = vec![ModelInfo { name: "smollm2:latest".into(), context_length: Some(8192), size_bytes: None }];
        let c = check_role(BackendKind::Ollama, ModelRole::Coder, &config, &models);
        assert!(!c.ok);
        assert_eq!(c.fix.as_deref(), Some("set models.coder.num_ctx to at most 8192"));
        config.models.coder.num_ctx = 4096;
        assert!(check_role(BackendKind::Ollama, ModelRole::Coder, &config, &models).ok);
        let missing = check_role(BackendKind::Ollama, ModelRole::Critic, &config, &models);
        assert!(!missing.ok);
        assert!(missing.fix.unwrap_or_default().contains("ollama pull qwen2.5-coder:1.5b"));
    }
}
