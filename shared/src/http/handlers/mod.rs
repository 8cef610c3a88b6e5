//! One handler per route of docs/API.md (Routes): the request's typed parts
//! become a command, the use case runs, its result becomes the response.
//! Request bodies (docs/API.md, Bodies) have every field optional to serde,
//! so that a missing one is `validation_failed` naming it. Each group is
//! compiled only where its function's features are (docs/DESIGN.md, Layout).

#[cfg(feature = "hashing")]
pub(super) mod accounts;
#[cfg(feature = "hashing")]
pub(super) mod guest;
#[cfg(feature = "tokens")]
pub(super) mod member;
pub(super) mod read;
#[cfg(all(feature = "hashing", feature = "tokens"))]
pub(super) mod sessions;

use axum::Json;
use serde_json::{Value, json};

/// A create's answer: `201` with what it created, or the answer remembered
/// for its `Idempotency-Key`, replayed.
#[cfg(any(feature = "hashing", feature = "tokens"))]
pub(crate) struct Created<T>(crate::app::Answer<T>);

#[cfg(any(feature = "hashing", feature = "tokens"))]
impl<T: serde::Serialize> axum::response::IntoResponse for Created<T> {
    fn into_response(self) -> axum::response::Response {
        match self.0 {
            crate::app::Answer::Created(value) => (http::StatusCode::CREATED, Json(value)).into_response(),
            crate::app::Answer::Replayed(answer) => super::idempotency::replay(answer),
        }
    }
}

#[cfg(any(feature = "hashing", feature = "tokens"))]
fn created<T>(answer: crate::app::Answer<T>) -> Created<T> {
    Created(answer)
}

#[cfg(any(feature = "hashing", feature = "tokens"))]
fn parent(parent_id: Option<String>) -> Result<Option<crate::domain::CommentId>, crate::error::ApiError> {
    parent_id
        .as_deref()
        .map(crate::domain::CommentId::parse_parent)
        .transpose()
}

pub(super) async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}
