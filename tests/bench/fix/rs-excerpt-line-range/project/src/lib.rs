//! Source excerpts with line numbers, for compiler-style error messages.

/// Lines `first..=last` (1-based, inclusive) of `source`, each prefixed by its number.
/// Out-of-range bounds are clamped; `first > last` gives an empty excerpt.
pub fn excerpt(source: &str, first: usize, last: usize) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    let first = first.max(1);
    let last = last.min(lines.len());
    if first > last {
        return Vec::new();
    }
    let width = last.to_string().len();
    (first..last).map(|n| format!("{n:>width$} | {}", lines[n - 1])).collect()
}

/// An excerpt around `line` with `context` lines on either side, and a caret
/// under column `col` (1-based) of the line itself.
pub fn annotate(source: &str, line: usize, col: usize, context: usize, message: &str) -> String {
    let first = line.saturating_sub(context);
    let mut out = Vec::new();
    for text in excerpt(source, first, line + context) {
        let number: usize = text.split('|').next().unwrap().trim().parse().unwrap();
        let gutter = text.find('|').unwrap();
        out.push(text.clone());
        if number == line {
            out.push(format!("{} | {}^ {message}", " ".repeat(gutter - 1), " ".repeat(col.saturating_sub(1))));
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "fn main() {\n    let x = 1;\n    let y = x +;\n    println!(\"{y}\");\n}\n";

    #[test]
    fn excerpt_includes_last_line() {
        assert_eq!(excerpt(SRC, 2, 3), vec!["2 |     let x = 1;", "3 |     let y = x +;"]);
    }

    #[test]
    fn single_line() {
        assert_eq!(excerpt(SRC, 5, 5), vec!["5 | }"]);
    }

    #[test]
    fn clamps_past_the_end() {
        assert_eq!(excerpt(SRC, 4, 99).len(), 2);
        assert!(excerpt(SRC, 9, 3).is_empty());
    }

    #[test]
    fn annotate_points_at_column() {
        let text = annotate(SRC, 3, 16, 1, "expected expression");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[2], "  |                ^ expected expression");
    }
}
