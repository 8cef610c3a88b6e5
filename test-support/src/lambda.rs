//! A local Lambda Runtime API served by the test (AWS's own emulator is a
//! Docker image, which cannot run here) and a real function binary started
//! against it as Lambda starts it, taking API Gateway (HTTP API v2) events.
//! Used by guest-comment's outage and concurrency tests.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use shared::domain::{Author, Post, PostSummary, new_id, now};
use shared::store::Posts;
use shared::store::dynamo::{DynamoStore, SdkTuning};
use tokio::sync::{mpsc, oneshot};

use crate::dynamo_local::{DynamoLocal, free_port};

/// A DynamoDB Local of the test's own (its files under `files`), a fresh
/// table named `prefix-<id>` and one guest post on board `free`.
#[derive(Debug)]
pub struct Seeded {
    pub dynamodb: DynamoLocal,
    pub table: String,
    pub store: DynamoStore,
    pub post_id: String,
}

pub async fn table_with_a_post(files: &std::path::Path, prefix: &str) -> Seeded {
    let dynamodb = DynamoLocal::start(files, free_port());
    let table = format!("{prefix}-{}", new_id().to_lowercase());
    let store = DynamoStore::connect(&table, Some(&dynamodb.endpoint()), None, &SdkTuning::defaults(true))
        .await
        .unwrap();
    let post_id = new_id();
    let post = Post {
        summary: PostSummary {
            id: post_id.clone(),
            board: "free".into(),
            title: "t".into(),
            author: Author::Guest {
                nickname: "g".into(),
                tag: Some("testwrit".into()),
            },
            created_at: now(),
            view_count: 0,
            like_count: 0,
            comment_count: 0,
            number: crate::unique_number(),
            category: None,
            dislike_count: Some(0),
            best: false,
            media_count: 0,
        },
        body: "b".into(),
        updated_at: now(),
        revision_count: 0,
        media: Vec::new(),
    };
    store
        .create_post(
            &post,
            &shared::domain::Writer {
                key: shared::domain::WriterKey::new("testwriter".into()),
                range: shared::domain::WriterKey::new("testrange".into()),
            },
            None,
            None,
        )
        .await
        .unwrap();
    Seeded {
        dynamodb,
        table,
        store,
        post_id,
    }
}

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

#[derive(Debug)]
pub struct Function {
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
    /// The function built at `binary` (a test's `env!("CARGO_BIN_EXE_<name>")`),
    /// named `name`, with Lambda's variables and `settings`; its stdout (log
    /// lines, EMF records) goes to `log`.
    pub async fn start(binary: &str, name: &str, settings: &[(&str, &str)], log: &std::path::Path) -> Self {
        let (events, receiver) = mpsc::channel(256);
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
        let log_group = format!("/aws/lambda/{name}");
        let child = Command::new(binary)
            .envs([
                ("AWS_LAMBDA_RUNTIME_API", runtime_api.as_str()),
                ("AWS_LAMBDA_FUNCTION_NAME", name),
                ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"),
                ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1769"),
                ("AWS_LAMBDA_LOG_GROUP_NAME", log_group.as_str()),
                ("AWS_LAMBDA_LOG_STREAM_NAME", "local"),
                ("AWS_REGION", "us-east-1"),
            ])
            .envs(settings.iter().copied())
            .stdout(Stdio::from(std::fs::File::create(log).unwrap()))
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {binary}: {e}"));
        Function { child, events, answers }
    }

    /// One invocation; API Gateway's view of the answer.
    pub async fn invoke(&self, event: Value) -> Value {
        let id = new_id();
        let (sender, receiver) = oneshot::channel();
        self.answers.lock().unwrap().insert(id.clone(), sender);
        self.events.send((id, event)).await.unwrap();
        tokio::time::timeout(Duration::from_secs(60), receiver)
            .await
            .unwrap_or_else(|_| panic!("the function did not answer"))
            .unwrap()
    }
}

/// An API Gateway v2 event for `method path` with `body` and `headers`.
pub fn event(method: &str, route: &str, path: &str, params: Value, headers: Value, body: Option<String>) -> Value {
    let mut all_headers = json!({"content-type": "application/json", "host": "api.example"});
    for (k, v) in headers.as_object().unwrap() {
        all_headers[k] = v.clone();
    }
    json!({
        "version": "2.0",
        "routeKey": format!("{method} {route}"),
        "rawPath": path,
        "rawQueryString": "",
        "headers": all_headers,
        "requestContext": {
            "accountId": "123456789012", "apiId": "api", "domainName": "api.example", "domainPrefix": "api",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7", "userAgent": "test"},
            "requestId": new_id(), "routeKey": format!("{method} {route}"),
            "stage": "$default", "time": "30/Nov/2026:00:00:00 +0000", "timeEpoch": 1796014680000u64
        },
        "isBase64Encoded": false,
        "pathParameters": params,
        "body": body
    })
}

/// A guest comment with `key` (its `Idempotency-Key`).
pub fn guest_comment(post: &str, text: &str, key: &str) -> Value {
    let body = json!({"nickname": "g", "password": "guest-pw", "body": text}).to_string();
    event(
        "POST",
        "/boards/{slug}/posts/{post_id}/comments/guest",
        &format!("/boards/free/posts/{post}/comments/guest"),
        json!({"slug": "free", "post_id": post}),
        json!({"idempotency-key": key}),
        Some(body),
    )
}

/// `GET /health`: answered without the store or a hash.
pub fn health() -> Value {
    event("GET", "/health", "/health", json!({}), json!({}), None)
}
