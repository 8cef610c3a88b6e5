//! member-write and like: what a signed-in member writes and likes.

use axum::Json;
use axum::extract::State;
use http::StatusCode;
use serde::Deserialize;

use super::{CommentCreated, Created, WithEtag, comment_created, comment_media, created, parent, post_media};
use crate::app::posts::{EditPost, WriteComment, WritePost};
use crate::domain::media::{MAX_POST_MEDIA, MediaList};
use crate::domain::{CommentBody, PostBody, PostDetail, Title, Vote, VoteChange, VoteState};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::auth::AuthMember;
use crate::http::client_ip::ClientIp;
use crate::http::conventions::{IfMatch, PowHeader};
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

/// `PUT`/`DELETE .../like` and `.../dislike`: one handler per change.
macro_rules! vote_handler {
    ($name:ident, $change:expr) => {
        pub(crate) async fn $name(
            State(state): State<AppState>,
            AuthMember(member): AuthMember,
            ClientIp(client): ClientIp,
            PostPath(key): PostPath,
        ) -> Result<Json<VoteState>, ApiError> {
            state
                .app
                .member_vote(&member, &client, &key, $change)
                .await
                .map(Json)
        }
    };
}

vote_handler!(like, VoteChange::Like);
vote_handler!(unlike, VoteChange::Unlike);
vote_handler!(dislike, VoteChange::Dislike);
vote_handler!(undislike, VoteChange::Undislike);

/// `{"vote": "like" | "dislike"}` of a guest.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct GuestVoteRequest {
    #[cfg_attr(feature = "openapi", schema(value_type = crate::domain::Vote, required = true))]
    vote: Option<String>,
}

/// A guest's vote: once per post per client address key.
pub(crate) async fn guest_vote(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
    PowHeader(pow): PowHeader,
    Body(r): Body<GuestVoteRequest>,
) -> Result<Json<VoteState>, ApiError> {
    let vote = match required("vote", r.vote)?.as_str() {
        "like" => Vote::Like,
        "dislike" => Vote::Dislike,
        _ => return Err(ApiError::invalid("vote", r#"must be "like" or "dislike""#)),
    };
    state
        .app
        .guest_vote(&client, &key, vote, pow.as_deref())
        .await
        .map(Json)
}
