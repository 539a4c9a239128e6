//! Splitting one CSV record (RFC 4180 quoting, no embedded newlines).

/// Fields of `line`. A field may be quoted with `"`; inside quotes a comma is
/// literal and a doubled quote `""` stands for one `"`.
pub fn split_record(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut in_quotes = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' => in_quotes = false,
                _ => field.push(c),
            }
        } else {
            match c {
                ',' => fields.push(std::mem::take(&mut field)),
                '"' if field.is_empty() => in_quotes = true,
                '"' => return Err(format!("stray quote in unquoted field `{field}`")),
                _ => field.push(c),
            }
        }
    }
    if in_quotes {
        return Err("unterminated quoted field".into());
    }
    fields.push(field);
    Ok(fields)
}

/// Quotes a field when it needs it, for writing records back.
pub fn quote(field: &str) -> String {
    if field.contains([',', '"']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}
