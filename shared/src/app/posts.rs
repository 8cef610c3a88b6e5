//! Reading boards and what members write (docs/API.md, Routes: read and
//! member-write). A member may change only what they wrote.

use super::{Answer, IdempotencyKey};
use crate::domain::media::{AttachedMedia, MediaList, MediaOwner};
use crate::domain::moderation::Screened;
use crate::domain::{
    Author, BoardSlug, Category, Comment, CommentBody, CommentId, CommentKey, CommentPage, Guard, PageLimit, Post,
    PostBody, PostDetail, PostId, PostKey, PostSummary, PostVersion, Title, now,
};
use crate::error::ApiError;
use crate::store::{Edited, MediaEdit, PostEdit};

use super::{App, ClientAddress, SignedIn};

#[derive(Debug)]
pub struct ListPosts {
    pub board: BoardSlug,
    pub limit: PageLimit,
    pub cursor: Option<String>,
    /// `?category=`: only that category's posts.
    pub category: Option<Category>,
    /// `?best=true`: only the board's best posts.
    pub best: bool,
}

impl ListPosts {
    /// A board's page of every post.
    pub fn all(board: BoardSlug, limit: PageLimit, cursor: Option<String>) -> Self {
        ListPosts {
            board,
            limit,
            cursor,
            category: None,
            best: false,
        }
    }

    pub(crate) fn filtered(&self) -> bool {
        self.best || self.category.is_some()
    }
}

#[derive(Debug)]
pub struct WritePost {
    /// The request's `Idempotency-Key`, if it came with one.
    pub idempotency: Option<IdempotencyKey>,
    pub client: ClientAddress,
    pub board: BoardSlug,
    pub title: Title,
    pub body: PostBody,
    /// The body's `category`, checked against the board's list by the use case.
    pub category: Option<String>,
    /// Images to attach.
    pub media: MediaList,
}

#[derive(Debug)]
pub struct EditPost {
    pub client: ClientAddress,
    pub key: PostKey,
    pub title: Title,
    pub body: PostBody,
    /// The body's `category`: absent keeps the post's, null clears it.
    pub category: Option<Option<String>>,
    /// `If-Match`: the versions this edit may change; `None` for any.
    pub if_match: Option<Vec<PostVersion>>,
    /// The post's images from now on; absent keeps them.
    pub media: Option<MediaList>,
}

#[derive(Debug)]
pub struct WriteComment {
    /// The request's `Idempotency-Key`, if it came with one.
    pub idempotency: Option<IdempotencyKey>,
    pub client: ClientAddress,
    pub key: PostKey,
    pub parent: Option<CommentId>,
    pub body: CommentBody,
    /// At most one image.
    pub media: MediaList,
}

/// What a post create writes besides its text and author.
pub(super) struct Placed {
    pub number: u64,
    pub category: Option<Category>,
}

pub(super) fn new_post(
    board: BoardSlug,
    title: Title,
    body: PostBody,
    author: Author,
    placed: Placed,
    media: Vec<AttachedMedia>,
) -> Post {
    let at = now();
    Post {
        summary: PostSummary {
            id: PostId::generate().into_inner(),
            board: board.into_inner(),
            title: title.into_inner(),
            author,
            created_at: at.clone(),
            view_count: 0,
            like_count: 0,
            comment_count: 0,
            number: placed.number,
            category: placed.category.map(Category::into_inner),
            dislike_count: Some(0),
            best: false,
            media_count: u32::try_from(media.len()).unwrap_or(u32::MAX),
        },
        body: body.into_inner(),
        updated_at: at,
        revision_count: 0,
        media,
    }
}

pub(super) fn new_comment(
    post: &PostId,
    parent: Option<CommentId>,
    body: CommentBody,
    author: Author,
    media: Vec<AttachedMedia>,
) -> Comment {
    Comment {
        id: CommentId::generate().into_inner(),
        post_id: post.as_str().to_owned(),
        parent_id: parent.map(CommentId::into_inner),
        body: body.into_inner(),
        author,
        created_at: now(),
        media,
    }
}

/// A member may change only what they wrote.
fn require_author(guard: &Guard, member: &SignedIn, what: &str) -> Result<(), ApiError> {
    match &guard.author {
        Author::Member { member_id, .. } if member_id == member.id.as_str() => Ok(()),
        _ => Err(ApiError::Forbidden(format!(
            "only the member who wrote this {what} may change it"
        ))),
    }
}

impl App {
    pub async fn create_member_post(
        &self,
        member: &SignedIn,
        command: WritePost,
    ) -> Result<Answer<PostDetail>, ApiError> {
        let category = self
            .board_settings(command.board.as_str())
            .await?
            .category(command.category)?;
        let writer = self
            .require_not_banned(&command.board, &command.client, Some(member))
            .await?;
        let reservation = self
            .reserve_create(&command.client, Some(member), super::throttle::Reservation::none())
            .await?;
        let fields = [
            (Screened::Title, command.title.as_str()),
            (Screened::PostBody, command.body.as_str()),
        ];
        let reservation = self.screen_counted(&fields, reservation).await?;
        let owner = MediaOwner::Member(member.id.clone());
        let (media, reservation) = self
            .attachable_counted(&command.media, &command.board, &owner, reservation)
            .await?;
        let created = self
            .once(command.idempotency.as_ref(), |claim| async move {
                let number = self.store.allocate_post_number(&command.board).await?;
                let placed = Placed { number, category };
                let post = new_post(
                    command.board,
                    command.title,
                    command.body,
                    member.author(),
                    placed,
                    media,
                );
                let mut detail = PostDetail::new(post);
                self.shown_to(&mut detail.post.summary, Some(member)).await?;
                let done = super::completion(claim.as_ref(), &detail)?;
                self.store
                    .create_post(&detail.post, &writer, None, done.as_ref())
                    .await?;
                self.post_written(&detail.post);
                Ok(detail)
            })
            .await;
        self.keep_only_if_created(&created, reservation).await;
        created
    }

    /// An edit counts against the write quotas as a create does (given
    /// back when it changes nothing).
    pub async fn update_member_post(&self, member: &SignedIn, command: EditPost) -> Result<PostDetail, ApiError> {
        self.require_not_banned(&command.key.board, &command.client, Some(member))
            .await?;
        let guard = self.require_post(&command.key).await?;
        require_author(&guard, member, "post")?;
        let locks = self.require_unlocked(&command.key, &guard).await?;
        let reservation = self
            .reserve_create(&command.client, Some(member), super::throttle::Reservation::none())
            .await?;
        let screened = self
            .screen(&[
                (Screened::Title, command.title.as_str()),
                (Screened::PostBody, command.body.as_str()),
            ])
            .await;
        let edited = match screened {
            Ok(()) => {
                let owner = MediaOwner::Member(member.id.clone());
                self.apply_edit(command, Some(member), owner, locks).await
            }
            Err(refused) => Err(refused),
        };
        self.keep_only_if_done(&edited, reservation).await;
        edited
    }

    /// Stores the edit and answers the post as it now is. `locks`: the
    /// board's edit lock holds for this edit, decided again in its write.
    pub(super) async fn apply_edit(
        &self,
        command: EditPost,
        editor: Option<&SignedIn>,
        owner: MediaOwner,
        locks: bool,
    ) -> Result<PostDetail, ApiError> {
        let category = match command.category {
            None => None,
            Some(asked) => Some(self.board_settings(command.key.board.as_str()).await?.category(asked)?),
        };
        let changes_media = command.media.is_some();
        let media = match &command.media {
            None => None,
            Some(list) => {
                let own = Some(command.key.post.as_str());
                let media = self.attachable(list, &command.key.board, &owner, own).await?;
                Some(MediaEdit { media, owner })
            }
        };
        let edit = PostEdit {
            title: command.title,
            body: command.body,
            category,
            updated_at: now(),
            if_version: command.if_match,
            media,
            unless_answered: locks,
        };
        match self.store.update_post(&command.key, &edit).await? {
            Edited::Done => {}
            Edited::NoSuchPost => return Err(self.not_found_post()),
            Edited::OtherVersion => return Err(ApiError::PreconditionFailed),
            Edited::Answered => return Err(ApiError::Locked),
        }
        if changes_media {
            // Images it dropped are due now.
            self.sweep_soon();
        }
        let mut detail = self
            .store
            .post_detail(&command.key)
            .await?
            .ok_or_else(|| self.not_found_post())?;
        self.with_counted_view(&mut detail);
        self.shown_to(&mut detail.post.summary, editor).await?;
        Ok(detail)
    }

    pub async fn delete_member_post(
        &self,
        member: &SignedIn,
        client: &ClientAddress,
        key: &PostKey,
    ) -> Result<(), ApiError> {
        self.require_not_banned(&key.board, client, Some(member)).await?;
        let guard = self.require_post(key).await?;
        require_author(&guard, member, "post")?;
        let locks = self.require_unlocked(key, &guard).await?;
        self.delete_post(key, locks).await
    }

    /// `409 locked` when the board locks answered posts and someone other
    /// than the author `guard` names has a comment on this one (docs/API.md,
    /// Edit history and edit locks); else whether the board locks. Only the
    /// author's own edits and deletes ask; staff removal does not. This
    /// early read (before a guest's hash) stops at the first comment by
    /// someone else; the edit's or delete's own write decides again, so an
    /// answer written in between still locks (`unless_answered`).
    pub(super) async fn require_unlocked(&self, key: &PostKey, guard: &Guard) -> Result<bool, ApiError> {
        if !self.board_settings(key.board.as_str()).await?.lock_after_comments {
            return Ok(false);
        }
        if self.store.answered_by_others(key, guard).await? {
            return Err(ApiError::Locked);
        }
        Ok(true)
    }

    /// Whether a comment by `member` (none: a guest) from `writer` answers
    /// its post on a board with the edit lock (counted so the lock is
    /// decided in the author's own write); `guard` is the post's, read
    /// when not given.
    pub(super) async fn answers(
        &self,
        key: &PostKey,
        guard: Option<Guard>,
        member: Option<&SignedIn>,
        writer: &crate::domain::WriterKey,
    ) -> Result<bool, ApiError> {
        if !self.board_settings(key.board.as_str()).await?.lock_after_comments {
            return Ok(false);
        }
        let guard = match guard {
            Some(guard) => guard,
            None => self.require_post(key).await?,
        };
        Ok(guard.answered_by(member.map(|m| m.id.as_str()), writer))
    }

    /// The post goes now; its children after the request ([`super::purge`]).
    pub(super) async fn delete_post(&self, key: &PostKey, unless_answered: bool) -> Result<(), ApiError> {
        if self.store.delete_post(key, unless_answered).await? {
            self.purge_soon();
            self.text_gone(key, None);
            Ok(())
        } else {
            Err(self.not_found_post())
        }
    }

    /// A page of a post's comments, oldest first (docs/API.md, Bodies),
    /// without those of whom `viewer` blocks (the cursor still pages on).
    pub async fn list_comments(
        &self,
        key: &PostKey,
        limit: PageLimit,
        cursor: Option<&str>,
        viewer: Option<&SignedIn>,
    ) -> Result<CommentPage, ApiError> {
        let cursor = cursor.filter(|c| !c.is_empty());
        let blocks = self.block_set(viewer).await?;
        let mut page = self
            .store
            .list_comments(key, limit, cursor)
            .await?
            .ok_or_else(|| self.not_found_post())?;
        super::blocks::filter_comments(&mut page, &blocks);
        Ok(page)
    }

    /// One comment of a post, as its post's comment pages show it: `404`
    /// when the post has no such comment (another post's, or deleted or
    /// removed, which no page shows either).
    pub async fn get_comment(&self, key: &CommentKey) -> Result<Comment, ApiError> {
        self.store
            .comment(key)
            .await?
            .ok_or_else(|| ApiError::not_found("comment"))
    }

    /// The author member deletes their comment; its replies stay.
    pub async fn delete_member_comment(
        &self,
        member: &SignedIn,
        client: &ClientAddress,
        key: &CommentKey,
    ) -> Result<(), ApiError> {
        self.require_not_banned(&key.post.board, client, Some(member)).await?;
        let guard = self
            .store
            .comment_guard(key)
            .await?
            .ok_or_else(|| ApiError::not_found("comment"))?;
        require_author(&guard, member, "comment")?;
        if self.store.delete_comment(key).await? {
            self.text_gone(&key.post, Some(&key.comment));
            Ok(())
        } else {
            Err(ApiError::not_found("comment"))
        }
    }

    pub async fn create_member_comment(
        &self,
        member: &SignedIn,
        command: WriteComment,
    ) -> Result<Answer<Comment>, ApiError> {
        let writer = self
            .require_not_banned(&command.key.board, &command.client, Some(member))
            .await?;
        let answers = self.answers(&command.key, None, Some(member), &writer.key).await?;
        let reservation = self
            .reserve_create(&command.client, Some(member), super::throttle::Reservation::none())
            .await?;
        let reservation = self
            .screen_counted(&[(Screened::CommentBody, command.body.as_str())], reservation)
            .await?;
        let owner = MediaOwner::Member(member.id.clone());
        let (media, reservation) = self
            .attachable_counted(&command.media, &command.key.board, &owner, reservation)
            .await?;
        let created = self
            .once(command.idempotency.as_ref(), |claim| async move {
                let comment = new_comment(&command.key.post, command.parent, command.body, member.author(), media);
                let done = super::completion(claim.as_ref(), &comment)?;
                self.store
                    .create_comment(&command.key.board, &comment, &writer, None, answers, done.as_ref())
                    .await?;
                self.comment_written(&command.key.board, &comment);
                Ok(comment)
            })
            .await;
        self.keep_only_if_created(&created, reservation).await;
        created
    }
}
