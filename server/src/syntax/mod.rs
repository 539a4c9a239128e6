//! tree-sitter languages (a registry), parsing, symbols, syntax check of a candidate file.
