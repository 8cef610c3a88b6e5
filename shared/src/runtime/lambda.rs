//! What every Lambda function's `main` calls: configuration, store and
//! hashing built once per cold start, then API Gateway (HTTP API, payload v2)
//! events handed to the function's routes: one at a time on classic Lambda,
//! up to `AWS_LAMBDA_MAX_CONCURRENCY` at once on Lambda Managed Instances,
//! sharing the environment's store client and hashing gate.

use super::{Config, Deployment, Env};
use crate::function::Function;
use crate::http::router;

/// A route function's cold start: telemetry, its secrets, its
/// configuration and the wired state.
async fn cold_start(
    function: Function,
) -> Result<(crate::http::AppState, super::telemetry::Telemetry), lambda_http::Error> {
    let env = Env::process();
    let telemetry = super::telemetry::init(function.name(), &env)?;
    let deployment = Deployment::Lambda {
        functions: vec![function],
    };
    #[cfg(feature = "secrets")]
    let resolved = super::secrets::resolve(function.needs(), &env, None).await?;
    #[cfg(feature = "secrets")]
    let env = super::secrets::overlay(&env, &resolved);
    let config = Config::from(deployment, &env)?;
    tracing::info!(function = function.name(), config = %config, "configuration");
    let state = super::wiring::build(config).await?;
    tracing::info!(function = function.name(), "cold start complete");
    Ok((state, telemetry))
}

pub async fn run(function: Function) -> Result<(), lambda_http::Error> {
    let (state, telemetry) = cold_start(function).await?;
    // run_concurrent needs answers that are Sync: axum's body is not, so
    // each answer is turned into a lambda_http response (as `run` does
    // internally) before it leaves the service.
    // The router gives every answer its X-Request-Id (API Gateway's id) itself.
    let routes = router(state, &[function]);
    // With traces on, each invocation's spans are sent before its
    // answer (docs/operations.md, Traces): the environment may freeze as
    // soon as it answers. lambda_runtime's OpenTelemetryLayer does the same
    // but its service is not Clone, which run_concurrent needs.
    let service = tower::ServiceExt::<lambda_http::Request>::map_future(routes, move |answer| {
        let telemetry = telemetry.clone();
        async move {
            let response = answer.await?;
            let response = lambda_http::IntoResponse::into_response(response).await;
            telemetry.flush().await;
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    lambda_http::run_concurrent(service).await
}

/// A stream function's cold start: telemetry, its configuration (no
/// route, no secret) and the use cases.
#[cfg(feature = "stream")]
async fn stream_cold_start(
    name: &'static str,
) -> Result<(crate::app::App, super::telemetry::Telemetry), lambda_http::Error> {
    let env = Env::process();
    let telemetry = super::telemetry::init(name, &env)?;
    let config = Config::from(Deployment::Lambda { functions: Vec::new() }, &env)?;
    tracing::info!(function = name, config = %config, "configuration");
    let app = super::wiring::build(config).await?.app.clone();
    tracing::info!(function = name, "cold start complete");
    Ok((app, telemetry))
}

/// The `purge` function's `main`: no route, no secret; the table's
/// stream hands it the inserts of purge markers (docs/storage.md, Deleting
/// a post), one batch at a time, and it answers which record failed.
/// Its schedule invokes it too, to finish what account deletions and
/// purges left pending within the invocation's time (`crate::stream::handle`).
#[cfg(feature = "stream")]
pub async fn run_purge() -> Result<(), lambda_http::Error> {
    use lambda_http::{LambdaEvent, service_fn};
    use tracing::Instrument as _;
    let (app, telemetry) = stream_cold_start("purge").await?;
    let (app, telemetry) = (&app, &telemetry);
    lambda_http::lambda_runtime::run(service_fn(move |event: LambdaEvent<serde_json::Value>| async move {
        let deadline = invocation_deadline(event.context.deadline);
        let records = event
            .payload
            .get("Records")
            .and_then(|r| r.as_array())
            .map_or(0, Vec::len);
        let span = tracing::info_span!(
            target: "traces",
            "purge",
            otel.name = "purge batch",
            faas.trigger = if records > 0 { "datasource" } else { "timer" },
            faas.invocation_id = %event.context.request_id,
            records,
        );
        let answer = crate::stream::handle(app, event.payload, deadline)
            .instrument(span)
            .await;
        telemetry.flush().await;
        answer.map_err(lambda_http::Error::from)
    }))
    .await
}

/// The `notify` function's `main`: no route, no secret; the
/// table's stream hands it the writes, deletes and disownings of posts and
/// comments (`crate::stream::notify`), one batch at a time, and it answers
/// which record failed.
#[cfg(feature = "stream")]
pub async fn run_notify() -> Result<(), lambda_http::Error> {
    use lambda_http::{LambdaEvent, service_fn};
    use tracing::Instrument as _;
    let (app, telemetry) = stream_cold_start("notify").await?;
    let (app, telemetry) = (&app, &telemetry);
    lambda_http::lambda_runtime::run(service_fn(move |event: LambdaEvent<serde_json::Value>| async move {
        let records = event
            .payload
            .get("Records")
            .and_then(|r| r.as_array())
            .map_or(0, Vec::len);
        let span = tracing::info_span!(
            target: "traces",
            "notify",
            otel.name = "notify batch",
            faas.trigger = "datasource",
            faas.invocation_id = %event.context.request_id,
            records,
        );
        let answer = crate::stream::notify::handle(app, event.payload).instrument(span).await;
        telemetry.flush().await;
        answer.map_err(lambda_http::Error::from)
    }))
    .await
}

/// The `media` function's `main`: its routes (API Gateway), the
/// media bucket's upload events and its schedule, one event at a time (a
/// check of a large image takes its memory once: docs/DESIGN.md, Images).
#[cfg(all(feature = "s3-files", feature = "imaging"))]
pub async fn run_media() -> Result<(), lambda_http::Error> {
    use lambda_http::{LambdaEvent, service_fn};
    use tracing::Instrument as _;
    let (state, telemetry) = cold_start(Function::Media).await?;
    let app = state.app.clone();
    let routes = router(state, &[Function::Media]);
    let (app, routes, telemetry) = (&app, &routes, &telemetry);
    lambda_http::lambda_runtime::run(service_fn(move |event: LambdaEvent<serde_json::Value>| async move {
        let span = tracing::info_span!(
            target: "traces",
            "media",
            otel.name = "media event",
            faas.invocation_id = %event.context.request_id,
        );
        let answer = super::media_lambda::handle(app, routes, event.payload, event.context)
            .instrument(span)
            .await;
        telemetry.flush().await;
        answer
    }))
    .await
}

/// The invocation's deadline (Lambda's, in milliseconds since the epoch) as
/// an `Instant`.
#[cfg(feature = "stream")]
fn invocation_deadline(deadline_ms: u64) -> std::time::Instant {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    std::time::Instant::now() + std::time::Duration::from_millis(deadline_ms.saturating_sub(now_ms))
}
