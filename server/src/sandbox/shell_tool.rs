//! The agent's shell tool: permission check → ask the human if dangerous →
//! run in the sandbox (in the shadow tree).

use super::{
    run_sandboxed, HumanPort, PermissionChoice, PermissionPolicy, PermissionRequest, PermissionStore,
    PermissionVerdict, RunOutput, RunSpec, SandboxError, ShadowWorkspace, StoredDecision,
};
use crate::config::SandboxConfig;
use serde::Serialize;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What happened to a shell command.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum ShellOutcome {
    /// It ran (in the sandbox).
    Ran {
        /// The policy's verdict.
        verdict: PermissionVerdict,
        /// The decision that allowed it (None when not dangerous).
        decision: Option<PermissionChoice>,
        /// The run.
        output: RunOutput,
    },
    /// The user (or the stored decision / non-interactive policy) refused it.
    Denied {
        /// The policy's verdict.
        verdict: PermissionVerdict,
        /// True when a stored decision answered without asking.
        from_store: bool,
    },
}

/// The shell tool: the policy, the decision store and the human port.
pub struct ShellTool<'a> {
    /// The policy.
    pub policy: &'a PermissionPolicy,
    /// Stored decisions.
    pub store: &'a dyn PermissionStore,
    /// Who decides.
    pub human: &'a dyn HumanPort,
    /// `[sandbox]` settings.
    pub sandbox: &'a SandboxConfig,
}

impl ShellTool<'_> {
    /// Checks `command`, asks if dangerous, and runs it with `sh -c` in the shadow tree.
    pub async fn run(
        &self,
        command: &str,
        shadow: &ShadowWorkspace,
        cancel: &CancellationToken,
    ) -> Result<ShellOutcome, SandboxError> {
        let verdict = self.policy.check(command);
        let mut decision = None;
        if verdict.dangerous {
            let pattern = command.trim().to_string();
            let stored = self.store.get(&pattern)?.map(|d| d.decision);
            let d = match stored {
                Some(PermissionChoice::AllowAlways) => PermissionChoice::AllowAlways,
                Some(PermissionChoice::Deny) => return Ok(ShellOutcome::Denied { verdict, from_store: true }),
                _ => {
                    let request = PermissionRequest { command: command.to_string(), verdict: verdict.clone() };
                    let answer = self.human.ask_permission(&request).await;
                    // Only a person's answer is remembered: a policy's "deny" in a terminal-less
                    // run must not silence the question the next time someone is there.
                    if answer != PermissionChoice::AllowOnce && self.human.asks_a_person() {
                        // An "ask always" stays stored even when this one answer is allow-once.
                        let keep = if stored == Some(PermissionChoice::AskAlways) {
                            PermissionChoice::AskAlways
                        } else {
                            answer
                        };
                        self.store.put(StoredDecision {
                            pattern,
                            decision: keep,
                            rule: verdict.rule.clone(),
                            decided_at: now(),
                        })?;
                    }
                    answer
                }
            };
            if !d.allows() {
                return Ok(ShellOutcome::Denied { verdict, from_store: false });
            }
            decision = Some(d);
        }
        let args = ["-c".to_string(), command.to_string()];
        let timeout = Duration::from_secs(self.sandbox.shell_timeout_s);
        let spec = RunSpec::in_shadow(self.sandbox, "sh", &args, shadow, timeout)?;
        let output = run_sandboxed(&spec, cancel).await?;
        Ok(ShellOutcome::Ran { verdict, decision, output })
    }
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
