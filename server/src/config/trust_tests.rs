//! Every security key, loosened and tightened from the workspace file and from
//! `initializationOptions`, with and without the user's recorded trust.

use super::security::SECURITY_KEYS;
use super::trust::{sha256_hex, TrustDecision, TrustSource, WorkspaceTrust};
use super::{ConfigInputs, LoadedConfig, Origin, DEFAULT_TOML, WORKSPACE_FILE};
use toml::{Table, Value};

/// The user's own file: strict where the defaults are already the loosest, so a workspace can loosen them.
const USER_FILE: &str = "[sandbox]\nrequire_network_isolation = true\nrequire_write_isolation = true\n";

fn default_value(dotted: &str) -> Value {
    let t: Table = DEFAULT_TOML.parse().expect("defaults");
    let (section, key) = dotted.split_once('.').expect("dotted");
    t[section][key].clone()
}

fn with_extra(dotted: &str, extra: Value) -> Value {
    let mut list = default_value(dotted).as_array().expect("a list").clone();
    list.push(extra);
    Value::Array(list)
}

/// The default list cut to its first entry (a subset: stricter for an allowlist).
fn first_only(dotted: &str) -> Value {
    Value::Array(default_value(dotted).as_array().expect("a list")[..1].to_vec())
}

fn parse(v: &str) -> Value {
    format!("x = {v}").parse::<Table>().expect("toml").remove("x").expect("x")
}

/// (key, a looser value, a stricter value where one exists).
fn cases() -> Vec<(&'static str, Value, Option<Value>)> {
    let extra_rule = parse(r#"{ name = "no-make", programs = ["make"], effect = "changes-system", reason = "r" }"#);
    let extra_path_rule =
        parse(r#"{ name = "no-etc", paths = ["^/etc/"], access = "any", effect = "destroys-data", reason = "r" }"#);
    vec![
        ("backend.url", parse(r#""http://models.evil.example:11434""#), Some(parse(r#""http://localhost:9""#))),
        ("backend.api_key_env", parse(r#""AWS_SECRET_ACCESS_KEY""#), None),
        ("backend.models_dir", parse(r#""./models-from-the-repo""#), None),
        ("backend.ollama_models", parse(r#""./store-from-the-repo""#), None),
        ("models.planner.path", parse(r#""crafted.gguf""#), None),
        ("models.coder.path", parse(r#""crafted.gguf""#), None),
        ("models.critic.path", parse(r#""crafted.gguf""#), None),
        ("models.summarizer.path", parse(r#""crafted.gguf""#), None),
        ("models.planner.name", parse(r#""../../crafted""#), Some(parse(r#""llama3:8b""#))),
        ("models.coder.name", parse(r#""/tmp/crafted""#), Some(parse(r#""user/model:q4""#))),
        ("models.critic.name", parse(r#""~/crafted""#), Some(parse(r#""llama3:8b""#))),
        ("models.summarizer.name", parse(r#""a/../../crafted""#), Some(parse(r#""llama3:8b""#))),
        ("store.dir", parse(r#"".tinycoder-decisions""#), None),
        ("prompts.dir", parse(r#""prompts-from-the-repo""#), None),
        ("permissions.rules", parse("[]"), Some(with_extra("permissions.rules", extra_rule))),
        ("permissions.non_interactive", parse(r#""allow""#), None),
        (
            "permissions.harmless_write_targets",
            with_extra("permissions.harmless_write_targets", parse(r#""/etc/passwd""#)),
            Some(parse(r#"["/dev/null"]"#)),
        ),
        ("permissions.effects", parse(r#"["destroys-data"]"#), None),
        ("permissions.path_rules", parse("[]"), Some(with_extra("permissions.path_rules", extra_path_rule))),
        ("permissions.code_variables", parse("[]"), Some(with_extra("permissions.code_variables", parse(r#""FOO""#)))),
        (
            "permissions.allow",
            with_extra("permissions.allow", parse(r#"{ name = "all-of-busybox", programs = ["busybox"] }"#)),
            Some(first_only("permissions.allow")),
        ),
        (
            "permissions.safe_variables",
            with_extra("permissions.safe_variables", parse(r#""LD_PRELOAD""#)),
            Some(parse(r#"["RUST_LOG"]"#)),
        ),
        (
            "permissions.program_dirs",
            with_extra("permissions.program_dirs", parse(r#""/tmp""#)),
            Some(parse(r#"["/usr/bin"]"#)),
        ),
        ("permissions.writers", parse(r#"{ tee = "last" }"#), None),
        (
            "permissions.in_place_writers",
            with_extra("permissions.in_place_writers", parse(r#""dd""#)),
            Some(parse(r#"["tee"]"#)),
        ),
        (
            "sandbox.env_allowlist",
            with_extra("sandbox.env_allowlist", parse(r#""AWS_SECRET_ACCESS_KEY""#)),
            Some(parse(r#"["PATH"]"#)),
        ),
        ("sandbox.writable_paths", parse(r#"["/"]"#), Some(parse("[]"))),
        ("sandbox.readable_paths", parse(r#"["/"]"#), Some(parse("[]"))),
        ("sandbox.require_network_isolation", parse("false"), None),
        ("sandbox.require_write_isolation", parse("false"), None),
        ("sandbox.wall_timeout_s", parse("100000"), Some(parse("60"))),
        ("sandbox.shell_timeout_s", parse("100000"), Some(parse("10"))),
        ("sandbox.test_timeout_s", parse("0"), Some(parse("30"))),
        ("sandbox.test_timeout_grace_s", parse("100000"), Some(parse("1"))),
        ("sandbox.kill_grace_ms", parse("100000"), Some(parse("100"))),
        ("sandbox.cpu_time_s", parse("0"), Some(parse("60"))),
        ("sandbox.address_space_mb", parse("0"), Some(parse("1024"))),
        ("sandbox.file_size_mb", parse("0"), Some(parse("10"))),
        ("sandbox.max_processes", parse("100000"), Some(parse("16"))),
        ("sandbox.output_cap_kb", parse("100000"), Some(parse("16"))),
        ("sandbox.tmpfs_size_mb", parse("0"), Some(parse("64"))),
    ]
}

fn layer(dotted: &str, value: &Value) -> Table {
    let mut v = value.clone();
    for part in dotted.rsplit('.') {
        let mut t = Table::new();
        t.insert(part.into(), v);
        v = Value::Table(t);
    }
    match v {
        Value::Table(t) => t,
        _ => unreachable!("wrapped in a table above"),
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    ws: std::path::PathBuf,
    user: std::path::PathBuf,
    trust_file: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("ws");
    let user = dir.path().join("user.toml");
    std::fs::write(&user, USER_FILE).expect("user file");
    let trust_file = dir.path().join("trust.json");
    Fixture { ws, user, trust_file, _dir: dir }
}

impl Fixture {
    fn load(&self, workspace_layer: Option<&Table>, editor: Option<&Table>) -> LoadedConfig {
        if let Some(t) = workspace_layer {
            std::fs::write(self.ws.join(WORKSPACE_FILE), toml::to_string(t).expect("toml")).expect("write");
        }
        let inputs = ConfigInputs {
            user_file: Some(self.user.clone()),
            workspace_root: Some(self.ws.clone()),
            env: vec![],
            init_options: editor.map(|t| serde_json::to_value(t).expect("json")),
            trust: WorkspaceTrust::load(&self.trust_file).expect("trust"),
        };
        LoadedConfig::load(&inputs).unwrap_or_else(|e| panic!("load: {e}"))
    }

    fn trusted_value(&self, key: &str) -> Value {
        let inputs = ConfigInputs { user_file: Some(self.user.clone()), ..Default::default() };
        lookup(&LoadedConfig::load(&inputs).expect("load").merged, key)
    }
}

fn lookup(t: &Table, dotted: &str) -> Value {
    super::layers::lookup(t, dotted).cloned().unwrap_or_else(|| panic!("{dotted} is not set"))
}

#[test]
fn the_cases_cover_every_security_key() {
    let covered: Vec<&str> = cases().iter().map(|c| c.0).collect();
    let all: Vec<&str> = SECURITY_KEYS.iter().map(|k| k.key).collect();
    assert_eq!(covered, all);
}

#[test]
fn a_workspace_file_cannot_loosen_any_security_key_without_trust() {
    for (key, looser, _) in cases() {
        let fx = fixture();
        let loaded = fx.load(Some(&layer(key, &looser)), None);
        assert_eq!(lookup(&loaded.merged, key), fx.trusted_value(key), "{key}: the user's value stays");
        assert!(!matches!(loaded.origins.get(key), Some(Origin::WorkspaceFile(_))), "{key}");
        let ignored: Vec<&str> = loaded.trust.ignored.iter().map(|l| l.key.as_str()).collect();
        assert_eq!(ignored, vec![key], "{key}: reported by key");
        assert!(matches!(loaded.trust.ignored[0].origin, Origin::WorkspaceFile(_)));
        assert_eq!(loaded.trust.requests.len(), 1);
        assert_eq!(loaded.trust.requests[0].source, TrustSource::WorkspaceFile);
        let bytes = std::fs::read(fx.ws.join(WORKSPACE_FILE)).expect("read");
        assert_eq!(loaded.trust.requests[0].sha256, sha256_hex(&bytes), "keyed by the file's hash");
    }
}

#[test]
fn editor_settings_cannot_loosen_any_security_key_without_trust() {
    for (key, looser, _) in cases() {
        let fx = fixture();
        let loaded = fx.load(None, Some(&layer(key, &looser)));
        assert_eq!(lookup(&loaded.merged, key), fx.trusted_value(key), "{key}: the user's value stays");
        assert_ne!(loaded.origins.get(key), Some(&Origin::InitializationOptions), "{key}");
        let ignored: Vec<(&str, &Origin)> = loaded.trust.ignored.iter().map(|l| (l.key.as_str(), &l.origin)).collect();
        assert_eq!(ignored, vec![(key, &Origin::InitializationOptions)], "{key}");
        assert_eq!(loaded.trust.requests[0].source, TrustSource::EditorSettings);
    }
}

#[test]
fn tightening_needs_no_trust_from_either_layer() {
    for (key, _, tighter) in cases() {
        let Some(tighter) = tighter else { continue };
        let fx = fixture();
        let loaded = fx.load(Some(&layer(key, &tighter)), None);
        assert_eq!(lookup(&loaded.merged, key), tighter, "{key} from the workspace file");
        assert!(loaded.trust.ignored.is_empty(), "{key}: {:?}", loaded.trust.ignored);
        let loaded = fx.load(None, Some(&layer(key, &tighter)));
        assert_eq!(lookup(&loaded.merged, key), tighter, "{key} from the editor");
        assert!(loaded.trust.ignored.is_empty(), "{key}: {:?}", loaded.trust.ignored);
    }
}

#[test]
fn recorded_trust_applies_loosenings_until_the_file_changes() {
    for (key, looser, _) in cases() {
        let fx = fixture();
        let loaded = fx.load(Some(&layer(key, &looser)), None);
        let request = loaded.trust.requests[0].clone();
        let mut trust = WorkspaceTrust::load(&fx.trust_file).expect("trust");
        trust.record(&fx.ws, request.source, &request.sha256, TrustDecision::Trusted).expect("record");
        let trusted = fx.load(None, None);
        let expected = if key == "permissions.writers" {
            let mut w = default_value(key).as_table().expect("table").clone();
            w.insert("tee".into(), parse(r#""last""#));
            Value::Table(w)
        } else {
            looser.clone()
        };
        assert_eq!(lookup(&trusted.merged, key), expected, "{key}: applied once trusted");
        assert!(trusted.trust.ignored.is_empty(), "{key}");
        assert_eq!(trusted.trust.applied.len(), 1, "{key}: listed as applied");
        // Any change to the file asks again: the old decision no longer covers it.
        let mut changed = layer(key, &looser);
        changed.extend(layer("log.level", &parse(r#""debug""#)));
        let loaded = fx.load(Some(&changed), None);
        assert_eq!(loaded.trust.ignored.len(), 1, "{key}: trust lapses when the file changes");
        assert_eq!(loaded.trust.requests[0].recorded, None);
    }
}

#[test]
fn a_declined_decision_is_remembered_and_still_ignores() {
    let fx = fixture();
    let loaded = fx.load(Some(&layer("permissions.rules", &parse("[]"))), None);
    let r = loaded.trust.requests[0].clone();
    WorkspaceTrust::load(&fx.trust_file)
        .expect("trust")
        .record(&fx.ws, r.source, &r.sha256, TrustDecision::Declined)
        .expect("record");
    let again = fx.load(None, None);
    assert_eq!(again.trust.ignored.len(), 1);
    assert_eq!(again.trust.requests[0].recorded, Some(TrustDecision::Declined));
    assert!(!again.config.permissions.rules.is_empty());
}

#[test]
fn the_users_own_file_and_environment_may_loosen() {
    let fx = fixture();
    std::fs::write(&fx.user, "[permissions]\nnon_interactive = \"allow\"\n").expect("user");
    let inputs = ConfigInputs {
        user_file: Some(fx.user.clone()),
        workspace_root: Some(fx.ws.clone()),
        env: vec![("TINYCODER_BACKEND__URL".into(), "http://gpu-box:11434".into())],
        ..Default::default()
    };
    let loaded = LoadedConfig::load(&inputs).expect("load");
    assert_eq!(loaded.config.permissions.non_interactive, "allow");
    assert_eq!(loaded.config.backend.url, "http://gpu-box:11434");
    assert!(loaded.trust.ignored.is_empty());
}

#[test]
fn the_value_compared_is_the_value_used() {
    // Blank, dotted and padded `store.dir`/`prompts.dir` from the workspace: whatever the trust
    // check lets through opens the store and the prompts exactly where the user's value would.
    for value in [" ", "\t", "./", ".", "  .tinycoder-data ", "./.tinycoder-data/", "~", "/tmp/x"] {
        let fx = fixture();
        let mut t = layer("store.dir", &Value::String(value.into()));
        t.extend(layer("prompts.dir", &Value::String(value.into())));
        let loaded = fx.load(Some(&t), None);
        let users = crate::paths::WorkspacePaths::new(&fx.ws, "").data_dir;
        let used = crate::paths::WorkspacePaths::new(&fx.ws, &loaded.config.store.dir).data_dir;
        assert_eq!(used, users, "store.dir = {value:?}: the user's store");
        assert_eq!(crate::paths::setting_path(&loaded.config.prompts.dir, Some(&fx.ws)), None, "{value:?}");
        let blank = value.trim().is_empty();
        let ignored: Vec<&str> = loaded.trust.ignored.iter().map(|l| l.key.as_str()).collect();
        let want: Vec<&str> = if blank { vec![] } else { vec!["store.dir", "prompts.dir"] };
        assert_eq!(ignored, want, "{value:?}");
    }
}
