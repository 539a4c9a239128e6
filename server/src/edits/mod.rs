//! Parsing model output into edits, applying them with tolerant matching, diffs.
