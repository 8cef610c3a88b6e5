//! Reading posts: a post with its first comments, pages of comments, and
//! board pages from the board, category and best indexes.

use std::sync::Arc;

use crate::domain::{COMMENTS_PAGE, CommentPage, Page, PageLimit, PostSummary};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{from_item, key, s};
use crate::store::dynamo::items::{
    BOARD_INDEX, COMMENT_SK_PREFIX, CommentItem, POST_SK, PostItem, SummaryFields, board_pk, comment_sk, post_pk,
};
use crate::store::dynamo::metered::Metered;
use crate::store::{StoreResult, cursor};

impl DynamoStore {
    /// One Query for a page of a post's comments, oldest first: `limit + 1`
    /// comment items from the first one or strictly after the comment `after`
    /// (a position: that comment need not exist any more). Never the post item.
    pub(super) async fn comments_page(
        &self,
        post_id: &str,
        limit: usize,
        after: Option<&str>,
        consistent: bool,
    ) -> StoreResult<CommentPage> {
        let pk = post_pk(post_id);
        let start = after.map(|id| key(pk.clone(), comment_sk(id)));
        let query_pk = pk.clone();
        let out = self
            .client()
            .await
            .query()
            .table_name(&self.table)
            .key_condition_expression("PK = :pk AND begins_with(SK, :comments)")
            .expression_attribute_values(":pk", s(query_pk))
            .expression_attribute_values(":comments", s(COMMENT_SK_PREFIX))
            .consistent_read(consistent)
            .limit(i32::try_from(limit + 1).unwrap_or(i32::MAX))
            .set_exclusive_start_key(start)
            .metered(self, std::slice::from_ref(&pk))
            .await?;
        let comments = out
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|item| from_item::<CommentItem>(item).map(CommentItem::into_comment))
            .collect::<StoreResult<Vec<_>>>()?;
        // Fewer than asked, yet a LastEvaluatedKey: the 1 MB cap ended the
        // read early (101 comments of 2,000 characters stay well under it).
        let cut_short = comments.len() <= limit && out.last_evaluated_key.is_some();
        Ok(cursor::comment_page_of(comments, limit, cut_short))
    }

    /// The post item and its first page of comments (two requests side by
    /// side), `None` when there is no such post. Eventually consistent reads
    /// cost half; they serve the cache, which is not read-your-writes anyway.
    pub(super) async fn post_with_comments(
        &self,
        post_id: &str,
        consistent: bool,
    ) -> StoreResult<Option<(PostItem, CommentPage)>> {
        let (post, page) = tokio::try_join!(
            self.get_with(key(post_pk(post_id), POST_SK.into()), consistent, None),
            self.comments_page(post_id, COMMENTS_PAGE, None, consistent),
        )?;
        Ok(post.map(from_item::<PostItem>).transpose()?.map(|post| (post, page)))
    }

    /// One Query on the board index: `limit + 1` summaries, newest first,
    /// strictly older than the cursor's post.
    pub(super) async fn board_page(
        &self,
        board: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> StoreResult<Vec<SummaryFields>> {
        let listing = Listing {
            index: BOARD_INDEX,
            key_name: "GSI1PK",
            key: board_pk(board),
            category: None,
        };
        self.index_page(&listing, limit, cursor).await
    }

    /// `limit + 1` summaries of a listing index, newest first, strictly older
    /// than the cursor's post: one Query, more only when a category filter
    /// (of the best list) left the page short.
    pub(super) async fn index_page(
        &self,
        listing: &Listing<'_>,
        limit: usize,
        cursor: Option<&str>,
    ) -> StoreResult<Vec<SummaryFields>> {
        let after = cursor.map(cursor::decode).transpose()?;
        let mut found: Vec<SummaryFields> = Vec::new();
        // The index's units are metered on its own (by index name).
        let mut pages = self.pages(&[]);
        loop {
            let wanted = limit + 1 - found.len();
            let page = pages
                .next(|query| {
                    let query = query
                        .index_name(listing.index)
                        .expression_attribute_names("#key", listing.key_name)
                        .expression_attribute_values(":key", s(listing.key.as_str()))
                        .scan_index_forward(false);
                    let query = match &after {
                        Some(after) => query
                            .key_condition_expression("#key = :key AND GSI1SK < :after")
                            .expression_attribute_values(":after", s(after.as_str())),
                        None => query.key_condition_expression("#key = :key"),
                    };
                    match listing.category {
                        Some(category) => query
                            .filter_expression("category = :category")
                            .expression_attribute_values(":category", s(category))
                            // The best list is small: read on in larger steps.
                            .limit(i32::try_from((limit + 1).max(100)).unwrap_or(i32::MAX)),
                        None => query.limit(i32::try_from(wanted).unwrap_or(i32::MAX)),
                    }
                })
                .await?;
            let Some(out) = page else { return Ok(found) };
            for item in out.items.unwrap_or_default() {
                found.push(from_item(item)?);
            }
            if found.len() > limit {
                found.truncate(limit + 1);
                return Ok(found);
            }
        }
    }

    /// A page of `listing` with its counts, as [`Posts::list_posts`] pages
    /// the board: the summaries cached by listing, cursor and limit; the
    /// counter shards by key (the posts of a category or the best list are
    /// not neighbours on their board: a range Query would read every other
    /// post's shards between them).
    pub(super) async fn listing_page(
        &self,
        listing: Listing<'_>,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Page> {
        let limit = limit.get();
        let cache_key = (
            format!(
                "{}\u{1f}{}\u{1f}{}",
                listing.index,
                listing.key,
                listing.category.unwrap_or("")
            ),
            cursor.map(str::to_owned),
            limit,
        );
        let summaries = match self.cache.pages.get(&cache_key) {
            Some(summaries) => summaries,
            None => {
                let read_at = std::time::Instant::now();
                let summaries = Arc::new(self.index_page(&listing, limit, cursor).await?);
                self.cache.pages.put_at(cache_key, summaries.clone(), read_at);
                summaries
            }
        };
        let ids: Vec<&str> = summaries.iter().take(limit).map(|s| s.id.as_str()).collect();
        let mut shards = match summaries.first() {
            Some(first) => self.cached_shards_by_key(&first.board, &ids).await?,
            None => Default::default(),
        };
        let mut posts: Vec<PostSummary> = summaries
            .iter()
            .map(|s| {
                let counts = shards.remove(&s.id).unwrap_or_default().into_iter().sum();
                s.clone().summary(counts)
            })
            .collect();
        Ok(cursor::page_of(&mut posts, limit))
    }
}

/// A listing index and its partition: the board index, a category's or
/// the best list's.
pub(super) struct Listing<'a> {
    pub(super) index: &'static str,
    pub(super) key_name: &'static str,
    pub(super) key: String,
    /// Only posts of this category (a filter: the best list).
    pub(super) category: Option<&'a str>,
}
