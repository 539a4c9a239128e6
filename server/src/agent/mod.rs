//! The runtime loop (router, coder, critic, checks). Never imports `lsp`.
