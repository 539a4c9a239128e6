//! `tinycoder permissions check COMMAND [--json] | list | reset`, and the
//! terminal `HumanPort` used by interactive CLI flows.

use crate::contracts::{StrategyChoice, StrategyKind, StrategyQuestion};
use crate::sandbox::{
    HumanPort, NonInteractiveHuman, PermissionChoice, PermissionPolicy, PermissionRequest, PermissionStore,
    SqlitePermissionStore, StepConfirmation,
};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tinycoder permissions`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do with permissions.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Print the policy's decision for COMMAND and the rule that matched (runs nothing).
    Check {
        /// The shell command line.
        command: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List stored decisions.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete all stored decisions.
    Reset,
}

/// Runs the subcommand. `check` exits 0 when the command is allowed without asking, 3 when dangerous.
pub async fn run(args: Args, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ctx = super::CliContext::load(workspace)?;
    let store = SqlitePermissionStore::new(crate::store::open_workspace(&ctx.workspace, &ctx.loaded.config)?);
    match args.action {
        Action::Check { command, json } => {
            let policy = PermissionPolicy::new(&ctx.loaded.config.permissions, &ctx.workspace)?
                .with_test_command(&ctx.loaded.config.sandbox.test_command);
            let verdict = policy.check(&command);
            let stored = store.get(&command)?;
            if json {
                let v = serde_json::json!({ "command": command, "verdict": verdict, "stored_decision": stored.as_ref().map(|s| s.decision) });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else if verdict.dangerous {
                println!(
                    "dangerous: {} (rule `{}`): {}",
                    verdict.effect.as_deref().unwrap_or("?"),
                    verdict.rule.as_deref().unwrap_or("?"),
                    verdict.reason
                );
                if let Some(sub) = &verdict.sub_command {
                    println!("  in: {sub}");
                }
                if let Some(s) = stored {
                    println!("  stored decision: {}", s.decision.label());
                }
            } else {
                println!("allowed: {}", verdict.reason);
            }
            Ok(if verdict.dangerous { ExitCode::from(3) } else { ExitCode::SUCCESS })
        }
        Action::List { json } => {
            let all = store.list()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&all)?);
            } else if all.is_empty() {
                println!("no stored decisions");
            } else {
                for d in all {
                    println!("{:<13} {:<22} {}", d.decision.label(), d.rule.as_deref().unwrap_or("-"), d.pattern);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Action::Reset => {
            let n = store.reset()?;
            println!("removed {n} stored decision{}", if n == 1 { "" } else { "s" });
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Asks on the terminal (question on stderr, answer on stdin); without a
/// terminal it falls back to the non-interactive policy.
pub struct TerminalHuman {
    fallback: NonInteractiveHuman,
}

impl TerminalHuman {
    /// Falls back to the non-interactive answers of `config`.
    pub fn new(config: &crate::config::Config) -> Self {
        Self { fallback: NonInteractiveHuman::from(config) }
    }
}

/// Reads one line from the terminal after printing `question` on stderr (`None`: no answer).
fn ask_line(question: String) -> Option<String> {
    let mut err = std::io::stderr();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(n) if n > 0 => Some(line.trim().to_string()),
        _ => None,
    }
}

#[async_trait::async_trait]
impl HumanPort for TerminalHuman {
    async fn ask_permission(&self, request: &PermissionRequest) -> PermissionChoice {
        if !std::io::stdin().is_terminal() {
            return self.fallback.ask_permission(request).await;
        }
        let message = request.message();
        tokio::task::spawn_blocking(move || {
            let mut err = std::io::stderr();
            let _ = writeln!(err, "{message}");
            let _ = write!(err, "[o] allow once  [a] allow always  [d] deny  [k] ask always > ");
            let _ = err.flush();
            let mut line = String::new();
            if std::io::stdin().lock().read_line(&mut line).is_err() {
                return PermissionChoice::Deny;
            }
            match line.trim() {
                "o" | "O" => PermissionChoice::AllowOnce,
                "a" | "A" => PermissionChoice::AllowAlways,
                "k" | "K" => PermissionChoice::AskAlways,
                other => PermissionChoice::from_label(other).unwrap_or(PermissionChoice::Deny),
            }
        })
        .await
        .unwrap_or(PermissionChoice::Deny)
    }

    fn asks_a_person(&self) -> bool {
        std::io::stdin().is_terminal()
    }

    fn fixed_strategy(&self) -> Option<StrategyChoice> {
        if std::io::stdin().is_terminal() {
            None
        } else {
            self.fallback.fixed_strategy()
        }
    }

    async fn confirm_step(&self, question: &StepConfirmation) -> bool {
        if !std::io::stdin().is_terminal() {
            return self.fallback.confirm_step(question).await;
        }
        let message = format!("{} [y/N] > ", question.message());
        tokio::task::spawn_blocking(move || ask_line(message).is_some_and(|a| matches!(a.as_str(), "y" | "Y" | "yes")))
            .await
            .unwrap_or(false)
    }

    async fn choose_strategy(&self, question: &StrategyQuestion) -> StrategyChoice {
        if !std::io::stdin().is_terminal() {
            return self.fallback.choose_strategy(question).await;
        }
        let q = question.clone();
        tokio::task::spawn_blocking(move || {
            let mut menu = format!("{}\n", q.message());
            if let Some(diff) = &q.best_diff {
                menu.push_str(&format!("best attempt so far:\n{diff}\n"));
            }
            for (i, k) in StrategyKind::ALL.iter().enumerate() {
                menu.push_str(&format!("  [{}] {}\n", i + 1, k.label()));
            }
            menu.push_str("> ");
            let kind = ask_line(menu)
                .and_then(|a| a.parse::<usize>().ok().and_then(|n| StrategyKind::ALL.get(n.wrapping_sub(1)).copied()))
                .unwrap_or(StrategyKind::Stop);
            let hint =
                (kind == StrategyKind::Hint).then(|| ask_line("your hint or example (one line) > ".into())).flatten();
            kind.choice(hint).unwrap_or(StrategyChoice::Stop)
        })
        .await
        .unwrap_or(StrategyChoice::Stop)
    }
}
