//! Workspace walk, chunking, tantivy index with a code tokenizer, incremental updates, repo map.
