//! read: board listings and post details.

use axum::Json;
use axum::extract::State;

use crate::app::posts::ListPosts;
use crate::domain::{Page, PostDetail};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::paths::{BoardPath, PageQuery, PostPath};

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
