//! HTTP conventions every deployment shares (docs/API.md, Conventions):
//! the `X-Request-Id` a request is known by, and the headers CORS allows and
//! exposes, one list for the server and the SAM template's API Gateway.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderName, HeaderValue};

use crate::domain::{PostVersion, new_id};
use crate::error::ApiError;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The request headers a browser may send across origins (the preflight's
/// `Access-Control-Allow-Headers`).
pub const CORS_ALLOWED_HEADERS: [&str; 6] = [
    "content-type",
    "authorization",
    "idempotency-key",
    "if-match",
    "x-pow",
    "admin-enroll-token",
];

/// The response headers a browser script may read across origins.
pub const CORS_EXPOSED_HEADERS: [&str; 7] = [
    "etag",
    "location",
    "retry-after",
    "idempotent-replayed",
    "x-request-id",
    "ratelimit-policy",
    "ratelimit",
];

pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// On the routes that count under a quota or a throttle (docs/API.md,
/// Conventions): the request runs with a slot for its pacing report,
/// and the answer carries it as IETF httpapi ratelimit-headers structured
/// fields: `RateLimit-Policy` lists every limit the request counted
/// against (`"creates";q=30;w=600`), `RateLimit` names the one that will
/// refuse first, what remains of it and the seconds until its window ends
/// (`"creates";r=12;t=300`).
pub async fn rate_limit_headers(request: Request, next: Next) -> Response {
    let (mut response, report) = crate::app::pacing::reporting(next.run(request)).await;
    if let Some(report) = report {
        let policies: Vec<String> = report
            .policies
            .iter()
            .map(|p| format!("\"{}\";q={};w={}", p.label(), p.max, p.window_secs))
            .collect();
        let first = report.policies[report.first].label();
        let state = format!("\"{first}\";r={};t={}", report.remaining, report.reset_secs);
        let headers = response.headers_mut();
        // Names are ASCII letters, digits and `-`; the rest are numbers.
        if let (Ok(policies), Ok(state)) = (
            HeaderValue::from_str(&policies.join(", ")),
            HeaderValue::from_str(&state),
        ) {
            headers.insert(RATELIMIT_POLICY, policies);
            headers.insert(RATELIMIT, state);
        }
    }
    response
}

/// The methods of docs/API.md's routes.
pub const CORS_METHODS: [&str; 4] = ["GET", "POST", "PUT", "DELETE"];

/// A client's request id is kept when it is 1-64 characters of
/// `[A-Za-z0-9._-]`: nothing that could forge a log line or smuggle markup.
pub fn is_tidy_request_id(value: &HeaderValue) -> bool {
    let bytes = value.as_bytes();
    (1..=64).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Gives every request its `X-Request-Id` (the client's when tidy; else,
/// on Lambda, API Gateway's request id, which AWS writes, `=` and all; else a
/// fresh ULID) before anything else reads it, and echoes it on the
/// response, with `X-Content-Type-Options: nosniff`. Every router has it; the server also puts it outermost, before
/// its access log (a second pass keeps the id the first one set).
pub async fn request_id(mut request: Request, next: Next) -> Response {
    let client = request
        .headers()
        .get(&REQUEST_ID)
        .filter(|v| is_tidy_request_id(v))
        .cloned();
    let id = client
        .or_else(|| gateway_request_id(&request))
        .unwrap_or_else(|| HeaderValue::from_str(&new_id()).expect("a ULID is a header value"));
    request.headers_mut().insert(REQUEST_ID, id.clone());
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(REQUEST_ID, id);
    // Every answer, as docs/API.md (Hardening) says: a JSON body is
    // never to be taken for a script or a page, whatever a browser guesses.
    headers.insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(feature = "lambda")]
pub(crate) fn gateway_request_id(request: &Request) -> Option<HeaderValue> {
    let Some(lambda_http::request::RequestContext::ApiGatewayV2(context)) =
        request.extensions().get::<lambda_http::request::RequestContext>()
    else {
        return None;
    };
    context
        .request_id
        .as_deref()
        .and_then(|id| HeaderValue::from_str(id).ok())
}

#[cfg(not(feature = "lambda"))]
pub(crate) fn gateway_request_id(_request: &Request) -> Option<HeaderValue> {
    None
}

/// A post edit's `If-Match`: the versions it may change, `None` when
/// the header is absent or `*`.
#[derive(Debug, Clone, Default)]
pub struct IfMatch(pub Option<Vec<PostVersion>>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for IfMatch {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut http::request::Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let Some(value) = parts.headers.get(http::header::IF_MATCH) else {
            return Ok(IfMatch(None));
        };
        let value = value
            .to_str()
            .map_err(|_| ApiError::invalid("If-Match", "must be `*` or a list of entity tags (\"...\")"))?;
        PostVersion::parse_if_match(value).map(IfMatch)
    }
}

/// `X-Pow`: a solved proof-of-work challenge (docs/API.md, Proof of
/// work for anonymous writes). Read as it came; the use case decides
/// whether it is needed and valid, and answers `428` either way it fails.
#[derive(Debug)]
pub struct PowHeader(pub Option<String>);

/// The proof-of-work header's name.
pub const X_POW: &str = "x-pow";

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for PowHeader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut http::request::Parts, _state: &S) -> Result<Self, Self::Rejection> {
        // A value that is not text cannot be base64: the use case refuses it as malformed.
        Ok(PowHeader(
            parts
                .headers
                .get(X_POW)
                .map(|value| value.to_str().unwrap_or("\u{fffd}").to_owned()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_short_plain_request_ids_are_kept() {
        for kept in ["a", "req-1.2_3", &"x".repeat(64), "01JD3Z8Q6W4G7T2N5B8K1M0AAB"] {
            assert!(is_tidy_request_id(&HeaderValue::from_str(kept).unwrap()), "{kept}");
        }
        for replaced in [
            "",
            &"x".repeat(65),
            "a b",
            "id\"><script>",
            "line\tbreak",
            "ü",
            "a/b",
            "{\"forged\":1}",
        ] {
            let value = HeaderValue::from_bytes(replaced.as_bytes()).unwrap();
            assert!(!is_tidy_request_id(&value), "{replaced}");
        }
    }
}
