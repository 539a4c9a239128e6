//! The tantivy store: one long-lived writer, manual reader reloads after each
//! commit, and the search: per-field BM25 weighted and summed, plus the
//! definitions an error points at, with test code ranked down (see
//! [`Ranking`]). Queries are built from analyzer terms, never parsed as query
//! syntax, so a diagnostic with quotes or colons cannot fail.

use super::chunk::FileAnalysis;
use super::query::parse_query;
use super::ranking::{QueryWord, Ranking, SearchField};
use super::schema::{build_schema, Fields};
use super::tokenizer::{
    prose_analyzer, CodeTokenizer, StemmedCodeTokenizer, CODE_STEM_TOKENIZER, CODE_TOKENIZER, PROSE_TOKENIZER,
};
use super::IndexError;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, Occur, Query, RangeQuery, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    doc, DocAddress, DocId, Index, IndexReader, IndexWriter, ReloadPolicy, Score, SegmentReader, TantivyDocument, Term,
};

/// Results ranked per result asked for, before duplicates of one definition are merged.
const FETCH_FACTOR: usize = 3;
/// Extra results ranked beyond that.
const FETCH_EXTRA: usize = 10;

/// A query ready to run (built by [`WorkspaceIndex::search`](super::WorkspaceIndex::search)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchPlan {
    /// Words with their weights (see [`Ranking::query_words`]).
    pub words: Vec<QueryWord>,
    /// Definitions the query points at, each given a fixed score.
    pub anchors: Vec<Anchor>,
    /// Files whose chunks get a fixed score.
    pub files: Vec<(String, f32)>,
    /// Whether test code keeps its full score.
    pub about_tests: bool,
}

/// A definition an error points at: its file, name and (when the name is not
/// unique in the file) its line range.
#[derive(Debug, Clone, PartialEq)]
pub struct Anchor {
    pub path: String,
    pub name: String,
    /// 1-based first and last line of the definition.
    pub lines: Option<(usize, usize)>,
    pub score: f32,
}

/// One search result: a chunk of a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub path: String,
    pub symbol: String,
    pub container: String,
    pub kind: String,
    pub signature: String,
    pub language: String,
    /// 1-based inclusive lines.
    pub start_line: usize,
    pub end_line: usize,
    pub score: f32,
    /// Whether the chunk is test code.
    pub is_test: bool,
    /// The chunk's text.
    #[serde(skip)]
    pub body: String,
}

/// The persisted tantivy index of one workspace.
pub struct IndexStore {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    writer: RwLock<IndexWriter>,
    fields: Fields,
}

impl std::fmt::Debug for IndexStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexStore").field("dir", &self.dir).finish()
    }
}

impl IndexStore {
    /// Opens (or creates) the index in `dir`; an index with another schema is rebuilt empty.
    pub fn open(dir: &Path, writer_memory_mb: u64) -> Result<Self, IndexError> {
        let err = |source| IndexError::Tantivy { dir: dir.to_path_buf(), source };
        std::fs::create_dir_all(dir).map_err(|source| IndexError::Io { path: dir.to_path_buf(), source })?;
        let (schema, fields) = build_schema();
        let open = || -> Result<Index, tantivy::TantivyError> {
            let mmap = MmapDirectory::open(dir).map_err(|e| tantivy::TantivyError::SystemError(e.to_string()))?;
            Index::open_or_create(mmap, schema.clone())
        };
        let index = match open() {
            Ok(i) => i,
            Err(e) => {
                // The index is a cache: a schema change or corruption means rebuild, never fail.
                tracing::warn!(
                    "the index at {} could not be read ({e}); it is a cache: rebuilding it from the workspace's files",
                    dir.display()
                );
                let _ = std::fs::remove_dir_all(dir);
                std::fs::create_dir_all(dir).map_err(|source| IndexError::Io { path: dir.to_path_buf(), source })?;
                open().map_err(err)?
            }
        };
        index.tokenizers().register(CODE_TOKENIZER, CodeTokenizer);
        index.tokenizers().register(CODE_STEM_TOKENIZER, StemmedCodeTokenizer);
        index.tokenizers().register(PROSE_TOKENIZER, prose_analyzer());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(err)?;
        let writer = index.writer(writer_memory_mb as usize * 1_000_000).map_err(|e| match e {
            // Another process writes this copy (tantivy's lock file is held until it exits).
            tantivy::TantivyError::LockFailure(tantivy::directory::error::LockError::LockBusy, _) => {
                IndexError::InUse { dir: dir.to_path_buf(), copies: 1 }
            }
            e => err(e),
        })?;
        Ok(Self { dir: dir.to_path_buf(), index, reader, writer: RwLock::new(writer), fields })
    }

    /// The index folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn err(&self, source: tantivy::TantivyError) -> IndexError {
        IndexError::Tantivy { dir: self.dir.clone(), source }
    }

    /// Replaces every chunk of `rel` by those of `analysis` (visible after [`commit`](Self::commit)).
    pub fn replace_file(&self, rel: &str, analysis: &FileAnalysis, hash: u64) -> Result<(), IndexError> {
        let f = self.fields;
        let writer = self.writer.read().map_err(|_| IndexError::Stopped)?;
        writer.delete_term(Term::from_field_text(f.path_exact, rel));
        for c in &analysis.chunks {
            writer
                .add_document(doc!(
                    f.path => rel,
                    f.path_exact => rel,
                    f.symbol => c.symbol.as_str(),
                    f.name_exact => c.symbol.as_str(),
                    f.container => c.container.as_str(),
                    f.kind => c.kind.as_str(),
                    f.signature => c.signature.as_str(),
                    f.doc => format!("{}\n{}", c.doc, c.prose),
                    f.code => c.code.as_str(),
                    f.body => c.body.as_str(),
                    f.language => analysis.language.as_str(),
                    f.start_line => c.start_line as u64,
                    f.end_line => c.end_line as u64,
                    f.content_hash => hash,
                    f.is_test => u64::from(c.is_test),
                ))
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Removes every chunk of `rel`.
    pub fn delete_file(&self, rel: &str) -> Result<(), IndexError> {
        let writer = self.writer.read().map_err(|_| IndexError::Stopped)?;
        writer.delete_term(Term::from_field_text(self.fields.path_exact, rel));
        Ok(())
    }

    /// Commits pending changes and reloads the reader so searches see them.
    pub fn commit(&self) -> Result<(), IndexError> {
        let mut writer = self.writer.write().map_err(|_| IndexError::Stopped)?;
        writer.commit().map_err(|e| self.err(e))?;
        drop(writer);
        self.reader.reload().map_err(|e| self.err(e))
    }

    /// Removes everything (used when the file table is lost, so no orphan chunk survives).
    pub fn clear(&self) -> Result<(), IndexError> {
        let writer = self.writer.read().map_err(|_| IndexError::Stopped)?;
        writer.delete_all_documents().map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Number of chunk documents visible to searches.
    pub fn num_chunks(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Chunks of `rel` visible to searches (for tests and diagnostics).
    pub fn chunks_of(&self, rel: &str) -> Result<usize, IndexError> {
        let q = TermQuery::new(Term::from_field_text(self.fields.path_exact, rel), IndexRecordOption::Basic);
        self.reader.searcher().search(&q, &tantivy::collector::Count).map_err(|e| self.err(e))
    }

    /// The best chunks for `query` with the built-in ranking and without the file
    /// table (no traceback locations); [`WorkspaceIndex::search`](super::WorkspaceIndex::search) is the full search.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, IndexError> {
        let ranking = Ranking::builtin()?;
        let parsed = parse_query(query);
        let plan = SearchPlan {
            words: ranking.query_words(&parsed),
            about_tests: ranking.about_tests(&parsed),
            ..Default::default()
        };
        self.search_plan(&plan, &ranking, limit)
    }

    /// Runs `plan`: the best `limit` chunks, one per definition.
    pub fn search_plan(
        &self,
        plan: &SearchPlan,
        ranking: &Ranking,
        limit: usize,
    ) -> Result<Vec<SearchHit>, IndexError> {
        if limit == 0 || (plan.words.is_empty() && plan.anchors.is_empty() && plan.files.is_empty()) {
            return Ok(Vec::new());
        }
        let query = self.build_query(plan, ranking)?;
        let searcher = self.reader.searcher();
        let fetch = limit * FETCH_FACTOR + FETCH_EXTRA;
        let top: Vec<(Score, DocAddress)> = if plan.about_tests || ranking.test_rank_factor >= 1.0 {
            searcher.search(&query, &TopDocs::with_limit(fetch)).map_err(|e| self.err(e))?
        } else {
            let factor = ranking.test_rank_factor;
            let collector = TopDocs::with_limit(fetch).tweak_score(move |segment: &SegmentReader| {
                let is_test = segment.fast_fields().u64("is_test").ok();
                move |doc: DocId, score: Score| match is_test.as_ref().and_then(|c| c.first(doc)) {
                    Some(1) => score * factor,
                    _ => score,
                }
            });
            searcher.search(&query, &collector).map_err(|e| self.err(e))?
        };
        let f = self.fields;
        let mut hits = Vec::with_capacity(limit);
        let mut seen = HashSet::new();
        for (score, addr) in top {
            let d: TantivyDocument = searcher.doc(addr).map_err(|e| self.err(e))?;
            let s = |field| d.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_string();
            let n = |field| d.get_first(field).and_then(|v| v.as_u64()).unwrap_or_default() as usize;
            let hit = SearchHit {
                path: s(f.path_exact),
                symbol: s(f.symbol),
                container: s(f.container),
                kind: s(f.kind),
                signature: s(f.signature),
                language: s(f.language),
                start_line: n(f.start_line),
                end_line: n(f.end_line),
                score,
                is_test: n(f.is_test) == 1,
                body: s(f.body),
            };
            // One hit per definition: the windows of a large one are merged into the best.
            if !hit.symbol.is_empty() && !seen.insert((hit.path.clone(), hit.container.clone(), hit.symbol.clone())) {
                continue;
            }
            hits.push(hit);
            if hits.len() == limit {
                break;
            }
        }
        Ok(hits)
    }

    /// The tantivy query of `plan`: a weighted term per field and word, then the anchors and files.
    fn build_query(&self, plan: &SearchPlan, ranking: &Ranking) -> Result<BooleanQuery, IndexError> {
        let schema = self.index.schema();
        let mut analyzers: HashMap<SearchField, (Field, TextAnalyzer)> = HashMap::new();
        for sf in SearchField::ALL {
            let field = schema.get_field(sf.name()).map_err(|e| self.err(e))?;
            analyzers.insert(sf, (field, self.index.tokenizer_for_field(field).map_err(|e| self.err(e))?));
        }
        // Per word: (field, term, weight) of every term any field's analyzer makes of it.
        let mut per_word: Vec<Vec<(Field, String, f32)>> = Vec::new();
        for word in &plan.words {
            let profile = if word.name { &ranking.name_fields } else { &ranking.word_fields };
            let mut terms = Vec::new();
            for &(sf, fw) in profile {
                if word.compound && !matches!(sf, SearchField::Symbol | SearchField::Code) {
                    continue;
                }
                let Some((field, analyzer)) = analyzers.get_mut(&sf) else { continue };
                for (term, whole) in analyze(analyzer, &word.text) {
                    let w = fw * word.weight * if whole { 1.0 } else { word.part_weight };
                    if w > 0.0 {
                        terms.push((*field, term, w));
                    }
                }
            }
            per_word.push(terms);
        }
        let term_query = |field: Field, text: &str, boost: f32| -> Box<dyn Query> {
            let tq = TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::WithFreqs);
            Box::new(BoostQuery::new(Box::new(tq), boost))
        };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        if ranking.field_tie_breaker >= 1.0 {
            // A plain weighted sum: each distinct (field, term) once, at its highest weight.
            let mut best: HashMap<(Field, String), f32> = HashMap::new();
            let mut order: Vec<(Field, String)> = Vec::new();
            for (field, term, w) in per_word.into_iter().flatten() {
                let key = (field, term);
                match best.get_mut(&key) {
                    Some(old) => *old = old.max(w),
                    None => {
                        best.insert(key.clone(), w);
                        order.push(key);
                    }
                }
            }
            for key in order {
                clauses.push((Occur::Should, term_query(key.0, &key.1, best[&key])));
            }
        } else {
            // Per word: its best field plus a share of the others.
            for terms in per_word.into_iter().filter(|t| !t.is_empty()) {
                let group: Vec<Box<dyn Query>> = terms.iter().map(|(f, t, w)| term_query(*f, t, *w)).collect();
                clauses.push((
                    Occur::Should,
                    Box::new(DisjunctionMaxQuery::with_tie_breaker(group, ranking.field_tie_breaker)),
                ));
            }
        }
        let f = self.fields;
        let exact = |field: Field, text: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::Basic))
        };
        for a in &plan.anchors {
            let mut must =
                vec![(Occur::Must, exact(f.path_exact, &a.path)), (Occur::Must, exact(f.name_exact, &a.name))];
            if let Some((first, last)) = a.lines {
                let range = RangeQuery::new(
                    Bound::Included(Term::from_field_u64(f.start_line, first as u64)),
                    Bound::Included(Term::from_field_u64(f.start_line, last as u64)),
                );
                must.push((Occur::Must, Box::new(range)));
            }
            clauses.push((Occur::Should, Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(must)), a.score))));
        }
        for (path, score) in &plan.files {
            clauses.push((Occur::Should, Box::new(ConstScoreQuery::new(exact(f.path_exact, path), *score))));
        }
        Ok(BooleanQuery::new(clauses))
    }
}

/// The distinct terms `analyzer` makes of the word `text`, each with whether it
/// stands for the whole word (the word itself or its stem) rather than a part.
fn analyze(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(t) = stream.next() {
        let whole = t.offset_from == 0 && t.offset_to == text.len();
        match out.iter_mut().find(|(x, _)| *x == t.text) {
            Some(old) => old.1 |= whole,
            None => out.push((t.text.clone(), whole)),
        }
    }
    out
}
