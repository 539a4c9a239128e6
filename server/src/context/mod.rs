//! Context builder and token budget (`can_fit`), drop order, per-file line index.
