//! Who reads (docs/API.md, Votes and best posts): public reads take
//! an optional bearer token, which adds the member's `my_vote` and, on a
//! board that hides dislikes, shows its staff the counts.

use axum::extract::FromRequestParts;
use http::request::Parts;

use super::AppState;
use crate::app::SignedIn;
use crate::error::ApiError;

/// The member a public read's bearer token names, if one was sent: no
/// `Authorization` header reads anonymously; a header that is sent must
/// hold a valid token (`401` otherwise), as on every route.
#[derive(Debug, Clone)]
pub struct Viewer(pub Option<SignedIn>);

impl Viewer {
    pub fn member(&self) -> Option<&SignedIn> {
        self.0.as_ref()
    }
}

impl FromRequestParts<AppState> for Viewer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        if !parts.headers.contains_key(http::header::AUTHORIZATION) {
            return Ok(Viewer(None));
        }
        #[cfg(feature = "tokens")]
        {
            super::auth::MaybeMember::from_request_parts(parts, state)
                .await
                .map(|super::auth::MaybeMember(member)| Viewer(member))
        }
        #[cfg(not(feature = "tokens"))]
        {
            let _ = state;
            Err(ApiError::Internal(
                "this function was built without bearer tokens".into(),
            ))
        }
    }
}
