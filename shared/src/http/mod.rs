//! The HTTP adapter shared by every Lambda function and the single-process
//! server: typed extractors turn the path, query and body into the
//! application's commands, and [`ApiError`] turns failures into responses
//! (docs/API.md, Errors).

#[cfg(feature = "tokens")]
pub mod auth;
pub mod client_ip;
pub mod conventions;
mod handlers;
#[cfg(any(feature = "hashing", feature = "tokens"))]
pub mod idempotency;
pub mod input;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod paths;
#[cfg(feature = "openapi")]
pub mod route_docs;
pub mod routes;
#[cfg(feature = "openapi")]
pub mod schema;
mod settings;
pub mod traced;
pub mod viewer;

use axum::Json;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, header};
use serde_json::json;

pub use crate::error::ApiError;
pub use crate::function::Function;
pub use routes::{Route, router, routes};
pub use settings::HttpSettings;

use crate::app::App;

/// What every handler gets: built once per process (per cold start on
/// Lambda), shared behind one `Arc`, since every request and every
/// middleware clones its state.
#[derive(Debug, Clone)]
pub struct AppState(std::sync::Arc<Handled>);

/// What [`AppState`] shares.
#[derive(Debug)]
pub struct Handled {
    pub app: App,
    /// Server mode only: proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

impl AppState {
    pub fn new(app: App, settings: HttpSettings) -> Self {
        AppState(std::sync::Arc::new(Handled {
            app,
            trusted_proxies: settings.trusted_proxies,
        }))
    }
}

impl std::ops::Deref for AppState {
    type Target = Handled;

    fn deref(&self) -> &Handled {
        &self.0
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(detail) = &self {
            tracing::error!(error = %detail, "internal error");
        }
        let mut body = match self.field() {
            Some(field) => json!({"error": {"code": self.code(), "field": field, "message": self.to_string()}}),
            None => json!({"error": {"code": self.code(), "message": self.to_string()}}),
        };
        // The challenge to solve sits beside the error.
        if let ApiError::PowRequired { challenge, .. } = &self {
            body["challenge"] = challenge.clone();
        }
        let mut response = (self.status(), Json(body)).into_response();
        // Also here, not only in the router's outermost layer: the server
        // answers a request over its time outside the router.
        response
            .headers_mut()
            .insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        if matches!(self, ApiError::PayloadTooLarge { .. } | ApiError::UnsupportedMediaType) {
            // The rest of the body was never read: this connection cannot
            // carry another request, and a client that pools it would fail.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if self.status() == http::StatusCode::UNAUTHORIZED {
            // RFC 6750: which scheme to use, and whether the token sent was refused.
            let challenge = match self {
                ApiError::InvalidToken(_) => "Bearer error=\"invalid_token\"",
                _ => "Bearer",
            };
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
        }
        if let Some(seconds) = self.retry_after() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
