//! Typed contracts and the runtime loop (router, planner, coder, critic). Never imports `lsp`.

pub mod contracts;
