//! Progress tracking for batch imports, rendered as a text bar.
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Progress {
    pub label: String,
    pub done: u64,
    pub total: u64,
    pub failed: u64,
}

impl Progress {
    pub fn new(label: &str, total: u64) -> Self {
        Progress { label: label.to_string(), done: 0, total, failed: 0 }
    }

    pub fn advance(&mut self, ok: bool) {
        self.done = (self.done + 1).min(self.total);
        if !ok {
            self.failed += 1;
        }
    }

    pub fn is_finished(&self) -> bool {
        self.done >= self.total
    }

    /// Whole percent done; an empty batch is complete.
    pub fn percent(&self) -> u64 {
        self.done * 100 / self.total
    }

    /// Remaining time, extrapolated from the time spent so far.
    pub fn eta(&self, elapsed: Duration) -> Option<Duration> {
        if self.done == 0 {
            return None;
        }
        let per_item = elapsed / self.done as u32;
        Some(per_item * (self.total - self.done) as u32)
    }

    pub fn bar(&self, width: usize) -> String {
        let filled = (self.percent() as usize * width) / 100;
        let mut line = format!(
            "{} [{}{}] {:>3}%",
            self.label,
            "#".repeat(filled),
            ".".repeat(width - filled),
            self.percent()
        );
        if self.failed > 0 {
            line.push_str(&format!(" ({} failed)", self.failed));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_way() {
        let mut p = Progress::new("users", 4);
        p.advance(true);
        p.advance(false);
        assert_eq!(p.bar(10), "users [#####.....]  50% (1 failed)");
    }

    #[test]
    fn eta_is_extrapolated() {
        let mut p = Progress::new("x", 4);
        p.advance(true);
        assert_eq!(p.eta(Duration::from_secs(2)), Some(Duration::from_secs(6)));
    }

    #[test]
    fn empty_batch_is_complete() {
        let p = Progress::new("orders", 0);
        assert!(p.is_finished());
        assert_eq!(p.bar(4), "orders [####] 100%");
    }
}
