//! Layered loading: defaults ← user file ← workspace file ← env ← LSP
//! `initializationOptions`, with the origin of every value kept for
//! `tinycoder config` and for error messages.

use super::security::{Effect, SECURITY_KEYS};
use super::trust::{canonical_workspace, sha256_hex, TrustDecision, TrustSource, WorkspaceTrust};
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

impl Origin {
    /// The trust source of a layer the user does not control (`None` for the user's own layers).
    pub fn untrusted_source(&self) -> Option<TrustSource> {
        match self {
            Origin::WorkspaceFile(_) => Some(TrustSource::WorkspaceFile),
            Origin::InitializationOptions => Some(TrustSource::EditorSettings),
            _ => None,
        }
    }
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
    /// A config file that is not a regular file, too large, or unreadable (the message names it).
    #[error(transparent)]
    File(#[from] crate::paths::SettingsFileError),
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
    /// The user's recorded trust of workspaces (empty: no workspace is trusted).
    pub trust: WorkspaceTrust,
}

impl ConfigInputs {
    /// Inputs from the process environment: `$TINYCODER_CONFIG` or the XDG user file, and all env vars.
    pub fn from_environment(workspace_root: Option<PathBuf>) -> Self {
        let env: Vec<(String, String)> = std::env::vars().collect();
        let user_file = env
            .iter()
            .find(|(k, _)| k == ENV_CONFIG_FILE)
            .map(|(_, v)| PathBuf::from(v))
            .or_else(crate::paths::user_config_file);
        Self { user_file, workspace_root, env, init_options: None, trust: WorkspaceTrust::load_user() }
    }
}

/// A security key that a workspace's own settings loosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Loosening {
    /// Dotted key.
    pub key: String,
    /// The layer that asks for it.
    pub origin: Origin,
    /// The value it asks for.
    pub requested: String,
    /// The value of the user's own layers (what stays in force while it is ignored).
    pub kept: String,
    /// What a looser value would allow.
    pub guards: &'static str,
}

impl fmt::Display for Loosening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {} from {} loosens {} (kept: {})",
            self.key,
            clip(&self.requested),
            self.origin,
            self.guards,
            clip(&self.kept)
        )
    }
}

/// A value shortened for one line of a report.
fn clip(value: &str) -> String {
    const MAX: usize = 80;
    if value.chars().count() <= MAX {
        value.to_string()
    } else {
        format!("{}…", value.chars().take(MAX).collect::<String>())
    }
}

/// What a trust decision for one source would cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustRequest {
    /// The source whose loosenings would apply.
    pub source: TrustSource,
    /// SHA-256 of its content now.
    pub sha256: String,
    /// A decision already on record for this content (declined, when its loosenings are ignored).
    pub recorded: Option<TrustDecision>,
}

/// Security keys that the workspace's own layers loosen, and what became of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustReport {
    /// The canonical workspace root the decisions are keyed by.
    pub workspace: Option<PathBuf>,
    /// Loosenings not applied: the workspace is not trusted for them.
    pub ignored: Vec<Loosening>,
    /// Loosenings applied because the user trusted the workspace's settings.
    pub applied: Vec<Loosening>,
    /// The sources whose trust would apply the ignored loosenings.
    pub requests: Vec<TrustRequest>,
}

impl TrustReport {
    /// One line per ignored loosening, for logs and reports.
    pub fn ignored_lines(&self) -> Vec<String> {
        self.ignored.iter().map(|l| format!("ignored: {l}")).collect()
    }
}

/// The effective configuration and the origin of each leaf key.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    pub origins: BTreeMap<String, Origin>,
    /// The merged TOML the config was read from (for printing).
    pub merged: Table,
    /// Security keys the workspace's own settings loosen: ignored unless trusted.
    pub trust: TrustReport,
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
        let mut hashes: BTreeMap<TrustSource, String> = BTreeMap::new();
        if let Some(path) = &inputs.user_file {
            if let Some((t, _)) = read_toml_file(path, Origin::UserFile(path.clone()))? {
                layers.push((Origin::UserFile(path.clone()), t));
            }
        }
        if let Some(root) = &inputs.workspace_root {
            let path = root.join(WORKSPACE_FILE);
            if let Some((t, bytes)) = read_toml_file(&path, Origin::WorkspaceFile(path.clone()))? {
                hashes.insert(TrustSource::WorkspaceFile, sha256_hex(&bytes));
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
                hashes.insert(TrustSource::EditorSettings, security_fingerprint(&t));
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
        // The user's own layers alone: what a security key may not be loosened beyond.
        let mut trusted = merged.clone();
        let mut trusted_origins = origins.clone();
        for (origin, layer) in layers {
            check_known_keys(&layer, &defaults, "", &origin)?;
            if origin.untrusted_source().is_none() {
                merge(&mut trusted, layer.clone(), "", &origin, &mut trusted_origins)?;
            }
            merge(&mut merged, layer, "", &origin, &mut origins)?;
        }
        deserialize(&merged, &origins)?;
        let trust = apply_trust(inputs, &hashes, &trusted, &trusted_origins, &mut merged, &mut origins);
        let config = deserialize(&merged, &origins)?;
        Ok(Self { config, origins, merged, trust })
    }

    /// Every leaf key with its effective value and origin, in key order.
    pub fn describe(&self) -> Vec<(String, String, Origin)> {
        self.origins
            .iter()
            .map(|(k, o)| (k.clone(), lookup(&self.merged, k).map(render_value).unwrap_or_default(), o.clone()))
            .collect()
    }
}

/// Deserializes and validates the merged table; errors name the key's origin.
fn deserialize(merged: &Table, origins: &BTreeMap<String, Origin>) -> Result<Config, ConfigError> {
    let config: Config = serde_path_to_error::deserialize(Value::Table(merged.clone())).map_err(|e| {
        let key = e.path().to_string();
        let value = lookup(merged, &key).map(render_value).unwrap_or_else(|| "(missing)".into());
        ConfigError::Invalid {
            origin: origins.get(&key).cloned().unwrap_or(Origin::Default),
            key,
            value,
            expected: expectation(&e.into_inner().to_string()),
        }
    })?;
    config.validate().map_err(|inv| ConfigError::Invalid {
        origin: origins.get(&inv.key).cloned().unwrap_or(Origin::Default),
        key: inv.key,
        value: inv.value,
        expected: inv.expected,
    })?;
    Ok(config)
}

/// serde's "invalid type: sequence, expected a string" as "a string (not a list)".
fn expectation(serde_message: &str) -> String {
    // The TOML deserializer appends "\nin `key`"; the key is named already.
    let serde_message = serde_message.lines().next().unwrap_or(serde_message).trim();
    let (rest, wrong_type) =
        match (serde_message.strip_prefix("invalid type: "), serde_message.strip_prefix("invalid value: ")) {
            (Some(rest), _) => (rest, true),
            (_, Some(rest)) => (rest, false),
            _ => return serde_message.to_string(),
        };
    let Some((got, expected)) = rest.split_once(", expected ") else {
        return serde_message.to_string();
    };
    let expected = match expected {
        "u32" | "u64" | "usize" | "u16" | "u8" => "a whole number (0 or more)",
        "i64" | "i32" => "a whole number",
        "f32" | "f64" => "a number",
        "a boolean" => "true or false",
        other => other,
    };
    if !wrong_type {
        return expected.to_string();
    }
    let got = match got.split_whitespace().next().unwrap_or(got) {
        "sequence" => "a list",
        "map" => "a table",
        "string" => "a string",
        "boolean" => "a boolean",
        "integer" => "an integer",
        "floating" => "a number with a fraction",
        _ => got,
    };
    format!("{expected} (not {got})")
}

/// Holds every security key that an untrusted layer loosens at the value of the
/// user's own layers, unless the user trusted that layer's current content.
fn apply_trust(
    inputs: &ConfigInputs,
    hashes: &BTreeMap<TrustSource, String>,
    trusted: &Table,
    trusted_origins: &BTreeMap<String, Origin>,
    merged: &mut Table,
    origins: &mut BTreeMap<String, Origin>,
) -> TrustReport {
    let workspace = inputs.workspace_root.as_deref().map(canonical_workspace);
    let mut report = TrustReport { workspace: workspace.clone(), ..Default::default() };
    for sk in SECURITY_KEYS {
        // A table-valued key (e.g. `permissions.writers`) has its origins on its leaves.
        let prefix = format!("{}.", sk.key);
        let Some(origin) = origins.get(sk.key).cloned().or_else(|| {
            origins
                .iter()
                .find(|(k, o)| k.starts_with(&prefix) && o.untrusted_source().is_some())
                .map(|(_, o)| o.clone())
        }) else {
            continue;
        };
        let Some(source) = origin.untrusted_source() else { continue };
        let (Some(requested), Some(kept)) = (lookup(merged, sk.key).cloned(), lookup(trusted, sk.key).cloned()) else {
            continue;
        };
        // Compared as the code that uses the value reads it (a path against this workspace root).
        if sk.effect_in(&kept, &requested, inputs.workspace_root.as_deref()) != Effect::Loosens {
            continue;
        }
        let hash = hashes.get(&source).cloned().unwrap_or_default();
        let decision = workspace.as_deref().and_then(|w| inputs.trust.decision(w, source, &hash));
        let loosening = Loosening {
            key: sk.key.to_string(),
            origin: origin.clone(),
            requested: render_value(&requested),
            kept: render_value(&kept),
            guards: sk.guards,
        };
        if decision == Some(TrustDecision::Trusted) {
            report.applied.push(loosening);
            continue;
        }
        set_path(merged, sk.key, kept);
        origins.retain(|k, _| k != sk.key && !k.starts_with(&prefix));
        origins.extend(
            trusted_origins
                .iter()
                .filter(|(k, _)| *k == sk.key || k.starts_with(&prefix))
                .map(|(k, o)| (k.clone(), o.clone())),
        );
        report.ignored.push(loosening);
        if !report.requests.iter().any(|r| r.source == source) {
            report.requests.push(TrustRequest { source, sha256: hash, recorded: decision });
        }
    }
    report
}

/// A hash of the security keys an editor-settings layer sets (other settings may change freely).
fn security_fingerprint(layer: &Table) -> String {
    let mut text = String::new();
    for sk in SECURITY_KEYS {
        if let Some(v) = lookup(layer, sk.key) {
            text.push_str(&format!("{}={}\n", sk.key, render_value(v)));
        }
    }
    sha256_hex(text.as_bytes())
}

fn set_path(t: &mut Table, dotted: &str, value: Value) {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let Some(last) = parts.pop() else { return };
    let mut cur = t;
    for p in parts {
        let entry = cur.entry(p.to_string()).or_insert_with(|| Value::Table(Table::new()));
        let Value::Table(next) = entry else { return };
        cur = next;
    }
    cur.insert(last.to_string(), value);
}

fn read_toml_file(path: &Path, origin: Origin) -> Result<Option<(Table, Vec<u8>)>, ConfigError> {
    // Only a regular file of at most `SETTINGS_FILE_CAP` bytes: a link to /dev/zero or a FIFO
    // committed as .tinycoder.toml is refused at once, naming the file.
    let Some(bytes) = crate::paths::read_settings_file(path)? else { return Ok(None) };
    let text = String::from_utf8(bytes.clone())
        .map_err(|_| ConfigError::Syntax { origin: origin.clone(), message: "the file is not UTF-8 text".into() })?;
    text.parse::<Table>().map(|t| Some((t, bytes))).map_err(|e| ConfigError::Syntax { origin, message: e.to_string() })
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

/// The value at a dotted key (`models.coder.path`) of a table, if any.
pub(super) fn lookup<'a>(t: &'a Table, dotted: &str) -> Option<&'a Value> {
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
        // A loopback URL is never a loosening, so the workspace may set it.
        std::fs::write(ws.join(WORKSPACE_FILE), "[backend]\nurl = \"http://127.0.0.1:2\"\n").unwrap();
        let c = load(ConfigInputs {
            user_file: Some(user.clone()),
            workspace_root: Some(ws.clone()),
            env: vec![("TINYCODER_MODELS__CODER__NUM_CTX".into(), "4096".into())],
            init_options: Some(serde_json::json!({"models": {"critic": {"name": "from-editor"}}})),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.config.backend.url, "http://127.0.0.1:2");
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
    fn a_list_where_a_string_is_expected_reads_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(WORKSPACE_FILE), "[models.coder]\nname = [\"a\", \"b\"]\n").unwrap();
        let err = load(ConfigInputs { workspace_root: Some(dir.path().into()), ..Default::default() })
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("key `models.coder.name` has value [\"a\", \"b\"]; expected a string (not a list)"),
            "{err}"
        );
        std::fs::write(dir.path().join(WORKSPACE_FILE), "[models.coder]\nnum_ctx = -4\n").unwrap();
        let err = load(ConfigInputs { workspace_root: Some(dir.path().into()), ..Default::default() })
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("num_ctx` has value -4; expected a whole number (0 or more)"), "{err}");
        assert!(!err.contains("invalid"), "{err}");
    }

    #[test]
    fn env_without_double_underscore_is_ignored() {
        let c = load(ConfigInputs { env: vec![("TINYCODER_LOG".into(), "x".into())], ..Default::default() }).unwrap();
        assert_eq!(c.config.log.level, "info");
    }
}
