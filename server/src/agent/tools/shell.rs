//! `shell_exec`: a command line through the permission gate and the sandbox
//! (`sandbox::ShellTool`), run in a fresh shadow of the workspace with the
//! plan's pending changes; the shadow is removed afterwards, so nothing it
//! writes reaches the user's files.

use super::{str_arg, Tool, ToolContext, ToolError, ToolOutput};
use crate::agent::plan::LayeredSources;
use crate::agent::{AgentEnv, SourceView};
use crate::sandbox::{
    remove_shadow, shadow_with_overlays, PermissionPolicy, RunEnd, ShellOutcome, ShellTool, SqlitePermissionStore,
};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// Runs one shell command line (`sh -c`) behind the permission gate.
pub(super) struct ShellExec;

#[async_trait::async_trait]
impl Tool for ShellExec {
    fn name(&self) -> &'static str {
        "shell_exec"
    }

    async fn run(
        &self,
        env: &AgentEnv,
        args: &Value,
        ctx: &ToolContext<'_>,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, ToolError> {
        let command = str_arg(self.name(), args, "command")?.trim().to_string();
        if command.is_empty() {
            return Err(ToolError::BadArguments { tool: self.name().into(), reason: "`command` is empty".into() });
        }
        let config = &env.config;
        let policy = PermissionPolicy::new(&config.permissions, &env.paths.root)?
            .with_test_command(&config.sandbox.test_command);
        let store = SqlitePermissionStore::new(env.bus.store().clone());
        let tool = ShellTool { policy: &policy, store: &store, human: env.human.as_ref(), sandbox: &config.sandbox };
        let overlays = LayeredSources::new(env.sources.clone(), ctx.layer_snapshot()).overlays();
        let shadow = shadow_with_overlays(&env.paths, "shell", &overlays).await?;
        let outcome = tool.run(&command, &shadow, cancel).await;
        remove_shadow(shadow).await;
        match outcome? {
            ShellOutcome::Denied { verdict, from_store } => Err(ToolError::Denied {
                command,
                effect: verdict.effect.unwrap_or_else(|| "cannot be checked".into()),
                rule: verdict.rule.unwrap_or_else(|| "?".into()),
                reason: verdict.reason,
                from_store,
            }),
            ShellOutcome::Ran { verdict, decision, output } => {
                let mut text = output.stdout.text;
                if !output.stderr.text.is_empty() {
                    if !text.is_empty() && !text.ends_with('\n') {
                        text.push('\n');
                    }
                    text.push_str(&output.stderr.text);
                }
                let detail = json!({"ran": true, "command": command, "rule": verdict.rule, "decision": decision});
                match output.end {
                    RunEnd::Exited(code) => Ok(ToolOutput {
                        output: text,
                        ok: code == 0,
                        error: (code != 0).then(|| format!("`{command}` exited with code {code}")),
                        exit_code: Some(code),
                        detail,
                    }),
                    RunEnd::Signaled(signal) => Ok(ToolOutput {
                        output: text,
                        ok: false,
                        error: Some(format!("`{command}` was killed by signal {signal}")),
                        exit_code: None,
                        detail,
                    }),
                    RunEnd::TimedOut => {
                        Err(ToolError::ShellTimedOut { command, seconds: config.sandbox.shell_timeout_s })
                    }
                    RunEnd::Cancelled => Err(ToolError::Cancelled),
                }
            }
        }
    }
}
