//! Counter shards: a post's views, likes and comments counted in small items
//! of their own (`COUNT#<post id>#<n>`, n < `COUNTER_SHARDS`), each in its
//! own partition, so a hot post spreads its writes over n partitions and no
//! count is ever written to the post item or the board index. A shard
//! exists only while its post does: the post's delete removes the shards in
//! the same transaction, and every counting write requires its shard, which
//! is created on its first use once the post is confirmed to exist.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{KeysAndAttributes, ReturnConsumedCapacity, ReturnValue};
use futures_util::future::try_join_all;

use super::capacity::Partition;
use super::items::{COUNTER_SK, Counts, counter_pk};
use super::{DynamoStore, Item, StoreError, StoreResult, is_conditional_failure, key, n, s, sdk_error};

/// BatchGetItem takes at most 100 keys.
const BATCH_KEYS: usize = 100;

/// A post's shards, index = shard number; a shard not written yet counts 0.
pub type Shards = Vec<Counts>;

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
    }
}

/// `COUNT#<post id>#<n>` back to the post id and n.
fn shard_of_key(pk: &str) -> Option<(&str, usize)> {
    let (post, shard) = pk.strip_prefix("COUNT#")?.rsplit_once('#')?;
    Some((post, shard.parse().ok()?))
}

impl DynamoStore {
    fn shard_count(&self) -> u32 {
        self.layout.counter_shards
    }

    pub(super) fn random_shard(&self) -> u32 {
        rand::random::<u32>() % self.shard_count()
    }

    /// Every shard of `posts`, read in BatchGetItem requests of up to 100
    /// keys sent side by side. Eventually consistent unless `consistent`.
    pub(super) async fn read_shards(&self, posts: &[&str], consistent: bool) -> StoreResult<HashMap<String, Shards>> {
        let shards = self.shard_count();
        let keys: Vec<Item> = posts
            .iter()
            .flat_map(|post| (0..shards).map(move |n| key(counter_pk(post, n), COUNTER_SK.into())))
            .collect();
        let batches = keys
            .chunks(BATCH_KEYS)
            .map(|chunk| self.batch_get(chunk.to_vec(), consistent));
        let mut found: HashMap<String, Shards> = posts
            .iter()
            .map(|post| ((*post).to_owned(), vec![Counts::default(); shards as usize]))
            .collect();
        for item in try_join_all(batches).await?.into_iter().flatten() {
            let Some(pk) = item.get("PK").and_then(|v| v.as_s().ok()) else {
                continue;
            };
            if let Some((post, n)) = shard_of_key(pk)
                && let Some(slot) = found.get_mut(post).and_then(|v| v.get_mut(n))
            {
                *slot = counts_of(&item);
            }
        }
        Ok(found)
    }

    /// One BatchGetItem, retried for the keys DynamoDB leaves unprocessed.
    async fn batch_get(&self, keys: Vec<Item>, consistent: bool) -> StoreResult<Vec<Item>> {
        let mut items = Vec::with_capacity(keys.len());
        let mut pending = Some(keys);
        let mut backoff = Duration::from_millis(20);
        for attempt in 0.. {
            let Some(keys) = pending.take().filter(|k| !k.is_empty()) else {
                return Ok(items);
            };
            if attempt > 8 {
                return Err(StoreError::Unavailable(format!(
                    "{} reads left unprocessed",
                    keys.len()
                )));
            }
            if attempt > 0 {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
            let touched = vec![Partition::CounterShard; keys.len()];
            let request = KeysAndAttributes::builder()
                .set_keys(Some(keys))
                .projection_expression("PK, #views, #likes, #comments")
                .expression_attribute_names("#views", "views")
                .expression_attribute_names("#likes", "likes")
                .expression_attribute_names("#comments", "comments")
                .consistent_read(consistent)
                .build()
                .map_err(|e| StoreError::Internal(e.to_string()))?;
            let mut out = self
                .client
                .batch_get_item()
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .request_items(&self.table, request)
                .send()
                .await
                .inspect(|out| self.record(out, &touched))
                .map_err(sdk_error)?;
            items.extend(
                out.responses
                    .as_mut()
                    .and_then(|r| r.remove(&self.table))
                    .unwrap_or_default(),
            );
            pending = out
                .unprocessed_keys
                .and_then(|mut u| u.remove(&self.table))
                .map(|k| k.keys);
        }
        unreachable!("the loop returns")
    }

    /// Shards of `posts` from this process's cache where fresh, the rest
    /// read (eventually consistent) and cached.
    pub(super) async fn cached_shards(&self, posts: &[&str]) -> StoreResult<HashMap<String, Shards>> {
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
            for (post, shards) in self.read_shards(&missing, false).await? {
                self.cache.shards.put_at(post.clone(), shards.clone(), read_at);
                found.insert(post, shards);
            }
        }
        Ok(found)
    }

    /// `ADD views 1` on one shard of a post of `board`; the shard's counts
    /// after it, `None` when the shard does not exist (see [`Self::first_view`]).
    pub(super) async fn add_view(&self, board: &str, post_id: &str, shard: u32) -> StoreResult<Option<Counts>> {
        let out = self
            .client
            .update_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key(counter_pk(post_id, shard), COUNTER_SK.into())))
            .update_expression("ADD #views :one")
            .condition_expression("attribute_exists(PK) AND board = :board")
            .expression_attribute_names("#views", "views")
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":board", s(board))
            .return_values(ReturnValue::AllNew)
            .send()
            .await
            .inspect(|out| self.record(out, &[Partition::CounterShard]));
        match out {
            Ok(out) => Ok(Some(counts_of(&out.attributes.unwrap_or_default()))),
            Err(e) if is_conditional_failure(&e) => Ok(None),
            Err(e) => Err(sdk_error(e)),
        }
    }

    /// The first write to a shard: creates it. Only after the post was seen
    /// to exist (a delete racing with this can leave one orphan shard, which
    /// nothing reads: README, "Single-table design").
    pub(super) async fn ensure_shard(&self, board: &str, post_id: &str, shard: u32) -> StoreResult<()> {
        let out = self
            .client
            .update_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key(counter_pk(post_id, shard), COUNTER_SK.into())))
            .update_expression("SET board = :board")
            .condition_expression("attribute_not_exists(PK) OR board = :board")
            .expression_attribute_values(":board", s(board))
            .send()
            .await
            .inspect(|out| self.record(out, &[Partition::CounterShard]));
        match out {
            Ok(_) => Ok(()),
            Err(e) if is_conditional_failure(&e) => Err(StoreError::Internal(format!(
                "counter shard {shard} of post {post_id} belongs to another board"
            ))),
            Err(e) => Err(sdk_error(e)),
        }
    }

    /// The delete of every shard a post can have, for the post's delete transaction.
    pub(super) fn shard_keys(&self, post_id: &str) -> impl Iterator<Item = Item> + '_ {
        let post_id = post_id.to_owned();
        (0..self.shard_count()).map(move |n| key(counter_pk(&post_id, n), COUNTER_SK.into()))
    }
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;

    #[test]
    fn shard_keys_name_their_post_and_number() {
        assert_eq!(shard_of_key("COUNT#01ABC#12"), Some(("01ABC", 12)));
        assert_eq!(shard_of_key("POST#01ABC"), None);
        assert_eq!(shard_of_key("COUNT#01ABC#x"), None);
    }

    #[test]
    fn a_shard_without_a_counter_counts_zero() {
        let item = HashMap::from([("likes".to_owned(), AttributeValue::N("3".into()))]);
        assert_eq!(
            counts_of(&item),
            Counts {
                views: 0,
                likes: 3,
                comments: 0
            }
        );
    }
}
