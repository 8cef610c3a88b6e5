//! The one place a process is assembled from its [`Config`]: store, hashing
//! and token keys built once, then the application and the HTTP state. The
//! Lambda entry, the server and every test harness call [`build`].

use anyhow::Context as _;

use crate::app::App;
use crate::app::tokens::JwtKeys;
use crate::config::Config;
use crate::hashing::Hashing;
use crate::http::AppState;

/// The state serving `config`'s functions. Fails, naming what is wrong,
/// before anything listens.
pub async fn build(config: Config) -> anyhow::Result<AppState> {
    let store = config.store.open().await.context("opening the store")?;
    let hashing = config
        .hashing
        .map(Hashing::new)
        .transpose()
        .context("starting password hashing")?;
    let tokens = config
        .jwt_secret
        .as_ref()
        .map(JwtKeys::new)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let app = App::new(store, hashing, tokens, config.boards, config.throttle);
    Ok(AppState {
        app,
        trust_proxy: config.server.is_some_and(|s| s.trust_proxy),
    })
}
