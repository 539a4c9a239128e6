//! Timeout settings for the job runner.
pub mod duration;

use duration::parse_duration;

#[derive(Debug, PartialEq)]
pub struct Timeouts {
    pub connect_secs: u64,
    pub job_secs: u64,
}

/// Reads `key = value` lines; unknown keys are ignored, missing ones keep their defaults.
pub fn parse_timeouts(text: &str) -> Result<Timeouts, String> {
    let mut t = Timeouts { connect_secs: 10, job_secs: 3600 };
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (key, value) = line.split_once('=').ok_or_else(|| format!("expected key = value: {line}"))?;
        let secs = || parse_duration(value.trim()).map_err(|e| format!("{}: {e}", key.trim()));
        match key.trim() {
            "connect" => t.connect_secs = secs()?,
            "job" => t.job_secs = secs()?,
            _ => {}
        }
    }
    Ok(t)
}
