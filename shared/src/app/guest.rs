//! What guests write, guarded by a guest password (docs/API.md, Routes:
//! guest-post and guest-comment). Wrong passwords are throttled per target
//! and client address before any hashing.

use super::{Answer, IdempotencyKey};
use crate::domain::moderation::Screened;
use crate::domain::{
    Author, BoardSlug, Comment, CommentBody, CommentId, CommentKey, Guard, Nickname, Password, PasswordHash, PostBody,
    PostDetail, PostKey, PostVersion, Title,
};
use crate::error::ApiError;
use crate::hashing::Tier;

use super::passwords::{check_length, check_password};
use super::posts::{EditPost, Placed, new_comment, new_post};
use super::pow::AnonymousWrite;
use super::throttle::Refusal;
use super::{App, ClientAddress, throttle};
use crate::domain::media::{MediaList, MediaOwner};

#[derive(Debug)]
pub struct GuestPost {
    /// The request's `Idempotency-Key`, if it came with one.
    pub idempotency: Option<IdempotencyKey>,
    pub client: ClientAddress,
    pub board: BoardSlug,
    pub nickname: Nickname,
    pub password: Password,
    pub title: Title,
    pub body: PostBody,
    /// The body's `category`, checked against the board's list.
    pub category: Option<String>,
    /// Images to attach, granted to this address.
    pub media: MediaList,
    /// The request's `X-Pow`, if it came with one.
    pub pow: Option<String>,
}

#[derive(Debug)]
pub struct GuestEdit {
    pub key: PostKey,
    pub password: Password,
    pub title: Title,
    pub body: PostBody,
    /// Absent keeps the post's category, null clears it.
    pub category: Option<Option<String>>,
    pub client: ClientAddress,
    /// `If-Match`: the versions this edit may change; `None` for any.
    pub if_match: Option<Vec<PostVersion>>,
    /// The post's images from now on (new ones granted to this
    /// address); absent keeps them.
    pub media: Option<MediaList>,
}

#[derive(Debug)]
pub struct GuestComment {
    /// The request's `Idempotency-Key`, if it came with one.
    pub idempotency: Option<IdempotencyKey>,
    pub client: ClientAddress,
    pub key: PostKey,
    pub nickname: Nickname,
    pub password: Password,
    pub parent: Option<CommentId>,
    pub body: CommentBody,
    /// At most one image, granted to this address.
    pub media: MediaList,
    /// The request's `X-Pow`, if it came with one.
    pub pow: Option<String>,
}

/// A guest's proof for deleting what they wrote.
#[derive(Debug)]
pub struct GuestProof {
    pub password: Password,
    pub client: ClientAddress,
}

/// A hash to store in place of the old one, when the old one was made under
/// an older policy.
struct Upgrade {
    old: PasswordHash,
    new: PasswordHash,
}

impl App {
    pub async fn create_guest_post(&self, command: GuestPost) -> Result<Answer<PostDetail>, ApiError> {
        let hashing = &self.hashing()?.for_client(&command.client.0);
        check_length(hashing, Tier::Guest, "password", &command.password)?;
        let board = self.board_settings(command.board.as_str()).await?;
        let category = board.category(command.category)?;
        if !board.guest_writes {
            return Err(super::votes::guests_cannot_write());
        }
        let writer = self.require_not_banned(&command.board, &command.client, None).await?;
        let counted = self
            .require_pow(AnonymousWrite {
                client: &command.client,
                board: Some(&command.board),
                proof: command.pow.as_deref(),
            })
            .await?;
        let reservation = self.reserve_create(&command.client, None, counted).await?;
        let fields = [
            (Screened::Nickname, command.nickname.as_str()),
            (Screened::Title, command.title.as_str()),
            (Screened::PostBody, command.body.as_str()),
        ];
        let reservation = self.screen_counted(&fields, reservation).await?;
        let owner = MediaOwner::Guest(writer.key.clone());
        let (media, reservation) = self
            .attachable_counted(&command.media, &command.board, &owner, reservation)
            .await?;
        let created = self
            .once(command.idempotency.as_ref(), |claim| async move {
                let hash = hashing.hash(Tier::Guest, command.password.secret().clone()).await?;
                let author = Author::guest(command.nickname.into_inner(), &writer.key);
                let number = self.store.allocate_post_number(&command.board).await?;
                let placed = Placed { number, category };
                let post = new_post(command.board, command.title, command.body, author, placed, media);
                let mut detail = PostDetail::new(post);
                if board.dislikes != crate::domain::DislikePolicy::Shown {
                    super::reads::hide_dislikes(&mut detail.post.summary);
                }
                let done = super::completion(claim.as_ref(), &detail)?;
                self.store
                    .create_post(&detail.post, &writer, Some(&PasswordHash::new(hash)), done.as_ref())
                    .await?;
                self.post_written(&detail.post);
                Ok(detail)
            })
            .await;
        self.keep_only_if_created(&created, reservation).await;
        created
    }

    pub async fn update_guest_post(&self, command: GuestEdit) -> Result<PostDetail, ApiError> {
        check_length(self.hashing()?, Tier::Guest, "password", &command.password)?;
        let writer = self
            .require_not_banned(&command.key.board, &command.client, None)
            .await?;
        let guard = self.require_post(&command.key).await?;
        // Before the password check: a locked post costs no hash.
        let locks = self.require_unlocked(&command.key, &guard).await?;
        // The write quotas, also before any hash; given back unless it edits.
        let reservation = self
            .reserve_create(&command.client, None, super::throttle::Reservation::none())
            .await?;
        let edited = self.checked_guest_edit(command, guard, writer, locks).await;
        self.keep_only_if_done(&edited, reservation).await;
        edited
    }

    async fn checked_guest_edit(
        &self,
        command: GuestEdit,
        guard: crate::domain::Guard,
        writer: crate::domain::Writer,
        locks: bool,
    ) -> Result<PostDetail, ApiError> {
        let target = command.key.post.as_str();
        let upgrade = self
            .check_guest_password(target, &command.client, &command.password, guard)
            .await?;
        // After the password's own limits and check, before the first write.
        self.screen(&[
            (Screened::Title, command.title.as_str()),
            (Screened::PostBody, command.body.as_str()),
        ])
        .await?;
        if let Some(up) = upgrade {
            self.store
                .replace_post_guest_hash(&command.key, &up.old, &up.new)
                .await?;
        }
        self.apply_edit(
            EditPost {
                client: command.client,
                key: command.key,
                title: command.title,
                body: command.body,
                category: command.category,
                if_match: command.if_match,
                media: command.media,
            },
            None,
            MediaOwner::Guest(writer.key),
            locks,
        )
        .await
    }

    pub async fn delete_guest_post(&self, key: &PostKey, proof: GuestProof) -> Result<(), ApiError> {
        check_length(self.hashing()?, Tier::Guest, "password", &proof.password)?;
        self.require_not_banned(&key.board, &proof.client, None).await?;
        let guard = self.require_post(key).await?;
        let locks = self.require_unlocked(key, &guard).await?;
        // No hash upgrade: the post is about to go.
        self.check_guest_password(key.post.as_str(), &proof.client, &proof.password, guard)
            .await?;
        self.delete_post(key, locks).await
    }

    pub async fn create_guest_comment(&self, command: GuestComment) -> Result<Answer<Comment>, ApiError> {
        let hashing = &self.hashing()?.for_client(&command.client.0);
        check_length(hashing, Tier::Guest, "password", &command.password)?;
        if !self.board_settings(command.key.board.as_str()).await?.guest_writes {
            return Err(super::votes::guests_cannot_write());
        }
        let writer = self
            .require_not_banned(&command.key.board, &command.client, None)
            .await?;
        // Fail fast on a missing post before counting or paying for the hash.
        let post = self.require_post(&command.key).await?;
        let answers = self.answers(&command.key, Some(post), None, &writer.key).await?;
        let counted = self
            .require_pow(AnonymousWrite {
                client: &command.client,
                board: Some(&command.key.board),
                proof: command.pow.as_deref(),
            })
            .await?;
        let reservation = self.reserve_create(&command.client, None, counted).await?;
        let fields = [
            (Screened::Nickname, command.nickname.as_str()),
            (Screened::CommentBody, command.body.as_str()),
        ];
        let reservation = self.screen_counted(&fields, reservation).await?;
        let owner = MediaOwner::Guest(writer.key.clone());
        let (media, reservation) = self
            .attachable_counted(&command.media, &command.key.board, &owner, reservation)
            .await?;
        let created = self
            .once(command.idempotency.as_ref(), |claim| async move {
                let hash = hashing.hash(Tier::Guest, command.password.secret().clone()).await?;
                let author = Author::guest(command.nickname.into_inner(), &writer.key);
                let comment = new_comment(&command.key.post, command.parent, command.body, author, media);
                let done = super::completion(claim.as_ref(), &comment)?;
                self.store
                    .create_comment(
                        &command.key.board,
                        &comment,
                        &writer,
                        Some(&PasswordHash::new(hash)),
                        answers,
                        done.as_ref(),
                    )
                    .await?;
                self.comment_written(&command.key.board, &comment);
                Ok(comment)
            })
            .await;
        self.keep_only_if_created(&created, reservation).await;
        created
    }

    pub async fn delete_guest_comment(&self, key: &CommentKey, proof: GuestProof) -> Result<(), ApiError> {
        check_length(self.hashing()?, Tier::Guest, "password", &proof.password)?;
        self.require_not_banned(&key.post.board, &proof.client, None).await?;
        let guard = self
            .store
            .comment_guard(key)
            .await?
            .ok_or_else(|| ApiError::not_found("comment"))?;
        self.check_guest_password(key.comment.as_str(), &proof.client, &proof.password, guard)
            .await?;
        if self.store.delete_comment(key).await? {
            self.text_gone(&key.post, Some(&key.comment));
            Ok(())
        } else {
            Err(ApiError::not_found("comment"))
        }
    }

    /// Checks a guest password against what it guards: throttled per target
    /// and client address before any hashing. Returns a new hash when the
    /// stored one should move to the guest tier's current policy.
    async fn check_guest_password(
        &self,
        target_id: &str,
        client: &ClientAddress,
        password: &Password,
        guard: Guard,
    ) -> Result<Option<Upgrade>, ApiError> {
        let hashing = self.hashing()?.for_client(&client.0);
        let Some(stored) = guard.guest_password_hash else {
            return Err(ApiError::Forbidden(
                "this was written by a member; sign in to change it".into(),
            ));
        };
        let writer = guard
            .writer
            .is_some_and(|writer| self.tags().is_ok_and(|tags| tags.writer_keys(client).contains(&writer)));
        let failure_keys = throttle::guest_keys(&self.limits, target_id, &client.0, writer);
        let mut keys = throttle::password_check_keys(&self.limits, &client.0);
        keys.extend(failure_keys.iter().cloned());
        let mut checks = throttle::reserve(&*self.store, &keys, Refusal::TooManyAttempts).await?;
        let failures = checks.take(&failure_keys);
        let verdict = match check_password(&hashing, Tier::Guest, password, Some(&stored)).await {
            Ok(verdict) => verdict,
            // No verdict: nothing is counted, but a shed counts as a check.
            Err(e) => {
                throttle::settle_unchecked(&*self.store, &e, checks, [failures]).await;
                return Err(e);
            }
        };
        if !verdict.matched {
            // Counted as a failure and as a check.
            return Err(ApiError::WrongPassword);
        }
        // A right password stays counted as a check.
        throttle::forgive(&*self.store, failures).await;
        if !verdict.needs_rehash {
            return Ok(None);
        }
        match hashing.hash(Tier::Guest, password.secret().clone()).await {
            Ok(new) => Ok(Some(Upgrade {
                old: stored,
                new: PasswordHash::new(new),
            })),
            Err(e) => {
                tracing::warn!(error = %e, "guest hash upgrade skipped");
                Ok(None)
            }
        }
    }
}
