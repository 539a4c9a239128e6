//! Daily electricity meter logs: `date,reading_kwh` lines.
pub mod error;
pub mod parse;
pub mod summary;
