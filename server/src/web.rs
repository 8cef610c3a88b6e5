//! (v3) The reference web client (`web/`, README: Open it), served at `/`
//! and `/assets/*` beside the API's routes, which keep their paths. The
//! files are built into the binary, so `cargo run -p server` serves them
//! from any directory; on AWS the same folder goes to S3 + CloudFront
//! (docs/deploy.md, The web client).

use axum::Router;
use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderValue, StatusCode, header};
use shared::error::ApiError;

/// Each file of `web/` by its path under `/assets/`, with its media type.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/app.js"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/api.js"),
    ),
    (
        "dom.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/dom.js"),
    ),
    (
        "config.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/config.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../web/assets/style.css"),
    ),
];

const INDEX: &str = include_str!("../../web/index.html");

/// Only this server's own scripts and styles run, whatever a post says;
/// the API may be another origin (an API Gateway URL), so any https origin
/// may be fetched.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self' https:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'";

pub(crate) fn routes() -> Router {
    Router::new()
        .route("/", get(|| async { file("text/html; charset=utf-8", INDEX) }))
        .route("/assets/{name}", get(asset))
}

async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(file, _, _)| *file == name) {
        Some((_, media_type, body)) => file(media_type, body),
        None => ApiError::NotFound("no such file".into()).into_response(),
    }
}

fn file(media_type: &'static str, body: &'static str) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    // Revalidated on every load: a new build is seen at once.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}
