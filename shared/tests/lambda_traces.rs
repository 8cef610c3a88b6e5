//! The spans a Lambda invocation opens (docs/operations.md, Traces),
//! from a real API Gateway v2 event through lambda_http's conversion: the
//! request's span carries API Gateway's request id and the route, and the
//! store calls and the hash are its children. A capturing layer stands in
//! for the exporter (the OTLP path itself: server/tests/traces.rs). Its own
//! binary: the layer is the process's one subscriber.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use shared::domain::Author;
use shared::function::Function;
use shared::http::router;
use tower::ServiceExt;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

#[derive(Debug, Clone)]
struct Captured {
    id: u64,
    parent: Option<u64>,
    name: String,
    fields: BTreeMap<String, String>,
}

#[derive(Default, Clone)]
struct Spans(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().target() != "traces" {
            return;
        }
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = ctx.span(id).and_then(|s| s.parent()).map(|p| p.id().into_u64());
        self.0.lock().unwrap().push(Captured {
            id: id.into_u64(),
            parent,
            name: attrs.metadata().name().to_owned(),
            fields,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some(span) = spans.iter_mut().rev().find(|s| s.id == id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }
}

fn spans() -> &'static Spans {
    static SPANS: OnceLock<Spans> = OnceLock::new();
    SPANS.get_or_init(|| {
        let spans = Spans::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(spans.clone()))
            .expect("one subscriber");
        spans
    })
}

#[tokio::test]
async fn a_lambda_guest_post_is_a_request_span_with_the_api_gateway_request_id_over_store_and_hash_spans() {
    let spans = spans();
    let author = Author::Guest {
        nickname: "seed".into(),
        tag: Some("testwrit".into()),
    };
    let h = test_support::router::harness(author, Some("unused-hash")).await;
    let path = format!(
        "{}/../tests/fixtures/apigw-v2/guest-post.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let event = std::fs::read_to_string(&path).unwrap();
    let request = lambda_http::request::from_str(&event).expect("a valid API Gateway v2 event");
    let response = router(h.state.clone(), &[Function::GuestPost])
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let captured = spans.0.lock().unwrap().clone();
    let requests: Vec<&Captured> = captured
        .iter()
        .filter(|s| {
            s.name == "request" && s.fields.get("http.route").map(String::as_str) == Some("/boards/{slug}/posts/guest")
        })
        .collect();
    assert_eq!(requests.len(), 1, "{captured:#?}");
    let request = requests[0];
    let field = |name: &str| request.fields.get(name).map(String::as_str);
    assert_eq!(field("aws.request_id"), Some("CfJ3xjY0FiAEMbw="));
    assert_eq!(
        field("request.id"),
        Some("CfJ3xjY0FiAEMbw="),
        "API Gateway's id, '=' and all"
    );
    assert_eq!(field("otel.name"), Some("POST /boards/{slug}/posts/guest"));
    assert_eq!(field("faas.name"), Some("guest-post"));
    assert_eq!(field("http.response.status_code"), Some("201"));
    let children: Vec<&Captured> = captured.iter().filter(|s| s.parent == Some(request.id)).collect();
    let names: Vec<String> = children
        .iter()
        .map(|s| s.fields.get("otel.name").cloned().unwrap_or_default())
        .collect();
    assert!(names.iter().any(|n| n == "store create_post"), "{names:?}");
    let hash = children.iter().find(|s| s.name == "hash").expect("a hash span");
    assert_eq!(hash.fields.get("hash.tier").map(String::as_str), Some("guest"));
    assert!(hash.fields.contains_key("hash.queue_wait_ms"), "{hash:?}");
}
