//! The one place a process is assembled from its [`Config`]: store, hashing
//! and token keys built once, then the application and the HTTP state. The
//! Lambda entry, the server and every test harness call [`build`].

use anyhow::Context as _;
use secrecy::ExposeSecret as _;

use super::Config;
use crate::app::App;
use crate::app::tags::TagKeys;
use crate::http::AppState;

/// The state serving `config`'s functions. Fails, naming what is wrong,
/// before anything listens.
pub async fn build(config: Config) -> anyhow::Result<AppState> {
    check_wiring(&config)?;
    let store = config.store.open().await.context("opening the store")?;
    let media = config.app.media.clone();
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
    let app = match &config.pow_key {
        Some(key) => app.with_pow_key(crate::app::pow::PowKey::new(key.expose_secret().as_bytes())),
        None => app,
    };
    #[cfg(all(feature = "totp", feature = "tokens"))]
    let app = match &config.totp_key {
        Some(source) => app.with_totp(crate::app::totp::TotpKeys::new(&source.keys())),
        None => app,
    };
    let app = with_media(
        app,
        &config.deployment,
        config.data_dir.as_deref(),
        &config.store,
        &media,
    )
    .await?;
    // The server purges deleted posts' children off the request; on
    // Lambda the `purge` function does, on the table's stream.
    let app = match config.deployment {
        // The one process that writes its SQLite file keeps pages and
        // details until a write changes them, and counts views in memory.
        // Its use cases hand what they write to its notifier; on
        // Lambda the table's stream feeds the `notify` function.
        super::Deployment::Server => {
            let (app, events) = app.with_owned_store_reads().with_notifier();
            tokio::spawn(app.clone().notify_in_background(events));
            app
        }
        _ => app,
    };
    if app.buffers_views() {
        tokio::spawn(app.clone().flush_views_in_background());
    }
    if matches!(config.deployment, super::Deployment::Server) {
        // The boards `BOARDS` names exist before the first request (on
        // Lambda the first load of the settings creates what is missing).
        app.seed_boards().await.context("creating the boards BOARDS names")?;
        tokio::spawn(app.clone().purge_in_background());
        // One read per admin name, at start: not on a Lambda cold start.
        // A store that cannot answer now is no reason not to start.
        #[cfg(feature = "passwords")]
        if let Err(e) = app.warn_about_unclaimed_admin_names().await {
            tracing::warn!(error = %e, "could not look up the ADMIN_USERNAMES accounts");
        }
    }
    Ok(AppState::new(app, config.http))
}

/// Images, where a served function grants uploads: on the server
/// uploads come to its own URL, are checked by one background task and
/// kept under `DATA_DIR/media`; on Lambda they go to `MEDIA_BUCKET` by
/// presigned POST (the `media` function checks them on S3's events).
async fn with_media(
    app: App,
    deployment: &super::Deployment,
    data_dir: Option<&std::path::Path>,
    store: &crate::store::StoreSettings,
    settings: &crate::app::media::MediaSettings,
) -> anyhow::Result<App> {
    crate::domain::media::set_base_url(settings.base_url.as_deref().unwrap_or("/media"));
    if !deployment.functions().contains(&crate::function::Function::Media) {
        return Ok(app);
    }
    let _ = store;
    match (deployment, data_dir) {
        #[cfg(feature = "sqlite")]
        (super::Deployment::Server, Some(dir)) => {
            let files = crate::store::files::DiskFiles::open(dir.join("media"))
                .with_context(|| format!("opening {}", dir.join("media").display()))?;
            let key = app
                .tags()
                .map_err(|e| anyhow::anyhow!("{e}"))?
                .derive(crate::app::media::UPLOAD_KEY_LABEL);
            let kit = crate::app::media::MediaKit {
                uploads: crate::app::media::Uploads::Server { key },
                files: Some(std::sync::Arc::new(files)),
                max_bytes: settings.max_bytes,
                served_from: Some(dir.join("media")),
            };
            let (app, checks) = app.with_media(kit).with_media_checker();
            #[cfg(feature = "imaging")]
            tokio::spawn(app.clone().check_media_in_background(checks));
            #[cfg(not(feature = "imaging"))]
            drop(checks);
            Ok(app)
        }
        #[cfg(feature = "s3-files")]
        (super::Deployment::Lambda { .. }, _) => {
            let bucket = settings
                .bucket
                .clone()
                .context("MEDIA_BUCKET is required where the media function runs")?;
            let kit = super::media::s3_kit(store, settings, bucket).await?;
            Ok(app.with_media(kit))
        }
        _ => anyhow::bail!("this build cannot serve images here (features sqlite or s3-files)"),
    }
}

/// A served function whose routes use hashing, tokens or the tag key must be
/// given it: caught here, before anything listens, instead of as a `500`
/// from [`App::hashing`] and its siblings on the first request that needs it
/// (a hand-built [`Config`], as test harnesses and other entry points make).
fn check_wiring(config: &Config) -> anyhow::Result<()> {
    let needs = crate::function::Needs::of(&config.deployment.functions());
    #[cfg(feature = "hashing")]
    let hashing = config.hashing.is_some();
    #[cfg(not(feature = "hashing"))]
    let hashing = false;
    let missing = [
        (needs.hashing && !hashing, "password hashing (PEPPER and the tiers)"),
        (needs.tokens && config.jwt_secret.is_none(), "a JWT secret (JWT_SECRET)"),
        (needs.tags && config.tag_key.is_none(), "a tag key (TAG_KEY)"),
        (
            needs.totp && config.totp_key.is_none(),
            "a TOTP key (TOTP_KEY or PEPPER)",
        ),
    ];
    let missing: Vec<&str> = missing
        .iter()
        .filter(|(absent, _)| *absent)
        .map(|(_, what)| *what)
        .collect();
    anyhow::ensure!(
        missing.is_empty(),
        "the functions served ({:?}) need {}, which this configuration does not give",
        config.deployment.functions(),
        missing.join(", ")
    );
    Ok(())
}

#[cfg(all(test, feature = "hashing", feature = "dynamo"))]
mod tests {
    use super::*;
    use crate::function::Function;
    use crate::runtime::{Deployment, Env};

    fn like_config(pairs: &[(&str, &str)]) -> Config {
        let deployment = Deployment::Lambda {
            functions: vec![Function::Like],
        };
        Config::from(deployment, &Env::from_pairs(pairs)).expect("a like configuration")
    }

    #[test]
    fn a_configuration_missing_what_its_functions_use_is_refused_before_serving() {
        let secret = "x".repeat(40);
        let pairs = [
            ("TABLE_NAME", "boards"),
            ("JWT_SECRET", secret.as_str()),
            ("TAG_KEY", secret.as_str()),
        ];
        assert!(check_wiring(&like_config(&pairs)).is_ok());
        let mut without_tags = like_config(&pairs);
        without_tags.tag_key = None;
        let err = check_wiring(&without_tags).unwrap_err().to_string();
        assert!(err.contains("a tag key (TAG_KEY)") && !err.contains("JWT"), "{err}");
        let mut without_either = like_config(&pairs);
        without_either.tag_key = None;
        without_either.jwt_secret = None;
        let err = check_wiring(&without_either).unwrap_err().to_string();
        assert!(
            err.contains("JWT_SECRET") && err.contains("TAG_KEY") && err.contains("Like"),
            "{err}"
        );
    }
}
