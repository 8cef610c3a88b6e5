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
use http::StatusCode;
use serde_json::{Value, json};

type Created<T> = (StatusCode, Json<T>);

#[cfg_attr(not(any(feature = "hashing", feature = "tokens")), expect(dead_code))]
fn created<T>(value: T) -> Created<T> {
    (StatusCode::CREATED, Json(value))
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
