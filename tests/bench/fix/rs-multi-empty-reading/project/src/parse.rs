//! One log line at a time.
use crate::error::ParseError;

#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub date: String,
    pub kwh: f64,
}

/// Parses line number `line` (1-based) of a log.
pub fn parse_line(line: usize, text: &str) -> Result<Reading, ParseError> {
    let (date, value) = text.split_once(',').ok_or(ParseError::MissingComma { line })?;
    let value = value.trim();
    let kwh: f64 = value
        .parse()
        .map_err(|_| ParseError::InvalidNumber { line, text: value.to_string() })?;
    Ok(Reading { date: date.trim().to_string(), kwh })
}
