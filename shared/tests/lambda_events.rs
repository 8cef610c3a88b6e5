//! Each function's router, fed real API Gateway HTTP API (payload v2) events
//! from `tests/fixtures/apigw-v2/`, converted by lambda_http exactly as on
//! Lambda. AWS itself cannot run here; these events are what it sends.

use http_body_util::BodyExt;
use serde_json::Value;
use shared::domain::{Author, Post, PostSummary, Window, new_id, now};
use shared::function::Function;
use shared::http::router;
use test_support::router::{Harness, POST_ID};
use tower::ServiceExt;

/// The seeded post is a guest's (its hash is never checked by these events).
async fn harness() -> Harness {
    let author = Author::Guest {
        nickname: "seed".into(),
        tag: Some("testwrit".into()),
    };
    test_support::router::harness(author, Some("unused-hash")).await
}

fn fixture(name: &str) -> String {
    let path = format!("{}/../tests/fixtures/apigw-v2/{name}.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

async fn invoke(h: &Harness, function: Function, event: &str) -> (u16, Value) {
    let event = event.replace("FIXTURE_TOKEN", &h.token);
    let request = lambda_http::request::from_str(&event).expect("a valid API Gateway v2 event");
    let response = router(h.state.clone(), &[function]).oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    (status, body)
}

#[tokio::test]
async fn signup_creates_the_member_in_the_event() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::Signup, &fixture("signup")).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["username"], "fixture_user");
}

#[tokio::test]
async fn login_answers_a_session_and_counts_failures_by_the_api_gateway_source_ip() {
    let h = harness().await;
    invoke(&h, Function::Signup, &fixture("signup")).await;
    let (status, body) = invoke(&h, Function::Login, &fixture("login")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["token_type"], "Bearer");

    let wrong = fixture("login").replace("fixture-password", "wrong-password");
    let (status, _) = invoke(&h, Function::Login, &wrong).await;
    assert_eq!(status, 401);
    let window = Window::containing(shared::app::throttle::unix_now(), 300);
    assert_eq!(
        h.state
            .app
            .store()
            .failures(&shared::store::AttemptKey("login:address:203.0.113.7".into()), window)
            .await
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn read_serves_a_post_and_a_board_page() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::Read, &fixture("read")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["id"].as_str(), body["view_count"].as_u64()),
        (Some(POST_ID), Some(1))
    );
    let (status, body) = invoke(&h, Function::Read, &fixture("read-list")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["posts"][0]["id"], POST_ID);
}

/// The boards, seeded from `BOARDS` by the first load of a cold start.
#[tokio::test]
async fn read_serves_the_boards_a_cold_start_seeded() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::Read, &fixture("read-boards")).await;
    assert_eq!(status, 200, "{body}");
    let slugs: Vec<&str> = body["boards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["free", "notice", "qna"]);
    assert_eq!(body["boards"][0]["post_count"], 1, "the seeded post");
}

/// A guest vote, once per API Gateway source address.
#[tokio::test]
async fn like_counts_a_guest_vote_once_per_api_gateway_source_ip() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::Like, &fixture("like-guest-vote")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        serde_json::json!({"liked": false, "disliked": true, "like_count": 0, "dislike_count": 1})
    );
    let (status, body) = invoke(&h, Function::Like, &fixture("like-guest-vote")).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "already_voted");
}

#[tokio::test]
async fn member_write_posts_as_the_bearer() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::MemberWrite, &fixture("member-write")).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["author"]["member_id"], "01JD3Z8Q6W4G7T2N5B8K1M0AAA");
}

#[tokio::test]
async fn guest_post_reads_a_base64_encoded_body() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::GuestPost, &fixture("guest-post")).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["body"], "base64 body");
}

#[tokio::test]
async fn guest_comment_comments_on_the_seeded_post() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::GuestComment, &fixture("guest-comment")).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["post_id"], POST_ID);
}

#[tokio::test]
async fn like_likes_the_seeded_post() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::Like, &fixture("like")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        serde_json::json!({"liked": true, "disliked": false, "like_count": 1, "dislike_count": 0})
    );
}

/// The account function: the token's member, with the session epoch
/// checked against the store, and their roles.
#[tokio::test]
async fn account_answers_the_signed_in_member_and_their_roles() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::Account, &fixture("account")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["username"], "fixture_author");
    assert_eq!(body["roles"], serde_json::json!({"admin": false, "moderates": []}));
}

#[tokio::test]
async fn a_request_routed_to_the_wrong_function_is_404_or_405_not_a_panic() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::Read, &fixture("signup")).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")));
    // A path this function serves, with a method it does not.
    let (status, body) = invoke(&h, Function::Read, &fixture("member-write")).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (405, Some("method_not_allowed"))
    );
    let health = fixture("read").replace(&format!("/boards/free/posts/{POST_ID}"), "/health");
    let (status, body) = invoke(&h, Function::Like, &health).await;
    assert_eq!((status, body), (200, serde_json::json!({"status": "ok"})));
}

/// docs/API.md, Conventions: on Lambda a request without a tidy
/// `X-Request-Id` is known by API Gateway's request id; a tidy one is kept.
#[tokio::test]
async fn a_lambda_answer_carries_the_api_gateway_request_id_unless_the_client_sent_a_tidy_one() {
    let h = harness().await;
    let answer = |event: String| {
        let state = h.state.clone();
        async move {
            let request = lambda_http::request::from_str(&event).expect("a valid API Gateway v2 event");
            let response = router(state, &[Function::Read]).oneshot(request).await.unwrap();
            response.headers()["x-request-id"].to_str().unwrap().to_owned()
        }
    };
    assert_eq!(answer(fixture("read")).await, "CfJ3xjY0FiAEMbw=");
    let with_header = |value: &str| {
        let mut event: Value = serde_json::from_str(&fixture("read")).unwrap();
        event["headers"]["x-request-id"] = Value::String(value.into());
        event.to_string()
    };
    assert_eq!(answer(with_header("client-7")).await, "client-7");
    assert_eq!(answer(with_header("not tidy")).await, "CfJ3xjY0FiAEMbw=");
}

/// An anonymous report: its reporter is the address API Gateway saw,
/// kept only as a keyed writer key (docs/API.md, Guest tag).
#[tokio::test]
async fn moderation_takes_an_anonymous_report_keyed_by_the_api_gateway_source_ip() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::Moderation, &fixture("moderation")).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["target"], serde_json::json!({"kind": "post", "post_id": POST_ID}));
    assert!(!body.to_string().contains("198.51.100.23"));
    // The same source again joins the report without counting twice.
    let (status, again) = invoke(&h, Function::Moderation, &fixture("moderation")).await;
    assert_eq!((status, &again["id"]), (200, &body["id"]));
    let window = Window::containing(shared::app::throttle::unix_now(), 3600);
    let counted = h
        .state
        .app
        .store()
        .failures(
            &shared::store::AttemptKey("report:address:198.51.100.23".into()),
            window,
        )
        .await
        .unwrap();
    assert_eq!(counted, 2, "the reports quota counts per source ip");
}

#[tokio::test]
async fn read_serves_the_public_moderation_log() {
    let h = harness().await;
    let (status, body) = invoke(&h, Function::Read, &fixture("read-modlog")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, serde_json::json!({"entries": [], "next_cursor": null}));
}

/// `count` more posts on `free`, each with a body long enough that a page
/// of ten is well over the 1 KiB from which answers are compressed.
async fn seed_posts(h: &Harness, count: usize) {
    let writer = shared::domain::Writer {
        key: shared::domain::WriterKey::new("testwriter".into()),
        range: shared::domain::WriterKey::new("testrange".into()),
    };
    for i in 0..count {
        let post = Post {
            summary: PostSummary {
                id: new_id(),
                board: "free".into(),
                title: format!("A post about compression, number {i}"),
                author: Author::Member {
                    member_id: test_support::router::member().id,
                    nickname: "Author".into(),
                },
                created_at: now(),
                view_count: 0,
                like_count: 0,
                comment_count: 0,
                number: test_support::unique_number(),
                category: None,
                dislike_count: Some(0),
                best: false,
                media_count: 0,
            },
            body: "body ".repeat(40),
            updated_at: now(),
            revision_count: 0,
            media: Vec::new(),
        };
        h.state
            .app
            .store()
            .create_post(&post, &writer, None, None)
            .await
            .unwrap();
    }
}

/// API Gateway's view of the function's answer: lambda_http's conversion,
/// as `lambda_http::run_concurrent` makes it, serialized as Lambda sends it.
async fn gateway_answer(h: &Harness, function: Function, event: &str) -> Value {
    let event: lambda_http::request::LambdaRequest = serde_json::from_str(event).expect("a valid API Gateway v2 event");
    let adapter = lambda_http::Adapter::from(router(h.state.clone(), &[function]));
    let answer = adapter
        .oneshot(lambda_http::LambdaEvent::new(event, lambda_http::Context::default()))
        .await
        .unwrap();
    serde_json::to_value(&answer).unwrap()
}

/// API Gateway HTTP APIs do not compress: the function does (docs/API.md,
/// Conventions v4), and lambda_http sends a body with a `Content-Encoding`
/// base64-encoded with `isBase64Encoded`, which API Gateway decodes into
/// the bytes it answers with.
#[tokio::test]
async fn a_large_answer_to_a_request_accepting_gzip_leaves_the_function_gzipped_and_base64_encoded() {
    let h = harness().await;
    seed_posts(&h, 9).await;
    let plain = gateway_answer(&h, Function::Read, &fixture("read-list")).await;
    assert_eq!(
        (&plain["statusCode"], &plain["isBase64Encoded"]),
        (&200.into(), &false.into())
    );
    assert_eq!(plain["headers"].get("content-encoding"), None);
    let json = plain["body"].as_str().unwrap();
    assert!(json.len() >= 1024, "the page is {} bytes", json.len());

    let compressed = gateway_answer(&h, Function::Read, &fixture("read-list-gzip")).await;
    assert_eq!(compressed["statusCode"], 200);
    assert_eq!(compressed["isBase64Encoded"], true);
    assert_eq!(compressed["headers"]["content-encoding"], "gzip");
    assert_eq!(compressed["headers"]["vary"], "accept-encoding");
    assert_eq!(compressed["headers"]["x-content-type-options"], "nosniff");
    let gzipped = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        compressed["body"].as_str().unwrap(),
    )
    .unwrap();
    assert!(
        gzipped.len() < json.len() / 2,
        "{} of {} bytes",
        gzipped.len(),
        json.len()
    );
    let mut unzipped = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gzipped[..]), &mut unzipped).unwrap();
    assert_eq!(unzipped, json);

    // A small answer stays text, whatever the request accepts.
    let health = fixture("read-list-gzip")
        .replace("/boards/free/posts", "/health")
        .replace("GET /boards/{slug}/posts", "GET /health");
    let small = gateway_answer(&h, Function::Read, &health).await;
    assert_eq!(small["isBase64Encoded"], false);
    assert_eq!(small["headers"].get("content-encoding"), None);
    assert_eq!(
        serde_json::from_str::<Value>(small["body"].as_str().unwrap()).unwrap(),
        serde_json::json!({"status": "ok"})
    );
}

/// The pacing report travels from the throttle to the headers inside the
/// function too (docs/API.md, Throttling and quotas): a guest post under
/// the creates quota, through lambda_http's conversion, names the quota and
/// what is left of it for the API Gateway source IP.
#[tokio::test]
async fn a_write_under_a_quota_leaves_the_function_with_its_ratelimit_headers() {
    let h = harness().await;
    let first = gateway_answer(&h, Function::GuestPost, &fixture("guest-post")).await;
    assert_eq!(first["statusCode"], 201, "{first}");
    let limit = shared::app::throttle::Limits::default().creates_address.unwrap();
    assert_eq!(
        first["headers"]["ratelimit-policy"],
        format!("\"creates\";q={};w={}", limit.max, limit.window_secs)
    );
    let pacing = first["headers"]["ratelimit"].as_str().unwrap().to_owned();
    assert!(
        pacing.starts_with(&format!("\"creates\";r={};t=", limit.max - 1)),
        "{pacing}"
    );
    let second = gateway_answer(&h, Function::GuestPost, &fixture("guest-post")).await;
    let pacing = second["headers"]["ratelimit"].as_str().unwrap().to_owned();
    assert!(
        pacing.starts_with(&format!("\"creates\";r={};t=", limit.max - 2)),
        "{pacing}"
    );
}
