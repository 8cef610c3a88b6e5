//! The one place a process is assembled from its [`Config`]: store, hashing
//! and token keys built once, then the application and the HTTP state. The
//! Lambda entry, the server and every test harness call [`build`].

use anyhow::Context as _;

use crate::app::App;
use crate::config::Config;
use crate::http::AppState;

/// The state serving `config`'s functions. Fails, naming what is wrong,
/// before anything listens.
pub async fn build(config: Config) -> anyhow::Result<AppState> {
    let store = config.store.open().await.context("opening the store")?;
    #[allow(unused_mut)]
    let mut app = App::new(store, config.boards, config.limits);
    #[cfg(feature = "hashing")]
    if let Some(hashing) = config.hashing {
        let hashing = crate::hashing::Hashing::new(hashing).context("starting password hashing")?;
        app = app.with_hashing(hashing);
    }
    #[cfg(feature = "tokens")]
    if let Some(secret) = &config.jwt_secret {
        let keys = crate::app::tokens::JwtKeys::new(secret).map_err(anyhow::Error::msg)?;
        app = app.with_tokens(keys);
    }
    Ok(AppState {
        app,
        trusted_proxies: config.server.map(|s| s.trusted_proxies).unwrap_or_default(),
    })
}
