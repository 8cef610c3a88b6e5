//! The application's settings from the environment: `BOARDS` and every
//! `LIMIT_*` (`LIMIT_LOGIN_USER_ADDRESS=5/5m`, ... or `off`).

use super::{ConfigError, Env};
use crate::app::AppSettings;
use crate::app::throttle::{Limit, Limits};
use crate::domain::Boards;

pub(super) fn app_settings(env: &Env<'_>) -> Result<AppSettings, ConfigError> {
    Ok(AppSettings {
        boards: match env.get("BOARDS") {
            Some(list) => Boards::parse_list(&list).map_err(ConfigError::Invalid)?,
            None => Boards::default(),
        },
        limits: limits(env)?,
    })
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
