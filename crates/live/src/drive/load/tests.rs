//! Tests of `load`.

use super::*;
use serde_json::json;

#[test]
fn targets_take_a_root_or_a_v1_base() {
    let t = Target::parse("http://127.0.0.1:4000").unwrap();
    assert_eq!((t.v1.as_str(), t.root.as_str()), ("/v1", ""));
    let t = Target::parse("http://127.0.0.1:4000/d/gpt-a/v1/").unwrap();
    assert_eq!(
        (t.v1.as_str(), t.root.as_str()),
        ("/d/gpt-a/v1", "/d/gpt-a")
    );
    assert!(t.is_loopback());
    assert!(Target::parse("https://127.0.0.1:4000").is_err());
}

#[test]
fn token_counts_above_what_was_sent_are_refused() {
    let chunk = json!({"choices": [{"delta": {"content": "tok tok"}}],
                           "x_routersim": {"tokens": 4_294_967_295_u64}});
    let bytes = chunk.to_string().len();
    // The claim is refused: the words are counted instead.
    assert_eq!(chunk_tokens(&chunk, bytes), 2);
    let honest = json!({"choices": [{"delta": {"content": "tok tok"}}],
                            "x_routersim": {"tokens": 2}});
    assert_eq!(chunk_tokens(&honest, bytes), 2);
    let usage = json!({"usage": {"completion_tokens": 4_294_967_295_u64}});
    assert_eq!(completion_tokens(&usage, 1_000), None);
    let usage = json!({"usage": {"completion_tokens": 7}});
    assert_eq!(completion_tokens(&usage, 1_000), Some(7));
}

#[test]
fn the_rate_guard_counts_one_second() {
    let now = Instant::now();
    let mut guard = RateGuard::new(2);
    assert!(guard.admit(now));
    assert!(guard.admit(now));
    assert!(!guard.admit(now + Duration::from_millis(500)));
    assert!(guard.admit(now + Duration::from_secs(1)));
}

/// The request body as `serde_json` writes the object (the form drive always sent).
fn body_as_value(request: &Request) -> String {
    let mut body = json!({
        "model": &*request.model,
        "messages": [{"role": "user", "content": format!("routersim drive request {}", request.id)}],
        "stream": request.stream,
    });
    if let Some(n) = request.output_tokens.or(request.max_tokens) {
        body["max_tokens"] = json!(n);
    }
    if request.stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    body.to_string()
}

#[test]
fn request_bodies_are_the_bytes_serde_json_writes_for_the_object() {
    for model in ["gpt-4o", "a \"quoted\"\\ model\n", "modèle/ünï\u{1}"] {
        for (stream, output, max) in [
            (false, None, None),
            (true, None, None),
            (false, Some(7), None),
            (true, None, Some(u32::MAX)),
            (true, Some(3), Some(9)),
        ] {
            let mut request = Request::new(18_446_744_073_709_551_615, model);
            request.stream = stream;
            request.output_tokens = output;
            request.max_tokens = max;
            assert_eq!(
                String::from_utf8(body_of(&request).to_vec()).unwrap(),
                body_as_value(&request)
            );
        }
    }
}

#[test]
fn answers_read_typed_or_as_values_give_the_same_tokens_and_verdicts() {
    let value_tokens = |body: &str| -> Option<Option<u64>> {
        let json: Value = serde_json::from_str(body).ok()?;
        json.get("choices").filter(|c| c.is_array())?;
        Some(
            json.get("usage")
                .and_then(|u| u.get("completion_tokens"))
                .and_then(Value::as_u64),
        )
    };
    for body in [
        r#"{"choices":[],"usage":{"completion_tokens":7}}"#,
        r#" {"id":"x","choices":[{"a":1}],"usage":null}"#,
        r#"{"choices":[1,"x",{}],"usage":{"prompt_tokens":1}}"#,
        r#"{"choices":[]}"#,
        r#"{"choices":{}}"#,
        r#"{"usage":{"completion_tokens":7}}"#,
        r#"[[],null]"#,
        r#"{"choices":[],"usage":{"completion_tokens":-1}}"#,
        r#"{"choices":[],"usage":{"completion_tokens":7.0}}"#,
        r#"{"choices":[],"usage":{"completion_tokens":"7"}}"#,
        r#"{"choices":[],"usage":5}"#,
        r#"{"choices":[],"choices":[1],"usage":{"completion_tokens":2}}"#,
        "not json",
    ] {
        // Read typed, the answer is what the `Value` route reads; else it goes that route.
        if let Some(typed) = wire_body::answer_completion_tokens(body.as_bytes()) {
            assert_eq!(Some(typed), value_tokens(body), "{body}");
        }
    }
    // The plain answers, the ones every request gets, are read typed.
    assert_eq!(
        wire_body::answer_completion_tokens(
            br#"{"choices":[{"index":0}],"usage":{"completion_tokens":12}}"#
        ),
        Some(Some(12))
    );
}
