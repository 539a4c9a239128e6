//! The event bus and task store against a real SQLite file: per-task ordering
//! under concurrency, atomic visibility to a second reader, full disk,
//! at-least-once delivery with idempotent subscribers, resume policy, retention.

use serde_json::json;
use std::collections::HashMap;
use tinycoder::contracts::{EventType, TaskStatus};
use tinycoder::store::{
    CheckpointDraft, EventBus, IdempotentSubscriber, NewEvent, NewTask, ResumePolicy, RetentionPolicy, Store,
    StoreSettings,
};

fn open(dir: &std::path::Path) -> Store {
    Store::open(&dir.join("db.sqlite3"), StoreSettings::default()).expect("open store")
}

async fn task(bus: &EventBus, id: &str) {
    bus.create_task(NewTask { task_id: Some(id.into()), input: format!("input of {id}"), ..Default::default() })
        .await
        .expect("create task");
}

fn draft(status: TaskStatus, step: u32) -> CheckpointDraft {
    CheckpointDraft {
        status,
        active_step_id: Some(format!("step-{step}")),
        plan_snapshot: json!({"next_step": step + 1}),
        context_snapshot: json!({"summary": "s"}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_tasks_keep_per_task_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bus = EventBus::new(open(dir.path()));
    let mut live = bus.subscribe();
    let mut handles = Vec::new();
    for t in 0..8 {
        let bus = bus.clone();
        handles.push(tokio::spawn(async move {
            let id = format!("t{t}");
            task(&bus, &id).await;
            for i in 0..100u64 {
                let e = bus.append(&id, EventType::LlmCalled, json!({"i": i}), None).await.expect("append");
                assert_eq!(e.sequence, i + 2, "the i-th append of a task gets the next sequence");
            }
        }));
    }
    for h in handles {
        h.await.expect("writer");
    }
    let mut last: HashMap<String, u64> = HashMap::new();
    let mut received = 0;
    while let Ok(e) = live.try_recv() {
        let prev = last.insert(e.task_id.clone(), e.sequence).unwrap_or(0);
        assert_eq!(e.sequence, prev + 1, "subscriber sees each task in order");
        received += 1;
    }
    assert_eq!(received, 8 * 101);
    for t in 0..8 {
        let events = bus.catch_up(&format!("t{t}"), 0).await.expect("events");
        let order: Vec<u64> = events.iter().skip(1).map(|e| e.payload["i"].as_u64().unwrap_or(u64::MAX)).collect();
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_reader_never_sees_a_half_written_task() {
    let dir = tempfile::tempdir().expect("tempdir");
    let writer = EventBus::new(open(dir.path()));
    // A separate connection on its own thread, as another process would read.
    let reader = open(dir.path());
    let write = tokio::spawn(async move {
        for t in 0..40 {
            let id = format!("t{t}");
            task(&writer, &id).await;
            for _ in 0..5 {
                let batch = (0..10).map(|i| NewEvent::new(EventType::ToolCalled, json!({"i": i}))).collect();
                writer.append_all(&id, batch).await.expect("batch");
            }
        }
    });
    let mut observations = 0;
    while !write.is_finished() || observations == 0 {
        let rows: Vec<(String, i64, i64)> = reader
            .call(|c| {
                let tx = c.transaction()?;
                let mut stmt = tx.prepare(
                    "SELECT t.task_id, (SELECT COUNT(*) FROM events e WHERE e.task_id = t.task_id),
                            (SELECT COUNT(*) FROM events e WHERE e.task_id = t.task_id AND e.type = 'task_received')
                     FROM tasks t",
                )?;
                let rows =
                    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<Vec<_>, _>>()?;
                let orphans: i64 = tx.query_row(
                    "SELECT COUNT(*) FROM events WHERE task_id NOT IN (SELECT task_id FROM tasks)",
                    [],
                    |r| r.get(0),
                )?;
                assert_eq!(orphans, 0, "an event without its task row");
                Ok(rows)
            })
            .await
            .expect("read");
        for (id, count, received) in rows {
            assert_eq!(received, 1, "task {id} visible without its task_received event");
            assert_eq!((count - 1) % 10, 0, "task {id} visible with a half-written batch ({count} events)");
        }
        observations += 1;
        tokio::task::yield_now().await;
    }
    write.await.expect("writer");
    assert!(observations > 1);
}

#[tokio::test]
async fn a_full_disk_gives_a_clear_error_and_corrupts_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let bus = EventBus::new(store.clone());
    task(&bus, "t").await;
    for i in 0..20 {
        bus.append("t", EventType::ToolCompleted, json!({"i": i, "text": "x".repeat(200)}), None)
            .await
            .expect("append");
    }
    // Cap the file a few pages above its size: SQLite then reports SQLITE_FULL like a full disk.
    store
        .call(|c| {
            let pages: i64 = c.query_row("PRAGMA page_count", [], |r| r.get(0))?;
            c.query_row(&format!("PRAGMA max_page_count = {}", pages + 2), [], |_| Ok(()))?;
            Ok(())
        })
        .await
        .expect("cap");
    let big = "y".repeat(64 * 1024);
    let mut error = None;
    for _ in 0..20 {
        if let Err(e) = bus.append("t", EventType::ToolCompleted, json!({"big": big}), None).await {
            error = Some(e);
            break;
        }
    }
    let error = error.expect("the capped database must fill up");
    assert!(error.is_full(), "{error}");
    let message = error.to_string();
    assert!(message.contains("full") && message.contains("db.sqlite3") && message.contains("free"), "{message}");
    // Nothing corrupted, nothing half-written, earlier data intact.
    store.integrity_check().await.expect("integrity ok");
    let events = bus.catch_up("t", 0).await.expect("events");
    let before_full = events.len() as u64;
    assert!(before_full >= 21);
    assert_eq!(events.iter().map(|e| e.sequence).collect::<Vec<_>>(), (1..=before_full).collect::<Vec<_>>());
    for (i, e) in events.iter().skip(1).take(20).enumerate() {
        assert_eq!(e.payload["i"], json!(i));
    }
    // Space again: the failed append consumed no sequence.
    store.call(|c| Ok(c.query_row("PRAGMA max_page_count = 1073741823", [], |_| Ok(()))?)).await.expect("uncap");
    let next = bus.append("t", EventType::TaskCompleted, json!({}), None).await.expect("append after space freed");
    assert_eq!(next.sequence, before_full + 1);
    assert_eq!(bus.task("t").await.expect("task").map(|t| t.status), Some(TaskStatus::Completed));
}

#[tokio::test]
async fn subscribers_dedup_and_late_ones_catch_up() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bus = EventBus::new(open(dir.path()));
    task(&bus, "t").await;
    let mut seen = Vec::new();
    for i in 0..4 {
        seen.push(bus.append("t", EventType::LlmCalled, json!({"i": i}), None).await.expect("append"));
    }
    let mut sub = IdempotentSubscriber::new();
    // At-least-once: the last event arrives first (a late subscriber), then everything again.
    let last = seen.last().cloned().expect("last");
    let delivered = sub.deliver(&bus, last).await.expect("deliver");
    assert_eq!(
        delivered.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5],
        "caught up from the store"
    );
    for e in seen.iter().cloned() {
        assert!(sub.deliver(&bus, e).await.expect("deliver").is_empty(), "repeats dropped");
    }
    let next = bus.append("t", EventType::LlmResultReceived, json!({}), None).await.expect("append");
    assert_eq!(sub.deliver(&bus, next.clone()).await.expect("deliver"), vec![next]);
    assert_eq!(sub.position("t"), 6);
}

#[tokio::test]
async fn unfinished_tasks_resume_or_fail_with_a_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bus = EventBus::new(open(dir.path()));
    task(&bus, "with-checkpoint").await;
    bus.checkpoint(
        "with-checkpoint",
        vec![NewEvent::new(EventType::StepStarted, json!({"step_id": "step-1"}))],
        draft(TaskStatus::ExecutingStep, 1),
    )
    .await
    .expect("checkpoint");
    task(&bus, "without").await;
    bus.append("without", EventType::ContextBuilt, json!({}), None).await.expect("append");
    task(&bus, "done").await;
    bus.append("done", EventType::TaskCompleted, json!({}), None).await.expect("append");
    // The store closes (as at a crash) and opens again.
    let store = bus.store().clone();
    drop(bus);
    drop(store);
    let bus = EventBus::new(open(dir.path()));
    let outcome = bus.apply_resume_policy(ResumePolicy::Resume).await.expect("policy");
    assert_eq!(outcome.to_resume.len(), 1);
    let resumable = &outcome.to_resume[0];
    assert_eq!(resumable.task.task_id, "with-checkpoint");
    let cp = resumable.checkpoint.as_ref().expect("checkpoint");
    assert_eq!(
        (cp.status, cp.active_step_id.as_deref(), cp.plan_snapshot["next_step"].as_u64()),
        (TaskStatus::ExecutingStep, Some("step-1"), Some(2))
    );
    assert_eq!(cp.last_sequence, 3, "covers its own checkpoint_saved event");
    assert_eq!(outcome.failed.len(), 1);
    assert_eq!(outcome.failed[0].0, "without");
    assert!(outcome.failed[0].1.contains("checkpoint"), "{}", outcome.failed[0].1);
    let failed = bus.task("without").await.expect("task").expect("exists");
    assert_eq!(failed.status, TaskStatus::Failed);
    assert!(failed.failure_reason.unwrap_or_default().contains("interrupted"));
    // The user declines (or policy "fail"): nothing is left dangling.
    let outcome = bus.apply_resume_policy(ResumePolicy::Fail).await.expect("policy");
    assert_eq!(outcome.failed.len(), 1);
    assert!(bus.unfinished_tasks().await.expect("unfinished").is_empty());
    assert_eq!(bus.task("done").await.expect("task").map(|t| t.status), Some(TaskStatus::Completed));
}

#[tokio::test]
async fn periodic_checkpoints_and_retention() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store =
        Store::open(&dir.path().join("db.sqlite3"), StoreSettings { checkpoint_every_events: 5, ..Default::default() })
            .expect("open");
    let bus = EventBus::new(store.clone());
    task(&bus, "old").await;
    task(&bus, "running").await;
    for i in 0..30 {
        bus.append("old", EventType::LlmCalled, json!({"i": i}), None).await.expect("append");
        if bus.checkpoint_due("old").await.expect("due") {
            bus.checkpoint("old", vec![], draft(TaskStatus::ExecutingStep, i)).await.expect("checkpoint");
        }
        bus.append("running", EventType::LlmCalled, json!({"i": i}), None).await.expect("append");
    }
    let checkpoints: i64 = store
        .call(|c| Ok(c.query_row("SELECT COUNT(*) FROM checkpoints WHERE task_id = 'old'", [], |r| r.get(0))?))
        .await
        .expect("count");
    assert!(checkpoints >= 5, "periodic checkpoints every 5 events ({checkpoints})");
    bus.append("old", EventType::TaskCompleted, json!({}), None).await.expect("complete");
    let policy = RetentionPolicy { max_age_days: 0, max_events_per_task: 10, max_checkpoints_per_task: 1 };
    let (events, cps) = bus.prune(policy).await.expect("prune");
    assert!(events > 0 && cps as i64 == checkpoints - 1, "{events} {cps}");
    let left = bus.catch_up("old", 0).await.expect("events");
    assert_eq!(left.len(), 10, "newest 10 kept");
    assert_eq!(left.last().map(|e| e.event_type), Some(EventType::TaskCompleted));
    assert_eq!(bus.catch_up("running", 0).await.expect("events").len(), 31, "unfinished tasks keep everything");
    // Age: events of a finished task older than the limit go.
    store
        .call(|c| Ok(c.execute("UPDATE events SET ts_ms = ts_ms - 40 * 86400000 WHERE task_id = 'old'", [])?))
        .await
        .expect("age");
    let policy = RetentionPolicy { max_age_days: 30, max_events_per_task: 0, max_checkpoints_per_task: 0 };
    bus.prune(policy).await.expect("prune");
    assert!(bus.catch_up("old", 0).await.expect("events").is_empty());
    assert_eq!(
        bus.last_checkpoint("old").await.expect("checkpoint").map(|c| c.status),
        Some(TaskStatus::ExecutingStep)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_rebuilds_each_state_from_the_stored_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let bus = EventBus::new(store.clone());
    task(&bus, "r").await;
    bus.append("r", EventType::StepStarted, json!({"step_id": "s1"}), None).await.expect("append");
    bus.append("r", EventType::CoderCalled, json!({}), None).await.expect("append");
    bus.append("r", EventType::TaskCompleted, json!({"ok": true}), None).await.expect("append");
    let states = tinycoder::store::replay(&store, "r").await.expect("replay");
    let seqs: Vec<u64> = states
        .iter()
        .map(|(e, s)| {
            assert_eq!(s.last_sequence, e.sequence, "each state is the one after its event");
            e.sequence
        })
        .collect();
    assert_eq!(seqs, vec![1, 2, 3, 4]);
    assert_eq!(states[0].1.input.as_deref(), Some("input of r"));
    assert_eq!(states[1].1.active_step_id.as_deref(), Some("s1"));
    assert_eq!(states[2].1.coder_calls, 1);
    let last = &states[3].1;
    assert_eq!(last.status, TaskStatus::Completed);
    assert_eq!(tinycoder::store::replay_state(&store, "r").await.expect("fold"), *last);
    assert!(tinycoder::store::replay(&store, "nothing").await.is_err(), "an unknown task is an error");
    assert!(tinycoder::store::replay_state(&store, "nothing").await.is_err());
}
