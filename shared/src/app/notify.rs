//! Notifications (docs/API.md, Notifications and blocks), produced off
//! the request path: on Lambda the `notify` function reads the table's
//! stream; on the server the use cases hand each text event to
//! [`App::notify_in_background`] through a channel. Either way
//! [`App::on_text_event`] does the work, and may be given the same event
//! twice (the store keeps each text's notifications once).

use std::time::Duration;

use tokio::sync::mpsc;

use super::{App, SignedIn, throttle};
use crate::domain::notifications::{NOTIFICATION_DAYS, NotificationKind, excerpt, mentions, recipients};
use crate::domain::{
    Author, BlockSet, CommentId, CommentKey, MemberId, NewNotification, NotificationPage, PageLimit, TextEvent,
    TextRef, Window, WrittenText,
};
use crate::error::ApiError;
use crate::store::AttemptKey;

/// Mentions by guests that notify one member in an hour; the rest are dropped.
pub const GUEST_MENTIONS_AN_HOUR: u64 = 20;

/// Events waiting for the server's notifier: beyond this a burst of
/// writes drops notifications (logged) rather than growing memory.
const WAITING_EVENTS: usize = 10_000;

/// How often the server deletes notifications older than 90 days.
const EXPIRE_EVERY: Duration = Duration::from_secs(3600);

/// Tries of one event before the server's notifier logs and drops it.
const TRIES: u32 = 3;

/// The default page of `GET /members/me/notifications`, as of the other
/// lists of one's own (`DEFAULT_V3_PAGE`, which the OpenAPI document names).
pub const NOTIFICATIONS_PAGE: usize = 20;

/// The server's side of the notifier channel.
pub type TextEvents = mpsc::Receiver<TextEvent>;

impl App {
    /// Hands text events to this process's notifier (the server), which
    /// [`App::notify_in_background`] runs on `events`.
    pub fn with_notifier(mut self) -> (Self, TextEvents) {
        let (sender, events) = mpsc::channel(WAITING_EVENTS);
        self.notifier = Some(sender);
        (self, events)
    }

    /// Something was written, deleted or disowned: the notifier hears of it,
    /// if this process runs one (on Lambda the stream tells the `notify`
    /// function instead).
    pub(super) fn text_event(&self, event: TextEvent) {
        if let Some(notifier) = &self.notifier
            && let Err(e) = notifier.try_send(event)
        {
            tracing::warn!(error = %e, "a text event was dropped: the notifier is behind");
        }
    }

    /// A post or comment written by `author`, for the notifier.
    pub(super) fn written(
        &self,
        text: TextRef,
        parent: Option<&str>,
        author: &Author,
        title: Option<&str>,
        body: &str,
    ) {
        if self.notifier.is_none() {
            return;
        }
        self.text_event(TextEvent::Written(WrittenText {
            text,
            parent: parent.map(str::to_owned),
            author: author.clone(),
            title: title.map(str::to_owned),
            body: body.to_owned(),
        }));
    }

    /// A post just created.
    pub(super) fn post_written(&self, post: &crate::domain::Post) {
        let text = TextRef {
            post: super::read_cache::post_key(&post.summary),
            comment: None,
        };
        self.written(text, None, &post.summary.author, Some(&post.summary.title), &post.body);
    }

    /// A comment just created on `board`.
    pub(super) fn comment_written(&self, board: &crate::domain::BoardSlug, comment: &crate::domain::Comment) {
        let text = TextRef {
            post: crate::domain::PostKey {
                board: board.clone(),
                post: crate::domain::PostId::from_stored(comment.post_id.clone()),
            },
            comment: Some(comment.id.clone()),
        };
        self.written(text, comment.parent_id.as_deref(), &comment.author, None, &comment.body);
    }

    /// A post (with its comments) or a comment deleted or removed.
    pub(super) fn text_gone(&self, post: &crate::domain::PostKey, comment: Option<&CommentId>) {
        self.text_event(TextEvent::Gone(TextRef {
            post: post.clone(),
            comment: comment.map(|c| c.as_str().to_owned()),
        }));
    }

    /// A post or comment whose author's account was deleted, kept.
    pub(super) fn text_disowned(&self, item: &crate::domain::Owned) {
        let text = match item {
            crate::domain::Owned::Post(key) => TextRef {
                post: key.clone(),
                comment: None,
            },
            crate::domain::Owned::Comment(key) => TextRef {
                post: key.post.clone(),
                comment: Some(key.comment.as_str().to_owned()),
            },
            crate::domain::Owned::Like(_) => return,
        };
        self.text_event(TextEvent::Disowned(text));
    }

    /// What one text event changes. Idempotent.
    pub async fn on_text_event(&self, event: &TextEvent) -> Result<(), ApiError> {
        match event {
            TextEvent::Written(text) => self.notify_written(text).await.map(|_| ()),
            TextEvent::Gone(text) => {
                self.store.withdraw_notifications(text).await?;
                // Its images go to the sweep (SQLite did so in the delete).
                self.release_media(text).await
            }
            TextEvent::Disowned(text) => Ok(self.store.disown_notifications(text).await?),
        }
    }

    /// Notifies whom `text` concerns (docs/API.md: the post's author, the
    /// parent's, the mentioned), each once, never its author nor a member
    /// who blocks the author; how many were notified. A comment on a post
    /// that is gone notifies nobody.
    pub async fn notify_written(&self, text: &WrittenText) -> Result<usize, ApiError> {
        let post_author = match text.text.comment {
            Some(_) => match self.store.post_guard(&text.text.post).await? {
                Some(guard) => Some(guard.author),
                None => return Ok(0),
            },
            None => None,
        };
        let parent_author = match &text.parent {
            Some(parent) => {
                let key = CommentKey {
                    post: text.text.post.clone(),
                    comment: CommentId::from_stored(parent.clone()),
                };
                self.store.comment_guard(&key).await?.map(|guard| guard.author)
            }
            None => None,
        };
        let searched = match &text.title {
            Some(title) => format!("{title}\n{}", text.body),
            None => text.body.clone(),
        };
        let mut mentioned = Vec::new();
        for username in mentions(&searched) {
            if let Some(credentials) = self.store.member_credentials(&username).await? {
                mentioned.push(MemberId::from_stored(credentials.member.id));
            }
        }
        let created_at = crate::domain::now();
        let shown = excerpt(&text.body);
        let mut notifications = Vec::new();
        for (recipient, kind) in recipients(text, post_author.as_ref(), parent_author.as_ref(), &mentioned) {
            if BlockSet::of(&self.store.blocks(&recipient).await?).hides(&text.author) {
                continue;
            }
            if kind == NotificationKind::Mention
                && matches!(text.author, Author::Guest { .. })
                && !self.guest_mention_allowed(&recipient).await?
            {
                continue;
            }
            notifications.push(NewNotification {
                recipient,
                kind,
                actor: text.author.clone(),
                excerpt: shown.clone(),
                created_at: created_at.clone(),
            });
        }
        if notifications.is_empty() {
            return Ok(0);
        }
        let added = self.store.add_notifications(&text.text, &notifications).await?;
        Ok(if added { notifications.len() } else { 0 })
    }

    /// Whether one more guest's mention may notify `member`: at most
    /// [`GUEST_MENTIONS_AN_HOUR`] an hour (docs/API.md, Third audit: 35
    /// addresses filled a member's 1,000 kept notifications in 18.7 s).
    /// The rest are dropped, and logged with the member's count. One
    /// attempt counter a guest's mention (an `UpdateItem` on DynamoDB).
    async fn guest_mention_allowed(&self, member: &MemberId) -> Result<bool, ApiError> {
        let key = AttemptKey(format!("mentions:guests:{}", member.as_str()));
        let window = Window::containing(throttle::unix_now(), 3600);
        let count = self.store.record_failure(&key, window).await?;
        if count > GUEST_MENTIONS_AN_HOUR {
            tracing::info!(
                member = member.as_str(),
                dropped = count - GUEST_MENTIONS_AN_HOUR,
                "a guest's mention was dropped: the member had this hour's mentions from guests"
            );
        }
        Ok(count <= GUEST_MENTIONS_AN_HOUR)
    }

    /// The server's notifier: every text event the use cases hand it, in
    /// order, and the hourly expiry of notifications older than 90 days.
    /// Runs until the process ends. An event that fails [`TRIES`] times is
    /// logged and dropped (the store answered errors that long).
    pub async fn notify_in_background(self, mut events: TextEvents) {
        let mut expire = tokio::time::interval(EXPIRE_EVERY);
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { return };
                    self.handle_with_retries(&event).await;
                }
                _ = expire.tick() => {
                    let before = chrono::Utc::now() - chrono::Duration::days(NOTIFICATION_DAYS);
                    match self.store.expire_notifications(&crate::domain::timestamp(before)).await {
                        Ok(0) => {}
                        Ok(n) => tracing::info!(expired = n, "old notifications deleted"),
                        Err(e) => tracing::warn!(error = %e, "old notifications not deleted; next hour"),
                    }
                }
            }
        }
    }

    async fn handle_with_retries(&self, event: &TextEvent) {
        for attempt in 1..=TRIES {
            match self.on_text_event(event).await {
                Ok(()) => return,
                Err(e) if attempt < TRIES => {
                    tracing::warn!(error = %e, attempt, "a text event failed; trying again");
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt))).await;
                }
                Err(e) => tracing::error!(error = %e, "a text event failed; its notifications are lost"),
            }
        }
    }

    /// `GET /members/me/notifications`: newest first.
    pub async fn notifications(
        &self,
        member: &SignedIn,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> Result<NotificationPage, ApiError> {
        let cursor = cursor.filter(|c| !c.is_empty());
        Ok(self.store.notifications(&member.id, limit, cursor).await?)
    }

    /// `GET /members/me/notifications/unread`.
    pub async fn unread_notifications(&self, member: &SignedIn) -> Result<u64, ApiError> {
        Ok(self.store.unread_notifications(&member.id).await?)
    }

    /// `POST /members/me/notifications/read`: up to `up_to` (a notification
    /// id), or all; the unread count after.
    pub async fn mark_notifications_read(&self, member: &SignedIn, up_to: Option<&str>) -> Result<u64, ApiError> {
        let up_to = match up_to {
            Some(id) => match ulid::Ulid::from_string(id) {
                Ok(_) if id.len() == 26 => Some(id.to_ascii_uppercase()),
                _ => return Err(ApiError::invalid("up_to", "must be a notification id")),
            },
            None => None,
        };
        Ok(self.store.mark_notifications_read(&member.id, up_to.as_deref()).await?)
    }
}
