//! An attempt pointed at one suspect definition, in its own narrow prompt:
//! that definition alone, the failing test, the calls the test was seen
//! making into it, and the request for an edit in `runtime.focus_edit_format`
//! (a line fix by default). Shown a whole file and its callees, a small model
//! copies them back; shown one definition and asked for its wrong line, it
//! looks at that line.

use super::coder::{format_rules, language_of, problem_text};
use super::observed::calls_of;
use super::state::{RelatedDefinition, Target};
use crate::config::{PromptError, PromptId, PromptLibrary};
use crate::edits::{EditFormat, LineRegion};
use crate::llm::ChatMessage;

/// The lines of `suspect` as the task read them, when its file is one the attempt may change.
fn suspect_code(target: &Target, suspect: &RelatedDefinition) -> Option<String> {
    let code = suspect.lines_in(target.before_of(&suspect.path)?);
    (!code.is_empty()).then_some(code)
}

/// Where a line fix about `suspect` looks for the wrong lines first.
pub fn region_of(suspect: &RelatedDefinition) -> LineRegion {
    LineRegion { path: suspect.path.clone(), start_line: suspect.start_line, end_line: suspect.end_line }
}

/// The messages of an attempt at `suspect` alone, or `None` when its code
/// cannot be shown (its file is not one the attempt may change).
pub fn focused_messages(
    prompts: &PromptLibrary,
    target: &Target,
    suspect: &RelatedDefinition,
    format: EditFormat,
    calls_shown: usize,
) -> Result<Option<Vec<ChatMessage>>, PromptError> {
    let Some(code) = suspect_code(target, suspect) else {
        return Ok(None);
    };
    let language = language_of(&suspect.path);
    let mut evidence = Vec::new();
    if let Some((location, test)) = &target.test_source {
        let test_language = language_of(location.split(':').next().unwrap_or(""));
        evidence.push(prompts.render(
            PromptId::CODER_LINE_FIX_TEST,
            &[("location", location), ("language", test_language), ("code", test.trim_end())],
        )?);
    }
    let calls = calls_of(&target.observed, suspect, calls_shown);
    if !calls.is_empty() {
        evidence.push(
            prompts.render(PromptId::CODER_OBSERVED_CALLS, &[("name", &suspect.name), ("calls", &calls.join("\n"))])?,
        );
    }
    let evidence = evidence.iter().map(|e| e.trim_end()).collect::<Vec<_>>().join("\n\n");
    let location = format!("{}:{}-{}", suspect.path, suspect.start_line, suspect.end_line);
    let request = prompts.render(
        PromptId::CODER_REQUEST_LINE_FIX,
        &[
            ("location", &location),
            ("name", &suspect.name),
            ("language", language),
            ("code", &code),
            ("evidence", &evidence),
            ("problem", &problem_text(prompts, target)?),
            ("format_rules", &format_rules(prompts, format, &suspect.path)?),
        ],
    )?;
    let system = prompts.render(PromptId::CODER_SYSTEM, &[])?;
    Ok(Some(vec![ChatMessage::system(system), ChatMessage::user(request)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::TracedCall;

    #[test]
    fn the_narrow_prompt_shows_the_suspect_its_calls_and_the_test_only() {
        let prompts = PromptLibrary::load(None).expect("prompts load");
        let target = Target {
            path: "cart/__init__.py".into(),
            test: Some("tests/test_cart.py::test_off".into()),
            message: "assert 0 == 630".into(),
            test_source: Some(("tests/test_cart.py:3-5".into(), "def test_off():\n    assert total(10) == 630".into())),
            before: "from .pricing import apply_discount\n\ndef total(p):\n    return apply_discount(700, p)\n".into(),
            related_files: [(
                "cart/pricing.py".to_string(),
                "def apply_discount(cents, percent):\n    return cents - cents * percent // 10\n".to_string(),
            )]
            .into_iter()
            .collect(),
            observed: vec![TracedCall {
                path: "cart/pricing.py".into(),
                name: "apply_discount".into(),
                line: 1,
                depth: 1,
                args: "cents=700, percent=10".into(),
                result: Some("0".into()),
                raised: None,
            }],
            ..Default::default()
        };
        let suspect = RelatedDefinition {
            path: "cart/pricing.py".into(),
            name: "apply_discount".into(),
            start_line: 1,
            end_line: 2,
            raises: false,
        };
        let messages = focused_messages(&prompts, &target, &suspect, EditFormat::LineFix, 4).unwrap().unwrap();
        let text = &messages[1].content;
        assert!(text.starts_with("cart/pricing.py:1-2 (`apply_discount`):"), "{text}");
        assert!(text.contains("apply_discount(cents=700, percent=10) -> 0"), "{text}");
        assert!(text.contains("def test_off():") && text.contains("assert 0 == 630"), "{text}");
        assert!(text.contains("Wrong line:") && !text.contains("def total"), "{text}");
        let elsewhere = RelatedDefinition { path: "other.py".into(), ..suspect };
        assert!(focused_messages(&prompts, &target, &elsewhere, EditFormat::LineFix, 4).unwrap().is_none());
    }
}
