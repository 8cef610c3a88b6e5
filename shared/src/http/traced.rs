//! A span per request (docs/operations.md, Traces): the method and
//! route (`POST /boards/{slug}/posts`), the status, the function that serves
//! the route, the operation id, the request id and, on Lambda, API Gateway's
//! own request id. A W3C `traceparent` from the caller makes it a child of
//! the caller's span. Store calls and hashes are its children. The span is
//! on the `traces` target: with traces off it is never created.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument as _;
use tracing::field::Empty;

use super::conventions::{REQUEST_ID, gateway_request_id};
use crate::function::Function;

/// Outermost in the router: opens the request's span.
pub async fn trace_request(request: Request, next: Next) -> Response {
    let span = tracing::info_span!(
        target: "traces",
        "request",
        otel.name = %request.method(),
        otel.kind = "server",
        otel.status_code = Empty,
        http.request.method = %request.method(),
        http.route = Empty,
        url.path = request.uri().path(),
        http.response.status_code = Empty,
        faas.name = Empty,
        operation.id = Empty,
        request.id = Empty,
        aws.request_id = Empty,
        faas.invocation_id = Empty,
    );
    if span.is_disabled() {
        return next.run(request).await;
    }
    #[cfg(feature = "traces")]
    {
        use opentelemetry::propagation::TextMapPropagator as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let caller = opentelemetry_sdk::propagation::TraceContextPropagator::new()
            .extract(&opentelemetry_http::HeaderExtractor(request.headers()));
        // Only fails once the span has been entered; it has not.
        let _ = span.set_parent(caller);
    }
    if let Some(id) = request.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()) {
        span.record("request.id", id);
    }
    if let Some(id) = gateway_request_id(&request).as_ref().and_then(|v| v.to_str().ok()) {
        span.record("aws.request_id", id);
    }
    #[cfg(feature = "lambda")]
    if let Some(context) = request.extensions().get::<lambda_http::Context>() {
        span.record("faas.invocation_id", context.request_id.as_str());
    }
    let response = next.run(request).instrument(span.clone()).await;
    let status = response.status();
    span.record("http.response.status_code", status.as_u16());
    if status.is_server_error() {
        span.record("otel.status_code", "error");
    }
    response
}

/// Which route a request matched, for its span (one per route, made by the router).
#[derive(Debug, Clone)]
pub struct RouteName {
    pub method: http::Method,
    pub path: &'static str,
    pub function: Function,
    pub operation_id: &'static str,
}

/// On each route: names the request's span after the route.
pub async fn name_route(State(route): State<RouteName>, request: Request, next: Next) -> Response {
    let span = tracing::Span::current();
    if !span.is_disabled() {
        span.record("otel.name", format!("{} {}", route.method, route.path));
        span.record("http.route", route.path);
        span.record("faas.name", route.function.name());
        span.record("operation.id", route.operation_id);
    }
    next.run(request).await
}
