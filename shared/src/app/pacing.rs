//! What a client may pace its writes by (docs/API.md, Conventions):
//! after a write counted under a quota, and on every refusal over a limit,
//! the policies the request counted against and the one that will refuse
//! first, with what remains of it and when its window ends. The HTTP layer
//! writes them as `RateLimit-Policy` and `RateLimit`.
//!
//! The counting happens deep in the use cases (`throttle::reserve`), the
//! headers at the edge: a task-local slot, opened by the edge around one
//! request ([`reporting`]), carries the one to the other without every use
//! case returning it. Outside a slot (tests, background work) nothing is
//! kept.

use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::store::AttemptKey;

/// One limit a request counted against, by its public name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub name: &'static str,
    /// For an IPv6 client's /48 (docs/API.md, Throttling and quotas): the
    /// name gains `-48`.
    pub per_48: bool,
    /// At most `max` per `window_secs` (the throttle's `Limit`).
    pub max: u64,
    pub window_secs: i64,
}

impl Policy {
    /// `creates`, `creates-48`, `creates-member`...
    pub fn label(&self) -> String {
        if self.per_48 {
            format!("{}-48", self.name)
        } else {
            self.name.to_owned()
        }
    }
}

/// The state of a request's limits once it was counted (or refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaReport {
    /// Every limit the request counted against, in the order counted.
    pub policies: Vec<Policy>,
    /// Which of them will refuse first: the least remaining, and of those
    /// the longest wait; on a refusal, the one that refused (longest wait).
    pub first: usize,
    /// Requests that limit still allows in its window (0 on a refusal).
    pub remaining: u64,
    /// Seconds until its window ends (the refusal's `Retry-After`).
    pub reset_secs: u64,
    /// The store key of `first`, to give its count back by.
    pub(crate) key: AttemptKey,
}

/// The public name of the limit a throttle key counts against: keys are
/// built in `throttle` as `<kind>:<scope>:...`, an IPv6 /48 with `/48:`
/// in place of the address (docs/API.md, Throttling and quotas names them).
pub(super) fn policy_of(key: &AttemptKey, max: u64, window_secs: i64) -> Policy {
    const NAMES: &[(&str, &str)] = &[
        ("create:address:", "creates"),
        ("create:member:", "creates-member"),
        ("signup:address:", "signups"),
        ("report:address:", "reports"),
        ("vote:address:", "guest-votes"),
        ("upload:address:", "uploads"),
        ("upload:member:", "uploads-member"),
        ("check:address:", "password-checks"),
        ("login:user-address:", "login-failures"),
        ("login:address:", "login-failures-address"),
        ("login:user:", "login-failures-user"),
        ("login:ok:user:", "logins-user"),
        ("guest:target-address:", "guest-password-failures"),
        ("guest:target:", "guest-password-failures-target"),
    ];
    let name = NAMES
        .iter()
        .find(|(prefix, _)| key.0.starts_with(prefix))
        .map_or("limit", |(_, name)| name);
    Policy {
        name,
        per_48: key.0.contains("/48:"),
        max,
        window_secs,
    }
}

tokio::task_local! {
    static SLOT: Arc<Mutex<Option<QuotaReport>>>;
}

/// Runs one request's work with a slot for its [`QuotaReport`], and
/// answers what was kept there.
pub async fn reporting<F: Future>(work: F) -> (F::Output, Option<QuotaReport>) {
    let slot = Arc::new(Mutex::new(None));
    let output = SLOT.scope(Arc::clone(&slot), work).await;
    let report = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    (output, report)
}

/// Keeps `report` for the request, unless one kept earlier will refuse
/// sooner (fewer remaining).
pub(super) fn keep(report: QuotaReport) {
    let _ = SLOT.try_with(|slot| {
        let mut kept = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if kept.as_ref().is_none_or(|k| report.remaining <= k.remaining) {
            *kept = Some(report);
        }
    });
}

/// A count given back (a replay, a create that failed): the limit reported
/// has that request again.
pub(super) fn given_back(keys: &[AttemptKey]) {
    let _ = SLOT.try_with(|slot| {
        let mut kept = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(report) = kept.as_mut().filter(|r| keys.contains(&r.key)) {
            let max = report.policies[report.first].max;
            report.remaining = (report.remaining + 1).min(max);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_report_is_kept_only_inside_a_requests_slot_and_the_tightest_wins() {
        let policy = |name| Policy {
            name,
            per_48: false,
            max: 10,
            window_secs: 60,
        };
        let report = |name, remaining| QuotaReport {
            policies: vec![policy(name)],
            first: 0,
            remaining,
            reset_secs: 30,
            key: AttemptKey(format!("{name}:key")),
        };
        keep(report("outside", 1));
        let ((), kept) = reporting(async {
            keep(report("loose", 5));
            keep(report("tight", 2));
            keep(report("looser", 7));
            given_back(&[AttemptKey("tight:key".into())]);
        })
        .await;
        let kept = kept.expect("kept inside the slot");
        assert_eq!((kept.policies[0].name, kept.remaining), ("tight", 3));
        let ((), nothing) = reporting(async {}).await;
        assert_eq!(nothing, None);
    }
}
