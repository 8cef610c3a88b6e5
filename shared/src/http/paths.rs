//! Path and query parameters as typed values: a board that is configured, a
//! post on it, a comment under it. A route's parameter names are read by
//! serde, so a template that does not name them fails loudly (500 and a log
//! line) instead of reading an empty string.

use std::collections::HashMap;

use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path, Query};
use http::request::Parts;
use serde::Deserialize;

use super::AppState;
use crate::domain::{
    BanId, BoardSlug, Category, CommentId, CommentKey, MemberId, PageLimit, PostId, PostKey, ReportId,
};
use crate::error::ApiError;

fn path_error(rejection: PathRejection) -> ApiError {
    use axum::extract::path::ErrorKind;
    match &rejection {
        // A path that cannot be decoded names nothing.
        PathRejection::FailedToDeserializePathParams(e)
            if matches!(e.kind(), ErrorKind::InvalidUtf8InPathParam { .. }) =>
        {
            ApiError::NotFound("no such path".into())
        }
        _ => ApiError::Internal(format!("route parameters: {rejection}")),
    }
}

async fn raw<T: serde::de::DeserializeOwned + Send>(parts: &mut Parts, state: &AppState) -> Result<T, ApiError> {
    Path::<T>::from_request_parts(parts, state)
        .await
        .map(|Path(raw)| raw)
        .map_err(path_error)
}

#[derive(Deserialize)]
struct RawBoard {
    slug: String,
}

#[derive(Deserialize)]
struct RawPost {
    slug: String,
    post_id: String,
}

#[derive(Deserialize)]
struct RawComment {
    slug: String,
    post_id: String,
    comment_id: String,
}

/// `/boards/{slug}/...`: a configured board.
#[derive(Debug)]
pub struct BoardPath(pub BoardSlug);

impl FromRequestParts<AppState> for BoardPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawBoard { slug } = raw(parts, state).await?;
        state.app.resolve_board(&slug).await.map(BoardPath)
    }
}

/// `/boards/{slug}` of `PUT`: any slug, since it may name a
/// board to open (the use case checks its form).
#[derive(Debug)]
pub struct SlugPath(pub String);

impl FromRequestParts<AppState> for SlugPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawBoard { slug } = raw(parts, state).await?;
        Ok(SlugPath(slug))
    }
}

/// `/boards/{slug}/best/{post_id}`.
#[derive(Debug)]
pub struct BestPath(pub PostKey);

impl FromRequestParts<AppState> for BestPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawPost { slug, post_id } = raw(parts, state).await?;
        Ok(BestPath(PostKey {
            board: state.app.resolve_board(&slug).await?,
            post: PostId::parse(&post_id)?,
        }))
    }
}

/// `/boards/{slug}/posts/{post_id}/...`
#[derive(Debug)]
pub struct PostPath(pub PostKey);

impl FromRequestParts<AppState> for PostPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawPost { slug, post_id } = raw(parts, state).await?;
        Ok(PostPath(PostKey {
            board: state.app.resolve_board(&slug).await?,
            post: PostId::parse(&post_id)?,
        }))
    }
}

#[derive(Deserialize)]
struct RawNumber {
    slug: String,
    number: String,
}

/// `/boards/{slug}/posts/by-number/{number}`: a number that is
/// not a post number (`0`, not digits) is no post: `404`.
#[derive(Debug)]
pub struct NumberPath(pub BoardSlug, pub u64);

impl FromRequestParts<AppState> for NumberPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawNumber { slug, number } = raw(parts, state).await?;
        let board = state.app.resolve_board(&slug).await?;
        let number = Some(number.as_str())
            .filter(|n| !n.is_empty() && n.len() <= 19 && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| ApiError::not_found("post"))?;
        Ok(NumberPath(board, number))
    }
}

/// `/boards/{slug}/posts/{post_id}/comments/{comment_id}/...`
#[derive(Debug)]
pub struct CommentPath(pub CommentKey);

impl FromRequestParts<AppState> for CommentPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawComment {
            slug,
            post_id,
            comment_id,
        } = raw(parts, state).await?;
        Ok(CommentPath(CommentKey {
            post: PostKey {
                board: state.app.resolve_board(&slug).await?,
                post: PostId::parse(&post_id)?,
            },
            comment: CommentId::parse(&comment_id)?,
        }))
    }
}

#[derive(Deserialize)]
struct RawRevision {
    slug: String,
    post_id: String,
    revision: String,
}

/// `/boards/{slug}/posts/{post_id}/revisions/{revision}`: the revision's
/// number stays text for the use case to parse (a bad one names `revision`).
#[derive(Debug)]
pub struct RevisionPath(pub PostKey, pub String);

impl FromRequestParts<AppState> for RevisionPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawRevision {
            slug,
            post_id,
            revision,
        } = raw(parts, state).await?;
        let key = PostKey {
            board: state.app.resolve_board(&slug).await?,
            post: PostId::parse(&post_id)?,
        };
        Ok(RevisionPath(key, revision))
    }
}

#[derive(Deserialize)]
struct RawBoardMember {
    slug: String,
    member_id: String,
}

#[derive(Deserialize)]
struct RawBan {
    slug: String,
    ban_id: String,
}

#[derive(Deserialize)]
struct RawReport {
    slug: String,
    report_id: String,
}

/// `/boards/{slug}/moderators/{member_id}`
#[derive(Debug)]
pub struct BoardMemberPath(pub BoardSlug, pub MemberId);

impl FromRequestParts<AppState> for BoardMemberPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawBoardMember { slug, member_id } = raw(parts, state).await?;
        Ok(BoardMemberPath(
            state.app.resolve_board(&slug).await?,
            MemberId::parse(&member_id)?,
        ))
    }
}

/// `/boards/{slug}/bans/{ban_id}`
#[derive(Debug)]
pub struct BanPath(pub BoardSlug, pub BanId);

impl FromRequestParts<AppState> for BanPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawBan { slug, ban_id } = raw(parts, state).await?;
        Ok(BanPath(state.app.resolve_board(&slug).await?, BanId::parse(&ban_id)?))
    }
}

/// `/boards/{slug}/reports/{report_id}/...`
#[derive(Debug)]
pub struct ReportPath(pub BoardSlug, pub ReportId);

impl FromRequestParts<AppState> for ReportPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawReport { slug, report_id } = raw(parts, state).await?;
        Ok(ReportPath(
            state.app.resolve_board(&slug).await?,
            ReportId::parse(&report_id)?,
        ))
    }
}

/// `?limit=&cursor=` of a listing.
#[derive(Debug)]
pub struct PageQuery {
    limit: Option<String>,
    pub cursor: Option<String>,
    /// Board pages: `?category=`.
    category: Option<String>,
    /// Board pages: `?best=true`.
    best: Option<String>,
}

impl PageQuery {
    /// `limit`, or `default` when absent (docs/API.md, Field rules).
    pub fn limit(&self, default: usize) -> Result<PageLimit, ApiError> {
        PageLimit::parse(self.limit.as_deref(), default)
    }

    /// `?category=`: any category a post may carry (one the board has
    /// dropped since still lists its posts); absent for all.
    pub fn category(&self) -> Result<Option<Category>, ApiError> {
        self.category
            .clone()
            .map(|c| Category::parse_as("category", c))
            .transpose()
    }

    /// `?best=true|false`; absent is false.
    pub fn best(&self) -> Result<bool, ApiError> {
        match self.best.as_deref() {
            None | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(_) => Err(ApiError::invalid("best", "must be true or false")),
        }
    }
}

/// Posts are listed 20 to a page unless `limit` says otherwise.
pub const DEFAULT_POSTS_PAGE: usize = 20;

/// Every v3 list (bans, reports, the moderation log) too.
pub const DEFAULT_V3_PAGE: usize = 20;

impl<S: Send + Sync> FromRequestParts<S> for PageQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        // A map, as before typed parameters: a repeated name takes its last value.
        let Query(mut raw) = Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::invalid_request("the query string is malformed"))?;
        Ok(PageQuery {
            limit: raw.remove("limit"),
            cursor: raw.remove("cursor"),
            category: raw.remove("category"),
            best: raw.remove("best"),
        })
    }
}

#[derive(Deserialize)]
struct RawMember {
    member_id: String,
}

/// `/members/me/blocks/members/{member_id}`: the id as sent (the
/// use case parses it, after the token).
#[derive(Debug)]
pub struct MemberIdPath(pub String);

impl FromRequestParts<AppState> for MemberIdPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawMember { member_id } = raw(parts, state).await?;
        Ok(MemberIdPath(member_id))
    }
}

#[derive(Deserialize)]
struct RawTag {
    tag: String,
}

/// `/members/me/blocks/guests/{tag}`.
#[derive(Debug)]
pub struct TagPath(pub String);

impl FromRequestParts<AppState> for TagPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawTag { tag } = raw(parts, state).await?;
        Ok(TagPath(tag))
    }
}

#[derive(Deserialize)]
struct RawMedia {
    media_id: String,
}

/// `/media/{media_id}`: anything but a ULID names nothing (`404`).
#[derive(Debug)]
pub struct MediaPath(pub crate::domain::MediaId);

impl FromRequestParts<AppState> for MediaPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let RawMedia { media_id } = raw(parts, state).await?;
        Ok(MediaPath(crate::domain::MediaId::parse(&media_id)?))
    }
}
