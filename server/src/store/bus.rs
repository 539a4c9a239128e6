//! The event bus: durable append (commit first), then publish to subscribers.
//!
//! Delivery is at least once: a subscriber that lags or starts late catches up
//! from the store ([`EventBus::catch_up`]) and drops repeats with an
//! [`IdempotentSubscriber`] keyed by (task_id, sequence).

use super::{events, replay::next_status, tasks, CheckpointDraft, NewTask, Store, StoreError, TaskRecord};
use crate::contracts::{EventType, RuntimeEvent, TaskCheckpoint, TaskStatus};
use std::collections::HashMap;
use tokio::sync::broadcast;

/// Events buffered per subscriber before it lags (and must catch up from the store).
const CHANNEL_CAPACITY: usize = 1024;

/// An event to append.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub event_type: EventType,
    pub payload: serde_json::Value,
    /// The event that caused this one.
    pub causation_id: Option<String>,
    /// Defaults to the task id.
    pub correlation_id: Option<String>,
}

impl NewEvent {
    /// An event with a payload and no causation.
    pub fn new(event_type: EventType, payload: serde_json::Value) -> Self {
        Self { event_type, payload, causation_id: None, correlation_id: None }
    }

    /// Sets the causing event.
    pub fn caused_by(mut self, event: &RuntimeEvent) -> Self {
        self.causation_id = Some(event.event_id.clone());
        self
    }
}

/// Appends events durably and publishes them; cheap to clone.
#[derive(Clone, Debug)]
pub struct EventBus {
    store: Store,
    sender: broadcast::Sender<RuntimeEvent>,
}

/// Appends `new` events to `task_id` in the caller's transaction, keeping `tasks.status` equal to the reducer's.
fn append_in(conn: &rusqlite::Connection, task_id: &str, new: &[NewEvent]) -> Result<Vec<RuntimeEvent>, StoreError> {
    let record = tasks::get(conn, task_id)?.ok_or_else(|| StoreError::NotFound { what: format!("task {task_id}") })?;
    let mut status = record.status;
    let mut out = Vec::with_capacity(new.len());
    for n in new {
        let event = events::insert(
            conn,
            task_id,
            n.event_type,
            &n.payload,
            n.causation_id.as_deref(),
            n.correlation_id.as_deref(),
        )?;
        let next = next_status(status, &event);
        if next != status || n.event_type == EventType::TaskFailed {
            let reason = (n.event_type == EventType::TaskFailed)
                .then(|| n.payload.get("reason").and_then(|r| r.as_str()).unwrap_or("no reason recorded").to_string());
            tasks::set_status(conn, task_id, next, reason.as_deref())?;
            status = next;
        }
        out.push(event);
    }
    Ok(out)
}

impl EventBus {
    /// A bus over `store`.
    pub fn new(store: Store) -> Self {
        let (sender, _) = broadcast::channel(CHANNEL_CAPACITY);
        Self { store, sender }
    }

    /// The store underneath.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// A live feed of events committed from now on (pair it with [`EventBus::catch_up`]).
    pub fn subscribe(&self) -> broadcast::Receiver<RuntimeEvent> {
        self.sender.subscribe()
    }

    fn publish(&self, events: &[RuntimeEvent]) {
        for e in events {
            // No receiver is fine: the store has it.
            let _ = self.sender.send(e.clone());
        }
    }

    /// Creates a task and its `task_received` event in one transaction.
    pub async fn create_task(&self, new: NewTask) -> Result<(TaskRecord, RuntimeEvent), StoreError> {
        let task_id = new.task_id.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let id = task_id.clone();
        let (record, event) = self
            .store
            .call(move |conn| {
                let tx = conn.transaction()?;
                tasks::insert(&tx, &id, &new)?;
                let payload = serde_json::json!({"input": new.input, "context": new.context});
                let event = events::insert(&tx, &id, EventType::TaskReceived, &payload, None, None)?;
                let record =
                    tasks::get(&tx, &id)?.ok_or_else(|| StoreError::NotFound { what: format!("task {id}") })?;
                tx.commit()?;
                Ok((record, event))
            })
            .await?;
        self.publish(std::slice::from_ref(&event));
        Ok((record, event))
    }

    /// Appends one event: sequence assigned and committed before any subscriber sees it.
    pub async fn append(
        &self,
        task_id: &str,
        event_type: EventType,
        payload: serde_json::Value,
        causation_id: Option<&str>,
    ) -> Result<RuntimeEvent, StoreError> {
        let mut new = NewEvent::new(event_type, payload);
        new.causation_id = causation_id.map(str::to_string);
        let mut out = self.append_all(task_id, vec![new]).await?;
        out.pop().ok_or_else(|| StoreError::Conflict("append returned no event".into()))
    }

    /// Appends several events atomically (all or none), in order.
    pub async fn append_all(&self, task_id: &str, new: Vec<NewEvent>) -> Result<Vec<RuntimeEvent>, StoreError> {
        let id = task_id.to_string();
        let events = self
            .store
            .call(move |conn| {
                let tx = conn.transaction()?;
                let out = append_in(&tx, &id, &new)?;
                tx.commit()?;
                Ok(out)
            })
            .await?;
        self.publish(&events);
        Ok(events)
    }

    /// Saves a checkpoint and its `checkpoint_saved` event in one transaction, after `before` events.
    pub async fn checkpoint(
        &self,
        task_id: &str,
        before: Vec<NewEvent>,
        draft: CheckpointDraft,
    ) -> Result<Vec<RuntimeEvent>, StoreError> {
        let id = task_id.to_string();
        let events = self
            .store
            .call(move |conn| {
                let tx = conn.transaction()?;
                let mut out = append_in(&tx, &id, &before)?;
                // The checkpoint covers everything up to and including its own event.
                let seq = events::last_sequence(&tx, &id)? + 1;
                let checkpoint_id = tasks::insert_checkpoint(&tx, &id, &draft, seq)?;
                let payload = serde_json::json!({
                    "checkpoint_id": checkpoint_id,
                    "status": draft.status,
                    "active_step_id": draft.active_step_id,
                });
                out.extend(append_in(&tx, &id, &[NewEvent::new(EventType::CheckpointSaved, payload)])?);
                tx.commit()?;
                Ok(out)
            })
            .await?;
        self.publish(&events);
        Ok(events)
    }

    /// True when `task_id` has `store.checkpoint_every_events` events since its last checkpoint.
    pub async fn checkpoint_due(&self, task_id: &str) -> Result<bool, StoreError> {
        let every = u64::from(self.store.settings().checkpoint_every_events);
        if every == 0 {
            return Ok(false);
        }
        let id = task_id.to_string();
        Ok(self.store.call(move |c| tasks::events_since_checkpoint(c, &id)).await? >= every)
    }

    /// Ends a task as failed with `reason` (a `task_failed` event); a finished task is left as it is.
    pub async fn fail_task(&self, task_id: &str, reason: &str) -> Result<Option<RuntimeEvent>, StoreError> {
        let id = task_id.to_string();
        let reason = reason.to_string();
        let events = self
            .store
            .call(move |conn| {
                let tx = conn.transaction()?;
                let record =
                    tasks::get(&tx, &id)?.ok_or_else(|| StoreError::NotFound { what: format!("task {id}") })?;
                if record.status.is_terminal() {
                    return Ok(Vec::new());
                }
                let out = append_in(
                    &tx,
                    &id,
                    &[NewEvent::new(EventType::TaskFailed, serde_json::json!({"reason": reason}))],
                )?;
                tx.commit()?;
                Ok(out)
            })
            .await?;
        self.publish(&events);
        Ok(events.into_iter().next())
    }

    /// Events of `task_id` after sequence `after`, from the store (a late subscriber's catch-up).
    pub async fn catch_up(&self, task_id: &str, after: u64) -> Result<Vec<RuntimeEvent>, StoreError> {
        let id = task_id.to_string();
        self.store.call(move |c| events::list(c, &id, after)).await
    }

    /// One task.
    pub async fn task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let id = task_id.to_string();
        self.store.call(move |c| tasks::get(c, &id)).await
    }

    /// Tasks, newest first (for `tinycoder.tasks`).
    pub async fn tasks(&self, unfinished_only: bool, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        self.store.call(move |c| tasks::list(c, unfinished_only, limit)).await
    }

    /// The newest checkpoint of `task_id` that decodes.
    pub async fn last_checkpoint(&self, task_id: &str) -> Result<Option<TaskCheckpoint>, StoreError> {
        let id = task_id.to_string();
        self.store.call(move |c| tasks::last_valid_checkpoint(c, &id)).await
    }

    /// Deletes old events and checkpoints of finished tasks; returns (events, checkpoints) removed.
    pub async fn prune(&self, policy: super::RetentionPolicy) -> Result<(usize, usize), StoreError> {
        self.store.call(move |c| tasks::prune(c, policy)).await
    }

    /// Sets a status no other event implies (e.g. `testing`, `cancelled`) through a `status_changed` event.
    pub async fn set_status(&self, task_id: &str, status: TaskStatus) -> Result<RuntimeEvent, StoreError> {
        self.append(task_id, EventType::StatusChanged, serde_json::json!({"status": status}), None).await
    }
}

/// Drops events already seen, keyed by (task_id, sequence): makes an at-least-once feed exactly-once for its consumer.
#[derive(Debug, Default, Clone)]
pub struct IdempotentSubscriber {
    /// Highest sequence delivered per task. Events of a task are committed in
    /// sequence order, so anything at or below it is a repeat.
    delivered: HashMap<String, u64>,
}

impl IdempotentSubscriber {
    /// An empty subscriber.
    pub fn new() -> Self {
        Self::default()
    }

    /// True the first time an event is offered; false for a repeat.
    pub fn accept(&mut self, event: &RuntimeEvent) -> bool {
        let last = self.delivered.entry(event.task_id.clone()).or_insert(0);
        if event.sequence <= *last {
            return false;
        }
        *last = event.sequence;
        true
    }

    /// Delivers `event` in order: nothing for a repeat; for an event past a gap
    /// (the subscriber lagged or joined late), the missing events from the store first.
    pub async fn deliver(&mut self, bus: &EventBus, event: RuntimeEvent) -> Result<Vec<RuntimeEvent>, StoreError> {
        let last = self.position(&event.task_id);
        if event.sequence <= last {
            return Ok(Vec::new());
        }
        if event.sequence == last + 1 {
            self.accept(&event);
            return Ok(vec![event]);
        }
        let missing = bus.catch_up(&event.task_id, last).await?;
        Ok(missing.into_iter().filter(|e| e.sequence <= event.sequence && self.accept(e)).collect())
    }

    /// The highest sequence delivered for `task_id` (0 = none): where to catch up from.
    pub fn position(&self, task_id: &str) -> u64 {
        self.delivered.get(task_id).copied().unwrap_or(0)
    }
}
