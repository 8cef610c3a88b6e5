//! docs/openapi.json, generated: the schemas from the request and response
//! types (utoipa), the operations from the route table (`routes()` and each
//! route's [`super::routes::Doc`]). `cargo run -p shared --bin openapi`
//! writes it; a test fails when the file is stale.

use serde_json::{Map, Value, json};
use utoipa::OpenApi;

use super::handlers::accounts::SignUpRequest;
use super::handlers::guest::{GuestCommentRequest, GuestEditRequest, GuestPostRequest, GuestProofRequest};
use super::handlers::member::{CommentRequest, PostRequest};
use super::handlers::sessions::LogInRequest;
use super::routes::routes;
use crate::app::sessions::Session;
use crate::domain::{Author, Comment, CommentPage, LikeState, Member, Page, Post, PostDetail, PostSummary};
use crate::error::ApiError;
use crate::function::Function;

#[derive(OpenApi)]
#[openapi(components(schemas(
    SignUpRequest,
    LogInRequest,
    PostRequest,
    CommentRequest,
    GuestPostRequest,
    GuestEditRequest,
    GuestCommentRequest,
    GuestProofRequest,
    Member,
    Session,
    Author,
    PostSummary,
    Post,
    PostDetail,
    Comment,
    Page,
    CommentPage,
    LikeState
)))]
struct Schemas;

/// The error codes of docs/API.md, Errors, read from [`ApiError`] itself.
fn error_codes() -> Vec<&'static str> {
    let unavailable = ApiError::Unavailable {
        message: String::new(),
        retry_after: 1,
    };
    [
        ApiError::MalformedJson(String::new()),
        ApiError::Validation(String::new()),
        ApiError::Unauthorized(String::new()),
        ApiError::InvalidCredentials,
        ApiError::WrongPassword,
        ApiError::Forbidden(String::new()),
        ApiError::NotFound(String::new()),
        ApiError::MethodNotAllowed(String::new()),
        ApiError::UsernameTaken,
        ApiError::RequestInProgress { retry_after: 1 },
        ApiError::IdempotencyKeyReused,
        ApiError::PayloadTooLarge,
        ApiError::UnsupportedMediaType,
        ApiError::TooManyAttempts { retry_after: 1 },
        ApiError::RateLimited { retry_after: 1 },
        unavailable,
    ]
    .iter()
    .map(ApiError::code)
    .collect()
}

/// The shared error responses, by status: name and description.
fn error_response(status: u16) -> (&'static str, &'static str) {
    match status {
        400 => ("BadRequest", "malformed_json or validation_failed"),
        401 => ("Unauthorized", "unauthorized or invalid_credentials"),
        403 => ("Forbidden", "wrong_password or forbidden"),
        404 => ("NotFound", "not_found: unknown board, post or comment"),
        405 => ("MethodNotAllowed", "method_not_allowed"),
        409 => (
            "Conflict",
            "username_taken, or request_in_progress (this Idempotency-Key's first request still runs; Retry-After)",
        ),
        413 => ("PayloadTooLarge", "payload_too_large: body over 64 KiB"),
        415 => (
            "UnsupportedMediaType",
            "unsupported_media_type: a body without Content-Type: application/json (decided before the body is read)",
        ),
        422 => (
            "IdempotencyKeyReused",
            "idempotency_key_reused: this Idempotency-Key was used for a different request",
        ),
        429 => (
            "TooManyRequests",
            "too_many_attempts (password failures) or rate_limited (write quotas)",
        ),
        503 => (
            "Unavailable",
            "unavailable: store or hashing capacity; the request may or may not have been applied (a create retried with its Idempotency-Key applies once)",
        ),
        other => panic!("no shared response for status {other}"),
    }
}

fn components() -> Value {
    let generated = serde_json::to_value(Schemas::openapi()).expect("schemas serialize");
    let mut schemas: Map<String, Value> = generated["components"]["schemas"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    schemas.insert(
        "Error".into(),
        json!({
            "type": "object",
            "required": ["error"],
            "properties": {"error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": {"type": "string", "enum": error_codes()},
                    "message": {"type": "string", "description": "Names the field and the rule"}
                }
            }}
        }),
    );
    schemas.insert(
        "Health".into(),
        json!({"type": "object", "required": ["status"], "properties": {"status": {"type": "string", "const": "ok"}}}),
    );
    let mut responses = Map::new();
    for status in [400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 503] {
        let (name, description) = error_response(status);
        let mut response = json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        });
        if matches!(status, 409 | 429 | 503) {
            response["headers"] = json!({"Retry-After": {"$ref": "#/components/headers/RetryAfter"}});
        }
        responses.insert(name.into(), response);
    }
    json!({
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
        "headers": {
            "RetryAfter": {"description": "Seconds to wait before retrying", "schema": {"type": "integer", "minimum": 1}},
            "IdempotentReplayed": {"description": "true: this is the remembered answer to an earlier request with the same Idempotency-Key; nothing was written",
                                   "schema": {"type": "string", "const": "true"}}
        },
        "parameters": {
            "Slug": {"name": "slug", "in": "path", "required": true,
                     "schema": {"type": "string", "pattern": "^[a-z0-9-]{1,40}$"},
                     "description": "A configured board (default free, qna, notice)", "example": "free"},
            "PostId": {"name": "post_id", "in": "path", "required": true, "schema": {"type": "string"}},
            "CommentId": {"name": "comment_id", "in": "path", "required": true, "schema": {"type": "string"}},
            "Limit": {"name": "limit", "in": "query", "required": false,
                      "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": super::paths::DEFAULT_POSTS_PAGE}},
            "CommentLimit": {"name": "limit", "in": "query", "required": false,
                      "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": crate::domain::COMMENTS_PAGE}},
            "Cursor": {"name": "cursor", "in": "query", "required": false, "schema": {"type": "string"},
                       "description": "A page's next_cursor (or a post's comments_next_cursor)"},
            "IdempotencyKey": {"name": "Idempotency-Key", "in": "header", "required": false,
                       "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$"},
                       "description": "Makes the create safe to retry: the same key with the same request answers the first answer again for 24 hours"}
        },
        "responses": responses,
        "schemas": schemas,
    })
}

fn json_body(schema: &str) -> Value {
    json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}})
}

fn operation(route: &super::Route) -> Value {
    let doc = route.doc;
    let mut op = json!({"summary": doc.summary, "x-lambda-function": route.function.name()});
    let mut parameters: Vec<Value> = [
        ("{slug}", "Slug"),
        ("{post_id}", "PostId"),
        ("{comment_id}", "CommentId"),
    ]
    .iter()
    .filter(|(segment, _)| route.path.contains(segment))
    .map(|(_, name)| json!({"$ref": format!("#/components/parameters/{name}")}))
    .collect();
    if route.method == http::Method::GET && route.path.ends_with("/posts") {
        parameters.push(json!({"$ref": "#/components/parameters/Limit"}));
        parameters.push(json!({"$ref": "#/components/parameters/Cursor"}));
    }
    if route.method == http::Method::GET && route.path.ends_with("/comments") {
        parameters.push(json!({"$ref": "#/components/parameters/CommentLimit"}));
        parameters.push(json!({"$ref": "#/components/parameters/Cursor"}));
    }
    if route.takes_idempotency_key() {
        parameters.push(json!({"$ref": "#/components/parameters/IdempotencyKey"}));
    }
    if !parameters.is_empty() {
        op["parameters"] = parameters.into();
    }
    if let Some(request) = doc.request {
        op["requestBody"] = json!({"required": true, "content": json_body(request)});
    }
    let mut responses = Map::new();
    let mut success = json!({"description": doc.description});
    if let Some(response) = doc.response {
        success["content"] = json_body(response);
    }
    if route.takes_idempotency_key() {
        success["headers"] = json!({"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}});
    }
    responses.insert(doc.status.to_string(), success);
    let idempotent: &[u16] = if route.takes_idempotency_key() {
        &[409, 422]
    } else {
        &[]
    };
    let with_body: &[u16] = if doc.request.is_some() { &[415] } else { &[] };
    let mut errors: Vec<u16> = doc.errors.iter().chain(idempotent).chain(with_body).copied().collect();
    errors.sort_unstable();
    errors.dedup();
    for status in &errors {
        let (name, _) = error_response(*status);
        responses.insert(
            status.to_string(),
            json!({"$ref": format!("#/components/responses/{name}")}),
        );
    }
    op["responses"] = responses.into();
    if matches!(route.function, Function::MemberWrite | Function::Like) {
        op["security"] = json!([{"bearer": []}]);
    }
    op
}

/// The whole document, as docs/openapi.json holds it.
pub fn document() -> Value {
    let mut paths = Map::new();
    paths.insert(
        "/health".into(),
        json!({"get": {
            "summary": "Liveness",
            "x-lambda-function": "every function",
            "responses": {"200": {"description": "The service is up", "content": json_body("Health")}}
        }}),
    );
    for route in routes() {
        let item = paths.entry(route.path).or_insert_with(|| json!({}));
        item[route.method.as_str().to_ascii_lowercase()] = operation(&route);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Community boards",
            "version": "1.0.0",
            "description": "The HTTP contract of every deployment (Lambda functions behind API Gateway, cargo lambda watch, the single-process server), generated from the code (`cargo run -p shared --bin openapi`); docs/API.md states it in words. `x-lambda-function` names the function that serves each operation."
        },
        "servers": [{"url": "http://127.0.0.1:3000", "description": "local single-process server"}],
        "paths": paths,
        "components": components(),
    })
}

/// The document as written to docs/openapi.json: pretty, with a final newline.
pub fn rendered() -> String {
    let mut text = serde_json::to_string_pretty(&document()).expect("the document serializes");
    text.push('\n');
    text
}
