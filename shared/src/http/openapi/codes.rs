//! The error codes of each operation: those every route of a kind answers
//! (a body, an `Idempotency-Key`, a bearer token, a ban check, any route)
//! and the route's own, each status one response naming its codes, with
//! the headers those codes come with.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::kinds::{anonymous_write, bearer_optional, checks_bans, guest_write, takes_bearer};
use super::{header_ref, json_body, pascal, response_header};
use crate::error::ApiError;
use crate::http::Route;

/// Every error code the server answers, in docs/API.md's table order, read
/// from [`ApiError`] itself, with its status.
pub(super) fn known_codes() -> Vec<(&'static str, u16)> {
    let unavailable = ApiError::Unavailable {
        message: String::new(),
        retry_after: 1,
    };
    let mut codes: Vec<(&'static str, u16)> = [
        ApiError::malformed(""),
        ApiError::invalid_request(""),
        ApiError::Unauthorized(String::new()),
        ApiError::InvalidCredentials { field: None },
        ApiError::TotpRequired,
        ApiError::WrongPassword,
        ApiError::Forbidden(String::new()),
        ApiError::Banned(String::new()),
        ApiError::NotFound(String::new()),
        ApiError::MethodNotAllowed(String::new()),
        ApiError::UsernameTaken,
        ApiError::AlreadyVoted,
        ApiError::Locked,
        ApiError::PowRequired {
            message: String::new(),
            challenge: Value::Null,
        },
        ApiError::RequestInProgress { retry_after: 1 },
        ApiError::body_too_large(),
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
    // The one code with two statuses: a route table names the staff
    // route's by this key, and the document shows its wire code.
    codes.push((STAFF_TOTP_REQUIRED, ApiError::StaffTotpRequired.status().as_u16()));
    codes.push((
        MODERATOR_TOTP_REQUIRED,
        ApiError::ModeratorTotpRequired.status().as_u16(),
    ));
    codes.sort_by_key(|(_, status)| *status);
    codes
}

/// The key of `403 totp_required` (staff without TOTP), apart from `401
/// totp_required` (a login without its code): same code, two statuses.
pub(super) const STAFF_TOTP_REQUIRED: &str = "staff_totp_required";
/// The key of `409 totp_required` (appointing a moderator without TOTP).
pub(super) const MODERATOR_TOTP_REQUIRED: &str = "moderator_totp_required";

/// The code a key stands for on the wire.
pub(super) fn wire_code(key: &str) -> &str {
    if key == STAFF_TOTP_REQUIRED || key == MODERATOR_TOTP_REQUIRED {
        ApiError::StaffTotpRequired.code()
    } else {
        key
    }
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
        "totp_required" => {
            "the member has TOTP on: send the app's code (or a recovery code) as `totp`; nothing was counted as a failure"
        }
        MODERATOR_TOTP_REQUIRED => {
            "the member to appoint has not turned on TOTP, while the deployment's `STAFF_REQUIRE_TOTP` is on (the default): the role would not take effect"
        }
        STAFF_TOTP_REQUIRED => {
            "staff must turn on TOTP (`startTotp`, `confirmTotp`) before using staff routes, while the deployment's `STAFF_REQUIRE_TOTP` is on (the default)"
        }
        "wrong_password" => "the guest password does not match",
        "forbidden" => {
            "what this changes was written by someone else (another member, or a member on a guest route), or a staff route called by someone who is not staff of the board"
        }
        "banned" => {
            "the member, or the client address, is banned from this board; the message says until when (or that it is permanent) and why"
        }
        "not_found" => "unknown board, post or comment (or one of another board or post)",
        "method_not_allowed" => "this path with another method; the `Allow` header lists those it serves",
        "username_taken" => "a member already has this username",
        "already_voted" => "a vote from this client address was already counted on this post",
        "locked" => {
            "the board locks answered posts, and someone other than the author has commented on this one: its author can no longer edit or delete it"
        }
        "pow_required" => {
            "this anonymous write needs a proof of work: solve the `challenge` beside the error (ALTCHA, SHA-256) and send the solution in `X-Pow`. Also when the one sent was malformed, expired, forged or used before"
        }
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

/// Every code `route` can answer: those of every route (the body limit
/// stands before every handler, and reads only the declared length), of a
/// route with a body, with an `Idempotency-Key`, with a bearer token, and its own.
pub(super) fn codes(route: &Route) -> Vec<&'static str> {
    let mut codes = vec!["method_not_allowed", "payload_too_large", "unavailable", "internal"];
    if route.doc.request.is_some() {
        codes.extend(["malformed_json", "validation_failed", "unsupported_media_type"]);
    }
    if route.takes_idempotency_key() {
        codes.extend(["validation_failed", "request_in_progress", "idempotency_key_reused"]);
    }
    if takes_bearer(route) || bearer_optional(route) {
        codes.push("unauthorized");
    }
    if checks_bans(route) {
        codes.push("banned");
    }
    if guest_write(route) {
        codes.push("forbidden");
    }
    if anonymous_write(route) {
        codes.push("pow_required");
    }
    // Every staff route, while STAFF_REQUIRE_TOTP is on.
    if route.doc.auth.contains("staff") || route.doc.auth.contains("admin") {
        codes.push(STAFF_TOTP_REQUIRED);
    }
    codes.extend(route.doc.errors);
    in_table_order(codes)
}

pub(super) fn in_table_order(mut codes: Vec<&'static str>) -> Vec<&'static str> {
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

/// The response of one status, for these codes of it: its component name
/// (from the codes) and the response itself.
fn error_response(status: u16, codes: &[&'static str]) -> (String, Value) {
    let name = codes.iter().map(|code| pascal(code)).collect::<Vec<_>>().join("Or");
    let description = codes
        .iter()
        .map(|code| format!("`{}`: {}", wire_code(code), meaning(code)))
        .collect::<Vec<_>>()
        .join("; ");
    let mut headers = Map::new();
    headers.insert(response_header::REQUEST_ID.into(), header_ref("RequestId"));
    if codes.iter().any(|code| RETRY_AFTER.contains(code)) {
        headers.insert(response_header::RETRY_AFTER.into(), header_ref("RetryAfter"));
    }
    if status == 401 {
        headers.insert(response_header::WWW_AUTHENTICATE.into(), header_ref("WwwAuthenticate"));
    }
    // Every 429 says which limit refused (docs/API.md, Conventions).
    if status == 429 {
        headers.insert(response_header::RATELIMIT_POLICY.into(), header_ref("RateLimitPolicy"));
        headers.insert(response_header::RATELIMIT.into(), header_ref("RateLimit"));
    }
    // A 428 carries the challenge to solve beside the error.
    let body = if codes.contains(&"pow_required") {
        "PowRequired"
    } else {
        "Error"
    };
    let response = json!({
        "description": description,
        "headers": headers,
        "content": json_body(body),
    });
    (name, response)
}

/// The write quotas a route counts under (docs/API.md, Throttling and
/// quotas), by the names its `RateLimit-Policy` gives them, with their
/// default numbers; `None` for a route under no quota.
pub(super) fn quota_policies(route: &Route) -> Option<String> {
    if !route.doc.errors.contains(&"rate_limited") {
        return None;
    }
    let limits = crate::app::throttle::Limits::default();
    let (name, per_address) = if route.path == "/members" {
        ("signups", limits.signups_address)
    } else if route.path.ends_with("/reports") {
        ("reports", limits.reports_address)
    } else if route.path.ends_with("/votes/guest") {
        ("guest-votes", limits.guest_votes_address)
    } else {
        ("creates", limits.creates_address)
    };
    let per_address = per_address.expect("every write quota is on by default");
    let factor = crate::app::throttle::PREFIX_48_FACTOR;
    let mut policies = vec![
        format!(
            "`{name}` ({} per {} s per client address)",
            per_address.max, per_address.window_secs
        ),
        format!(
            "`{name}-48` ({} per {} s per IPv6 /48, for IPv6 clients)",
            per_address.max * factor,
            per_address.window_secs
        ),
    ];
    if name == "creates" && takes_bearer(route) {
        let member = limits.creates_member.expect("on by default");
        policies.push(format!(
            "`creates-member` ({} per {} s per member)",
            member.max, member.window_secs
        ));
    }
    Some(policies.join(", "))
}

/// The error responses of an operation answering `codes`, by status, as
/// references to `components` (where each is added).
pub(super) fn error_responses(codes: &[&'static str], components: &mut Map<String, Value>) -> Map<String, Value> {
    let mut by_status: BTreeMap<u16, Vec<&'static str>> = BTreeMap::new();
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
    responses
}
