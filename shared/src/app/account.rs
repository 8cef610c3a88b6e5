//! A member's own account (docs/API.md, Accounts): who they are, their
//! password, their sessions, their posts and comments, and leaving.

use std::time::Duration;

use super::passwords::{check_length, check_new_password, check_password};
use super::throttle::{self, Refusal};
use super::{App, ClientAddress, SignedIn, revoked, username_of};
use crate::domain::{
    CommentPage, Me, MemberCredentials, MemberId, Page, PageLimit, Password, PasswordHash, PendingDeletion, Roles,
    Username,
};
use crate::error::ApiError;
use crate::hashing::Tier;

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
        let moderates = self
            .store
            .moderated_boards(&member.id, &self.board_slugs().await?)
            .await?;
        Ok(Me {
            member: found,
            roles: Roles {
                admin: self.is_admin(member),
                moderates: moderates.into_iter().map(|b| b.into_inner()).collect(),
            },
        })
    }

    pub async fn my_posts(&self, member: &SignedIn, limit: PageLimit, cursor: Option<&str>) -> Result<Page, ApiError> {
        let mut page = self.store.member_posts(&member.id, limit, cursor).await?;
        self.with_counted_views(&mut page);
        for summary in &mut page.posts {
            self.shown_to(summary, Some(member)).await?;
        }
        Ok(page)
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
        check_length(&hashing, Tier::Member, "new_password", &command.new)?;
        let username = username_of(&command.member)?;
        // The member password rules, before any hash. Whether TOTP is
        // on is read only when it could matter: a password shorter than a
        // password alone may be (PASSWORD_POLICY=nist).
        let second_factor = command.new.code_points() < self.passwords.member_min(false)
            && self
                .store
                .session_state(&command.member.id, &username)
                .await?
                .is_some_and(|state| state.totp);
        let context = [command.member.username.as_str(), command.member.nickname.as_str()];
        check_new_password(&self.passwords, "new_password", &command.new, &context, second_factor)?;
        self.check_own_password(
            &command.member,
            &username,
            ("current_password", &command.current),
            &command.client,
        )
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
    /// in one write, then step 2 (the content, in batches:
    /// [`App::finish_deletion`]). Once step 1 is written the deletion is
    /// answered as done: a step 2 cut short stays pending, and the
    /// background purge finishes it (docs/DESIGN.md, Accounts): on
    /// Lambda the `purge` function's schedule, on the server its background
    /// task at the next start; the next account deletion sweeps one too.
    pub async fn delete_account(&self, command: DeleteAccount) -> Result<(), ApiError> {
        let username = username_of(&command.member)?;
        self.check_own_password(
            &command.member,
            &username,
            ("password", &command.password),
            &command.client,
        )
        .await?;
        let moderates = self
            .store
            .moderated_boards(&command.member.id, &self.board_slugs().await?)
            .await?;
        if !self
            .store
            .close_account(&command.member.id, &username, command.delete_content, &moderates)
            .await?
        {
            return Err(revoked());
        }
        self.release_uploads_of(&command.member.id).await;
        let own = PendingDeletion {
            member: command.member.id.clone(),
            delete_content: command.delete_content,
        };
        // Step 2 runs as a task of its own, awaited for the budget: on the
        // server it goes on to the end after the answer; on Lambda while the
        // execution environment lives (a frozen one resumes it when thawed),
        // and what is left stays pending for the background purge.
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

    /// The closed account's uploads attached nowhere are due now, and the
    /// sweep runs: they and their files go at once, not after their 24
    /// hours (docs/API.md, Accounts). Best effort: what a failure leaves
    /// the sweep takes at its time.
    async fn release_uploads_of(&self, member: &MemberId) {
        let owner = crate::domain::media::MediaOwner::Member(member.clone());
        match self.store.release_unattached(&owner, &crate::domain::now()).await {
            Ok(0) => {}
            Ok(released) => {
                tracing::info!(released, "a closed account's unattached uploads are due");
                self.sweep_soon();
            }
            Err(e) => tracing::warn!(error = %e, "a closed account's unattached uploads wait for their time"),
        }
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

    /// A member's own password, checked as a login checks one: throttled
    /// per username and address and per address before any hashing, and a
    /// wrong one counted as a failed login (docs/API.md, Throttling and
    /// quotas); `401 invalid_credentials` naming the body's password field
    /// when wrong.
    pub(super) async fn check_own_password(
        &self,
        member: &SignedIn,
        username: &Username,
        (field, password): (&'static str, &Password),
        client: &ClientAddress,
    ) -> Result<MemberCredentials, ApiError> {
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
            let matched = check_password(&hashing, Tier::Member, password, stored).await?.matched;
            Ok::<_, ApiError>(credentials.filter(|_| matched))
        }
        .await;
        match checked {
            Ok(Some(credentials)) => {
                throttle::forgive(&*self.store, failures).await;
                Ok(credentials)
            }
            Ok(None) => Err(ApiError::InvalidCredentials { field: Some(field) }),
            Err(e) => {
                throttle::forgive_all(&*self.store, [failures, checks]).await;
                Err(e)
            }
        }
    }
}
