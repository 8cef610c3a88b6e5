//! The second step of a post's delete, off the request (docs/storage.md,
//! Deleting a post). A delete or removal returns once the post is marked;
//! its children are deleted by the `purge` Lambda function (the table's
//! stream delivers each new marker) or, on the server, by
//! [`App::purge_in_background`], which a delete wakes.
//!
//! The same background purge resumes what an account deletion's step
//! 2 left pending (docs/DESIGN.md, Accounts): on Lambda the `purge`
//! function's schedule calls [`App::resume_pending`] within the
//! invocation's time; on the server the background task does on its first
//! look after a start.

use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt, TryStreamExt};

use crate::domain::{MemberId, Owned, PendingDeletion};
use crate::error::ApiError;
use crate::store::PendingPurge;

use super::App;

/// How much of a deletion's content one store round handles: a bounded
/// batch, so an interrupted deletion loses at most one batch of progress.
pub const DELETION_BATCH: usize = 25;

/// Deletes of one batch in flight together.
const DELETES_AT_ONCE: usize = 8;

/// Pending purges (and pending account deletions) read per look.
const BATCH: usize = 10;

/// How often the background task looks without being woken: for markers
/// left by an interrupted run, or by another process on the same table.
const LOOK_EVERY: Duration = Duration::from_secs(60);

/// How long it waits after a failed look or purge before the next.
const AFTER_FAILURE: Duration = Duration::from_secs(5);

/// What an account deletion's step 2 did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Purged {
    pub posts: u64,
    pub comments: u64,
    pub likes: u64,
    /// Store rounds (batches read from the index).
    pub batches: u64,
}

/// What one [`App::resume_pending`] finished.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Resumed {
    /// Account deletions whose step 2 it finished.
    pub deletions: usize,
    /// Account deletions it tried and left pending (each is logged).
    pub deletions_failed: usize,
    /// Deleted posts whose children it purged.
    pub purges: usize,
    /// False when the deadline came first: the rest stays pending.
    pub complete: bool,
}

impl App {
    /// Wakes the background purge, if this process runs one.
    pub(super) fn purge_soon(&self) {
        self.purge_wake.notify_one();
    }

    /// One post's purge (the stream function's record). Idempotent. On
    /// DynamoDB it releases the images the text event had not, so the
    /// server's sweep runs after it too.
    pub async fn purge(&self, pending: &PendingPurge) -> Result<(), ApiError> {
        self.store.purge(pending).await.map_err(ApiError::from)?;
        self.sweep_soon();
        Ok(())
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

    /// Finishes the pending post purges, then the pending account
    /// deletions, oldest first, until `deadline` (purges first: a
    /// deletion's comments on a post still to be purged go with it). Work cut off by the deadline
    /// stays pending and resumes where it stopped (both are idempotent:
    /// docs/DESIGN.md, Accounts). A deletion that fails is logged,
    /// counted and left for the next run; the others go on.
    pub async fn resume_pending(&self, deadline: Instant) -> Result<Resumed, ApiError> {
        let mut resumed = Resumed::default();
        match tokio::time::timeout_at(deadline.into(), self.purge_pending()).await {
            Ok(purged) => resumed.purges = purged?,
            Err(_) => return Ok(resumed),
        }
        loop {
            let pending = match tokio::time::timeout_at(deadline.into(), self.store.pending_deletions(BATCH)).await {
                Ok(pending) => pending?,
                Err(_) => return Ok(resumed),
            };
            for deletion in &pending {
                match tokio::time::timeout_at(deadline.into(), self.finish_deletion(deletion)).await {
                    Err(_) => return Ok(resumed),
                    Ok(Ok(done)) => {
                        resumed.deletions += 1;
                        tracing::info!(
                            posts = done.posts,
                            comments = done.comments,
                            likes = done.likes,
                            batches = done.batches,
                            delete_content = deletion.delete_content,
                            "a pending account deletion finished"
                        );
                    }
                    Ok(Err(e)) => {
                        resumed.deletions_failed += 1;
                        tracing::warn!(error = %e, "a pending account deletion is still pending");
                    }
                }
            }
            // A failed one would be read again at once: the next run retries it.
            if pending.len() < BATCH || resumed.deletions_failed > 0 {
                break;
            }
        }
        resumed.complete = true;
        Ok(resumed)
    }

    /// The server's step 2: purges whenever a delete wakes it, and every
    /// [`LOOK_EVERY`] besides. Runs until the process ends.
    ///
    /// Its first look also finishes the account deletions an earlier
    /// process left pending (a crash, a stop). Later looks leave them: this
    /// process's own deletions run to their end in their own tasks
    /// (docs/DESIGN.md, Accounts), and a second run of one would only
    /// double its work.
    pub async fn purge_in_background(self) {
        let mut deletions_resumed = false;
        loop {
            if !deletions_resumed {
                // No deadline: the server has no invocation to fit in.
                let far = Instant::now() + Duration::from_secs(365 * 24 * 3600);
                match self.resume_pending(far).await {
                    Ok(resumed) => {
                        deletions_resumed = true;
                        if resumed.deletions + resumed.deletions_failed > 0 {
                            tracing::info!(
                                finished = resumed.deletions,
                                failed = resumed.deletions_failed,
                                "pending account deletions resumed at start"
                            );
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "pending account deletions not read; trying again");
                        tokio::time::sleep(AFTER_FAILURE).await;
                        continue;
                    }
                }
            }
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

    /// Step 2 of a deletion: every post, comment (and with `delete_content`
    /// every like) of the member, a batch at a time, through the same
    /// deletes an author's own use (counts stay exact), or disowned; then
    /// the pending mark goes. Idempotent: it resumes where it stopped.
    pub async fn finish_deletion(&self, pending: &PendingDeletion) -> Result<Purged, ApiError> {
        let member = &pending.member;
        let mut done = Purged::default();
        let mut previous: Vec<Owned> = Vec::new();
        let mut stuck = 0;
        loop {
            let batch = self.store.owned(member, pending.delete_content, DELETION_BATCH).await?;
            if batch.is_empty() {
                break;
            }
            done.batches += 1;
            // DynamoDB's index by owner may still show what was just done:
            // doing it again is harmless, waiting a moment lets it catch up;
            // what never leaves is left pending rather than looped on.
            if batch == previous {
                stuck += 1;
                if stuck > 5 {
                    return Err(ApiError::Internal(
                        "an account deletion did not progress; it stays pending".into(),
                    ));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            } else {
                stuck = 0;
            }
            if pending.delete_content {
                // Posts one at a time: a post delete on DynamoDB also
                // finishes other pending purges, which would be these.
                for item in batch.iter().filter(|i| matches!(i, Owned::Post(_))) {
                    self.withdraw(member, item).await?;
                }
                // The rest a few at a time: each is its own write (DynamoDB
                // retries the transactions that race on a counter shard).
                stream::iter(
                    batch
                        .iter()
                        .filter(|i| !matches!(i, Owned::Post(_)))
                        .cloned()
                        .collect::<Vec<_>>(),
                )
                .map(|item| {
                    let (app, member) = (self.clone(), member.clone());
                    async move { app.withdraw(&member, &item).await }
                })
                .buffer_unordered(DELETES_AT_ONCE)
                .try_collect::<Vec<()>>()
                .await?;
            } else {
                self.store.disown(member, &batch).await?;
                for item in &batch {
                    self.text_disowned(item);
                }
            }
            for item in &batch {
                match item {
                    Owned::Post(_) => done.posts += 1,
                    Owned::Comment(_) => done.comments += 1,
                    Owned::Like(_) => done.likes += 1,
                }
            }
            previous = batch;
        }
        // Their notifications and blocks; on DynamoDB a batch at a time.
        self.store.forget_member(member).await?;
        self.store.finish_deletion(member).await?;
        Ok(done)
    }

    /// Deletes a post or comment as its author would, or takes a like back.
    async fn withdraw(&self, member: &MemberId, item: &Owned) -> Result<(), ApiError> {
        use crate::store::StoreError;
        let purge_of = |key: &crate::domain::PostKey| PendingPurge {
            board: key.board.as_str().to_owned(),
            post: key.post.as_str().to_owned(),
        };
        match item {
            // Its purge too, here: the deletion's next batch must not find
            // the member's comments on it again (step 2 of a deletion is
            // off the request already).
            Owned::Post(key) => {
                if self.store.delete_post(key, false).await? {
                    self.text_gone(key, None);
                    self.store.purge(&purge_of(key)).await?;
                }
                Ok::<(), StoreError>(())
            }
            // A comment or like that cannot be deleted or taken back
            // any more is on a deleted post whose purge has not run yet (on
            // DynamoDB the stream's, or a pending one): purging that post
            // takes it, or the next batch would find it again and the
            // deletion would stop as stuck. A post that is not deleted is
            // left alone by a purge (one read).
            Owned::Comment(key) => {
                if self.store.delete_comment(key).await? {
                    self.text_gone(&key.post, Some(&key.comment));
                } else {
                    self.store.purge(&purge_of(&key.post)).await?;
                }
                Ok(())
            }
            Owned::Like(key) => {
                if self
                    .store
                    .vote(key, member, crate::domain::VoteChange::Withdraw, None)
                    .await?
                    .is_none()
                {
                    self.store.purge(&purge_of(key)).await?;
                }
                Ok(())
            }
        }
        .map_err(ApiError::from)
    }
}
