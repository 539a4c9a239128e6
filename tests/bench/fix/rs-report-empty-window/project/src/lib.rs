//! Uptime reports for monitored services.
pub mod metrics;
pub mod report;

pub use report::{Report, ServiceLine};
