//! The one configuration of a process, read from the environment here
//! (docs/configuration.md): each deployment asks for what its functions
//! need. On Lambda a function without password hashing needs no pepper and
//! one that neither issues nor checks tokens needs no JWT secret; the server
//! serves everything and generates missing secrets once under `DATA_DIR`.
//! Every error names its setting. Each layer owns its settings type and
//! prints it; [`Config`]'s `Display` joins them into the redacted line
//! logged at start (secrets show only whether they are set).

use std::fmt;
use std::path::PathBuf;

use secrecy::SecretString;

use super::Env;
use crate::app::AppSettings;
use crate::function::{Function, Needs};
#[cfg(feature = "hashing")]
use crate::hashing::{self, HashingConfig};
use crate::http::HttpSettings;
use crate::store::StoreSettings;

mod tag_key;
#[cfg(all(test, feature = "hashing", feature = "sqlite", feature = "dynamo"))]
mod tests;
mod totp_key;

pub(crate) use tag_key::TagKeySource;
pub(crate) use totp_key::TotpKeySource;

/// A configuration that cannot run; the message names the setting.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Invalid(String),
    #[cfg(feature = "hashing")]
    #[error(transparent)]
    Hashing(#[from] hashing::ConfigError),
}

impl ConfigError {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        ConfigError::Invalid(message.into())
    }
}

#[cfg(feature = "dynamo")]
impl From<crate::aws::AwsError> for ConfigError {
    fn from(e: crate::aws::AwsError) -> Self {
        ConfigError::Invalid(e.to_string())
    }
}

/// The `PEPPER` value that means "no pepper", deliberately: passwords are then
/// limited to bcrypt's 72 bytes and tiers must be bcrypt cost 10 or more.
pub const UNPEPPERED: &str = "none";

/// Where the process runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deployment {
    /// Lambda functions serving `functions` (one, except in tests).
    Lambda { functions: Vec<Function> },
    /// The single-process server: every function, secrets kept under `DATA_DIR`.
    Server,
}

impl Deployment {
    pub fn functions(&self) -> Vec<Function> {
        match self {
            Deployment::Lambda { functions } => functions.clone(),
            Deployment::Server => Function::ALL.to_vec(),
        }
    }
}

#[derive(Debug)]
pub struct Config {
    pub deployment: Deployment,
    pub store: StoreSettings,
    /// Present when a served function hashes passwords.
    #[cfg(feature = "hashing")]
    pub hashing: Option<HashingConfig>,
    /// Present when a served function issues or checks bearer tokens.
    pub jwt_secret: Option<SecretString>,
    /// Present when a served function writes on boards or checks bans.
    pub tag_key: Option<TagKeySource>,
    /// `POW_KEY` where set (at least 32 bytes); otherwise the
    /// proof-of-work key is derived from the tag key.
    pub pow_key: Option<SecretString>,
    /// Present when a served function checks or manages TOTP.
    pub totp_key: Option<TotpKeySource>,
    pub app: AppSettings,
    pub http: HttpSettings,
    /// Server mode: where the SQLite file and generated secrets live.
    pub data_dir: Option<PathBuf>,
}

impl Config {
    pub fn from_env(deployment: Deployment) -> Result<Self, ConfigError> {
        Self::from(deployment, &Env::process())
    }

    pub fn from(deployment: Deployment, env: &Env<'_>) -> Result<Self, ConfigError> {
        let needs = Needs::of(&deployment.functions());
        let data_dir = match deployment {
            Deployment::Server => Some(PathBuf::from(
                env.get("DATA_DIR").unwrap_or_else(|| "./data".to_owned()),
            )),
            Deployment::Lambda { .. } => None,
        };
        let secret = |name: &str| -> Result<String, ConfigError> {
            match (env.get(name), &data_dir) {
                (Some(value), _) => Ok(value),
                (None, Some(dir)) => super::local_secrets::local_secret(dir, &name.to_ascii_lowercase()),
                (None, None) => Err(ConfigError::invalid(format!(
                    "{name} is required on Lambda: set {name}_ARN (a Secrets Manager secret) or {name}"
                ))),
            }
        };
        let http = match deployment {
            Deployment::Server => super::http::http_settings(env)?,
            Deployment::Lambda { .. } => HttpSettings::default(),
        };
        let jwt_secret = needs
            .tokens
            .then(|| secret("JWT_SECRET"))
            .transpose()?
            .map(SecretString::from);
        #[cfg(feature = "hashing")]
        let hashing = if needs.hashing {
            let pepper = Some(secret("PEPPER")?).filter(|p| p != UNPEPPERED);
            Some(super::hashing::for_deployment(env, &deployment, pepper)?)
        } else {
            None
        };
        #[cfg(not(feature = "hashing"))]
        if needs.hashing {
            return Err(ConfigError::invalid(
                "this build has no password hashing (feature `hashing`)",
            ));
        }
        #[cfg(not(feature = "tokens"))]
        if needs.tokens {
            return Err(ConfigError::invalid(
                "this build has no bearer tokens (feature `tokens`)",
            ));
        }
        let tag_key = needs
            .tags
            .then(|| tag_key::source(env, &secret, data_dir.is_some()))
            .transpose()?;
        let pow_key = match env.get("POW_KEY").filter(|_| needs.tags) {
            Some(key) if key.len() < crate::app::tags::MIN_KEY_BYTES => {
                return Err(ConfigError::invalid(format!(
                    "POW_KEY must be at least {} bytes (it is {})",
                    crate::app::tags::MIN_KEY_BYTES,
                    key.len()
                )));
            }
            key => key.map(SecretString::from),
        };
        let totp_key = needs
            .totp
            .then(|| totp_key::source(env, &secret, data_dir.is_some()))
            .transpose()?;
        let store = super::store::store_settings(env, data_dir.as_deref())?;
        if data_dir.is_none() && !store.is_dynamo() {
            return Err(ConfigError::invalid("TABLE_NAME is required on Lambda"));
        }
        Ok(Config {
            deployment,
            store,
            #[cfg(feature = "hashing")]
            hashing,
            jwt_secret,
            tag_key,
            pow_key,
            totp_key,
            app: super::app::app_settings(env)?,
            http,
            data_dir,
        })
    }
}

/// The redacted summary printed at start: no secret value, only whether it is set.
impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let functions: Vec<&str> = self.deployment.functions().iter().map(|f| f.name()).collect();
        write!(f, "functions={} {}", functions.join(","), self.store)?;
        #[cfg(feature = "hashing")]
        if let Some(hashing) = &self.hashing {
            write!(f, " {hashing}")?;
        }
        if self.jwt_secret.is_some() {
            write!(f, " jwt_secret=set")?;
        }
        if let Some(tag_key) = &self.tag_key {
            write!(f, " {tag_key}")?;
            write!(f, " pow_key={}", if self.pow_key.is_some() { "set" } else { "derived" })?;
        }
        if let Some(totp_key) = &self.totp_key {
            write!(f, " {totp_key}")?;
        }
        write!(f, " {}", self.app)?;
        if let Some(dir) = &self.data_dir {
            write!(f, " data_dir={} {}", dir.display(), self.http)?;
        }
        Ok(())
    }
}

/// The pepper and the ones it replaced (`PEPPER_PREVIOUS`), what keys are
/// derived from where no key of their own is set; `None` with `PEPPER=none`.
fn pepper_and_previous(
    env: &Env<'_>,
    secret: &dyn Fn(&str) -> Result<String, ConfigError>,
) -> Result<Option<(SecretString, Vec<SecretString>)>, ConfigError> {
    let pepper = secret("PEPPER")?;
    if pepper == UNPEPPERED {
        return Ok(None);
    }
    let previous = env
        .list("PEPPER_PREVIOUS")
        .unwrap_or_default()
        .into_iter()
        .map(SecretString::from)
        .collect();
    Ok(Some((SecretString::from(pepper), previous)))
}
