//! Delivery trips: legs with a driving time, and the total a driver may log.

pub mod units;

use units::format_minutes;

#[derive(Debug, Clone, PartialEq)]
pub struct Leg {
    pub from: String,
    pub to: String,
    pub minutes: u32,
}

/// Reads `FROM -> TO, DURATION` lines; blank lines and `#` comments are skipped.
pub fn parse_legs(text: &str) -> Result<Vec<Leg>, String> {
    let mut legs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (route, duration) = line.split_once(',').ok_or(format!("line {}: no duration", n + 1))?;
        let (from, to) = route.split_once("->").ok_or(format!("line {}: no `->`", n + 1))?;
        let minutes = parse_minutes(duration).ok_or(format!("line {}: bad duration `{}`", n + 1, duration.trim()))?;
        legs.push(Leg { from: from.trim().to_string(), to: to.trim().to_string(), minutes });
    }
    Ok(legs)
}

/// Total driving time, and whether it exceeds the daily limit of 9 hours.
pub fn summary(legs: &[Leg]) -> String {
    let total: u32 = legs.iter().map(|l| l.minutes).sum();
    let flag = if total > 9 * 60 { " (over the daily limit)" } else { "" };
    format!("{} legs, {}{flag}", legs.len(), format_minutes(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_legs_with_mixed_durations() {
        let legs = parse_legs("# Monday\nDepot -> Leeds, 1h30m\n\nLeeds -> York, 45m\nYork -> Depot, 2h\n").unwrap();
        assert_eq!(legs.iter().map(|l| l.minutes).collect::<Vec<_>>(), vec![90, 45, 120]);
        assert_eq!(legs[1].to, "York");
        assert_eq!(summary(&legs), "3 legs, 4h15m");
    }

    #[test]
    fn bad_duration_names_the_line() {
        let err = parse_legs("Depot -> Leeds, 1h30m\nLeeds -> York, soon\n").unwrap_err();
        assert_eq!(err, "line 2: bad duration `soon`");
    }

    #[test]
    fn flags_long_days() {
        let legs = parse_legs("A -> B, 5h\nB -> A, 4h01m\n").unwrap();
        assert_eq!(summary(&legs), "2 legs, 9h01m (over the daily limit)");
    }
}
