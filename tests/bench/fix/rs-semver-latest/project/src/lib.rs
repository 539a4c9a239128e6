//! A tiny package index: published releases and version resolution.
pub mod registry;
pub mod version;

pub use registry::Registry;
pub use version::Version;
