//! A member's listings, read through the `ByOwner` index: one Query,
//! newest first; a posts page reads its counts as the board listing does
//! (the shards, here by key, grouped by board), a comments page its
//! comments' bodies (one BatchGetItem: the index does not project `body`,
//! which a post's would fill with up to 60 KB each).

use std::collections::HashMap;

use futures_util::future::try_join_all;

use crate::domain::{CommentPage, MemberId, Page, PageLimit, PostSummary};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{Item, Projection, from_item, key, s, text};
use crate::store::dynamo::counters::Shards;
use crate::store::dynamo::items::{
    BY_OWNER_INDEX, COMMENT_SK_PREFIX, CommentItem, OWNED_COMMENT_PREFIX, OWNED_POST_PREFIX, SummaryFields,
};
use crate::store::dynamo::metered::Metered;
use crate::store::dynamo::requests::BATCH_KEYS;
use crate::store::{StoreResult, cursor};

/// Which of a member's entries in `ByOwner` a Query reads.
pub(super) enum Run<'a> {
    /// Every entry.
    All,
    /// The entries whose `owner_sk` starts with this prefix.
    Of(&'a str),
    /// Those of them with ids below `before` (a page's cursor).
    Before(&'a str, &'a str),
}

impl DynamoStore {
    /// One Query of the member's entries in `ByOwner`: up to `limit` of
    /// `run`, newest first when `newest_first`, from `start`; and where
    /// DynamoDB stopped, when it did before the run's end (at `limit` or
    /// its 1 MB page).
    pub(super) async fn owner_query(
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
            // The index's units are metered on their own (under `ByOwner`).
            .metered(self, &[])
            .await?;
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
}

/// One Query of `ByOwner` (`limit + 1` summaries, newest first), then
/// the page's counter shards by key, per board, side by side (from this
/// process's cache where fresh).
pub(super) async fn member_posts(
    store: &DynamoStore,
    member: &MemberId,
    limit: PageLimit,
    cursor: Option<&str>,
) -> StoreResult<Page> {
    let limit = limit.get();
    let (items, more) = store.owner_page(member, OWNED_POST_PREFIX, limit, cursor).await?;
    let summaries: Vec<SummaryFields> = items.into_iter().map(from_item).collect::<StoreResult<_>>()?;
    let next_cursor = more.then(|| summaries.last().map(|s| cursor::encode(&s.id))).flatten();
    let mut by_board: HashMap<&str, Vec<&str>> = HashMap::new();
    for summary in &summaries {
        by_board.entry(&summary.board).or_default().push(&summary.id);
    }
    let reads = by_board
        .iter()
        .map(|(board, posts)| store.cached_shards_by_key(board, posts));
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
pub(super) async fn member_comments(
    store: &DynamoStore,
    member: &MemberId,
    limit: PageLimit,
    cursor: Option<&str>,
) -> StoreResult<CommentPage> {
    let limit = limit.get();
    let (entries, more) = store.owner_page(member, OWNED_COMMENT_PREFIX, limit, cursor).await?;
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
        .map(|chunk| store.batch_get(chunk.to_vec(), false, None));
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
