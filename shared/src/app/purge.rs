//! (v3) The second step of a post's delete, off the request (docs/storage.md,
//! Deleting a post). A delete or removal returns once the post is marked;
//! its children are deleted by the `purge` Lambda function (the table's
//! stream delivers each new marker) or, on the server, by
//! [`App::purge_in_background`], which a delete wakes.

use std::time::Duration;

use crate::error::ApiError;
use crate::store::PendingPurge;

use super::App;

/// Pending purges read per look.
const BATCH: usize = 10;

/// How often the background task looks without being woken: for markers
/// left by an interrupted run, or by another process on the same table.
const LOOK_EVERY: Duration = Duration::from_secs(60);

/// How long it waits after a failed look or purge before the next.
const AFTER_FAILURE: Duration = Duration::from_secs(5);

impl App {
    /// Wakes the background purge, if this process runs one.
    pub(super) fn purge_soon(&self) {
        self.purge_wake.notify_one();
    }

    /// One post's purge (the stream function's record). Idempotent.
    pub async fn purge(&self, pending: &PendingPurge) -> Result<(), ApiError> {
        self.store.purge(pending).await.map_err(ApiError::from)
    }

    /// Finishes every pending purge, [`BATCH`] at a time; how many it did.
    /// Stops at the first failure, which leaves that purge (and the rest)
    /// pending.
    pub async fn purge_pending(&self) -> Result<usize, ApiError> {
        let mut done = 0;
        loop {
            let pending = self.store.pending_purges(BATCH).await?;
            if pending.is_empty() {
                return Ok(done);
            }
            for purge in &pending {
                self.purge(purge).await?;
                done += 1;
            }
        }
    }

    /// The server's step 2: purges whenever a delete wakes it, and every
    /// [`LOOK_EVERY`] besides. Runs until the process ends.
    pub async fn purge_in_background(self) {
        loop {
            match self.purge_pending().await {
                Ok(0) => {}
                Ok(done) => tracing::info!(purged = done, "deleted posts purged"),
                Err(e) => {
                    tracing::warn!(error = %e, "a deleted post's purge failed; it stays pending");
                    tokio::time::sleep(AFTER_FAILURE).await;
                    continue;
                }
            }
            let _ = tokio::time::timeout(LOOK_EVERY, self.purge_wake.notified()).await;
        }
    }
}
