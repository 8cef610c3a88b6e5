//! [`Comments`] on DynamoDB: comment items under their post's partition,
//! each written or deleted in one transaction with its count on a counter
//! shard; a delete resolves the comment's open report in it. The
//! edit lock's check is a Query of them that counts others' comments.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, Select, TransactWriteItem};

use super::DynamoStore;
use super::attributes::{from_item, key, s, text, to_item};
use super::items::{COMMENT_SK_PREFIX, CommentItem, comment_pointer_sk, comment_sk, post_pk, reports_pk, shard_of};
use super::transact::{Race, failed_at, retry_races};
use crate::domain::{
    Author, BoardSlug, Comment, CommentId, CommentKey, Guard, PasswordHash, PostId, PostKey, Writer, WriterKey,
};
use crate::store::dynamo::transact::Condition;
use crate::store::{Comments, Completion, StoreError, StoreResult};

/// The comments the lock check's first Query reads (then up to
/// 1 MB a page): another's is usually among the first few, and four short
/// comments (about 500 bytes each with their keys) fit one read unit.
const FIRST_LOCK_PAGE: i32 = 4;

/// How a comment's delete ended.
pub(super) enum CommentDeleted {
    Deleted,
    /// No such comment on the board, or its post is deleted: nothing was written.
    NoSuchComment,
    /// The comment is there but a condition of one of the extra items
    /// failed (which ones, in their order): nothing was written.
    ExtraFailed(Vec<bool>),
}

impl DynamoStore {
    /// The comment item, on the key's board, read beside its post's purge
    /// marker (a small item, unlike the post): two consistent GetItems side
    /// by side. A comment of a deleted post whose purge is pending is not
    /// found, as no page of the post shows it; after the purge it is gone.
    async fn live_comment(&self, comment_key: &CommentKey) -> StoreResult<Option<CommentItem>> {
        let (board, post_id, comment_id) = (
            comment_key.post.board.as_str(),
            comment_key.post.post.as_str(),
            comment_key.comment.as_str(),
        );
        let (item, purging) = tokio::try_join!(
            self.get(key(post_pk(post_id), comment_sk(comment_id))),
            self.purge_pending(post_id)
        )?;
        let Some(item) = item.filter(|_| !purging) else {
            return Ok(None);
        };
        let comment: CommentItem = from_item(item)?;
        Ok((comment.board == board).then_some(comment))
    }

    /// The comment's open report, if any (its pointer's `report_id`), and
    /// whether it is counted as an answer (its `answer`, which never
    /// changes): one BatchGetItem of the two items, only those attributes.
    async fn pointer_and_answer(&self, comment_key: &CommentKey) -> StoreResult<(Option<String>, bool)> {
        const READ: super::attributes::Projection = super::attributes::Projection {
            expression: "SK, report_id, answer",
            names: &[],
        };
        let (post_id, comment_id) = (comment_key.post.post.as_str(), comment_key.comment.as_str());
        let keys = vec![
            key(post_pk(post_id), comment_pointer_sk(comment_id)),
            key(post_pk(post_id), comment_sk(comment_id)),
        ];
        let (mut report, mut answer) = (None, false);
        for item in self.batch_get(keys, true, Some(&READ)).await? {
            match text(&item, "report_id") {
                Some(id) => report = Some(id.to_owned()),
                None => answer = matches!(item.get("answer"), Some(AttributeValue::Bool(true))),
            }
        }
        Ok((report, answer))
    }

    /// The comment's report pointer and its `answer` (one read), then one
    /// transaction: the
    /// comment's delete, its count on its shard, the delete of its open
    /// report and of the pointer (conditioned on naming that report), or
    /// the check that it has no pointer, and `extra` (a removal's log
    /// entry and completion). A report of the comment opened or resolved
    /// between the read and the transaction starts it over, so no report
    /// of a deleted comment stays open.
    pub(super) async fn delete_comment_with(
        &self,
        comment_key: &CommentKey,
        extra: Vec<TransactWriteItem>,
    ) -> StoreResult<CommentDeleted> {
        let (board, post_id, comment_id) = (
            comment_key.post.board.as_str(),
            comment_key.post.post.as_str(),
            comment_key.comment.as_str(),
        );
        let shard = shard_of(comment_id, self.layout.counter_shards);
        let pointer_key = &key(post_pk(post_id), comment_pointer_sk(comment_id));
        let extra = &extra;
        let gave_up = "the delete kept racing reports of the comment";
        retry_races(gave_up, (), |()| async move {
            let (pointer, answer) = self.pointer_and_answer(comment_key).await?;
            let mut items = vec![
                self.delete(
                    key(post_pk(post_id), comment_sk(comment_id)),
                    Some("attribute_exists(PK)"),
                )?,
                self.count_comment_on_shard(board, post_id, shard, -1, answer)?,
            ];
            let pointer_at = items.len();
            match &pointer {
                Some(id) => {
                    let id = id.as_str();
                    items.push(self.delete(
                        pointer_key.clone(),
                        Condition::new("report_id = :id").values(&[(":id", s(id))]),
                    )?);
                    items.push(self.delete(key(reports_pk(board), id.to_owned()), None)?);
                }
                None => items.push(self.check(pointer_key.clone(), "attribute_not_exists(PK)", &[])?),
            }
            let extra_at = items.len();
            items.extend(extra.iter().cloned());
            let result = self.transact_counting(board, post_id, shard, 1, items).await;
            self.cache.forget_post(post_id);
            Ok(match result? {
                Some(Ok(())) => Race::Done(CommentDeleted::Deleted),
                None => Race::Done(CommentDeleted::NoSuchComment),
                Some(Err(failed)) if failed_at(&failed, 0) => Race::Done(CommentDeleted::NoSuchComment),
                // Its report was opened or resolved since the read.
                Some(Err(failed)) if failed_at(&failed, pointer_at) => Race::Lost(()),
                Some(Err(failed)) => {
                    Race::Done(CommentDeleted::ExtraFailed(failed.into_iter().skip(extra_at).collect()))
                }
            })
        })
        .await
    }
}

#[async_trait]
impl Comments for DynamoStore {
    /// Queries of the post's comments that return only a count:
    /// the author's own filtered out, the first page [`FIRST_LOCK_PAGE`]
    /// comments, the next ones up to 1 MB each, until one counts.
    /// Consistent: a comment just written locks.
    async fn answered_by_others(&self, post_key: &PostKey, guard: &Guard) -> StoreResult<bool> {
        let pk = post_pk(post_key.post.as_str());
        // Which comments are the author's own: their member id's, or for a
        // guest (or what a deleted account left) their address key's.
        let (not_own, author) = match (&guard.author, &guard.writer) {
            (Author::Member { member_id, .. }, _) => (
                Some("attribute_not_exists(author_member_id) OR author_member_id <> :author"),
                Some(member_id.as_str()),
            ),
            (_, Some(writer)) => (
                Some("attribute_exists(author_member_id) OR attribute_not_exists(writer_key) OR writer_key <> :author"),
                Some(writer.as_str()),
            ),
            // No key to know the author's comments by: every comment is another's.
            (_, None) => (None, None),
        };
        let mut pages = self.pages(std::slice::from_ref(&pk));
        let mut limit = Some(FIRST_LOCK_PAGE);
        while let Some(out) = pages
            .next(|query| {
                let query = query
                    .select(Select::Count)
                    .key_condition_expression("PK = :pk AND begins_with(SK, :comments)")
                    .expression_attribute_values(":pk", s(pk.clone()))
                    .expression_attribute_values(":comments", s(COMMENT_SK_PREFIX))
                    .set_filter_expression(not_own.map(str::to_owned))
                    .set_limit(limit.take())
                    .consistent_read(true);
                match author {
                    Some(author) => query.expression_attribute_values(":author", s(author)),
                    None => query,
                }
            })
            .await?
        {
            if out.count > 0 {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn create_comment(
        &self,
        board: &BoardSlug,
        comment: &Comment,
        writer: &Writer,
        guest_password_hash: Option<&PasswordHash>,
        answers: bool,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let (board, guest_password_hash) = (board.as_str(), guest_password_hash.map(PasswordHash::as_str));
        let post_id = comment.post_id.as_str();
        let item = to_item(&CommentItem::new(board, comment, writer, guest_password_hash, answers))?;
        let shard = shard_of(&comment.id, self.layout.counter_shards);
        let mut items = vec![
            self.put(item, "attribute_not_exists(PK)")?,
            self.count_comment_on_shard(board, post_id, shard, 1, answers)?,
        ];
        if let Some(parent) = &comment.parent_id {
            items.push(self.check(
                key(post_pk(post_id), comment_sk(parent)),
                "attribute_exists(PK) AND attribute_not_exists(parent_id)",
                &[],
            )?);
        }
        let parent_at = comment.parent_id.as_ref().map(|_| items.len() - 1);
        let claim_at = items.len();
        if let Some(done) = done {
            items.push(self.complete(done)?);
        }
        // Its image, conditioned on being attachable.
        let media_at = items.len();
        let owner = crate::domain::media::MediaOwner::writing(&comment.author, writer);
        items.extend(self.attach_items(&comment.media, &comment.id, post_id, board, &owner, &comment.created_at)?);
        let result = self.transact_counting(board, post_id, shard, 1, items).await;
        self.cache.forget_post(post_id);
        let failed_at_if = |failed: &[bool], at: Option<usize>| at.is_some_and(|i| failed_at(failed, i));
        match result? {
            Some(Ok(())) => Ok(()),
            None => Err(StoreError::NotFound),
            Some(Err(failed)) if failed_at_if(&failed, parent_at) => Err(StoreError::InvalidParent),
            Some(Err(failed)) if failed_at_if(&failed, done.map(|_| claim_at)) => Err(StoreError::ClaimLost),
            Some(Err(failed)) if failed.iter().skip(media_at).any(|f| *f) => Err(StoreError::MediaUnavailable),
            Some(Err(_)) => Err(StoreError::Internal("comment id collision".into())),
        }
    }

    /// The comment item's GetItem beside its post's purge marker's
    /// ([`DynamoStore::live_comment`]), both consistent as a comments
    /// page's reads are; never a Query of the post's comments.
    async fn comment(&self, comment_key: &CommentKey) -> StoreResult<Option<Comment>> {
        Ok(self.live_comment(comment_key).await?.map(CommentItem::into_comment))
    }

    async fn comment_guard(&self, comment_key: &CommentKey) -> StoreResult<Option<Guard>> {
        Ok(self.live_comment(comment_key).await?.map(|comment| Guard {
            author: comment.author.into(),
            guest_password_hash: comment.guest_password_hash.map(PasswordHash::new),
            writer: comment.writer_key.map(WriterKey::new),
            writer_range: comment.writer_range.map(WriterKey::new),
        }))
    }

    /// A Query of `ById` for the comment's key (the item under
    /// `POST#<post id>` whose SK is `COMMENT#<id>`), then the comment and
    /// its post's purge marker side by side (as [`Self::comment_guard`]):
    /// found only on the comment's own board, and not while its post's
    /// purge is pending. The index is eventually consistent: a comment
    /// written a moment ago may not be found yet.
    async fn find_comment(&self, board: &BoardSlug, comment: &CommentId) -> StoreResult<Option<CommentKey>> {
        let wanted = comment_sk(comment.as_str());
        let keys = self.keys_by_id(comment.as_str()).await?;
        let Some((pk, sk)) = keys.into_iter().find(|(_, sk)| *sk == wanted) else {
            return Ok(None);
        };
        let Some(post_id) = pk.strip_prefix("POST#").map(str::to_owned) else {
            return Ok(None);
        };
        let (item, purging) = tokio::try_join!(self.get(key(pk, sk)), self.purge_pending(&post_id))?;
        let Some(item) = item.filter(|_| !purging) else {
            return Ok(None);
        };
        let found: CommentItem = from_item(item)?;
        Ok(
            (found.board == board.as_str() && found.post_id == post_id).then(|| CommentKey {
                post: PostKey {
                    board: board.clone(),
                    post: PostId::from_stored(post_id),
                },
                comment: comment.clone(),
            }),
        )
    }

    /// With its open report ([`DynamoStore::delete_comment_with`]):
    /// the pointer's GetItem, then the one transaction.
    async fn delete_comment(&self, comment_key: &CommentKey) -> StoreResult<bool> {
        match self.delete_comment_with(comment_key, Vec::new()).await? {
            CommentDeleted::Deleted => Ok(true),
            CommentDeleted::NoSuchComment => Ok(false),
            CommentDeleted::ExtraFailed(_) => Err(StoreError::Internal(
                "a condition of the comment's delete failed".into(),
            )),
        }
    }

    async fn replace_comment_guest_hash(
        &self,
        comment_key: &CommentKey,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        let (board, post_id, comment_id) = (
            comment_key.post.board.as_str(),
            comment_key.post.post.as_str(),
            comment_key.comment.as_str(),
        );
        let key = key(post_pk(post_id), comment_sk(comment_id));
        self.replace_hash(key, "guest_password_hash", Some(board), old.as_str(), new.as_str())
            .await
    }
}
