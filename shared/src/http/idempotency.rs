//! `Idempotency-Key` on the create routes (docs/API.md, "Idempotent
//! creates"): before the handler runs, the key is checked and the request's
//! fingerprint (method, path, identity, body) computed, and both are given
//! to the handler as an [`IdempotencyKey`] of this request's owner (its
//! member, else its client address). The create use case claims it after
//! the request passed validation and its limits: a key already answered
//! for the same request replays that answer without a hash or a write, a
//! key answered for another request is `422`, a key held by a request still
//! running `409`. The use case writes the answer into the record in its
//! create's own transaction, and releases the key when it fails. A create
//! that timed out and applies late cannot apply after that: its transaction
//! requires the claim.

use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use sha2::{Digest, Sha256};

use super::AppState;
use super::input::MAX_BODY_BYTES;
use crate::app::{IdempotencyKey, KeyOwner, RememberedAnswer};
use crate::domain::MemberId;
use crate::error::ApiError;

pub const KEY_HEADER: &str = "idempotency-key";
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// The request's key, for its handler to pass to the use case.
#[derive(Debug, Clone, Default)]
pub struct Idempotent(pub Option<IdempotencyKey>);

impl<S: Send + Sync> FromRequestParts<S> for Idempotent {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Idempotent(parts.extensions.get::<IdempotencyKey>().cloned()))
    }
}

/// 1-255 printable ASCII characters (docs/API.md, Fields).
fn parse_key(value: &HeaderValue) -> Result<String, ApiError> {
    let bytes = value.as_bytes();
    if (1..=255).contains(&bytes.len()) && bytes.iter().all(|b| (0x20..=0x7e).contains(b)) {
        Ok(String::from_utf8_lossy(bytes).into_owned())
    } else {
        Err(ApiError::invalid(
            "Idempotency-Key",
            "must be 1-255 printable ASCII characters",
        ))
    }
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Who sends the request: the member a valid bearer token names, else the
/// header itself (hashed), else nobody; and the member, if any, whose keys
/// these are.
fn identity(state: &AppState, headers: &HeaderMap) -> (String, Option<MemberId>) {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return ("anonymous".into(), None);
    };
    #[cfg(feature = "tokens")]
    if let Some(member) = super::auth::bearer_token(value).and_then(|token| state.app.verify_token(token).ok()) {
        return (format!("member:{}", member.id.as_str()), Some(member.id));
    }
    #[cfg(not(feature = "tokens"))]
    let _ = state;
    (format!("bearer:{}", hex(&Sha256::digest(value.as_bytes()))), None)
}

fn fingerprint(method: &http::Method, path: &str, identity: &str, body: &[u8]) -> String {
    let mut digest = Sha256::new();
    for part in [method.as_str().as_bytes(), path.as_bytes(), identity.as_bytes()] {
        digest.update(part);
        digest.update(b"\n");
    }
    digest.update(body);
    hex(&digest.finalize())
}

/// A remembered answer, sent again.
pub(crate) fn replay(stored: RememberedAnswer) -> Response {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::CREATED);
    let mut response = (status, stored.body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    response
}

/// What [`read_key`] works with on one route.
#[derive(Debug, Clone)]
pub struct KeyReading {
    pub state: AppState,
    /// What the route's success answers, remembered for replays.
    pub success_status: u16,
}

/// The middleware on every create route (`crate::http::routes`).
pub async fn read_key(
    State(KeyReading { state, success_status }): State<KeyReading>,
    request: Request,
    next: Next,
) -> Response {
    let Some(value) = request.headers().get(KEY_HEADER) else {
        return next.run(request).await;
    };
    let key = match parse_key(value) {
        Ok(key) => key,
        Err(e) => return e.into_response(),
    };
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return ApiError::body_too_large().into_response();
    };
    let (identity, member) = identity(&state, &parts.headers);
    let fingerprint = fingerprint(&parts.method, parts.uri.path(), &identity, &bytes);
    let address = super::client_ip::client_address(&parts, &state.trusted_proxies);
    let owner = match &member {
        Some(member) => KeyOwner::Member(member),
        None => KeyOwner::Address(&address),
    };
    let key = IdempotencyKey::new(owner, &key, fingerprint, success_status);
    let mut request = Request::from_parts(parts, Body::from(bytes));
    request.extensions_mut().insert(key);
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_1_to_255_printable_ascii_characters() {
        assert!(parse_key(&HeaderValue::from_static("a")).is_ok());
        assert!(parse_key(&HeaderValue::from_str(&"k".repeat(255)).unwrap()).is_ok());
        assert!(parse_key(&HeaderValue::from_str(&"k".repeat(256)).unwrap()).is_err());
        assert!(parse_key(&HeaderValue::from_static("")).is_err());
        assert!(parse_key(&HeaderValue::from_bytes(b"tab\there").unwrap()).is_err());
        assert!(parse_key(&HeaderValue::from_bytes(&[0xe2, 0x82, 0xac]).unwrap()).is_err());
    }

    #[test]
    fn the_fingerprint_changes_with_every_part_of_the_request() {
        let base = fingerprint(&http::Method::POST, "/members", "anonymous", b"{}");
        assert_eq!(base, fingerprint(&http::Method::POST, "/members", "anonymous", b"{}"));
        assert_ne!(base, fingerprint(&http::Method::PUT, "/members", "anonymous", b"{}"));
        assert_ne!(base, fingerprint(&http::Method::POST, "/member", "anonymous", b"{}"));
        assert_ne!(base, fingerprint(&http::Method::POST, "/members", "member:x", b"{}"));
        assert_ne!(base, fingerprint(&http::Method::POST, "/members", "anonymous", b"{ }"));
    }
}
