//! The reference web client (`web/`, README: Open it), served at `/`
//! and `/assets/*` beside the API's routes, which keep their paths. The
//! files are built into the binary, so `cargo run -p server` serves them
//! from any directory; on AWS the same folder goes to S3 + CloudFront
//! (docs/deploy.md, The web client).

use std::sync::LazyLock;

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

/// The origin `web/assets/config.js` names as the API's (`API_ORIGIN`), or
/// None for the page's own. The file is built in, so this is read once.
fn configured_api_origin(config: &str) -> Option<&str> {
    config
        .lines()
        .find_map(|line| line.trim().strip_prefix("export const API_ORIGIN ="))
        .map(|value| value.trim().trim_end_matches(';').trim().trim_matches('"'))
        .filter(|origin| !origin.is_empty())
}

/// Only this server's own scripts and styles run, whatever a post says, and
/// the page may connect to exactly the one origin its client sends requests
/// to (docs/API.md, Hardening v4: a policy allowing any https origin let a
/// script send the token anywhere).
fn content_security_policy(config: &str) -> String {
    let connect = configured_api_origin(config).unwrap_or("'self'");
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src {connect}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"
    )
}

static CONTENT_SECURITY_POLICY: LazyLock<HeaderValue> = LazyLock::new(|| {
    let config = ASSETS
        .iter()
        .find(|(file, _, _)| *file == "config.js")
        .map_or("", |(_, _, body)| *body);
    HeaderValue::from_str(&content_security_policy(config)).expect("config.js's API_ORIGIN is a plain origin")
});

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
    headers.insert(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY.clone());
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connect_src(policy: &str) -> &str {
        policy
            .split("; ")
            .find_map(|directive| directive.strip_prefix("connect-src "))
            .expect("a connect-src directive")
    }

    #[test]
    fn the_shipped_client_may_connect_to_its_own_origin_only() {
        assert_eq!(CONTENT_SECURITY_POLICY.to_str().map(connect_src).ok(), Some("'self'"));
    }

    #[test]
    fn a_configured_api_origin_is_the_only_origin_the_page_may_connect_to() {
        let config = "// a comment\nexport const API_ORIGIN = \"https://abc.execute-api.eu-west-1.amazonaws.com\";\n";
        assert_eq!(
            connect_src(&content_security_policy(config)),
            "https://abc.execute-api.eu-west-1.amazonaws.com"
        );
        assert_eq!(
            connect_src(&content_security_policy("export const API_ORIGIN = \"\";")),
            "'self'"
        );
    }
}
