//! (v3) A member's own account (docs/API.md, Accounts): who they are, their
//! password, their sessions, their posts and comments, and leaving.

use std::time::Duration;

use futures_util::stream::{self, StreamExt, TryStreamExt};

use super::accounts::{check_length, check_password};
use super::throttle::{self, Refusal};
use super::{App, ClientAddress, SignedIn, revoked, username_of};
use crate::domain::{
    CommentPage, Me, MemberId, Owned, Page, PageLimit, Password, PasswordHash, PendingDeletion, Roles, Username,
};
use crate::error::ApiError;
use crate::hashing::Tier;
use crate::store::PendingPurge;

/// How much of a deletion's content one store round handles: a bounded
/// batch, so an interrupted deletion loses at most one batch of progress.
pub const DELETION_BATCH: usize = 25;

/// Deletes of one batch in flight together.
const DELETES_AT_ONCE: usize = 8;

/// Other accounts' pending deletions an account deletion finishes besides its own.
const SWEEP: usize = 1;

/// How long a deletion request waits for step 2 (its own, then one other
/// pending deletion) before it answers: well inside the functions' 10 s
/// Lambda timeout. An account of about 100 posts with their comments is
/// done within it on DynamoDB Local (docs/benchmarks.md).
pub const DELETION_BUDGET: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct ChangePassword {
    pub member: SignedIn,
    pub current: Password,
    pub new: Password,
    pub client: ClientAddress,
}

#[derive(Debug)]
pub struct DeleteAccount {
    pub member: SignedIn,
    pub password: Password,
    pub delete_content: bool,
    pub client: ClientAddress,
}

/// What an account deletion's step 2 did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Purged {
    pub posts: u64,
    pub comments: u64,
    pub likes: u64,
    /// Store rounds (batches read from the index).
    pub batches: u64,
}

impl App {
    /// `GET /members/me`: the member as stored, and their roles. Read by
    /// username (the record's key: one consistent read on DynamoDB, where
    /// the index by id may not have caught up with a fresh signup).
    pub async fn me(&self, member: &SignedIn) -> Result<Me, ApiError> {
        let found = self
            .store
            .member_credentials(&username_of(member)?)
            .await?
            .filter(|c| c.member.id == member.id.as_str())
            .ok_or_else(revoked)?
            .member;
        let moderates = self.store.moderated_boards(&member.id, self.boards.slugs()).await?;
        Ok(Me {
            member: found,
            roles: Roles {
                admin: self.is_admin(member),
                moderates: moderates.into_iter().map(|b| b.into_inner()).collect(),
            },
        })
    }

    pub async fn my_posts(&self, member: &SignedIn, limit: PageLimit, cursor: Option<&str>) -> Result<Page, ApiError> {
        Ok(self.store.member_posts(&member.id, limit, cursor).await?)
    }

    pub async fn my_comments(
        &self,
        member: &SignedIn,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> Result<CommentPage, ApiError> {
        Ok(self.store.member_comments(&member.id, limit, cursor).await?)
    }

    /// `DELETE /members/me/sessions`: every token issued before stops.
    pub async fn end_sessions(&self, member: &SignedIn) -> Result<(), ApiError> {
        match self.store.end_sessions(&member.id, &username_of(member)?).await? {
            true => Ok(()),
            false => Err(revoked()),
        }
    }

    /// `PUT /members/me/password`: the current password checked as a login
    /// checks it (and counted as one when wrong), the new one hashed under
    /// the member tier; every earlier token stops.
    pub async fn change_password(&self, command: ChangePassword) -> Result<(), ApiError> {
        let hashing = self.hashing()?.for_client(&command.client.0);
        check_length(&hashing, Tier::Member, &command.new)?;
        let username = username_of(&command.member)?;
        self.check_own_password(&command.member, &username, &command.current, &command.client)
            .await?;
        let hash = hashing.hash(Tier::Member, command.new.secret().clone()).await?;
        match self
            .store
            .change_password(&command.member.id, &username, &PasswordHash::new(hash))
            .await?
        {
            true => Ok(()),
            false => Err(revoked()),
        }
    }

    /// `DELETE /members/me`: step 1 (the account closed, its tokens ended)
    /// in one write, then step 2 (the content, in batches). Once step 1 is
    /// written the deletion is answered as done: a step 2 cut short stays
    /// pending and the next account deletion finishes it.
    pub async fn delete_account(&self, command: DeleteAccount) -> Result<(), ApiError> {
        let username = username_of(&command.member)?;
        self.check_own_password(&command.member, &username, &command.password, &command.client)
            .await?;
        let moderates = self
            .store
            .moderated_boards(&command.member.id, self.boards.slugs())
            .await?;
        if !self
            .store
            .close_account(&command.member.id, &username, command.delete_content, &moderates)
            .await?
        {
            return Err(revoked());
        }
        let own = PendingDeletion {
            member: command.member.id.clone(),
            delete_content: command.delete_content,
        };
        // Step 2 runs as a task of its own, awaited for the budget: on the
        // server it goes on to the end after the answer; on Lambda while the
        // execution environment lives (a frozen one resumes it when thawed),
        // and what is left stays pending for the next deletion to continue.
        let app = self.clone();
        let step2 = tokio::spawn(async move {
            match app.finish_deletion(&own).await {
                Ok(done) => tracing::info!(
                    posts = done.posts,
                    comments = done.comments,
                    likes = done.likes,
                    batches = done.batches,
                    delete_content = own.delete_content,
                    "account deleted"
                ),
                Err(e) => tracing::warn!(error = %e, "account closed; its content stays pending"),
            }
            app.sweep_deletions(&own.member).await;
        });
        if tokio::time::timeout(DELETION_BUDGET, step2).await.is_err() {
            tracing::info!("account closed; its content is still being deleted");
        }
        Ok(())
    }

    /// Works on up to [`SWEEP`] other accounts' pending deletions. Best
    /// effort: what is cut short stays pending.
    async fn sweep_deletions(&self, except: &MemberId) {
        let pending = match self.store.pending_deletions(SWEEP + 1).await {
            Ok(pending) => pending,
            Err(e) => return tracing::warn!(error = %e, "pending account deletions not read"),
        };
        for other in pending.iter().filter(|p| &p.member != except).take(SWEEP) {
            if let Err(e) = self.finish_deletion(other).await {
                tracing::warn!(error = %e, "a pending account deletion is still pending");
            }
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
        self.store.finish_deletion(member).await?;
        Ok(done)
    }

    /// Deletes a post or comment as its author would, or takes a like back.
    async fn withdraw(&self, member: &MemberId, item: &Owned) -> Result<(), ApiError> {
        match item {
            // Its purge too, here: the deletion's next batch must not find
            // the member's comments on it again (step 2 of a deletion is
            // off the request already).
            Owned::Post(key) => {
                if self.store.delete_post(key).await? {
                    let pending = PendingPurge {
                        board: key.board.as_str().to_owned(),
                        post: key.post.as_str().to_owned(),
                    };
                    self.store.purge(&pending).await?;
                }
                Ok(())
            }
            Owned::Comment(key) => self.store.delete_comment(key).await.map(drop),
            Owned::Like(key) => self.store.unlike(key, member).await.map(drop),
        }
        .map_err(ApiError::from)
    }

    /// A member's own password, checked as a login checks one: throttled
    /// per username and address and per address before any hashing, and a
    /// wrong one counted as a failed login (docs/API.md, Throttling and
    /// quotas); `401 invalid_credentials` when wrong.
    async fn check_own_password(
        &self,
        member: &SignedIn,
        username: &Username,
        password: &Password,
        client: &ClientAddress,
    ) -> Result<(), ApiError> {
        let hashing = self.hashing()?.for_client(&client.0);
        let failure_keys = throttle::login_keys(&self.limits, username.as_str(), &client.0);
        let keys: Vec<_> = failure_keys
            .iter()
            .chain(&throttle::password_check_keys(&self.limits, &client.0))
            .cloned()
            .collect();
        let mut checks = throttle::reserve(&*self.store, &keys, Refusal::TooManyAttempts).await?;
        let failures = checks.take(&failure_keys);
        let checked = async {
            let credentials = self
                .store
                .member_credentials(username)
                .await?
                .filter(|c| c.member.id == member.id.as_str());
            let stored = credentials.as_ref().map(|c| &c.password_hash);
            Ok::<_, ApiError>(check_password(&hashing, Tier::Member, password, stored).await?.matched)
        }
        .await;
        match checked {
            Ok(true) => {
                throttle::forgive(&*self.store, failures).await;
                Ok(())
            }
            Ok(false) => Err(ApiError::InvalidCredentials),
            Err(e) => {
                throttle::forgive_all(&*self.store, [failures, checks]).await;
                Err(e)
            }
        }
    }
}
