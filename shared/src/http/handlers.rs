//! One handler per route of API.md. Input is parsed once into checked values
//! before anything is hashed or written; hashing goes through the gate.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{FromRequestParts, Path, Query, State};
use http::StatusCode;
use http::request::Parts;
use secrecy::SecretString;
use serde_json::{Value, json};

use super::AppState;
use super::auth::{AuthMember, TOKEN_TTL_SECS};
use super::client_ip::ClientIp;
use super::error::ApiError;
use super::fields::{self, GUEST_PASSWORD_MIN, MEMBER_PASSWORD_MIN, Username};
use super::input::JsonObject;
use super::throttle;
use crate::domain::{Author, Comment, Guard, LikeState, Member, Page, Post, PostDetail, PostSummary, new_id, now};
use crate::hashing::{Tier, Verification};

type Created<T> = (StatusCode, Json<T>);

/// Path parameters; a path that cannot be decoded names nothing.
pub struct Params(HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Path(map)| Params(map))
            .map_err(|_| ApiError::NotFound("no such path".into()))
    }
}

impl Params {
    fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }

    fn board(&self, state: &AppState) -> Result<String, ApiError> {
        fields::board(self.get("slug"), &state.config.boards)
    }

    fn post_id(&self) -> Result<String, ApiError> {
        fields::id("post", self.get("post_id"))
    }

    fn comment_id(&self) -> Result<String, ApiError> {
        fields::id("comment", self.get("comment_id"))
    }
}

pub struct QueryParams(HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Query(map)| QueryParams(map))
            .map_err(|_| ApiError::validation("the query string is malformed"))
    }
}

fn peppered(state: &AppState, tier: Tier) -> bool {
    state.hashing.engine().policy(tier).peppered
}

pub async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

// signup

pub async fn signup(State(state): State<AppState>, body: JsonObject) -> Result<Created<Member>, ApiError> {
    let username = Username::parse(body.string("username")?)?;
    let password = fields::password(
        body.string("password")?,
        MEMBER_PASSWORD_MIN,
        peppered(&state, Tier::Member),
    )?;
    let nickname = fields::nickname(body.string("nickname")?)?;
    let hash = state.hashing.hash(Tier::Member, password).await?;
    let member = Member {
        id: new_id(),
        username: username.as_str().to_owned(),
        nickname,
        created_at: now(),
    };
    state.store.create_member(&member, &hash).await?;
    Ok((StatusCode::CREATED, Json(member)))
}

// login

pub async fn login(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    body: JsonObject,
) -> Result<Json<Value>, ApiError> {
    let username = Username::parse(body.string("username")?)?;
    // Any length may be tried: a wrong one simply does not match.
    let password = fields::password(body.string("password")?, 1, peppered(&state, Tier::Member))?;
    let keys = throttle::login_keys(&state.config.throttle, username.as_str(), &ip);
    let reservation = throttle::reserve(&*state.store, &keys).await?;

    let checked = async {
        let credentials = state.store.member_credentials(username.as_str()).await?;
        let verdict = match &credentials {
            Some(c) => {
                state
                    .hashing
                    .verify(Tier::Member, password.clone(), c.password_hash.clone())
                    .await?
            }
            None => {
                // Unknown user: spend a member verify anyway, so timing reveals nothing.
                state.hashing.verify_dummy(password.clone()).await?;
                Verification {
                    matched: false,
                    needs_rehash: false,
                }
            }
        };
        Ok::<_, ApiError>(credentials.filter(|_| verdict.matched).map(|c| (c, verdict)))
    }
    .await;
    let (credentials, verdict) = match checked {
        Ok(Some(matched)) => matched,
        // A failure: the reservation stays counted.
        Ok(None) => return Err(ApiError::InvalidCredentials),
        // No verdict (store or hashing unavailable): not a failure.
        Err(e) => {
            throttle::forgive(&*state.store, reservation).await;
            return Err(e);
        }
    };
    throttle::forgive(&*state.store, reservation).await;
    if verdict.needs_rehash {
        upgrade_member_hash(&state, username.as_str(), &credentials.password_hash, password).await;
    }
    let token = state
        .jwt
        .issue(&credentials.member, throttle::unix_now().max(0) as u64)?;
    Ok(Json(json!({
        "token": token,
        "token_type": "Bearer",
        "expires_in": TOKEN_TTL_SECS,
        "member": credentials.member,
    })))
}

/// Stores a hash under the member tier's current policy. Best effort: the
/// login already succeeded, and the next one will try again.
async fn upgrade_member_hash(state: &AppState, username: &str, old_hash: &str, password: SecretString) {
    match state.hashing.hash(Tier::Member, password).await {
        Ok(new_hash) => match state.store.replace_password_hash(username, old_hash, &new_hash).await {
            Ok(_) => tracing::info!(tier = "member", "password hash upgraded to the current policy"),
            Err(e) => tracing::warn!(error = %e, "password hash upgrade not stored"),
        },
        Err(e) => tracing::warn!(error = %e, "password hash upgrade skipped"),
    }
}

// read

pub async fn list_posts(
    State(state): State<AppState>,
    params: Params,
    QueryParams(query): QueryParams,
) -> Result<Json<Page>, ApiError> {
    let board = params.board(&state)?;
    let limit = fields::limit(query.get("limit").map(String::as_str))?;
    let cursor = query.get("cursor").map(String::as_str).filter(|c| !c.is_empty());
    Ok(Json(state.store.list_posts(&board, limit, cursor).await?))
}

pub async fn get_post(State(state): State<AppState>, params: Params) -> Result<Json<PostDetail>, ApiError> {
    let board = params.board(&state)?;
    let post_id = params.post_id()?;
    let views = state
        .store
        .count_view(&board, &post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("post"))?;
    let mut detail = state
        .store
        .post_detail(&board, &post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("post"))?;
    let shown = &mut detail.post.summary.view_count;
    *shown = (*shown).max(views);
    Ok(Json(detail))
}

// member-write

fn new_post(board: String, title: String, body: String, author: Author) -> Post {
    let at = now();
    Post {
        summary: PostSummary {
            id: new_id(),
            board,
            title,
            author,
            created_at: at.clone(),
            view_count: 0,
            like_count: 0,
            comment_count: 0,
        },
        body,
        updated_at: at,
    }
}

fn member_author(member: &AuthMember) -> Author {
    Author::Member {
        member_id: member.0.sub.clone(),
        nickname: member.0.nickname.clone(),
    }
}

pub async fn create_post(
    State(state): State<AppState>,
    member: AuthMember,
    params: Params,
    body: JsonObject,
) -> Result<Created<PostDetail>, ApiError> {
    let board = params.board(&state)?;
    let title = fields::title(body.string("title")?)?;
    let text = fields::post_body(body.string("body")?)?;
    let post = new_post(board, title, text, member_author(&member));
    state.store.create_post(&post, None).await?;
    Ok((StatusCode::CREATED, Json(PostDetail { post, comments: vec![] })))
}

/// A member may change only what they wrote.
fn require_author(guard: &Guard, member: &AuthMember) -> Result<(), ApiError> {
    match &guard.author {
        Author::Member { member_id, .. } if *member_id == member.0.sub => Ok(()),
        _ => Err(ApiError::Forbidden(
            "only the member who wrote this post may change it".into(),
        )),
    }
}

async fn updated_detail(
    state: &AppState,
    board: &str,
    post_id: &str,
    title: &str,
    body: &str,
) -> Result<Json<PostDetail>, ApiError> {
    state
        .store
        .update_post(board, post_id, title, body, &now())
        .await?
        .ok_or_else(|| ApiError::not_found("post"))?;
    let detail = state
        .store
        .post_detail(board, post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("post"))?;
    Ok(Json(detail))
}

pub async fn update_post(
    State(state): State<AppState>,
    member: AuthMember,
    params: Params,
    body: JsonObject,
) -> Result<Json<PostDetail>, ApiError> {
    let board = params.board(&state)?;
    let post_id = params.post_id()?;
    let title = fields::title(body.string("title")?)?;
    let text = fields::post_body(body.string("body")?)?;
    let guard = state
        .store
        .post_guard(&board, &post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("post"))?;
    require_author(&guard, &member)?;
    updated_detail(&state, &board, &post_id, &title, &text).await
}

pub async fn delete_post(
    State(state): State<AppState>,
    member: AuthMember,
    params: Params,
) -> Result<StatusCode, ApiError> {
    let board = params.board(&state)?;
    let post_id = params.post_id()?;
    let guard = state
        .store
        .post_guard(&board, &post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("post"))?;
    require_author(&guard, &member)?;
    if !state.store.delete_post(&board, &post_id).await? {
        return Err(ApiError::not_found("post"));
    }
    Ok(StatusCode::NO_CONTENT)
}

fn new_comment(post_id: String, parent_id: Option<String>, body: String, author: Author) -> Comment {
    Comment {
        id: new_id(),
        post_id,
        parent_id,
        body,
        author,
        created_at: now(),
    }
}

pub async fn create_comment(
    State(state): State<AppState>,
    member: AuthMember,
    params: Params,
    body: JsonObject,
) -> Result<Created<Comment>, ApiError> {
    let board = params.board(&state)?;
    let post_id = params.post_id()?;
    let text = fields::comment_body(body.string("body")?)?;
    let parent_id = fields::parent_id(body.optional_string("parent_id")?)?;
    let comment = new_comment(post_id, parent_id, text, member_author(&member));
    state.store.create_comment(&board, &comment, None).await?;
    Ok((StatusCode::CREATED, Json(comment)))
}

// guest-post and guest-comment

fn guest_password(state: &AppState, body: &JsonObject) -> Result<SecretString, ApiError> {
    fields::password(
        body.string("password")?,
        GUEST_PASSWORD_MIN,
        peppered(state, Tier::Guest),
    )
}

/// Checks a guest password against what it guards: throttled per target and
/// client IP before any hashing. Returns a new hash when the stored one
/// should be upgraded to the guest tier's current policy.
async fn check_guest_password(
    state: &AppState,
    target_id: &str,
    ip: &str,
    password: SecretString,
    guard: Guard,
) -> Result<Option<(String, String)>, ApiError> {
    let Some(stored) = guard.guest_password_hash else {
        return Err(ApiError::Forbidden(
            "this was written by a member; sign in to change it".into(),
        ));
    };
    let keys = throttle::guest_keys(&state.config.throttle, target_id, ip);
    let reservation = throttle::reserve(&*state.store, &keys).await?;
    let verdict = match state
        .hashing
        .verify(Tier::Guest, password.clone(), stored.clone())
        .await
    {
        Ok(verdict) => verdict,
        // No verdict (hashing unavailable): not a failure.
        Err(e) => {
            throttle::forgive(&*state.store, reservation).await;
            return Err(e.into());
        }
    };
    if !verdict.matched {
        // The reservation stays counted: this was a failure.
        return Err(ApiError::WrongPassword);
    }
    throttle::forgive(&*state.store, reservation).await;
    if !verdict.needs_rehash {
        return Ok(None);
    }
    match state.hashing.hash(Tier::Guest, password).await {
        Ok(new) => Ok(Some((stored, new))),
        Err(e) => {
            tracing::warn!(error = %e, "guest hash upgrade skipped");
            Ok(None)
        }
    }
}

pub async fn create_guest_post(
    State(state): State<AppState>,
    params: Params,
    body: JsonObject,
) -> Result<Created<PostDetail>, ApiError> {
    let board = params.board(&state)?;
    let nickname = fields::nickname(body.string("nickname")?)?;
    let password = guest_password(&state, &body)?;
    let title = fields::title(body.string("title")?)?;
    let text = fields::post_body(body.string("body")?)?;
    let hash = state.hashing.hash(Tier::Guest, password).await?;
    let post = new_post(board, title, text, Author::Guest { nickname });
    state.store.create_post(&post, Some(&hash)).await?;
    Ok((StatusCode::CREATED, Json(PostDetail { post, comments: vec![] })))
}

pub async fn update_guest_post(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    params: Params,
    body: JsonObject,
) -> Result<Json<PostDetail>, ApiError> {
    let board = params.board(&state)?;
    let post_id = params.post_id()?;
    let password = guest_password(&state, &body)?;
    let title = fields::title(body.string("title")?)?;
    let text = fields::post_body(body.string("body")?)?;
    let guard = state
        .store
        .post_guard(&board, &post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("post"))?;
    if let Some((old, new)) = check_guest_password(&state, &post_id, &ip, password, guard).await? {
        state
            .store
            .replace_post_guest_hash(&board, &post_id, &old, &new)
            .await?;
    }
    updated_detail(&state, &board, &post_id, &title, &text).await
}

pub async fn delete_guest_post(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    params: Params,
    body: JsonObject,
) -> Result<StatusCode, ApiError> {
    let board = params.board(&state)?;
    let post_id = params.post_id()?;
    let password = guest_password(&state, &body)?;
    let guard = state
        .store
        .post_guard(&board, &post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("post"))?;
    // No hash upgrade: the post is about to go.
    check_guest_password(&state, &post_id, &ip, password, guard).await?;
    if !state.store.delete_post(&board, &post_id).await? {
        return Err(ApiError::not_found("post"));
    }
    Ok(StatusCode::NO_CONTENT)
}

pub async fn create_guest_comment(
    State(state): State<AppState>,
    params: Params,
    body: JsonObject,
) -> Result<Created<Comment>, ApiError> {
    let board = params.board(&state)?;
    let post_id = params.post_id()?;
    let nickname = fields::nickname(body.string("nickname")?)?;
    let password = guest_password(&state, &body)?;
    let text = fields::comment_body(body.string("body")?)?;
    let parent_id = fields::parent_id(body.optional_string("parent_id")?)?;
    // Fail fast on a missing post before paying for the hash.
    if state.store.post_guard(&board, &post_id).await?.is_none() {
        return Err(ApiError::not_found("post"));
    }
    let hash = state.hashing.hash(Tier::Guest, password).await?;
    let comment = new_comment(post_id, parent_id, text, Author::Guest { nickname });
    state.store.create_comment(&board, &comment, Some(&hash)).await?;
    Ok((StatusCode::CREATED, Json(comment)))
}

pub async fn delete_guest_comment(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    params: Params,
    body: JsonObject,
) -> Result<StatusCode, ApiError> {
    let board = params.board(&state)?;
    let post_id = params.post_id()?;
    let comment_id = params.comment_id()?;
    let password = guest_password(&state, &body)?;
    let guard = state
        .store
        .comment_guard(&board, &post_id, &comment_id)
        .await?
        .ok_or_else(|| ApiError::not_found("comment"))?;
    check_guest_password(&state, &comment_id, &ip, password, guard).await?;
    if !state.store.delete_comment(&board, &post_id, &comment_id).await? {
        return Err(ApiError::not_found("comment"));
    }
    Ok(StatusCode::NO_CONTENT)
}

// like

pub async fn like(state: State<AppState>, member: AuthMember, params: Params) -> Result<Json<LikeState>, ApiError> {
    set_like(state, member, params, true).await
}

pub async fn unlike(state: State<AppState>, member: AuthMember, params: Params) -> Result<Json<LikeState>, ApiError> {
    set_like(state, member, params, false).await
}

/// Idempotent either way: the store changes the count only when the state changes.
async fn set_like(
    State(state): State<AppState>,
    member: AuthMember,
    params: Params,
    liked: bool,
) -> Result<Json<LikeState>, ApiError> {
    let board = params.board(&state)?;
    let post_id = params.post_id()?;
    let member_id = &member.0.sub;
    let outcome = if liked {
        state.store.like(&board, &post_id, member_id).await?
    } else {
        state.store.unlike(&board, &post_id, member_id).await?
    };
    outcome.map(Json).ok_or_else(|| ApiError::not_found("post"))
}
