//! Failure throttling (docs/API.md, Throttling and quotas): failures are counted per key in
//! fixed windows; once a key reaches its limit, further attempts are refused
//! with 429 and `Retry-After` until the window ends, before any hashing.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::domain::Window;
use crate::error::ApiError;
use crate::store::{AttemptKey, Attempts};

/// At most `max` failures per `window_secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub max: u64,
    pub window_secs: i64,
}

impl Limit {
    /// Parses `max/seconds`, e.g. `5/300`.
    pub fn parse(setting: &str, value: &str) -> Result<Self, String> {
        let parsed = value.split_once('/').and_then(|(max, secs)| {
            Some(Limit {
                max: max.trim().parse().ok().filter(|m| *m > 0)?,
                window_secs: secs.trim().parse().ok().filter(|s| *s > 0)?,
            })
        });
        parsed.ok_or_else(|| format!("{setting} must be `<max failures>/<window seconds>`, e.g. 5/300; got {value:?}"))
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.max, self.window_secs)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottlePolicy {
    pub login_per_username: Limit,
    pub login_per_ip: Limit,
    pub guest_per_target_and_ip: Limit,
}

impl Default for ThrottlePolicy {
    fn default() -> Self {
        ThrottlePolicy {
            login_per_username: Limit {
                max: 5,
                window_secs: 300,
            },
            login_per_ip: Limit {
                max: 50,
                window_secs: 300,
            },
            guest_per_target_and_ip: Limit {
                max: 10,
                window_secs: 600,
            },
        }
    }
}

pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Attempts counted on each key before hashing, to give back on success.
#[derive(Debug)]
pub struct Reservation(Vec<(AttemptKey, Window)>);

/// Counts this attempt as a failure on every key *before* any hashing, and
/// refuses it when a key is over its limit. Counting first is what makes the
/// limit hold under concurrency: concurrent attempts each get their own count,
/// so no more than `max` of them reach the hash. A refused attempt gives its
/// counts back at once (it ran no hash and is no failure), so attempts in
/// flight refuse others only while they are in flight. The caller gives the
/// reservation back with [`forgive`] unless the password check failed.
pub async fn reserve(store: &dyn Attempts, keys: &[(AttemptKey, Limit)]) -> Result<Reservation, ApiError> {
    let now = unix_now();
    let mut retry_after = None;
    let mut reserved = Reservation(Vec::new());
    for (key, limit) in keys {
        let window = Window::containing(now, limit.window_secs);
        let counted = match store.record_failure(key, window).await {
            Ok(counted) => counted,
            Err(e) => {
                forgive(store, reserved).await;
                return Err(e.into());
            }
        };
        reserved.0.push((key.clone(), window));
        if counted > limit.max {
            let wait = (window.end() - now).max(1) as u64;
            retry_after = Some(retry_after.map_or(wait, |w: u64| w.max(wait)));
        }
    }
    match retry_after {
        Some(retry_after) => {
            forgive(store, reserved).await;
            Err(ApiError::TooManyAttempts { retry_after })
        }
        None => Ok(reserved),
    }
}

/// Takes a reservation back after a successful check. Best effort: a store
/// hiccup here must not fail a login that succeeded.
pub async fn forgive(store: &dyn Attempts, reservation: Reservation) {
    for (key, window) in reservation.0 {
        if let Err(e) = store.forgive_failure(&key, window).await {
            tracing::warn!(error = %e, "could not take back a counted attempt");
        }
    }
}

pub fn login_keys(policy: &ThrottlePolicy, username: &str, ip: &str) -> Vec<(AttemptKey, Limit)> {
    vec![
        (AttemptKey(format!("login:user:{username}")), policy.login_per_username),
        (AttemptKey(format!("login:ip:{ip}")), policy.login_per_ip),
    ]
}

pub fn guest_keys(policy: &ThrottlePolicy, target_id: &str, ip: &str) -> Vec<(AttemptKey, Limit)> {
    vec![(
        AttemptKey(format!("guest:{target_id}:{ip}")),
        policy.guest_per_target_and_ip,
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_from_settings() {
        assert_eq!(
            Limit::parse("X", "5/300"),
            Ok(Limit {
                max: 5,
                window_secs: 300
            })
        );
        assert!(
            Limit::parse("THROTTLE_LOGIN_USERNAME", "5")
                .unwrap_err()
                .starts_with("THROTTLE_LOGIN_USERNAME")
        );
        assert!(Limit::parse("X", "0/300").is_err());
    }
}
