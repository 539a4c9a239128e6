//! Crash test: a real multi-step task (`tinycoder debug-task`) run as a child
//! process and SIGKILLed at random points, again and again, then restarted
//! until it ends. After every task: no committed event lost or duplicated,
//! sequences gapless, `PRAGMA integrity_check` ok, and the task completed with
//! the right result (or failed with its reason).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tinycoder::contracts::{EventType, TaskStatus};
use tinycoder::store::runner::step_digest;
use tinycoder::store::{EventBus, Store, StoreSettings, DB_FILE_NAME};

const TASKS: usize = 50;
const STEPS: u32 = 6;

/// A small xorshift PRNG: deterministic per seed, so a failure can be rerun.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// When to SIGKILL a child: after it reported `commits` committed events, plus `jitter`; or after a
/// fixed delay from its start (start-up, before any commit).
#[derive(Clone, Copy)]
enum KillPoint {
    AfterCommits { commits: usize, jitter: Duration },
    AfterStart(Duration),
}

struct Incarnation {
    /// (sequence, type) the child reported as committed.
    committed: Vec<(u64, String)>,
    outcome: Option<String>,
    killed: bool,
    integrity_checked: bool,
}

fn run_child(
    data: &Path,
    workspace: &Path,
    task: &str,
    work: &Path,
    policy: &str,
    kill: Option<KillPoint>,
) -> Incarnation {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tinycoder"))
        .args(["--workspace"])
        .arg(workspace)
        .args([
            "debug-task",
            "--task",
            task,
            "--steps",
            &STEPS.to_string(),
            "--step-delay-ms",
            "1",
            "--on-unfinished",
            policy,
        ])
        .arg("--work-dir")
        .arg(work)
        .env("TINYCODER_DATA_DIR", data)
        .env("TINYCODER_CACHE_DIR", data.join("cache"))
        .env("TINYCODER_CONFIG", data.join("no-user-config.toml"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tinycoder debug-task");
    let started = Instant::now();
    let stdout = child.stdout.take().expect("stdout");
    // The reader counts committed events as they are printed, so a kill point can follow the
    // child's progress instead of the clock (start-up time differs between machines and loads).
    let commits_seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = commits_seen.clone();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            if l.starts_with("committed ") {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            lines.push(l);
        }
        lines
    });
    let mut killed = false;
    if let Some(point) = kill {
        let mut deadline = match point {
            KillPoint::AfterStart(delay) => Some(started + delay),
            KillPoint::AfterCommits { .. } => None,
        };
        loop {
            if child.try_wait().expect("try_wait").is_some() {
                break;
            }
            if let (None, KillPoint::AfterCommits { commits, jitter }) = (deadline, point) {
                if commits_seen.load(std::sync::atomic::Ordering::SeqCst) >= commits {
                    deadline = Some(Instant::now() + jitter);
                }
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                // SIGKILL: no destructor, no clean-shutdown marker.
                let _ = child.kill();
                killed = true;
                break;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
    let status = child.wait().expect("wait");
    let lines = reader.join().expect("reader");
    if !killed {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        assert!(status.success(), "debug-task failed: {status}\nstdout: {lines:?}\nstderr: {err}");
    }
    let mut committed = Vec::new();
    let mut outcome = None;
    let integrity_checked = lines.iter().any(|l| l.starts_with("integrity_check ok"));
    for l in lines {
        if let Some(rest) = l.strip_prefix("committed ") {
            let (seq, ty) = rest.split_once(' ').expect("committed SEQ TYPE");
            committed.push((seq.parse().expect("sequence"), ty.to_string()));
        } else if let Some(rest) = l.strip_prefix("outcome ") {
            outcome = Some(rest.to_string());
        }
    }
    Incarnation { committed, outcome, killed, integrity_checked }
}

#[test]
fn sigkill_at_random_points_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let seed = std::env::var("STORE_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_c0de_u64);
    let mut rng = Rng(seed);
    let mut total_kills = 0;
    let mut kills_mid_task = 0;
    let mut integrity_checks = 0;
    let mut failed_tasks = 0;
    let mut expectations = Vec::new();
    for t in 0..TASKS {
        let task = format!("crash-{t}");
        let work = dir.path().join("work").join(&task);
        // Every 10th task uses the "fail" policy: a kill must then end it as failed with a reason.
        let policy = if t % 10 == 9 { "fail" } else { "resume" };
        let mut reported: BTreeMap<u64, String> = BTreeMap::new();
        let mut outcome = None;
        for attempt in 0.. {
            // Kill the first attempts at random points (two after a random number of commits, one
            // at a random moment of start-up); let the last one finish.
            let kill = match attempt {
                0 | 1 => Some(KillPoint::AfterCommits {
                    commits: 1 + rng.below(2 * STEPS as u64) as usize,
                    jitter: Duration::from_micros(rng.below(2_000)),
                }),
                2 => Some(KillPoint::AfterStart(Duration::from_micros(rng.below(10_000)))),
                _ => None,
            };
            let inc = run_child(&data, &workspace, &task, &work, policy, kill);
            total_kills += usize::from(inc.killed);
            kills_mid_task += usize::from(inc.killed && !inc.committed.is_empty());
            integrity_checks += usize::from(inc.integrity_checked);
            for (seq, ty) in inc.committed {
                if let Some(prev) = reported.insert(seq, ty.clone()) {
                    panic!("task {task}: sequence {seq} reported committed twice ({prev}, then {ty}) — a duplicate or a lost event was reused");
                }
            }
            if let Some(o) = inc.outcome {
                outcome = Some(o);
                break;
            }
            assert!(attempt < 10, "task {task} never finished");
        }
        let outcome = outcome.expect("outcome");
        failed_tasks += usize::from(outcome.starts_with("failed"));
        expectations.push((task, work, reported, outcome));
    }

    // Verify everything from the store, opened fresh after all the kills.
    let store = Store::open(
        &data.join("workspaces").join(tinycoder::paths::workspace_key(&workspace)).join(DB_FILE_NAME),
        StoreSettings::default(),
    )
    .expect("open after crashes");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        store.integrity_check().await.expect("integrity_check ok");
        let bus = EventBus::new(store.clone());
        for (task, work, reported, outcome) in &expectations {
            let events = bus.catch_up(task, 0).await.expect("events");
            let seqs: Vec<u64> = events.iter().map(|e| e.sequence).collect();
            let gapless: Vec<u64> = (1..=events.len() as u64).collect();
            assert_eq!(seqs, gapless, "task {task}: sequences must be 1..=n without gaps");
            let mut ids: Vec<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), events.len(), "task {task}: duplicate event ids");
            for (seq, ty) in reported {
                let stored = events
                    .get((*seq - 1) as usize)
                    .unwrap_or_else(|| panic!("task {task}: committed event {seq} lost"));
                assert_eq!(stored.event_type.as_str(), ty, "task {task}: event {seq} changed type");
            }
            let record = bus.task(task).await.expect("task").expect("task exists");
            let state = tinycoder::store::replay(&store, task).await.expect("replay").pop().expect("state").1;
            assert_eq!(state.status, record.status, "task {task}: replayed status matches the table");
            let folded = tinycoder::store::replay_state(&store, task).await.expect("replay_state");
            assert_eq!(folded, state, "task {task}: fold and step-by-step replay agree");
            match record.status {
                TaskStatus::Completed => {
                    let mut digest = format!("debug task {task}");
                    for step in 1..=STEPS {
                        digest = step_digest(&digest, step);
                        let file = std::fs::read_to_string(work.join(format!("step-{step}.txt"))).expect("step file");
                        assert_eq!(file.trim(), digest, "task {task}: step {step} resumed from a wrong state");
                    }
                    assert_eq!(outcome, &format!("completed {digest}"));
                    assert_eq!(events.last().map(|e| e.event_type), Some(EventType::TaskCompleted));
                    let mut steps = state.completed_steps.clone();
                    steps.sort();
                    assert_eq!(steps.len(), STEPS as usize, "task {task}: every step completed");
                }
                TaskStatus::Failed => {
                    let reason = record.failure_reason.clone().unwrap_or_default();
                    assert!(reason.contains("interrupted"), "task {task}: failed without a clear reason: {reason:?}");
                    assert_eq!(events.last().map(|e| e.event_type), Some(EventType::TaskFailed));
                }
                other => panic!("task {task} left dangling as {other:?}"),
            }
        }
        assert!(bus.unfinished_tasks().await.expect("unfinished").is_empty(), "no task left dangling");
    });
    eprintln!("{TASKS} tasks, {total_kills} SIGKILLs ({kills_mid_task} mid-task), {failed_tasks} ended failed, {integrity_checks} start-up integrity checks (seed {seed:#x})");
    assert!(total_kills >= TASKS, "the test must actually kill the child often ({total_kills} kills)");
    assert!(integrity_checks >= kills_mid_task / 2, "restarts after kills check integrity ({integrity_checks})");
    assert!(kills_mid_task >= TASKS / 2, "kills must land mid-task, after commits ({kills_mid_task})");
}
