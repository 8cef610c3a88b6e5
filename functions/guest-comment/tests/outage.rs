//! A DynamoDB outage through the Lambda path: the real `guest-comment`
//! binary, started as Lambda starts it, takes API Gateway (HTTP API v2)
//! events from a local Runtime API served by this test (AWS's own emulator
//! is a Docker image, which cannot run here), against a DynamoDB Local of
//! the test's own that is paused. Each create is retried with its
//! `Idempotency-Key` until it is answered 201: after the outage each exists
//! exactly once.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use shared::domain::{Author, Boards, PageLimit, Post, PostId, PostKey, PostSummary, new_id, now};
use shared::store::Posts;
use shared::store::dynamo::{DynamoStore, SdkTuning};
use tokio::sync::{mpsc, oneshot};

#[path = "../../../shared/tests/support/dynamo_local.rs"]
mod dynamo_local;
use dynamo_local::{DynamoLocal, free_port};

/// The Runtime API's side: events waiting for `next`, and who waits for
/// each invocation's answer.
#[derive(Clone)]
struct RuntimeApi {
    events: Arc<tokio::sync::Mutex<mpsc::Receiver<(String, Value)>>>,
    answers: Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>,
}

async fn next(State(api): State<RuntimeApi>) -> (HeaderMap, Json<Value>) {
    let (id, event) = api.events.lock().await.recv().await.expect("the test keeps the sender");
    let mut headers = HeaderMap::new();
    let deadline = (std::time::SystemTime::now() + Duration::from_secs(10))
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    headers.insert("lambda-runtime-aws-request-id", HeaderValue::from_str(&id).unwrap());
    headers.insert(
        "lambda-runtime-deadline-ms",
        HeaderValue::from_str(&deadline.to_string()).unwrap(),
    );
    headers.insert(
        "lambda-runtime-invoked-function-arn",
        HeaderValue::from_static("arn:aws:lambda:us-east-1:123456789012:function:guest-comment"),
    );
    headers.insert("lambda-runtime-trace-id", HeaderValue::from_static("Root=1-0-0"));
    (headers, Json(event))
}

/// What the function posts, whatever content type it names.
async fn answer(State(api): State<RuntimeApi>, Path(id): Path<String>, body: axum::body::Bytes) -> &'static str {
    let body = serde_json::from_slice(&body).unwrap_or_else(|_| json!({"unreadable": String::from_utf8_lossy(&body)}));
    if let Some(waiting) = api.answers.lock().unwrap().remove(&id) {
        let _ = waiting.send(body);
    }
    "{}"
}

struct Function {
    child: Child,
    events: mpsc::Sender<(String, Value)>,
    answers: Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>,
}

impl Drop for Function {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Function {
    /// Its log lines go to `log`.
    async fn start(endpoint: &str, table: &str, log: &std::path::Path) -> Self {
        let (events, receiver) = mpsc::channel(16);
        let api = RuntimeApi {
            events: Arc::new(tokio::sync::Mutex::new(receiver)),
            answers: Arc::default(),
        };
        let answers = Arc::clone(&api.answers);
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route("/2018-06-01/runtime/invocation/{id}/response", post(answer))
            .route("/2018-06-01/runtime/invocation/{id}/error", post(answer))
            .with_state(api);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let runtime_api = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let child = Command::new(env!("CARGO_BIN_EXE_guest-comment"))
            .envs([
                ("AWS_LAMBDA_RUNTIME_API", runtime_api.as_str()),
                ("AWS_LAMBDA_FUNCTION_NAME", "guest-comment"),
                ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"),
                ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1769"),
                ("AWS_LAMBDA_LOG_GROUP_NAME", "/aws/lambda/guest-comment"),
                ("AWS_LAMBDA_LOG_STREAM_NAME", "local"),
                ("AWS_REGION", "us-east-1"),
                ("TABLE_NAME", table),
                ("DYNAMODB_ENDPOINT", endpoint),
                ("DYNAMODB_CONNECT_TIMEOUT_MS", "300"),
                ("DYNAMODB_ATTEMPT_TIMEOUT_MS", "1400"),
                ("DYNAMODB_OPERATION_TIMEOUT_MS", "1500"),
                ("DYNAMODB_MAX_ATTEMPTS", "2"),
                ("PEPPER", "outage-pepper-0123456789abcdefghijklmnop"),
                ("GUEST_TIER", "bcrypt:4"),
                ("MEMBER_TIER", "bcrypt:4"),
                ("HASH_FLOOR_OVERRIDE", "1"),
                ("LIMIT_CREATES_ADDRESS", "off"),
                ("RUST_LOG", "warn"),
            ])
            .stdout(Stdio::from(std::fs::File::create(log).unwrap()))
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting the guest-comment binary");
        Function { child, events, answers }
    }

    /// One invocation; API Gateway's view of the answer.
    async fn invoke(&self, event: Value) -> Value {
        let id = new_id();
        let (sender, receiver) = oneshot::channel();
        self.answers.lock().unwrap().insert(id.clone(), sender);
        self.events.send((id, event)).await.unwrap();
        tokio::time::timeout(Duration::from_secs(30), receiver)
            .await
            .unwrap_or_else(|_| panic!("the function did not answer"))
            .unwrap()
    }
}

/// An API Gateway v2 event for a guest comment with `key`.
fn guest_comment(post: &str, text: &str, key: &str) -> Value {
    let path = format!("/boards/free/posts/{post}/comments/guest");
    let body = json!({"nickname": "g", "password": "guest-pw", "body": text}).to_string();
    json!({
        "version": "2.0",
        "routeKey": "POST /boards/{slug}/posts/{post_id}/comments/guest",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"content-type": "application/json", "idempotency-key": key, "host": "api.example"},
        "requestContext": {
            "accountId": "123456789012", "apiId": "api", "domainName": "api.example", "domainPrefix": "api",
            "http": {"method": "POST", "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7", "userAgent": "test"},
            "requestId": new_id(), "routeKey": "POST /boards/{slug}/posts/{post_id}/comments/guest",
            "stage": "$default", "time": "30/Nov/2026:00:00:00 +0000", "timeEpoch": 1796014680000u64
        },
        "isBase64Encoded": false,
        "pathParameters": {"slug": "free", "post_id": post},
        "body": body
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_retried_with_their_keys_through_the_lambda_path_happen_exactly_once() {
    let files = tempfile::tempdir().unwrap();
    let dynamodb = DynamoLocal::start(files.path(), free_port());
    let table = format!("outage-{}", new_id().to_lowercase());
    let store = DynamoStore::connect(&table, Some(&dynamodb.endpoint()), None, &SdkTuning::defaults(true))
        .await
        .unwrap();
    let post_id = new_id();
    let post = Post {
        summary: PostSummary {
            id: post_id.clone(),
            board: "free".into(),
            title: "t".into(),
            author: Author::Guest { nickname: "g".into() },
            created_at: now(),
            view_count: 0,
            like_count: 0,
            comment_count: 0,
        },
        body: "b".into(),
        updated_at: now(),
    };
    store.create_post(&post, None, None).await.unwrap();
    let log = files.path().join("function.log");
    let function = Function::start(&dynamodb.endpoint(), &table, &log).await;
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
