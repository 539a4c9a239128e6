//! `key = value` configuration with typed defaults.

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub user_agent: String,
    pub timeout_ms: u64,
    pub backoff_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { user_agent: "feedsync/0.1".into(), timeout_ms: 5_000, backoff_ms: 200 }
    }
}

impl Config {
    /// Parses the config text; `#` starts a comment, unknown keys are errors.
    pub fn parse(text: &str) -> Result<Config, String> {
        let mut cfg = Config::default();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap().trim();
            if line.is_empty() {
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| format!("line {}: expected key = value", n + 1))?;
            let number = || value.parse::<u64>().map_err(|_| format!("line {}: `{key}` needs a number", n + 1));
            match key {
                "user_agent" => cfg.user_agent = value.to_string(),
                "timeout_ms" => cfg.timeout_ms = number()?,
                "backoff_ms" => cfg.backoff_ms = number()?,
                _ => return Err(format!("line {}: unknown key `{key}`", n + 1)),
            }
        }
        Ok(cfg)
    }
}
