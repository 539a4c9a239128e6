use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum ParseError {
    MissingComma { line: usize },
    InvalidNumber { line: usize, text: String },
    Decreasing { line: usize },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::MissingComma { line } => write!(f, "line {line}: expected `date,reading`"),
            ParseError::InvalidNumber { line, text } => write!(f, "line {line}: `{text}` is not a number"),
            ParseError::Decreasing { line } => write!(f, "line {line}: reading lower than the previous one"),
        }
    }
}
