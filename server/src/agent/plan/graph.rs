//! From the planner's reply to a validated task graph: every file exists
//! (unless the step creates it), ids are unique, dependencies name real steps
//! and form no cycle. Pure: the caller says which files exist.

use crate::contracts::{ActionType, PlanReply, PlanStep, StepKind};
use serde::Serialize;
use std::collections::HashMap;

/// Why a plan was rejected, in words the planner (on a replan) and the user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("the plan has no steps")]
    Empty,
    #[error("the plan has {count} steps; at most {max} are allowed (runtime.max_steps)")]
    TooManySteps { count: usize, max: usize },
    #[error("step `{id}` appears more than once; give every step its own id")]
    DuplicateId { id: String },
    #[error("step `{step}` names no file; every edit or create step needs one")]
    NoFile { step: String },
    #[error("step `{step}` is a command step without a command; give the shell command line in `command`")]
    NoCommand { step: String },
    #[error("step `{step}` names `{file}`, which is outside the workspace; use a path relative to its root")]
    OutsideWorkspace { step: String, file: String },
    #[error("step `{step}` names `{file}`, which is not a file of the workspace{}", did_you_mean(.suggestions))]
    UnknownFile { step: String, file: String, suggestions: Vec<String> },
    #[error("step `{step}` creates `{file}`, which already exists; use action_type \"edit\" for it")]
    CreatesExisting { step: String, file: String },
    #[error("step `{step}` depends on `{missing}`, which is not a step of the plan")]
    DanglingDependency { step: String, missing: String },
    #[error("steps {} depend on each other in a cycle", .ids.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", "))]
    Cycle { ids: Vec<String> },
    #[error("the request names `{file}`, but no step is about it; add a step for that file")]
    MissingFile { file: String },
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", suggestions.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(" or "))
    }
}

/// A validated plan: steps in the planner's order, their dependencies by index,
/// and an order in which every step comes after what it depends on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskGraph {
    pub steps: Vec<PlanStep>,
    /// `dependencies[i]`: indices of the steps step `i` waits for.
    pub dependencies: Vec<Vec<usize>>,
    /// Step indices, dependencies first (ties keep the planner's order).
    pub order: Vec<usize>,
}

impl TaskGraph {
    /// Steps that write a file (edit or create).
    pub fn writing_steps(&self) -> impl Iterator<Item = (usize, &PlanStep)> {
        self.steps.iter().enumerate().filter(|(_, s)| matches!(s.action_type, ActionType::Edit | ActionType::Create))
    }

    /// The files the plan may change, in step order, each once.
    pub fn files(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (_, s) in self.writing_steps() {
            if !out.contains(&s.file) {
                out.push(s.file.clone());
            }
        }
        out
    }

    /// The graph as indented text: one line per step with what it waits for.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for &i in &self.order {
            let s = &self.steps[i];
            let after =
                if s.depends_on.is_empty() { String::new() } else { format!(" (after {})", s.depends_on.join(", ")) };
            let what = match &s.command {
                Some(c) => format!("`{c}`"),
                None => s.file.clone(),
            };
            out.push_str(&format!("{}. [{}] {what}: {}{after}\n", s.id, s.action_type.as_str(), s.description));
        }
        out
    }
}

/// `path` as a clean workspace-relative path, or `None` when it leaves the workspace.
pub(crate) fn normalize(path: &str) -> Option<String> {
    let p = path.trim().replace('\\', "/");
    let p = p.trim_start_matches("./");
    if p.starts_with('/') || p.split('/').any(|c| c == "..") || p.contains(':') {
        return None;
    }
    Some(p.split('/').filter(|c| !c.is_empty() && *c != ".").collect::<Vec<_>>().join("/"))
}

/// Validates `reply` into a [`TaskGraph`]. `exists` says whether a workspace file
/// exists; `known` lists the workspace's files, for "did you mean" suggestions;
/// every file of `named` (the files the request names) must have a step.
pub fn validate(
    reply: PlanReply,
    exists: &dyn Fn(&str) -> bool,
    known: &[String],
    named: &[String],
    max_steps: usize,
) -> Result<TaskGraph, PlanError> {
    let mut steps = reply.steps;
    if steps.is_empty() {
        return Err(PlanError::Empty);
    }
    if steps.len() > max_steps {
        return Err(PlanError::TooManySteps { count: steps.len(), max: max_steps });
    }
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, s) in steps.iter_mut().enumerate() {
        s.id = s.id.trim().to_string();
        if index.insert(s.id.clone(), i).is_some() {
            return Err(PlanError::DuplicateId { id: s.id.clone() });
        }
        // A command step runs its command and nothing else; the field means nothing on other steps.
        if s.action_type == ActionType::Command {
            s.kind = StepKind::Tool;
            let command = s.command.as_deref().map(str::trim).unwrap_or_default().to_string();
            if command.is_empty() {
                return Err(PlanError::NoCommand { step: s.id.clone() });
            }
            s.command = Some(command);
            // Its file is only a hint of what the command is about: it may be empty or ".".
            let file = normalize(&s.file)
                .ok_or_else(|| PlanError::OutsideWorkspace { step: s.id.clone(), file: s.file.clone() })?;
            s.file = file;
            continue;
        }
        s.command = None;
        // The action decides whether a step writes: a query never does, whatever its kind says.
        if s.action_type == ActionType::Query {
            s.kind = StepKind::Query;
        } else if s.kind == StepKind::Query {
            s.action_type = ActionType::Query;
        }
        if s.file.trim().is_empty() {
            if s.action_type == ActionType::Query {
                continue;
            }
            return Err(PlanError::NoFile { step: s.id.clone() });
        }
        let file = normalize(&s.file)
            .ok_or_else(|| PlanError::OutsideWorkspace { step: s.id.clone(), file: s.file.clone() })?;
        match (s.action_type, exists(&file)) {
            (ActionType::Create, true) => return Err(PlanError::CreatesExisting { step: s.id.clone(), file }),
            (ActionType::Edit | ActionType::Query, false) => {
                return Err(PlanError::UnknownFile { step: s.id.clone(), suggestions: suggest(&file, known), file })
            }
            _ => {}
        }
        s.file = file;
    }
    if let Some(file) = named.iter().find(|f| !steps.iter().any(|s| &s.file == *f)) {
        return Err(PlanError::MissingFile { file: file.clone() });
    }
    let mut dependencies = Vec::with_capacity(steps.len());
    for s in &mut steps {
        // Small models often list a step among its own dependencies; that waits for nothing.
        let own = s.id.clone();
        s.depends_on.retain(|d| d.trim() != own);
    }
    for s in &steps {
        let mut deps = Vec::new();
        for d in &s.depends_on {
            let d = d.trim();
            let &j = index
                .get(d)
                .ok_or_else(|| PlanError::DanglingDependency { step: s.id.clone(), missing: d.to_string() })?;
            if !deps.contains(&j) {
                deps.push(j);
            }
        }
        dependencies.push(deps);
    }
    let order = topological_order(&dependencies)
        .map_err(|stuck| PlanError::Cycle { ids: stuck.into_iter().map(|i| steps[i].id.clone()).collect() })?;
    Ok(TaskGraph { steps, dependencies, order })
}

/// Kahn's algorithm, lowest index first among the ready; `Err` holds the steps left in cycles.
fn topological_order(deps: &[Vec<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    let n = deps.len();
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while let Some(i) = (0..n).find(|&i| !done[i] && waiting[i] == 0) {
        done[i] = true;
        order.push(i);
        for (j, d) in deps.iter().enumerate() {
            if d.contains(&i) {
                waiting[j] -= 1;
            }
        }
    }
    if order.len() == n {
        Ok(order)
    } else {
        Err((0..n).filter(|&i| !done[i]).collect())
    }
}

/// Up to three workspace files the planner probably meant: same file name first, then close spellings.
pub fn suggest(file: &str, known: &[String]) -> Vec<String> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let mut scored: Vec<(usize, &String)> = known
        .iter()
        .filter_map(|k| {
            let kname = k.rsplit('/').next().unwrap_or(k);
            let d = if kname == name {
                0
            } else {
                1 + strsim::levenshtein(file, k).min(strsim::levenshtein(name, kname) + 1)
            };
            let limit = 1 + (file.chars().count() / 3).max(2);
            (d <= limit).then_some((d, k))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, k)| k.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(id: &str, action: ActionType, file: &str, deps: &[&str]) -> PlanStep {
        PlanStep {
            id: id.into(),
            kind: if action == ActionType::Query { StepKind::Query } else { StepKind::Coder },
            action_type: action,
            file: file.into(),
            description: format!("do {id}"),
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
            command: None,
            requires_confirmation: false,
        }
    }

    fn known() -> Vec<String> {
        ["src/net/fetch.py", "src/app.py", "tests/test_fetch.py"].iter().map(|s| s.to_string()).collect()
    }

    fn check(steps: Vec<PlanStep>) -> Result<TaskGraph, PlanError> {
        let k = known();
        validate(PlanReply { steps }, &|f| k.iter().any(|x| x == f), &k, &[], 12)
    }

    #[test]
    fn a_valid_plan_orders_dependencies_first() {
        let g = check(vec![
            step("3", ActionType::Edit, "src/app.py", &["1", "2"]),
            step("1", ActionType::Edit, "./src/net/fetch.py", &[]),
            step("2", ActionType::Create, "src/net/timeouts.py", &[]),
        ])
        .expect("valid");
        assert_eq!(g.order, vec![1, 2, 0]);
        assert_eq!(g.steps[1].file, "src/net/fetch.py", "paths are normalized");
        assert_eq!(g.files(), vec!["src/app.py", "src/net/fetch.py", "src/net/timeouts.py"]);
        assert!(g.render().starts_with("1. [edit] src/net/fetch.py"), "{}", g.render());
    }

    #[test]
    fn an_unknown_file_is_named_with_a_suggestion() {
        let e = check(vec![step("1", ActionType::Edit, "fetch.py", &[])]).unwrap_err();
        assert_eq!(
            e,
            PlanError::UnknownFile {
                step: "1".into(),
                file: "fetch.py".into(),
                suggestions: vec!["src/net/fetch.py".into()]
            }
        );
        assert_eq!(
            e.to_string(),
            "step `1` names `fetch.py`, which is not a file of the workspace (did you mean `src/net/fetch.py`?)"
        );
        let e = check(vec![step("1", ActionType::Edit, "src/ap.py", &[])]).unwrap_err();
        assert!(e.to_string().contains("did you mean `src/app.py`"), "{e}");
        let e = check(vec![step("1", ActionType::Edit, "zzz/qqqqqqq.rs", &[])]).unwrap_err();
        assert!(!e.to_string().contains("did you mean"), "nothing close: {e}");
    }

    #[test]
    fn cycles_dangling_dependencies_and_bad_files_are_rejected() {
        let e = check(vec![
            step("a", ActionType::Edit, "src/app.py", &["c"]),
            step("b", ActionType::Edit, "src/net/fetch.py", &["a"]),
            step("c", ActionType::Query, "", &["b"]),
            step("d", ActionType::Edit, "src/app.py", &[]),
        ])
        .unwrap_err();
        assert_eq!(e, PlanError::Cycle { ids: vec!["a".into(), "b".into(), "c".into()] });
        assert_eq!(e.to_string(), "steps `a`, `b`, `c` depend on each other in a cycle");
        let g = check(vec![step("a", ActionType::Edit, "src/app.py", &["a"])]).expect("valid");
        assert!(g.steps[0].depends_on.is_empty(), "a step waiting for itself waits for nothing");
        let e = check(vec![step("a", ActionType::Edit, "src/app.py", &["z"])]).unwrap_err();
        assert_eq!(e, PlanError::DanglingDependency { step: "a".into(), missing: "z".into() });
        let e =
            check(vec![step("a", ActionType::Edit, "src/app.py", &[]), step("a", ActionType::Edit, "src/app.py", &[])]);
        assert_eq!(e.unwrap_err(), PlanError::DuplicateId { id: "a".into() });
        assert_eq!(check(vec![]).unwrap_err(), PlanError::Empty);
        for outside in ["../etc/passwd", "/etc/passwd", "C:/x.py"] {
            let e = check(vec![step("a", ActionType::Create, outside, &[])]).unwrap_err();
            assert!(matches!(e, PlanError::OutsideWorkspace { .. }), "{outside}: {e}");
        }
        let e = check(vec![step("a", ActionType::Create, "src/app.py", &[])]).unwrap_err();
        assert!(matches!(e, PlanError::CreatesExisting { .. }));
        let e = check(vec![step("a", ActionType::Edit, " ", &[])]).unwrap_err();
        assert!(matches!(e, PlanError::NoFile { .. }));
        let many: Vec<PlanStep> = (0..13).map(|i| step(&i.to_string(), ActionType::Edit, "src/app.py", &[])).collect();
        assert_eq!(check(many).unwrap_err(), PlanError::TooManySteps { count: 13, max: 12 });
    }

    #[test]
    fn every_file_the_request_names_needs_a_step() {
        let k = known();
        let steps = vec![step("1", ActionType::Edit, "src/app.py", &[])];
        let named = vec!["src/app.py".to_string(), "src/net/fetch.py".to_string()];
        let e = validate(PlanReply { steps }, &|f| k.iter().any(|x| x == f), &k, &named, 12).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the request names `src/net/fetch.py`, but no step is about it; add a step for that file"
        );
    }

    #[test]
    fn a_command_step_needs_a_command_but_no_file_and_writes_nothing() {
        let mut c = step("run", ActionType::Command, ".", &[]);
        c.kind = StepKind::Query;
        c.command = Some("  pytest -q ".into());
        let g = check(vec![c.clone(), step("e", ActionType::Edit, "src/app.py", &["run"])]).expect("valid");
        assert_eq!(g.steps[0].action_type, ActionType::Command, "a command stays a command whatever its kind");
        assert_eq!((g.steps[0].file.as_str(), g.steps[0].command.as_deref()), ("", Some("pytest -q")));
        assert_eq!(g.writing_steps().count(), 1);
        assert!(g.render().starts_with("run. [command] `pytest -q`"), "{}", g.render());
        c.command = Some(" ".into());
        let e = check(vec![c.clone()]).unwrap_err();
        assert_eq!(e, PlanError::NoCommand { step: "run".into() });
        assert!(e.to_string().contains("give the shell command line in `command`"), "{e}");
        c.command = None;
        assert_eq!(check(vec![c.clone()]).unwrap_err(), PlanError::NoCommand { step: "run".into() });
        c.command = Some("ls".into());
        c.file = "../x".into();
        assert!(matches!(check(vec![c]).unwrap_err(), PlanError::OutsideWorkspace { .. }));
        let mut e = step("e", ActionType::Edit, "src/app.py", &[]);
        e.command = Some("rm -rf /".into());
        assert_eq!(check(vec![e]).expect("valid").steps[0].command, None, "only command steps keep a command");
    }

    #[test]
    fn a_query_never_writes_whatever_its_kind_says() {
        let mut s = step("q", ActionType::Edit, "src/app.py", &[]);
        s.kind = StepKind::Query;
        let g = check(vec![s, step("e", ActionType::Edit, "src/app.py", &["q"])]).expect("valid");
        assert_eq!(g.steps[0].action_type, ActionType::Query);
        assert_eq!(g.writing_steps().count(), 1);
    }
}
