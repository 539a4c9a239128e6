//! Events in words: the one projection of a task's events that the CLI prints
//! and the editor shows as progress, so both say the same thing.

use crate::contracts::{EventType, RuntimeEvent};
use serde_json::Value;

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn n(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// One line about `event` for a person following the task, or `None` for events not worth a line.
pub fn describe_event(event: &RuntimeEvent) -> Option<String> {
    let p = &event.payload;
    Some(match event.event_type {
        EventType::TaskReceived => format!("task {}: {}", short(&event.task_id), s(p, "input")),
        EventType::ToolCalled if p["registry"] == true && s(p, "tool") == "shell_exec" => {
            format!("running `{}` in a sandboxed copy", s(&p["arguments"], "command"))
        }
        EventType::ToolCalled if p["registry"] == true => return None,
        EventType::ToolCompleted if p["registry"] == true && s(p, "tool") == "shell_exec" => {
            match (p["exit_code"].as_i64(), s(p, "outcome")) {
                (Some(code), _) => format!("  the command exited with code {code}"),
                (None, "denied") => "  not run: permission denied".into(),
                (None, _) => format!("  the command did not run to its end: {}", s(p, "error")),
            }
        }
        EventType::ToolCompleted if p["registry"] == true => return None,
        EventType::ToolCalled if s(p, "purpose") == "whole_patch" => {
            "running the tests with every step's changes".into()
        }
        EventType::ToolCompleted if s(p, "purpose") == "whole_patch" => {
            let verdict = if p["success"] == true { "passed" } else { "failed" };
            format!("the whole patch's checks {verdict}: {}", s(p, "why"))
        }
        EventType::ToolCalled if s(p, "tool") == "run_tests" && s(p, "purpose") == "baseline" => {
            "running the project's tests in a sandboxed copy".into()
        }
        EventType::ToolCalled if s(p, "tool") == "run_tests" => {
            format!("attempt {}: running the tests with the edit", n(p, "attempt"))
        }
        EventType::ToolCalled if s(p, "tool") == "locate" => "finding the code to change".into(),
        EventType::StatusChanged if s(p, "status") == "planning" => {
            format!("planning: {}", p["route"]["reason"].as_str().unwrap_or("the request spans files"))
        }
        EventType::LlmCalled if s(p, "role") == "planner" => {
            format!("the planner splits the request (try {})", n(p, "attempt"))
        }
        EventType::LlmResultReceived if s(p, "role") == "planner" && p["valid"] == false => {
            format!("  the plan cannot be used: {}", s(p, "error"))
        }
        EventType::LlmResultReceived if s(p, "role") == "planner" => format!("  a plan of {} step(s)", n(p, "steps")),
        EventType::PlanCreated => {
            let steps = p["plan"].as_array().map(|a| a.len()).unwrap_or(0);
            let route = p["route"]["reason"].as_str().unwrap_or("");
            format!("plan: {steps} step(s) ({route})")
        }
        EventType::StepStarted => {
            let what = match p["command"].as_str() {
                Some(c) => format!("`{c}`"),
                None => s(p, "file").to_string(),
            };
            format!("step {}: {} {what}: {}", s(p, "step_id"), s(p, "action"), s(p, "description"))
        }
        EventType::ToolCompleted if s(p, "tool") == "step" => {
            let verdict = if p["ok"] == true { "done" } else { "failed" };
            format!("step {} {verdict}: {}", s(p, "step_id"), s(p, "summary"))
        }
        EventType::ToolCompleted if s(p, "tool") == "run_tests" && s(p, "purpose") == "baseline" => {
            if p["ok"] == false {
                format!("no tests to run: {}", s(p, "why"))
            } else if p["passed"] == true {
                format!("tests pass before any change (`{}`, chosen: {})", s(p, "command"), s(p, "why"))
            } else {
                let failing = p["failing"].as_array().map(|a| a.len()).unwrap_or(0);
                format!("{failing} test(s) fail before any change (`{}`, chosen: {})", s(p, "command"), s(p, "why"))
            }
        }
        EventType::ToolCompleted if s(p, "tool") == "run_tests" => {
            let verdict = if p["success"] == true { "passed" } else { "failed" };
            format!("attempt {}: checks {verdict}: {}", n(p, "attempt"), s(p, "why"))
        }
        EventType::ToolCompleted if s(p, "tool") == "locate" => {
            if p["ok"] == true {
                let lines = &p["lines"];
                format!("editing {}:{}-{} ({})", s(p, "path"), lines[0], lines[1], s(p, "why"))
            } else {
                format!("could not find the code to change: {}", s(p, "error"))
            }
        }
        EventType::CoderCalled => {
            format!("attempt {}: the coder writes an edit of {} ({})", n(p, "attempt"), s(p, "file"), s(p, "format"))
        }
        EventType::LlmCalled if p.get("prompt_tokens").is_some() => {
            format!("  {} ({}): {} prompt tokens", s(p, "model"), s(p, "role"), n(p, "prompt_tokens"))
        }
        EventType::LlmResultReceived if p["ok"] == false => format!("  the model call failed: {}", s(p, "error")),
        EventType::LlmResultReceived => format!("  reply in {:.1} s", n(p, "duration_ms") as f64 / 1000.0),
        EventType::CoderCompleted if p["ok"] == false => format!("  the reply could not be used: {}", s(p, "error")),
        EventType::CoderCompleted => {
            let names: Vec<&str> = p["changed_symbols"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            format!("  edit applied and parsed ({})", if names.is_empty() { "-".to_string() } else { names.join(", ") })
        }
        EventType::CriticCalled => format!("the critic ({}) reviews the patch", s(p, "model")),
        EventType::CriticCompleted => match s(p, "status") {
            "scored" => {
                let sc = &p["score"];
                format!(
                    "critic: correctness {:.2}, usefulness {:.2}, safety {:.2}: {}",
                    sc["correctness"].as_f64().unwrap_or(0.0),
                    sc["usefulness"].as_f64().unwrap_or(0.0),
                    sc["safety"].as_f64().unwrap_or(0.0),
                    sc["explanation"].as_str().unwrap_or("")
                )
            }
            _ => format!("critic unavailable ({}); fallback: {}", s(p, "error"), s(p, "fallback")),
        },
        EventType::MemoryWriteDecided => match s(p, "decision") {
            "skip" => format!("memory: not stored ({})", s(p, "reason")),
            "merge_with_existing" => "memory: merged into an earlier, similar fix".into(),
            _ => "memory: the error and its fix are remembered".into(),
        },
        EventType::StatusChanged if p.get("resumed_from_sequence").is_some() => {
            format!("resuming task {} from its checkpoint (status {})", short(&event.task_id), s(p, "status"))
        }
        EventType::StatusChanged if s(p, "status") == "cancelled" => "cancelled".into(),
        EventType::TaskCompleted => s(p, "summary").to_string(),
        EventType::TaskFailed => format!("failed: {}", s(p, "reason")),
        _ => return None,
    })
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}
