//! Code blocks in a model's reply: fences and chatter stripped.

/// One fenced (or bare) block of code in a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    /// The fence's info string (`python`, `rust`, …), lower-cased; empty when none.
    pub lang: String,
    /// The code, without the fence lines.
    pub body: String,
}

/// The fenced code blocks of `reply`, in order. An unterminated last fence runs
/// to the end of the reply (a reply cut by the token cap still yields its code).
pub fn code_blocks(reply: &str) -> Vec<CodeBlock> {
    let mut out = Vec::new();
    let mut current: Option<(String, Vec<&str>, usize)> = None;
    for line in reply.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match &mut current {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    current = Some((info.trim().to_lowercase(), Vec::new(), indent));
                }
            }
            Some((lang, body, fence_indent)) => {
                if trimmed.starts_with("```") && trimmed.trim_end().trim_start_matches('`').is_empty() {
                    out.push(CodeBlock { lang: std::mem::take(lang), body: dedent_by(body, *fence_indent) });
                    current = None;
                } else {
                    body.push(line);
                }
            }
        }
    }
    if let Some((lang, body, indent)) = current {
        if !body.is_empty() {
            out.push(CodeBlock { lang, body: dedent_by(&body, indent) });
        }
    }
    out
}

/// The code of `reply`: its fenced blocks joined, or, with no fence at all, the
/// reply from its first line that looks like code (leading prose dropped).
pub fn reply_code(reply: &str) -> Option<String> {
    let blocks: Vec<CodeBlock> = code_blocks(reply).into_iter().filter(|b| !b.body.trim().is_empty()).collect();
    if !blocks.is_empty() {
        return Some(blocks.iter().map(|b| b.body.as_str()).collect::<Vec<_>>().join("\n\n"));
    }
    let lines: Vec<&str> = reply.lines().collect();
    let start = lines.iter().position(|l| looks_like_code_start(l))?;
    let code = lines[start..].join("\n");
    (!code.trim().is_empty()).then_some(code)
}

fn looks_like_code_start(line: &str) -> bool {
    const STARTS: [&str; 16] = [
        "def ",
        "async def ",
        "class ",
        "import ",
        "from ",
        "@",
        "fn ",
        "pub ",
        "impl ",
        "use ",
        "struct ",
        "enum ",
        "#[",
        "trait ",
        "mod ",
        "const ",
    ];
    let t = line.trim_start();
    STARTS.iter().any(|s| t.starts_with(s))
}

/// Removes `n` columns of indentation shared with the fence (a fence inside a list item).
fn dedent_by(lines: &[&str], n: usize) -> String {
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for l in lines {
        let ws = l.len() - l.trim_start().len();
        out.push(&l[ws.min(n)..]);
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_with_chatter_and_unterminated_fence() {
        let reply = "Here is the fix:\n```python\ndef f():\n    return 1\n```\nAnd also\n```\nx = 2\n";
        let b = code_blocks(reply);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].lang, "python");
        assert_eq!(b[0].body, "def f():\n    return 1\n");
        assert_eq!(b[1].body, "x = 2\n");
    }

    #[test]
    fn bare_code_after_prose() {
        let reply = "Sure! The bug is the minus sign.\ndef add(a, b):\n    return a + b\n";
        assert_eq!(reply_code(reply).unwrap(), "def add(a, b):\n    return a + b");
        assert_eq!(reply_code("I cannot help with that."), None);
    }

    #[test]
    fn indented_fence_is_dedented() {
        let reply = "1. Change it:\n   ```rust\n   fn f() {}\n   ```\n";
        assert_eq!(code_blocks(reply)[0].body, "fn f() {}\n");
    }

    #[test]
    fn empty_fence_is_no_code() {
        assert_eq!(reply_code("```python\n```\nThe function is fine."), None);
    }

    #[test]
    fn blank_lines_stay_inside_a_block() {
        let blocks = code_blocks("```python\ndef f():\n\n    return 1\n```\n");
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].body, "def f():\n\n    return 1\n");
    }

    #[test]
    fn a_fence_indented_in_a_list_loses_only_its_own_indentation() {
        let blocks = code_blocks("1. Change it:\n   ```python\n   if x:\n       y()\nz = 1\n   ```\n");
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].body, "if x:\n    y()\nz = 1\n");
    }
}
