//! Open documents as ropes, position encodings (UTF-8/16/32), edits, tree-sitter `InputEdit`s.
