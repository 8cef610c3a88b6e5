//! The server's side of images (docs/API.md, Images): the upload
//! URL a grant names (`PUT /media/uploads/{id}?grant=...`, the bytes of
//! the file as the body) and the checked files under `/media/files/...`.
//! On AWS S3 takes the upload and CloudFront serves the files instead.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use futures_util::TryStreamExt as _;
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;
use shared::domain::MediaId;
use shared::error::ApiError;
use shared::http::AppState;
use tokio_util::io::{ReaderStream, StreamReader};

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

/// The grant and a place in the check queue are settled from the head
/// alone; a refusal is answered before the body is read (hyper sends no
/// `100 Continue` to a client that waits for one) and closes the connection.
/// The body then streams to disk, never past the granted size.
async fn upload(
    State(state): State<AppState>,
    Path(media_id): Path<String>,
    Query(grant): Query<Grant>,
    request: Request,
) -> Response {
    match receive(&state, &media_id, grant, request).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(refused) => {
            let mut response = refused.into_response();
            // The body may be unread: this connection carries no other request.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

async fn receive(state: &AppState, media_id: &str, grant: Grant, request: Request) -> Result<(), ApiError> {
    let id = MediaId::parse(media_id)?;
    let headers = request.headers();
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let content_length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let opened = state
        .app
        .open_upload(
            &id,
            grant.grant.as_deref().unwrap_or_default(),
            content_type,
            content_length,
        )
        .await?;
    let body = request.into_body().into_data_stream().map_err(std::io::Error::other);
    let mut body = StreamReader::new(body);
    state.app.receive_upload(opened, &mut body).await
}

/// Streamed from the file in small reads: the memory a download holds is
/// a buffer or two, whatever the file's size or the reader's speed.
async fn file(State(state): State<AppState>, Path(name): Path<String>) -> Response {
    let Some((path, served)) = state.app.served_file(&name) else {
        return ApiError::NotFound("no such file".into()).into_response();
    };
    let file = match tokio::fs::File::open(&path).await {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ApiError::NotFound("no such file".into()).into_response();
        }
        Err(e) => return ApiError::Internal(format!("opening a media file: {e}")).into_response(),
    };
    let length = match file.metadata().await {
        Ok(metadata) => metadata.len(),
        Err(e) => return ApiError::Internal(format!("reading a media file: {e}")).into_response(),
    };
    let mut response = Body::from_stream(ReaderStream::new(file)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(served.as_str()));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(CACHE_FOREVER));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(SANDBOX));
    response
}
