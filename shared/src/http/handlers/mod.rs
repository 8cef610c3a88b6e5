//! One handler per route of docs/API.md (Routes): the request's typed parts
//! become a command, the use case runs, its result becomes the response.
//! Request bodies (docs/API.md, Bodies) have every field optional to serde,
//! so that a missing one is `validation_failed` naming it. Each group is
//! compiled only where its function's features are (docs/DESIGN.md, Layout).

#[cfg(all(feature = "totp", feature = "tokens"))]
pub(super) mod account;
#[cfg(feature = "tokens")]
pub(super) mod blocks;
#[cfg(feature = "hashing")]
pub(super) mod guest;
#[cfg(feature = "tokens")]
pub(super) mod media;
#[cfg(feature = "tokens")]
pub(super) mod member;
#[cfg(feature = "tokens")]
pub(super) mod moderation;
#[cfg(feature = "tokens")]
pub(super) mod notifications;
pub(super) mod read;
#[cfg(all(feature = "totp", feature = "tokens"))]
pub(super) mod sessions;
#[cfg(feature = "passwords")]
pub(super) mod signup;
#[cfg(feature = "tokens")]
pub(super) mod votes;

use axum::Json;
use serde_json::{Value, json};

/// A create's answer: `201` with what it created, or the answer remembered
/// for its `Idempotency-Key`, replayed (with the same headers).
#[cfg(any(feature = "hashing", feature = "tokens"))]
pub(crate) struct Created<T>(crate::app::Answer<T>);

#[cfg(any(feature = "hashing", feature = "tokens"))]
impl<T: CreatedHeaders> axum::response::IntoResponse for Created<T> {
    fn into_response(self) -> axum::response::Response {
        match self.0 {
            crate::app::Answer::Created(value) => {
                let headers = value.headers();
                let mut response = (http::StatusCode::CREATED, Json(value)).into_response();
                for (name, value) in headers {
                    response.headers_mut().insert(name, value);
                }
                response
            }
            crate::app::Answer::Replayed(answer) => {
                let headers = serde_json::from_str::<T>(&answer.body).map(|v| v.headers());
                let mut response = super::idempotency::replay(answer);
                for (name, value) in headers.unwrap_or_default() {
                    response.headers_mut().insert(name, value);
                }
                response
            }
        }
    }
}

#[cfg(any(feature = "hashing", feature = "tokens"))]
fn created<T>(answer: crate::app::Answer<T>) -> Created<T> {
    Created(answer)
}

/// An action that answers `204`, or its remembered answer replayed.
#[cfg(feature = "tokens")]
pub(crate) struct DoneOnce(crate::app::Answer<()>);

#[cfg(feature = "tokens")]
impl axum::response::IntoResponse for DoneOnce {
    fn into_response(self) -> axum::response::Response {
        match self.0 {
            crate::app::Answer::Created(()) => http::StatusCode::NO_CONTENT.into_response(),
            crate::app::Answer::Replayed(answer) => {
                let mut response = super::idempotency::replay(answer);
                response.headers_mut().remove(http::header::CONTENT_TYPE);
                response
            }
        }
    }
}

#[cfg(feature = "tokens")]
impl CreatedHeaders for crate::domain::Ban {}

/// What a created item adds to its `201` (docs/API.md, Conventions).
#[cfg(any(feature = "hashing", feature = "tokens"))]
pub(crate) trait CreatedHeaders: serde::Serialize + serde::de::DeserializeOwned {
    fn headers(&self) -> Vec<(http::HeaderName, http::HeaderValue)> {
        Vec::new()
    }
}

#[cfg(any(feature = "hashing", feature = "tokens"))]
impl CreatedHeaders for crate::domain::Member {}

#[cfg(any(feature = "hashing", feature = "tokens"))]
impl CreatedHeaders for crate::domain::Comment {}

/// A comment's `201` with its `Location`, the comment's own `GET` route on
/// the board the request named (docs/API.md, Conventions); a replay the same.
#[cfg(any(feature = "hashing", feature = "tokens"))]
pub(crate) struct CommentCreated {
    board: crate::domain::BoardSlug,
    answer: crate::app::Answer<crate::domain::Comment>,
}

#[cfg(any(feature = "hashing", feature = "tokens"))]
fn comment_created(
    board: crate::domain::BoardSlug,
) -> impl FnOnce(crate::app::Answer<crate::domain::Comment>) -> CommentCreated {
    move |answer| CommentCreated { board, answer }
}

#[cfg(any(feature = "hashing", feature = "tokens"))]
impl axum::response::IntoResponse for CommentCreated {
    fn into_response(self) -> axum::response::Response {
        let comment = match &self.answer {
            crate::app::Answer::Created(comment) => Some(comment.clone()),
            crate::app::Answer::Replayed(answer) => serde_json::from_str::<crate::domain::Comment>(&answer.body).ok(),
        };
        let location =
            comment.map(|c| format!("/boards/{}/posts/{}/comments/{}", self.board.as_str(), c.post_id, c.id));
        let mut response = Created(self.answer).into_response();
        if let Some(location) = location.and_then(|l| http::HeaderValue::from_str(&l).ok()) {
            response.headers_mut().insert(http::header::LOCATION, location);
        }
        response
    }
}

/// A post's `Location` and `ETag`.
#[cfg(any(feature = "hashing", feature = "tokens"))]
impl CreatedHeaders for crate::domain::PostDetail {
    fn headers(&self) -> Vec<(http::HeaderName, http::HeaderValue)> {
        let summary = &self.post.summary;
        let location = format!("/boards/{}/posts/{}", summary.board, summary.id);
        let mut headers = vec![etag(self)];
        if let Ok(location) = http::HeaderValue::from_str(&location) {
            headers.push((http::header::LOCATION, location));
        }
        headers
    }
}

/// A post detail's `ETag`: its version (docs/API.md, Conventions).
// Only the writing routes (with `hashing` or `tokens`) answer a post.
#[cfg_attr(not(any(feature = "hashing", feature = "tokens")), expect(dead_code))]
fn etag(detail: &crate::domain::PostDetail) -> (http::HeaderName, http::HeaderValue) {
    let version = crate::domain::PostVersion::of(&detail.post.summary.title, &detail.post.body);
    let value = http::HeaderValue::from_str(&version.etag()).expect("hex in quotes is a header value");
    (http::header::ETAG, value)
}

/// A post detail with its `ETag` (GET, HEAD, edits).
#[cfg_attr(not(any(feature = "hashing", feature = "tokens")), expect(dead_code))]
pub(crate) struct WithEtag(crate::domain::PostDetail);

impl axum::response::IntoResponse for WithEtag {
    fn into_response(self) -> axum::response::Response {
        ([etag(&self.0)], Json(self.0)).into_response()
    }
}

/// A board page or a post detail serialized by the use case (its
/// cache keeps them serialized), with a detail's `ETag`.
pub(crate) struct RenderedJson(crate::app::reads::Rendered);

impl axum::response::IntoResponse for RenderedJson {
    fn into_response(self) -> axum::response::Response {
        let json = http::HeaderValue::from_static("application/json");
        let mut response = ([(http::header::CONTENT_TYPE, json)], self.0.json).into_response();
        if let Some(version) = &self.0.version {
            let value = http::HeaderValue::from_str(&version.etag()).expect("hex in quotes is a header value");
            response.headers_mut().insert(http::header::ETAG, value);
        }
        response
    }
}

#[cfg(any(feature = "hashing", feature = "tokens"))]
fn parent(parent_id: Option<String>) -> Result<Option<crate::domain::CommentId>, crate::error::ApiError> {
    parent_id
        .as_deref()
        .map(crate::domain::CommentId::parse_parent)
        .transpose()
}

/// A create's `media`: absent or null is none.
#[cfg(any(feature = "hashing", feature = "tokens"))]
fn post_media(ids: Option<Vec<String>>) -> Result<crate::domain::media::MediaList, crate::error::ApiError> {
    crate::domain::media::MediaList::parse(ids.unwrap_or_default(), crate::domain::media::MAX_POST_MEDIA)
}

#[cfg(any(feature = "hashing", feature = "tokens"))]
fn comment_media(ids: Option<Vec<String>>) -> Result<crate::domain::media::MediaList, crate::error::ApiError> {
    crate::domain::media::MediaList::parse(ids.unwrap_or_default(), crate::domain::media::MAX_COMMENT_MEDIA)
}

pub(super) async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}
