//! The open connections and what each is doing, so that at the global cap
//! the server can close one to admit a new one (docs/API.md, Throttling and
//! quotas; Hardening).
//!
//! First choice: the connection whose answer has been stalled longest, a
//! write pending with no progress for `stalled_after` (its client reads
//! nothing). It is closed at once, its answer abandoned: waiting for that
//! answer to finish would hold the slot until the write timeout. Otherwise
//! the connection idle longest between requests, after it has answered at
//! least one, and whose answer is all written; it is closed gracefully.
//!
//! A connection in a request that is making progress is never closed this
//! way; nor is one still waiting for its first headers: that one is a client
//! that has just connected (closing the newest to admit the next would serve
//! no one), and the header timeout bounds how long it may wait. A
//! kept-alive connection that has sent part of its next request's headers
//! still counts as idle: its request has not begun, and the header timeout
//! bounds that wait too.
//!
//! Each connection's state is two atomics, written by its own requests and
//! its own socket writes without a lock; the lock on the set is taken when a
//! connection opens or closes and for the one scan (O(connections)) of an
//! eviction at the cap.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Has answered no request yet: not to be closed for another.
const FRESH: u64 = 0;
/// In a request, from its headers until its answer's body is done.
const BUSY: u64 = 1;
/// Asked to close: hyper closes it at once if idle, or after the request
/// that has just begun.
const CLOSING: u64 = 2;
/// Asked to close now, its stalled answer abandoned.
const ABORTING: u64 = 3;
/// Any value from here up: idle since `epoch + (value - IDLE_SINCE)` ns.
const IDLE_SINCE: u64 = 4;

/// `write_pending_since` when the last write made progress.
const NOT_PENDING: u64 = 0;

#[derive(Debug)]
pub(crate) struct Registry {
    epoch: Instant,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    /// Woken when a connection goes idle: the accept loop, waiting at the
    /// cap with nothing it could close, looks again.
    went_idle: Notify,
}

#[derive(Debug)]
struct Activity {
    state: AtomicU64,
    /// `NOT_PENDING`, or 1 + the ns since `epoch` at which a write of this
    /// connection went pending and has made no progress since.
    write_pending_since: AtomicU64,
    close: Notify,
}

/// What `close_one` did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Eviction {
    /// One connection was asked to close.
    Asked,
    /// None may be closed yet; a pending write will have stalled long
    /// enough at `look_again_at`, if one is pending.
    NoneYet { look_again_at: Option<Instant> },
}

/// One open connection, taken out of the registry when dropped (when its
/// task and its service are gone).
#[derive(Debug)]
pub(crate) struct OpenConnection {
    registry: Arc<Registry>,
    id: u64,
    activity: Arc<Activity>,
}

/// A request in progress on a connection; dropped with its answer's body,
/// which leaves the connection idle from then on.
#[derive(Debug)]
pub(crate) struct InRequest(Arc<OpenConnection>);

impl Registry {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Registry {
            epoch: Instant::now(),
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
            went_idle: Notify::new(),
        })
    }

    pub(crate) fn open(self: &Arc<Self>) -> Arc<OpenConnection> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity {
            state: AtomicU64::new(FRESH),
            write_pending_since: AtomicU64::new(NOT_PENDING),
            close: Notify::new(),
        });
        self.lock().insert(id, Arc::clone(&activity));
        Arc::new(OpenConnection {
            registry: Arc::clone(self),
            id,
            activity,
        })
    }

    /// Asks one connection to close for a newcomer: the one stalled longest
    /// (a write pending for at least `stalled_after`), else the one idle
    /// longest.
    pub(crate) fn close_one(&self, stalled_after: Duration) -> Eviction {
        let now = self.nanos();
        let stalled_after = u64::try_from(stalled_after.as_nanos()).unwrap_or(u64::MAX);
        let open = self.lock();
        let pending_since = |activity: &Activity| match activity.write_pending_since.load(Ordering::Acquire) {
            NOT_PENDING => None,
            since => Some(since - 1),
        };
        let stalled_longest = open
            .values()
            .filter(|activity| activity.state.load(Ordering::Acquire) != ABORTING)
            .filter_map(|activity| Some((pending_since(activity)?, activity)))
            .filter(|(since, _)| now.saturating_sub(*since) >= stalled_after)
            .min_by_key(|(since, _)| *since);
        if let Some((_, activity)) = stalled_longest {
            // Only this scan, under the lock, sets ABORTING, and nothing
            // leaves it: the swap cannot fail. A client that begins to read
            // at this very instant loses its connection all the same: it
            // had read nothing for `stalled_after` while others waited.
            activity.state.store(ABORTING, Ordering::Release);
            // A stored permit if its task is not waiting yet: never lost.
            activity.close.notify_one();
            return Eviction::Asked;
        }
        // A connection may begin a request between the scan and the swap:
        // then look again (rarely more than once).
        for _ in 0..4 {
            let longest_idle = open
                .values()
                .filter(|activity| pending_since(activity).is_none())
                .map(|activity| (activity.state.load(Ordering::Acquire), activity))
                .filter(|(state, _)| *state >= IDLE_SINCE)
                .min_by_key(|(state, _)| *state);
            let Some((idle_since, activity)) = longest_idle else {
                break;
            };
            if activity
                .state
                .compare_exchange(idle_since, CLOSING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                activity.close.notify_one();
                return Eviction::Asked;
            }
        }
        let first_to_stall = open
            .values()
            .filter(|activity| activity.state.load(Ordering::Acquire) != ABORTING)
            .filter_map(|activity| pending_since(activity))
            .min();
        Eviction::NoneYet {
            look_again_at: first_to_stall
                .map(|since| self.epoch + Duration::from_nanos(since.saturating_add(stalled_after))),
        }
    }

    fn nanos(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX / 2)
    }

    /// Resolves when some connection has gone idle (perhaps before the
    /// call: a wake-up is kept until someone waits).
    pub(crate) async fn went_idle(&self) {
        self.went_idle.notified().await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl OpenConnection {
    /// Resolves when the server wants this connection closed to admit another.
    pub(crate) async fn close_requested(&self) {
        self.activity.close.notified().await;
    }

    /// Whether it was asked to close now, its answer abandoned.
    pub(crate) fn is_aborting(&self) -> bool {
        self.activity.state.load(Ordering::Acquire) == ABORTING
    }

    /// A write could not go ahead (the peer's window is full): stalled from
    /// now until `write_progressed`.
    pub(crate) fn write_pending(&self) {
        let since = self.registry.nanos().saturating_add(1);
        self.activity.write_pending_since.store(since, Ordering::Release);
    }

    pub(crate) fn write_progressed(&self) {
        self.activity.write_pending_since.store(NOT_PENDING, Ordering::Release);
    }

    pub(crate) fn request_started(self: &Arc<Self>) -> InRequest {
        self.set_unless_closing(BUSY);
        InRequest(Arc::clone(self))
    }

    fn set_unless_closing(&self, state: u64) {
        let _ = self
            .activity
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                (now != CLOSING && now != ABORTING).then_some(state)
            });
    }
}

impl Drop for InRequest {
    fn drop(&mut self) {
        let registry = &self.0.registry;
        self.0.set_unless_closing(IDLE_SINCE + registry.nanos());
        registry.went_idle.notify_one();
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEVER_STALLED: Duration = Duration::from_secs(3_600);

    fn state(connection: &OpenConnection) -> u64 {
        connection.activity.state.load(Ordering::Acquire)
    }

    #[test]
    fn the_longest_idle_connection_is_closed_and_never_a_busy_or_fresh_one() {
        let registry = Registry::new();
        let fresh = registry.open();
        let busy = registry.open();
        let idle_first = registry.open();
        let idle_second = registry.open();
        drop(idle_first.request_started());
        std::thread::sleep(Duration::from_millis(1));
        drop(idle_second.request_started());
        // Busy now, though it went idle before the others.
        drop(busy.request_started());
        let busy_request = busy.request_started();
        let _ = &fresh;

        assert_eq!(registry.close_one(NEVER_STALLED), Eviction::Asked);
        assert_eq!(state(&idle_first), CLOSING);
        assert_eq!(registry.close_one(NEVER_STALLED), Eviction::Asked);
        assert_eq!(state(&idle_second), CLOSING);
        assert_eq!(
            registry.close_one(NEVER_STALLED),
            Eviction::NoneYet { look_again_at: None },
            "only fresh, busy and closing are left"
        );

        // A closing connection that serves a last request stays closing.
        drop(idle_first.request_started());
        assert_eq!(state(&idle_first), CLOSING);
        drop(busy_request);
        assert_eq!(registry.close_one(NEVER_STALLED), Eviction::Asked);
        assert_eq!(state(&busy), CLOSING);
        assert_eq!(state(&fresh), FRESH);
    }

    #[test]
    fn a_stalled_answer_is_closed_before_any_idle_connection() {
        let registry = Registry::new();
        let idle = registry.open();
        drop(idle.request_started());
        let stalled_busy = registry.open();
        let _request = stalled_busy.request_started();
        stalled_busy.write_pending();
        std::thread::sleep(Duration::from_millis(1));
        // Idle for hyper (its body handed over) but its bytes still unsent.
        let stalled_idle = registry.open();
        drop(stalled_idle.request_started());
        stalled_idle.write_pending();

        assert_eq!(registry.close_one(Duration::ZERO), Eviction::Asked);
        assert_eq!(state(&stalled_busy), ABORTING, "stalled longest: closed first");
        assert!(stalled_busy.is_aborting());
        assert_eq!(registry.close_one(Duration::ZERO), Eviction::Asked);
        assert_eq!(state(&stalled_idle), ABORTING);
        assert!(state(&idle) >= IDLE_SINCE, "the idle one is left for last");
        assert_eq!(registry.close_one(Duration::ZERO), Eviction::Asked);
        assert_eq!(state(&idle), CLOSING);

        // An abandoned answer stays abandoned whatever its requests do.
        drop(stalled_busy.request_started());
        assert!(stalled_busy.is_aborting());
        assert_eq!(
            registry.close_one(Duration::ZERO),
            Eviction::NoneYet { look_again_at: None }
        );
    }

    #[test]
    fn a_pending_write_is_not_stalled_before_its_time_and_progress_clears_it() {
        let registry = Registry::new();
        let writing = registry.open();
        let _request = writing.request_started();
        let before = Instant::now();
        writing.write_pending();
        let Eviction::NoneYet {
            look_again_at: Some(look_again_at),
        } = registry.close_one(NEVER_STALLED)
        else {
            panic!("a write pending for less than `stalled_after` is not closed");
        };
        assert!(look_again_at >= before + NEVER_STALLED, "{look_again_at:?}");
        assert!(look_again_at <= Instant::now() + NEVER_STALLED);

        // Pending while idle: not idle enough to close gracefully either
        // (closing would wait on that write).
        let idle_but_writing = registry.open();
        drop(idle_but_writing.request_started());
        idle_but_writing.write_pending();
        assert!(matches!(registry.close_one(NEVER_STALLED), Eviction::NoneYet { .. }));

        idle_but_writing.write_progressed();
        assert_eq!(registry.close_one(NEVER_STALLED), Eviction::Asked);
        assert_eq!(state(&idle_but_writing), CLOSING);
        writing.write_progressed();
        assert_eq!(
            registry.close_one(Duration::ZERO),
            Eviction::NoneYet { look_again_at: None }
        );
        assert_eq!(state(&writing), BUSY);
    }

    #[test]
    fn a_closed_connection_leaves_the_registry() {
        let registry = Registry::new();
        let connection = registry.open();
        drop(connection.request_started());
        connection.write_pending();
        drop(connection);
        assert!(registry.lock().is_empty());
        assert_eq!(
            registry.close_one(Duration::ZERO),
            Eviction::NoneYet { look_again_at: None }
        );
    }
}
