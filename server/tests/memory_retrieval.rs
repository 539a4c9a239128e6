//! Long-term memory against a real SQLite/FTS5 store: a past error and its
//! fix are found for a new error worded differently; filters; the context
//! weight floor; ranking by weight; near-duplicates merged through the write
//! policy; embeddings, both with the test bed's REAL Ollama embeddings
//! (`scripts/testbed.sh up`) and, for control flow and failures, with a
//! scripted model double; reindex when the embedding model changes.

mod common;

use serde_json::json;
use std::sync::{Arc, Mutex};
use tinycoder::config::{MemoryConfig, ModelRole};
use tinycoder::contracts::{CriticScore, MemoryDecision, MemoryKind, MemorySource};
use tinycoder::llm::{ChatRequest, ChatStream, LlmError, ModelClient, ModelInfo};
use tinycoder::memory::policy::{decide, PolicyInput, SafetySignals};
use tinycoder::memory::{MemoryFilter, MemoryRetriever, MemoryStore, NewMemory};
use tinycoder::store::{Store, StoreSettings};
use tokio_util::sync::CancellationToken;

fn config() -> MemoryConfig {
    tinycoder::config::LoadedConfig::load(&tinycoder::config::ConfigInputs::default()).expect("defaults").config.memory
}

fn item(text: &str, kind: MemoryKind, weight: f32) -> NewMemory {
    NewMemory {
        text: text.into(),
        kind,
        source: MemorySource::Tool,
        weight,
        task_id: None,
        session_id: None,
        metadata: json!({}),
    }
}

const TYPE_ERROR: &str = "TypeError: unsupported operand type(s) for +: 'int' and 'str'\nFix: convert the string with int() before the addition.";
const PAST_ERRORS: &[&str] = &[
    "AttributeError: 'list' object has no attribute 'append'\nFix: the value was a tuple; build a list instead.",
    "KeyError: 'name' when reading the config dict\nFix: use dict.get('name', default).",
    "ZeroDivisionError: division by zero in average()\nFix: return 0 for an empty list.",
    "IndexError: list index out of range in the loop\nFix: iterate with enumerate instead of a manual index.",
    "ValueError: invalid literal for int() with base 10: 'abc'\nFix: validate the input before calling int().",
    "ModuleNotFoundError: No module named 'requests'\nFix: add requests to the dependencies.",
];

async fn seeded() -> (tempfile::TempDir, MemoryStore, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("db.sqlite3"), StoreSettings::default()).expect("open");
    let memory = MemoryStore::new(store);
    for text in PAST_ERRORS {
        memory.insert(item(text, MemoryKind::ErrorFix, 0.7)).await.expect("insert");
    }
    let target = memory.insert(item(TYPE_ERROR, MemoryKind::ErrorFix, 0.7)).await.expect("insert").id;
    memory
        .insert(item("Decision: tests run with pytest -q from the repository root", MemoryKind::Decision, 0.9))
        .await
        .expect("insert");
    (dir, memory, target)
}

#[tokio::test]
async fn a_past_error_is_found_for_a_new_error_worded_differently() {
    let (_dir, memory, target) = seeded().await;
    let retriever = MemoryRetriever::new(memory.clone(), config(), None);
    let found = retriever.for_context("can't add int and str in total()", 3).await.expect("search");
    assert_eq!(found.first().map(|f| f.entry.id.as_str()), Some(target.as_str()), "{found:#?}");
    assert!(found[0].entry.text.contains("Fix:"), "the fix comes with the error");
    // The same error, said another way.
    let found = retriever
        .search("Object of type 'list' doesn't have 'append' method", MemoryFilter::default(), 3)
        .await
        .expect("search");
    assert!(found[0].entry.text.starts_with("AttributeError"), "{found:#?}");
    // Nothing related: nothing to show, and no error.
    assert!(retriever.search("!!! ???", MemoryFilter::default(), 3).await.expect("search").is_empty());
}

#[tokio::test]
async fn low_weight_items_never_reach_the_context_and_weight_ranks() {
    let (_dir, memory, target) = seeded().await;
    let cfg = config();
    let retriever = MemoryRetriever::new(memory.clone(), cfg.clone(), None);
    assert!(memory.update_weight(&target, cfg.min_weight_for_context - 0.1).await.expect("update"));
    let searched = retriever.search("can't add int and str", MemoryFilter::default(), 10).await.expect("search");
    assert!(searched.iter().any(|s| s.entry.id == target), "plain search still lists it");
    let context = retriever.for_context("can't add int and str", 10).await.expect("context");
    assert!(!context.is_empty());
    assert!(context.iter().all(|s| s.entry.id != target && s.entry.weight >= cfg.min_weight_for_context));
    // Two equally relevant items: the heavier one first.
    let light = memory
        .insert(item("prefer tabs for indentation in Makefiles", MemoryKind::UserPreference, 0.4))
        .await
        .expect("insert");
    let heavy = memory
        .insert(item("prefer tabs for indentation in Makefiles", MemoryKind::UserPreference, 0.95))
        .await
        .expect("insert");
    let found = retriever.search("tabs indentation", MemoryFilter::default(), 2).await.expect("search");
    assert_eq!(found.iter().map(|f| f.entry.id.clone()).collect::<Vec<_>>(), vec![heavy.id, light.id]);
}

#[tokio::test]
async fn crud_and_filters() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = MemoryStore::new(Store::open(&dir.path().join("db.sqlite3"), StoreSettings::default()).expect("open"));
    let mut a = item("use ruff for linting", MemoryKind::UserPreference, 0.9);
    a.source = MemorySource::User;
    a.session_id = Some("s1".into());
    let a = memory.insert(a).await.expect("insert");
    let mut b = item("the parser lives in src/parse.py", MemoryKind::Fact, 0.6);
    b.task_id = Some("t1".into());
    b.metadata = json!({"file": "src/parse.py"});
    let b = memory.insert(b).await.expect("insert");
    let all = memory.list(MemoryFilter::default(), 10).await.expect("list");
    assert_eq!(all.len(), 2);
    let by = |f: MemoryFilter| {
        let memory = memory.clone();
        async move { memory.list(f, 10).await.expect("list").into_iter().map(|e| e.id).collect::<Vec<_>>() }
    };
    assert_eq!(by(MemoryFilter { kind: Some(MemoryKind::Fact), ..Default::default() }).await, vec![b.id.clone()]);
    assert_eq!(by(MemoryFilter { source: Some(MemorySource::User), ..Default::default() }).await, vec![a.id.clone()]);
    assert_eq!(by(MemoryFilter { session_id: Some("s1".into()), ..Default::default() }).await, vec![a.id.clone()]);
    assert_eq!(by(MemoryFilter { task_id: Some("t1".into()), ..Default::default() }).await, vec![b.id.clone()]);
    assert_eq!(by(MemoryFilter { min_weight: Some(0.8), ..Default::default() }).await, vec![a.id.clone()]);
    let retriever = MemoryRetriever::new(memory.clone(), config(), None);
    let filtered = retriever
        .search("parser ruff linting", MemoryFilter { kind: Some(MemoryKind::Fact), ..Default::default() }, 5)
        .await
        .expect("search");
    assert_eq!(filtered.iter().map(|s| s.entry.id.clone()).collect::<Vec<_>>(), vec![b.id.clone()]);
    assert_eq!(memory.get(&b.id).await.expect("get").map(|e| e.metadata), Some(json!({"file": "src/parse.py"})));
    assert!(memory.delete(&b.id).await.expect("delete"));
    assert!(!memory.delete(&b.id).await.expect("delete again"));
    assert!(
        retriever.search("parser", MemoryFilter::default(), 5).await.expect("search").is_empty(),
        "index entry gone too"
    );
}

#[tokio::test]
async fn near_duplicates_are_merged_not_stacked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = MemoryStore::new(Store::open(&dir.path().join("db.sqlite3"), StoreSettings::default()).expect("open"));
    let cfg = config();
    let critic = CriticScore {
        correctness: 0.9,
        usefulness: 0.9,
        safety: 1.0,
        memory_store: true,
        weight: 0.8,
        explanation: "useful".into(),
    };
    let texts = [
        "Fact: the test command is pytest -q tests/",
        "Fact: the test command is pytest -q tests/ now",
        "Fact: the API server listens on port 8080",
    ];
    for text in texts {
        let duplicate = memory.find_near_duplicate(text, MemoryKind::Fact).await.expect("dup");
        let input = PolicyInput {
            critic: Some(&critic),
            kind: MemoryKind::Fact,
            source: MemorySource::Tool,
            runtime_weight: 1.0,
            duplicate: duplicate.as_ref(),
            safety: SafetySignals::default(),
        };
        let decision = decide(&input, &cfg);
        assert!(
            matches!(decision, MemoryDecision::MergeWithExisting { .. } | MemoryDecision::StoreWithWeight { .. }),
            "{decision:?}"
        );
        let mut candidate = item(text, MemoryKind::Fact, 0.0);
        if matches!(decision, MemoryDecision::MergeWithExisting { .. }) {
            candidate.metadata = json!({"merged": true});
        }
        memory.apply_decision(&decision, candidate).await.expect("apply").expect("stored or merged");
    }
    let all = memory.list(MemoryFilter::default(), 10).await.expect("list");
    assert_eq!(all.len(), 2, "the reworded fact merged: {all:#?}");
    let merged = all.iter().find(|e| e.text.contains("pytest")).expect("merged item");
    assert!(merged.text.ends_with("now"), "the fact is updated");
    assert!(merged.weight > 0.855 + 0.05, "weights combined ({})", merged.weight);
    assert_eq!(merged.metadata, json!({"merged": true}));
}

/// A scripted model double for embeddings: each word maps to a concept
/// dimension, so synonyms land close together. Records every call.
struct ScriptedModel {
    calls: Mutex<Vec<(String, usize)>>,
    fail: bool,
}

impl ScriptedModel {
    fn vector(model: &str, text: &str) -> Vec<f32> {
        let concepts: [&[&str]; 4] = [
            &["add", "adding", "plus", "sum", "summing", "addition", "operand"],
            &["int", "str", "string", "text", "number", "integer"],
            &["list", "append", "array"],
            &["dict", "key", "mapping"],
        ];
        let mut v = vec![0.0f32; if model == "wide" { 5 } else { 4 }];
        for word in text.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
            for (i, words) in concepts.iter().enumerate() {
                if words.contains(&word) {
                    v[i] += 1.0;
                }
            }
        }
        v
    }
}

#[async_trait::async_trait]
impl ModelClient for ScriptedModel {
    fn backend(&self) -> tinycoder::config::BackendKind {
        tinycoder::config::BackendKind::Ollama
    }
    fn url(&self) -> &str {
        "scripted://"
    }
    async fn chat_stream(&self, _req: ChatRequest, _cancel: CancellationToken) -> Result<ChatStream, LlmError> {
        Err(LlmError::Cancelled)
    }
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(Vec::new())
    }
    async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError> {
        Ok(None)
    }
    async fn count_tokens(&self, _role: ModelRole, _text: &str) -> Result<Option<usize>, LlmError> {
        Ok(None)
    }
    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        self.calls.lock().expect("lock").push((model.to_string(), inputs.len()));
        if self.fail {
            return Err(LlmError::Cancelled);
        }
        Ok(inputs.iter().map(|t| Self::vector(model, t)).collect())
    }
}

#[tokio::test]
async fn scripted_embeddings_blend_in_and_reindex_when_the_model_changes() {
    let (_dir, memory, target) = seeded().await;
    let total = memory.list(MemoryFilter::default(), 100).await.expect("list").len();
    let model = Arc::new(ScriptedModel { calls: Mutex::new(Vec::new()), fail: false });
    let mut cfg = config();
    cfg.embedding_model = "narrow".into();
    let retriever = MemoryRetriever::new(memory.clone(), cfg.clone(), Some(model.clone()));
    assert_eq!(retriever.reindex().await.expect("reindex"), total);
    assert_eq!(retriever.reindex().await.expect("reindex again"), 0, "nothing missing the second time");
    // No word in common with the stored error: only the semantic part can find it.
    let found = retriever.search("summing number plus text", MemoryFilter::default(), 1).await.expect("search");
    assert_eq!(found.first().map(|f| f.entry.id.as_str()), Some(target.as_str()), "{found:#?}");
    assert!(found[0].semantic_score > 0.9 && found[0].text_score == 0.0);
    let entry = memory.get(&target).await.expect("get").expect("entry");
    assert_eq!((entry.embedding_model.as_deref(), entry.embedding_dim), (Some("narrow"), Some(4)));
    // The model changes: old vectors go, every item is embedded again with the new one.
    cfg.embedding_model = "wide".into();
    let retriever = MemoryRetriever::new(memory.clone(), cfg.clone(), Some(model.clone()));
    assert_eq!(retriever.reindex().await.expect("reindex"), total);
    let entry = memory.get(&target).await.expect("get").expect("entry");
    assert_eq!((entry.embedding_model.as_deref(), entry.embedding_dim), (Some("wide"), Some(5)));
    assert!(model.calls.lock().expect("lock").iter().all(|(m, n)| (m == "narrow" || m == "wide") && *n <= 32));
    // The embedding model is down: search degrades to full text, no error.
    let down = Arc::new(ScriptedModel { calls: Mutex::new(Vec::new()), fail: true });
    let retriever = MemoryRetriever::new(memory.clone(), cfg, Some(down));
    let found = retriever.search("can't add int and str", MemoryFilter::default(), 1).await.expect("degraded search");
    assert_eq!(found.first().map(|f| f.entry.id.as_str()), Some(target.as_str()));
    assert_eq!(retriever.reindex().await.expect("nothing to embed"), 0);
    let fresh = memory
        .insert(item("RecursionError: maximum recursion depth exceeded", MemoryKind::ErrorFix, 0.8))
        .await
        .expect("insert");
    let err = retriever.reindex().await.expect_err("reindex reports the failure");
    assert!(err.to_string().contains("wide"), "{err}");
    let entry = memory.get(&fresh.id).await.expect("get").expect("entry");
    assert_eq!(entry.embedding_model, None, "no vector stored for it");
}

/// The embedding models of the real-embedding test: two chat models of the test
/// bed's Ollama (it serves no embedding model), of different widths.
const EMBED_MODEL: &str = "smollm2";
const OTHER_EMBED_MODEL: &str = "qwen2.5-coder:0.5b";

/// The stored error reworded: the fix said another way. Shares words with it,
/// but the assertions below hold on the vector part alone.
const TYPE_ERROR_REWORDED: &str =
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'\nFix: call int() on the string before adding it.";

/// Shares no word with the reworded query: only the vector part can bring it in.
const NO_SHARED_WORD: &str = "Preference: four spaces per indentation level";

/// Retrieval with REAL embeddings from the test bed's Ollama (`/api/embed`
/// through tinycoder's own `ModelClient::embed`).
///
/// The test bed's models are chat models, not embedding models, and their
/// vectors rank loose paraphrases poorly (a differently worded question about
/// adding an int to a str scores no better than unrelated errors). What holds,
/// and is asserted: a near-duplicate of a stored error (same error, fix
/// reworded) is the nearest vector among dissimilar items, so the vector part
/// alone ranks it first, and the blend keeps it first; every stored item is
/// scored by the vector part, even one with no word in common with the query;
/// vectors carry the model's name and width, and a change of model re-embeds
/// everything with the new one.
#[tokio::test]
async fn real_embeddings_rank_a_near_duplicate_first_and_reindex_on_model_change() {
    let _guard = common::serial().await;
    let url = common::ollama_url();
    common::require_server(&url, "/api/version").await;
    let client = tinycoder::llm::client_from_config(&common::test_config(tinycoder::config::BackendKind::Ollama, &url))
        .expect("client");
    let width = |model: &'static str| {
        let client = client.clone();
        async move {
            let v = client.embed(model, &["probe".to_string()]).await.unwrap_or_else(|e| panic!("{model}: {e}"));
            assert_eq!(v.len(), 1, "{model}: one vector per text");
            assert!(v[0].len() >= 64 && v[0].iter().any(|x| *x != 0.0), "{model}: a real vector ({})", v[0].len());
            v[0].len() as u32
        }
    };
    let (narrow, wide) = (width(EMBED_MODEL).await, width(OTHER_EMBED_MODEL).await);
    assert_ne!(narrow, wide, "the two models must differ in width for the reindex check");

    let (_dir, memory, target) = seeded().await;
    let unrelated = memory.insert(item(NO_SHARED_WORD, MemoryKind::UserPreference, 0.7)).await.expect("insert").id;
    let total = memory.list(MemoryFilter::default(), 100).await.expect("list").len();
    let mut cfg = config();
    cfg.embedding_model = EMBED_MODEL.into();
    let retriever = MemoryRetriever::new(memory.clone(), cfg.clone(), Some(client.clone()));
    assert_eq!(retriever.reindex().await.expect("reindex"), total);
    assert_eq!(retriever.reindex().await.expect("reindex again"), 0, "nothing missing the second time");
    let entry = memory.get(&target).await.expect("get").expect("entry");
    assert_eq!((entry.embedding_model.as_deref(), entry.embedding_dim), (Some(EMBED_MODEL), Some(narrow)));

    let check_ranking = |retriever: MemoryRetriever, model: &'static str| {
        let (target, unrelated) = (target.clone(), unrelated.clone());
        async move {
            let all = retriever.search(TYPE_ERROR_REWORDED, MemoryFilter::default(), 100).await.expect("search");
            assert_eq!(all.len(), total, "{model}: the vector part scores every item: {all:#?}");
            let nearest = all.iter().max_by(|a, b| a.semantic_score.total_cmp(&b.semantic_score)).expect("some");
            assert_eq!(
                nearest.entry.id, target,
                "{model}: the vector part alone ranks the near-duplicate first: {all:#?}"
            );
            assert_eq!(all[0].entry.id, target, "{model}: the blend ranks it first: {all:#?}");
            assert!(all[0].semantic_score > 0.0 && all[0].text_score > 0.0, "{model}: both parts count: {:?}", all[0]);
            let only_vector = all.iter().find(|s| s.entry.id == unrelated).expect("the item with no shared word");
            assert!(
                only_vector.text_score == 0.0 && only_vector.semantic_score > 0.0,
                "{model}: found through the vector part only: {only_vector:?}"
            );
        }
    };
    check_ranking(retriever, EMBED_MODEL).await;

    // The embedding model changes: every item is embedded again, with the new width.
    cfg.embedding_model = OTHER_EMBED_MODEL.into();
    let retriever = MemoryRetriever::new(memory.clone(), cfg, Some(client.clone()));
    assert_eq!(retriever.reindex().await.expect("reindex with the new model"), total);
    for e in memory.list(MemoryFilter::default(), 100).await.expect("list") {
        assert_eq!((e.embedding_model.as_deref(), e.embedding_dim), (Some(OTHER_EMBED_MODEL), Some(wide)), "{e:?}");
    }
    check_ranking(retriever, OTHER_EMBED_MODEL).await;
}
