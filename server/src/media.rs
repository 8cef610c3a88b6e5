//! **(v4)** The server's side of images (docs/API.md, Images): the upload
//! URL a grant names (`PUT /media/uploads/{id}?grant=...`, the bytes of
//! the file as the body) and the checked files under `/media/files/...`.
//! On AWS S3 takes the upload and CloudFront serves the files instead.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;
use shared::domain::MediaId;
use shared::error::ApiError;
use shared::http::AppState;

/// Served files never change (a new image is a new name): a year, immutable.
const CACHE_FOREVER: &str = shared::store::files::SERVED_CACHE_CONTROL;

/// A file is shown, never run: no script, no form, no same-origin access,
/// even when opened on its own.
const SANDBOX: &str = "sandbox";

pub(crate) fn routes(state: AppState) -> Router {
    Router::new()
        .route("/media/uploads/{media_id}", put(upload))
        .route("/media/files/{name}", get(file))
        .with_state(state)
}

#[derive(Deserialize)]
struct Grant {
    grant: Option<String>,
}

async fn upload(
    State(state): State<AppState>,
    Path(media_id): Path<String>,
    Query(grant): Query<Grant>,
    request: Request,
) -> Result<StatusCode, ApiError> {
    let id = MediaId::parse(&media_id)?;
    let token = grant.grant.unwrap_or_default();
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // At most the largest grant: the body is read no further.
    let limit = usize::try_from(state.app.media_max_bytes()).unwrap_or(usize::MAX);
    let bytes = axum::body::to_bytes(request.into_body(), limit)
        .await
        .map_err(|_| ApiError::PayloadTooLarge)?;
    state
        .app
        .receive_upload(&id, &token, content_type.as_deref(), bytes.to_vec())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn file(State(state): State<AppState>, Path(name): Path<String>) -> Response {
    let Some((path, served)) = state.app.served_file(&name) else {
        return ApiError::NotFound("no such file".into()).into_response();
    };
    match tokio::fs::read(&path).await {
        Ok(bytes) => {
            let mut response = Body::from(bytes).into_response();
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(served.as_str()));
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(CACHE_FOREVER));
            headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(SANDBOX));
            response
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ApiError::NotFound("no such file".into()).into_response(),
        Err(e) => ApiError::Internal(format!("reading a media file: {e}")).into_response(),
    }
}
