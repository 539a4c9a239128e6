//! Schema-constrained replies, parsed and validated in Rust, with a bounded,
//! logged retry that tells the model what was wrong.

use super::{ChatMessage, ChatRequest, LlmError, ModelClient};
use crate::config::{PromptId, PromptLibrary};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

/// The JSON schema of `T`, as sent to the server.
pub fn schema_of<T: JsonSchema>() -> serde_json::Value {
    let mut schema = schemars::schema_for!(T).to_value();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema"); // some servers reject the meta-schema key
    }
    schema
}

/// Asks `req.role`'s model for a reply matching `T`'s schema and parses it.
///
/// The schema goes to the server (Ollama `format`, OpenAI `response_format`);
/// the reply is parsed again in Rust. On failure the bad reply and the
/// `structured_retry` prompt (with the error) are appended and the call is
/// repeated, up to `retries` extra attempts; then [`LlmError::InvalidStructuredOutput`].
pub async fn structured<T: DeserializeOwned + JsonSchema>(
    client: &dyn ModelClient,
    prompts: &PromptLibrary,
    mut req: ChatRequest,
    cancel: &CancellationToken,
    retries: u32,
) -> Result<T, LlmError> {
    req.json_schema = Some(schema_of::<T>());
    let attempts = retries + 1;
    let mut last_error = String::new();
    for attempt in 1..=attempts {
        let reply = client.chat(req.clone(), cancel.clone()).await?;
        match parse_reply::<T>(&reply.text) {
            Ok(v) => return Ok(v),
            Err(e) => {
                tracing::warn!(role = %req.role, attempt, attempts, error = %e, "structured reply did not validate; retrying");
                last_error = e;
                req.messages.push(ChatMessage::assistant(reply.text));
                req.messages.push(ChatMessage::user(
                    prompts.render(PromptId::STRUCTURED_RETRY, &[("error", &last_error)])?,
                ));
            }
        }
    }
    Err(LlmError::InvalidStructuredOutput {
        attempts,
        last_error,
    })
}

/// Parses a model reply as `T`: tolerates a surrounding code fence, reports the JSON path of a mismatch.
pub fn parse_reply<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let body = strip_fence(text.trim());
    if body.is_empty() {
        return Err("the reply was empty".into());
    }
    let de = &mut serde_json::Deserializer::from_str(body);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("at `{path}`: {}", e.inner())
        }
    })
}

fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.split_once('\n').map(|(_, r)| r).unwrap_or(rest);
    rest.trim_end().strip_suffix("```").unwrap_or(rest).trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Verdict {
        ok: bool,
        reason: String,
    }

    #[test]
    fn parses_plain_and_fenced_json_and_names_the_bad_field() {
        let cases: &[(&str, Result<Verdict, &str>)] = &[
            (
                r#"{"ok": true, "reason": "fine"}"#,
                Ok(Verdict {
                    ok: true,
                    reason: "fine".into(),
                }),
            ),
            (
                "```json\n{\"ok\": false, \"reason\": \"é🦀\"}\n```",
                Ok(Verdict {
                    ok: false,
                    reason: "é🦀".into(),
                }),
            ),
            (r#"{"ok": "yes", "reason": "x"}"#, Err("at `ok`")),
            (r#"{"ok": true}"#, Err("missing field `reason`")),
            ("", Err("empty")),
            ("not json", Err("expected")),
        ];
        for (input, expected) in cases {
            match (parse_reply::<Verdict>(input), expected) {
                (Ok(v), Ok(e)) => assert_eq!(&v, e, "{input}"),
                (Err(msg), Err(part)) => assert!(msg.contains(part), "{input}: {msg}"),
                (got, want) => panic!("{input}: got {got:?}, want {want:?}"),
            }
        }
    }

    /// A scripted model double: replies with canned texts in order and records what it was sent.
    struct ScriptedModel {
        replies: std::sync::Mutex<Vec<String>>,
        seen: std::sync::Mutex<Vec<ChatRequest>>,
    }

    #[async_trait::async_trait]
    impl ModelClient for ScriptedModel {
        fn backend(&self) -> crate::config::BackendKind {
            crate::config::BackendKind::Ollama
        }
        fn url(&self) -> &str {
            "scripted"
        }
        async fn chat_stream(
            &self,
            req: ChatRequest,
            _c: CancellationToken,
        ) -> Result<super::super::ChatStream, LlmError> {
            self.seen.lock().map_err(|_| LlmError::Cancelled)?.push(req);
            let reply = self
                .replies
                .lock()
                .map_err(|_| LlmError::Cancelled)?
                .remove(0);
            Ok(Box::pin(futures::stream::iter(vec![Ok(reply)])))
        }
        async fn list_models(&self) -> Result<Vec<super::super::ModelInfo>, LlmError> {
            Ok(vec![])
        }
        async fn loaded_models(&self) -> Result<Option<Vec<String>>, LlmError> {
            Ok(None)
        }
        async fn count_tokens(
            &self,
            _r: crate::config::ModelRole,
            _t: &str,
        ) -> Result<Option<usize>, LlmError> {
            Ok(None)
        }
        async fn embed(&self, _m: &str, _i: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
            Ok(vec![])
        }
    }

    fn scripted(replies: &[&str]) -> ScriptedModel {
        ScriptedModel {
            replies: std::sync::Mutex::new(replies.iter().map(|r| r.to_string()).collect()),
            seen: std::sync::Mutex::new(vec![]),
        }
    }

    #[tokio::test]
    async fn a_bad_reply_is_retried_with_the_error_then_fails_after_the_limit() {
        let prompts = PromptLibrary::load(None).expect("prompts");
        let req = ChatRequest::new(
            crate::config::ModelRole::Critic,
            vec![ChatMessage::user("judge")],
        );
        let cancel = CancellationToken::new();

        let model = scripted(&["{\"ok\": 1}", "{\"ok\": true, \"reason\": \"r\"}"]);
        let v: Verdict = structured(&model, &prompts, req.clone(), &cancel, 2)
            .await
            .expect("second reply validates");
        assert_eq!(
            v,
            Verdict {
                ok: true,
                reason: "r".into()
            }
        );
        let seen = model.seen.lock().expect("lock").clone();
        assert_eq!(seen.len(), 2);
        assert!(seen[0].json_schema.is_some());
        let retry = &seen[1].messages;
        assert_eq!(retry.len(), 3, "original + bad reply + retry prompt");
        assert_eq!(retry[1], ChatMessage::assistant("{\"ok\": 1}"));
        assert!(retry[2].content.contains("at `ok`"), "{}", retry[2].content);

        let model = scripted(&["nope", "nope", "nope"]);
        match structured::<Verdict>(&model, &prompts, req, &cancel, 2).await {
            Err(LlmError::InvalidStructuredOutput {
                attempts: 3,
                last_error,
            }) => assert!(last_error.contains("expected")),
            other => panic!("expected InvalidStructuredOutput, got {other:?}"),
        }
    }

    #[test]
    fn schema_names_the_fields_without_the_meta_key() {
        let s = schema_of::<Verdict>();
        assert!(s.get("$schema").is_none());
        assert_eq!(
            s.pointer("/properties/ok/type").and_then(|t| t.as_str()),
            Some("boolean")
        );
        assert_eq!(s.get("title").and_then(|t| t.as_str()), Some("Verdict"));
    }
}
