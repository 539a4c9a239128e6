//! Long-term memory: retrieval and the write policy engine.
