//! The scheduler: runs a task graph's steps as their dependencies finish, up
//! to `parallel` at once, never two steps on the same file at once, and stops
//! starting steps after a failure or a cancel.

use super::graph::TaskGraph;
use futures::stream::{FuturesUnordered, StreamExt};
use serde::Serialize;
use std::future::Future;
use tokio_util::sync::CancellationToken;

/// Where a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    Done,
    Failed,
    /// A step it depends on failed.
    Skipped,
    /// Never started: another step failed or the task was cancelled.
    NotRun,
}

impl StepState {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
            Self::NotRun => "not run",
        }
    }
}

/// Runs every step of `graph` through `start` (its index in, success out) and
/// returns each step's state. A step starts when all it depends on are done.
pub async fn run_graph<F, Fut>(
    graph: &TaskGraph,
    parallel: usize,
    cancel: &CancellationToken,
    mut start: F,
) -> Vec<StepState>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = bool>,
{
    let n = graph.steps.len();
    let mut state: Vec<Option<StepState>> = vec![None; n];
    let mut running: Vec<usize> = Vec::new();
    let mut in_flight = FuturesUnordered::new();
    let mut failed = false;
    loop {
        if !failed && !cancel.is_cancelled() {
            for &i in &graph.order {
                if running.len() >= parallel.max(1) {
                    break;
                }
                let ready = state[i].is_none()
                    && !running.contains(&i)
                    && graph.dependencies[i].iter().all(|&d| state[d] == Some(StepState::Done))
                    && !running
                        .iter()
                        .any(|&r| graph.steps[r].file == graph.steps[i].file && !graph.steps[i].file.is_empty());
                if ready {
                    running.push(i);
                    let fut = start(i);
                    in_flight.push(async move { (i, fut.await) });
                }
            }
        }
        let Some((i, ok)) = in_flight.next().await else { break };
        running.retain(|&r| r != i);
        state[i] = Some(if ok { StepState::Done } else { StepState::Failed });
        failed |= !ok;
    }
    (0..n)
        .map(|i| {
            state[i].unwrap_or_else(|| {
                if depends_on_failure(graph, &state, i) {
                    StepState::Skipped
                } else {
                    StepState::NotRun
                }
            })
        })
        .collect()
}

fn depends_on_failure(graph: &TaskGraph, state: &[Option<StepState>], i: usize) -> bool {
    graph.dependencies[i]
        .iter()
        .any(|&d| state[d] == Some(StepState::Failed) || (state[d].is_none() && depends_on_failure(graph, state, d)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::{ActionType, PlanReply, PlanStep, StepKind};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    fn graph(steps: &[(&str, &str, &[&str])]) -> TaskGraph {
        let steps = steps
            .iter()
            .map(|(id, file, deps)| PlanStep {
                id: id.to_string(),
                kind: StepKind::Coder,
                action_type: ActionType::Edit,
                file: file.to_string(),
                description: String::new(),
                depends_on: deps.iter().map(|d| d.to_string()).collect(),
                command: None,
                requires_confirmation: false,
            })
            .collect();
        super::super::graph::validate(PlanReply { steps }, &|_| true, &[], &[], 12).expect("valid graph")
    }

    /// Runs `g` with steps that sleep `ms`; returns the states, the most steps
    /// running at once, and each step's (start, end) in order of the log.
    async fn timeline(g: &TaskGraph, parallel: usize, fail: &[usize]) -> (Vec<StepState>, usize, Vec<(usize, char)>) {
        let log: Arc<Mutex<Vec<(usize, char)>>> = Arc::default();
        let now: Arc<Mutex<(usize, usize)>> = Arc::default();
        let states = run_graph(g, parallel, &CancellationToken::new(), |i| {
            let (log, now) = (log.clone(), now.clone());
            let ok = !fail.contains(&i);
            async move {
                {
                    let mut n = now.lock().expect("lock");
                    n.0 += 1;
                    n.1 = n.1.max(n.0);
                }
                log.lock().expect("lock").push((i, 's'));
                tokio::time::sleep(Duration::from_millis(30)).await;
                log.lock().expect("lock").push((i, 'e'));
                now.lock().expect("lock").0 -= 1;
                ok
            }
        })
        .await;
        let peak = now.lock().expect("lock").1;
        let log = log.lock().expect("lock").clone();
        (states, peak, log)
    }

    fn pos(log: &[(usize, char)], step: usize, what: char) -> usize {
        log.iter().position(|e| *e == (step, what)).expect("logged")
    }

    #[tokio::test]
    async fn dependent_steps_wait_and_independent_steps_overlap() {
        // a and b are independent; c needs both; d needs c.
        let g = graph(&[("a", "a.py", &[]), ("b", "b.py", &[]), ("c", "c.py", &["a", "b"]), ("d", "d.py", &["c"])]);
        let (states, peak, log) = timeline(&g, 2, &[]).await;
        assert!(states.iter().all(|s| *s == StepState::Done), "{states:?}");
        assert_eq!(peak, 2, "a and b ran at the same time");
        assert!(pos(&log, 1, 's') < pos(&log, 0, 'e'), "b started before a ended: {log:?}");
        assert!(pos(&log, 2, 's') > pos(&log, 0, 'e') && pos(&log, 2, 's') > pos(&log, 1, 'e'), "{log:?}");
        assert!(pos(&log, 3, 's') > pos(&log, 2, 'e'), "{log:?}");

        let (_, peak, _) = timeline(&g, 1, &[]).await;
        assert_eq!(peak, 1, "parallel = 1 runs one step at a time");
    }

    #[tokio::test]
    async fn two_steps_on_one_file_never_overlap() {
        let g = graph(&[("a", "x.py", &[]), ("b", "x.py", &[]), ("c", "y.py", &[])]);
        let (_, _, log) = timeline(&g, 3, &[]).await;
        assert!(pos(&log, 1, 's') > pos(&log, 0, 'e'), "{log:?}");
        assert!(pos(&log, 2, 's') < pos(&log, 0, 'e'), "y.py ran beside x.py: {log:?}");
    }

    #[tokio::test]
    async fn a_failure_skips_its_dependents_and_starts_nothing_new() {
        let g = graph(&[("a", "a.py", &[]), ("b", "b.py", &["a"]), ("c", "c.py", &["b"]), ("d", "d.py", &[])]);
        let (states, _, log) = timeline(&g, 1, &[0]).await;
        assert_eq!(states, vec![StepState::Failed, StepState::Skipped, StepState::Skipped, StepState::NotRun]);
        assert_eq!(log.len(), 2, "only a ran: {log:?}");
    }

    #[tokio::test]
    async fn a_cancelled_task_starts_no_step() {
        let g = graph(&[("a", "a.py", &[])]);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let states = run_graph(&g, 2, &cancel, |_| async { true }).await;
        assert_eq!(states, vec![StepState::NotRun]);
    }
}
