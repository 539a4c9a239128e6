//! Persistence of memory items (`memory_items`, `memory_fts`, `memory_vectors` in the workspace store).

use crate::contracts::{format_rfc3339_ms, now_ms, MemoryEntry, MemoryKind, MemorySource};
use crate::store::{Store, StoreError};
use rusqlite::{params, Connection, OptionalExtension, Row};
use std::collections::HashSet;

/// A memory item to insert.
#[derive(Debug, Clone)]
pub struct NewMemory {
    pub text: String,
    pub kind: MemoryKind,
    pub source: MemorySource,
    pub weight: f32,
    pub task_id: Option<String>,
    pub session_id: Option<String>,
    pub metadata: serde_json::Value,
}

/// Which items a listing or search covers (`None` = any).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryFilter {
    pub kind: Option<MemoryKind>,
    pub source: Option<MemorySource>,
    pub task_id: Option<String>,
    pub session_id: Option<String>,
    /// Only items at least this heavy.
    pub min_weight: Option<f32>,
}

/// An existing item close to a candidate (input of the write policy).
#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateMatch {
    pub id: String,
    pub weight: f32,
    /// 0..1 (token-set Jaccard).
    pub similarity: f32,
}

/// Memory items in the workspace store; cheap to clone.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    store: Store,
}

pub(crate) const ITEM_COLUMNS: &str =
    "m.id, m.text, m.kind, m.source, m.weight, m.task_id, m.session_id, m.metadata, m.created_ms, m.updated_ms, v.model, v.dim";

pub(crate) fn item_from_row(r: &Row<'_>) -> rusqlite::Result<Result<(MemoryEntry, i64), StoreError>> {
    let kind: String = r.get(2)?;
    let source: String = r.get(3)?;
    let metadata: String = r.get(7)?;
    let (Some(kind), Some(source)) = (MemoryKind::parse(&kind), MemorySource::parse(&source)) else {
        return Ok(Err(StoreError::InvalidData {
            what: "memory kind/source".into(),
            details: format!("{kind}/{source}"),
        }));
    };
    let metadata = match serde_json::from_str(&metadata) {
        Ok(m) => m,
        Err(e) => return Ok(Err(StoreError::json("memory metadata", e))),
    };
    let updated_ms: i64 = r.get(9)?;
    let dim: Option<i64> = r.get(11)?;
    Ok(Ok((
        MemoryEntry {
            id: r.get(0)?,
            text: r.get(1)?,
            kind,
            source,
            weight: r.get::<_, f64>(4)? as f32,
            task_id: r.get(5)?,
            session_id: r.get(6)?,
            metadata,
            created_at: format_rfc3339_ms(r.get(8)?),
            updated_at: format_rfc3339_ms(updated_ms),
            embedding_model: r.get(10)?,
            embedding_dim: dim.map(|d| d.max(0) as u32),
        },
        updated_ms,
    )))
}

/// `WHERE` conditions for `filter` (on alias `m`), parameters from `?first` on.
pub(crate) fn filter_sql(filter: &MemoryFilter, first: usize) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value;
    let mut clauses = Vec::new();
    let mut values = Vec::new();
    let mut push = |clause: &str, v: Value| {
        clauses.push(clause.replace('?', &format!("?{}", first + values.len())));
        values.push(v);
    };
    if let Some(k) = filter.kind {
        push("m.kind = ?", Value::Text(k.as_str().into()));
    }
    if let Some(s) = filter.source {
        push("m.source = ?", Value::Text(s.as_str().into()));
    }
    if let Some(t) = &filter.task_id {
        push("m.task_id = ?", Value::Text(t.clone()));
    }
    if let Some(s) = &filter.session_id {
        push("m.session_id = ?", Value::Text(s.clone()));
    }
    if let Some(w) = filter.min_weight {
        push("m.weight >= ?", Value::Real(f64::from(w)));
    }
    let sql = if clauses.is_empty() { "1 = 1".to_string() } else { clauses.join(" AND ") };
    (sql, values)
}

/// Lower-cased word tokens (letters, digits, `_`), as the FTS tokenizer roughly sees them.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .map(|t| t.to_lowercase())
        .collect()
}

/// Jaccard similarity of the token sets of `a` and `b`.
pub(crate) fn jaccard(a: &str, b: &str) -> f32 {
    let a: HashSet<String> = tokens(a).into_iter().collect();
    let b: HashSet<String> = tokens(b).into_iter().collect();
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let inter = a.intersection(&b).count() as f32;
    let union = a.union(&b).count() as f32;
    inter / union
}

/// An FTS5 query matching any of `text`'s words (each quoted, so punctuation and keywords are literal).
pub(crate) fn fts_any_query(text: &str) -> Option<String> {
    let mut seen = HashSet::new();
    let words: Vec<String> =
        tokens(text).into_iter().filter(|t| seen.insert(t.clone())).map(|t| format!("\"{t}\"")).collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

fn get_in(c: &Connection, id: &str) -> Result<Option<MemoryEntry>, StoreError> {
    let row = c
        .query_row(
            &format!("SELECT {ITEM_COLUMNS} FROM memory_items m LEFT JOIN memory_vectors v ON v.item_id = m.id WHERE m.id = ?1"),
            [id],
            item_from_row,
        )
        .optional()?;
    Ok(row.transpose()?.map(|(e, _)| e))
}

impl MemoryStore {
    /// Memory in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// The store underneath.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Inserts an item (text and full-text index in one transaction).
    pub async fn insert(&self, new: NewMemory) -> Result<MemoryEntry, StoreError> {
        self.store
            .call(move |c| {
                let id = uuid::Uuid::new_v4().to_string();
                let metadata = serde_json::to_string(&new.metadata).map_err(|e| StoreError::json("memory metadata", e))?;
                let now = now_ms();
                let tx = c.transaction()?;
                tx.execute(
                    "INSERT INTO memory_items (id, text, kind, source, weight, task_id, session_id, metadata, created_ms, updated_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
                    params![
                        id,
                        new.text,
                        new.kind.as_str(),
                        new.source.as_str(),
                        f64::from(new.weight.clamp(0.0, 1.0)),
                        new.task_id,
                        new.session_id,
                        metadata,
                        now
                    ],
                )?;
                tx.execute("INSERT INTO memory_fts (text, item_id) VALUES (?1, ?2)", params![new.text, id])?;
                let entry = get_in(&tx, &id)?.ok_or_else(|| StoreError::NotFound { what: format!("memory item {id}") })?;
                tx.commit()?;
                Ok(entry)
            })
            .await
    }

    /// One item.
    pub async fn get(&self, id: &str) -> Result<Option<MemoryEntry>, StoreError> {
        let id = id.to_string();
        self.store.call(move |c| get_in(c, &id)).await
    }

    /// Sets an item's weight (clamped to 0..1); false when it does not exist.
    pub async fn update_weight(&self, id: &str, weight: f32) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.store
            .call(move |c| {
                Ok(c.execute(
                    "UPDATE memory_items SET weight = ?2, updated_ms = ?3 WHERE id = ?1",
                    params![id, f64::from(weight.clamp(0.0, 1.0)), now_ms()],
                )? == 1)
            })
            .await
    }

    /// Merges a near-duplicate into `id`: new text (the fact, updated), new weight, metadata
    /// merged key by key; its vector is dropped (it no longer matches the text). False when missing.
    pub async fn merge(
        &self,
        id: &str,
        text: &str,
        weight: f32,
        metadata: serde_json::Value,
    ) -> Result<bool, StoreError> {
        let (id, text) = (id.to_string(), text.to_string());
        self.store
            .call(move |c| {
                let tx = c.transaction()?;
                let Some(old) = get_in(&tx, &id)? else { return Ok(false) };
                let mut merged = old.metadata;
                match (merged.as_object_mut(), metadata) {
                    (Some(m), serde_json::Value::Object(new)) => m.extend(new),
                    (_, serde_json::Value::Null) => {}
                    (_, other) => merged = other,
                }
                let merged = serde_json::to_string(&merged).map_err(|e| StoreError::json("memory metadata", e))?;
                tx.execute(
                    "UPDATE memory_items SET text = ?2, weight = ?3, metadata = ?4, updated_ms = ?5 WHERE id = ?1",
                    params![id, text, f64::from(weight.clamp(0.0, 1.0)), merged, now_ms()],
                )?;
                tx.execute("DELETE FROM memory_fts WHERE item_id = ?1", [&id])?;
                tx.execute("INSERT INTO memory_fts (text, item_id) VALUES (?1, ?2)", params![text, id])?;
                tx.execute("DELETE FROM memory_vectors WHERE item_id = ?1", [&id])?;
                tx.commit()?;
                Ok(true)
            })
            .await
    }

    /// Deletes an item (and its index entries); false when it did not exist.
    pub async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.store
            .call(move |c| {
                let tx = c.transaction()?;
                tx.execute("DELETE FROM memory_fts WHERE item_id = ?1", [&id])?;
                tx.execute("DELETE FROM memory_vectors WHERE item_id = ?1", [&id])?;
                let n = tx.execute("DELETE FROM memory_items WHERE id = ?1", [&id])?;
                tx.commit()?;
                Ok(n == 1)
            })
            .await
    }

    /// Items matching `filter`, newest first.
    pub async fn list(&self, filter: MemoryFilter, limit: usize) -> Result<Vec<MemoryEntry>, StoreError> {
        self.store
            .call(move |c| {
                let (clause, mut values) = filter_sql(&filter, 1);
                values.push(rusqlite::types::Value::Integer(limit as i64));
                let sql = format!(
                    "SELECT {ITEM_COLUMNS} FROM memory_items m LEFT JOIN memory_vectors v ON v.item_id = m.id
                     WHERE {clause} ORDER BY m.updated_ms DESC, m.id LIMIT ?{}",
                    values.len()
                );
                let mut stmt = c.prepare(&sql)?;
                let rows = stmt.query_map(rusqlite::params_from_iter(values), item_from_row)?;
                let mut out = Vec::new();
                for r in rows {
                    out.push(r??.0);
                }
                Ok(out)
            })
            .await
    }

    /// Applies the write policy's decision to `candidate`: returns the id stored or merged into,
    /// `None` for a skip. The runtime calls this; the policy itself never writes.
    pub async fn apply_decision(
        &self,
        decision: &crate::contracts::MemoryDecision,
        mut candidate: NewMemory,
    ) -> Result<Option<String>, StoreError> {
        use crate::contracts::MemoryDecision;
        match decision {
            MemoryDecision::Skip { .. } => Ok(None),
            MemoryDecision::Store => Ok(Some(self.insert(candidate).await?.id)),
            MemoryDecision::StoreWithWeight { weight } => {
                candidate.weight = *weight;
                Ok(Some(self.insert(candidate).await?.id))
            }
            MemoryDecision::MergeWithExisting { id, new_weight } => {
                if self.merge(id, &candidate.text, *new_weight, candidate.metadata.clone()).await? {
                    Ok(Some(id.clone()))
                } else {
                    // The item went away meanwhile: keep the knowledge as a new item.
                    candidate.weight = *new_weight;
                    Ok(Some(self.insert(candidate).await?.id))
                }
            }
        }
    }

    /// The existing item of `kind` most similar to `text` (token overlap among full-text matches), if any.
    pub async fn find_near_duplicate(
        &self,
        text: &str,
        kind: MemoryKind,
    ) -> Result<Option<DuplicateMatch>, StoreError> {
        let Some(query) = fts_any_query(text) else { return Ok(None) };
        let text = text.to_string();
        self.store
            .call(move |c| {
                let mut stmt = c.prepare_cached(
                    "SELECT m.id, m.text, m.weight FROM memory_fts f JOIN memory_items m ON m.id = f.item_id
                     WHERE memory_fts MATCH ?1 AND m.kind = ?2 ORDER BY bm25(memory_fts) LIMIT 20",
                )?;
                let rows = stmt.query_map(params![query, kind.as_str()], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, f64>(2)?))
                })?;
                let mut best: Option<DuplicateMatch> = None;
                for r in rows {
                    let (id, other, weight) = r?;
                    let similarity = jaccard(&text, &other);
                    if best.as_ref().is_none_or(|b| similarity > b.similarity) {
                        best = Some(DuplicateMatch { id, weight: weight as f32, similarity });
                    }
                }
                Ok(best)
            })
            .await
    }
}
