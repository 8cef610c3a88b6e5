//! The one place a process is assembled from its [`Config`]: store, hashing
//! and token keys built once, then the application and the HTTP state. The
//! Lambda entry, the server and every test harness call [`build`].

use anyhow::Context as _;

use super::Config;
use crate::app::App;
use crate::app::tags::TagKeys;
use crate::http::AppState;

/// The state serving `config`'s functions. Fails, naming what is wrong,
/// before anything listens.
pub async fn build(config: Config) -> anyhow::Result<AppState> {
    let store = config.store.open().await.context("opening the store")?;
    let app = App::new(store, config.app);
    #[cfg(feature = "hashing")]
    let app = match config.hashing {
        Some(hashing) => app.with_hashing(crate::hashing::Hashing::new(hashing).context("starting password hashing")?),
        None => app,
    };
    #[cfg(feature = "tokens")]
    let app = match &config.jwt_secret {
        Some(secret) => app.with_tokens(crate::app::tokens::JwtKeys::new(secret).map_err(anyhow::Error::msg)?),
        None => app,
    };
    let app = match &config.tag_key {
        Some(super::settings::TagKeySource::Configured { current, previous }) => {
            app.with_tags(TagKeys::new(current, previous.as_ref()).map_err(anyhow::Error::msg)?)
        }
        Some(super::settings::TagKeySource::Derived { current, previous }) => {
            app.with_tags(TagKeys::derived_from(current, previous))
        }
        None => app,
    };
    // (v3) The server purges deleted posts' children off the request; on
    // Lambda the `purge` function does, on the table's stream.
    if matches!(config.deployment, super::Deployment::Server) {
        tokio::spawn(app.clone().purge_in_background());
        // (v4) One read per admin name, at start: not on a Lambda cold start.
        // A store that cannot answer now is no reason not to start.
        #[cfg(feature = "hashing")]
        if let Err(e) = app.warn_about_unclaimed_admin_names().await {
            tracing::warn!(error = %e, "could not look up the ADMIN_USERNAMES accounts");
        }
    }
    Ok(AppState::new(app, config.http))
}
