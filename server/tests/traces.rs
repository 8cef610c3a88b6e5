//! Traces end to end (docs/operations.md, Traces): the server's real
//! telemetry set-up exports over OTLP/HTTP to a receiver started here, which
//! decodes what arrives as OpenTelemetry's own protobuf. A guest post sent
//! with a W3C `traceparent` must come back as one trace: the request's span
//! under the caller's, and under it each store call and the hash with its
//! queue wait. Its own binary: the telemetry is the process's one subscriber.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::json;
use shared::runtime::telemetry::{self, Telemetry};
use shared::runtime::{Config, Deployment, Env};

/// What the receiver was sent: every span, with its resource's service name.
#[derive(Default)]
struct Received {
    spans: Mutex<Vec<(String, Span)>>,
    exports: Mutex<Vec<BTreeMap<String, String>>>,
}

struct Collector {
    received: Arc<Received>,
    endpoint: String,
    telemetry: Telemetry,
}

/// One receiver and one telemetry set-up for the whole binary.
async fn collector() -> &'static Collector {
    static COLLECTOR: tokio::sync::OnceCell<Collector> = tokio::sync::OnceCell::const_new();
    COLLECTOR
        .get_or_init(|| async {
            let received = Arc::new(Received::default());
            let sink = received.clone();
            let receiver = axum::Router::new().route(
                "/v1/traces",
                axum::routing::post(move |headers: axum::http::HeaderMap, body: Bytes| async move {
                    let export = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                    sink.exports.lock().unwrap().push(
                        headers
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
                            .collect(),
                    );
                    for resource in export.resource_spans {
                        let service = resource
                            .resource
                            .iter()
                            .flat_map(|r| &r.attributes)
                            .find(|kv| kv.key == "service.name")
                            .map(|kv| text(kv.value.as_ref().and_then(|v| v.value.as_ref())))
                            .unwrap_or_default();
                        for scope in resource.scope_spans {
                            for span in scope.spans {
                                sink.spans.lock().unwrap().push((service.clone(), span));
                            }
                        }
                    }
                    // An empty ExportTraceServiceResponse.
                    ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
                }),
            );
            // On a runtime of its own: each test's runtime ends with it.
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.set_nonblocking(true).unwrap();
            let endpoint = format!("http://{}", listener.local_addr().unwrap());
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                    axum::serve(listener, receiver).await.unwrap()
                })
            });
            let settings = [("OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), endpoint.clone())];
            let env = Env::new(|name| settings.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()));
            let telemetry = telemetry::init("server", &env).unwrap();
            assert!(telemetry.traces(), "an endpoint turns traces on");
            Collector {
                received,
                endpoint,
                telemetry,
            }
        })
        .await
}

fn text(value: Option<&Value>) -> String {
    match value {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        Some(Value::BoolValue(b)) => b.to_string(),
        _ => String::new(),
    }
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .map(|kv| text(kv.value.as_ref().and_then(|v| v.value.as_ref())))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The server as `cargo run -p server` builds it, on `store`'s settings.
async fn spawn_server(store: &[(&str, String)], data_dir: &std::path::Path) -> String {
    let mut vars: Vec<(String, String)> = vec![
        ("PEPPER".into(), "traces-test-pepper-traces-test-pepper".into()),
        ("JWT_SECRET".into(), "traces-test-jwt-secret-traces-test-jwt".into()),
        ("MEMBER_TIER".into(), "bcrypt:4".into()),
        ("GUEST_TIER".into(), "bcrypt:4".into()),
        ("POW".into(), "off".into()),
        ("HASH_FLOOR_OVERRIDE".into(), "1".into()),
        ("DATA_DIR".into(), data_dir.display().to_string()),
    ];
    vars.extend(store.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    let env = Env::new(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()));
    let config = Config::from(Deployment::Server, &env).unwrap();
    let settings = server::ServerSettings::from_env(&env).unwrap();
    let state = shared::runtime::build(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let app = server::app(state, &settings.cors_origins);
    tokio::spawn(server::serve(
        listener,
        app,
        settings.connections,
        std::future::pending(),
    ));
    address
}

/// Sends a guest post as the caller of trace `trace_id` and returns that
/// trace's spans once the request's span has arrived.
async fn guest_post_traced(store: &[(&str, String)], trace_id: &str) -> (Vec<(String, Span)>, String) {
    let collector = collector().await;
    let data_dir = tempfile::tempdir().unwrap();
    let address = spawn_server(store, data_dir.path()).await;
    let caller_span = "00f067aa0ba902b7";
    let response = reqwest::Client::new()
        .post(format!("{address}/boards/free/posts/guest"))
        .header("traceparent", format!("00-{trace_id}-{caller_span}-01"))
        .header("x-request-id", format!("traced-{}", &trace_id[..8]))
        .json(&json!({"nickname": "guest", "password": "guest-pass-1", "title": "traced", "body": "a traced post"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    collector.telemetry.flush().await;
    // The request's span ends as its answer leaves: allow the export a moment.
    for _ in 0..100 {
        let spans: Vec<(String, Span)> = collector
            .received
            .spans
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, s)| hex(&s.trace_id) == trace_id)
            .cloned()
            .collect();
        if spans.iter().any(|(_, s)| s.name.starts_with("POST ")) {
            return (spans, caller_span.to_owned());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        collector.telemetry.flush().await;
    }
    panic!(
        "no request span of trace {trace_id} reached {} ({} exports, {} spans in all)",
        collector.endpoint,
        collector.received.exports.lock().unwrap().len(),
        collector.received.spans.lock().unwrap().len()
    );
}

/// The shape both stores share; returns the store spans by operation.
fn assert_one_trace(spans: &[(String, Span)], caller: &str, system: &str) -> BTreeMap<String, Span> {
    let print: Vec<String> = spans
        .iter()
        .map(|(_, s)| {
            let mut attributes: Vec<String> = s
                .attributes
                .iter()
                .map(|kv| format!("{}={}", kv.key, text(kv.value.as_ref().and_then(|v| v.value.as_ref()))))
                .collect();
            attributes.sort();
            format!("{} [{}]", s.name, attributes.join(", "))
        })
        .collect();
    println!("trace ({system}):\n  {}", print.join("\n  "));
    let request: Vec<&Span> = spans
        .iter()
        .map(|(_, s)| s)
        .filter(|s| s.name == "POST /boards/{slug}/posts/guest")
        .collect();
    assert_eq!(request.len(), 1, "one request span: {print:?}");
    let request = request[0];
    assert_eq!(
        hex(&request.parent_span_id),
        caller,
        "the caller's traceparent is the parent"
    );
    assert!(spans.iter().all(|(service, _)| service == "community-boards-server"));
    assert_eq!(attribute(request, "http.request.method").as_deref(), Some("POST"));
    assert_eq!(
        attribute(request, "http.route").as_deref(),
        Some("/boards/{slug}/posts/guest")
    );
    assert_eq!(attribute(request, "http.response.status_code").as_deref(), Some("201"));
    assert_eq!(attribute(request, "faas.name").as_deref(), Some("guest-post"));
    assert_eq!(attribute(request, "operation.id").as_deref(), Some("createGuestPost"));
    assert!(attribute(request, "request.id").is_some_and(|id| id.starts_with("traced-")));
    let children: Vec<&Span> = spans
        .iter()
        .map(|(_, s)| s)
        .filter(|s| s.parent_span_id == request.span_id)
        .collect();
    let hash: Vec<&&Span> = children.iter().filter(|s| s.name == "hash hash").collect();
    assert_eq!(hash.len(), 1, "one hash under the request: {print:?}");
    let hash = hash[0];
    assert_eq!(attribute(hash, "hash.tier").as_deref(), Some("guest"));
    assert_eq!(attribute(hash, "hash.algorithm").as_deref(), Some("bcrypt"));
    assert_eq!(attribute(hash, "hash.cost").as_deref(), Some("4"));
    assert_eq!(attribute(hash, "hash.batch").as_deref(), Some("1"));
    let wait: f64 = attribute(hash, "hash.queue_wait_ms").unwrap().parse().unwrap();
    let run: f64 = attribute(hash, "hash.run_ms").unwrap().parse().unwrap();
    assert!(wait >= 0.0 && run > 0.0, "queue wait {wait} ms, run {run} ms");
    let store: BTreeMap<String, Span> = children
        .iter()
        .filter(|s| s.name.starts_with("store "))
        .map(|s| (attribute(s, "db.operation.name").unwrap(), (*s).clone()))
        .collect();
    assert!(store.contains_key("create_post"), "the post's write: {print:?}");
    for span in store.values() {
        assert_eq!(attribute(span, "db.system.name").as_deref(), Some(system));
        assert!(span.start_time_unix_nano >= request.start_time_unix_nano);
        assert!(span.end_time_unix_nano <= request.end_time_unix_nano);
    }
    // No secret in any attribute of the trace.
    let all = print.join("\n");
    for secret in ["guest-pass-1", "traces-test-pepper", "traces-test-jwt", "$2b$"] {
        assert!(!all.contains(secret), "{secret} in the trace");
    }
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_post_on_sqlite_is_one_trace_of_request_store_calls_and_the_hash_with_its_queue_wait() {
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let (spans, caller) = guest_post_traced(&[], trace_id).await;
    let store = assert_one_trace(&spans, &caller, "sqlite");
    assert_eq!(
        attribute(&store["create_post"], "db.namespace").as_deref(),
        Some("boards.sqlite3")
    );
    assert_eq!(attribute(&store["create_post"], "aws.dynamodb.requests"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_post_on_dynamodb_is_one_trace_whose_store_calls_carry_their_requests_and_units() {
    let endpoint = std::env::var("DYNAMODB_ENDPOINT").expect(
        "DYNAMODB_ENDPOINT is not set: run the suite with `bash scripts/test-all`, which starts DynamoDB Local",
    );
    let table = format!("traces-{}", shared::domain::new_id().to_lowercase());
    let trace_id = "5cf92f3577b34da6a3ce929d0e0e4737";
    let (spans, caller) = guest_post_traced(
        &[("TABLE_NAME", table.clone()), ("DYNAMODB_ENDPOINT", endpoint)],
        trace_id,
    )
    .await;
    let store = assert_one_trace(&spans, &caller, "aws.dynamodb");
    let create = &store["create_post"];
    assert_eq!(attribute(create, "db.namespace"), Some(table));
    let requests: u32 = attribute(create, "aws.dynamodb.requests").unwrap().parse().unwrap();
    let written: f64 = attribute(create, "aws.dynamodb.consumed_write_units")
        .unwrap()
        .parse()
        .unwrap();
    assert!(requests >= 1 && written > 0.0, "{requests} requests, {written} WCU");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_traceparent_a_request_starts_its_own_trace_and_exports_are_protobuf() {
    let collector = collector().await;
    let data_dir = tempfile::tempdir().unwrap();
    let address = spawn_server(&[], data_dir.path()).await;
    let response = reqwest::get(format!("{address}/boards/free/posts")).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut listing = Vec::new();
    for _ in 0..100 {
        collector.telemetry.flush().await;
        listing = collector
            .received
            .spans
            .lock()
            .unwrap()
            .iter()
            .map(|(_, s)| s.clone())
            .filter(|s| s.name == "GET /boards/{slug}/posts")
            .collect();
        if !listing.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!listing.is_empty(), "the listing's span arrived");
    assert!(listing.iter().all(|s| s.parent_span_id.is_empty()), "a root span");
    let exports = collector.received.exports.lock().unwrap();
    assert!(
        exports
            .iter()
            .all(|h| h.get("content-type").map(String::as_str) == Some("application/x-protobuf"))
    );
}
