//! docs/openapi.json, generated: the schemas from the request and response
//! types (utoipa), the operations from the route table (`routes()` and each
//! route's [`super::routes::Doc`]: its `operationId`, texts, types and own
//! error codes). What holds for every route of a kind is added here: the
//! codes a body, an `Idempotency-Key`, a bearer token or any route can
//! answer, one response per status naming its codes, the headers of
//! docs/API.md (Conventions (v3)), the `HEAD` beside every `GET`, tags and
//! `security`. `cargo run -p shared --bin openapi` writes it; a test fails
//! when the file is stale, and `scripts/openapi-lint` lints it.

use serde_json::{Map, Value, json};
use utoipa::OpenApi;

use super::handlers::account::{ChangePasswordRequest, DeleteAccountRequest};
use super::handlers::accounts::SignUpRequest;
use super::handlers::guest::{GuestCommentRequest, GuestEditRequest, GuestPostRequest, GuestProofRequest};
use super::handlers::member::{CommentRequest, PostRequest};
use super::handlers::moderation::{BanRequest, ReasonRequest};
use super::handlers::sessions::LogInRequest;
use super::routes::routes;
use crate::app::sessions::Session;
use crate::domain::{
    Author, Ban, BanPage, BanScope, BanTarget, Comment, CommentPage, LikeState, LogAction, LogEntry, LogPage,
    LogTarget, Me, Member, Moderators, Page, Post, PostDetail, PostSummary, Report, ReportPage, ReportTarget, Roles,
};
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
    LikeState,
    ReasonRequest,
    BanRequest,
    Moderators,
    Ban,
    BanScope,
    BanTarget,
    BanPage,
    Report,
    ReportTarget,
    ReportPage,
    LogAction,
    LogTarget,
    LogEntry,
    LogPage,
    ChangePasswordRequest,
    DeleteAccountRequest,
    Me,
    Roles
)))]
struct Schemas;

/// Every error code the server answers, in docs/API.md's table order, read
/// from [`ApiError`] itself, with its status.
fn known_codes() -> Vec<(&'static str, u16)> {
    let unavailable = ApiError::Unavailable {
        message: String::new(),
        retry_after: 1,
    };
    let mut codes: Vec<(&'static str, u16)> = [
        ApiError::MalformedJson(String::new()),
        ApiError::Validation(String::new()),
        ApiError::Unauthorized(String::new()),
        ApiError::InvalidCredentials,
        ApiError::WrongPassword,
        ApiError::Forbidden(String::new()),
        ApiError::Banned(String::new()),
        ApiError::NotFound(String::new()),
        ApiError::MethodNotAllowed(String::new()),
        ApiError::UsernameTaken,
        ApiError::RequestInProgress { retry_after: 1 },
        ApiError::PayloadTooLarge,
        ApiError::UnsupportedMediaType,
        ApiError::IdempotencyKeyReused,
        ApiError::PreconditionFailed,
        ApiError::TooManyAttempts { retry_after: 1 },
        ApiError::RateLimited { retry_after: 1 },
        unavailable,
        ApiError::Internal(String::new()),
    ]
    .iter()
    .map(|e| (e.code(), e.status().as_u16()))
    .collect();
    codes.sort_by_key(|(_, status)| *status);
    codes
}

/// What each code means (docs/API.md, the error table). A code without a
/// meaning here stops the generator: a new `ApiError` variant gets one.
fn meaning(code: &str) -> &'static str {
    match code {
        "malformed_json" => "the body is not JSON, or not the expected JSON types",
        "validation_failed" => "a field (or the query, or a header) breaks a rule; the message names it",
        "unauthorized" => "the bearer token is missing, malformed, tampered with or expired",
        "invalid_credentials" => {
            "login failed: the same code, message and timing for every cause (unknown user, wrong password)"
        }
        "wrong_password" => "the guest password does not match",
        "forbidden" => {
            "what this changes was written by someone else (another member, or a member on a guest route), or (v3) a staff route called by someone who is not staff of the board"
        }
        "banned" => {
            "(v3) the member, or the client address, is banned from this board; the message says until when (or that it is permanent) and why"
        }
        "not_found" => "unknown board, post or comment (or one of another board or post)",
        "method_not_allowed" => "this path with another method; the `Allow` header lists those it serves",
        "username_taken" => "a member already has this username",
        "request_in_progress" => "this `Idempotency-Key`'s first request is still being processed; see `Retry-After`",
        "precondition_failed" => "`If-Match` names another version of the post; nothing changed",
        "payload_too_large" => "the body (by its `Content-Length` or as read) is over 64 KiB; the connection is closed",
        "unsupported_media_type" => {
            "a body without `Content-Type: application/json`, decided before the body is read; the connection is closed"
        }
        "idempotency_key_reused" => "this `Idempotency-Key` was used for a different request",
        "too_many_attempts" => "too many failed passwords; see `Retry-After` (seconds)",
        "rate_limited" => "over a write quota; see `Retry-After` (seconds)",
        "unavailable" => {
            "store or hashing capacity unavailable, or the request took too long; see `Retry-After`. It may or may not have been applied: a create retried with its `Idempotency-Key` applies once"
        }
        "internal" => "a bug or a broken configuration, logged with the request id; no details",
        other => panic!("error code {other} has no meaning in openapi.rs"),
    }
}

/// Codes that come with `Retry-After`.
const RETRY_AFTER: &[&str] = &[
    "request_in_progress",
    "too_many_attempts",
    "rate_limited",
    "unavailable",
];

/// Members' and staff routes: a bearer token.
fn takes_bearer(route: &super::Route) -> bool {
    matches!(
        route.function,
        Function::MemberWrite | Function::Like | Function::Moderation | Function::Account
    ) && !bearer_optional(route)
}

/// (v3) Reports: anyone, with a bearer token or without.
fn bearer_optional(route: &super::Route) -> bool {
    route.function == Function::Moderation && route.path.ends_with("/reports") && route.method == http::Method::POST
}

/// (v3) Every write on a board is checked for bans.
fn checks_bans(route: &super::Route) -> bool {
    matches!(
        route.function,
        Function::MemberWrite | Function::Like | Function::GuestPost | Function::GuestComment
    )
}

/// Every code `route` can answer: those of every route (the body limit
/// stands before every handler, and reads only the declared length), of a
/// route with a body, with an `Idempotency-Key`, with a bearer token, and its own.
fn codes(route: &super::Route) -> Vec<&'static str> {
    let mut codes = vec!["method_not_allowed", "payload_too_large", "unavailable", "internal"];
    if route.doc.request.is_some() {
        codes.extend(["malformed_json", "validation_failed", "unsupported_media_type"]);
    }
    if route.takes_idempotency_key() {
        codes.extend(["validation_failed", "request_in_progress", "idempotency_key_reused"]);
    }
    if takes_bearer(route) {
        codes.push("unauthorized");
    }
    if checks_bans(route) {
        codes.push("banned");
    }
    codes.extend(route.doc.errors);
    in_table_order(codes)
}

fn in_table_order(mut codes: Vec<&'static str>) -> Vec<&'static str> {
    let known = known_codes();
    let rank = |code: &str| {
        known
            .iter()
            .position(|(known, _)| *known == code)
            .unwrap_or_else(|| panic!("the route table names an unknown error code {code}"))
    };
    codes.sort_by_key(|code| rank(code));
    codes.dedup();
    codes
}

fn status_of(code: &str) -> u16 {
    known_codes()
        .into_iter()
        .find(|(known, _)| *known == code)
        .map(|(_, status)| status)
        .expect("a known code")
}

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

/// The response of one status, for these codes of it: its component name
/// (from the codes) and the response itself.
fn error_response(status: u16, codes: &[&'static str]) -> (String, Value) {
    let name = codes.iter().map(|code| pascal(code)).collect::<Vec<_>>().join("Or");
    let description = codes
        .iter()
        .map(|code| format!("`{code}`: {}", meaning(code)))
        .collect::<Vec<_>>()
        .join("; ");
    let mut headers = Map::new();
    headers.insert("X-Request-Id".into(), header_ref("RequestId"));
    if codes.iter().any(|code| RETRY_AFTER.contains(code)) {
        headers.insert("Retry-After".into(), header_ref("RetryAfter"));
    }
    if status == 401 {
        headers.insert("WWW-Authenticate".into(), header_ref("WwwAuthenticate"));
    }
    let response = json!({
        "description": description,
        "headers": headers,
        "content": json_body("Error"),
    });
    (name, response)
}

/// What hyper answers for a request head over the server's cap, before any
/// of the service runs: no body, no request id.
const HEADER_CAP: (&str, &str) = (
    "HeaderFieldsTooLarge",
    "The request head (request line and headers) is over the single-process server's cap (`SERVER_MAX_HEADER_BYTES`, 64 KiB by default): answered by the HTTP layer before the service, with no body and no `X-Request-Id`, and the connection closed",
);

fn header_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/headers/{name}")})
}

fn parameter_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/parameters/{name}")})
}

/// The tag of an operation: the resource its path names last.
fn tag(path: &str) -> &'static str {
    if path.starts_with("/members/me") {
        return "account";
    }
    let resource = path
        .split('/')
        .rfind(|segment| !segment.is_empty() && !segment.starts_with('{') && *segment != "guest");
    match resource {
        Some("members") => "members",
        Some("sessions") => "sessions",
        Some("posts") => "posts",
        Some("comments") => "comments",
        Some("like") => "likes",
        Some("moderators" | "modlog" | "remove" | "bans" | "reports" | "resolve") => "moderation",
        Some("health") => "health",
        _ => panic!("{path} has no tag in openapi.rs"),
    }
}

const TAGS: &[(&str, &str)] = &[
    ("members", "Member accounts"),
    ("sessions", "Logging in: the bearer token of the member routes"),
    ("posts", "A board's posts, by members and by guests"),
    ("comments", "A post's comments, by members and by guests"),
    ("likes", "Members' likes of posts"),
    (
        "moderation",
        "(v3) Moderators, removals, bans, reports and the public moderation log",
    ),
    (
        "account",
        "(v3) A member's own account: password, sessions, their posts and comments, deletion",
    ),
    ("health", "Liveness of a deployment"),
];

fn components(responses: Map<String, Value>) -> Value {
    let generated = serde_json::to_value(Schemas::openapi()).expect("schemas serialize");
    let mut schemas: Map<String, Value> = generated["components"]["schemas"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    // Each kind of author (and, v3, of ban, report and log target) gets a
    // name: generated clients name its type from it (`GuestAuthor`, not
    // `AuthorType1`).
    for union in ["Author", "BanTarget", "ReportTarget", "LogTarget"] {
        if let Some(variants) = schemas
            .get_mut(union)
            .and_then(|schema| schema.get_mut("oneOf"))
            .and_then(Value::as_array_mut)
        {
            for variant in variants {
                if let Some(kind) = variant["properties"]["kind"]["enum"][0].as_str() {
                    variant["title"] = format!("{}{union}", pascal(kind)).into();
                }
            }
        }
    }
    let known: Vec<&str> = known_codes().into_iter().map(|(code, _)| code).collect();
    schemas.insert(
        "Error".into(),
        json!({
            "type": "object",
            "required": ["error"],
            "properties": {"error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": {
                        "type": "string",
                        "description": format!(
                            "A stable machine code. An open set: new versions may add codes, so treat an unknown one by the response's status. Known codes: {}",
                            known.join(", ")
                        ),
                        "x-extensible-enum": known,
                        "examples": ["validation_failed"]
                    },
                    "message": {"type": "string", "description": "Names the field and the rule"}
                }
            }}
        }),
    );
    schemas.insert(
        "Health".into(),
        json!({"type": "object", "required": ["status"], "properties": {"status": {"type": "string", "const": "ok"}}}),
    );
    json!({
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                                       "description": "The token of `createSession` (POST /sessions)"}},
        "headers": {
            "RetryAfter": {"description": "Seconds to wait before retrying", "schema": {"type": "integer", "minimum": 1}},
            "IdempotentReplayed": {"description": "true: this is the remembered answer to an earlier request with the same Idempotency-Key; nothing was written",
                                   "schema": {"type": "string", "const": "true"}},
            "RequestId": {"description": "This request's id, as logged: the client's `X-Request-Id` when it is 1-64 characters of `[A-Za-z0-9._-]`, else a fresh one",
                          "schema": {"type": "string"}},
            "ETag": {"description": "This version of the post's title and body (a quoted opaque string; view, like and comment counts do not change it): send it as `If-Match` on an edit",
                     "schema": {"type": "string"}},
            "Location": {"description": "The new post: `/boards/{slug}/posts/{post_id}`",
                         "schema": {"type": "string", "format": "uri-reference"}},
            "WwwAuthenticate": {"description": "`Bearer` (RFC 6750), with `error=\"invalid_token\"` when a token was sent and refused",
                                "schema": {"type": "string"}}
        },
        "parameters": {
            "Slug": {"name": "slug", "in": "path", "required": true,
                     "schema": {"type": "string", "pattern": "^[a-z0-9-]{1,40}$"},
                     "description": "A configured board (default free, qna, notice)", "example": "free"},
            "PostId": {"name": "post_id", "in": "path", "required": true, "schema": {"type": "string"},
                       "description": "A post's id (a ULID); anything else names no post (404)"},
            "CommentId": {"name": "comment_id", "in": "path", "required": true, "schema": {"type": "string"},
                          "description": "A comment's id (a ULID); anything else names no comment (404)"},
            "MemberId": {"name": "member_id", "in": "path", "required": true, "schema": {"type": "string"},
                          "description": "A member's id (a ULID); anything else names no member (404)"},
            "BanId": {"name": "ban_id", "in": "path", "required": true, "schema": {"type": "string"},
                          "description": "A ban's id (a ULID); anything else names no ban (404)"},
            "ReportId": {"name": "report_id", "in": "path", "required": true, "schema": {"type": "string"},
                          "description": "A report's id (a ULID); anything else names no report (404)"},
            "ListLimit": {"name": "limit", "in": "query", "required": false,
                      "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": super::paths::DEFAULT_V3_PAGE},
                      "description": "Items per page"},
            "Limit": {"name": "limit", "in": "query", "required": false,
                      "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": super::paths::DEFAULT_POSTS_PAGE},
                      "description": "Posts per page"},
            "CommentLimit": {"name": "limit", "in": "query", "required": false,
                      "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": crate::domain::COMMENTS_PAGE},
                      "description": "Comments per page"},
            "Cursor": {"name": "cursor", "in": "query", "required": false, "schema": {"type": "string"},
                       "description": "A page's next_cursor (or a post's comments_next_cursor)"},
            "IdempotencyKey": {"name": "Idempotency-Key", "in": "header", "required": false,
                       "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\u0020-\\u007e]+$"},
                       "description": "Makes the create safe to retry: the same key with the same request answers the first answer again for 24 hours"},
            "IfMatch": {"name": "If-Match", "in": "header", "required": false, "schema": {"type": "string"},
                        "description": "The post's `ETag` this edit was made from: when the post is now at another version, `412 precondition_failed` and nothing changes. Without it the last edit wins"},
            "AdminEnrollToken": {"name": "Admin-Enroll-Token", "in": "header", "required": false, "schema": {"type": "string"},
                        "description": "(v4) Only to sign up a name `ADMIN_USERNAMES` lists that no account holds yet: equal to the deployment's `ADMIN_ENROLL_TOKEN`, else such a name answers `409 username_taken`"},
            "RequestId": {"name": "X-Request-Id", "in": "header", "required": false, "schema": {"type": "string"},
                          "description": "Kept, logged and echoed when it is 1-64 characters of `[A-Za-z0-9._-]`; any other value is replaced by a fresh id"}
        },
        "responses": responses,
        "schemas": schemas,
    })
}

fn json_body(schema: &str) -> Value {
    json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}})
}

/// The error responses of an operation answering `codes`, by status, as
/// references to `components` (where each is added), and the header cap's.
fn error_responses(codes: &[&'static str], components: &mut Map<String, Value>) -> Map<String, Value> {
    let mut by_status: std::collections::BTreeMap<u16, Vec<&'static str>> = std::collections::BTreeMap::new();
    for code in codes {
        by_status.entry(status_of(code)).or_default().push(*code);
    }
    let mut responses = Map::new();
    for (status, codes) in by_status {
        let (name, response) = error_response(status, &codes);
        components.insert(name.clone(), response);
        responses.insert(
            status.to_string(),
            json!({"$ref": format!("#/components/responses/{name}")}),
        );
    }
    components.insert(HEADER_CAP.0.into(), json!({"description": HEADER_CAP.1}));
    responses.insert(
        "431".into(),
        json!({"$ref": format!("#/components/responses/{}", HEADER_CAP.0)}),
    );
    responses
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
    let mut parameters: Vec<Value> = [
        ("{slug}", "Slug"),
        ("{post_id}", "PostId"),
        ("{comment_id}", "CommentId"),
        ("{member_id}", "MemberId"),
        ("{ban_id}", "BanId"),
        ("{report_id}", "ReportId"),
    ]
    .iter()
    .filter(|(segment, _)| route.path.contains(segment))
    .map(|(_, name)| parameter_ref(name))
    .collect();
    if route.method == http::Method::GET && route.path.ends_with("/posts") {
        parameters.push(parameter_ref("Limit"));
        parameters.push(parameter_ref("Cursor"));
    }
    if route.method == http::Method::GET && route.path.ends_with("/comments") {
        parameters.push(parameter_ref("CommentLimit"));
        parameters.push(parameter_ref("Cursor"));
    }
    if route.method == http::Method::GET
        && ["/bans", "/reports", "/modlog"]
            .iter()
            .any(|end| route.path.ends_with(end))
    {
        parameters.push(parameter_ref("ListLimit"));
        parameters.push(parameter_ref("Cursor"));
    }
    if route.takes_idempotency_key() {
        parameters.push(parameter_ref("IdempotencyKey"));
    }
    let codes = codes(route);
    if codes.contains(&"precondition_failed") {
        parameters.push(parameter_ref("IfMatch"));
    }
    if doc.operation_id == "createMember" {
        parameters.push(parameter_ref("AdminEnrollToken"));
    }
    parameters.push(parameter_ref("RequestId"));
    op["parameters"] = parameters.into();
    if let Some(request) = doc.request {
        op["requestBody"] = json!({"required": true, "content": json_body(request)});
    }
    let mut success = json!({"description": doc.description});
    if let Some(response) = doc.response {
        success["content"] = json_body(response);
    }
    let mut headers = Map::new();
    headers.insert("X-Request-Id".into(), header_ref("RequestId"));
    if route.takes_idempotency_key() {
        headers.insert("Idempotent-Replayed".into(), header_ref("IdempotentReplayed"));
    }
    if doc.response == Some("PostDetail") {
        headers.insert("ETag".into(), header_ref("ETag"));
        if doc.status == 201 {
            headers.insert("Location".into(), header_ref("Location"));
        }
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
            "description": "The HTTP contract of every deployment (Lambda functions behind API Gateway, cargo lambda watch, the single-process server), generated from the code (`cargo run -p shared --bin openapi`); docs/API.md states it in words. `x-lambda-function` names the function that serves each operation.",
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
