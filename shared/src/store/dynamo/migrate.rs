//! The one-off backfill from the v1 item layout (docs/storage.md, "Upgrading a v1
//! table"): v1 kept a post's counts on the post item (and so in the board
//! index) and all of a post's likes in one partition `LIKES#<post id>`.
//! `cargo run -p shared --bin backfill` (with `TABLE_NAME`) runs it.
//!
//! Safe to run while the v2 functions serve, and again: every step is one
//! transaction guarded by a condition, so a step done is never done twice.
//! 1. Each v1 like item moves to its v2 partition. A member who liked again
//!    after the upgrade (v2 did not find the v1 item) has both: the v1 item
//!    goes and the post's v1 like count loses the duplicate.
//! 2. Each post's v1 counts move to its counter shard 0 and leave the post
//!    item (and the board index).

use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity, TransactWriteItem, Update};

use super::DynamoStore;
use super::attributes::{Item, key, n, s};
use super::counters::shard_key;
use super::items::{POST_SK, legacy_likes_pk, like_sk, likes_pk, post_pk};
use super::transact::{TxFailure, sdk_error};
use crate::store::{StoreError, StoreResult};

/// What a backfill run changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Backfill {
    pub likes_moved: u64,
    /// Likes a member gave twice across the upgrade, counted once now.
    pub duplicate_likes: u64,
    pub posts_folded: u64,
}

fn text<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name).and_then(|v| v.as_s().ok()).map(String::as_str)
}

fn count(item: &Item, name: &str) -> i64 {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl DynamoStore {
    /// Runs both steps over the whole table.
    pub async fn backfill(&self) -> StoreResult<Backfill> {
        let mut done = Backfill::default();
        for like in self.scan("begins_with(PK, :likes)", &[(":likes", s("LIKES#"))]).await? {
            let (Some(pk), Some(sk)) = (text(&like, "PK"), text(&like, "SK")) else {
                continue;
            };
            let Some(post) = pk.strip_prefix("LIKES#").filter(|rest| !rest.contains('#')) else {
                continue; // already a v2 like
            };
            let Some(member) = sk.strip_prefix("MEMBER#") else {
                continue;
            };
            if self.move_like(post, member).await? {
                done.likes_moved += 1;
            } else {
                done.duplicate_likes += 1;
            }
        }
        let posts = self
            .scan(
                "SK = :post AND (attribute_exists(view_count) OR attribute_exists(like_count) OR attribute_exists(comment_count))",
                &[(":post", s(POST_SK))],
            )
            .await?;
        for post in posts {
            if self.fold_counts(&post).await? {
                done.posts_folded += 1;
            }
        }
        Ok(done)
    }

    /// Every item matching `filter`, page by page.
    async fn scan(&self, filter: &str, values: &[(&str, AttributeValue)]) -> StoreResult<Vec<Item>> {
        let mut items = Vec::new();
        let mut start = None;
        loop {
            let mut scan = self
                .client()
                .await
                .scan()
                .table_name(&self.table)
                .filter_expression(filter)
                .consistent_read(true)
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .set_exclusive_start_key(start);
            for (name, value) in values {
                scan = scan.expression_attribute_values(*name, value.clone());
            }
            let out = scan.send().await.map_err(sdk_error)?;
            items.extend(out.items.unwrap_or_default());
            start = out.last_evaluated_key;
            if start.is_none() {
                return Ok(items);
            }
        }
    }

    /// Moves one v1 like; false when the member's v2 like already existed
    /// (then the v1 item goes and the v1 count loses one).
    async fn move_like(&self, post: &str, member: &str) -> StoreResult<bool> {
        let old = key(legacy_likes_pk(post), like_sk(member));
        let new = key(likes_pk(post, member), like_sk(member));
        let moved = self
            .transact(vec![
                self.put(new, "attribute_not_exists(PK)")?,
                self.delete(old.clone(), Some("attribute_exists(PK)"))?,
            ])
            .await;
        match moved {
            Ok(()) => return Ok(true),
            Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => {}
            // The v1 item is gone: another run moved it meanwhile.
            Err(TxFailure::Conditions(_)) => return Ok(true),
            Err(TxFailure::Store(e)) => return Err(e),
        }
        let uncount = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(post_pk(post), POST_SK.into())))
            .update_expression("ADD like_count :minus_one")
            .condition_expression("like_count > :zero")
            .expression_attribute_values(":minus_one", n(-1))
            .expression_attribute_values(":zero", n(0))
            .build()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        let items = vec![
            self.delete(old, Some("attribute_exists(PK)"))?,
            TransactWriteItem::builder().update(uncount).build(),
        ];
        match self.transact(items).await {
            Ok(()) => Ok(false),
            // Gone meanwhile, or the post has no v1 count left to correct.
            Err(TxFailure::Conditions(_)) => Ok(false),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// Moves a post's v1 counts to its shard 0, if they are still as read.
    async fn fold_counts(&self, post: &Item) -> StoreResult<bool> {
        let (Some(id), Some(board)) = (text(post, "id"), text(post, "board")) else {
            return Ok(false);
        };
        // Read again: step 1 may have corrected the like count.
        let Some(post) = self.get(key(post_pk(id), POST_SK.into())).await? else {
            return Ok(false);
        };
        let (views, likes, comments) = (
            count(&post, "view_count"),
            count(&post, "like_count"),
            count(&post, "comment_count"),
        );
        let same = |name: &str, placeholder: &str| format!("(attribute_not_exists({name}) OR {name} = {placeholder})");
        let clear = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(post_pk(id), POST_SK.into())))
            .update_expression("REMOVE view_count, like_count, comment_count")
            .condition_expression(format!(
                "attribute_exists(PK) AND {} AND {} AND {}",
                same("view_count", ":views"),
                same("like_count", ":likes"),
                same("comment_count", ":comments")
            ))
            .expression_attribute_values(":views", n(views))
            .expression_attribute_values(":likes", n(likes))
            .expression_attribute_values(":comments", n(comments))
            .build()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        let add = Update::builder()
            .table_name(&self.table)
            .set_key(Some(shard_key(board, id, 0)))
            .update_expression("ADD #views :views, #likes :likes, #comments :comments")
            .expression_attribute_names("#views", "views")
            .expression_attribute_names("#likes", "likes")
            .expression_attribute_names("#comments", "comments")
            .expression_attribute_values(":views", n(views))
            .expression_attribute_values(":likes", n(likes))
            .expression_attribute_values(":comments", n(comments))
            .build()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        let items = vec![
            TransactWriteItem::builder().update(clear).build(),
            TransactWriteItem::builder().update(add).build(),
        ];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(_)) => Ok(false),
            Err(TxFailure::Store(e)) => Err(e),
        }
        .inspect(|_| self.cache.forget_post(id))
    }
}
