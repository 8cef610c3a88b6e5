//! Fuzzing request parsing and validation through the whole router (no
//! socket), for a bounded time: `FUZZ_SECONDS` (default 10; `scripts/test-all`
//! gives it 30). Requests are generated around the real routes: known and
//! mangled paths, methods, tokens, query strings, and bodies that are random
//! bytes or JSON objects of the real field names holding any JSON value;
//! content types other than JSON, `Idempotency-Key`s good and bad, NUL
//! bytes in fields and text that renders as nothing; moderation bodies
//! with a ban's `scope`.
//! Every answer must be a documented status with the docs/API.md error shape; a
//! panic, a 500 or an undocumented status fails, and proptest shrinks it.

use std::time::{Duration, Instant};

use axum::body::Body;
use http::{Method, Request};
use http_body_util::BodyExt;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value};
use shared::domain::Author;
use test_support::router::POST_ID;
use tower::ServiceExt;

const OTHER_ID: &str = "01JD3Z8Q6W4G7T2N5B8K1M0AAB";
const FIELDS: [&str; 17] = [
    "username",
    "password",
    "nickname",
    "title",
    "body",
    "parent_id",
    "limit",
    "cursor",
    "current_password",
    "new_password",
    "delete_content",
    // moderation bodies, and a ban's scope.
    "reason",
    "duration_s",
    "member_id",
    "post_id",
    "comment_id",
    "scope",
];

#[derive(Debug, Clone)]
struct Fuzzed {
    method: Method,
    path: String,
    token: Option<String>,
    /// `X-Forwarded-For`, believed from the harness's trusted proxy (127.0.0.1).
    forwarded: Option<String>,
    /// `Content-Type`: JSON mostly, else what a cross-site form or a
    /// careless client sends (415 before the body is read).
    content_type: Option<String>,
    /// `Idempotency-Key` on any route (only creates read it).
    idempotency_key: Option<String>,
    /// `If-Match` on any route (only post edits read it).
    if_match: Option<String>,
    body: Vec<u8>,
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("free".to_owned()),
        Just("qna".to_owned()),
        Just(POST_ID.to_owned()),
        Just(POST_ID.to_lowercase()),
        Just(OTHER_ID.to_owned()),
        Just("guest".to_owned()),
        Just("comments".to_owned()),
        Just("like".to_owned()),
        Just("..".to_owned()),
        Just("%2e%2e%2f".to_owned()),
        Just("%00".to_owned()),
        Just("%FF%FE".to_owned()),
        "[a-zA-Z0-9_%.~' -]{0,50}".prop_map(|s| s.replace(' ', "%20")),
    ]
}

fn path() -> impl Strategy<Value = String> {
    let templates = prop_oneof![
        Just("/members".to_owned()),
        Just("/sessions".to_owned()),
        Just("/health".to_owned()),
        Just("/boards/{a}/posts".to_owned()),
        Just("/boards/{a}/posts/guest".to_owned()),
        Just("/boards/{a}/posts/{b}".to_owned()),
        Just("/boards/{a}/posts/{b}/guest".to_owned()),
        Just("/boards/{a}/posts/{b}/like".to_owned()),
        Just("/boards/{a}/posts/{b}/comments".to_owned()),
        Just("/boards/{a}/posts/{b}/comments/guest".to_owned()),
        Just("/boards/{a}/posts/{b}/comments/{c}".to_owned()),
        Just("/boards/{a}/posts/{b}/comments/{c}/guest".to_owned()),
        // The account routes, but for signing out everywhere, which
        // would end the harness's token for the rest of the run (the e2e
        // tests have it); the password routes need a password the fuzzer
        // never has.
        Just("/members/me".to_owned()),
        Just("/members/me/password".to_owned()),
        Just("/members/me/posts".to_owned()),
        Just("/members/me/comments".to_owned()),
        // Moderation: the harness's member is staff nowhere, so its
        // writes are refused after their bodies are read; bans by scope.
        Just("/boards/{a}/bans".to_owned()),
        Just("/boards/{a}/bans/{b}".to_owned()),
        Just("/boards/{a}/modlog".to_owned()),
        Just("/boards/{a}/posts/{b}/remove".to_owned()),
        Just("/boards/{a}/posts/{b}/reports".to_owned()),
        Just("/{a}/{b}/{c}".to_owned()),
    ];
    let query = prop_oneof![
        Just(String::new()),
        "[0-9-]{0,25}".prop_map(|n| format!("?limit={n}")),
        "[A-Za-z0-9%=_-]{0,60}".prop_map(|c| format!("?cursor={c}")),
        "[ -~]{0,40}".prop_map(|q| format!("?{}", q.replace(' ', "+").replace('#', "%23"))),
    ];
    (templates, segment(), segment(), segment(), query)
        .prop_map(|(t, a, b, c, q)| format!("{}{q}", t.replace("{a}", &a).replace("{b}", &b).replace("{c}", &c)))
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,40}".prop_map(Value::String),
        "[a-z0-9_]{0,35}".prop_map(Value::String),
        (0usize..300).prop_map(|n| Value::String("é".repeat(n))),
        // NUL in a password, text that renders as nothing.
        "[a-z]{0,6}\u{0}[a-z]{0,6}".prop_map(Value::String),
        prop::sample::select(vec![
            "\u{3164}",
            "\u{115f}\u{1160}",
            "\u{2800}",
            "\u{301}",
            "\u{fe0f}\u{34f}"
        ])
        .prop_map(|s| Value::String(s.to_owned())),
        Just(Value::String(POST_ID.to_owned())),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    let object = prop::collection::btree_map(prop::sample::select(FIELDS.to_vec()), json_value(), 0..6).prop_map(|m| {
        let fields: Map<String, Value> = m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        serde_json::to_vec(&Value::Object(fields)).unwrap()
    });
    prop_oneof![
        4 => object,
        1 => prop::collection::vec(any::<u8>(), 0..200),
        1 => json_value().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => (0usize..70_000).prop_map(|n| vec![b'['; n]),
        1 => Just(Vec::new()),
    ]
}

fn fuzzed(valid_token: String) -> impl Strategy<Value = Fuzzed> {
    let method = prop_oneof![
        Just(Method::GET),
        Just(Method::POST),
        Just(Method::PUT),
        Just(Method::DELETE),
        Just(Method::PATCH),
        Just(Method::HEAD),
        Just(Method::OPTIONS),
    ];
    let token = prop_oneof![
        Just(None),
        Just(Some(valid_token.clone())),
        (0usize..valid_token.len(), any::<char>()).prop_map(move |(at, c)| {
            let mut mangled: Vec<char> = valid_token.chars().collect();
            mangled[at] = c;
            Some(mangled.into_iter().collect())
        }),
        "[ -~]{0,80}".prop_map(Some),
    ];
    let forwarded = prop_oneof![
        Just(None),
        Just(Some("203.0.113.9".to_owned())),
        Just(Some("1.1.1.1, 2001:db8::1, 127.0.0.1".to_owned())),
        "[ -~]{0,120}".prop_map(Some),
        "[0-9a-f:., ]{0,60}".prop_map(Some),
    ];
    let content_type = prop_oneof![
        6 => Just(Some("application/json".to_owned())),
        1 => Just(Some("application/json; charset=utf-8".to_owned())),
        1 => Just(Some("text/plain".to_owned())),
        1 => Just(Some("application/x-www-form-urlencoded".to_owned())),
        1 => Just(None),
        1 => "[ -~]{0,40}".prop_map(Some),
    ];
    let idempotency_key = prop_oneof![
        4 => Just(None),
        1 => Just(Some("fuzz-key".to_owned())),
        1 => "[ -~]{0,300}".prop_map(Some),
    ];
    let if_match = prop_oneof![
        4 => Just(None),
        1 => Just(Some("*".to_owned())),
        1 => Just(Some("\"0123456789abcdef0123456789abcdef\", W/\"x\"".to_owned())),
        1 => "[ -~]{0,80}".prop_map(Some),
    ];
    (
        method,
        path(),
        token,
        forwarded,
        (content_type, idempotency_key, if_match),
        body(),
    )
        .prop_map(
            |(method, path, token, forwarded, (content_type, idempotency_key, if_match), body)| Fuzzed {
                method,
                path,
                token,
                forwarded,
                content_type,
                idempotency_key,
                if_match,
                body,
            },
        )
}

/// The docs/API.md codes each status may carry.
fn codes_for(status: u16) -> Option<&'static [&'static str]> {
    Some(match status {
        400 => &["malformed_json", "validation_failed"],
        401 => &["unauthorized", "invalid_credentials"],
        403 => &["wrong_password", "forbidden"],
        404 => &["not_found"],
        405 => &["method_not_allowed"],
        409 => &["username_taken", "request_in_progress"],
        413 => &["payload_too_large"],
        412 => &["precondition_failed"],
        415 => &["unsupported_media_type"],
        422 => &["idempotency_key_reused"],
        429 => &["too_many_attempts", "rate_limited"],
        _ => return None,
    })
}

async fn check(app: &axum::Router, input: &Fuzzed) -> Result<(), TestCaseError> {
    let mut request = Request::builder().method(input.method.clone()).uri(&input.path);
    for (name, value) in [
        ("content-type", &input.content_type),
        ("idempotency-key", &input.idempotency_key),
        ("if-match", &input.if_match),
    ] {
        if let Some(value) = value
            && let Ok(value) = http::HeaderValue::from_str(value)
        {
            request = request.header(name, value);
        }
    }
    if let Some(token) = &input.token
        && let Ok(value) = http::HeaderValue::from_str(&format!("Bearer {token}"))
    {
        request = request.header("authorization", value);
    }
    if let Some(forwarded) = &input.forwarded
        && let Ok(value) = http::HeaderValue::from_str(forwarded)
    {
        request = request.header("x-forwarded-for", value);
    }
    let Ok(mut request) = request.body(Body::from(input.body.clone())) else {
        return Ok(()); // Not a request a client could send (an invalid URI).
    };
    // As if from a socket: the peer is the harness's trusted proxy.
    request
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(std::net::SocketAddr::from((
            [127, 0, 0, 1],
            40000,
        ))));
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    if input.method == Method::HEAD {
        // No body to check: the status must still be one docs/API.md names.
        prop_assert!(
            (200..300).contains(&status) || codes_for(status).is_some(),
            "HEAD answered {status}"
        );
        return Ok(());
    }
    if (200..300).contains(&status) {
        if status != 204 {
            prop_assert!(
                serde_json::from_slice::<Value>(&bytes).is_ok(),
                "{status} without a JSON body"
            );
        }
        return Ok(());
    }
    let codes = codes_for(status);
    prop_assert!(
        codes.is_some(),
        "undocumented status {status}: {}",
        String::from_utf8_lossy(&bytes)
    );
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| TestCaseError::fail("an error that is not JSON"))?;
    let code = value["error"]["code"].as_str().unwrap_or_default();
    prop_assert!(codes.unwrap().contains(&code), "status {status} with code {code:?}");
    let message = value["error"]["message"].as_str().unwrap_or_default();
    prop_assert!(!message.is_empty() && message.len() <= 400, "message {message:?}");
    Ok(())
}

#[test]
fn fuzzed_requests_get_documented_answers_and_never_crash_the_router() {
    let seconds: u64 = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The seeded post is the harness member's, so their token reaches edits and deletes.
    let harness = runtime.block_on(async {
        let member = test_support::router::member();
        let author = Author::Member {
            member_id: member.id,
            nickname: member.nickname,
        };
        test_support::router::harness(author, None).await
    });
    let app = server::app(harness.state.clone(), &[]);
    let token = harness.token.clone();

    let strategy = fuzzed(token);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut cases = 0u64;
    while Instant::now() < deadline {
        let mut runner = TestRunner::new(Config {
            cases: 64,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&strategy, |input| runtime.block_on(check(&app, &input)));
        if let Err(failure) = result {
            panic!("{failure}");
        }
        cases += 64;
    }
    println!("fuzz: {cases} requests in {seconds} s, every answer documented");
}
