//! `cargo run --release -p server`: every route of docs/API.md on one port
//! (default 127.0.0.1:3000), SQLite under `./data` unless `TABLE_NAME` is set.

use anyhow::Context as _;
use server::{app, serve, shutdown_signal};
use shared::config::{Config, Deployment};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    shared::telemetry::init_json();
    let config = Config::from_env(Deployment::Server)?;
    let settings = config.server.clone().context("server settings")?;
    tracing::info!(config = %config, "configuration");
    let state = shared::wiring::build(config).await?;
    let address = (settings.bind.as_str(), settings.port);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("binding {}:{}", settings.bind, settings.port))?;
    tracing::info!(address = %listener.local_addr()?, "listening");
    serve(
        listener,
        app(state, &settings.cors_origins),
        settings.connections,
        shutdown_signal(),
    )
    .await?;
    Ok(())
}
