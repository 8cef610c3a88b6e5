//! A member's blocks (docs/API.md, Notifications and blocks): the list is
//! served by `read`, the changes by `member-write`.

use axum::Json;
use axum::extract::State;
use http::StatusCode;

use crate::domain::BlockList;
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::auth::AuthMember;
use crate::http::paths::{MemberIdPath, TagPath};

pub(crate) async fn list_blocks(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
) -> Result<Json<BlockList>, ApiError> {
    state.app.block_list(&member).await.map(Json)
}

pub(crate) async fn block_member(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    MemberIdPath(blocked): MemberIdPath,
) -> Result<StatusCode, ApiError> {
    state.app.block_member(&member, &blocked).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn unblock_member(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    MemberIdPath(blocked): MemberIdPath,
) -> Result<StatusCode, ApiError> {
    state.app.unblock_member(&member, &blocked).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn block_guest(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    TagPath(tag): TagPath,
) -> Result<StatusCode, ApiError> {
    state.app.block_guest(&member, &tag).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn unblock_guest(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    TagPath(tag): TagPath,
) -> Result<StatusCode, ApiError> {
    state.app.unblock_guest(&member, &tag).await?;
    Ok(StatusCode::NO_CONTENT)
}
