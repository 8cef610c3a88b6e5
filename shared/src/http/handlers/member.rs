//! member-write: what a signed-in member writes.

use axum::extract::State;
use http::StatusCode;
use serde::Deserialize;

use super::{CommentCreated, Created, WithEtag, comment_created, comment_media, created, parent, post_media};
use crate::app::posts::{EditPost, WriteComment, WritePost};
use crate::domain::media::{MAX_POST_MEDIA, MediaList};
use crate::domain::{CommentBody, PostBody, PostDetail, Title};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::auth::AuthMember;
use crate::http::client_ip::ClientIp;
use crate::http::conventions::IfMatch;
use crate::http::idempotency::Idempotent;
use crate::http::input::{Body, required};
use crate::http::paths::{BoardPath, CommentPath, PostPath, RevisionPath};

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct PostRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::title, required = true))]
    title: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::post_body, required = true))]
    body: Option<String>,
    /// Null or one of the board's categories (말머리); on an edit,
    /// absent keeps the post's and null clears it.
    #[serde(default, deserialize_with = "crate::http::input::absent_or_null")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::category))]
    category: Option<Option<String>>,
    /// Images to attach (ids of `ready` uploads of this writer on
    /// this board), at most 20; on an edit, absent keeps the post's.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::post_media))]
    media: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct CommentRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::comment_body, required = true))]
    body: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::parent_id))]
    parent_id: Option<String>,
    /// At most one image to attach (the id of a `ready` upload of
    /// this writer on this board).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::comment_media))]
    media: Option<Vec<String>>,
}

pub(crate) async fn create_post(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    BoardPath(board): BoardPath,
    Body(r): Body<PostRequest>,
) -> Result<Created<PostDetail>, ApiError> {
    let command = WritePost {
        idempotency,
        client,
        board,
        title: Title::parse(required("title", r.title)?)?,
        body: PostBody::parse(required("body", r.body)?)?,
        category: r.category.flatten(),
        media: post_media(r.media)?,
    };
    state.app.create_member_post(&member, command).await.map(created)
}

pub(crate) async fn update_post(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
    IfMatch(if_match): IfMatch,
    Body(r): Body<PostRequest>,
) -> Result<WithEtag, ApiError> {
    let command = EditPost {
        client,
        if_match,
        key,
        title: Title::parse(required("title", r.title)?)?,
        body: PostBody::parse(required("body", r.body)?)?,
        category: r.category,
        media: r.media.map(|ids| MediaList::parse(ids, MAX_POST_MEDIA)).transpose()?,
    };
    state.app.update_member_post(&member, command).await.map(WithEtag)
}

pub(crate) async fn delete_post(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
) -> Result<StatusCode, ApiError> {
    state.app.delete_member_post(&member, &client, &key).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn create_comment(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
    Body(r): Body<CommentRequest>,
) -> Result<CommentCreated, ApiError> {
    let board = key.board.clone();
    let command = WriteComment {
        idempotency,
        client,
        key,
        body: CommentBody::parse(required("body", r.body)?)?,
        parent: parent(r.parent_id)?,
        media: comment_media(r.media)?,
    };
    state
        .app
        .create_member_comment(&member, command)
        .await
        .map(comment_created(board))
}

pub(crate) async fn delete_comment(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    CommentPath(key): CommentPath,
) -> Result<StatusCode, ApiError> {
    state.app.delete_member_comment(&member, &client, &key).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The post's author, or staff, delete one revision of it.
pub(crate) async fn delete_revision(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    RevisionPath(key, revision): RevisionPath,
) -> Result<StatusCode, ApiError> {
    state.app.delete_revision(&member, &client, &key, &revision).await?;
    Ok(StatusCode::NO_CONTENT)
}
