//! The application's settings from the environment: `BOARDS`, `ADMIN_USERNAMES`,
//! `BLOCKED_WORDS`, `ADMIN_ENROLL_TOKEN`, every `LIMIT_*`
//! (`LIMIT_LOGIN_USER_ADDRESS=5/5m`, ... or `off`), the `POW_*` thresholds
//! and the member password and TOTP settings.

use super::{ConfigError, Env};
use crate::app::AdminEnrollToken;
use crate::app::AppSettings;
use crate::app::PasswordSettings;
use crate::app::media::MediaSettings;
use crate::app::pow::{PowMode, PowSettings};
use crate::app::throttle::{Limit, Limits};
use crate::domain::{BlockedWords, Boards, MEMBER_PASSWORD_MIN, Username};

pub(crate) fn app_settings(env: &Env<'_>) -> Result<AppSettings, ConfigError> {
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
        pow: pow(env)?,
        passwords: passwords(env)?,
        media: media(env)?,
    })
}

/// `MEDIA_MAX_BYTES` (1 byte to 100 MiB; default 20 MiB),
/// `MEDIA_BUCKET`, `MEDIA_BASE_URL` (an `https://` origin, or a path).
fn media(env: &Env<'_>) -> Result<MediaSettings, ConfigError> {
    let defaults = MediaSettings::default();
    let max_bytes = env
        .number("MEDIA_MAX_BYTES", 1u64, "a whole number of bytes of at least 1")?
        .unwrap_or(defaults.max_bytes);
    if max_bytes > 100 * 1024 * 1024 {
        return Err(ConfigError::invalid(format!(
            "MEDIA_MAX_BYTES must be at most 104857600 (100 MiB), not {max_bytes}"
        )));
    }
    let base_url = env.get("MEDIA_BASE_URL").filter(|url| !url.trim().is_empty());
    if let Some(url) = &base_url
        && !(url.starts_with("https://") || url.starts_with("http://") || url.starts_with('/'))
    {
        return Err(ConfigError::invalid(format!(
            "MEDIA_BASE_URL must be an http(s) origin or a path, not {url:?}"
        )));
    }
    Ok(MediaSettings {
        max_bytes,
        bucket: env.get("MEDIA_BUCKET").filter(|b| !b.trim().is_empty()),
        base_url,
        s3_endpoint: env.get("S3_ENDPOINT").filter(|e| !e.trim().is_empty()),
    })
}

/// `MEMBER_PASSWORD_MIN` (8-64), `PASSWORD_POLICY` (`nist` or
/// unset), `STAFF_REQUIRE_TOTP` (default true), `TOTP_ISSUER`.
fn passwords(env: &Env<'_>) -> Result<PasswordSettings, ConfigError> {
    let defaults = PasswordSettings::default();
    let member_min = env
        .number(
            "MEMBER_PASSWORD_MIN",
            MEMBER_PASSWORD_MIN,
            "a whole number of at least 8 (NIST SP 800-63B-4)",
        )?
        .unwrap_or(defaults.member_min);
    if member_min > 64 {
        return Err(ConfigError::invalid(format!(
            "MEMBER_PASSWORD_MIN must be at most 64 (NIST: allow at least 64 characters), not {member_min}"
        )));
    }
    let nist = match env.get("PASSWORD_POLICY").as_deref().map(str::trim) {
        None | Some("" | "default") => false,
        Some("nist") => true,
        Some(other) => {
            return Err(ConfigError::invalid(format!(
                "PASSWORD_POLICY must be nist or default, not {other:?}"
            )));
        }
    };
    let staff_require_totp = match env.get("STAFF_REQUIRE_TOTP") {
        None => defaults.staff_require_totp,
        Some(_) => env.flag("STAFF_REQUIRE_TOTP")?,
    };
    let totp_issuer = match env.get("TOTP_ISSUER") {
        None => defaults.totp_issuer,
        Some(issuer) if issuer.trim().is_empty() || issuer.contains(':') || issuer.chars().count() > 64 => {
            return Err(ConfigError::invalid(
                "TOTP_ISSUER must be 1-64 characters without a colon (authenticator apps split on it)",
            ));
        }
        Some(issuer) => issuer.trim().to_owned(),
    };
    Ok(PasswordSettings {
        member_min,
        nist,
        staff_require_totp,
        totp_issuer,
    })
}

/// `POW`, `POW_FREE_WRITES`, `POW_BOARD_RATE`, `POW_MAXNUMBER` (the key,
/// `POW_KEY`, is a secret: the composition root reads it).
fn pow(env: &Env<'_>) -> Result<PowSettings, ConfigError> {
    let defaults = PowSettings::default();
    let maxnumber = env
        .number("POW_MAXNUMBER", 1, "a whole number of at least 1 (the difficulty)")?
        .unwrap_or(defaults.maxnumber);
    if maxnumber > MAX_POW_MAXNUMBER {
        return Err(ConfigError::invalid(format!(
            "POW_MAXNUMBER must be at most {MAX_POW_MAXNUMBER}, not {maxnumber}"
        )));
    }
    Ok(PowSettings {
        mode: env
            .get("POW")
            .map(|mode| PowMode::parse(&mode))
            .transpose()
            .map_err(ConfigError::Invalid)?
            .unwrap_or(defaults.mode),
        free_writes: env
            .number(
                "POW_FREE_WRITES",
                0,
                "a whole number (0: every anonymous write needs a proof)",
            )?
            .unwrap_or(defaults.free_writes),
        board_rate: env
            .number("POW_BOARD_RATE", 1, "a whole number of writes a minute, at least 1")?
            .unwrap_or(defaults.board_rate),
        maxnumber,
    })
}

/// A difficulty no browser solves in under a minute: a typo, not a choice.
const MAX_POW_MAXNUMBER: u64 = 100_000_000;

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
                "{old} is gone: set LIMIT_LOGIN_USER_ADDRESS, LIMIT_LOGIN_ADDRESS, LIMIT_LOGIN_FAILURES_USER, LIMIT_GUEST_TARGET_ADDRESS or LIMIT_GUEST_TARGET (docs/configuration.md)"
            )));
        }
    }
    let mut limits = Limits::default();
    for (name, limit) in limits.named() {
        if let Some((read, value)) = limit_setting(env, name) {
            *limit = Limit::parse(read, &value).map_err(ConfigError::Invalid)?;
        }
    }
    Ok(limits)
}

/// `LIMIT_LOGIN_FAILURES_USER` was `LIMIT_LOGIN_USER`, one letter away from
/// `LIMIT_LOGINS_USER` (successes). The old name is still read when the new
/// one is unset; either way a deployment that sets it is warned at start.
const LOGIN_FAILURES_USER: &str = "LIMIT_LOGIN_FAILURES_USER";
const LOGIN_FAILURES_USER_DEPRECATED: &str = "LIMIT_LOGIN_USER";

/// The value of the limit `name` and the setting it was read from.
fn limit_setting(env: &Env<'_>, name: &'static str) -> Option<(&'static str, String)> {
    let value = env.get(name);
    if name != LOGIN_FAILURES_USER {
        return value.map(|value| (name, value));
    }
    match (value, env.get(LOGIN_FAILURES_USER_DEPRECATED)) {
        (value, None) => value.map(|value| (name, value)),
        (None, Some(old)) => {
            tracing::warn!(
                "{LOGIN_FAILURES_USER_DEPRECATED} is deprecated: rename it {LOGIN_FAILURES_USER} (read as that for now)"
            );
            Some((LOGIN_FAILURES_USER_DEPRECATED, old))
        }
        (Some(value), Some(_)) => {
            tracing::warn!(
                "{LOGIN_FAILURES_USER_DEPRECATED} is deprecated and ignored: {LOGIN_FAILURES_USER} is set too, and wins"
            );
            Some((name, value))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// The limits of `pairs`, and what was logged while reading them.
    fn limits_logged(pairs: &[(&str, &str)]) -> (Limits, String) {
        let logged = Arc::new(Mutex::new(Vec::new()));
        let writer = {
            let logged = logged.clone();
            move || LogBuffer(logged.clone())
        };
        let subscriber = tracing_subscriber::fmt().with_writer(writer).with_ansi(false).finish();
        let limits = tracing::subscriber::with_default(subscriber, || limits(&Env::from_pairs(pairs))).unwrap();
        let logged = String::from_utf8(logged.lock().unwrap().clone()).unwrap();
        (limits, logged)
    }

    struct LogBuffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for LogBuffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_old_name_of_the_login_failures_limit_is_read_with_a_warning_and_the_new_one_wins() {
        let (limits, logged) = limits_logged(&[("LIMIT_LOGIN_FAILURES_USER", "7/5m")]);
        assert_eq!(limits.login_user, Some(Limit::new(7, 300)));
        assert!(logged.is_empty(), "{logged}");

        let (limits, logged) = limits_logged(&[("LIMIT_LOGIN_USER", "4/15m")]);
        assert_eq!(limits.login_user, Some(Limit::new(4, 900)), "the old name is read");
        assert!(
            logged.contains("WARN")
                && logged.contains("LIMIT_LOGIN_USER is deprecated: rename it LIMIT_LOGIN_FAILURES_USER"),
            "{logged}"
        );

        let both = [("LIMIT_LOGIN_USER", "4/15m"), ("LIMIT_LOGIN_FAILURES_USER", "off")];
        let (limits, logged) = limits_logged(&both);
        assert_eq!(limits.login_user, None, "the new name wins");
        assert!(
            logged.contains("LIMIT_LOGIN_USER is deprecated and ignored: LIMIT_LOGIN_FAILURES_USER is set too"),
            "{logged}"
        );

        let err = super::limits(&Env::from_pairs(&[("LIMIT_LOGIN_USER", "often")])).unwrap_err();
        assert!(
            err.to_string().starts_with("LIMIT_LOGIN_USER must be"),
            "names the setting it read: {err}"
        );
        assert_eq!(
            Limits::default().login_user,
            Some(Limit::new(100, 900)),
            "unset: the default"
        );
    }
}
