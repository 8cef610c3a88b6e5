//! What every Lambda function's `main` calls: configuration, store and
//! hashing built once per cold start, then API Gateway (HTTP API, payload v2)
//! events handed to the function's routes.

use crate::config::{Config, Deployment};
use crate::function::Function;
use crate::http::router;

pub async fn run(function: Function) -> Result<(), lambda_http::Error> {
    crate::telemetry::init_json();
    let deployment = Deployment::Lambda {
        functions: vec![function],
    };
    let env = crate::config::Env::process();
    #[cfg(feature = "secrets")]
    let resolved = crate::secrets::resolve(function.needs(), &env, None).await?;
    #[cfg(feature = "secrets")]
    let env = crate::secrets::overlay(&env, &resolved);
    let config = Config::from(deployment, &env)?;
    tracing::info!(function = function.name(), config = %config, "configuration");
    let state = crate::wiring::build(config).await?;
    tracing::info!(function = function.name(), "cold start complete");
    lambda_http::run(router(state, &[function])).await
}
