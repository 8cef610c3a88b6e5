//! The one-off backfill from the v1 item layout (docs/storage.md, "Upgrading a v1
//! table"): v1 kept a post's counts on the post item (and so in the board
//! index) and all of a post's likes in one partition `LIKES#<post id>`.
//! `cargo run -p shared --bin backfill` (with `TABLE_NAME`) runs it.
//!
//! Safe to run while the v2 functions serve, and again: every step is one
//! transaction guarded by a condition, so a step done is never done twice.
//! 1. Each v1 like item moves to its v2 partition. A member who liked again
//!    after the upgrade (an older version did not find the v1 item) has both: the v1 item
//!    goes and the post's v1 like count loses the duplicate.
//! 2. Each post's v1 counts move to its counter shard 0 and leave the post
//!    item (and the board index).
//! 3. Each member's post, comment and like gains its `ByOwner`
//!    keys (`owner`, the member id, and `owner_sk`), a like also its post's
//!    `board` (read from the post: a like of a post being deleted is left to
//!    its purge). One scan, then one UpdateItem per item, conditioned on the
//!    item still lacking `owner` (and a post or comment on still being the
//!    member's), so nothing is written twice and a disowned item is never
//!    given back to its member.
//! 4. Each post without a number gets one, per board oldest first
//!    (by id), and is counted among its board's live posts. The board's
//!    counter (created by v4's first allocation there, or here) reserved
//!    `1..=legacy` for them: `legacy` is how many posts had no number when
//!    it was created, and new posts get numbers after it. `legacy_given` on
//!    the counter is the last reserved number given; each post's number is
//!    one transaction: the post's `number` (conditioned on it having none),
//!    `legacy_given` moved on (conditioned on its value as read) and the
//!    board's count. Posts beyond the reservation (written by v3 functions
//!    after the counter was created) take numbers from the counter as new
//!    posts do. A second run finds nothing to number.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity};

use super::DynamoStore;
use super::attributes::{Item, key, n, pk_of, s, text};
use super::items::{
    COMMENT_SK_PREFIX, NUMBERS_SK, POST_SK, legacy_likes_pk, like_sk, likes_pk, numbers_pk, owned_comment_sk,
    owned_like_sk, owned_post_sk, post_pk, shard_key,
};
use super::metered::sdk_error;
use super::transact::TxFailure;
use crate::store::dynamo::metered::Metered;
use crate::store::{StoreError, StoreResult};

/// What a backfill run changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Backfill {
    pub likes_moved: u64,
    /// Likes a member gave twice across the upgrade, counted once now.
    pub duplicate_likes: u64,
    pub posts_folded: u64,
    /// Members' posts given their `ByOwner` keys.
    pub posts_owned: u64,
    /// Members' comments given their `ByOwner` keys.
    pub comments_owned: u64,
    /// Likes given their `ByOwner` keys and their post's board.
    pub likes_owned: u64,
    /// Posts given their number (and counted on their board).
    pub posts_numbered: u64,
}

fn count(item: &Item, name: &str) -> i64 {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl DynamoStore {
    /// Runs the three steps over the whole table.
    pub async fn backfill(&self) -> StoreResult<Backfill> {
        let mut done = Backfill::default();
        for like in self
            .scan("begins_with(PK, :likes)", &[], &[(":likes", s("LIKES#"))])
            .await?
        {
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
                &[],
                &[(":post", s(POST_SK))],
            )
            .await?;
        for post in posts {
            if self.fold_counts(&post).await? {
                done.posts_folded += 1;
            }
        }
        self.index_by_owner(&mut done).await?;
        self.number_posts(&mut done).await?;
        Ok(done)
    }

    /// Step 4: one scan for the posts without a number, then each board's
    /// oldest first.
    async fn number_posts(&self, done: &mut Backfill) -> StoreResult<()> {
        let unnumbered = self
            .scan(
                "SK = :post AND attribute_not_exists(#number)",
                &[("#number", "number")],
                &[(":post", s(POST_SK))],
            )
            .await?;
        let mut by_board: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for post in &unnumbered {
            if let (Some(board), Some(id)) = (text(post, "board"), text(post, "id")) {
                by_board.entry(board.to_owned()).or_default().push(id.to_owned());
            }
        }
        for (board, mut posts) in by_board {
            posts.sort_unstable();
            self.ensure_number_counter(&board).await?;
            for post in posts {
                if self.number_post(&board, &post).await? {
                    done.posts_numbered += 1;
                }
            }
        }
        Ok(())
    }

    /// Gives one post its number; false when it has one (or is gone).
    async fn number_post(&self, board: &str, post_id: &str) -> StoreResult<bool> {
        let counter_key = key(numbers_pk(board), NUMBERS_SK.into());
        for _ in 0..16 {
            let counter = self
                .get(counter_key.clone())
                .await?
                .ok_or_else(|| StoreError::Internal(format!("the number counter of {board} is missing")))?;
            let legacy = count(&counter, "legacy");
            let given = count(&counter, "legacy_given");
            let mut items = Vec::with_capacity(3);
            let number = if given < legacy {
                items.push(self.update(
                    counter_key.clone(),
                    "SET legacy_given = :number",
                    Some("legacy_given = :given"),
                    &[],
                    &[(":number", n(given + 1)), (":given", n(given))],
                )?);
                given + 1
            } else {
                i64::try_from(self.allocate_numbers(board, 1).await?).unwrap_or(i64::MAX)
            };
            items.insert(
                0,
                self.update(
                    key(post_pk(post_id), POST_SK.into()),
                    "SET #number = :number",
                    Some("attribute_exists(PK) AND board = :board AND attribute_not_exists(#number)"),
                    &[("#number", "number")],
                    &[(":number", n(number)), (":board", s(board))],
                )?,
            );
            items.push(self.count_posts(board, 1)?);
            match self.transact(items).await {
                Ok(()) => return Ok(true),
                Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => return Ok(false),
                // Another run gave that reserved number meanwhile: read again.
                Err(TxFailure::Conditions(_)) => continue,
                Err(TxFailure::Store(e)) => return Err(e),
            }
        }
        Err(StoreError::Unavailable(format!(
            "numbering post {post_id} kept racing another backfill"
        )))
    }

    /// Step 3: one scan for every member's post and comment and every
    /// v2 like without `owner`, then each item's conditional update.
    async fn index_by_owner(&self, done: &mut Backfill) -> StoreResult<()> {
        let unindexed = self
            .scan(
                "attribute_not_exists(#owner) AND ((author_kind = :member AND attribute_exists(author_member_id) \
                 AND (SK = :post OR begins_with(SK, :comment))) OR begins_with(PK, :likes))",
                &[("#owner", "owner")],
                &[
                    (":member", s("member")),
                    (":post", s(POST_SK)),
                    (":comment", s(COMMENT_SK_PREFIX)),
                    (":likes", s("LIKES#")),
                ],
            )
            .await?;
        // A like's board, read once per post (`None`: the post is gone).
        let mut boards: HashMap<String, Option<String>> = HashMap::new();
        for item in unindexed {
            let (Some(pk), Some(sk)) = (text(&item, "PK"), text(&item, "SK")) else {
                continue;
            };
            if let Some(rest) = pk.strip_prefix("LIKES#") {
                // v2 likes only (`LIKES#<post id>#<n>`); step 1 moved the v1 ones.
                let (Some((post, _)), Some(member)) = (rest.split_once('#'), sk.strip_prefix("MEMBER#")) else {
                    continue;
                };
                let board = match boards.get(post) {
                    Some(board) => board.clone(),
                    None => {
                        let board = self.post_board(post).await?;
                        boards.insert(post.to_owned(), board.clone());
                        board
                    }
                };
                let Some(board) = board else {
                    continue; // the post's purge deletes the like
                };
                if self.own(&item, member, owned_like_sk(post), Some(&board)).await? {
                    done.likes_owned += 1;
                }
                continue;
            }
            let (Some(member), Some(id)) = (text(&item, "author_member_id"), text(&item, "id")) else {
                continue;
            };
            if sk == POST_SK {
                if self.own(&item, member, owned_post_sk(id), None).await? {
                    done.posts_owned += 1;
                }
            } else if self.own(&item, member, owned_comment_sk(id), None).await? {
                done.comments_owned += 1;
            }
        }
        Ok(())
    }

    /// Gives one item its `ByOwner` keys (and a like its `board`), if it
    /// still has none and (a post or comment) is still `member`'s.
    async fn own(&self, item: &Item, member: &str, owner_sk: String, board: Option<&str>) -> StoreResult<bool> {
        let (Some(pk), Some(sk)) = (text(item, "PK"), text(item, "SK")) else {
            return Ok(false);
        };
        let touched = [pk_of(item)];
        let mut update = self
            .client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(pk.to_owned(), sk.to_owned())))
            .expression_attribute_names("#owner", "owner")
            .expression_attribute_values(":owner", s(member))
            .expression_attribute_values(":owner_sk", s(owner_sk));
        update = match board {
            Some(board) => update
                .update_expression("SET #owner = :owner, owner_sk = :owner_sk, board = :board")
                .condition_expression("attribute_exists(PK) AND attribute_not_exists(#owner)")
                .expression_attribute_values(":board", s(board)),
            None => update
                .update_expression("SET #owner = :owner, owner_sk = :owner_sk")
                .condition_expression(
                    "attribute_exists(PK) AND attribute_not_exists(#owner) AND author_kind = :member \
                     AND author_member_id = :owner",
                )
                .expression_attribute_values(":member", s("member")),
        };
        // Not written when given its keys by another run, disowned or deleted meanwhile.
        let written = update.metered_if(self, &touched).await?.is_some();
        if let Some(post_id) = pk.strip_prefix("POST#").filter(|_| written) {
            self.cache.forget_post(post_id);
        }
        Ok(written)
    }

    /// Every item matching `filter` (with its attribute `names` and
    /// `values`), page by page.
    async fn scan(
        &self,
        filter: &str,
        names: &[(&str, &str)],
        values: &[(&str, AttributeValue)],
    ) -> StoreResult<Vec<Item>> {
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
            for (placeholder, name) in names {
                scan = scan.expression_attribute_names(*placeholder, *name);
            }
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
        let items = vec![
            self.delete(old, Some("attribute_exists(PK)"))?,
            self.update(
                key(post_pk(post), POST_SK.into()),
                "ADD like_count :minus_one",
                Some("like_count > :zero"),
                &[],
                &[(":minus_one", n(-1)), (":zero", n(0))],
            )?,
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
        let condition = format!(
            "attribute_exists(PK) AND {} AND {} AND {}",
            same("view_count", ":views"),
            same("like_count", ":likes"),
            same("comment_count", ":comments")
        );
        let values = [(":views", n(views)), (":likes", n(likes)), (":comments", n(comments))];
        let items = vec![
            self.update(
                key(post_pk(id), POST_SK.into()),
                "REMOVE view_count, like_count, comment_count",
                Some(&condition),
                &[],
                &values,
            )?,
            self.update(
                shard_key(board, id, 0),
                "ADD #views :views, #likes :likes, #comments :comments",
                None,
                &[("#views", "views"), ("#likes", "likes"), ("#comments", "comments")],
                &values,
            )?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(_)) => Ok(false),
            Err(TxFailure::Store(e)) => Err(e),
        }
        .inspect(|_| self.cache.forget_post(id))
    }
}
