//! The application's settings from the environment: `BOARDS`, (v3) `ADMIN_USERNAMES` and `BLOCKED_WORDS`, (v4) `ADMIN_ENROLL_TOKEN`, and every
//! `LIMIT_*` (`LIMIT_LOGIN_USER_ADDRESS=5/5m`, ... or `off`).

use super::{ConfigError, Env};
use crate::app::AdminEnrollToken;
use crate::app::AppSettings;
use crate::app::throttle::{Limit, Limits};
use crate::domain::{BlockedWords, Boards, Username};

pub(super) fn app_settings(env: &Env<'_>) -> Result<AppSettings, ConfigError> {
    Ok(AppSettings {
        boards: match env.get("BOARDS") {
            Some(list) => Boards::parse_list(&list).map_err(ConfigError::Invalid)?,
            None => Boards::default(),
        },
        limits: limits(env)?,
        admins: admins(env)?,
        blocked_words: BlockedWords::parse_list(&env.get("BLOCKED_WORDS").unwrap_or_default()),
        admin_enroll_token: env
            .get("ADMIN_ENROLL_TOKEN")
            .filter(|token| !token.is_empty())
            .map(AdminEnrollToken::parse)
            .transpose()
            .map_err(ConfigError::Invalid)?,
    })
}

/// `ADMIN_USERNAMES`: a comma list of usernames, each well formed.
fn admins(env: &Env<'_>) -> Result<Vec<String>, ConfigError> {
    let list = env.get("ADMIN_USERNAMES").unwrap_or_default();
    list.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| {
            Username::parse(name.to_owned())
                .map(Username::into_inner)
                .map_err(|_| ConfigError::invalid(format!("ADMIN_USERNAMES: {name:?} is not a username")))
        })
        .collect()
}

/// The v1 names (`THROTTLE_*`) are refused, naming their replacement, so a
/// deployment does not silently run with the defaults.
fn limits(env: &Env<'_>) -> Result<Limits, ConfigError> {
    for old in ["THROTTLE_LOGIN_USERNAME", "THROTTLE_LOGIN_IP", "THROTTLE_GUEST"] {
        if env.get(old).is_some() {
            return Err(ConfigError::invalid(format!(
                "{old} is gone: set LIMIT_LOGIN_USER_ADDRESS, LIMIT_LOGIN_ADDRESS, LIMIT_LOGIN_USER, LIMIT_GUEST_TARGET_ADDRESS or LIMIT_GUEST_TARGET (docs/configuration.md)"
            )));
        }
    }
    let mut limits = Limits::default();
    for (name, limit) in limits.named() {
        if let Some(value) = env.get(name) {
            *limit = Limit::parse(name, &value).map_err(ConfigError::Invalid)?;
        }
    }
    Ok(limits)
}
