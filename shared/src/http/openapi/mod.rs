//! docs/openapi.json, generated: the schemas from the request and response
//! types each row of the route table names (utoipa), the operations from
//! the rows (`routes()` and each route's [`super::routes::Doc`]: its
//! `operationId`, texts, body types and own error codes). What holds for
//! every route of a kind is added here: the codes a body, an
//! `Idempotency-Key`, a bearer token or any route can answer (`codes`), one
//! response per status naming its codes, the headers of docs/API.md
//! (Conventions), tags, parameters and `security` (`kinds`), and the
//! components they refer to (`components`). What holds for every request
//! and no operation declares (the `HEAD` beside every `GET`, a client's
//! `X-Request-Id`, the server's `431`) is said once, in `info.description`.
//! `cargo run -p sam-template` writes it; a test fails when the file is
//! stale, and `scripts/openapi-lint` lints it.

mod codes;
mod components;
mod kinds;

use serde_json::{Map, Value, json};

use self::codes::{codes, error_responses, in_table_order};
use self::components::components;
use self::kinds::{TAGS, bearer_optional, route_parameters, tag, takes_bearer};
use super::routes::routes;

/// `payload_too_large` → `PayloadTooLarge`.
fn pascal(code: &str) -> String {
    code.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The contract's version (docs/API.md, Conventions): `info.version`.
pub const CONTRACT_VERSION: &str = "4.0.0";

/// The names of the response headers, as every deployment sends them:
/// lowercase, as hyper writes HTTP/1.1 and as HTTP/2 requires. HTTP reads
/// names in any case, but some generated clients keep response headers in a
/// case-sensitive map: there a documented `ETag` reads as nothing.
pub(super) mod response_header {
    pub(in crate::http::openapi) const REQUEST_ID: &str = "x-request-id";
    pub(in crate::http::openapi) const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";
    pub(in crate::http::openapi) const ETAG: &str = "etag";
    pub(in crate::http::openapi) const LOCATION: &str = "location";
    pub(in crate::http::openapi) const RETRY_AFTER: &str = "retry-after";
    pub(in crate::http::openapi) const WWW_AUTHENTICATE: &str = "www-authenticate";
    pub(in crate::http::openapi) const RATELIMIT_POLICY: &str = "ratelimit-policy";
    pub(in crate::http::openapi) const RATELIMIT: &str = "ratelimit";
}

/// What every deployment does beside its operations, said once here rather
/// than on each operation: generated clients would turn a `HEAD` into an
/// SDK function, an `X-Request-Id` parameter into an argument of every
/// function, and a bodiless `431` into an untyped error of every call.
const BESIDE_THE_OPERATIONS: &str = "\n\nEvery deployment also, beside the operations below:\n\n\
- answers `HEAD` wherever it answers `GET`: the same status and headers without the body (a `HEAD` of a post counts no view). The `HEAD` forms are served, not listed as operations. The single-process server answers them; API Gateway routes only the listed methods, so behind it a `HEAD` may get API Gateway's own answer.\n\
- reads an `X-Request-Id` request header on every operation: a value of 1-64 characters of `[A-Za-z0-9._-]` is kept, logged and echoed in the `x-request-id` response header (declared once, `components.headers.RequestId`, on every response); any other value, or none, is replaced by a fresh id (on Lambda, API Gateway's request id).\n\
- (the single-process server) answers a request head (request line and headers) over `SERVER_MAX_HEADER_BYTES` (64 KiB by default) with `431 Request Header Fields Too Large`, from its HTTP layer before any operation runs: no body, no `x-request-id`, and the connection closed.\n\n\
Response header names are written as every deployment sends them, in lowercase (`etag`, `location`, `x-request-id`, ...); HTTP reads them in any case.";

fn header_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/headers/{name}")})
}

fn parameter_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/parameters/{name}")})
}

fn json_body(schema: &str) -> Value {
    json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}})
}

fn operation(route: &super::Route, components: &mut Map<String, Value>) -> Value {
    let doc = route.doc;
    let mut op = json!({
        "operationId": doc.operation_id,
        "summary": doc.summary,
        "description": doc.details,
        "tags": [tag(route.path)],
        "x-lambda-function": route.function.name(),
    });
    let codes = codes(route);
    let parameters = route_parameters(route, &codes);
    if !parameters.is_empty() {
        op["parameters"] = parameters.into();
    }
    if let Some(request) = doc.request {
        op["requestBody"] = json!({"required": true, "content": json_body(&request.name())});
    }
    let mut success = json!({"description": doc.description});
    if let Some(response) = doc.response {
        success["content"] = json_body(&response.name());
    }
    let mut headers = Map::new();
    headers.insert(response_header::REQUEST_ID.into(), header_ref("RequestId"));
    if route.takes_idempotency_key() {
        headers.insert(
            response_header::IDEMPOTENT_REPLAYED.into(),
            header_ref("IdempotentReplayed"),
        );
    }
    let response_name = doc.response.map(|response| response.name());
    if response_name.as_deref() == Some("PostDetail") {
        headers.insert(response_header::ETAG.into(), header_ref("ETag"));
    }
    // Every 201 whose item has a GET route: posts, comments, boards.
    if doc.status == 201 && matches!(response_name.as_deref(), Some("PostDetail" | "Comment" | "Board")) {
        headers.insert(response_header::LOCATION.into(), header_ref("Location"));
    }
    // A write under a quota says what is left (docs/API.md, Conventions
    //): which policies, with their defaults, is said per route.
    if let Some(policies) = codes::quota_policies(route) {
        headers.insert(
            response_header::RATELIMIT_POLICY.into(),
            json!({"description": format!("Every write quota this request counted against, as structured fields (`\"creates\";q=30;w=600`: at most q writes per w seconds). Here, by default: {policies}. Configurable per deployment."),
                   "schema": {"type": "string"}}),
        );
        headers.insert(response_header::RATELIMIT.into(), header_ref("RateLimit"));
    }
    success["headers"] = headers.into();
    let mut responses = error_responses(&codes, components);
    if let Some((status, description)) = doc.also {
        let mut also = success.clone();
        also["description"] = description.into();
        responses.insert(status.to_string(), also);
    }
    responses.insert(doc.status.to_string(), success);
    op["responses"] = responses.into();
    op["security"] = if takes_bearer(route) {
        json!([{"bearer": []}])
    } else if bearer_optional(route) {
        json!([{}, {"bearer": []}])
    } else {
        json!([])
    };
    op
}

fn health(components: &mut Map<String, Value>) -> Value {
    // No store, no body read: only the method and the body limit.
    let mut responses = error_responses(
        &in_table_order(vec!["method_not_allowed", "payload_too_large"]),
        components,
    );
    responses.insert(
        "200".into(),
        json!({"description": "The service is up", "content": json_body("Health"),
               "headers": {response_header::REQUEST_ID: header_ref("RequestId")}}),
    );
    json!({
        "operationId": "getHealth",
        "summary": "Liveness",
        "description": "Every deployment (each Lambda function, the server) answers it without touching the store.",
        "tags": ["health"],
        "x-lambda-function": "every function",
        "responses": responses,
        "security": [],
    })
}

/// The whole document, as docs/openapi.json holds it.
pub fn document() -> Value {
    let mut responses = Map::new();
    let mut paths = Map::new();
    paths.insert("/health".into(), json!({"get": health(&mut responses)}));
    for route in routes() {
        let op = operation(&route, &mut responses);
        let item = paths.entry(route.path).or_insert_with(|| json!({}));
        item[route.method.as_str().to_ascii_lowercase()] = op;
    }
    let tags: Vec<Value> = TAGS
        .iter()
        .map(|(name, description)| json!({"name": name, "description": description}))
        .collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Community boards",
            "version": CONTRACT_VERSION,
            "description": format!("The HTTP contract of every deployment (Lambda functions behind API Gateway, cargo lambda watch, the single-process server), generated from the code (`cargo run -p sam-template`); docs/API.md states it in words. `x-lambda-function` names the function that serves each operation.{BESIDE_THE_OPERATIONS}"),
            "license": {"name": "MIT", "identifier": "MIT"}
        },
        "servers": [{"url": "http://127.0.0.1:3000", "description": "local single-process server"}],
        "tags": tags,
        "paths": paths,
        "components": components(responses),
    })
}

/// The document as written to docs/openapi.json: pretty, with a final newline.
pub fn rendered() -> String {
    let mut text = serde_json::to_string_pretty(&document()).expect("the document serializes");
    text.push('\n');
    text
}
