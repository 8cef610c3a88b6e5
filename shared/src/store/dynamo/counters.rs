//! Counter shards: a post's views, likes and comments counted in small items
//! of their own, shard n of each post of a board under `COUNT#<board>#<n>`
//! (n < `COUNTER_SHARDS`). A hot post spreads its writes over n partitions
//! and no count is ever written to the post item or the board index; a board
//! page reads its posts' counts with one Query per partition (the items are
//! tiny, so a Query of 20 costs what one item does). A shard exists only
//! while its post does: the post's delete removes the shards in the same
//! transaction, and every counting write requires its shard, which is
//! created on its first use in a transaction that checks the post exists.

use std::collections::HashMap;
use std::time::Instant;

use aws_sdk_dynamodb::types::ReturnValue;
use futures_util::future::try_join_all;

use super::DynamoStore;
use super::attributes::{Item, Projection, key, n, s};
use super::items::{Counts, POST_ON_BOARD, POST_SK, counter_pk, post_pk, shard_key};
use super::requests::BATCH_KEYS;
use super::transact::TxFailure;
use crate::store::StoreResult;
use crate::store::dynamo::metered::Metered;

/// A post's shards, index = shard number; a shard not written yet counts 0.
pub(super) type Shards = Vec<Counts>;

fn counts_of(item: &Item) -> Counts {
    let number = |name: &str| {
        item.get(name)
            .and_then(|v| v.as_n().ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Counts {
        views: number("views"),
        likes: number("likes"),
        comments: number("comments"),
        dislikes: number("dislikes"),
    }
}

/// The shard number in `COUNT#<board>#<n>`.
fn shard_number(pk: &str) -> Option<usize> {
    pk.strip_prefix("COUNT#")?.rsplit_once('#')?.1.parse().ok()
}

/// The post id (SK) and shard number (from PK) of a shard item.
fn placed(item: &Item) -> Option<(&str, usize)> {
    let pk = item.get("PK")?.as_s().ok()?;
    let sk = item.get("SK")?.as_s().ok()?;
    Some((sk.as_str(), shard_number(pk)?))
}

/// A shard's key and counts.
const COUNTS: Projection = Projection {
    expression: "PK, SK, #views, #likes, #comments, #dislikes",
    names: &[
        ("#views", "views"),
        ("#likes", "likes"),
        ("#comments", "comments"),
        ("#dislikes", "dislikes"),
    ],
};

impl DynamoStore {
    fn shard_count(&self) -> u32 {
        self.layout.counter_shards
    }

    pub(super) fn random_shard(&self) -> u32 {
        rand::random::<u32>() % self.shard_count()
    }

    fn empty_shards<'a>(&self, posts: impl IntoIterator<Item = &'a str>) -> HashMap<String, Shards> {
        let shards = self.shard_count() as usize;
        posts
            .into_iter()
            .map(|post| (post.to_owned(), vec![Counts::default(); shards]))
            .collect()
    }

    fn place(found: &mut HashMap<String, Shards>, items: impl IntoIterator<Item = Item>) {
        for item in items {
            if let Some((post, n)) = placed(&item)
                && let Some(slot) = found.get_mut(post).and_then(|v| v.get_mut(n))
            {
                *slot = counts_of(&item);
            }
        }
    }

    /// Every shard of a few posts of `board` by key: one BatchGetItem per
    /// 100 shards. Eventually consistent unless `consistent`.
    pub(super) async fn read_shards(
        &self,
        board: &str,
        posts: &[&str],
        consistent: bool,
    ) -> StoreResult<HashMap<String, Shards>> {
        let keys: Vec<Item> = posts
            .iter()
            .flat_map(|post| (0..self.shard_count()).map(move |n| shard_key(board, post, n)))
            .collect();
        let batches = keys
            .chunks(BATCH_KEYS)
            .map(|chunk| self.batch_get(chunk.to_vec(), consistent, Some(&COUNTS)));
        let mut found = self.empty_shards(posts.iter().copied());
        Self::place(&mut found, try_join_all(batches).await?.into_iter().flatten());
        Ok(found)
    }

    /// The shards of a board page's posts: one Query per shard partition,
    /// side by side, over the page's range of post ids (a page is a run of
    /// consecutive ids of one board). Eventually consistent.
    async fn page_shards(&self, board: &str, posts: &[&str]) -> StoreResult<HashMap<String, Shards>> {
        let mut found = self.empty_shards(posts.iter().copied());
        let (Some(low), Some(high)) = (posts.iter().min(), posts.iter().max()) else {
            return Ok(found);
        };
        let queries = (0..self.shard_count()).map(|n| self.shard_range(board, n, low, high));
        Self::place(&mut found, try_join_all(queries).await?.into_iter().flatten());
        Ok(found)
    }

    /// Shard `shard` of the posts of `board` with ids from `low` to `high`.
    async fn shard_range(&self, board: &str, shard: u32, low: &str, high: &str) -> StoreResult<Vec<Item>> {
        let mut items = Vec::new();
        let mut pages = self.pages(&[counter_pk(board, shard)]);
        while let Some(out) = pages
            .next(|query| {
                query
                    .key_condition_expression("PK = :pk AND SK BETWEEN :low AND :high")
                    .expression_attribute_values(":pk", s(counter_pk(board, shard)))
                    .expression_attribute_values(":low", s(low))
                    .expression_attribute_values(":high", s(high))
                    .projection_expression(COUNTS.expression)
                    .set_expression_attribute_names(Some(COUNTS.names()))
            })
            .await?
        {
            items.extend(out.items.unwrap_or_default());
        }
        Ok(items)
    }

    /// Shards of posts of `board` from this process's cache where fresh, the
    /// rest read (eventually consistent: by key for one post, by page range
    /// for more) and cached.
    pub(super) async fn cached_shards(&self, board: &str, posts: &[&str]) -> StoreResult<HashMap<String, Shards>> {
        self.cached_shards_read(board, posts, true).await
    }

    /// Shards of posts of `board` from this process's cache where
    /// fresh, the rest read by key (eventually consistent, one BatchGetItem
    /// per 100 shards) and cached: for posts that need not be neighbours on
    /// their board (a member's posts), where a Query of the range between
    /// them would read every other post's shards in it.
    pub(super) async fn cached_shards_by_key(
        &self,
        board: &str,
        posts: &[&str],
    ) -> StoreResult<HashMap<String, Shards>> {
        self.cached_shards_read(board, posts, false).await
    }

    async fn cached_shards_read(
        &self,
        board: &str,
        posts: &[&str],
        by_range: bool,
    ) -> StoreResult<HashMap<String, Shards>> {
        let mut found = HashMap::new();
        let mut missing = Vec::new();
        for post in posts {
            match self.cache.shards.get(&(*post).to_owned()) {
                Some(shards) => {
                    found.insert((*post).to_owned(), shards);
                }
                None => missing.push(*post),
            }
        }
        if !missing.is_empty() {
            let read_at = Instant::now();
            let read = if missing.len() == 1 || !by_range {
                self.read_shards(board, &missing, false).await?
            } else {
                self.page_shards(board, &missing).await?
            };
            for (post, shards) in read {
                self.cache.shards.put_at(post.clone(), shards.clone(), read_at);
                found.insert(post, shards);
            }
        }
        Ok(found)
    }

    /// `ADD views 1` on one shard of a post of `board`; the shard's counts
    /// after it, `None` when the shard does not exist (then see
    /// [`Self::ensure_shard`]).
    pub(super) async fn add_view(&self, board: &str, post_id: &str, shard: u32) -> StoreResult<Option<Counts>> {
        self.add_views_to(board, post_id, shard, 1).await
    }

    /// Adds `views` to one shard; `None` when the shard does not exist.
    pub(super) async fn add_views_to(
        &self,
        board: &str,
        post_id: &str,
        shard: u32,
        views: u64,
    ) -> StoreResult<Option<Counts>> {
        let out = self
            .client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(shard_key(board, post_id, shard)))
            .update_expression("ADD #views :views")
            .condition_expression("attribute_exists(PK)")
            .expression_attribute_names("#views", "views")
            .expression_attribute_values(":views", n(i64::try_from(views).unwrap_or(i64::MAX)))
            .return_values(ReturnValue::AllNew)
            .metered_if(self, &[counter_pk(board, shard)])
            .await?;
        Ok(out.map(|out| counts_of(&out.attributes.unwrap_or_default())))
    }

    /// The first write to a shard: creates it, in one transaction with a
    /// check that the post is on `board`. The post's delete removes its
    /// shards in a transaction of its own, so a shard can never be created
    /// after its post is gone (which would let later comments and likes on
    /// the deleted post through). False when the post is not there.
    pub(super) async fn ensure_shard(&self, board: &str, post_id: &str, shard: u32) -> StoreResult<bool> {
        let items = vec![
            self.check(
                key(post_pk(post_id), POST_SK.into()),
                POST_ON_BOARD,
                &[(":board", s(board))],
            )?,
            self.update(
                shard_key(board, post_id, shard),
                "SET #views = if_not_exists(#views, :zero)",
                None,
                &[("#views", "views")],
                &[(":zero", n(0))],
            )?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(_)) => Ok(false),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// The keys of every shard a post can have, for the post's delete transaction.
    pub(super) fn shard_keys<'a>(&self, board: &'a str, post_id: &'a str) -> impl Iterator<Item = Item> + 'a {
        (0..self.shard_count()).map(move |n| shard_key(board, post_id, n))
    }
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;

    #[test]
    fn shard_items_name_their_post_and_number() {
        let item = shard_key("free", "01ABC", 12);
        assert_eq!(placed(&item), Some(("01ABC", 12)));
        assert_eq!(shard_number("POST#01ABC"), None);
        assert_eq!(shard_number("COUNT#free#x"), None);
    }

    #[test]
    fn a_shard_without_a_counter_counts_zero() {
        let item = HashMap::from([("likes".to_owned(), AttributeValue::N("3".into()))]);
        assert_eq!(
            counts_of(&item),
            Counts {
                views: 0,
                likes: 3,
                comments: 0,
                dislikes: 0
            }
        );
    }
}
