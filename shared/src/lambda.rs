//! What every Lambda function's `main` calls: settings, store and hashing
//! built once per cold start, then API Gateway (HTTP API, payload v2) events
//! handed to the function's routes.

use crate::hashing::Hashing;
use crate::http::auth::JwtKeys;
use crate::http::settings::{Deployment, Settings};
use crate::http::{AppState, Function, router};

/// Builds the function's state from the environment (secrets required).
pub async fn state_from_env() -> Result<AppState, lambda_http::Error> {
    let settings = Settings::from_env(&Deployment::Lambda)?;
    let store = settings.store.open().await?;
    let hashing = Hashing::new(settings.hashing)?;
    let jwt = JwtKeys::new(&settings.jwt_secret)?;
    Ok(AppState::new(store, hashing, jwt, settings.http))
}

pub async fn run(function: Function) -> Result<(), lambda_http::Error> {
    crate::telemetry::init_json();
    let state = state_from_env().await?;
    tracing::info!(function = function.name(), "cold start complete");
    lambda_http::run(router(state, &[function])).await
}
