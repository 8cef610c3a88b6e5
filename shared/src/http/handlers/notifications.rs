//! A member's notifications (docs/API.md, Notifications and blocks): the
//! reads are served by `read`, which scales with reads (clients poll the
//! unread count every 30 s), the mark by `member-write`.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;

use crate::app::notify::NOTIFICATIONS_PAGE;
use crate::domain::{NotificationPage, Unread};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::auth::AuthMember;
use crate::http::input::Body;
use crate::http::paths::PageQuery;

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
