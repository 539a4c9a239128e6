//! Fetches RSS feeds with retries, configured from a small key = value file.
pub mod client;
pub mod config;

pub use client::{Client, FetchError, Transport};
pub use config::Config;
