//! Retrieval: BM25 over FTS5, blended with the item's weight, its recency
//! and, when `memory.embedding_model` is set, cosine similarity of embeddings.
//!
//! score = text_weight · bm25 / (bm25 + text_half_score) + semantic_weight · max(cos, 0)
//!       + item_weight · weight + recency_weight · 0.5^(age_days / half_life)
//! The text term saturates instead of being normalised to the best candidate,
//! so a match on a couple of common words ("a", "with") stays small.

use super::store::{filter_sql, fts_any_query, item_from_row, ITEM_COLUMNS};
use super::{MemoryFilter, MemoryStore};
use crate::config::MemoryConfig;
use crate::contracts::{now_ms, MemoryEntry};
use crate::llm::{LlmError, ModelClient};
use crate::store::StoreError;
use rusqlite::types::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// Why retrieval failed.
#[derive(Debug, thiserror::Error)]
pub enum RetrievalError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the embedding model `{model}` failed: {source}")]
    Embed { model: String, source: LlmError },
    #[error("the embedding model `{model}` returned {got} vectors for {expected} texts")]
    EmbedCount { model: String, expected: usize, got: usize },
}

/// A retrieved item with its score and the parts of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ScoredMemory {
    pub entry: MemoryEntry,
    pub score: f32,
    /// BM25 saturated to 0..1 (0 when it matched only semantically).
    pub text_score: f32,
    /// Cosine similarity (0 without embeddings).
    pub semantic_score: f32,
}

/// Searches memory; cheap to clone.
#[derive(Clone)]
pub struct MemoryRetriever {
    memory: MemoryStore,
    config: MemoryConfig,
    embedder: Option<Arc<dyn ModelClient>>,
}

/// Embeddings are batched this many texts per call when reindexing.
const EMBED_BATCH: usize = 32;

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

struct Candidate {
    entry: MemoryEntry,
    updated_ms: i64,
    bm25: f32,
    cosine: f32,
}

impl MemoryRetriever {
    /// A retriever; `embedder` is used only when `config.embedding_model` is non-empty.
    pub fn new(memory: MemoryStore, config: MemoryConfig, embedder: Option<Arc<dyn ModelClient>>) -> Self {
        Self { memory, config, embedder }
    }

    fn embedding_model(&self) -> Option<(&str, &Arc<dyn ModelClient>)> {
        let model = self.config.embedding_model.as_str();
        match (&self.embedder, model.is_empty()) {
            (Some(e), false) => Some((model, e)),
            _ => None,
        }
    }

    /// Items for a model's context: like [`MemoryRetriever::search`], but never below `memory.min_weight_for_context`.
    pub async fn for_context(&self, query: &str, limit: usize) -> Result<Vec<ScoredMemory>, RetrievalError> {
        let floor = self.config.min_weight_for_context;
        let filter = MemoryFilter { min_weight: Some(floor), ..Default::default() };
        let mut found = self.search(query, filter, limit).await?;
        // Belt and braces: the invariant holds even if the SQL filter changes.
        found.retain(|s| s.entry.weight >= floor);
        Ok(found)
    }

    /// The best `limit` items for `query` among those matching `filter`, best first.
    /// With embeddings configured and the model down, it degrades to text-only and logs why.
    pub async fn search(
        &self,
        query: &str,
        filter: MemoryFilter,
        limit: usize,
    ) -> Result<Vec<ScoredMemory>, RetrievalError> {
        let query_vector = match self.embedding_model() {
            Some((model, client)) => match client.embed(model, &[query.to_string()]).await {
                Ok(mut v) if v.len() == 1 => v.pop().map(|v| (model.to_string(), v)),
                Ok(v) => {
                    tracing::warn!(
                        "embedding model `{model}` returned {} vectors for 1 text; text-only search",
                        v.len()
                    );
                    None
                }
                Err(e) => {
                    tracing::warn!("embedding model `{model}` failed ({e}); text-only search");
                    None
                }
            },
            None => None,
        };
        let fts = fts_any_query(query);
        let n = self.config.candidates as i64;
        let candidates = self
            .memory
            .store()
            .call(move |c| {
                let mut by_id: HashMap<String, Candidate> = HashMap::new();
                if let Some(fts) = fts {
                    let (clause, mut values) = filter_sql(&filter, 3);
                    values.insert(0, Value::Integer(n));
                    values.insert(0, Value::Text(fts));
                    let sql = format!(
                        "SELECT {ITEM_COLUMNS}, bm25(memory_fts) FROM memory_fts f
                         JOIN memory_items m ON m.id = f.item_id LEFT JOIN memory_vectors v ON v.item_id = m.id
                         WHERE memory_fts MATCH ?1 AND {clause} ORDER BY bm25(memory_fts) LIMIT ?2"
                    );
                    let mut stmt = c.prepare_cached(&sql)?;
                    let mut rows = stmt.query(rusqlite::params_from_iter(values))?;
                    while let Some(row) = rows.next()? {
                        let (entry, updated_ms) = item_from_row(row)??;
                        // FTS5's bm25() is negative, more negative = better.
                        let bm25 = (-row.get::<_, f64>(12)?).max(0.0) as f32;
                        by_id.insert(entry.id.clone(), Candidate { entry, updated_ms, bm25, cosine: 0.0 });
                    }
                }
                if let Some((model, qv)) = query_vector {
                    let (clause, mut values) = filter_sql(&filter, 2);
                    values.insert(0, Value::Text(model));
                    let sql = format!(
                        "SELECT {ITEM_COLUMNS}, v.vector FROM memory_vectors v JOIN memory_items m ON m.id = v.item_id
                         WHERE v.model = ?1 AND {clause}"
                    );
                    let mut stmt = c.prepare_cached(&sql)?;
                    let mut rows = stmt.query(rusqlite::params_from_iter(values))?;
                    let mut semantic = Vec::new();
                    while let Some(row) = rows.next()? {
                        let blob: Vec<u8> = row.get(12)?;
                        let cos = cosine(&qv, &from_blob(&blob));
                        let (entry, updated_ms) = item_from_row(row)??;
                        semantic.push((cos, entry, updated_ms));
                    }
                    semantic.sort_by(|a, b| b.0.total_cmp(&a.0));
                    for (cos, entry, updated_ms) in semantic.into_iter().take(n as usize) {
                        by_id.entry(entry.id.clone()).and_modify(|c| c.cosine = cos).or_insert(Candidate {
                            entry,
                            updated_ms,
                            bm25: 0.0,
                            cosine: cos,
                        });
                    }
                }
                Ok(by_id.into_values().collect::<Vec<_>>())
            })
            .await?;
        Ok(self.rank(candidates, now_ms(), limit))
    }

    fn rank(&self, candidates: Vec<Candidate>, now: i64, limit: usize) -> Vec<ScoredMemory> {
        let cfg = &self.config;
        let mut scored: Vec<ScoredMemory> = candidates
            .into_iter()
            .map(|c| {
                let text_score = c.bm25 / (c.bm25 + cfg.text_half_score);
                let semantic_score = c.cosine.max(0.0);
                let age_days = ((now - c.updated_ms).max(0) as f32) / 86_400_000.0;
                let recency = 0.5f32.powf(age_days / cfg.recency_half_life_days);
                let score = cfg.text_weight * text_score
                    + cfg.semantic_weight * semantic_score
                    + cfg.item_weight * c.entry.weight
                    + cfg.recency_weight * recency;
                ScoredMemory { entry: c.entry, score, text_score, semantic_score }
            })
            .collect();
        scored.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.entry.id.cmp(&b.entry.id)));
        scored.truncate(limit);
        scored
    }

    /// Brings vectors in line with `memory.embedding_model`: drops vectors of
    /// other models and embeds every item without one. Returns how many were embedded.
    pub async fn reindex(&self) -> Result<usize, RetrievalError> {
        let Some((model, client)) = self.embedding_model() else {
            self.memory.store().call(|c| Ok(c.execute("DELETE FROM memory_vectors", [])?)).await?;
            return Ok(0);
        };
        let model = model.to_string();
        let m = model.clone();
        let missing: Vec<(String, String)> = self
            .memory
            .store()
            .call(move |c| {
                c.execute("DELETE FROM memory_vectors WHERE model <> ?1", [&m])?;
                let mut stmt = c.prepare(
                    "SELECT id, text FROM memory_items WHERE id NOT IN (SELECT item_id FROM memory_vectors) ORDER BY id",
                )?;
                let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await?;
        let mut done = 0;
        for batch in missing.chunks(EMBED_BATCH) {
            let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
            let vectors = client
                .embed(&model, &texts)
                .await
                .map_err(|source| RetrievalError::Embed { model: model.clone(), source })?;
            if vectors.len() != texts.len() {
                return Err(RetrievalError::EmbedCount { model, expected: texts.len(), got: vectors.len() });
            }
            let rows: Vec<(String, Vec<f32>)> = batch.iter().map(|(id, _)| id.clone()).zip(vectors).collect();
            let m = model.clone();
            done += self
                .memory
                .store()
                .call(move |c| {
                    let tx = c.transaction()?;
                    let mut n = 0;
                    for (id, v) in rows {
                        // An item deleted meanwhile simply gets no vector.
                        n += tx.execute(
                            "INSERT OR REPLACE INTO memory_vectors (item_id, model, dim, vector)
                             SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM memory_items WHERE id = ?1)",
                            rusqlite::params![id, m, v.len() as i64, to_blob(&v)],
                        )?;
                    }
                    tx.commit()?;
                    Ok(n)
                })
                .await?;
        }
        Ok(done)
    }
}
