//! docs/openapi.json, generated: the schemas from the request and response
//! types each row of the route table names (utoipa), the operations from
//! the rows (`routes()` and each route's [`super::routes::Doc`]: its
//! `operationId`, texts, body types and own error codes). What holds for
//! every route of a kind is added here: the codes a body, an
//! `Idempotency-Key`, a bearer token or any route can answer (`codes`), one
//! response per status naming its codes, the headers of docs/API.md
//! (Conventions), the `HEAD` beside every `GET`, tags, parameters and
//! `security` (`kinds`), and the components they refer to (`components`).
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

fn header_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/headers/{name}")})
}

fn parameter_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/parameters/{name}")})
}

fn json_body(schema: &str) -> Value {
    json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}})
}

/// The `HEAD` that axum serves beside every `GET`: the same statuses and
/// headers, no bodies (each response inlined without its content).
fn head_of(get: &Value, components: &Map<String, Value>) -> Value {
    let get_id = get["operationId"].as_str().expect("an operationId");
    let noun = get_id
        .strip_prefix("get")
        .or_else(|| get_id.strip_prefix("list"))
        .expect("a GET operation is get... or list...");
    let mut head = get.clone();
    head["operationId"] = format!("head{noun}").into();
    head["summary"] = format!("The status and headers of {get_id}").into();
    head["description"] =
        format!("What `{get_id}` answers, without the body (a HEAD counts no view): for its status and headers. The single-process server answers it; API Gateway routes only the route table's methods, so behind it a HEAD may get API Gateway's own answer.")
            .into();
    let mut responses = Map::new();
    for (status, response) in get["responses"].as_object().expect("responses") {
        let mut response = match response["$ref"].as_str() {
            Some(reference) => {
                let name = reference.rsplit('/').next().expect("a component name");
                components[name].clone()
            }
            None => response.clone(),
        };
        if let Some(response) = response.as_object_mut() {
            response.remove("content");
        }
        responses.insert(status.clone(), response);
    }
    head["responses"] = responses.into();
    head
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
    op["parameters"] = route_parameters(route, &codes).into();
    if let Some(request) = doc.request {
        op["requestBody"] = json!({"required": true, "content": json_body(&request.name())});
    }
    let mut success = json!({"description": doc.description});
    if let Some(response) = doc.response {
        success["content"] = json_body(&response.name());
    }
    let mut headers = Map::new();
    headers.insert("X-Request-Id".into(), header_ref("RequestId"));
    if route.takes_idempotency_key() {
        headers.insert("Idempotent-Replayed".into(), header_ref("IdempotentReplayed"));
    }
    let response_name = doc.response.map(|response| response.name());
    if response_name.as_deref() == Some("PostDetail") {
        headers.insert("ETag".into(), header_ref("ETag"));
    }
    // Every 201 whose item has a GET route: posts and comments.
    if doc.status == 201 && matches!(response_name.as_deref(), Some("PostDetail" | "Comment")) {
        headers.insert("Location".into(), header_ref("Location"));
    }
    // A write under a quota says what is left (docs/API.md, Conventions
    // (v4)): which policies, with their defaults, is said per route.
    if let Some(policies) = codes::quota_policies(route) {
        headers.insert(
            "RateLimit-Policy".into(),
            json!({"description": format!("Every write quota this request counted against, as structured fields (`\"creates\";q=30;w=600`: at most q writes per w seconds). Here, by default: {policies}. Configurable per deployment."),
                   "schema": {"type": "string"}}),
        );
        headers.insert("RateLimit".into(), header_ref("RateLimit"));
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
    // No store, no body read: only the method, the body limit and the head cap.
    let mut responses = error_responses(
        &in_table_order(vec!["method_not_allowed", "payload_too_large"]),
        components,
    );
    responses.insert(
        "200".into(),
        json!({"description": "The service is up", "content": json_body("Health"),
               "headers": {"X-Request-Id": header_ref("RequestId")}}),
    );
    json!({
        "operationId": "getHealth",
        "summary": "Liveness",
        "description": "Every deployment (each Lambda function, the server) answers it without touching the store.",
        "tags": ["health"],
        "x-lambda-function": "every function",
        "parameters": [parameter_ref("RequestId")],
        "responses": responses,
        "security": [],
    })
}

/// The whole document, as docs/openapi.json holds it.
pub fn document() -> Value {
    let mut responses = Map::new();
    let mut paths = Map::new();
    let health = health(&mut responses);
    let head = head_of(&health, &responses);
    paths.insert("/health".into(), json!({"get": health, "head": head}));
    for route in routes() {
        let op = operation(&route, &mut responses);
        let head = (route.method == http::Method::GET).then(|| head_of(&op, &responses));
        let item = paths.entry(route.path).or_insert_with(|| json!({}));
        item[route.method.as_str().to_ascii_lowercase()] = op;
        if let Some(head) = head {
            item["head"] = head;
        }
    }
    let tags: Vec<Value> = TAGS
        .iter()
        .map(|(name, description)| json!({"name": name, "description": description}))
        .collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Community boards",
            "version": "1.0.0",
            "description": "The HTTP contract of every deployment (Lambda functions behind API Gateway, cargo lambda watch, the single-process server), generated from the code (`cargo run -p sam-template`); docs/API.md states it in words. `x-lambda-function` names the function that serves each operation.",
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
