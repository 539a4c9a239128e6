//! `[index]`: the workspace index.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[index]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IndexConfig {
    pub max_file_kb: u64,
    pub debounce_ms: u64,
    pub commit_delay_ms: u64,
    pub table_save_interval_ms: u64,
    pub writer_memory_mb: u64,
    pub window_lines: usize,
    pub window_overlap_lines: usize,
    pub max_chunk_lines: usize,
    pub minified_line_chars: usize,
    pub generated_markers: Vec<String>,
    pub watch: bool,
    pub repo_map_symbols_per_file: usize,
    pub pagerank_damping: f64,
    pub pagerank_iterations: usize,
}

impl IndexConfig {
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        if self.max_file_kb == 0 {
            return Err(Invalid::new("index.max_file_kb", 0, "at least 1 KiB"));
        }
        if self.writer_memory_mb < 15 {
            return Err(Invalid::new(
                "index.writer_memory_mb",
                self.writer_memory_mb,
                "at least 15 MiB (tantivy's minimum)",
            ));
        }
        if !(20..=2000).contains(&self.window_lines) {
            return Err(Invalid::new("index.window_lines", self.window_lines, "from 20 to 2000 lines"));
        }
        if self.window_overlap_lines >= self.window_lines {
            return Err(Invalid::new(
                "index.window_overlap_lines",
                self.window_overlap_lines,
                "fewer than index.window_lines",
            ));
        }
        if self.max_chunk_lines < 10 {
            return Err(Invalid::new("index.max_chunk_lines", self.max_chunk_lines, "at least 10 lines"));
        }
        if !(0.0..1.0).contains(&self.pagerank_damping) {
            return Err(Invalid::new("index.pagerank_damping", self.pagerank_damping, "a number in [0, 1)"));
        }
        Ok(())
    }
}
