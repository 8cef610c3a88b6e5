//! (v3) [`Accounts`] on DynamoDB (docs/storage.md, "Accounts"): a member's
//! session epoch on their member item, an account deletion's two steps, and
//! the index of a member's posts, comments and likes (`ByOwner`).
//!
//! - **Session epoch**: `session_epoch` on the member item (absent = 0).
//!   Reading it is one consistent GetItem of three attributes, kept in this
//!   process for [`SESSION_TTL`] (a deletion or an ending of sessions made
//!   through another process takes effect here within it); ending sessions
//!   and changing the password are one conditional UpdateItem each (`ADD
//!   session_epoch 1`), whose new epoch this process keeps at once.
//! - **Deletion, step 1** ([`Accounts::close_account`]): one transaction
//!   turns the member item into a tombstone (its username stays taken),
//!   records the pending deletion (`ACCOUNT_PURGE` / `<member id>`) and
//!   deletes the member's appointments.
//! - **Deletion, step 2** (driven by the app): [`Accounts::owned`] reads
//!   the index, [`Accounts::disown`] rewrites the author of each post and
//!   comment (8 updates at a time), the app deletes or unlikes the rest,
//!   and [`Accounts::finish_deletion`] removes the record.
//! - **A member's listings**: one Query of the index, newest first; a posts
//!   page reads its counts as the board listing does (the shards, here by
//!   key, grouped by board), a comments page its comments' bodies (one
//!   BatchGetItem: the index does not project `body`, which a post's would
//!   fill with up to 60 KB each).
//!
//! [`SESSION_TTL`]: crate::store::SESSION_TTL

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{ReturnConsumedCapacity, ReturnValue, TransactWriteItem, Update};
use futures_util::future::try_join_all;
use futures_util::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};

use super::DynamoStore;
use super::attributes::{Item, from_item, key, n, s, text, to_item};
use super::counters::Shards;
use super::items::{
    ACCOUNT_PURGE_PK, BY_OWNER_INDEX, COMMENT_SK_PREFIX, CommentItem, DELETED_MEMBER_KIND, MEMBER_SK, MemberItem,
    OWNED_COMMENT_PREFIX, OWNED_LIKE_PREFIX, OWNED_POST_PREFIX, POST_SK, SummaryFields, comment_sk, member_pk, mods_pk,
    post_pk,
};
use super::requests::Projection;
use super::transact::{TRANSACTION_ITEMS, TxFailure, is_conditional_failure, sdk_error};
use crate::domain::{
    BoardSlug, CommentId, CommentKey, CommentPage, DELETED_MEMBER_NICKNAME, MemberId, Owned, Page, PageLimit,
    PasswordHash, PendingDeletion, PostId, PostKey, PostSummary, Username, now,
};
use crate::store::{Accounts, StoreError, StoreResult, cursor};

/// How many of [`Accounts::disown`]'s updates are in flight at once.
const DISOWN_AT_ONCE: usize = 8;

/// BatchGetItem takes at most 100 keys.
const BATCH_KEYS: usize = 100;

/// The member item as [`crate::store::Members`] reads it, `None` for a
/// deleted account's tombstone (`deleted_at`, no `id`).
pub(super) fn live_member(item: Item) -> StoreResult<Option<MemberItem>> {
    if item.contains_key("deleted_at") || !item.contains_key("id") {
        return Ok(None);
    }
    from_item(item).map(Some)
}

/// The condition that the member item is the live account `:id`.
const LIVE_ACCOUNT: &str = "attribute_exists(PK) AND #id = :id AND attribute_not_exists(deleted_at)";

/// What the session check reads of the member item.
const EPOCH: Projection = Projection {
    expression: "#id, session_epoch, deleted_at",
    names: &[("#id", "id")],
};

/// What a deletion reads of an index entry.
const OWNED_KEYS: Projection = Projection {
    expression: "PK, SK, owner_sk, board",
    names: &[],
};

/// What the moderator check of a deletion reads of an appointment.
const KEY_ONLY: Projection = Projection {
    expression: "PK",
    names: &[],
};

/// A deletion whose step 2 has not finished.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PendingDeletionItem {
    #[serde(rename = "PK")]
    pk: String,
    #[serde(rename = "SK")]
    sk: String,
    member_id: String,
    delete_content: bool,
    /// When step 1 ran (`crate::domain::now`: sorts as it reads).
    started: String,
}

/// `session_epoch`, 0 when absent (an item from before v3).
fn epoch_of(item: &Item) -> StoreResult<u64> {
    match item.get("session_epoch") {
        None => Ok(0),
        Some(value) => value
            .as_n()
            .ok()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| StoreError::Internal("a stored session epoch is not a number".into())),
    }
}

/// Whether a cached epoch is to be kept over `read`, something read (or
/// written) at about the same time: a gone account stays gone, and an
/// epoch only grows.
fn newer_than(cached: &Option<u64>, read: Option<u64>) -> bool {
    match (cached, read) {
        (None, _) => true,
        (Some(cached), Some(read)) => *cached > read,
        (Some(_), None) => false,
    }
}

/// What an index entry of `ByOwner` names.
fn owned_of(item: &Item) -> Option<Owned> {
    let sk = text(item, "owner_sk")?;
    let board = BoardSlug::from_stored(text(item, "board")?.to_owned());
    let post = |id: &str| PostKey {
        board: board.clone(),
        post: PostId::from_stored(id.to_owned()),
    };
    if let Some(id) = sk.strip_prefix(OWNED_POST_PREFIX) {
        return Some(Owned::Post(post(id)));
    }
    if let Some(id) = sk.strip_prefix(OWNED_COMMENT_PREFIX) {
        let post_id = text(item, "PK")?.strip_prefix("POST#")?;
        return Some(Owned::Comment(CommentKey {
            post: post(post_id),
            comment: CommentId::from_stored(id.to_owned()),
        }));
    }
    sk.strip_prefix(OWNED_LIKE_PREFIX).map(|id| Owned::Like(post(id)))
}

/// Which of a member's entries in `ByOwner` a Query reads.
enum Run<'a> {
    /// Every entry.
    All,
    /// The entries whose `owner_sk` starts with this prefix.
    Of(&'a str),
    /// Those of them with ids below `before` (a page's cursor).
    Before(&'a str, &'a str),
}

impl DynamoStore {
    fn member_key(username: &Username) -> Item {
        key(member_pk(username.as_str()), MEMBER_SK.into())
    }

    /// Keeps `epoch` as this process's knowledge of the account, unless
    /// what it knows is newer.
    fn remember_epoch(&self, id: &MemberId, username: &Username, epoch: Option<u64>, at: Instant) {
        let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
        self.cache
            .sessions
            .put_unless(cache_key, epoch, at, |cached| newer_than(cached, epoch));
    }

    fn forget_epoch(&self, id: &MemberId, username: &Username) {
        let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
        self.cache.sessions.remove(&cache_key);
    }

    /// `ADD session_epoch 1` (and the new hash) on the live account: one
    /// UpdateItem returning the new epoch, which this process keeps.
    async fn advance_epoch(
        &self,
        id: &MemberId,
        username: &Username,
        hash: Option<&PasswordHash>,
    ) -> StoreResult<bool> {
        let mut update = self
            .client()
            .await
            .update_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(Self::member_key(username)))
            .condition_expression(LIVE_ACCOUNT)
            .expression_attribute_names("#id", "id")
            .expression_attribute_values(":id", s(id.as_str()))
            .expression_attribute_values(":one", n(1))
            .return_values(ReturnValue::UpdatedNew);
        update = match hash {
            Some(hash) => update
                .update_expression("SET password_hash = :hash ADD session_epoch :one")
                .expression_attribute_values(":hash", s(hash.as_str())),
            None => update.update_expression("ADD session_epoch :one"),
        };
        let out = update
            .send()
            .await
            .inspect(|out| self.record(out, &[member_pk(username.as_str())]));
        match out {
            Ok(out) => {
                let epoch = epoch_of(&out.attributes.unwrap_or_default())?;
                self.remember_epoch(id, username, Some(epoch), Instant::now());
                Ok(true)
            }
            Err(e) if is_conditional_failure(&e) => {
                self.remember_epoch(id, username, None, Instant::now());
                Ok(false)
            }
            Err(e) => {
                // It may have been written: ask the table next time.
                self.forget_epoch(id, username);
                Err(sdk_error(e))
            }
        }
    }

    /// One Query of the member's entries in `ByOwner`: up to `limit` of
    /// `run`, newest first when `newest_first`, from `start`; and where
    /// DynamoDB stopped, when it did before the run's end (at `limit` or
    /// its 1 MB page).
    async fn owner_query(
        &self,
        member: &str,
        run: &Run<'_>,
        limit: usize,
        newest_first: bool,
        projection: Option<&Projection>,
        start: Option<Item>,
    ) -> StoreResult<(Vec<Item>, Option<Item>)> {
        let mut query = self
            .client()
            .await
            .query()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .index_name(BY_OWNER_INDEX)
            .expression_attribute_names("#owner", "owner")
            .expression_attribute_values(":owner", s(member))
            .scan_index_forward(!newest_first)
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .set_exclusive_start_key(start);
        query = match run {
            Run::All => query.key_condition_expression("#owner = :owner"),
            Run::Of(prefix) => query
                .key_condition_expression("#owner = :owner AND begins_with(owner_sk, :prefix)")
                .expression_attribute_values(":prefix", s(*prefix)),
            // BETWEEN is inclusive: the cursor's own entry, if still
            // there, is read too (and dropped by the caller).
            Run::Before(prefix, before) => query
                .key_condition_expression("#owner = :owner AND owner_sk BETWEEN :low AND :high")
                .expression_attribute_values(":low", s(*prefix))
                .expression_attribute_values(":high", s(format!("{prefix}{before}"))),
        };
        if let Some(projection) = projection {
            query = query.projection_expression(projection.expression);
            for (placeholder, name) in projection.names {
                query = query.expression_attribute_names(*placeholder, *name);
            }
        }
        let out = query
            .send()
            .await
            // The index's units are metered on their own (under `ByOwner`).
            .inspect(|out| self.record(out, &[]))
            .map_err(sdk_error)?;
        Ok((out.items.unwrap_or_default(), out.last_evaluated_key))
    }

    /// A page of the member's run `prefix`, newest first, strictly after
    /// the cursor's id: one Query of `limit + 1` entries (one more with a
    /// cursor: its own entry is read and dropped), and whether more follow
    /// (the extra entry, or DynamoDB's 1 MB page cut the read short, as for
    /// a post's comments).
    async fn owner_page(
        &self,
        member: &MemberId,
        prefix: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> StoreResult<(Vec<Item>, bool)> {
        let after = cursor.map(cursor::decode).transpose()?;
        let want = limit + 1;
        let (run, ask) = match &after {
            Some(after) => (Run::Before(prefix, after), want + 1),
            None => (Run::Of(prefix), want),
        };
        let (mut items, stopped_at) = self.owner_query(member.as_str(), &run, ask, true, None, None).await?;
        if let Some(after) = &after {
            let own = format!("{prefix}{after}");
            items.retain(|item| text(item, "owner_sk") != Some(own.as_str()));
        }
        let cut_short = items.len() < want && stopped_at.is_some();
        let more = items.len() > limit || cut_short;
        items.truncate(limit);
        Ok((items, more))
    }

    /// The author of one post or comment becomes `deleted_member`, its
    /// writer key goes (v4: nothing ties it to an address any more) and the
    /// item leaves `ByOwner`, if `member` is still its author; false when
    /// it is not (gone, or disowned already).
    async fn disown_one(&self, member: &str, item_key: Item) -> StoreResult<bool> {
        let touched = [super::attributes::pk_of(&item_key)];
        let out = self
            .client()
            .await
            .update_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(item_key))
            .update_expression(
                "SET author_kind = :deleted, author_nickname = :nickname REMOVE author_member_id, #owner, owner_sk, writer_key, writer_range",
            )
            .condition_expression("author_kind = :member AND author_member_id = :id")
            .expression_attribute_names("#owner", "owner")
            .expression_attribute_values(":deleted", s(DELETED_MEMBER_KIND))
            .expression_attribute_values(":nickname", s(DELETED_MEMBER_NICKNAME))
            .expression_attribute_values(":member", s("member"))
            .expression_attribute_values(":id", s(member))
            .send()
            .await
            .inspect(|out| self.record(out, &touched));
        match out {
            Ok(_) => Ok(true),
            Err(e) if is_conditional_failure(&e) => Ok(false),
            Err(e) => Err(sdk_error(e)),
        }
    }
}

#[async_trait]
impl Accounts for DynamoStore {
    /// One consistent GetItem of `id`, `session_epoch` and `deleted_at`
    /// (1 RCU), its answer kept in this process for [`crate::store::SESSION_TTL`].
    async fn session_epoch(&self, id: &MemberId, username: &Username) -> StoreResult<Option<u64>> {
        let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
        if let Some(known) = self.cache.sessions.get(&cache_key) {
            return Ok(known);
        }
        let read_at = Instant::now();
        let item = self.get_projected(Self::member_key(username), true, &EPOCH).await?;
        let epoch = match item {
            Some(item) if !item.contains_key("deleted_at") && text(&item, "id") == Some(id.as_str()) => {
                Some(epoch_of(&item)?)
            }
            _ => None,
        };
        self.remember_epoch(id, username, epoch, read_at);
        Ok(epoch)
    }

    /// One UpdateItem (`ADD session_epoch 1`), conditioned on the live account.
    async fn end_sessions(&self, id: &MemberId, username: &Username) -> StoreResult<bool> {
        self.advance_epoch(id, username, None).await
    }

    /// One UpdateItem: the hash and `ADD session_epoch 1`, together.
    async fn change_password(&self, id: &MemberId, username: &Username, new: &PasswordHash) -> StoreResult<bool> {
        self.advance_epoch(id, username, Some(new)).await
    }

    /// One transaction: the member item becomes a tombstone (conditioned
    /// on the live account), the pending deletion is recorded, and the
    /// appointments on `moderates` are deleted.
    async fn close_account(
        &self,
        id: &MemberId,
        username: &Username,
        delete_content: bool,
        moderates: &[BoardSlug],
    ) -> StoreResult<bool> {
        let mut boards: Vec<&str> = Vec::with_capacity(moderates.len());
        for board in moderates {
            // A transaction refuses two writes of one item.
            if !boards.contains(&board.as_str()) {
                boards.push(board.as_str());
            }
        }
        if boards.len() + 2 > TRANSACTION_ITEMS {
            return Err(StoreError::Internal(format!(
                "an account deletion takes at most {} appointments",
                TRANSACTION_ITEMS - 2
            )));
        }
        let tombstone = Update::builder()
            .table_name(&self.table)
            .set_key(Some(Self::member_key(username)))
            .update_expression(
                "SET deleted_at = :now ADD session_epoch :one REMOVE #id, nickname, password_hash, created_at",
            )
            .condition_expression(LIVE_ACCOUNT)
            .expression_attribute_names("#id", "id")
            .expression_attribute_values(":id", s(id.as_str()))
            .expression_attribute_values(":now", s(now()))
            .expression_attribute_values(":one", n(1))
            .build()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        let marker = to_item(&PendingDeletionItem {
            pk: ACCOUNT_PURGE_PK.into(),
            sk: id.as_str().to_owned(),
            member_id: id.as_str().to_owned(),
            delete_content,
            started: now(),
        })?;
        let mut items = vec![
            TransactWriteItem::builder().update(tombstone).build(),
            self.put(marker, "attribute_not_exists(PK)")?,
        ];
        for board in &boards {
            items.push(self.delete(key(mods_pk(board), id.as_str().to_owned()), None)?);
        }
        let outcome = match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => Ok(false),
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal(
                "a pending deletion of this member is recorded already".into(),
            )),
            Err(TxFailure::Store(e)) => Err(e),
        };
        match outcome {
            Ok(_) => {
                // Gone either way: this process refuses its tokens at once.
                let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
                self.cache.sessions.put_at(cache_key, None, Instant::now());
            }
            Err(_) => self.forget_epoch(id, username),
        }
        let dismissed = matches!(outcome, Ok(true)).then_some(false);
        for board in &boards {
            // Unknown after an error: ask the table next time.
            self.remember_moderator(board, id.as_str(), if outcome.is_ok() { dismissed } else { None });
        }
        outcome
    }

    /// One Query of the pending deletions' partition, every page (each
    /// record is about 100 bytes: 40 to a read unit), sorted by start.
    async fn pending_deletions(&self, limit: usize) -> StoreResult<Vec<PendingDeletion>> {
        let mut found: Vec<PendingDeletionItem> = Vec::new();
        let mut start = None;
        loop {
            let out = self
                .client()
                .await
                .query()
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .table_name(&self.table)
                .key_condition_expression("PK = :pk")
                .expression_attribute_values(":pk", s(ACCOUNT_PURGE_PK))
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .inspect(|out| self.record(out, &[ACCOUNT_PURGE_PK.to_owned()]))
                .map_err(sdk_error)?;
            for item in out.items.unwrap_or_default() {
                found.push(from_item(item)?);
            }
            start = out.last_evaluated_key;
            if start.is_none() {
                break;
            }
        }
        found.sort_by(|a, b| (&a.started, &a.member_id).cmp(&(&b.started, &b.member_id)));
        Ok(found
            .into_iter()
            .take(limit)
            .map(|d| PendingDeletion {
                member: MemberId::from_stored(d.member_id),
                delete_content: d.delete_content,
            })
            .collect())
    }

    /// Queries of `ByOwner` (keys and board only), in descending key order
    /// until `limit`: the member's posts first, then (with `likes`, the
    /// same Query of the whole partition) their likes, then their comments.
    /// Posts first: a deletion that deletes a post deletes the member's
    /// comments on it in the post's purge, in batches, not one by one.
    async fn owned(&self, member: &MemberId, likes: bool, limit: usize) -> StoreResult<Vec<Owned>> {
        let runs = if likes {
            vec![Run::All]
        } else {
            vec![Run::Of(OWNED_POST_PREFIX), Run::Of(OWNED_COMMENT_PREFIX)]
        };
        let mut found = Vec::new();
        for run in &runs {
            let mut start = None;
            // Reads on past DynamoDB's 1 MB pages (rare: entries are small).
            loop {
                let want = limit.saturating_sub(found.len());
                if want == 0 {
                    return Ok(found);
                }
                let (items, stopped_at) = self
                    .owner_query(member.as_str(), run, want, true, Some(&OWNED_KEYS), start)
                    .await?;
                found.extend(items.iter().filter_map(owned_of));
                start = stopped_at;
                if start.is_none() {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// One conditional UpdateItem per post and comment, [`DISOWN_AT_ONCE`]
    /// at a time; one no longer authored by the member is skipped. What this
    /// process cached of their posts (details, board pages) is forgotten.
    async fn disown(&self, member: &MemberId, items: &[Owned]) -> StoreResult<()> {
        let targets: Vec<(Item, String)> = items
            .iter()
            .filter_map(|owned| match owned {
                Owned::Post(post) => Some((
                    key(post_pk(post.post.as_str()), POST_SK.into()),
                    post.post.as_str().to_owned(),
                )),
                Owned::Comment(comment) => Some((
                    key(
                        post_pk(comment.post.post.as_str()),
                        comment_sk(comment.comment.as_str()),
                    ),
                    comment.post.post.as_str().to_owned(),
                )),
                Owned::Like(_) => None,
            })
            .collect();
        if targets.is_empty() {
            return Ok(());
        }
        let keys: Vec<Item> = targets.iter().map(|(item_key, _)| item_key.clone()).collect();
        let member = member.as_str();
        let results: Vec<StoreResult<bool>> = stream::iter(keys)
            .map(|item_key| self.disown_one(member, item_key))
            .buffer_unordered(DISOWN_AT_ONCE)
            .collect()
            .await;
        for (_, post_id) in &targets {
            self.cache.forget_post(post_id);
        }
        self.cache.pages.clear();
        results.into_iter().try_for_each(|r| r.map(|_| ()))
    }

    /// One DeleteItem of the record.
    async fn finish_deletion(&self, member: &MemberId) -> StoreResult<()> {
        self.client()
            .await
            .delete_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key(ACCOUNT_PURGE_PK.into(), member.as_str().to_owned())))
            .send()
            .await
            .inspect(|out| self.record(out, &[ACCOUNT_PURGE_PK.to_owned()]))
            .map_err(sdk_error)?;
        Ok(())
    }

    /// One consistent BatchGetItem of the member's appointment on each board
    /// (1 RCU each; per 100 boards).
    async fn moderated_boards(&self, member: &MemberId, boards: &[BoardSlug]) -> StoreResult<Vec<BoardSlug>> {
        let mut asked: Vec<&BoardSlug> = Vec::with_capacity(boards.len());
        for board in boards {
            // BatchGetItem refuses a key named twice.
            if !asked.contains(&board) {
                asked.push(board);
            }
        }
        let keys: Vec<Item> = asked
            .iter()
            .map(|board| key(mods_pk(board.as_str()), member.as_str().to_owned()))
            .collect();
        let reads = keys
            .chunks(BATCH_KEYS)
            .map(|chunk| self.batch_get(chunk.to_vec(), true, Some(&KEY_ONLY)));
        let found: HashSet<String> = try_join_all(reads)
            .await?
            .into_iter()
            .flatten()
            .filter_map(|item| text(&item, "PK").map(str::to_owned))
            .collect();
        Ok(asked
            .into_iter()
            .filter(|board| found.contains(&mods_pk(board.as_str())))
            .cloned()
            .collect())
    }

    /// One Query of `ByOwner` (`limit + 1` summaries, newest first), then
    /// the page's counter shards by key, per board, side by side (from this
    /// process's cache where fresh).
    async fn member_posts(&self, member: &MemberId, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page> {
        let limit = limit.get();
        let (items, more) = self.owner_page(member, OWNED_POST_PREFIX, limit, cursor).await?;
        let summaries: Vec<SummaryFields> = items.into_iter().map(from_item).collect::<StoreResult<_>>()?;
        let next_cursor = more.then(|| summaries.last().map(|s| cursor::encode(&s.id))).flatten();
        let mut by_board: HashMap<&str, Vec<&str>> = HashMap::new();
        for summary in &summaries {
            by_board.entry(&summary.board).or_default().push(&summary.id);
        }
        let reads = by_board
            .iter()
            .map(|(board, posts)| self.cached_shards_by_key(board, posts));
        let mut shards: HashMap<String, Shards> = try_join_all(reads).await?.into_iter().flatten().collect();
        let posts: Vec<PostSummary> = summaries
            .into_iter()
            // The index lags: an entry of a post disowned a moment ago.
            .filter(|s| s.author.author_member_id.as_deref() == Some(member.as_str()))
            .map(|s| {
                let counts = shards.remove(&s.id).unwrap_or_default().into_iter().sum();
                s.summary(counts)
            })
            .collect();
        Ok(Page { posts, next_cursor })
    }

    /// One Query of `ByOwner` (`limit + 1` entries, newest first), then
    /// the comments themselves (one BatchGetItem, eventually consistent):
    /// the index holds no body.
    async fn member_comments(
        &self,
        member: &MemberId,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<CommentPage> {
        let limit = limit.get();
        let (entries, more) = self.owner_page(member, OWNED_COMMENT_PREFIX, limit, cursor).await?;
        let next_cursor = more
            .then(|| {
                entries
                    .last()
                    .and_then(|e| text(e, "SK"))
                    .and_then(|sk| sk.strip_prefix(COMMENT_SK_PREFIX))
                    .map(cursor::encode)
            })
            .flatten();
        let keys: Vec<Item> = entries
            .iter()
            .filter_map(|e| Some(key(text(e, "PK")?.to_owned(), text(e, "SK")?.to_owned())))
            .collect();
        let reads = keys
            .chunks(BATCH_KEYS)
            .map(|chunk| self.batch_get(chunk.to_vec(), false, None));
        let mut found: HashMap<String, CommentItem> = HashMap::new();
        for item in try_join_all(reads).await?.into_iter().flatten() {
            let comment: CommentItem = from_item(item)?;
            found.insert(comment.sk.clone(), comment);
        }
        let comments = keys
            .iter()
            .filter_map(|k| k.get("SK").and_then(|v| v.as_s().ok()))
            .filter_map(|sk| found.remove(sk))
            // Deleted or disowned since the index was read: not theirs now.
            .filter(|c| c.author.author_member_id.as_deref() == Some(member.as_str()))
            .map(CommentItem::into_comment)
            .collect();
        Ok(CommentPage { comments, next_cursor })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gone_account_stays_gone_and_an_epoch_only_grows_in_the_cache() {
        assert!(newer_than(&None, Some(3)), "a deletion is not undone by a slow read");
        assert!(newer_than(&Some(4), Some(3)));
        assert!(!newer_than(&Some(3), Some(4)));
        assert!(!newer_than(&Some(3), None));
    }

    #[test]
    fn index_entries_name_what_they_index() {
        let entry = |pk: &str, owner_sk: &str| {
            Item::from([
                ("PK".to_owned(), s(pk)),
                ("owner_sk".to_owned(), s(owner_sk)),
                ("board".to_owned(), s("free")),
            ])
        };
        let post = PostKey {
            board: BoardSlug::from_stored("free".into()),
            post: PostId::from_stored("P".into()),
        };
        assert_eq!(owned_of(&entry("POST#P", "POST#P")), Some(Owned::Post(post.clone())));
        assert_eq!(
            owned_of(&entry("POST#P", "COMMENT#C")),
            Some(Owned::Comment(CommentKey {
                post: post.clone(),
                comment: CommentId::from_stored("C".into()),
            }))
        );
        assert_eq!(owned_of(&entry("LIKES#P#3", "LIKE#P")), Some(Owned::Like(post)));
        assert_eq!(owned_of(&entry("LIKES#P#3", "OTHER#P")), None);
    }

    #[test]
    fn a_tombstone_is_no_member() {
        let tombstone = Item::from([
            ("PK".to_owned(), s("MEMBER#kim")),
            ("SK".to_owned(), s("MEMBER")),
            ("username".to_owned(), s("kim")),
            ("deleted_at".to_owned(), s("2025-01-01T00:00:00.000Z")),
            ("session_epoch".to_owned(), n(2)),
        ]);
        assert!(live_member(tombstone).unwrap().is_none());
    }
}
