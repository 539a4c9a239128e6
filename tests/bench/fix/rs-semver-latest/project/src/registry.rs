//! Releases per package and "latest" resolution.
use std::collections::BTreeMap;

use crate::version::Version;

#[derive(Default)]
pub struct Registry {
    releases: BTreeMap<String, Vec<Version>>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn publish(&mut self, package: &str, version: &str) -> Result<(), String> {
        let v: Version = version.parse().map_err(|_| format!("invalid version `{version}`"))?;
        let list = self.releases.entry(package.to_string()).or_default();
        if list.contains(&v) {
            return Err(format!("{package} {v} is already published"));
        }
        list.push(v);
        Ok(())
    }

    /// Newest stable release, or the newest pre-release when `allow_pre`.
    pub fn latest(&self, package: &str, allow_pre: bool) -> Option<&Version> {
        self.releases.get(package)?.iter().filter(|v| allow_pre || !v.is_prerelease()).max()
    }

    /// All releases, oldest first.
    pub fn history(&self, package: &str) -> Vec<String> {
        let mut list: Vec<&Version> = self.releases.get(package).map(|l| l.iter().collect()).unwrap_or_default();
        list.sort();
        list.into_iter().map(|v| v.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(versions: &[&str]) -> Registry {
        let mut r = Registry::new();
        for v in versions {
            r.publish("serde-lite", v).unwrap();
        }
        r
    }

    #[test]
    fn latest_stable_skips_prereleases() {
        let r = registry(&["1.0.0", "1.1.0-rc.1", "1.0.1"]);
        assert_eq!(r.latest("serde-lite", false).unwrap().to_string(), "1.0.1");
        assert_eq!(r.latest("serde-lite", true).unwrap().to_string(), "1.1.0-rc.1");
    }

    #[test]
    fn latest_with_two_digit_minor() {
        let r = registry(&["1.9.0", "1.10.0", "1.2.3"]);
        assert_eq!(r.latest("serde-lite", false).unwrap().to_string(), "1.10.0");
    }

    #[test]
    fn history_is_ordered() {
        let r = registry(&["0.10.1", "0.9.0", "0.10.0", "0.10.0-beta"]);
        assert_eq!(r.history("serde-lite"), ["0.9.0", "0.10.0-beta", "0.10.0", "0.10.1"]);
    }

    #[test]
    fn duplicate_publish_is_rejected() {
        let mut r = registry(&["1.0.0"]);
        assert!(r.publish("serde-lite", "v1.0.0").is_err());
    }
}
