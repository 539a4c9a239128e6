//! Distance units as written in trip logs.
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Metres,
    Miles,
}

impl FromStr for Unit {
    type Err = String;

    fn from_str(s: &str) -> Result<Unit, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "m" => Ok(Unit::Metres),
            "mi" => Ok(Unit::Miles),
            other => Err(format!("unknown unit `{other}`")),
        }
    }
}

impl Unit {
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Metres => "m",
            Unit::Miles => "mi",
        }
    }
}
