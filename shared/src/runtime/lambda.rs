//! What every Lambda function's `main` calls: configuration, store and
//! hashing built once per cold start, then API Gateway (HTTP API, payload v2)
//! events handed to the function's routes: one at a time on classic Lambda,
//! up to `AWS_LAMBDA_MAX_CONCURRENCY` at once on Lambda Managed Instances,
//! sharing the environment's store client and hashing gate.

use super::{Config, Deployment, Env};
use crate::function::Function;
use crate::http::router;

pub async fn run(function: Function) -> Result<(), lambda_http::Error> {
    super::telemetry::init_json();
    let deployment = Deployment::Lambda {
        functions: vec![function],
    };
    let env = Env::process();
    #[cfg(feature = "secrets")]
    let resolved = super::secrets::resolve(function.needs(), &env, None).await?;
    #[cfg(feature = "secrets")]
    let env = super::secrets::overlay(&env, &resolved);
    let config = Config::from(deployment, &env)?;
    tracing::info!(function = function.name(), config = %config, "configuration");
    let state = super::wiring::build(config).await?;
    tracing::info!(function = function.name(), "cold start complete");
    // run_concurrent needs answers that are Sync: axum's body is not, so
    // each answer is turned into a lambda_http response (as `run` does
    // internally) before it leaves the service.
    let routes = router(state, &[function]).layer(axum::middleware::from_fn(crate::http::conventions::request_id));
    let service = tower::ServiceExt::<lambda_http::Request>::map_future(routes, |answer| async move {
        let response = answer.await?;
        Ok::<_, std::convert::Infallible>(lambda_http::IntoResponse::into_response(response).await)
    });
    lambda_http::run_concurrent(service).await
}

/// (v3) The `purge` function's `main`: no route, no secret; the table's
/// stream hands it the inserts of purge markers (docs/storage.md, Deleting
/// a post), one batch at a time, and it answers which record failed.
#[cfg(feature = "stream")]
pub async fn run_purge() -> Result<(), lambda_http::Error> {
    use lambda_http::{LambdaEvent, service_fn};
    super::telemetry::init_json();
    let config = Config::from(Deployment::Lambda { functions: Vec::new() }, &Env::process())?;
    tracing::info!(function = "purge", config = %config, "configuration");
    let app = super::wiring::build(config).await?.app;
    tracing::info!(function = "purge", "cold start complete");
    let app = &app;
    lambda_http::lambda_runtime::run(service_fn(
        move |event: LambdaEvent<aws_lambda_events::event::dynamodb::Event>| async move {
            Ok::<_, std::convert::Infallible>(crate::stream::purge_records(app, event.payload).await)
        },
    ))
    .await
}
