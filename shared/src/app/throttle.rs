//! Failure throttling (docs/API.md, Throttling and quotas): failures are counted per key in
//! fixed windows; once a key reaches its limit, further attempts are refused
//! with 429 and `Retry-After` until the window ends, before any hashing.

use std::time::{SystemTime, UNIX_EPOCH};

use futures_util::future::join_all;

use super::pacing;
use crate::domain::Window;
use crate::error::ApiError;
use crate::store::{AttemptKey, Attempts};

/// At most `max` events per `window_secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub max: u64,
    pub window_secs: i64,
}

impl Limit {
    pub const fn new(max: u64, window_secs: i64) -> Self {
        Limit { max, window_secs }
    }

    /// `N/<duration>` (`5/5m`, `50/1h`, `10/600s`; a bare number is
    /// seconds), or `off` for no limit.
    pub fn parse(setting: &str, value: &str) -> Result<Option<Self>, String> {
        let value = value.trim();
        if value.eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        let parsed = value.split_once('/').and_then(|(max, window)| {
            let window = window.trim();
            let (number, unit) = match window.find(|c: char| !c.is_ascii_digit()) {
                Some(at) => window.split_at(at),
                None => (window, "s"),
            };
            let scale = match unit {
                "s" => 1,
                "m" => 60,
                "h" => 3600,
                "d" => 86_400,
                _ => return None,
            };
            Some(Limit {
                max: max.trim().parse().ok().filter(|m| *m > 0)?,
                window_secs: number.parse::<i64>().ok().filter(|n| *n > 0)?.checked_mul(scale)?,
            })
        });
        parsed
            .map(Some)
            .ok_or_else(|| format!("{setting} must be `<count>/<duration>` (e.g. 5/5m, 50/1h) or `off`; got {value:?}"))
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let w = self.window_secs;
        match w {
            _ if w % 3600 == 0 => write!(f, "{}/{}h", self.max, w / 3600),
            _ if w % 60 == 0 => write!(f, "{}/{}m", self.max, w / 60),
            _ => write!(f, "{}/{}s", self.max, w),
        }
    }
}

/// Every limit of docs/API.md, Throttling and quotas; `None` is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Login failures per username and client address.
    pub login_user_address: Option<Limit>,
    /// Login failures per client address, whatever the usernames.
    pub login_address: Option<Limit>,
    /// Login failures per username from all addresses together.
    pub login_user: Option<Limit>,
    /// Guest password failures per target and client address.
    pub guest_target_address: Option<Limit>,
    /// Guest password failures per target from all addresses.
    pub guest_target: Option<Limit>,
    /// Creates of posts and comments per client address.
    pub creates_address: Option<Limit>,
    /// Creates of posts and comments per member.
    pub creates_member: Option<Limit>,
    /// Signups per client address.
    pub signups_address: Option<Limit>,
    /// Successful logins per username.
    pub logins_user: Option<Limit>,
    /// Password checks of every kind, right or wrong, per client address.
    pub password_checks_address: Option<Limit>,
    /// Reports per client address.
    pub reports_address: Option<Limit>,
    /// Guest votes per client address.
    pub guest_votes_address: Option<Limit>,
    /// Image upload grants per client address.
    pub uploads_address: Option<Limit>,
    /// Image upload grants per member.
    pub uploads_member: Option<Limit>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            login_user_address: Some(Limit::new(5, 300)),
            login_address: Some(Limit::new(50, 300)),
            login_user: Some(Limit::new(100, 900)),
            guest_target_address: Some(Limit::new(10, 600)),
            guest_target: Some(Limit::new(50, 3600)),
            creates_address: Some(Limit::new(30, 600)),
            creates_member: Some(Limit::new(60, 600)),
            signups_address: Some(Limit::new(10, 3600)),
            logins_user: Some(Limit::new(30, 600)),
            password_checks_address: Some(Limit::new(120, 600)),
            reports_address: Some(Limit::new(10, 3600)),
            guest_votes_address: Some(Limit::new(30, 3600)),
            uploads_address: Some(Limit::new(30, 600)),
            uploads_member: Some(Limit::new(60, 600)),
        }
    }
}

impl Limits {
    /// Each limit by its setting name, for configuration and the start-up summary.
    pub fn named(&mut self) -> [(&'static str, &mut Option<Limit>); 14] {
        [
            ("LIMIT_LOGIN_USER_ADDRESS", &mut self.login_user_address),
            ("LIMIT_LOGIN_ADDRESS", &mut self.login_address),
            ("LIMIT_LOGIN_FAILURES_USER", &mut self.login_user),
            ("LIMIT_GUEST_TARGET_ADDRESS", &mut self.guest_target_address),
            ("LIMIT_GUEST_TARGET", &mut self.guest_target),
            ("LIMIT_CREATES_ADDRESS", &mut self.creates_address),
            ("LIMIT_CREATES_MEMBER", &mut self.creates_member),
            ("LIMIT_SIGNUPS_ADDRESS", &mut self.signups_address),
            ("LIMIT_LOGINS_USER", &mut self.logins_user),
            ("LIMIT_PASSWORD_CHECKS_ADDRESS", &mut self.password_checks_address),
            ("LIMIT_REPORTS_ADDRESS", &mut self.reports_address),
            ("LIMIT_GUEST_VOTES_ADDRESS", &mut self.guest_votes_address),
            ("LIMIT_UPLOADS_ADDRESS", &mut self.uploads_address),
            ("LIMIT_UPLOADS_MEMBER", &mut self.uploads_member),
        ]
    }
}

/// What a refusal answers: a password-failure throttle or a write quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    TooManyAttempts,
    RateLimited,
}

pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Attempts counted on each key before hashing, to give back on success.
#[derive(Debug)]
pub struct Reservation(Vec<(AttemptKey, Window)>);

impl Reservation {
    /// Nothing counted.
    pub fn none() -> Self {
        Reservation(Vec::new())
    }

    /// The counts made on these keys, in these windows.
    pub(crate) fn of(counted: Vec<(AttemptKey, Window)>) -> Self {
        Reservation(counted)
    }

    /// Takes `other`'s counts in: they are kept or given back with these.
    pub fn absorb(&mut self, other: Reservation) {
        self.0.extend(other.0);
    }

    /// Splits off the counts of `keys` (one kind of limit), to give back
    /// apart from the others.
    pub fn take(&mut self, keys: &[(AttemptKey, Limit)]) -> Reservation {
        let (taken, kept) = std::mem::take(&mut self.0)
            .into_iter()
            .partition(|(key, _)| keys.iter().any(|(k, _)| k == key));
        self.0 = kept;
        Reservation(taken)
    }
}

/// Counts this attempt as a failure on every key *before* any hashing, and
/// refuses it when a key is over its limit. Counting first is what makes the
/// limit hold under concurrency: concurrent attempts each get their own count,
/// so no more than `max` of them reach the hash. A refused attempt gives its
/// counts back at once (it ran no hash and is no failure), so attempts in
/// flight refuse others only while they are in flight. The caller gives the
/// reservation back with [`forgive`] unless the password check failed.
pub async fn reserve(
    store: &dyn Attempts,
    keys: &[(AttemptKey, Limit)],
    refusal: Refusal,
) -> Result<Reservation, ApiError> {
    let now = unix_now();
    // The keys are independent counters: count them side by side, one round
    // trip instead of one per limit.
    let counts = join_all(keys.iter().map(|(key, limit)| async move {
        let window = Window::containing(now, limit.window_secs);
        store
            .record_failure(key, window)
            .await
            .map(|counted| (key, *limit, window, counted))
    }))
    .await;
    let mut retry_after = None;
    let mut failure = None;
    let mut reserved = Reservation(Vec::new());
    // (policy, count with this attempt, seconds to the window's end, key).
    let mut states = Vec::with_capacity(keys.len());
    for count in counts {
        match count {
            Ok((key, limit, window, counted)) => {
                reserved.0.push((key.clone(), window));
                let wait = (window.end() - now).max(1) as u64;
                if counted > limit.max {
                    retry_after = Some(retry_after.map_or(wait, |w: u64| w.max(wait)));
                }
                states.push((pacing::policy_of(key, limit.max, limit.window_secs), counted, wait, key));
            }
            Err(e) => failure = Some(e),
        }
    }
    if let Some(e) = failure {
        forgive(store, reserved).await;
        return Err(e.into());
    }
    // What a client may pace by (docs/API.md, Conventions): after a
    // write counted under a quota, and on every refusal. The one to name
    // refuses first: the least remaining, then the longest wait.
    if retry_after.is_some() || refusal == Refusal::RateLimited {
        // A refused attempt is given back everywhere: what remains is what
        // was there before it (0 where it was refused).
        let taken_back = u64::from(retry_after.is_some());
        let remaining = |(policy, counted, ..): &(pacing::Policy, u64, u64, &AttemptKey)| {
            policy.max.saturating_sub(counted - taken_back)
        };
        let first = (0..states.len()).min_by_key(|&i| (remaining(&states[i]), std::cmp::Reverse(states[i].2)));
        if let Some(first) = first {
            pacing::keep(pacing::QuotaReport {
                remaining: remaining(&states[first]),
                reset_secs: states[first].2,
                key: states[first].3.clone(),
                first,
                policies: states.into_iter().map(|(policy, ..)| policy).collect(),
            });
        }
    }
    match retry_after {
        Some(retry_after) => {
            // Refused: nothing stays counted, and the report says 0 left.
            forgive_uncounted(store, reserved).await;
            Err(match refusal {
                Refusal::TooManyAttempts => ApiError::TooManyAttempts { retry_after },
                Refusal::RateLimited => ApiError::RateLimited { retry_after },
            })
        }
        None => Ok(reserved),
    }
}

/// [`reserve`] for a write that already holds `earlier` (its proof-of-work
/// board count): a refusal here gives those back too, and a reservation
/// holds both from then on, kept or given back together.
pub async fn reserve_after(
    store: &dyn Attempts,
    keys: &[(AttemptKey, Limit)],
    refusal: Refusal,
    earlier: Reservation,
) -> Result<Reservation, ApiError> {
    match reserve(store, keys, refusal).await {
        Ok(mut reservation) => {
            reservation.absorb(earlier);
            Ok(reservation)
        }
        Err(refused) => {
            forgive(store, earlier).await;
            Err(refused)
        }
    }
}

/// Takes a reservation back after a successful check. Best effort: a store
/// hiccup here must not fail a login that succeeded.
pub async fn forgive(store: &dyn Attempts, reservation: Reservation) {
    let keys: Vec<AttemptKey> = reservation.0.iter().map(|(key, _)| key.clone()).collect();
    pacing::given_back(&keys);
    forgive_uncounted(store, reservation).await;
}

/// [`forgive`] for a refused attempt, which the pacing report already
/// counts as refused.
async fn forgive_uncounted(store: &dyn Attempts, reservation: Reservation) {
    let give_backs = reservation
        .0
        .iter()
        .map(|(key, window)| store.forgive_failure(key, *window));
    for result in join_all(give_backs).await {
        if let Err(e) = result {
            tracing::warn!(error = %e, "could not take back a counted attempt");
        }
    }
}

/// A password check the hashing gate shed (`error`, its 503): the counts of
/// `checks` (the address's password checks, per address and /48) stay, as
/// one attempt, and the `others` are given back. A client looping into a
/// full queue spends its budget as if it had been checked, so a shed is no
/// free retry. Any other error gives everything back (no verdict).
pub async fn settle_unchecked(
    store: &dyn Attempts,
    error: &ApiError,
    checks: Reservation,
    others: impl IntoIterator<Item = Reservation>,
) {
    // The only 503 a hashing call answers is a shed for want of queue space.
    if matches!(error, ApiError::Unavailable { .. }) {
        forgive_all(store, others).await;
    } else {
        forgive_all(store, others.into_iter().chain([checks])).await;
    }
}

/// [`forgive`] for several reservations, side by side.
pub async fn forgive_all(store: &dyn Attempts, reservations: impl IntoIterator<Item = Reservation>) {
    let all = Reservation(reservations.into_iter().flat_map(|r| r.0).collect());
    forgive(store, all).await;
}

fn keyed(pairs: impl IntoIterator<Item = (String, Option<Limit>)>) -> Vec<(AttemptKey, Limit)> {
    pairs
        .into_iter()
        .filter_map(|(key, limit)| limit.map(|l| (AttemptKey(key), l)))
        .collect()
}

/// How much more a /48 may do than one of its /64s (docs/API.md,
/// Throttling and quotas): one free /48 must not buy 65,536 budgets.
pub const PREFIX_48_FACTOR: u64 = 8;

/// The /48 of an IPv6 client's /64 key (`2001:db8:1:2::/64` ->
/// `2001:db8:1::/48`); `None` for an IPv4 client.
fn prefix_48(address: &str) -> Option<String> {
    let net: ipnet::Ipv6Net = address.parse().ok()?;
    (net.prefix_len() == 64).then(|| ipnet::Ipv6Net::new(net.addr(), 48).map(|n| n.trunc().to_string()).ok())?
}

/// Per-address keys as `(key with {address} in it, limit)`: each once for the
/// client's address key and, for an IPv6 client, once more for its /48 at
/// [`PREFIX_48_FACTOR`] times the number.
fn per_address(address: &str, rows: impl IntoIterator<Item = (String, Option<Limit>)>) -> Vec<(AttemptKey, Limit)> {
    let wide = prefix_48(address);
    let mut keys = Vec::new();
    for (pattern, limit) in rows {
        let Some(limit) = limit else { continue };
        keys.push((AttemptKey(pattern.replace("{address}", address)), limit));
        if let Some(wide) = &wide {
            let key = pattern.replace("{address}", &format!("/48:{wide}"));
            let limit = Limit::new(limit.max.saturating_mul(PREFIX_48_FACTOR), limit.window_secs);
            keys.push((AttemptKey(key), limit));
        }
    }
    keys
}

/// [`per_address`] for one pattern: what the proof-of-work gate counts.
pub(crate) fn per_address_keys(address: &str, pattern: &str, limit: Option<Limit>) -> Vec<(AttemptKey, Limit)> {
    per_address(address, [(pattern.to_owned(), limit)])
}

/// Login failures: per username and address, per address, per username.
pub fn login_keys(limits: &Limits, username: &str, address: &str) -> Vec<(AttemptKey, Limit)> {
    let mut keys = per_address(
        address,
        [
            (
                format!("login:user-address:{username}:{{address}}"),
                limits.login_user_address,
            ),
            ("login:address:{address}".to_owned(), limits.login_address),
        ],
    );
    keys.extend(keyed([(format!("login:user:{username}"), limits.login_user)]));
    keys
}

/// Every password check, right or wrong: per address.
pub fn password_check_keys(limits: &Limits, address: &str) -> Vec<(AttemptKey, Limit)> {
    per_address(
        address,
        [("check:address:{address}".to_owned(), limits.password_checks_address)],
    )
}

/// Successful logins per username.
pub fn login_success_keys(limits: &Limits, username: &str) -> Vec<(AttemptKey, Limit)> {
    keyed([(format!("login:ok:user:{username}"), limits.logins_user)])
}

/// Guest password failures: per target and address, and per target from
/// all addresses unless the requester is the writer (docs/API.md,
/// Hardening: guest authors keep their posts): failures from everywhere
/// else must not lock the author out, who stays limited per target and
/// address.
pub fn guest_keys(limits: &Limits, target_id: &str, address: &str, writer: bool) -> Vec<(AttemptKey, Limit)> {
    let mut keys = per_address(
        address,
        [(
            format!("guest:target-address:{target_id}:{{address}}"),
            limits.guest_target_address,
        )],
    );
    if !writer {
        keys.extend(keyed([(format!("guest:target:{target_id}"), limits.guest_target)]));
    }
    keys
}

/// Creates of posts and comments: per address, and per member when signed in.
pub fn create_keys(limits: &Limits, address: &str, member: Option<&str>) -> Vec<(AttemptKey, Limit)> {
    let mut keys = per_address(
        address,
        [("create:address:{address}".to_owned(), limits.creates_address)],
    );
    if let Some(member) = member {
        keys.extend(keyed([(format!("create:member:{member}"), limits.creates_member)]));
    }
    keys
}

/// Reports per address.
pub fn report_keys(limits: &Limits, address: &str) -> Vec<(AttemptKey, Limit)> {
    per_address(
        address,
        [("report:address:{address}".to_owned(), limits.reports_address)],
    )
}

/// Guest votes per address.
pub fn guest_vote_keys(limits: &Limits, address: &str) -> Vec<(AttemptKey, Limit)> {
    per_address(
        address,
        [("vote:address:{address}".to_owned(), limits.guest_votes_address)],
    )
}

/// Image upload grants per address and, for a member, per member.
pub fn upload_keys(limits: &Limits, address: &str, member: Option<&str>) -> Vec<(AttemptKey, Limit)> {
    let mut keys = per_address(
        address,
        [("upload:address:{address}".to_owned(), limits.uploads_address)],
    );
    if let Some(member) = member {
        keys.extend(keyed([(format!("upload:member:{member}"), limits.uploads_member)]));
    }
    keys
}

/// Signups per address.
pub fn signup_keys(limits: &Limits, address: &str) -> Vec<(AttemptKey, Limit)> {
    per_address(
        address,
        [("signup:address:{address}".to_owned(), limits.signups_address)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_throttle_key_counts_against_a_named_policy() {
        let limits = Limits::default();
        let keys = [
            create_keys(&limits, "2001:db8:1:2::/64", Some("m1")),
            signup_keys(&limits, "192.0.2.1"),
            report_keys(&limits, "192.0.2.1"),
            guest_vote_keys(&limits, "192.0.2.1"),
            upload_keys(&limits, "192.0.2.1", Some("m1")),
            password_check_keys(&limits, "192.0.2.1"),
            login_keys(&limits, "kim", "192.0.2.1"),
            login_success_keys(&limits, "kim"),
            guest_keys(&limits, "01TARGET", "192.0.2.1", false),
        ]
        .concat();
        let labels: Vec<String> = keys
            .iter()
            .map(|(k, l)| pacing::policy_of(k, l.max, l.window_secs).label())
            .collect();
        assert_eq!(
            labels,
            [
                "creates",
                "creates-48",
                "creates-member",
                "signups",
                "reports",
                "guest-votes",
                "uploads",
                "uploads-member",
                "password-checks",
                "login-failures",
                "login-failures-address",
                "login-failures-user",
                "logins-user",
                "guest-password-failures",
                "guest-password-failures-target",
            ]
        );
    }

    #[test]
    fn an_ipv6_client_is_also_counted_per_48_at_eight_times_each_per_address_limit() {
        let limits = Limits::default();
        let v6 = create_keys(&limits, "2001:db8:1:2::/64", None);
        let names: Vec<&str> = v6.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["create:address:2001:db8:1:2::/64", "create:address:/48:2001:db8:1::/48"]
        );
        assert_eq!(v6[1].1, Limit::new(30 * PREFIX_48_FACTOR, 600));
        let login = login_keys(&limits, "kim", "2001:db8:1:2::/64");
        assert_eq!(
            login.len(),
            5,
            "user-address and address, each per /64 and /48, and the user"
        );
        assert!(
            login
                .iter()
                .any(|(k, l)| k.as_str() == "login:user-address:kim:/48:2001:db8:1::/48" && l.max == 40)
        );
        assert_eq!(create_keys(&limits, "203.0.113.9", None).len(), 1, "IPv4 has no /48");
        assert_eq!(
            signup_keys(&limits, "2001:db8:ffff:1::/64")[1].0.as_str(),
            "signup:address:/48:2001:db8:ffff::/48"
        );
    }

    #[test]
    fn limits_parse_from_settings() {
        assert_eq!(Limit::parse("X", "5/5m"), Ok(Some(Limit::new(5, 300))));
        assert_eq!(Limit::parse("X", "50/1h"), Ok(Some(Limit::new(50, 3600))));
        assert_eq!(Limit::parse("X", "10/600"), Ok(Some(Limit::new(10, 600))));
        assert_eq!(Limit::parse("X", "off"), Ok(None));
        for bad in ["5", "0/5m", "5/0m", "5/5w", "five/5m", "5/m"] {
            assert!(
                Limit::parse("LIMIT_LOGIN_FAILURES_USER", bad)
                    .unwrap_err()
                    .starts_with("LIMIT_LOGIN_FAILURES_USER"),
                "{bad}"
            );
        }
        assert_eq!(Limit::new(100, 900).to_string(), "100/15m");
        assert_eq!(Limit::new(50, 3600).to_string(), "50/1h");
    }

    #[test]
    fn a_reservation_splits_by_kind_of_limit() {
        let limits = Limits::default();
        let failures = login_keys(&limits, "kim", "192.0.2.1");
        let checks = password_check_keys(&limits, "192.0.2.1");
        let window = Window::containing(0, 600);
        let mut all = Reservation(
            failures
                .iter()
                .chain(&checks)
                .map(|(key, _)| (key.clone(), window))
                .collect(),
        );
        let taken = all.take(&failures);
        assert_eq!(taken.0.len(), 3);
        assert_eq!(all.0.len(), 1);
        assert_eq!(all.0[0].0.as_str(), "check:address:192.0.2.1");
        assert_eq!(login_success_keys(&limits, "kim")[0].1, Limit::new(30, 600));
    }

    #[test]
    fn the_writer_is_never_held_to_the_all_addresses_guest_limit() {
        let limits = Limits::default();
        let names = |writer| {
            guest_keys(&limits, "p1", "192.0.2.1", writer)
                .into_iter()
                .map(|(k, _)| k.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(false), ["guest:target-address:p1:192.0.2.1", "guest:target:p1"]);
        assert_eq!(names(true), ["guest:target-address:p1:192.0.2.1"]);
    }

    #[test]
    fn a_limit_that_is_off_has_no_key() {
        let mut limits = Limits::default();
        assert_eq!(login_keys(&limits, "kim", "192.0.2.1").len(), 3);
        limits.login_user = None;
        let keys = login_keys(&limits, "kim", "192.0.2.1");
        assert!(keys.iter().all(|(k, _)| k.as_str() != "login:user:kim"));
        assert_eq!(create_keys(&limits, "192.0.2.1", None).len(), 1);
        assert_eq!(create_keys(&limits, "192.0.2.1", Some("m")).len(), 2);
    }
}
