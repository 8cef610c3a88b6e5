//! guest-post and guest-comment: what guests write, with a guest password.

use axum::extract::State;
use http::StatusCode;
use serde::Deserialize;

use super::{CommentCreated, Created, WithEtag, comment_created, comment_media, created, parent, post_media};
use crate::app::ClientAddress;
use crate::app::guest::{GuestComment, GuestEdit, GuestPost, GuestProof};
use crate::domain::media::{MAX_POST_MEDIA, MediaList};
use crate::domain::{CommentBody, Nickname, Password, PostBody, PostDetail, Title};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::client_ip::ClientIp;
use crate::http::conventions::{IfMatch, PowHeader};
use crate::http::idempotency::Idempotent;
use crate::http::input::{Body, required};
use crate::http::paths::{BoardPath, CommentPath, PostPath};

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct GuestPostRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::nickname, required = true))]
    nickname: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::guest_password, required = true))]
    password: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::title, required = true))]
    title: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::post_body, required = true))]
    body: Option<String>,
    /// Null or one of the board's categories (말머리).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::category))]
    category: Option<String>,
    /// Images to attach (ids of `ready` uploads of this writer on
    /// this board), at most 20; on an edit, absent keeps the post's.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::post_media))]
    media: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct GuestEditRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::guest_password, required = true))]
    password: Option<String>,
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
pub(crate) struct GuestCommentRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::nickname, required = true))]
    nickname: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::guest_password, required = true))]
    password: Option<String>,
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

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct GuestProofRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::guest_password, required = true))]
    password: Option<String>,
}

impl GuestProofRequest {
    fn into_proof(self, client: ClientAddress) -> Result<GuestProof, ApiError> {
        Ok(GuestProof {
            password: Password::guest(required("password", self.password)?)?,
            client,
        })
    }
}

pub(crate) async fn create_guest_post(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    ClientIp(client): ClientIp,
    BoardPath(board): BoardPath,
    PowHeader(pow): PowHeader,
    Body(r): Body<GuestPostRequest>,
) -> Result<Created<PostDetail>, ApiError> {
    let command = GuestPost {
        idempotency,
        client,
        board,
        nickname: Nickname::parse(required("nickname", r.nickname)?)?,
        password: Password::guest(required("password", r.password)?)?,
        title: Title::parse(required("title", r.title)?)?,
        body: PostBody::parse(required("body", r.body)?)?,
        category: r.category,
        media: post_media(r.media)?,
        pow,
    };
    state.app.create_guest_post(command).await.map(created)
}

pub(crate) async fn update_guest_post(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
    IfMatch(if_match): IfMatch,
    Body(r): Body<GuestEditRequest>,
) -> Result<WithEtag, ApiError> {
    let command = GuestEdit {
        if_match,
        key,
        password: Password::guest(required("password", r.password)?)?,
        title: Title::parse(required("title", r.title)?)?,
        body: PostBody::parse(required("body", r.body)?)?,
        category: r.category,
        media: r.media.map(|ids| MediaList::parse(ids, MAX_POST_MEDIA)).transpose()?,
        client,
    };
    state.app.update_guest_post(command).await.map(WithEtag)
}

pub(crate) async fn delete_guest_post(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
    Body(r): Body<GuestProofRequest>,
) -> Result<StatusCode, ApiError> {
    let proof = r.into_proof(client)?;
    state.app.delete_guest_post(&key, proof).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn create_guest_comment(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
    PowHeader(pow): PowHeader,
    Body(r): Body<GuestCommentRequest>,
) -> Result<CommentCreated, ApiError> {
    let board = key.board.clone();
    let command = GuestComment {
        idempotency,
        client,
        key,
        nickname: Nickname::parse(required("nickname", r.nickname)?)?,
        password: Password::guest(required("password", r.password)?)?,
        body: CommentBody::parse(required("body", r.body)?)?,
        parent: parent(r.parent_id)?,
        media: comment_media(r.media)?,
        pow,
    };
    state
        .app
        .create_guest_comment(command)
        .await
        .map(comment_created(board))
}

pub(crate) async fn delete_guest_comment(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    CommentPath(key): CommentPath,
    Body(r): Body<GuestProofRequest>,
) -> Result<StatusCode, ApiError> {
    let proof = r.into_proof(client)?;
    state.app.delete_guest_comment(&key, proof).await?;
    Ok(StatusCode::NO_CONTENT)
}
