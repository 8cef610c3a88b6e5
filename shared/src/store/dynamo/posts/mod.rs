//! [`Posts`] on DynamoDB: the post item, its first comments and its counter
//! shards read side by side; board pages from the board index; views counted
//! on one shard; deletes in two durable steps ([`super::purge`]);
//! an edit keeps the version it replaces as a revision item in the post's
//! partition, in its transaction.

mod edits;
mod pages;

use edits::as_read;
use pages::Listing;

use std::sync::Arc;

use async_trait::async_trait;

use super::DynamoStore;
use super::attributes::{from_item, key, n, s, text, to_item};
use super::items::{
    BEST_INDEX, BY_CATEGORY_INDEX, BY_NUMBER_INDEX, POST_ON_BOARD, POST_SK, PostItem, board_pk, category_key, post_pk,
    revision_sk,
};
use super::purges::Marked;
use super::transact::{Race, TxFailure, retry_races};
use crate::domain::media::MediaOwner;
use crate::domain::{
    BoardSlug, Category, CommentPage, Guard, LogEntry, Page, PageLimit, PasswordHash, Post, PostDetail, PostId,
    PostKey, PostSummary, Revisions, Writer, WriterKey,
};
use crate::store::dynamo::metered::Metered;
use crate::store::{Completion, Edited, PostEdit, Posts, StoreError, StoreResult, cursor};

#[async_trait]
impl Posts for DynamoStore {
    async fn create_post(
        &self,
        post: &Post,
        writer: &Writer,
        guest_password_hash: Option<&PasswordHash>,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let item = to_item(&PostItem::new(
            post,
            writer,
            guest_password_hash.map(PasswordHash::as_str),
        ))?;
        self.cache.pages.clear();
        // The post and its board's live count together.
        let mut items = vec![
            self.put(item, "attribute_not_exists(PK)")?,
            self.count_posts(&post.summary.board, 1)?,
        ];
        if let Some(done) = done {
            items.push(self.complete(done)?);
        }
        // Its images, conditioned on being attachable.
        let media_at = items.len();
        let s = &post.summary;
        let owner = MediaOwner::writing(&s.author, writer);
        items.extend(self.attach_items(&post.media, &s.id, &s.id, &s.board, &owner, &s.created_at)?);
        match self.transact(items).await {
            Ok(()) => Ok(()),
            Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => {
                Err(StoreError::Internal("post id collision".into()))
            }
            Err(TxFailure::Conditions(failed)) if failed.iter().skip(media_at).any(|f| *f) => {
                Err(StoreError::MediaUnavailable)
            }
            Err(TxFailure::Conditions(_)) => Err(StoreError::ClaimLost),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// Three requests side by side, whatever the comment count: the post
    /// item, one Query for its first [`COMMENTS_PAGE`] comments + 1, and its
    /// counter shards (one BatchGetItem per 100 shards). Consistent.
    async fn post_detail(&self, post_key: &PostKey) -> StoreResult<Option<PostDetail>> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let ids = [post_id];
        let (found, shards) = tokio::try_join!(
            self.post_with_comments(post_id, true),
            self.read_shards(board, &ids, true)
        )?;
        let Some((post, page)) = found.filter(|(post, _)| post.summary.board == board) else {
            return Ok(None);
        };
        let counts = shards.into_values().flatten().sum();
        Ok(Some(PostDetail {
            post: post.into_post(counts),
            comments: page.comments,
            comments_next_cursor: page.next_cursor,
            my_vote: None,
        }))
    }

    /// A view writes one counter shard (one write unit, whatever the post's
    /// size) and nothing else. The post, its first comments and the other
    /// shards come from this process's cache when fresh (`READ_CACHE_TTL_MS`),
    /// else from the table; the count shown is the other shards' (as read)
    /// plus this view's shard as this view left it, so it includes this view.
    async fn view_post(&self, post_key: &PostKey) -> StoreResult<Option<PostDetail>> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let cached = self.cache.details.get(&post_id.to_owned());
        let detail = match cached {
            Some(detail) => detail,
            None => {
                let read_at = std::time::Instant::now();
                let consistent = !self.cache.details.enabled();
                let Some(found) = self.post_with_comments(post_id, consistent).await? else {
                    return Ok(None);
                };
                let found = Arc::new(found);
                self.cache.details.put_at(post_id.to_owned(), found.clone(), read_at);
                found
            }
        };
        if detail.0.summary.board != board {
            return Ok(None);
        }
        let shard = self.random_shard();
        let ids = [post_id];
        let (mine, mut shards) =
            tokio::try_join!(self.add_view(board, post_id, shard), self.cached_shards(board, &ids))?;
        let mine = match mine {
            Some(mine) => mine,
            // The shard's first view, or the post is gone (its delete took
            // the shards): only a post that is still there gets the shard.
            None => {
                if !self.ensure_shard(board, post_id, shard).await? {
                    self.cache.forget_post(post_id);
                    return Ok(None);
                }
                // Deleted between the two writes: gone, as for any later view.
                match self.add_view(board, post_id, shard).await? {
                    Some(mine) => mine,
                    None => {
                        self.cache.forget_post(post_id);
                        return Ok(None);
                    }
                }
            }
        };
        let index = shard as usize;
        self.cache.shards.update(&post_id.to_owned(), |cached| {
            if let Some(slot) = cached.get_mut(index) {
                *slot = mine;
            }
        });
        let mut shards = shards.remove(post_id).unwrap_or_default();
        if let Some(slot) = shards.get_mut(index) {
            *slot = mine;
        }
        let (post, page) = (*detail).clone();
        Ok(Some(PostDetail {
            post: post.into_post(shards.into_iter().sum()),
            comments: page.comments,
            comments_next_cursor: page.next_cursor,
            my_vote: None,
        }))
    }

    /// Two requests at once: the post's board (GetItem) and one Query of
    /// `limit + 1` comments after the cursor.
    async fn list_comments(
        &self,
        post_key: &PostKey,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Option<CommentPage>> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let (post_board, page) = tokio::try_join!(
            self.post_board(post_id),
            self.comments_page(post_id, limit.get(), after.as_deref(), true),
        )?;
        Ok(post_board.is_some_and(|b| b == board).then_some(page))
    }

    /// One Query on the board index (no counts there), then the page's
    /// counter shards: BatchGetItem, 100 shards per request, side by side.
    /// Both from this process's cache when fresh.
    async fn list_posts(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page> {
        let (board, limit) = (board.as_str(), limit.get());
        let cache_key = (board.to_owned(), cursor.map(str::to_owned), limit);
        let summaries = match self.cache.pages.get(&cache_key) {
            Some(summaries) => summaries,
            None => {
                let read_at = std::time::Instant::now();
                let summaries = Arc::new(self.board_page(board, limit, cursor).await?);
                self.cache.pages.put_at(cache_key, summaries.clone(), read_at);
                summaries
            }
        };
        let ids: Vec<&str> = summaries.iter().take(limit).map(|s| s.id.as_str()).collect();
        let mut shards = self.cached_shards(board, &ids).await?;
        let mut posts: Vec<PostSummary> = summaries
            .iter()
            .map(|s| {
                let counts = shards.remove(&s.id).unwrap_or_default().into_iter().sum();
                s.clone().summary(counts)
            })
            .collect();
        Ok(cursor::page_of(&mut posts, limit))
    }

    /// One Query of `ByCategory` (keyed `<board>#<category>`: it holds only
    /// that category's posts), then the page's shards by key.
    async fn list_category(
        &self,
        board: &BoardSlug,
        category: &Category,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Page> {
        let listing = Listing {
            index: BY_CATEGORY_INDEX,
            key_name: "category_key",
            key: category_key(board.as_str(), category.as_str()),
            category: None,
        };
        self.listing_page(listing, limit, cursor).await
    }

    /// One Query of `Best` (the board's best posts only), filtered by
    /// category when asked, then the page's shards by key.
    async fn list_best(
        &self,
        board: &BoardSlug,
        category: Option<&Category>,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Page> {
        let listing = Listing {
            index: BEST_INDEX,
            key_name: "best_board",
            key: board.as_str().to_owned(),
            category: category.map(Category::as_str),
        };
        self.listing_page(listing, limit, cursor).await
    }

    /// One Query of the keys-only `ByNumber` (board and number): eventually
    /// consistent, so a post created a moment ago may not be found yet.
    async fn post_by_number(&self, board: &BoardSlug, number: u64) -> StoreResult<Option<PostId>> {
        let out = self
            .client()
            .await
            .query()
            .table_name(&self.table)
            .index_name(BY_NUMBER_INDEX)
            .key_condition_expression("GSI1PK = :board AND #number = :number")
            .expression_attribute_names("#number", "number")
            .expression_attribute_values(":board", s(board_pk(board.as_str())))
            .expression_attribute_values(":number", n(i64::try_from(number).unwrap_or(i64::MAX)))
            .metered(self, &[])
            .await?;
        Ok(out
            .items
            .unwrap_or_default()
            .iter()
            .filter_map(|item| text(item, "PK")?.strip_prefix("POST#").map(str::to_owned))
            .next()
            .map(PostId::from_stored))
    }

    /// One transaction: the post's `category` and `category_key` (its
    /// `ByCategory` entry) set or removed, and the entry.
    async fn set_category(
        &self,
        post_key: &PostKey,
        category: Option<&Category>,
        entry: &LogEntry,
    ) -> StoreResult<bool> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let change = self.category_change(board, post_id, category, Some(POST_ON_BOARD))?;
        let items = vec![change, self.log_put(board, entry)?];
        let written = self.transact(items).await;
        self.cache.forget_post(post_id);
        self.cache.pages.clear();
        match written {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => Ok(false),
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("log entry id collision".into())),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// One transaction: the post leaves the best list (`REMOVE best_board`),
    /// its gate is closed for good ([`super::likes`]), and the entry.
    async fn unbest(&self, post_key: &PostKey, entry: &LogEntry) -> StoreResult<bool> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let items = vec![
            self.update(
                key(post_pk(post_id), POST_SK.into()),
                "REMOVE best_board",
                Some(POST_ON_BOARD),
                &[],
                &[(":board", s(board))],
            )?,
            self.close_gate(post_id)?,
            self.log_put(board, entry)?,
        ];
        let written = self.transact(items).await;
        self.cache.forget_post(post_id);
        self.cache.pages.clear();
        match written {
            Ok(()) => {
                self.cache
                    .gates_done
                    .put_at(post_id.to_owned(), false, std::time::Instant::now());
                Ok(true)
            }
            Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => Ok(false),
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("log entry id collision".into())),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// One counter-shard write per post (one write unit each, whatever the
    /// number of views it adds), side by side.
    async fn add_views(&self, views: &[(PostKey, u64)]) -> StoreResult<()> {
        let adds = views.iter().map(|(key, views)| async move {
            let (board, post_id) = (key.board.as_str(), key.post.as_str());
            let shard = self.random_shard();
            if self.add_views_to(board, post_id, shard, *views).await?.is_none()
                && self.ensure_shard(board, post_id, shard).await?
            {
                self.add_views_to(board, post_id, shard, *views).await?;
            }
            StoreResult::Ok(())
        });
        futures_util::future::try_join_all(adds).await.map(drop)
    }

    async fn post_guard(&self, post_key: &PostKey) -> StoreResult<Option<Guard>> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let Some(item) = self.get(key(post_pk(post_id), POST_SK.into())).await? else {
            return Ok(None);
        };
        let post: PostItem = from_item(item)?;
        Ok((post.summary.board == board).then(|| Guard {
            author: post.summary.author.into(),
            guest_password_hash: post.guest_password_hash.map(PasswordHash::new),
            writer: post.writer_key.map(WriterKey::new),
            writer_range: post.writer_range.map(WriterKey::new),
        }))
    }

    /// A consistent read of the post, then one transaction: the
    /// post's new text with `edits` moved on, the version read put as its
    /// revision and, past [`MAX_REVISIONS`], the oldest kept deleted. The
    /// update is conditioned on `edits` as read, so the revision is always
    /// of the version it replaces and `If-Match` (checked against the text
    /// read) holds when it commits; another edit in between makes it read
    /// again.
    async fn update_post(&self, post_key: &PostKey, edit: &PostEdit) -> StoreResult<Edited> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let outcome = retry_races("an edit kept racing other edits of its post", true, |oldest_kept| {
            self.edit_once(board, post_id, edit, oldest_kept)
        })
        .await;
        self.cache.forget_post(post_id);
        self.cache.pages.clear();
        outcome
    }

    /// Two requests side by side: the post's board (GetItem) and one
    /// Query of its revision items below `before`, newest first, `limit + 1`
    /// (more only when 1 MB of revisions ends a page early).
    async fn revisions(
        &self,
        post_key: &PostKey,
        limit: PageLimit,
        before: Option<u64>,
    ) -> StoreResult<Option<Revisions>> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let (post_board, revisions) = tokio::try_join!(
            self.post_board(post_id),
            self.revision_items(post_id, limit.get() + 1, before)
        )?;
        Ok(post_board
            .is_some_and(|b| b == board)
            .then(|| cursor::revisions_page(revisions, limit.get())))
    }

    /// The post read, then one transaction: the revision's delete (if it is
    /// there), the post's count of kept revisions as read less one
    /// (conditioned on its edits and count as read: an edit or another
    /// delete in between reads again), and `entry`.
    async fn delete_revision(&self, post_key: &PostKey, number: u64, entry: Option<&LogEntry>) -> StoreResult<bool> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let entry = entry.map(|e| self.log_put(board, e)).transpose()?;
        let entry = &entry;
        let gave_up = "a revision's delete kept racing edits of its post";
        let deleted = retry_races(gave_up, (), |()| async move {
            let Some(item) = self.get(key(post_pk(post_id), POST_SK.into())).await? else {
                return Ok(Race::Done(false));
            };
            let read: PostItem = from_item(item)?;
            if read.summary.board != board {
                return Ok(Race::Done(false));
            }
            let mut values = vec![(":board", s(board))];
            let condition = format!("{POST_ON_BOARD} AND {}", as_read(&read, &mut values));
            let kept = read.kept_revisions().saturating_sub(1);
            values.push((":revisions", n(i64::try_from(kept).unwrap_or(i64::MAX))));
            let mut items = vec![
                self.delete(key(post_pk(post_id), revision_sk(number)), Some("attribute_exists(PK)"))?,
                self.update(
                    key(post_pk(post_id), POST_SK.into()),
                    "SET revisions = :revisions",
                    Some(&condition),
                    &[],
                    &values,
                )?,
            ];
            items.extend(entry.iter().cloned());
            match self.transact(items).await {
                Ok(()) => Ok(Race::Done(true)),
                Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => Ok(Race::Done(false)),
                Err(TxFailure::Conditions(_)) => Ok(Race::Lost(())),
                Err(TxFailure::Store(e)) => Err(e),
            }
        })
        .await;
        self.cache.forget_post(post_id);
        deleted
    }

    /// Step 1 of two ([`super::purge`]): the post is unreadable from it; its
    /// children go in step 2, off the request ([`crate::store::Purges`]).
    async fn delete_post(&self, post_key: &PostKey, unless_answered: bool) -> StoreResult<bool> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        if !unless_answered {
            return self.mark_post_deleted(board, post_id).await;
        }
        match self.mark_post_deleted_with(board, post_id, true, Vec::new()).await? {
            Marked::Deleted => Ok(true),
            Marked::NoSuchPost | Marked::ExtraFailed(_) => Ok(false),
            Marked::Answered => Err(StoreError::Answered),
        }
    }

    async fn replace_post_guest_hash(
        &self,
        post_key: &PostKey,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let key = key(post_pk(post_id), POST_SK.into());
        self.replace_hash(key, "guest_password_hash", Some(board), old.as_str(), new.as_str())
            .await
    }
}
