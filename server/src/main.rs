//! `cargo run --release -p server`: every route of docs/API.md on one port
//! (default 127.0.0.1:3000), SQLite under `./data` unless `TABLE_NAME` is set.

use anyhow::Context as _;
use server::{ServerSettings, app, serve, shutdown_signal};
use shared::runtime::{Config, Deployment, Env};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = Env::process();
    let telemetry = shared::runtime::telemetry::init("server", &env)?;
    let settings = ServerSettings::from_env(&env)?;
    let config = Config::from(Deployment::Server, &env)?;
    tracing::info!(config = %config, server = %settings, "configuration");
    let mut connections = settings.connections.clone();
    // A trusted proxy carries many clients' connections: no per-address cap.
    connections.exempt = config.http.trusted_proxies.clone();
    let state = shared::runtime::build(config).await?;
    let app_at_shutdown = state.app.clone();
    let address = (settings.bind.as_str(), settings.port);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("binding {}:{}", settings.bind, settings.port))?;
    tracing::info!(address = %listener.local_addr()?, "listening");
    serve(
        listener,
        app(state, &settings.cors_origins),
        connections,
        shutdown_signal(),
    )
    .await?;
    // Views counted in memory since the last flush (docs/operations.md).
    match app_at_shutdown.flush_views().await {
        Ok(flushed) => tracing::info!(posts = flushed.posts, views = flushed.views, "wrote the counted views"),
        Err(e) => tracing::error!(error = %e, "could not write the counted views at shutdown: they are lost"),
    }
    // The spans of the last requests (batched on the server).
    telemetry.shutdown().await;
    Ok(())
}
