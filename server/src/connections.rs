//! The open connections and what each is doing, so that at the global cap
//! the server can close the one that has sat idle longest to admit a new one
//! (docs/API.md, Throttling and quotas, v3).
//!
//! Only a connection between requests, after it has answered at least one,
//! may be closed this way. A connection in a request never is; nor is one
//! still waiting for its first headers: that one is a client that has just
//! connected (closing the newest to admit the next would serve no one), and
//! the header timeout bounds how long it may wait. A kept-alive connection
//! that has sent part of its next request's headers still counts as idle:
//! its request has not begun, and the header timeout bounds that wait too.
//!
//! Each connection's state is one atomic, written by its own requests
//! without a lock; the lock on the set is taken when a connection opens or
//! closes and for the one scan (O(connections)) of an eviction at the cap.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

/// Has answered no request yet: not to be closed for another.
const FRESH: u64 = 0;
/// In a request, from its headers until its answer's body is done.
const BUSY: u64 = 1;
/// Asked to close: hyper closes it at once if idle, or after the request
/// that has just begun.
const CLOSING: u64 = 2;
/// Any value from here up: idle since `epoch + (value - IDLE_SINCE)` ns.
const IDLE_SINCE: u64 = 3;

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
    close: Notify,
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
            close: Notify::new(),
        });
        self.lock().insert(id, Arc::clone(&activity));
        Arc::new(OpenConnection {
            registry: Arc::clone(self),
            id,
            activity,
        })
    }

    /// Asks the connection idle longest to close; false if none is idle.
    pub(crate) fn close_longest_idle(&self) -> bool {
        let open = self.lock();
        // A connection may begin a request between the scan and the swap:
        // then look again (rarely more than once).
        for _ in 0..4 {
            let longest_idle = open
                .values()
                .map(|activity| (activity.state.load(Ordering::Acquire), activity))
                .filter(|(state, _)| *state >= IDLE_SINCE)
                .min_by_key(|(state, _)| *state);
            let Some((idle_since, activity)) = longest_idle else {
                return false;
            };
            if activity
                .state
                .compare_exchange(idle_since, CLOSING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                // A stored permit if its task is not waiting yet: never lost.
                activity.close.notify_one();
                return true;
            }
        }
        false
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

    pub(crate) fn request_started(self: &Arc<Self>) -> InRequest {
        self.set_unless_closing(BUSY);
        InRequest(Arc::clone(self))
    }

    fn set_unless_closing(&self, state: u64) {
        let _ = self
            .activity
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                (now != CLOSING).then_some(state)
            });
    }
}

impl Drop for InRequest {
    fn drop(&mut self) {
        let registry = &self.0.registry;
        let nanos = u64::try_from(registry.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX - IDLE_SINCE);
        self.0.set_unless_closing(IDLE_SINCE + nanos);
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

    #[test]
    fn the_longest_idle_connection_is_closed_and_never_a_busy_or_fresh_one() {
        let registry = Registry::new();
        let fresh = registry.open();
        let busy = registry.open();
        let idle_first = registry.open();
        let idle_second = registry.open();
        drop(idle_first.request_started());
        std::thread::sleep(std::time::Duration::from_millis(1));
        drop(idle_second.request_started());
        // Busy now, though it went idle before the others.
        drop(busy.request_started());
        let busy_request = busy.request_started();
        let _ = &fresh;

        assert!(registry.close_longest_idle());
        assert_eq!(idle_first.activity.state.load(Ordering::Acquire), CLOSING);
        assert!(registry.close_longest_idle());
        assert_eq!(idle_second.activity.state.load(Ordering::Acquire), CLOSING);
        assert!(!registry.close_longest_idle(), "only fresh, busy and closing are left");

        // A closing connection that serves a last request stays closing.
        drop(idle_first.request_started());
        assert_eq!(idle_first.activity.state.load(Ordering::Acquire), CLOSING);
        drop(busy_request);
        assert!(registry.close_longest_idle());
        assert_eq!(busy.activity.state.load(Ordering::Acquire), CLOSING);
        assert_eq!(fresh.activity.state.load(Ordering::Acquire), FRESH);
    }

    #[test]
    fn a_closed_connection_leaves_the_registry() {
        let registry = Registry::new();
        let connection = registry.open();
        drop(connection.request_started());
        drop(connection);
        assert!(registry.lock().is_empty());
        assert!(!registry.close_longest_idle());
    }
}
