//! media: upload grants and the state of an upload (docs/API.md, Images
//!). The `media` function serves them; the file itself goes to S3 (or
//! to the server's own upload URL, `server/src/media.rs`).

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;

use crate::app::media::{MediaGrant, MediaView};
use crate::domain::media::{MediaType, UploadSize};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::auth::MaybeMember;
use crate::http::client_ip::ClientIp;
use crate::http::conventions::PowHeader;
use crate::http::input::{Body, required};
use crate::http::paths::{BoardPath, MediaPath};

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct GrantRequest {
    /// `image/jpeg`, `image/png`, `image/gif` or `image/webp`, exactly.
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = MediaType))]
    content_type: Option<String>,
    /// The file's size: 1 to `MEDIA_MAX_BYTES` (20 MiB by default).
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = i64, minimum = 1))]
    bytes: Option<i64>,
}

/// `201` with the grant and the upload's `Location`.
pub(crate) struct Granted(MediaGrant);

impl IntoResponse for Granted {
    fn into_response(self) -> Response {
        let location = HeaderValue::from_str(&format!("/media/{}", self.0.id));
        let mut response = (StatusCode::CREATED, Json(self.0)).into_response();
        if let Ok(location) = location {
            response.headers_mut().insert(header::LOCATION, location);
        }
        response
    }
}

pub(crate) async fn grant_upload(
    State(state): State<AppState>,
    MaybeMember(member): MaybeMember,
    ClientIp(client): ClientIp,
    BoardPath(board): BoardPath,
    PowHeader(pow): PowHeader,
    Body(r): Body<GrantRequest>,
) -> Result<Granted, ApiError> {
    let declared = MediaType::parse(&required("content_type", r.content_type)?)?;
    let bytes = UploadSize::parse(required("bytes", r.bytes)?, state.app.media_max_bytes())?;
    state
        .app
        .grant_media(member.as_ref(), &client, &board, declared, bytes, pow.as_deref())
        .await
        .map(Granted)
}

pub(crate) async fn get_media(
    State(state): State<AppState>,
    MediaPath(id): MediaPath,
) -> Result<Json<MediaView>, ApiError> {
    state.app.media_status(&id).await.map(Json)
}
