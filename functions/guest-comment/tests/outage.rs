//! A DynamoDB outage through the Lambda path: the real `guest-comment`
//! binary, started as Lambda starts it, takes API Gateway (HTTP API v2)
//! events from a local Runtime API served by this test (tests/support),
//! against a DynamoDB Local of the test's own that is paused. Each create is retried with its
//! `Idempotency-Key` until it is answered 201: after the outage each exists
//! exactly once.

use std::time::{Duration, Instant};

use shared::domain::{Boards, PageLimit, PostId, PostKey};
use shared::store::Posts;

use test_support::lambda::{Function, Seeded, guest_comment, table_with_a_post};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_retried_with_their_keys_through_the_lambda_path_happen_exactly_once() {
    let files = tempfile::tempdir().unwrap();
    let Seeded {
        dynamodb,
        table,
        store,
        post_id,
    } = table_with_a_post(files.path(), "outage").await;
    let log = files.path().join("function.log");
    let endpoint = dynamodb.endpoint();
    let function = Function::start(
        env!("CARGO_BIN_EXE_guest-comment"),
        "guest-comment",
        &[
            ("TABLE_NAME", &table),
            ("DYNAMODB_ENDPOINT", &endpoint),
            ("DYNAMODB_CONNECT_TIMEOUT_MS", "300"),
            ("DYNAMODB_ATTEMPT_TIMEOUT_MS", "1400"),
            ("DYNAMODB_OPERATION_TIMEOUT_MS", "1500"),
            ("DYNAMODB_MAX_ATTEMPTS", "2"),
            ("PEPPER", "outage-pepper-0123456789abcdefghijklmnop"),
            ("TAG_KEY", "function-test-tag-key-0123456789abcdefghij"),
            ("GUEST_TIER", "bcrypt:4"),
            ("POW", "off"),
            ("MEMBER_TIER", "bcrypt:4"),
            ("HASH_FLOOR_OVERRIDE", "1"),
            ("LIMIT_CREATES_ADDRESS", "off"),
            ("RUST_LOG", "warn"),
        ],
        &log,
    )
    .await;
    let started = Instant::now();
    let health = function.invoke(guest_comment(&post_id, "warm-up", "warm-up")).await;
    assert_eq!(health["statusCode"], 201, "{health}");
    let cold = started.elapsed();

    let texts: Vec<String> = (0..4).map(|i| format!("through the outage #{i}")).collect();
    dynamodb.signal("-STOP");
    let mut during = Vec::new();
    for text in &texts {
        let answered = function
            .invoke(guest_comment(&post_id, text, &format!("key {text}")))
            .await;
        during.push(answered["statusCode"].as_u64().unwrap());
    }
    dynamodb.signal("-CONT");
    assert!(during.iter().all(|s| *s == 503), "{during:?}");

    let mut attempts = 0;
    let mut replayed = 0;
    for text in &texts {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            attempts += 1;
            let answered = function
                .invoke(guest_comment(&post_id, text, &format!("key {text}")))
                .await;
            match answered["statusCode"].as_u64().unwrap() {
                201 => {
                    if answered["headers"]["idempotent-replayed"] == "true" {
                        replayed += 1;
                    }
                    break;
                }
                409 | 503 => tokio::time::sleep(Duration::from_millis(500)).await,
                other => panic!("{text:?}: {other} {answered}"),
            }
            assert!(Instant::now() < deadline, "{text:?} never got through");
        }
    }
    let key = PostKey {
        board: Boards::default().resolve("free").unwrap(),
        post: PostId::parse(&post_id).unwrap(),
    };
    let page = store
        .list_comments(&key, PageLimit::parse(Some("100"), 20).unwrap(), None)
        .await
        .unwrap()
        .unwrap();
    for text in &texts {
        let times = page.comments.iter().filter(|c| &c.body == text).count();
        assert_eq!(times, 1, "{text:?} written {times} times");
    }
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(detail.post.summary.comment_count, texts.len() as u64 + 1);
    println!(
        "lambda path: first invocation (cold start + create) {cold:?}; 4 creates answered 503 in the hang; \
         {attempts} retries after it, {replayed} answered by replay; each comment once"
    );
}
