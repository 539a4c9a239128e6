//! Why a reply could not become an edit; each message is fed back to the model.

/// A reply that could not be turned into a valid new file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EditError {
    #[error("the reply holds no code block; reply with the changed code in one ``` fenced block")]
    NoCode,
    #[error("the reply defines {found}, which {is_are} not in `{path}`{hint}")]
    UnknownSymbol { path: String, found: String, is_are: &'static str, hint: String },
    #[error("the reply changes `{name}`, a test; fix the code under test instead and leave the tests as they are")]
    EditsTest { name: String },
    #[error("the SEARCH text of block {block} was not found in `{path}`{hint}")]
    SearchNotFound { path: String, block: usize, hint: String },
    #[error(
        "the SEARCH text of block {block} matches {count} places in `{path}`; include more lines so it matches one"
    )]
    Ambiguous { path: String, block: usize, count: usize },
    #[error("the reply names no wrong line and its correction; answer with `Wrong line:` and `Fixed line:`, each followed by the code in a ``` block")]
    NoLineFix,
    #[error("the wrong line `{line}` is not in `{path}`{hint}; copy the line exactly as it is in the code shown")]
    LineNotFound { path: String, line: String, hint: String },
    #[error("the wrong line `{line}` is in {count} places in `{path}`; quote the lines around it too, so that it matches one")]
    LineAmbiguous { path: String, line: String, count: usize },
    #[error("the reply holds no SEARCH/REPLACE block (<<<<<<< SEARCH … ======= … >>>>>>> REPLACE)")]
    NoBlocks,
    #[error("the reply leaves out parts of `{path}` ({why}); reply with the whole file, nothing elided")]
    Elided { path: String, why: String },
    #[error("the edited `{path}` no longer parses: {errors}")]
    Syntax { path: String, errors: String },
    #[error("the reply changes nothing in `{path}`")]
    Unchanged { path: String },
    #[error("the reply repeats {names} exactly as they are, so it changes nothing; change the line that computes the wrong value")]
    UnchangedDefinitions { names: String },
    #[error("the reply only deletes comments or docstrings of `{path}`, which a fix keeps; change the code that computes the wrong value")]
    OnlyDocumentationDeleted { path: String },
    #[error("the reply changes the code of {names} in `{path}`, not only comments and docstrings; copy the code exactly as it is and add only the documentation")]
    CodeChanged { path: String, names: String },
    #[error("the reply is not valid JSON for an edit: {0}")]
    Json(String),
    #[error(
        "tinycoder cannot parse `{path}` (no grammar for this language); use the whole-file or search/replace format"
    )]
    NoGrammar { path: String },
}

impl EditError {
    /// The reply repeats the code as it is (no change at all).
    pub fn is_unchanged(&self) -> bool {
        matches!(
            self,
            Self::Unchanged { .. } | Self::UnchangedDefinitions { .. } | Self::OnlyDocumentationDeleted { .. }
        )
    }
}
