//! read: board listings, post details and comments; a board's moderators
//! and its moderation log.

use axum::Json;
use axum::extract::State;
use http::Method;

use super::RenderedJson;
use crate::app::moderation::ModPage;
use crate::app::posts::ListPosts;
use crate::domain::{COMMENTS_PAGE, Comment, CommentPage, LogPage, Moderators};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::paths::{BoardPath, CommentPath, DEFAULT_POSTS_PAGE, DEFAULT_V3_PAGE, PageQuery, PostPath};

pub(crate) async fn list_posts(
    State(state): State<AppState>,
    BoardPath(board): BoardPath,
    page: PageQuery,
) -> Result<RenderedJson, ApiError> {
    let query = ListPosts {
        board,
        limit: page.limit(DEFAULT_POSTS_PAGE)?,
        cursor: page.cursor,
    };
    state.app.list_posts_json(query).await.map(RenderedJson)
}

/// axum answers `HEAD` with this handler too (and drops the body): a `HEAD`
/// counts no view (docs/API.md, Counting).
pub(crate) async fn get_post(
    State(state): State<AppState>,
    method: Method,
    PostPath(key): PostPath,
) -> Result<RenderedJson, ApiError> {
    if method == Method::HEAD {
        state.app.peek_post_json(&key).await.map(RenderedJson)
    } else {
        state.app.read_post_json(&key).await.map(RenderedJson)
    }
}

pub(crate) async fn list_comments(
    State(state): State<AppState>,
    PostPath(key): PostPath,
    page: PageQuery,
) -> Result<Json<CommentPage>, ApiError> {
    let limit = page.limit(COMMENTS_PAGE)?;
    state
        .app
        .list_comments(&key, limit, page.cursor.as_deref())
        .await
        .map(Json)
}

/// One comment of a post.
pub(crate) async fn get_comment(
    State(state): State<AppState>,
    CommentPath(key): CommentPath,
) -> Result<Json<Comment>, ApiError> {
    state.app.get_comment(&key).await.map(Json)
}

/// A board's moderators, public.
pub(crate) async fn list_moderators(
    State(state): State<AppState>,
    BoardPath(board): BoardPath,
) -> Result<Json<Moderators>, ApiError> {
    state.app.list_moderators(&board).await.map(Json)
}

/// A board's moderation log, public, newest first.
pub(crate) async fn modlog(
    State(state): State<AppState>,
    BoardPath(board): BoardPath,
    page: PageQuery,
) -> Result<Json<LogPage>, ApiError> {
    let page = ModPage {
        board,
        limit: page.limit(DEFAULT_V3_PAGE)?,
        cursor: page.cursor,
    };
    state.app.modlog(page).await.map(Json)
}
