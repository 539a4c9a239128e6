//! Durations written the way dispatchers type them: `1h30m`, `45m`, `2h`.

/// Minutes in `text`, or None when it is not a duration.
pub fn parse_minutes(text: &str) -> Option<u32> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut total = 0u32;
    let mut digits = String::new();
    for c in text.chars() {
        match c {
            '0'..='9' => digits.push(c),
            'h' | 'm' if !digits.is_empty() => {
                let n: u32 = digits.parse().ok()?;
                total += if c == 'h' { n * 60 } else { n };
                digits.clear();
            }
            _ => return None,
        }
    }
    if digits.is_empty() {
        Some(total)
    } else {
        None
    }
}

/// `1h05m` / `45m`.
pub fn format_minutes(minutes: u32) -> String {
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m}m"),
        (h, m) => format!("{h}h{m:02}m"),
    }
}
