//! `components`: the schemas of the bodies the route table names (and
//! those they refer to), the error and health bodies, and the headers and
//! parameters the operations refer to.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::codes::{known_codes, wire_code};
use super::pascal;
use crate::http::routes;

/// The schemas of every body a row of the route table names, with the
/// schemas they refer to (utoipa's `ToSchema::schemas`, recursively): a new
/// route's types are listed by naming them in its row.
fn body_schemas() -> Map<String, Value> {
    let mut collected = Vec::new();
    for route in routes() {
        for body in [route.doc.request, route.doc.response].into_iter().flatten() {
            body.collect_schemas(&mut collected);
        }
    }
    let by_name: BTreeMap<String, _> = collected.into_iter().collect();
    match serde_json::to_value(by_name).expect("schemas serialize") {
        Value::Object(schemas) => schemas,
        _ => unreachable!("a map serializes to an object"),
    }
}

pub(super) fn components(responses: Map<String, Value>) -> Value {
    let mut schemas = body_schemas();
    // Each kind of author (and of ban, report and log target) gets a name:
    // generated clients name its type from it (`GuestAuthor`, not
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
    let mut known: Vec<&str> = known_codes().into_iter().map(|(code, _)| wire_code(code)).collect();
    let mut seen = std::collections::HashSet::new();
    known.retain(|code| seen.insert(*code));
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
                    "field": {
                        "type": "string",
                        "description": "The one input the error is about, when it is about one: a body field (`title`, `current_password`), a query parameter (`limit`, `cursor`) or a header (`If-Match`, `Idempotency-Key`). Place the error beside that input by this name; never parse `message` for it",
                        "examples": ["title"]
                    },
                    "message": {"type": "string", "description": "English for people and logs: names the field and the rule. Not for parsing"}
                }
            }}
        }),
    );
    schemas.insert(
        "PowRequired".into(),
        json!({
            "description": "`428 pow_required`: the error, and beside it a fresh challenge to solve",
            "allOf": [
                {"$ref": "#/components/schemas/Error"},
                {"type": "object", "required": ["challenge"],
                 "properties": {"challenge": {"$ref": "#/components/schemas/Challenge"}}}
            ]
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
            "IdempotentReplayed": {"description": "true: this is the remembered answer to an earlier request with the same Idempotency-Key; nothing was written. Only on such a replay",
                                   "required": false, "schema": {"type": "string", "const": "true"}},
            "RequestId": {"description": "This request's id, as logged: the client's `X-Request-Id` when it is 1-64 characters of `[A-Za-z0-9._-]`, else a fresh one",
                          "schema": {"type": "string"}},
            "ETag": {"description": "This version of the post's title and body (a quoted opaque string; view, like and comment counts do not change it): send it as `If-Match` on an edit",
                     "schema": {"type": "string"}},
            "Location": {"description": "The new item's own GET route: a post `/boards/{slug}/posts/{post_id}`, a comment `/boards/{slug}/posts/{post_id}/comments/{comment_id}`, a board `/boards/{slug}`, an upload `/media/{media_id}`",
                         "schema": {"type": "string", "format": "uri-reference"}},
            "RateLimitPolicy": {"description": "Every limit this request counted against, as IETF httpapi ratelimit-headers structured fields: `\"creates\";q=30;w=600` is at most q requests per w seconds. The names: `creates`, `signups`, `reports`, `password-checks`, `login-failures`, `login-failures-address`, `login-failures-user`, `logins-user`, `guest-password-failures`, `guest-password-failures-target`, `creates-member`, `guest-votes`, `uploads`, `uploads-member`, and each per-address one again with `-48` for an IPv6 client's /48",
                                "schema": {"type": "string"}},
            "RateLimit": {"description": "The limit that will refuse first (the least left, then the longest wait; on a 429 the one that refused): `\"creates\";r=12;t=300` is r requests left and t seconds until its window ends. On a 429, r is 0 and t is `Retry-After`",
                          "schema": {"type": "string"}},
            "WwwAuthenticate": {"description": "`Bearer` (RFC 6750), with `error=\"invalid_token\"` when a token was sent and refused",
                                "schema": {"type": "string"}}
        },
        "parameters": {
            "Slug": {"name": "slug", "in": "path", "required": true,
                     "schema": {"type": "string", "pattern": "^[a-z0-9-]{1,40}$"},
                     "description": "A board's slug (`GET /boards` lists them; `BOARDS` seeds free, qna, notice)", "example": "free"},
            "PostId": {"name": "post_id", "in": "path", "required": true, "schema": {"type": "string"},
                       "description": "A post's id (a ULID); anything else names no post (404)"},
            "CommentId": {"name": "comment_id", "in": "path", "required": true, "schema": {"type": "string"},
                          "description": "A comment's id (a ULID); anything else names no comment (404)"},
            "MemberId": {"name": "member_id", "in": "path", "required": true, "schema": {"type": "string"},
                          "description": "A member's id (a ULID); anything else names no member (404)"},
            "GuestTag": {"name": "tag", "in": "path", "required": true,
                         "schema": {"type": "string", "pattern": "^[a-z2-7]{8}$"},
                         "description": "A guest's tag, as a guest author shows it (8 characters of a-z and 2-7)", "example": "abcdefgh"},
            "BanId": {"name": "ban_id", "in": "path", "required": true, "schema": {"type": "string"},
                          "description": "A ban's id (a ULID); anything else names no ban (404)"},
            "MediaId": {"name": "media_id", "in": "path", "required": true, "schema": {"type": "string"},
                        "description": "An upload's id (a ULID, from `createUpload`); anything else names no upload (404)"},
            "RevisionNumber": {"name": "revision", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1},
                        "description": "A revision's `number` (which edit replaced it; 1 is the original)"},
            "ReportId": {"name": "report_id", "in": "path", "required": true, "schema": {"type": "string"},
                          "description": "A report's id (a ULID); anything else names no report (404)"},
            "PostNumber": {"name": "number", "in": "path", "required": true,
                           "schema": {"type": "string", "pattern": "^[0-9]{1,19}$"},
                           "description": "A post's number on its board (1, 2, 3...); a number no post has is 404", "example": "123"},
            "Category": {"name": "category", "in": "query", "required": false,
                         "schema": {"type": "string", "minLength": 1, "maxLength": 12},
                         "description": "Only the posts of this category (malmeori); one the board dropped since still lists its posts"},
            "Best": {"name": "best", "in": "query", "required": false,
                     "schema": {"type": "boolean", "default": false},
                     "description": "true: only the board's best posts (gaenyeomgeul), newest first; combines with `category`"},
            "ListLimit": {"name": "limit", "in": "query", "required": false,
                      "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": crate::http::paths::DEFAULT_V3_PAGE},
                      "description": "Items per page"},
            "Limit": {"name": "limit", "in": "query", "required": false,
                      "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": crate::http::paths::DEFAULT_POSTS_PAGE},
                      "description": "Posts per page"},
            "CommentLimit": {"name": "limit", "in": "query", "required": false,
                      "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": crate::domain::COMMENTS_PAGE},
                      "description": "Comments per page"},
            "RevisionLimit": {"name": "limit", "in": "query", "required": false,
                      "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": crate::domain::MAX_REVISIONS},
                      "description": "Revisions per page"},
            "Cursor": {"name": "cursor", "in": "query", "required": false, "schema": {"type": "string"},
                       "description": "A page's next_cursor (or a post's comments_next_cursor)"},
            "IdempotencyKey": {"name": "Idempotency-Key", "in": "header", "required": false,
                       "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\u0020-\\u007e]+$"},
                       "description": "Makes the create safe to retry: the same key with the same request answers the first answer again for 24 hours"},
            "IfMatch": {"name": "If-Match", "in": "header", "required": false, "schema": {"type": "string"},
                        "description": "The post's `ETag` this edit was made from: when the post is now at another version, `412 precondition_failed` and nothing changes. Without it the last edit wins"},
            "XPow": {"name": "X-Pow", "in": "header", "required": false, "schema": {"type": "string"},
                     "description": "A solved proof-of-work challenge: the base64 of ALTCHA's payload JSON `{algorithm, challenge, number, salt, signature}`. Needed only when the write answers `428 pow_required` without it; each solution is accepted once"},
            "AdminEnrollToken": {"name": "Admin-Enroll-Token", "in": "header", "required": false, "schema": {"type": "string"},
                        "description": "Only for a name `ADMIN_USERNAMES` lists: to sign it up while no account holds it (else `409 username_taken`), and for its first TOTP enrollment (else `403 forbidden`); equal to the deployment's `ADMIN_ENROLL_TOKEN`"}
        },
        "responses": responses,
        "schemas": schemas,
    })
}
