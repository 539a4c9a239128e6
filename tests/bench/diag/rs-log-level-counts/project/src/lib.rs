//! Statistics over server log lines: `2024-05-01T10:00:00Z LEVEL component: message`.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    pub fn parse(word: &str) -> Option<Level> {
        match word {
            "DEBUG" => Some(Level::Debug),
            "INFO" => Some(Level::Info),
            "WARN" | "WARNING" => Some(Level::Warn),
            "ERROR" => Some(Level::Error),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry<'a> {
    pub timestamp: &'a str,
    pub level: Level,
    pub component: &'a str,
    pub message: &'a str,
}

pub fn parse_line(line: &str) -> Option<Entry<'_>> {
    let mut parts = line.splitn(3, ' ');
    let timestamp = parts.next()?;
    let level = Level::parse(parts.next()?)?;
    let (component, message) = parts.next()?.split_once(": ")?;
    Some(Entry { timestamp, level, component, message })
}

/// How many lines of each level; lines that do not parse are not counted.
pub fn count_levels(log: &str) -> HashMap<Level, usize> {
    let mut counts = HashMap::new();
    for entry in log.lines().filter_map(parse_line) {
        *counts.entry(entry.level).or_insert(0) += 1;
    }
    counts
}

/// Components with at least one error, with their error count, by name.
pub fn noisy_components(log: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for entry in log.lines().filter_map(parse_line).filter(|e| e.level == Level::Error) {
        *out.entry(entry.component.to_string()).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
2024-05-01T10:00:00Z INFO api: started on :8080
2024-05-01T10:00:02Z DEBUG db: pool size 8
2024-05-01T10:01:13Z WARN api: slow request /orders 1.9s
2024-05-01T10:02:40Z ERROR db: connection reset
garbage line
2024-05-01T10:02:41Z ERROR db: retry failed
2024-05-01T10:03:00Z ERROR mailer: smtp timeout
2024-05-01T10:03:05Z INFO api: healthy";

    #[test]
    fn counts_each_level_and_skips_garbage() {
        let counts = count_levels(LOG);
        assert_eq!(counts.get(&Level::Info), Some(&2));
        assert_eq!(counts.get(&Level::Debug), Some(&1));
        assert_eq!(counts.get(&Level::Warn), Some(&1));
        assert_eq!(counts.get(&Level::Error), Some(&3));
        assert_eq!(counts.values().sum::<usize>(), 7);
    }

    #[test]
    fn noisy_components_by_name() {
        let noisy: Vec<_> = noisy_components(LOG).into_iter().collect();
        assert_eq!(noisy, vec![("db".to_string(), 2), ("mailer".to_string(), 1)]);
    }
}
