//! Unit tests of prompt assembly, budget cuts, stop rules and suffix trimming, with
//! `ScriptedModel`, a scripted model double (the end-to-end test runs a real model).

use super::*;
use crate::config::{BackendKind, CompletionStop, LoadedConfig};
use crate::llm::{ChatRequest, ChatStream, ModelInfo};
use ropey::Rope;
use std::sync::Mutex;

/// A scripted model double: answers every raw completion with `reply` and records the requests.
struct ScriptedModel {
    reply: Result<String, fn() -> LlmError>,
    seen: Mutex<Vec<CompletionRequest>>,
}

impl ScriptedModel {
    fn replying(text: &str) -> Self {
        Self { reply: Ok(text.to_string()), seen: Mutex::new(Vec::new()) }
    }
}

#[async_trait::async_trait]
impl ModelClient for ScriptedModel {
    fn backend(&self) -> BackendKind {
        BackendKind::Openai
    }
    fn url(&self) -> &str {
        "scripted://model"
    }
    async fn chat_stream(&self, _: ChatRequest, _: CancellationToken) -> Result<ChatStream, LlmError> {
        Err(LlmError::Protocol("the scripted double only completes".into()))
    }
    async fn complete(&self, req: CompletionRequest, _: CancellationToken) -> Result<String, LlmError> {
        self.seen.lock().unwrap().push(req);
        self.reply.clone().map_err(|make| make())
    }
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(Vec::new())
    }
    async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError> {
        Ok(None)
    }
    async fn count_tokens(&self, _: crate::config::ModelRole, _: &str) -> Result<Option<usize>, LlmError> {
        Ok(None)
    }
    async fn embed(&self, _: &str, _: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        Ok(Vec::new())
    }
}

fn defaults() -> CompletionConfig {
    LoadedConfig::load(&Default::default()).expect("defaults").config.completion
}

fn window(text: &str, cursor_marker: &str) -> FimWindow {
    let cursor = text[..text.find(cursor_marker).unwrap()].chars().count();
    let text = text.replace(cursor_marker, "");
    FimWindow::around(&Rope::from_str(&text), cursor, 1000, 1000)
}

#[test]
fn the_prompt_is_the_fim_template_with_prefix_and_suffix_verbatim() {
    let prompts = PromptLibrary::load(None).expect("prompts");
    let w = window("def add(a, b):\n    return |\n\nx = 1\n", "|");
    let prompt = fim_prompt(&prompts, &w).unwrap();
    assert_eq!(prompt, "<|fim_prefix|>def add(a, b):\n    return <|fim_suffix|>\n\nx = 1\n<|fim_middle|>");
}

#[test]
fn budgets_cut_on_char_boundaries_and_at_line_edges() {
    // Multi-byte text on both sides: é (2 bytes), 😀 (4 bytes, 2 UTF-16 units).
    let text = "# é😀 head\nx = 'é😀'\ny = 2\nz = 'ü😀' + w\nend = 1\n";
    let rope = Rope::from_str(text);
    let cursor = text[..text.find(" + w").unwrap()].chars().count();
    // A budget that cuts inside the first line: the prefix starts at the next line.
    let w = FimWindow::around(&rope, cursor, 20, 1000);
    assert_eq!(w.prefix, "y = 2\nz = 'ü😀'");
    assert_eq!(w.suffix, " + w\nend = 1\n");
    // A budget shorter than the cursor's line keeps the last chars of it, whole chars.
    let w = FimWindow::around(&rope, cursor, 3, 6);
    assert_eq!(w.prefix, "ü😀'", "the last three chars, the emoji whole");
    assert_eq!(w.suffix, " + w\n", "cut after the last whole line it holds");
    let w = FimWindow::around(&rope, cursor, 3, 2);
    assert_eq!(w.suffix, " +", "no line break to cut at: the chars themselves");
    // Every cut is valid UTF-8 of exactly the budget (or less at a line edge).
    for budget in 0..text.chars().count() + 2 {
        let w = FimWindow::around(&rope, cursor, budget, budget);
        assert!(w.prefix.chars().count() <= budget && w.suffix.chars().count() <= budget);
        assert!(text.contains(&format!("{}{}", w.prefix, w.suffix)));
    }
    // A cursor past the end clamps to the end.
    let w = FimWindow::around(&rope, 10_000, 5, 5);
    assert_eq!((w.prefix.as_str(), w.suffix.as_str()), (" = 1\n", ""), "a break that ends the prefix is kept");
}

#[test]
fn auto_stops_at_the_line_end_mid_line_and_after_a_block_on_an_empty_line() {
    assert_eq!(StopMode::at(CompletionStop::Auto, "def f():\n    return "), StopMode::Line);
    assert_eq!(StopMode::at(CompletionStop::Auto, "def f():\n    "), StopMode::Block);
    assert_eq!(StopMode::at(CompletionStop::Auto, ""), StopMode::Block);
    assert_eq!(StopMode::at(CompletionStop::Line, "def f():\n"), StopMode::Line);
    assert_eq!(StopMode::at(CompletionStop::Block, "x = "), StopMode::Block);
    assert_eq!(stop_strings(StopMode::Line), vec!["\n".to_string()]);
    assert_eq!(stop_strings(StopMode::Block), vec!["\n\n".to_string()]);
}

#[test]
fn a_reply_is_cut_to_the_mode_and_loses_what_repeats_the_suffix() {
    // Line: only the first line, trailing whitespace dropped.
    assert_eq!(finish_suggestion("a + b  \n\ndef sub():", StopMode::Line, "", "\n").as_deref(), Some("a + b"));
    // Block: up to the first blank line.
    assert_eq!(
        finish_suggestion("x = 1\n    y = 2\n\nz = 3", StopMode::Block, "", "\n").as_deref(),
        Some("x = 1\n    y = 2")
    );
    // The end that repeats the rest of the line is dropped (an auto-closed bracket).
    assert_eq!(finish_suggestion("name + \"!\")", StopMode::Line, "", ")\nnext()").as_deref(), Some("name + \"!\""));
    // A line suggestion is not trimmed against the next lines.
    assert_eq!(finish_suggestion("a + b", StopMode::Line, "", "\nb = 1").as_deref(), Some("a + b"));
    // A reply that only repeats the suffix, or is blank, is no suggestion.
    assert_eq!(finish_suggestion("total)", StopMode::Line, "", "total)\n"), None);
    assert_eq!(finish_suggestion("   \n", StopMode::Line, "", ""), None);
    assert_eq!(finish_suggestion("", StopMode::Block, "", ""), None);
    // A block that repeats the code after the cursor loses the repeated part.
    assert_eq!(finish_suggestion("x = 1\nreturn x", StopMode::Block, "", "return x\n").as_deref(), Some("x = 1"));
    // On a line of indentation only, a reply that writes the indentation again loses it.
    assert_eq!(
        finish_suggestion("    \"\"\"List files.\"\"\"\n    return []", StopMode::Block, "    ", "\n").as_deref(),
        Some("\"\"\"List files.\"\"\"\n    return []")
    );
    assert_eq!(finish_suggestion("return x", StopMode::Block, "    ", "\n").as_deref(), Some("return x"));
    assert_eq!(finish_suggestion("    + 1", StopMode::Line, "x =", "\n").as_deref(), Some("    + 1"), "not after code");
    // Multi-byte text is cut on char boundaries.
    assert_eq!(finish_suggestion("'é😀')", StopMode::Line, "", ")").as_deref(), Some("'é😀'"));
}

#[tokio::test]
async fn suggest_sends_the_prompt_caps_and_stop_and_finishes_the_reply() {
    let prompts = PromptLibrary::load(None).expect("prompts");
    let config = defaults();
    let model = ScriptedModel::replying("a + b\n\ndef sub(a, b):");
    let w = window("def add(a, b):\n    return |\n", "|");
    let got = suggest(&model, &prompts, &config, &w, CancellationToken::new()).await.unwrap();
    assert_eq!(got.as_deref(), Some("a + b"));
    let seen = model.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].stop, vec!["\n".to_string()], "mid-line: one line");
    assert_eq!(seen[0].max_tokens, config.max_tokens);
    assert_eq!(seen[0].role, config.role);
    assert_eq!(seen[0].timeout.as_millis() as u64, config.timeout_ms);
    assert!(seen[0].prompt.starts_with("<|fim_prefix|>def add"), "{}", seen[0].prompt);
}

#[tokio::test]
async fn a_server_that_is_down_is_a_typed_error_and_a_blank_reply_no_suggestion() {
    let prompts = PromptLibrary::load(None).expect("prompts");
    let config = defaults();
    let down = ScriptedModel {
        reply: Err(|| LlmError::ServerDown { url: "http://127.0.0.1:9".into(), detail: "refused".into() }),
        seen: Mutex::new(Vec::new()),
    };
    let w = window("x = |\n", "|");
    let err = suggest(&down, &prompts, &config, &w, CancellationToken::new()).await.unwrap_err();
    assert!(matches!(err, CompletionError::Model(LlmError::ServerDown { .. })), "{err}");
    assert!(err.to_string().contains("not reachable"), "{err}");
    let blank = ScriptedModel::replying("\n   ");
    assert_eq!(suggest(&blank, &prompts, &config, &w, CancellationToken::new()).await.unwrap(), None);
}
