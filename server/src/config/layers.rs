//! Layered loading: defaults ← user file ← workspace file ← env ← LSP
//! `initializationOptions`, with the origin of every value kept for
//! `tinycoder config` and for error messages.

use super::{Config, DEFAULT_TOML};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Prefix of environment variables that set configuration keys.
pub const ENV_PREFIX: &str = "TINYCODER_";
/// Environment variable naming the user config file, overriding the XDG location.
pub const ENV_CONFIG_FILE: &str = "TINYCODER_CONFIG";
/// The workspace's own config file name.
pub const WORKSPACE_FILE: &str = ".tinycoder.toml";

/// Where a configuration value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Default,
    UserFile(PathBuf),
    WorkspaceFile(PathBuf),
    Env(String),
    InitializationOptions,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::UserFile(p) => write!(f, "user file {}", p.display()),
            Origin::WorkspaceFile(p) => write!(f, "workspace file {}", p.display()),
            Origin::Env(v) => write!(f, "environment variable {v}"),
            Origin::InitializationOptions => f.write_str("LSP initializationOptions"),
        }
    }
}

/// A configuration that could not be loaded; the message names where, which key, and what is expected.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{origin} is not valid TOML: {message}")]
    Syntax { origin: Origin, message: String },
    #[error("{origin}: key `{key}` has value {value}; expected {expected}")]
    Invalid { origin: Origin, key: String, value: String, expected: String },
    #[error("{origin}: unknown key `{key}`; known keys here: {known}")]
    UnknownKey { origin: Origin, key: String, known: String },
}

/// The sources to layer over the built-in defaults.
#[derive(Debug, Clone, Default)]
pub struct ConfigInputs {
    /// The user's config file; `None` = none (see [`ConfigInputs::from_environment`]).
    pub user_file: Option<PathBuf>,
    /// The workspace root whose `.tinycoder.toml` applies, if any.
    pub workspace_root: Option<PathBuf>,
    /// Environment variables (all of them; only `TINYCODER_*__*` are used).
    pub env: Vec<(String, String)>,
    /// The editor's `initializationOptions` (a JSON object shaped like the TOML).
    pub init_options: Option<serde_json::Value>,
}

impl ConfigInputs {
    /// Inputs from the process environment: `$TINYCODER_CONFIG` or the XDG user file, and all env vars.
    pub fn from_environment(workspace_root: Option<PathBuf>) -> Self {
        let env: Vec<(String, String)> = std::env::vars().collect();
        let user_file = env
            .iter()
            .find(|(k, _)| k == ENV_CONFIG_FILE)
            .map(|(_, v)| PathBuf::from(v))
            .or_else(|| crate::paths::user_config_file());
        Self { user_file, workspace_root, env, init_options: None }
    }
}

/// The effective configuration and the origin of each leaf key.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    pub origins: BTreeMap<String, Origin>,
    /// The merged TOML the config was read from (for printing).
    pub merged: Table,
}

impl LoadedConfig {
    /// Loads and validates the configuration from `inputs`.
    pub fn load(inputs: &ConfigInputs) -> Result<Self, ConfigError> {
        let mut merged: Table = DEFAULT_TOML
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Syntax { origin: Origin::Default, message: e.to_string() })?;
        let mut origins = BTreeMap::new();
        record_origins(&merged, "", &Origin::Default, &mut origins);
        let defaults = merged.clone();

        let mut layers: Vec<(Origin, Table)> = Vec::new();
        if let Some(path) = &inputs.user_file {
            if let Some(t) = read_toml_file(path, Origin::UserFile(path.clone()))? {
                layers.push((Origin::UserFile(path.clone()), t));
            }
        }
        if let Some(root) = &inputs.workspace_root {
            let path = root.join(WORKSPACE_FILE);
            if let Some(t) = read_toml_file(&path, Origin::WorkspaceFile(path.clone()))? {
                layers.push((Origin::WorkspaceFile(path.clone()), t));
            }
        }
        for (name, value) in &inputs.env {
            if let Some(t) = env_layer(name, value) {
                layers.push((Origin::Env(name.clone()), t));
            }
        }
        if let Some(json) = &inputs.init_options {
            if let Some(Value::Table(t)) = json_to_toml(json) {
                layers.push((Origin::InitializationOptions, t));
            } else if !json.is_null() {
                return Err(ConfigError::Invalid {
                    origin: Origin::InitializationOptions,
                    key: "(root)".into(),
                    value: json.to_string(),
                    expected: "an object shaped like tinycoder.toml".into(),
                });
            }
        }
        for (origin, layer) in layers {
            check_known_keys(&layer, &defaults, "", &origin)?;
            merge(&mut merged, layer, "", &origin, &mut origins)?;
        }

        let config: Config = serde_path_to_error::deserialize(Value::Table(merged.clone())).map_err(|e| {
            let key = e.path().to_string();
            let value = lookup(&merged, &key).map(render_value).unwrap_or_else(|| "(missing)".into());
            ConfigError::Invalid {
                origin: origins.get(&key).cloned().unwrap_or(Origin::Default),
                key,
                value,
                expected: e.into_inner().to_string(),
            }
        })?;
        config.validate().map_err(|inv| ConfigError::Invalid {
            origin: origins.get(&inv.key).cloned().unwrap_or(Origin::Default),
            key: inv.key,
            value: inv.value,
            expected: inv.expected,
        })?;
        Ok(Self { config, origins, merged })
    }

    /// Every leaf key with its effective value and origin, in key order.
    pub fn describe(&self) -> Vec<(String, String, Origin)> {
        self.origins
            .iter()
            .map(|(k, o)| (k.clone(), lookup(&self.merged, k).map(render_value).unwrap_or_default(), o.clone()))
            .collect()
    }
}

fn read_toml_file(path: &Path, origin: Origin) -> Result<Option<Table>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ConfigError::Read { path: path.to_path_buf(), source: e }),
    };
    text.parse::<Table>()
        .map(Some)
        .map_err(|e| ConfigError::Syntax { origin, message: e.to_string() })
}

/// `TINYCODER_MODELS__CODER__NAME=x` → `{models: {coder: {name: "x"}}}`.
fn env_layer(name: &str, value: &str) -> Option<Table> {
    let rest = name.strip_prefix(ENV_PREFIX)?;
    if !rest.contains("__") {
        return None;
    }
    let parts: Vec<String> = rest.split("__").map(|p| p.to_ascii_lowercase()).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    // A value is read as a TOML scalar when it parses as one (numbers, booleans,
    // arrays), otherwise as a plain string, so `TINYCODER_BACKEND__URL=http://…` needs no quotes.
    let parsed = format!("v = {value}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(value.to_string()));
    let mut leaf = parsed;
    for part in parts.iter().rev() {
        let mut t = Table::new();
        t.insert(part.clone(), leaf);
        leaf = Value::Table(t);
    }
    match leaf {
        Value::Table(t) => Some(t),
        _ => None,
    }
}

fn json_to_toml(v: &serde_json::Value) -> Option<Value> {
    Some(match v {
        serde_json::Value::Null => return None,
        serde_json::Value::Bool(b) => Value::Boolean(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Float(n.as_f64()?),
        },
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(a) => Value::Array(a.iter().filter_map(json_to_toml).collect()),
        serde_json::Value::Object(o) => {
            Value::Table(o.iter().filter_map(|(k, v)| Some((k.clone(), json_to_toml(v)?))).collect())
        }
    })
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn record_origins(t: &Table, prefix: &str, origin: &Origin, out: &mut BTreeMap<String, Origin>) {
    for (k, v) in t {
        let key = join(prefix, k);
        match v {
            Value::Table(inner) => record_origins(inner, &key, origin, out),
            _ => {
                out.insert(key, origin.clone());
            }
        }
    }
}

/// Every key of a layer must exist in the defaults, so a typo is reported with the file it is in.
fn check_known_keys(layer: &Table, defaults: &Table, prefix: &str, origin: &Origin) -> Result<(), ConfigError> {
    for (k, v) in layer {
        let key = join(prefix, k);
        match defaults.get(k) {
            None => {
                return Err(ConfigError::UnknownKey {
                    origin: origin.clone(),
                    key,
                    known: defaults.keys().cloned().collect::<Vec<_>>().join(", "),
                })
            }
            Some(Value::Table(d)) => match v {
                Value::Table(inner) => check_known_keys(inner, d, &key, origin)?,
                other => {
                    return Err(ConfigError::Invalid {
                        origin: origin.clone(),
                        key,
                        value: render_value(other),
                        expected: "a table".into(),
                    })
                }
            },
            Some(_) => {}
        }
    }
    Ok(())
}

fn merge(
    base: &mut Table,
    layer: Table,
    prefix: &str,
    origin: &Origin,
    origins: &mut BTreeMap<String, Origin>,
) -> Result<(), ConfigError> {
    for (k, v) in layer {
        let key = join(prefix, &k);
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(l)) => merge(b, l, &key, origin, origins)?,
            (_, v) => {
                if let Value::Table(t) = &v {
                    record_origins(t, &key, origin, origins);
                } else {
                    origins.insert(key, origin.clone());
                }
                base.insert(k, v);
            }
        }
    }
    Ok(())
}

fn lookup<'a>(t: &'a Table, dotted: &str) -> Option<&'a Value> {
    let mut parts = dotted.split('.');
    let mut cur = t.get(parts.next()?)?;
    for p in parts {
        cur = cur.as_table()?.get(p)?;
    }
    Some(cur)
}

fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(inputs: ConfigInputs) -> Result<LoadedConfig, ConfigError> {
        LoadedConfig::load(&inputs)
    }

    #[test]
    fn defaults_load_and_validate() {
        let c = load(ConfigInputs::default()).unwrap();
        assert_eq!(c.config.models.coder.name, "qwen2.5-coder:1.5b");
        assert_eq!(c.origins["backend.url"], Origin::Default);
    }

    #[test]
    fn layers_apply_in_order_with_origins() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.toml");
        std::fs::write(&user, "[backend]\nurl = \"http://user:1\"\n[models.coder]\nname = \"u\"\n").unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(ws.join(WORKSPACE_FILE), "[backend]\nurl = \"http://ws:2\"\n").unwrap();
        let c = load(ConfigInputs {
            user_file: Some(user.clone()),
            workspace_root: Some(ws.clone()),
            env: vec![("TINYCODER_MODELS__CODER__NUM_CTX".into(), "4096".into())],
            init_options: Some(serde_json::json!({"models": {"critic": {"name": "from-editor"}}})),
        })
        .unwrap();
        assert_eq!(c.config.backend.url, "http://ws:2");
        assert_eq!(c.origins["backend.url"], Origin::WorkspaceFile(ws.join(WORKSPACE_FILE)));
        assert_eq!(c.config.models.coder.name, "u");
        assert_eq!(c.origins["models.coder.name"], Origin::UserFile(user));
        assert_eq!(c.config.models.coder.num_ctx, 4096);
        assert_eq!(c.origins["models.coder.num_ctx"], Origin::Env("TINYCODER_MODELS__CODER__NUM_CTX".into()));
        assert_eq!(c.config.models.critic.name, "from-editor");
        assert_eq!(c.origins["models.critic.name"], Origin::InitializationOptions);
    }

    #[test]
    fn bad_type_names_file_key_value_and_expectation() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(WORKSPACE_FILE), "[models.coder]\nnum_ctx = \"big\"\n").unwrap();
        let err = load(ConfigInputs { workspace_root: Some(dir.path().into()), ..Default::default() })
            .unwrap_err()
            .to_string();
        assert!(err.contains(".tinycoder.toml"), "{err}");
        assert!(err.contains("models.coder.num_ctx"), "{err}");
        assert!(err.contains("\"big\""), "{err}");
        assert!(err.contains("expected"), "{err}");
    }

    #[test]
    fn out_of_range_value_is_reported_with_its_origin() {
        let err = load(ConfigInputs {
            env: vec![("TINYCODER_MODELS__CRITIC__TEMPERATURE".into(), "7".into())],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("TINYCODER_MODELS__CRITIC__TEMPERATURE"), "{err}");
        assert!(err.contains("from 0 to 2"), "{err}");
    }

    #[test]
    fn unknown_key_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(WORKSPACE_FILE), "[backend]\nulr = \"x\"\n").unwrap();
        let err = load(ConfigInputs { workspace_root: Some(dir.path().into()), ..Default::default() })
            .unwrap_err()
            .to_string();
        assert!(err.contains("backend.ulr") && err.contains("url"), "{err}");
    }

    #[test]
    fn syntax_error_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(WORKSPACE_FILE), "[backend\n").unwrap();
        let err = load(ConfigInputs { workspace_root: Some(dir.path().into()), ..Default::default() })
            .unwrap_err()
            .to_string();
        assert!(err.contains(".tinycoder.toml") && err.contains("not valid TOML"), "{err}");
    }

    #[test]
    fn env_without_double_underscore_is_ignored() {
        let c = load(ConfigInputs { env: vec![("TINYCODER_LOG".into(), "x".into())], ..Default::default() }).unwrap();
        assert_eq!(c.config.log.level, "info");
    }
}
