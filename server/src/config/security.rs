//! The security keys: the settings a cloned repository must not be able to
//! loosen on its own. Each key says how two of its values compare, so a layer
//! the user does not control (the workspace's `.tinycoder.toml`, the editor's
//! `initializationOptions`) may tighten it freely but loosens it only with the
//! user's recorded trust of that workspace (see [`super::trust`]).

use std::path::Path;
use toml::Value;

/// How a requested value of a security key compares with the value the user's own layers give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The same value.
    Same,
    /// At least as strict: accepted from any layer.
    Tightens,
    /// Less strict: needs the user's own config file or a recorded trust of the workspace.
    Loosens,
}

/// The comparison of one security key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// A limit where a lower number is stricter; with `zero_unlimited`, 0 means no limit (the loosest).
    LowerIsTighter { zero_unlimited: bool },
    /// A switch where `true` is stricter.
    TrueIsTighter,
    /// A list of things allowed: dropping entries is stricter, adding any loosens.
    SubsetIsTighter,
    /// A list of things forbidden: adding entries is stricter, dropping or changing any loosens.
    SupersetIsTighter,
    /// One of a few words, strictest first.
    Choice(&'static [&'static str]),
    /// A server URL: one on this machine (loopback) never loosens; any other host loosens unless unchanged.
    LoopbackUrl,
    /// Empty (the default behaviour) is strictest; any other change loosens.
    EmptyOrUnchanged,
    /// A path: read with [`crate::paths::setting_path`] (trimmed, `~` expanded, a relative one
    /// taken from `base`), exactly as the code that uses it reads it. Not set is strictest;
    /// naming the same place is the same; any other place loosens.
    Path(PathBase),
    /// A model's name: a plain name (`qwen2.5-coder:1.5b`, `user/model`) never loosens; one
    /// that leaves the folder it is looked up in (absolute, `~`, `..`) names a file of the
    /// workspace's choosing and loosens unless unchanged.
    ModelName,
    /// A table compared as a whole: any change counts as a loosening.
    Unchanged,
}

/// What a relative path of a [`Compare::Path`] key is taken from, as its user takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathBase {
    /// The workspace root (`store.dir`, `prompts.dir`).
    Workspace,
    /// The current folder of the process (the model file settings).
    CurrentDir,
}

/// One setting that decides what tinycoder may do to the machine or send off it.
#[derive(Debug, Clone, Copy)]
pub struct SecurityKey {
    /// Dotted key, as in `tinycoder config`.
    pub key: &'static str,
    /// How its values compare.
    pub compare: Compare,
    /// What a looser value would allow, for the report.
    pub guards: &'static str,
}

const fn key(key: &'static str, compare: Compare, guards: &'static str) -> SecurityKey {
    SecurityKey { key, compare, guards }
}

const LIMIT: Compare = Compare::LowerIsTighter { zero_unlimited: false };
const LIMIT_0_UNLIMITED: Compare = Compare::LowerIsTighter { zero_unlimited: true };
const WORKSPACE_PATH: Compare = Compare::Path(PathBase::Workspace);
const CWD_PATH: Compare = Compare::Path(PathBase::CurrentDir);

/// Every security key. Keys of `[sandbox]`, `[permissions]`, `[backend]` and `[store]`
/// that are not here are listed in [`NOT_SECURITY`] with the reason.
pub const SECURITY_KEYS: &[SecurityKey] = &[
    key("backend.url", Compare::LoopbackUrl, "where the project's code is sent"),
    key(
        "backend.api_key_env",
        Compare::EmptyOrUnchanged,
        "which secret from the environment is sent to the model server",
    ),
    key(
        "backend.models_dir",
        CWD_PATH,
        "which model files tinycoder's own process loads (a crafted GGUF is code-like input)",
    ),
    key("backend.ollama_models", CWD_PATH, "which model files tinycoder's own process loads"),
    key("models.planner.path", CWD_PATH, "which model file tinycoder's own process loads"),
    key("models.coder.path", CWD_PATH, "which model file tinycoder's own process loads"),
    key("models.critic.path", CWD_PATH, "which model file tinycoder's own process loads"),
    key("models.summarizer.path", CWD_PATH, "which model file tinycoder's own process loads"),
    key("models.planner.name", Compare::ModelName, "which model file tinycoder's own process loads"),
    key("models.coder.name", Compare::ModelName, "which model file tinycoder's own process loads"),
    key("models.critic.name", Compare::ModelName, "which model file tinycoder's own process loads"),
    key("models.summarizer.name", Compare::ModelName, "which model file tinycoder's own process loads"),
    key("store.dir", WORKSPACE_PATH, "where remembered permission decisions are read from"),
    key("prompts.dir", WORKSPACE_PATH, "what the models are told to do (the prompt templates)"),
    key("permissions.rules", Compare::SupersetIsTighter, "which shell commands wait for the user's decision"),
    key(
        "permissions.non_interactive",
        Compare::Choice(&["deny", "allow"]),
        "what a dangerous command does when nobody can be asked",
    ),
    key(
        "permissions.harmless_write_targets",
        Compare::SubsetIsTighter,
        "where commands may write outside the workspace unasked",
    ),
    key("permissions.effects", Compare::SupersetIsTighter, "which effects of a command make it dangerous"),
    key("permissions.path_rules", Compare::SupersetIsTighter, "which written paths make a command dangerous"),
    key(
        "permissions.code_variables",
        Compare::SupersetIsTighter,
        "which variable assignments count as code that runs later",
    ),
    key("permissions.allow", Compare::SubsetIsTighter, "which shell commands run without asking the user"),
    key(
        "permissions.safe_variables",
        Compare::SubsetIsTighter,
        "which variables a command may set without asking the user",
    ),
    key(
        "permissions.program_dirs",
        Compare::SubsetIsTighter,
        "where a program named by its path counts as the allowed program of that name",
    ),
    key("permissions.writers", Compare::Unchanged, "which programs' operands count as written paths"),
    key(
        "permissions.in_place_writers",
        Compare::SubsetIsTighter,
        "which writers may copy onto the harmless write targets unasked",
    ),
    key("sandbox.env_allowlist", Compare::SubsetIsTighter, "which environment variables (secrets) test processes see"),
    key("sandbox.writable_paths", Compare::SubsetIsTighter, "where sandboxed processes may write"),
    key("sandbox.readable_paths", Compare::SubsetIsTighter, "what of the user's files sandboxed processes may read"),
    key("sandbox.require_network_isolation", Compare::TrueIsTighter, "whether anything runs without network isolation"),
    key("sandbox.require_write_isolation", Compare::TrueIsTighter, "whether anything runs without write isolation"),
    key("sandbox.wall_timeout_s", LIMIT, "how long a test run may take"),
    key("sandbox.shell_timeout_s", LIMIT, "how long a shell command may take"),
    key("sandbox.test_timeout_s", LIMIT_0_UNLIMITED, "how long one test may run"),
    key("sandbox.test_timeout_grace_s", LIMIT, "how long a timed-out test may linger"),
    key("sandbox.kill_grace_ms", LIMIT, "how long a process may linger after SIGTERM"),
    key("sandbox.cpu_time_s", LIMIT_0_UNLIMITED, "CPU time per process"),
    key("sandbox.address_space_mb", LIMIT_0_UNLIMITED, "memory per process"),
    key("sandbox.file_size_mb", LIMIT_0_UNLIMITED, "the largest file a process may write"),
    key("sandbox.max_processes", LIMIT, "how many processes a run may start"),
    key("sandbox.output_cap_kb", LIMIT, "how much output a run may produce"),
    key(
        "sandbox.tmpfs_size_mb",
        LIMIT_0_UNLIMITED,
        "how much memory a run's private /tmp, /dev/shm and $HOME may take",
    ),
];

/// Keys of the security-minded sections that are deliberately not security keys, and why.
pub const NOT_SECURITY: &[(&str, &str)] = &[
    ("backend.kind", "the protocol only; where data goes is backend.url"),
    ("backend.connect_timeout_ms", "how long to wait for the model server"),
    ("backend.first_token_timeout_ms", "how long to wait for the model server"),
    ("backend.idle_timeout_ms", "how long to wait for the model server"),
    ("backend.request_timeout_ms", "how long to wait for the model server"),
    ("backend.max_loaded_models", "memory use of the model server, not what tinycoder may do"),
    ("backend.background_idle_ms", "when background summaries run"),
    ("backend.prompt_cache", "whether the model server reuses its own cache; nothing leaves the machine"),
    ("backend.threads", "CPU use of the embedded backend"),
    ("backend.lookup_draft_tokens", "how the embedded backend decodes a reply, not what it may do"),
    ("backend.lookup_ngram_min", "how the embedded backend decodes a reply, not what it may do"),
    ("backend.lookup_ngram_max", "how the embedded backend decodes a reply, not what it may do"),
    (
        "sandbox.test_command",
        "the project's own tests run in the sandbox under every limit above, as they would with `cargo test`",
    ),
    ("sandbox.output_tail_bytes", "how much of a run's output tinycoder keeps, not what the run may do"),
    ("store.synchronous", "durability of the store, not what it holds"),
    ("store.checkpoint_every_events", "durability of the store, not what it holds"),
    ("store.on_unfinished", "what start-up does with unfinished tasks; the LSP asks the user"),
    ("store.retention_days", "how long history is kept"),
    ("store.retention_max_events_per_task", "how long history is kept"),
    ("store.retention_max_checkpoints_per_task", "how long history is kept"),
    ("store.session_history_tokens", "chat history budget"),
    ("store.session_keep_recent_turns", "chat history budget"),
    ("store.session_summary_tokens", "chat history budget"),
    ("store.session_cache_sessions", "memory use of the chat fallback"),
    ("store.session_cache_messages", "memory use of the chat fallback"),
];

/// The security key named `dotted`, if it is one.
pub fn security_key(dotted: &str) -> Option<&'static SecurityKey> {
    SECURITY_KEYS.iter().find(|k| k.key == dotted)
}

impl SecurityKey {
    /// How `requested` compares with `trusted` (the value of the user's own layers), with no
    /// workspace (a workspace-relative path is then taken from the current folder).
    pub fn effect(&self, trusted: &Value, requested: &Value) -> Effect {
        self.effect_in(trusted, requested, None)
    }

    /// How `requested` compares with `trusted` in the workspace `root`.
    /// A value that cannot be compared (wrong type) counts as a loosening.
    pub fn effect_in(&self, trusted: &Value, requested: &Value, root: Option<&Path>) -> Effect {
        if let Compare::Path(base) = self.compare {
            let (Some(t), Some(r)) = (trusted.as_str(), requested.as_str()) else {
                return if trusted == requested { Effect::Same } else { Effect::Loosens };
            };
            return match (resolve_setting(t, base, root), resolve_setting(r, base, root)) {
                (t, r) if t == r => Effect::Same,
                (_, None) => Effect::Tightens,
                _ => Effect::Loosens,
            };
        }
        if trusted == requested {
            return Effect::Same;
        }
        let tighter = match self.compare {
            Compare::LowerIsTighter { zero_unlimited } => match (trusted.as_integer(), requested.as_integer()) {
                (Some(t), Some(r)) => {
                    let limit = |v: i64| if zero_unlimited && v == 0 { i64::MAX } else { v };
                    r >= 0 && limit(r) <= limit(t)
                }
                _ => false,
            },
            Compare::TrueIsTighter => requested.as_bool() == Some(true),
            Compare::SubsetIsTighter => match (trusted.as_array(), requested.as_array()) {
                (Some(t), Some(r)) => r.iter().all(|v| t.contains(v)),
                _ => false,
            },
            Compare::SupersetIsTighter => match (trusted.as_array(), requested.as_array()) {
                (Some(t), Some(r)) => t.iter().all(|v| r.contains(v)),
                _ => false,
            },
            Compare::Choice(order) => {
                let rank = |v: &Value| v.as_str().and_then(|s| order.iter().position(|o| *o == s));
                matches!((rank(trusted), rank(requested)), (Some(t), Some(r)) if r <= t)
            }
            Compare::LoopbackUrl => requested.as_str().is_some_and(is_loopback_url),
            Compare::EmptyOrUnchanged => requested.as_str().is_some_and(|s| s.trim().is_empty()),
            Compare::ModelName => requested.as_str().is_some_and(|s| !model_name_leaves_its_folder(s)),
            Compare::Path(_) | Compare::Unchanged => false,
        };
        if tighter {
            Effect::Tightens
        } else {
            Effect::Loosens
        }
    }
}

/// A path-valued setting as the code that uses it reads it (see [`crate::paths::setting_path`]).
pub fn resolve_setting(value: &str, base: PathBase, root: Option<&Path>) -> Option<std::path::PathBuf> {
    match base {
        PathBase::Workspace => crate::paths::setting_path(value, root),
        PathBase::CurrentDir => crate::paths::setting_path(value, None),
    }
}

/// True when a model name, joined to the folder it is looked up in (`backend.models_dir`,
/// Ollama's manifests), would name a file outside that folder: absolute, starting with `~`,
/// or with a `..` component. The model locator never looks such a name up in a folder, and
/// the trust check counts it as a loosening.
pub fn model_name_leaves_its_folder(name: &str) -> bool {
    let name = name.trim();
    name.starts_with('~')
        || name.starts_with('/')
        || name.starts_with('\\')
        || name.split(['/', '\\']).any(|part| part == "..")
}

/// True when `url`'s host is this machine: `localhost`, `127.0.0.0/8` or `::1`.
/// The authority ends at `/`, `\`, `?` or `#`, and user info before `@` is skipped,
/// the way URL parsers read it (`http://127.0.0.1@evil.example` is not local).
pub fn is_loopback_url(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '\\', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, _)) => h,
            None => return false,
        }
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    let host = host.to_ascii_lowercase();
    if host == "localhost" {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Value {
        format!("x = {s}").parse::<toml::Table>().expect("toml").remove("x").expect("x")
    }

    fn effect(k: &str, trusted: &str, requested: &str) -> Effect {
        security_key(k).expect("a security key").effect(&v(trusted), &v(requested))
    }

    #[test]
    fn each_comparison_knows_tighter_from_looser() {
        use Effect::*;
        let cases = [
            ("sandbox.wall_timeout_s", "600", "60", Tightens),
            ("sandbox.wall_timeout_s", "600", "6000", Loosens),
            ("sandbox.wall_timeout_s", "600", "-1", Loosens),
            ("sandbox.cpu_time_s", "600", "0", Loosens),
            ("sandbox.cpu_time_s", "0", "600", Tightens),
            ("sandbox.cpu_time_s", "0", "0", Same),
            ("sandbox.require_write_isolation", "false", "true", Tightens),
            ("sandbox.require_write_isolation", "true", "false", Loosens),
            ("sandbox.env_allowlist", r#"["PATH", "HOME"]"#, r#"["PATH"]"#, Tightens),
            ("sandbox.env_allowlist", r#"["PATH"]"#, r#"["PATH", "AWS_SECRET_ACCESS_KEY"]"#, Loosens),
            ("sandbox.writable_paths", r#"["/dev"]"#, r#"["/"]"#, Loosens),
            ("permissions.rules", r#"[{name = "rm"}]"#, r#"[{name = "rm"}, {name = "x"}]"#, Tightens),
            ("permissions.rules", r#"[{name = "rm"}]"#, "[]", Loosens),
            (
                "permissions.rules",
                r#"[{name = "rm", programs = ["rm"]}]"#,
                r#"[{name = "rm", programs = []}]"#,
                Loosens,
            ),
            ("permissions.non_interactive", r#""deny""#, r#""allow""#, Loosens),
            ("permissions.non_interactive", r#""allow""#, r#""deny""#, Tightens),
            ("permissions.non_interactive", r#""deny""#, r#""maybe""#, Loosens),
            ("backend.url", r#""http://127.0.0.1:11434""#, r#""http://localhost:8080""#, Tightens),
            ("backend.url", r#""http://127.0.0.1:11434""#, r#""https://models.example.com""#, Loosens),
            ("backend.url", r#""http://gpu-box:11434""#, r#""http://127.0.0.1:1""#, Tightens),
            ("backend.api_key_env", r#""""#, r#""AWS_SECRET_ACCESS_KEY""#, Loosens),
            ("backend.api_key_env", r#""KEY""#, r#""""#, Tightens),
            ("store.dir", r#""""#, r#"".tinycoder-data""#, Loosens),
            ("sandbox.max_processes", "256", r#""256""#, Loosens),
            ("store.dir", r#""""#, r#"" ""#, Same),
            ("store.dir", r#""""#, r#""./""#, Loosens),
            ("store.dir", r#""""#, r#""  .tinycoder-data ""#, Loosens),
            ("store.dir", r#"".d""#, r#""./.d/""#, Same),
            ("store.dir", r#"".d""#, r#"" ""#, Tightens),
            ("prompts.dir", r#""""#, r#""prompts""#, Loosens),
            ("prompts.dir", r#""""#, r#""  ""#, Same),
            ("models.coder.path", r#""""#, r#""/tmp/evil.gguf""#, Loosens),
            ("models.coder.name", r#""qwen2.5-coder:1.5b""#, r#""llama3:8b""#, Tightens),
            ("models.coder.name", r#""a""#, r#""hf.co/user/model:q4""#, Tightens),
            ("models.coder.name", r#""a""#, r#""../../../tmp/evil""#, Loosens),
            ("models.coder.name", r#""a""#, r#""/tmp/evil""#, Loosens),
            ("models.coder.name", r#""a""#, r#""~/evil""#, Loosens),
        ];
        for (k, t, r, want) in cases {
            assert_eq!(effect(k, t, r), want, "{k}: {t} -> {r}");
        }
    }

    #[test]
    fn loopback_means_this_machine_only() {
        for url in [
            "http://127.0.0.1:11434",
            "http://localhost",
            "http://[::1]:8080/v1",
            "https://127.8.9.10",
            "http://LOCALHOST:1",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "http://10.0.0.2:11434",
            "http://127.0.0.1.evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1@evil.example",
            "http://evil.example\\@127.0.0.1",
            "http://evil.example#@127.0.0.1",
            "127.0.0.1:11434",
            "http://[::2]:1",
            "http://[::1",
            "http://0.0.0.0:11434",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }

    #[test]
    fn every_key_of_the_guarded_sections_is_classified() {
        let defaults: toml::Table = crate::config::DEFAULT_TOML.parse().expect("defaults");
        let mut missing = Vec::new();
        for section in ["backend", "sandbox", "permissions", "store"] {
            for k in defaults[section].as_table().expect("section").keys() {
                let dotted = format!("{section}.{k}");
                if security_key(&dotted).is_none() && !NOT_SECURITY.iter().any(|(n, _)| *n == dotted) {
                    missing.push(dotted);
                }
            }
        }
        assert!(missing.is_empty(), "classify these as security keys or not: {missing:?}");
        for k in SECURITY_KEYS {
            assert!(crate::config::layers::lookup(&defaults, k.key).is_some(), "{} is not a config key", k.key);
        }
    }
}
