//! `[index]`: the workspace index.

use super::Invalid;
use serde::{Deserialize, Serialize};

/// `[index]` settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IndexConfig {
    pub max_file_kb: u64,
    pub debounce_ms: u64,
    pub ready_wait_ms: u64,
    pub commit_delay_ms: u64,
    pub table_save_interval_ms: u64,
    pub writer_memory_mb: u64,
    pub max_copies: usize,
    pub window_lines: usize,
    pub window_overlap_lines: usize,
    pub max_chunk_lines: usize,
    pub minified_line_chars: usize,
    pub generated_markers: Vec<String>,
    pub watch: bool,
    pub repo_map_symbols_per_file: usize,
    pub pagerank_damping: f64,
    pub pagerank_iterations: usize,
    pub identifier_part_weight: f32,
    pub field_tie_breaker: f32,
    pub error_message_weight: f32,
    pub error_type_weight: f32,
    pub error_name_weight: f32,
    pub error_code_weight: f32,
    pub location_weight: f32,
    pub location_decay: f32,
    pub module_weight: f32,
    pub test_rank_factor: f32,
    pub test_query_words: Vec<String>,
    pub query_stop_words: Vec<String>,
    pub max_query_words: usize,
    pub short_query_words: usize,
    pub max_definers: usize,
    pub compound_weight: f32,
    pub compound_max_words: usize,
    pub test_dirs: Vec<String>,
    pub test_file_prefixes: Vec<String>,
    pub test_file_suffixes: Vec<String>,
    pub test_function_prefixes: Vec<String>,
    pub test_attributes: Vec<String>,
    pub name_weights: FieldWeights,
    pub word_weights: FieldWeights,
}

/// `[index.name_weights]`, `[index.word_weights]`: how much a match in each field counts.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FieldWeights {
    pub symbol: f32,
    pub container: f32,
    pub signature: f32,
    pub path: f32,
    pub code: f32,
    pub doc: f32,
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
        if !(1..=16).contains(&self.max_copies) {
            return Err(Invalid::new("index.max_copies", self.max_copies, "from 1 to 16"));
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
        let mut weights = Vec::new();
        for (table, w) in [("name_weights", &self.name_weights), ("word_weights", &self.word_weights)] {
            for (key, v) in [
                ("symbol", w.symbol),
                ("container", w.container),
                ("signature", w.signature),
                ("path", w.path),
                ("code", w.code),
                ("doc", w.doc),
            ] {
                weights.push((format!("index.{table}.{key}"), v));
            }
        }
        for (key, v) in [
            ("index.error_message_weight", self.error_message_weight),
            ("index.error_type_weight", self.error_type_weight),
            ("index.error_name_weight", self.error_name_weight),
            ("index.error_code_weight", self.error_code_weight),
            ("index.location_weight", self.location_weight),
            ("index.module_weight", self.module_weight),
            ("index.compound_weight", self.compound_weight),
        ] {
            weights.push((key.to_string(), v));
        }
        for (key, w) in weights {
            if !(0.0..=1000.0).contains(&w) {
                return Err(Invalid::new(&key, w, "a weight from 0 to 1000"));
            }
        }
        let shares = [
            ("index.identifier_part_weight", self.identifier_part_weight),
            ("index.field_tie_breaker", self.field_tie_breaker),
            ("index.location_decay", self.location_decay),
            ("index.test_rank_factor", self.test_rank_factor),
        ];
        for (key, v) in shares {
            if !(0.0..=1.0).contains(&v) {
                return Err(Invalid::new(key, v, "a number from 0 to 1"));
            }
        }
        if !(2..=8).contains(&self.compound_max_words) {
            return Err(Invalid::new("index.compound_max_words", self.compound_max_words, "from 2 to 8"));
        }
        if self.short_query_words == 0 {
            return Err(Invalid::new("index.short_query_words", 0, "at least 1 word"));
        }
        if self.max_definers == 0 {
            return Err(Invalid::new("index.max_definers", 0, "at least 1 file"));
        }
        if !(1..=256).contains(&self.max_query_words) {
            return Err(Invalid::new("index.max_query_words", self.max_query_words, "from 1 to 256"));
        }
        Ok(())
    }
}
