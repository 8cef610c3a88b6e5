//! `cargo run --release -p server`: every route of API.md on one port
//! (default 127.0.0.1:3000), SQLite under `./data` unless `TABLE_NAME` is set.

use std::path::PathBuf;

use anyhow::Context as _;
use shared::hashing::Hashing;
use shared::http::AppState;
use shared::http::auth::JwtKeys;
use shared::http::settings::{Deployment, Settings};
use shared::server::{app, serve, shutdown_signal};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    shared::telemetry::init_json();
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let data_dir = PathBuf::from(env("DATA_DIR").unwrap_or_else(|| "./data".into()));
    let settings = Settings::from_env(&Deployment::Server { data_dir })?;
    let store = settings.store.open().await.context("opening the store")?;
    let hashing = Hashing::new(settings.hashing)?;
    let jwt = JwtKeys::new(&settings.jwt_secret).map_err(anyhow::Error::msg)?;
    let cors: Vec<String> = env("CORS_ORIGINS")
        .map(|list| {
            list.split(',')
                .map(|o| o.trim().to_owned())
                .filter(|o| !o.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let address = format!(
        "{}:{}",
        env("BIND").unwrap_or_else(|| "127.0.0.1".into()),
        env("PORT").unwrap_or_else(|| "3000".into())
    );
    let listener = tokio::net::TcpListener::bind(&address)
        .await
        .with_context(|| format!("binding {address}"))?;
    let member = hashing.engine().policy(shared::hashing::Tier::Member);
    let guest = hashing.engine().policy(shared::hashing::Tier::Guest);
    tracing::info!(
        address = %listener.local_addr()?,
        store = ?settings.store,
        member_tier = %member.algorithm,
        guest_tier = %guest.algorithm,
        hash_workers = hashing.gate().workers(),
        hash_queue = hashing.gate().queue(),
        "listening"
    );
    let state = AppState::new(store, hashing, jwt, settings.http);
    serve(listener, app(state, &cors), shutdown_signal()).await?;
    Ok(())
}
