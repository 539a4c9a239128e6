//! Fuzzing the shell parser and the permission policy with proptest: random
//! shell-shaped lines and arbitrary Unicode must never panic, and putting a
//! dangerous command (one that parses) inside a list, a subshell, a substitution or `bash -c`
//! never makes it safe. `TINYCODER_FUZZ_CASES` sets how many inputs the
//! crash count runs (default 20,000; the figure in docs/benchmarks.md used more).

use super::permission::PermissionPolicy;
use super::shell_parse::analyze;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use std::path::Path;

/// Pieces of shell syntax (and some noise) that random lines are built from.
const PIECES: &[&str] = &[
    "rm",
    "-rf",
    " ",
    " ",
    " ",
    "'",
    "\"",
    "$(",
    ")",
    "`",
    "|",
    "||",
    "&&",
    ";",
    "&",
    "(",
    "{",
    "}",
    "<",
    ">",
    ">>",
    "<<",
    "<<<",
    "<(",
    ">(",
    "$",
    "${",
    "$((",
    "))",
    "\\",
    "\n",
    "#",
    "=",
    "a",
    "/",
    "~",
    "*",
    "..",
    "bash -c ",
    "sh -c '",
    "env ",
    "sudo ",
    "xargs ",
    "timeout 5 ",
    "find . -exec ",
    "\\;",
    "f()",
    "function ",
    "2>&1",
    ">&",
    "/dev/null",
    "/dev/sda",
    "/dev/tcp/x/1",
    "README.md",
    "x=1",
    "PROMPT_COMMAND=",
    "export ",
    "cd ",
    "-",
    "--",
    "é",
    "😀",
    "\u{0}",
    "\t",
    "case ",
    ";;",
    "esac",
    "if ",
    "then ",
    "fi",
    "for i in 1; do ",
    "done",
    "!",
    "%",
    "^",
];

fn shell_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.concat()),
        1 => any::<String>(),
        1 => "[ -~]{0,120}",
    ]
}

/// Contexts a dangerous command may be put in.
const WRAPPERS: &[&str] = &[
    "ls; {}",
    "true && {}",
    "false || {}",
    "({})",
    "echo $( {} )",
    "echo `{}`",
    "{ {}; }",
    "if true; then {}; fi",
    "while false; do {}; done",
    "{} &",
    "bash -c '{}'",
    "FOO=1 {}",
    "{} | cat",
    "cat x | {}",
    "cat <({})",
];

/// The corpus's dangerous lines that parse (the lines that fail to parse are dangerous for that alone).
fn dangerous_lines_that_parse() -> Vec<String> {
    include_str!("../../../tests/permissions/dangerous.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter(|l| analyze(l, Path::new("/home/dev/project")).is_ok())
        .map(str::to_string)
        .collect()
}

/// A workspace holding the files the corpus names (some checks look at which files exist).
fn workspace() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/permissions/workspace_files.txt");
        let list = std::fs::read_to_string(list).expect("the corpus workspace's file list");
        for f in list.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("dir");
            std::fs::write(p, "data\n").expect("write");
        }
        dir
    })
    .path()
}

fn policy() -> &'static PermissionPolicy {
    static POLICY: std::sync::OnceLock<PermissionPolicy> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        let config = crate::config::LoadedConfig::load(&Default::default()).expect("defaults").config;
        PermissionPolicy::new(&config.permissions, workspace()).expect("policy")
    })
}

/// Runs `cases` random lines through the parser and the policy, each under
/// `catch_unwind`; returns the lines that panicked.
fn crashes(cases: u32) -> Vec<String> {
    let policy = policy();
    let mut runner = TestRunner::new(Config { cases, ..Config::default() });
    let strategy = shell_line();
    let mut crashed = Vec::new();
    for _ in 0..cases {
        let line = strategy.new_tree(&mut runner).expect("a value").current();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = analyze(&line, Path::new("/home/dev/project"));
            policy.check(&line)
        }));
        if outcome.is_err() {
            crashed.push(line);
        }
    }
    crashed
}

#[test]
fn random_lines_never_crash_the_parser_or_the_policy() {
    let cases = std::env::var("TINYCODER_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let started = std::time::Instant::now();
    let crashed = crashes(cases);
    eprintln!("shell parser fuzz: {cases} inputs, {} crashed, {:.1} s", crashed.len(), started.elapsed().as_secs_f64());
    assert!(crashed.is_empty(), "inputs that crashed: {crashed:?}");
}

proptest! {
    #![proptest_config(Config { cases: 2_000, ..Config::default() })]

    #[test]
    fn wrapping_a_dangerous_command_never_makes_it_safe(
        line in prop::sample::select(dangerous_lines_that_parse()),
        wrappers in prop::collection::vec(0..WRAPPERS.len(), 1..4),
    ) {
        let p = policy();
        prop_assert!(p.check(&line).dangerous, "{:?}", line);
        let mut wrapped = line.clone();
        for w in wrappers {
            // Quotes and backticks do not nest: such a wrapper makes a different command.
            if ['\'', '`'].iter().any(|q| WRAPPERS[w].contains(*q) && wrapped.contains(*q)) {
                continue;
            }
            wrapped = WRAPPERS[w].replace("{}", &wrapped);
        }
        prop_assert!(p.check(&wrapped).dangerous, "{:?} is safe, {:?} is not", wrapped, line);
    }

    #[test]
    fn quoted_words_come_back_as_written(words in prop::collection::vec("[a-z0-9 ./_-]{0,8}", 1..6)) {
        let line: String = words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" ");
        let uses = analyze(&line, Path::new("/ws")).expect("quoted words parse");
        prop_assert_eq!(uses[0].args.clone(), words[1..].to_vec());
    }
}
