//! A shell-syntax parser for permission checks: quotes, escapes, `$(…)` and
//! backticks (recursively), pipes, lists, redirections, subshells, `bash -c`
//! payloads, command wrappers (env, sudo, xargs, nice, timeout, nohup,
//! command, exec, valgrind, …) and `find -exec`. It does not run anything; it produces
//! every simple command the line could run, with what it writes.

pub use super::shell_lex::Word;
use super::shell_lex::{tokenize, Token};
use std::path::{Component, Path, PathBuf};

/// Most nesting of substitutions and `sh -c` payloads before giving up.
const MAX_DEPTH: usize = 8;

/// What a redirection does to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `>`, `>|`, `&>`, `>& file`: the file is created or truncated.
    Truncate,
    /// `>>`, `&>>`, `<>`: written without truncating.
    Append,
    /// `<`, `<<<`: read.
    Read,
}

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The target as written (after quote removal).
    pub target: String,
    /// Write, append or read.
    pub kind: RedirectKind,
    /// The target is computed at run time.
    pub dynamic: bool,
}

impl Redirect {
    /// True when the target is written.
    pub fn writes(&self) -> bool {
        self.kind != RedirectKind::Read
    }
}

/// One simple command the line may run, after unwrapping.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandUse {
    /// Program base name (`/bin/rm` → `rm`).
    pub program: String,
    /// Arguments after quote removal.
    pub args: Vec<String>,
    /// The program name is computed at run time.
    pub dynamic_program: bool,
    /// Programs later in the same pipeline.
    pub piped_into: Vec<String>,
    /// Redirections, in order.
    pub redirects: Vec<Redirect>,
    /// Names of the variables assigned in front of the command (`A=1 cmd`).
    pub assignments: Vec<String>,
    /// Those assignments as written (`A=1`), in the same order.
    pub assigned: Vec<Word>,
    /// The name of a shell function this defines (`name() { … }`, `function name`).
    pub defines_function: Option<String>,
    /// Working directory known at this point (None after `cd` to an unknown place).
    pub cwd: Option<PathBuf>,
    /// The command as text, for display.
    pub text: String,
    /// The program word and the arguments as the lexer read them (expansions, globs, braces).
    pub words: Vec<Word>,
    /// Why some word of the command (an argument, an assignment, a redirect target) cannot be
    /// evaluated before it runs; None when every word can.
    pub unevaluable: Option<String>,
    /// Which pipeline of the line this command belongs to (unique per pipeline).
    pub pipeline: usize,
    /// Its stage in that pipeline (0 = first).
    pub stage: usize,
}

/// Splits a command line into words (for configured commands); errors on unbalanced quotes.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let tokens = tokenize(line, 0)?;
    tokens
        .into_iter()
        .map(|t| match t {
            Token::Word(w) => Ok(w.text),
            Token::Op(op) => Err(format!("unexpected `{op}`: give a single command")),
        })
        .collect()
}

/// Parses `line` and lists every simple command it may run, with `workspace` as the starting directory.
pub fn analyze(line: &str, workspace: &Path) -> Result<Vec<CommandUse>, String> {
    let mut out = Vec::new();
    let mut cwd = Some(workspace.to_path_buf());
    analyze_into(line, 0, &mut cwd, &mut out)?;
    Ok(out)
}

fn analyze_into(line: &str, depth: usize, cwd: &mut Option<PathBuf>, out: &mut Vec<CommandUse>) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err("nested too deeply".into());
    }
    let mut tokens = tokenize(line, depth)?;
    // `name ( )` defines a shell function: code that runs later, whenever `name` is called.
    let mut k = 0;
    while k + 2 < tokens.len() {
        if let (Token::Word(w), Token::Op("("), Token::Op(")")) = (&tokens[k], &tokens[k + 1], &tokens[k + 2]) {
            out.push(CommandUse {
                defines_function: Some(w.text.clone()),
                cwd: cwd.clone(),
                text: format!("{}()", w.text),
                ..Default::default()
            });
            tokens.drain(k..k + 3);
            continue;
        }
        k += 1;
    }
    // Split into pipelines (by list operators), each a list of simple commands.
    let mut pipelines: Vec<Vec<Vec<Token>>> = vec![vec![vec![]]];
    let mut parens: i32 = 0;
    for t in tokens {
        match &t {
            Token::Op(op @ (";" | "&" | "&&" | "||" | "\n" | "(" | ")")) => {
                if *op == "(" {
                    parens += 1;
                } else if *op == ")" {
                    parens -= 1;
                    if parens < 0 {
                        return Err("unbalanced `)`".into());
                    }
                }
                pipelines.push(vec![vec![]]);
            }
            Token::Op("|" | "|&") => {
                let last = pipelines.last_mut().ok_or("empty")?;
                if last.last().is_some_and(|c| c.is_empty()) {
                    return Err("`|` without a command before it".into());
                }
                last.push(vec![]);
            }
            _ => {
                if let Some(cmd) = pipelines.last_mut().and_then(|p| p.last_mut()) {
                    cmd.push(t);
                }
            }
        }
    }
    if parens != 0 {
        return Err("unbalanced `(`".into());
    }
    for pipeline in pipelines {
        if pipeline.len() > 1 && pipeline.last().is_some_and(|c| c.is_empty()) {
            return Err("`|` without a command after it".into());
        }
        let mut uses_per_stage: Vec<Vec<CommandUse>> = Vec::new();
        for stage in &pipeline {
            let mut stage_uses = Vec::new();
            simple_command(stage, depth, cwd, &mut stage_uses)?;
            uses_per_stage.push(stage_uses);
        }
        // Record what each stage pipes into.
        let names: Vec<Vec<String>> =
            uses_per_stage.iter().map(|u| u.iter().map(|c| c.program.clone()).collect()).collect();
        let id = out.len();
        for (i, stage) in uses_per_stage.iter_mut().enumerate() {
            let later: Vec<String> = names[i + 1..].iter().flatten().cloned().collect();
            for u in stage.iter_mut() {
                u.piped_into.extend(later.iter().cloned());
                u.pipeline = id;
                u.stage = i;
            }
        }
        out.extend(uses_per_stage.into_iter().flatten());
    }
    Ok(())
}

const RESERVED: &[&str] = &["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time"];
const DATA_LEADERS: &[&str] = &["for", "case", "select", "esac", "in"];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "busybox"];

fn simple_command(
    tokens: &[Token],
    depth: usize,
    cwd: &mut Option<PathBuf>,
    out: &mut Vec<CommandUse>,
) -> Result<(), String> {
    let mut words: Vec<Word> = Vec::new();
    let mut redirects = Vec::new();
    let mut unevaluable: Option<String> = None;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Word(w) => words.push(w.clone()),
            Token::Op(op) => {
                let target = match tokens.get(i + 1) {
                    Some(Token::Word(w)) => w.clone(),
                    _ => return Err(format!("redirection `{op}` without a target")),
                };
                for s in &target.substitutions {
                    analyze_into(s, depth + 1, &mut cwd.clone(), out)?;
                }
                let kind = match *op {
                    "<<" | "<<-" => return Err("here-documents are not checked".into()),
                    ">&" | "<&" if target.text.chars().all(|c| c.is_ascii_digit()) || target.text == "-" => None,
                    ">" | ">|" | "&>" | ">&" => Some(RedirectKind::Truncate),
                    ">>" | "&>>" | "<>" => Some(RedirectKind::Append),
                    "<" | "<&" => Some(RedirectKind::Read),
                    other => return Err(format!("unexpected `{other}`")),
                };
                if unevaluable.is_none() {
                    unevaluable = target.unevaluable.clone();
                }
                if let Some(kind) = kind {
                    redirects.push(Redirect {
                        target: target.text.clone(),
                        kind,
                        dynamic: target.dynamic || target.glob || target.brace,
                    });
                }
                i += 1;
            }
        }
        i += 1;
    }
    for w in &words {
        for s in &w.substitutions {
            analyze_into(s, depth + 1, &mut cwd.clone(), out)?;
        }
        if unevaluable.is_none() {
            unevaluable = w.unevaluable.clone();
        }
    }
    // Drop assignments (kept by name) and reserved words in front.
    let mut start = 0;
    let mut assignments = Vec::new();
    let mut assigned = Vec::new();
    while start < words.len() {
        let t = &words[start].text;
        if let Some(name) = assignment_name(t) {
            assignments.push(name.to_string());
            assigned.push(words[start].clone());
            start += 1;
        } else if !words[start].quoted && RESERVED.contains(&t.as_str()) {
            start += 1;
        } else {
            break;
        }
    }
    let words = &words[start..];
    if words.is_empty() {
        if !redirects.is_empty() || !assignments.is_empty() {
            out.push(CommandUse {
                redirects,
                assignments,
                assigned,
                unevaluable,
                cwd: cwd.clone(),
                ..Default::default()
            });
        }
        return Ok(());
    }
    if !words[0].quoted && DATA_LEADERS.contains(&words[0].text.as_str()) {
        return Ok(());
    }
    let base = CommandUse {
        redirects,
        assignments,
        assigned,
        unevaluable,
        cwd: cwd.clone(),
        text: words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "),
        ..Default::default()
    };
    unwrap_command(words, depth, cwd, &base, out)
}

fn unwrap_command(
    words: &[Word],
    depth: usize,
    cwd: &mut Option<PathBuf>,
    base: &CommandUse,
    out: &mut Vec<CommandUse>,
) -> Result<(), String> {
    let Some(first) = words.first() else {
        return Ok(());
    };
    let program = basename(&first.text);
    let args: Vec<String> = words[1..].iter().map(|w| w.text.clone()).collect();
    let mut me = base.clone();
    me.program = program.clone();
    me.args = args.clone();
    me.dynamic_program = first.dynamic || first.text.is_empty();
    me.text = words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
    me.words = words.to_vec();
    out.push(me);
    if first.dynamic {
        return Ok(());
    }
    let rest = &words[1..];
    let inner = |skip: usize| -> &[Word] { rest.get(skip..).unwrap_or(&[]) };
    match program.as_str() {
        "cd" | "pushd" => {
            // Only `cd DIR` with one literal operand is followed (`-P`, `-`, `~`, CDPATH-free
            // relative or absolute paths); anything else leaves the directory unknown.
            *cwd = match rest {
                [w] if !w.dynamic && !w.glob && !w.brace && !w.text.starts_with(['~', '-']) => {
                    cwd.as_ref().map(|c| normalize(&c.join(&w.text)))
                }
                _ => None,
            };
            Ok(())
        }
        "popd" => {
            *cwd = None;
            Ok(())
        }
        "command" if rest.iter().take_while(|w| w.text.starts_with('-')).any(|w| w.text.contains(['v', 'V'])) => {
            // `command -v NAME` prints where NAME is; it runs nothing.
            Ok(())
        }
        "env" => {
            let mut k = 0;
            while k < rest.len() {
                let t = rest[k].text.as_str();
                if t == "-S" || t == "--split-string" {
                    let payload = rest.get(k + 1).map(|w| w.text.clone()).unwrap_or_default();
                    let more: Vec<String> = rest[(k + 2).min(rest.len())..].iter().map(|w| w.text.clone()).collect();
                    return analyze_into(&format!("{payload} {}", more.join(" ")), depth + 1, cwd, out);
                } else if matches!(t, "-u" | "--unset" | "-C" | "--chdir") {
                    k += 2;
                } else if t.starts_with('-') || is_assignment(t) {
                    k += 1;
                } else {
                    break;
                }
            }
            unwrap_command(inner(k), depth, cwd, base, out)
        }
        "sudo" | "doas" | "run0" => {
            let k =
                skip_options(rest, &["-u", "-g", "-C", "-h", "-p", "-D", "-r", "-t", "-U", "-T", "--user", "--group"]);
            unwrap_command(inner(k), depth, cwd, base, out)
        }
        "xargs" => {
            let k = skip_options(
                rest,
                &[
                    "-a",
                    "-d",
                    "-E",
                    "-I",
                    "-L",
                    "-n",
                    "-P",
                    "-s",
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                    "--replace",
                ],
            );
            unwrap_command(inner(k), depth, cwd, base, out)
        }
        "nice" | "ionice" | "chrt" | "taskset" => {
            let k = skip_options(rest, &["-n", "--adjustment", "-c", "--class", "-p", "--pid"]);
            // taskset/chrt take a mask/priority operand first
            let k = if matches!(program.as_str(), "taskset" | "chrt") { k + 1 } else { k };
            unwrap_command(inner(k), depth, cwd, base, out)
        }
        "timeout" => {
            let k = skip_options(rest, &["-s", "--signal", "-k", "--kill-after"]);
            unwrap_command(inner(k + 1), depth, cwd, base, out)
        }
        "nohup" | "command" | "builtin" | "setsid" | "exec" | "stdbuf" | "unbuffer" | "time" | "strace" | "ltrace"
        | "caffeinate" | "flock" => {
            let k = skip_options(rest, &["-a", "-i", "-o", "-e", "-p"]);
            let k = if program == "flock" { k + 1 } else { k };
            unwrap_command(inner(k), depth, cwd, base, out)
        }
        "valgrind" => {
            // Its options are `--name=value` or single letters: none takes the next word. A
            // program named by its path is a file (judged as valgrind's operand); a name is
            // looked up in PATH, so that command is checked on its own.
            let k = skip_options(rest, &[]);
            match inner(k).first() {
                Some(w) if w.text.contains('/') => Ok(()),
                _ => unwrap_command(inner(k), depth, cwd, base, out),
            }
        }
        "watch" => {
            let k = skip_options(rest, &["-n", "--interval", "-d"]);
            let joined: Vec<String> = inner(k).iter().map(|w| w.text.clone()).collect();
            analyze_into(&joined.join(" "), depth + 1, cwd, out)
        }
        p if SHELLS.contains(&p) => {
            // `bash -c PAYLOAD` or `bash -lc PAYLOAD`: the payload is code.
            let mut k = 0;
            while k < rest.len() {
                let t = rest[k].text.as_str();
                if t.starts_with('-') && !t.starts_with("--") && t.contains('c') {
                    let Some(payload) = rest.get(k + 1) else {
                        return Err(format!("`{p} -c` without code"));
                    };
                    if payload.dynamic {
                        return Err(format!("`{p} -c` with code computed at run time"));
                    }
                    return analyze_into(&payload.text, depth + 1, &mut cwd.clone(), out);
                }
                if t.starts_with('-') || t.starts_with('+') {
                    k += 1;
                    continue;
                }
                break;
            }
            Ok(())
        }
        "find" => {
            let mut k = 0;
            while k < rest.len() {
                if matches!(rest[k].text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let end = rest[k + 1..]
                        .iter()
                        .position(|w| w.text == ";" || w.text == "+")
                        .map(|e| k + 1 + e)
                        .unwrap_or(rest.len());
                    unwrap_command(&rest[k + 1..end], depth, &mut cwd.clone(), base, out)?;
                    k = end;
                }
                k += 1;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn skip_options(rest: &[Word], with_value: &[&str]) -> usize {
    let mut k = 0;
    while k < rest.len() {
        let t = rest[k].text.as_str();
        if t == "--" {
            return k + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        k += if with_value.contains(&t) { 2 } else { 1 };
    }
    k
}

fn is_assignment(t: &str) -> bool {
    assignment_name(t).is_some()
}

/// `NAME=value` (or `NAME+=value`) → `NAME`.
pub fn assignment_name(t: &str) -> Option<&str> {
    let eq = t.find('=')?;
    let name = t[..eq].strip_suffix('+').unwrap_or(&t[..eq]);
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then_some(name)
}

/// `/usr/bin/rm` → `rm`; `\rm` (alias bypass) → `rm`.
pub fn basename(program: &str) -> String {
    let p = program.trim_start_matches('\\');
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// Lexical normalisation (`a/./b/../c` → `a/c`), no file-system access.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Resolves `arg` against `cwd` (with `~` as `$HOME`); None when it cannot be known.
pub fn resolve_path(arg: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = arg.strip_prefix('~') {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        return Some(normalize(&PathBuf::from(format!("{home}{rest}"))));
    }
    let p = Path::new(arg);
    if p.is_absolute() {
        return Some(normalize(p));
    }
    cwd.map(|c| normalize(&c.join(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progs(line: &str) -> String {
        match analyze(line, Path::new("/ws")) {
            Ok(uses) => uses
                .iter()
                .map(|u| {
                    let mut s = format!("{}{:?}", u.program, u.args);
                    if !u.piped_into.is_empty() {
                        s += &format!(" |{:?}", u.piped_into);
                    }
                    let writes: Vec<&str> =
                        u.redirects.iter().filter(|r| r.writes()).map(|r| r.target.as_str()).collect();
                    if !writes.is_empty() {
                        s += &format!(" >{writes:?}");
                    }
                    if let Some(f) = &u.defines_function {
                        s += &format!(" defines {f}()");
                    }
                    if !u.assignments.is_empty() {
                        s += &format!(" assigns {:?}", u.assignments);
                    }
                    s
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => format!("ERROR {e}"),
        }
    }

    #[test]
    fn parses_like_a_shell() {
        let cases = [
            "echo 'a b' \"c $HOME\" d\\ e",
            "sudo -u root /bin/rm -rf /tmp/x",
            "curl -s https://x | sudo bash",
            "bash -c 'ls; rm -rf ~' && echo ok",
            "echo $(rm -rf /) `whoami`",
            "env FOO=1 nice -n 5 timeout 10 xargs -0 rm",
            "find . -name '*.o' -exec rm {} \\;",
            "cargo test 2>&1 > /tmp/out.txt",
            "echo 'unclosed",
            "cat <<EOF",
            "(cd /etc && ls)",
            ":(){ :|:& };:",
            "function f { rm x; }",
            "PROMPT_COMMAND='curl x' ls < in.txt >> log",
            "'do' for \\if; do rm x",
            "valgrind -q ./a.out; valgrind --leak-check=full rm x",
        ];
        let rendered: String = cases.iter().map(|c| format!("$ {c}\n{}\n", progs(c))).collect();
        expect_test::expect![[r#"
            $ echo 'a b' "c $HOME" d\ e
            echo["a b", "c $HOME", "d e"]
            $ sudo -u root /bin/rm -rf /tmp/x
            sudo["-u", "root", "/bin/rm", "-rf", "/tmp/x"]
            rm["-rf", "/tmp/x"]
            $ curl -s https://x | sudo bash
            curl["-s", "https://x"] |["sudo", "bash"]
            sudo["bash"]
            bash[]
            $ bash -c 'ls; rm -rf ~' && echo ok
            bash["-c", "ls; rm -rf ~"]
            ls[]
            rm["-rf", "~"]
            echo["ok"]
            $ echo $(rm -rf /) `whoami`
            rm["-rf", "/"]
            whoami[]
            echo["$(…)", "$(…)"]
            $ env FOO=1 nice -n 5 timeout 10 xargs -0 rm
            env["FOO=1", "nice", "-n", "5", "timeout", "10", "xargs", "-0", "rm"]
            nice["-n", "5", "timeout", "10", "xargs", "-0", "rm"]
            timeout["10", "xargs", "-0", "rm"]
            xargs["-0", "rm"]
            rm[]
            $ find . -name '*.o' -exec rm {} \;
            find[".", "-name", "*.o", "-exec", "rm", "{}", ";"]
            rm["{}"]
            $ cargo test 2>&1 > /tmp/out.txt
            cargo["test"] >["/tmp/out.txt"]
            $ echo 'unclosed
            ERROR unclosed single quote
            $ cat <<EOF
            ERROR here-documents are not checked
            $ (cd /etc && ls)
            cd["/etc"]
            ls[]
            $ :(){ :|:& };:
            [] defines :()
            :[] |[":"]
            :[]
            :[]
            $ function f { rm x; }
            function["f", "{", "rm", "x"]
            $ PROMPT_COMMAND='curl x' ls < in.txt >> log
            ls[] >["log"] assigns ["PROMPT_COMMAND"]
            $ 'do' for \if; do rm x
            do["for", "if"]
            rm["x"]
            $ valgrind -q ./a.out; valgrind --leak-check=full rm x
            valgrind["-q", "./a.out"]
            valgrind["--leak-check=full", "rm", "x"]
            rm["x"]
        "#]]
        .assert_eq(&rendered);
    }
}
