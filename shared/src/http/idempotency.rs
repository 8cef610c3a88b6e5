//! `Idempotency-Key` on the create routes (docs/API.md, "Idempotent
//! creates"): before the handler runs, the key of this request's owner (its
//! member, else its client address) is claimed for the request's
//! fingerprint (method, path, identity, body); a key already answered for the
//! same request replays that answer without running the handler (no write,
//! no hash), a key answered for another request is `422`, a key held by a
//! request still running `409`. The handler's use case writes the answer
//! into the record in its create's own transaction; an answer that is not a
//! success releases the key, so a retry is processed afresh. A create that
//! timed out and applies late cannot apply after that: its transaction
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
use crate::app::{ClaimOutcome, IdempotencyClaim, KeyOwner, RememberedAnswer};
use crate::domain::MemberId;
use crate::error::ApiError;

pub const KEY_HEADER: &str = "idempotency-key";
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// The claim the request holds, for its handler to pass to the use case.
#[derive(Debug, Clone, Default)]
pub struct Idempotent(pub Option<IdempotencyClaim>);

impl<S: Send + Sync> FromRequestParts<S> for Idempotent {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Idempotent(parts.extensions.get::<IdempotencyClaim>().cloned()))
    }
}

/// 1-255 printable ASCII characters (docs/API.md, Fields).
fn parse_key(value: &HeaderValue) -> Result<String, ApiError> {
    let bytes = value.as_bytes();
    if (1..=255).contains(&bytes.len()) && bytes.iter().all(|b| (0x20..=0x7e).contains(b)) {
        Ok(String::from_utf8_lossy(bytes).into_owned())
    } else {
        Err(ApiError::validation(
            "Idempotency-Key must be 1-255 printable ASCII characters",
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

fn replay(stored: RememberedAnswer) -> Response {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::CREATED);
    let mut response = (status, stored.body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    response
}

/// What [`claim_key`] works with on one route.
#[derive(Debug, Clone)]
pub struct Claiming {
    pub state: AppState,
    /// A member route: the bearer token is checked first, so a request
    /// without a valid one gets its 401 and claims no key.
    pub members_only: bool,
    /// What the route's success answers, remembered for replays.
    pub success_status: u16,
}

/// The middleware on every create route (`crate::http::routes`).
pub async fn claim_key(
    State(Claiming {
        state,
        members_only,
        success_status,
    }): State<Claiming>,
    request: Request,
    next: Next,
) -> Response {
    if !request.headers().contains_key(KEY_HEADER) {
        return next.run(request).await;
    }
    #[cfg(feature = "tokens")]
    if members_only {
        let (mut parts, body) = request.into_parts();
        if let Err(e) = super::auth::AuthMember::from_request_parts(&mut parts, &state).await {
            return e.into_response();
        }
        let request = Request::from_parts(parts, body);
        return claimed(state, success_status, request, next).await;
    }
    #[cfg(not(feature = "tokens"))]
    let _ = members_only;
    claimed(state, success_status, request, next).await
}

async fn claimed(state: AppState, success_status: u16, request: Request, next: Next) -> Response {
    let Some(value) = request.headers().get(KEY_HEADER) else {
        return next.run(request).await;
    };
    let key = match parse_key(value) {
        Ok(key) => key,
        Err(e) => return e.into_response(),
    };
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return ApiError::PayloadTooLarge.into_response();
    };
    let (identity, member) = identity(&state, &parts.headers);
    let fingerprint = fingerprint(&parts.method, parts.uri.path(), &identity, &bytes);
    let address = super::client_ip::client_address(&parts, &state.trusted_proxies);
    let owner = match &member {
        Some(member) => KeyOwner::Member(member),
        None => KeyOwner::Address(&address),
    };
    let held = match state
        .app
        .claim_idempotency_key(owner, &key, fingerprint, success_status)
        .await
    {
        Ok(ClaimOutcome::Fresh(held)) => held,
        Ok(ClaimOutcome::Replay(answer)) => return replay(answer),
        Err(e) => return e.into_response(),
    };
    let mut request = Request::from_parts(parts, Body::from(bytes));
    request.extensions_mut().insert(held.clone());
    let response = next.run(request).await;
    if !response.status().is_success() {
        state.app.release_idempotency_key(held).await;
    }
    response
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
