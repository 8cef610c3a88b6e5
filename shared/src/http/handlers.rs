//! One handler per route of docs/API.md (Routes): the request's typed parts
//! become a command, the use case runs, its result becomes the response.

use axum::Json;
use axum::extract::State;
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::auth::AuthMember;
use super::client_ip::ClientIp;
use super::input::{Body, required};
use super::paths::{BoardPath, CommentPath, PageQuery, PostPath};
use crate::app::accounts::{LogIn, Session, SignUp};
use crate::app::guest::{GuestComment, GuestEdit, GuestPost, GuestProof};
use crate::app::posts::{EditPost, ListPosts, WriteComment, WritePost};
use crate::domain::{
    Comment, CommentBody, CommentId, LikeState, Member, Nickname, Page, Password, PostBody, PostDetail, Title, Username,
};
use crate::error::ApiError;

type Created<T> = (StatusCode, Json<T>);

fn created<T>(value: T) -> Created<T> {
    (StatusCode::CREATED, Json(value))
}

pub async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

// Request bodies (docs/API.md, Bodies). Every field is optional to serde so
// that a missing one is `validation_failed` naming it, in the order listed.

#[derive(Deserialize)]
pub struct SignUpRequest {
    username: Option<String>,
    password: Option<String>,
    nickname: Option<String>,
}

#[derive(Deserialize)]
pub struct LogInRequest {
    username: Option<String>,
    password: Option<String>,
}

#[derive(Deserialize)]
pub struct PostRequest {
    title: Option<String>,
    body: Option<String>,
}

#[derive(Deserialize)]
pub struct CommentRequest {
    body: Option<String>,
    parent_id: Option<String>,
}

#[derive(Deserialize)]
pub struct GuestPostRequest {
    nickname: Option<String>,
    password: Option<String>,
    title: Option<String>,
    body: Option<String>,
}

#[derive(Deserialize)]
pub struct GuestEditRequest {
    password: Option<String>,
    title: Option<String>,
    body: Option<String>,
}

#[derive(Deserialize)]
pub struct GuestCommentRequest {
    nickname: Option<String>,
    password: Option<String>,
    body: Option<String>,
    parent_id: Option<String>,
}

#[derive(Deserialize)]
pub struct GuestProofRequest {
    password: Option<String>,
}

fn parent(parent_id: Option<String>) -> Result<Option<CommentId>, ApiError> {
    parent_id.as_deref().map(CommentId::parse_parent).transpose()
}

// signup, login

pub async fn signup(State(state): State<AppState>, Body(r): Body<SignUpRequest>) -> Result<Created<Member>, ApiError> {
    let command = SignUp {
        username: Username::parse(required("username", r.username)?)?,
        password: Password::member(required("password", r.password)?)?,
        nickname: Nickname::parse(required("nickname", r.nickname)?)?,
    };
    state.app.sign_up(command).await.map(created)
}

pub async fn login(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    Body(r): Body<LogInRequest>,
) -> Result<Json<Session>, ApiError> {
    let command = LogIn {
        username: Username::parse(required("username", r.username)?)?,
        password: Password::attempt(required("password", r.password)?)?,
        client,
    };
    state.app.log_in(command).await.map(Json)
}

// read

pub async fn list_posts(
    State(state): State<AppState>,
    BoardPath(board): BoardPath,
    page: PageQuery,
) -> Result<Json<Page>, ApiError> {
    let query = ListPosts {
        board,
        limit: page.limit,
        cursor: page.cursor,
    };
    state.app.list_posts(query).await.map(Json)
}

pub async fn get_post(State(state): State<AppState>, PostPath(key): PostPath) -> Result<Json<PostDetail>, ApiError> {
    state.app.read_post(&key).await.map(Json)
}

// member-write

pub async fn create_post(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    BoardPath(board): BoardPath,
    Body(r): Body<PostRequest>,
) -> Result<Created<PostDetail>, ApiError> {
    let command = WritePost {
        board,
        title: Title::parse(required("title", r.title)?)?,
        body: PostBody::parse(required("body", r.body)?)?,
    };
    state.app.create_member_post(&member, command).await.map(created)
}

pub async fn update_post(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    PostPath(key): PostPath,
    Body(r): Body<PostRequest>,
) -> Result<Json<PostDetail>, ApiError> {
    let command = EditPost {
        key,
        title: Title::parse(required("title", r.title)?)?,
        body: PostBody::parse(required("body", r.body)?)?,
    };
    state.app.update_member_post(&member, command).await.map(Json)
}

pub async fn delete_post(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    PostPath(key): PostPath,
) -> Result<StatusCode, ApiError> {
    state.app.delete_member_post(&member, &key).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn create_comment(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    PostPath(key): PostPath,
    Body(r): Body<CommentRequest>,
) -> Result<Created<Comment>, ApiError> {
    let command = WriteComment {
        key,
        body: CommentBody::parse(required("body", r.body)?)?,
        parent: parent(r.parent_id)?,
    };
    state.app.create_member_comment(&member, command).await.map(created)
}

// guest-post, guest-comment

pub async fn create_guest_post(
    State(state): State<AppState>,
    BoardPath(board): BoardPath,
    Body(r): Body<GuestPostRequest>,
) -> Result<Created<PostDetail>, ApiError> {
    let command = GuestPost {
        board,
        nickname: Nickname::parse(required("nickname", r.nickname)?)?,
        password: Password::guest(required("password", r.password)?)?,
        title: Title::parse(required("title", r.title)?)?,
        body: PostBody::parse(required("body", r.body)?)?,
    };
    state.app.create_guest_post(command).await.map(created)
}

pub async fn update_guest_post(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
    Body(r): Body<GuestEditRequest>,
) -> Result<Json<PostDetail>, ApiError> {
    let command = GuestEdit {
        key,
        password: Password::guest(required("password", r.password)?)?,
        title: Title::parse(required("title", r.title)?)?,
        body: PostBody::parse(required("body", r.body)?)?,
        client,
    };
    state.app.update_guest_post(command).await.map(Json)
}

pub async fn delete_guest_post(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
    Body(r): Body<GuestProofRequest>,
) -> Result<StatusCode, ApiError> {
    let proof = GuestProof {
        password: Password::guest(required("password", r.password)?)?,
        client,
    };
    state.app.delete_guest_post(&key, proof).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn create_guest_comment(
    State(state): State<AppState>,
    PostPath(key): PostPath,
    Body(r): Body<GuestCommentRequest>,
) -> Result<Created<Comment>, ApiError> {
    let command = GuestComment {
        key,
        nickname: Nickname::parse(required("nickname", r.nickname)?)?,
        password: Password::guest(required("password", r.password)?)?,
        body: CommentBody::parse(required("body", r.body)?)?,
        parent: parent(r.parent_id)?,
    };
    state.app.create_guest_comment(command).await.map(created)
}

pub async fn delete_guest_comment(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    CommentPath(key): CommentPath,
    Body(r): Body<GuestProofRequest>,
) -> Result<StatusCode, ApiError> {
    let proof = GuestProof {
        password: Password::guest(required("password", r.password)?)?,
        client,
    };
    state.app.delete_guest_comment(&key, proof).await?;
    Ok(StatusCode::NO_CONTENT)
}

// like

pub async fn like(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    PostPath(key): PostPath,
) -> Result<Json<LikeState>, ApiError> {
    state.app.set_like(&member, &key, true).await.map(Json)
}

pub async fn unlike(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    PostPath(key): PostPath,
) -> Result<Json<LikeState>, ApiError> {
    state.app.set_like(&member, &key, false).await.map(Json)
}
