//! The language server adapter: the only module that knows LSP types and JSON-RPC.
