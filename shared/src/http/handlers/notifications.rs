//! member-write: a member's notifications and blocks (docs/API.md,
//! Notifications and blocks). Served by `member-write`, the smallest
//! function with tokens: clients poll the unread count every 30 s, and
//! `account` is sized for hashing.

use axum::Json;
use axum::extract::State;
use http::StatusCode;
use serde::Deserialize;

use crate::app::notify::NOTIFICATIONS_PAGE;
use crate::domain::{BlockList, NotificationPage, Unread};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::auth::AuthMember;
use crate::http::input::Body;
use crate::http::paths::{MemberIdPath, PageQuery, TagPath};

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct MarkReadRequest {
    /// Marks read every notification up to this id; absent: all of them.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    up_to: Option<String>,
}

pub(crate) async fn list_notifications(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    page: PageQuery,
) -> Result<Json<NotificationPage>, ApiError> {
    let limit = page.limit(NOTIFICATIONS_PAGE)?;
    state
        .app
        .notifications(&member, limit, page.cursor.as_deref())
        .await
        .map(Json)
}

pub(crate) async fn unread(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
) -> Result<Json<Unread>, ApiError> {
    let unread = state.app.unread_notifications(&member).await?;
    Ok(Json(Unread { unread }))
}

pub(crate) async fn mark_read(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    Body(r): Body<MarkReadRequest>,
) -> Result<Json<Unread>, ApiError> {
    let unread = state.app.mark_notifications_read(&member, r.up_to.as_deref()).await?;
    Ok(Json(Unread { unread }))
}

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
