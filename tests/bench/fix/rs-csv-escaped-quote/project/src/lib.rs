//! Contact import from CSV exports of address books.
pub mod csv;

#[derive(Debug, PartialEq)]
pub struct Contact {
    pub name: String,
    pub email: String,
    pub note: String,
}

/// Parses `name,email,note` records after a header line; blank lines are skipped.
pub fn import(text: &str) -> Result<Vec<Contact>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let fields = csv::split_record(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        match fields.as_slice() {
            [name, email, note] => out.push(Contact { name: name.clone(), email: email.clone(), note: note.clone() }),
            _ => return Err(format!("line {}: expected 3 fields, got {}", i + 1, fields.len())),
        }
    }
    Ok(out)
}
