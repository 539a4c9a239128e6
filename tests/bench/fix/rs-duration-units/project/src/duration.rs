//! Human durations such as `90s`, `5m`, `1h30m` or `2d`.

/// Seconds in a duration made of `<number><unit>` groups; a bare number means seconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    if text.is_empty() {
        return Err("empty duration".into());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().map_err(|e| format!("{e}"));
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(format!("unknown unit `{c}` in `{text}`")),
        };
        if digits.is_empty() {
            return Err(format!("unit `{c}` without a number in `{text}`"));
        }
        let n: u64 = digits.parse().map_err(|e| format!("{e}"))?;
        total += n * unit;
    }
    if !digits.is_empty() && !text.ends_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!("number without a unit at the end of `{text}`"));
    }
    Ok(total)
}
