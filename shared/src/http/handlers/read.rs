//! read: board listings, post details and comments; a board's moderators
//! and its moderation log.

use axum::Json;
use axum::extract::State;
use http::Method;

use super::RenderedJson;
use crate::app::moderation::ModPage;
use crate::app::posts::ListPosts;
use crate::app::pow::Challenge;
use crate::domain::{
    Board, BoardList, COMMENTS_PAGE, Comment, CommentPage, LogPage, MAX_REVISIONS, Moderators, Revisions,
};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::paths::{
    BoardPath, CommentPath, DEFAULT_POSTS_PAGE, DEFAULT_V3_PAGE, NumberPath, PageQuery, PostPath,
};
use crate::http::viewer::Viewer;

pub(crate) async fn list_posts(
    State(state): State<AppState>,
    viewer: Viewer,
    BoardPath(board): BoardPath,
    page: PageQuery,
) -> Result<RenderedJson, ApiError> {
    let query = ListPosts {
        board,
        limit: page.limit(DEFAULT_POSTS_PAGE)?,
        category: page.category()?,
        best: page.best()?,
        cursor: page.cursor,
    };
    state
        .app
        .list_posts_json(query, viewer.member())
        .await
        .map(RenderedJson)
}

/// axum answers `HEAD` with this handler too (and drops the body): a `HEAD`
/// counts no view (docs/API.md, Counting).
pub(crate) async fn get_post(
    State(state): State<AppState>,
    method: Method,
    viewer: Viewer,
    PostPath(key): PostPath,
) -> Result<RenderedJson, ApiError> {
    if method == Method::HEAD {
        state.app.peek_post_json(&key, viewer.member()).await.map(RenderedJson)
    } else {
        state.app.read_post_json(&key, viewer.member()).await.map(RenderedJson)
    }
}

/// The post a board numbered `number`, as [`get_post`] reads it
/// (a view counted).
pub(crate) async fn get_post_by_number(
    State(state): State<AppState>,
    viewer: Viewer,
    NumberPath(board, number): NumberPath,
) -> Result<RenderedJson, ApiError> {
    state
        .app
        .read_post_by_number_json(&board, number, viewer.member())
        .await
        .map(RenderedJson)
}

/// Every board, in slug order.
pub(crate) async fn list_boards(State(state): State<AppState>) -> Result<Json<BoardList>, ApiError> {
    state.app.list_boards().await.map(Json)
}

/// One board's settings and post count.
pub(crate) async fn get_board(
    State(state): State<AppState>,
    BoardPath(board): BoardPath,
) -> Result<Json<Board>, ApiError> {
    state.app.get_board(board.as_str()).await.map(Json)
}

pub(crate) async fn list_comments(
    State(state): State<AppState>,
    PostPath(key): PostPath,
    page: PageQuery,
    viewer: Viewer,
) -> Result<Json<CommentPage>, ApiError> {
    let limit = page.limit(COMMENTS_PAGE)?;
    state
        .app
        .list_comments(&key, limit, page.cursor.as_deref(), viewer.member())
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

/// A page of a post's edit history, newest first.
pub(crate) async fn list_revisions(
    State(state): State<AppState>,
    PostPath(key): PostPath,
    page: PageQuery,
) -> Result<Json<Revisions>, ApiError> {
    let limit = page.limit(MAX_REVISIONS as usize)?;
    state.app.revisions(&key, limit, page.cursor.as_deref()).await.map(Json)
}

/// A proof-of-work challenge for an anonymous write.
pub(crate) async fn challenge(State(state): State<AppState>) -> Result<Json<Challenge>, ApiError> {
    state.app.challenge().map(Json)
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
