//! The bearer token extractor (docs/API.md, Conventions): member routes get
//! the [`AuthMember`] their token names while its session lasts (the
//! session epoch, docs/API.md, Accounts), or `401 unauthorized`.

use axum::extract::FromRequestParts;
use http::request::Parts;

use super::AppState;
use crate::app::SignedIn;
use crate::error::ApiError;

/// The member a request's bearer token names.
#[derive(Debug, Clone)]
pub struct AuthMember(pub SignedIn);

impl FromRequestParts<AppState> for AuthMember {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(http::header::AUTHORIZATION)
            .ok_or_else(|| ApiError::Unauthorized("Authorization: Bearer <token> is required".into()))?;
        let token = bearer_token(header)
            .ok_or_else(|| ApiError::Unauthorized("Authorization header must be `Bearer <token>`".into()))?;
        state.app.authenticate(token).await.map(AuthMember)
    }
}

/// The member a bearer token names, where a route takes one but does
/// not need it (reports): no `Authorization` header is anonymous; a header
/// that is sent must hold a valid token (`401` otherwise).
#[derive(Debug, Clone)]
pub struct MaybeMember(pub Option<SignedIn>);

impl FromRequestParts<AppState> for MaybeMember {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        if !parts.headers.contains_key(http::header::AUTHORIZATION) {
            return Ok(MaybeMember(None));
        }
        AuthMember::from_request_parts(parts, state)
            .await
            .map(|AuthMember(member)| MaybeMember(Some(member)))
    }
}

/// The token of an `Authorization: Bearer <token>` header value.
pub fn bearer_token(header: &http::HeaderValue) -> Option<&str> {
    header
        .to_str()
        .ok()
        .and_then(|h| h.strip_prefix("Bearer ").or_else(|| h.strip_prefix("bearer ")))
        .map(str::trim)
        .filter(|t| !t.is_empty())
}
