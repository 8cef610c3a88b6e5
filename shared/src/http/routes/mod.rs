//! The route table of docs/API.md (Routes): which function serves which method and path.
//! The server mounts all of it; each Lambda function mounts its own rows.

use std::collections::BTreeMap;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{MethodFilter, MethodRouter};
use http::{Method, Request};
use tower_http::compression::predicate::{DefaultPredicate, Predicate, SizeAbove};
use tower_http::compression::{CompressionLayer, CompressionLevel};
use tower_http::limit::RequestBodyLimitLayer;

mod table;

pub use table::routes;

use super::AppState;
use super::handlers as h;
use super::input::MAX_BODY_BYTES;
use crate::error::ApiError;
use crate::function::Function;

#[derive(Debug)]
pub struct Route {
    pub function: Function,
    pub method: Method,
    /// axum path syntax, which is also OpenAPI's: `/boards/{slug}/posts`.
    pub path: &'static str,
    /// What docs/openapi.json says of this operation (generated from it).
    pub doc: Doc,
    handler: MethodRouter<AppState>,
}

impl Route {
    /// Whether it takes an `Idempotency-Key` (docs/API.md, Idempotent
    /// creates): its row says so with `.idempotent()`.
    pub fn takes_idempotency_key(&self) -> bool {
        self.doc.idempotent
    }
}

/// An operation as docs/API.md states it: its `operationId` (verb-noun,
/// camelCase, stable: generated clients name their functions from it), the
/// success answer, the request and response types (by schema name) and the
/// error codes only this route gives. The codes every route of its kind
/// answers are added by the OpenAPI generator (`openapi.rs`, `codes`): a
/// body, an `Idempotency-Key`, a bearer token, and those of every route.
/// `precondition_failed` among the codes also declares `If-Match`.
#[derive(Debug, Clone, Copy)]
pub struct Doc {
    pub operation_id: &'static str,
    pub summary: &'static str,
    /// The operation's description: what a client developer needs to know.
    pub details: &'static str,
    pub status: u16,
    pub description: &'static str,
    pub request: Option<BodyType>,
    pub response: Option<BodyType>,
    pub errors: &'static [&'static str],
    /// Another success status with the same body (a repeated report: `200`).
    pub also: Option<(u16, &'static str)>,
    /// docs/API.md's route table: who may call it (`-`, `bearer, staff`...).
    pub auth: &'static str,
    /// docs/API.md's route table: what it answers, in words.
    pub answer: &'static str,
    /// It creates something and takes an `Idempotency-Key`. Every create
    /// does; not a login, a guest vote (once per address by itself), the
    /// TOTP enrollment's two steps (a remembered answer would keep their
    /// secret and recovery codes in the store in the clear), nor marking
    /// notifications read (idempotent by itself).
    pub idempotent: bool,
}

/// A request or response body as a row names it: by its Rust type, whose
/// schema (and those it refers to, recursively) the OpenAPI document
/// lists, so the document's schemas are exactly the ones the rows name.
#[derive(Debug, Clone, Copy)]
pub struct BodyType {
    #[cfg(feature = "openapi")]
    name: fn() -> std::borrow::Cow<'static, str>,
    #[cfg(feature = "openapi")]
    schemas: fn(&mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>),
}

#[cfg(feature = "openapi")]
impl BodyType {
    /// Its schema's name in `components.schemas`.
    pub fn name(&self) -> String {
        (self.name)().into_owned()
    }

    /// Adds its schema and every schema it refers to.
    pub fn collect_schemas(&self, into: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        (self.schemas)(into);
    }
}

/// What a type must be to be a body in the route table: a schema, where
/// the document is built (feature `openapi`); anything, elsewhere.
pub trait NamedBody {
    const TYPE: BodyType;
}

#[cfg(feature = "openapi")]
impl<T: utoipa::ToSchema> NamedBody for T {
    const TYPE: BodyType = BodyType {
        name: T::name,
        schemas: schemas_of::<T>,
    };
}

#[cfg(not(feature = "openapi"))]
impl<T> NamedBody for T {
    const TYPE: BodyType = BodyType {};
}

#[cfg(feature = "openapi")]
fn schemas_of<T: utoipa::ToSchema>(into: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
    into.push((T::name().into_owned(), T::schema()));
    T::schemas(into);
}

const fn doc(operation_id: &'static str, summary: &'static str, status: u16, description: &'static str) -> Doc {
    Doc {
        operation_id,
        summary,
        details: "",
        status,
        description,
        request: None,
        response: None,
        errors: &[],
        also: None,
        auth: "-",
        answer: "",
        idempotent: false,
    }
}

impl Doc {
    /// Its row in docs/API.md's route table: who may call it and what it answers.
    const fn listed(mut self, auth: &'static str, answer: &'static str) -> Self {
        self.auth = auth;
        self.answer = answer;
        self
    }
}

// Some builders go unused where the routes that call them are compiled out.
#[cfg_attr(not(any(feature = "hashing", feature = "tokens")), expect(dead_code))]
impl Doc {
    /// It takes an `Idempotency-Key`.
    const fn idempotent(mut self) -> Self {
        self.idempotent = true;
        self
    }

    const fn details(mut self, text: &'static str) -> Self {
        self.details = text;
        self
    }

    const fn takes<T: NamedBody>(mut self) -> Self {
        self.request = Some(T::TYPE);
        self
    }

    const fn returns<T: NamedBody>(mut self) -> Self {
        self.response = Some(T::TYPE);
        self
    }

    const fn errors(mut self, codes: &'static [&'static str]) -> Self {
        self.errors = codes;
        self
    }
}

// Only the moderation routes (with `tokens`) answer a second success.
#[cfg_attr(not(feature = "tokens"), expect(dead_code))]
impl Doc {
    const fn or(mut self, status: u16, description: &'static str) -> Self {
        self.also = Some((status, description));
        self
    }
}

fn route(function: Function, method: Method, path: &'static str, doc: Doc, handler: MethodRouter<AppState>) -> Route {
    Route {
        function,
        method,
        path,
        doc,
        handler,
    }
}

fn filter(method: &Method) -> MethodFilter {
    MethodFilter::try_from(method.clone()).expect("route methods are standard methods")
}

/// A router serving `functions`' routes and `GET /health`; unknown paths
/// answer 404 and known paths with another method 405, in docs/API.md's shape.
pub fn router(state: AppState, functions: &[Function]) -> Router {
    let mut by_path: BTreeMap<&'static str, MethodRouter<AppState>> = BTreeMap::new();
    for r in routes().into_iter().filter(|r| functions.contains(&r.function)) {
        #[cfg(any(feature = "hashing", feature = "tokens"))]
        let handler = if r.takes_idempotency_key() {
            let reading = super::idempotency::KeyReading {
                state: state.clone(),
                success_status: r.doc.status,
            };
            r.handler.layer(axum::middleware::from_fn_with_state(
                reading,
                super::idempotency::read_key,
            ))
        } else {
            r.handler
        };
        #[cfg(not(any(feature = "hashing", feature = "tokens")))]
        let handler = r.handler;
        // Where a quota or throttle counts, the answer says how much is
        // left (docs/API.md, Conventions).
        let handler = if r
            .doc
            .errors
            .iter()
            .any(|c| matches!(*c, "rate_limited" | "too_many_attempts"))
        {
            handler.layer(axum::middleware::from_fn(super::conventions::rate_limit_headers))
        } else {
            handler
        };
        // Outermost on a route with a body: before the key is read.
        let handler = if r.doc.request.is_some() {
            handler.layer(axum::middleware::from_fn(super::input::require_json))
        } else {
            handler
        };
        // Outermost of all: the request's span is named after its route.
        let handler = handler.layer(axum::middleware::from_fn_with_state(
            super::traced::RouteName {
                method: r.method.clone(),
                path: r.path,
                function: r.function,
                operation_id: r.doc.operation_id,
            },
            super::traced::name_route,
        ));
        let merged = match by_path.remove(r.path) {
            Some(existing) => existing.merge(handler),
            None => handler,
        };
        by_path.insert(r.path, merged);
    }
    let mut router = Router::new().route("/health", axum::routing::get(h::health));
    for (path, handler) in by_path {
        router = router.route(path, handler);
    }
    router
        .fallback(|| async { ApiError::NotFound("no such path".into()) })
        .method_not_allowed_fallback(|request: Request<axum::body::Body>| async move {
            ApiError::MethodNotAllowed(request.method().to_string())
        })
        .layer(DefaultBodyLimit::disable())
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(super::traced::trace_request))
        .layer(axum::middleware::map_response(payload_too_large_in_api_shape))
        .layer(compression())
        .layer(axum::middleware::map_request(gzip_on_a_tie))
        // Outermost: every answer, a 404 or 413 too, carries the request's id.
        .layer(axum::middleware::from_fn(super::conventions::request_id))
        .with_state(state)
}

/// Answers of at least this many bytes are compressed when the request
/// allows it (docs/API.md, Conventions v4); below it the encoding's own
/// framing (a gzip header and trailer are 18 bytes) eats most of the gain.
pub const COMPRESS_FROM_BYTES: u16 = 1024;

/// A request that accepts gzip at least as gladly as br is answered gzip:
/// its `Accept-Encoding` loses the `br` entry before the compression layer
/// reads it (tower-http takes br on a tie, and every browser sends a tie).
/// At these levels gzip (zlib-rs, level 1) costs about half br's CPU per
/// answer for bytes within 1-12% of br's (docs/benchmarks.md, Compression):
/// on 2 cores, the read path's throughput. A client that prefers br
/// (`br, gzip;q=0.5`, or br alone) still gets br.
async fn gzip_on_a_tie(mut request: axum::extract::Request) -> axum::extract::Request {
    let Some(value) = request.headers().get(http::header::ACCEPT_ENCODING) else {
        return request;
    };
    let Some(kept) = value.to_str().ok().and_then(without_br_on_a_tie) else {
        return request;
    };
    if let Ok(kept) = http::HeaderValue::from_str(&kept) {
        request.headers_mut().insert(http::header::ACCEPT_ENCODING, kept);
    }
    request
}

/// `accept_encoding` without its `br` entries when it names gzip with a
/// q-value above 0 and at least br's; `None` when it stays as it is.
fn without_br_on_a_tie(accept_encoding: &str) -> Option<String> {
    let q_of = |coding: &str| {
        accept_encoding.split(',').find_map(|entry| {
            let mut parts = entry.split(';');
            let name = parts.next()?.trim();
            if !name.eq_ignore_ascii_case(coding) {
                return None;
            }
            let q = parts
                .find_map(|p| {
                    p.trim()
                        .strip_prefix("q=")
                        .map(|q| q.trim().parse::<f32>().unwrap_or(0.0))
                })
                .unwrap_or(1.0);
            Some(q)
        })
    };
    let (gzip, br) = (q_of("gzip")?, q_of("br")?);
    (gzip > 0.0 && gzip >= br).then(|| {
        accept_encoding
            .split(',')
            .filter(|entry| !entry.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("br"))
            .collect::<Vec<_>>()
            .join(",")
    })
}

/// gzip or br, as the request's `Accept-Encoding` prefers (gzip on a tie),
/// for answers of [`COMPRESS_FROM_BYTES`] or more; tower-http's default
/// predicate also leaves images, gRPC and event streams alone, and skips an
/// answer that already has a `Content-Encoding`. Every compressible answer
/// carries `Vary: Accept-Encoding`, compressed or not, so caches keep the
/// encodings apart. At the fastest levels (gzip 1, br 0): an answer is
/// compressed anew each time (a page or detail carries live view counts),
/// and tower-http's defaults (gzip 6, br 4) cost 2-3 times a cached read's
/// CPU for 10-25% fewer bytes (docs/benchmarks.md, Compression). API
/// Gateway HTTP APIs do not compress, so the Lambda functions do it here
/// too; lambda_http sends a body with a `Content-Encoding` base64-encoded,
/// as API Gateway expects of binary.
fn compression() -> CompressionLayer<impl Predicate> {
    CompressionLayer::new()
        .quality(CompressionLevel::Fastest)
        .no_deflate()
        .no_zstd()
        .compress_when(DefaultPredicate::new().and(SizeAbove::new(COMPRESS_FROM_BYTES)))
}

/// tower-http refuses a declared length over the limit before reading the
/// body (and cuts off an undeclared one after it); its 413 is plain text, so
/// it is answered again in docs/API.md's error shape.
async fn payload_too_large_in_api_shape(response: axum::response::Response) -> axum::response::Response {
    if response.status() == http::StatusCode::PAYLOAD_TOO_LARGE {
        return axum::response::IntoResponse::into_response(ApiError::body_too_large());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::without_br_on_a_tie;

    #[test]
    fn br_gives_way_to_gzip_only_on_a_tie() {
        assert_eq!(
            without_br_on_a_tie("gzip, deflate, br, zstd").as_deref(),
            Some("gzip, deflate, zstd")
        );
        assert_eq!(
            without_br_on_a_tie("br;q=0.9, gzip;q=0.9").as_deref(),
            Some(" gzip;q=0.9")
        );
        assert_eq!(without_br_on_a_tie("BR, GZIP").as_deref(), Some(" GZIP"));
        for kept in ["br", "gzip", "br, gzip;q=0.5", "gzip;q=0, br", "identity", ""] {
            assert_eq!(without_br_on_a_tie(kept), None, "{kept}");
        }
    }
}
