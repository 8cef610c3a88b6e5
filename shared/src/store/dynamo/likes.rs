//! [`Likes`] on DynamoDB: a like item per member, spread over the post's
//! like partitions, and its count on the member's counter shard, changed
//! together in one transaction. A like item names its post's board
//! and is indexed under its member in `ByOwner` (`LIKE#<post id>`), so an
//! account deletion finds a member's likes and withdraws each by its post's key.

use async_trait::async_trait;

use super::DynamoStore;
use super::attributes::{key, s};
use super::items::{like_sk, likes_pk, owned_like_sk, shard_of};
use crate::domain::{LikeState, MemberId, PostId, PostKey};
use crate::store::{Likes, StoreResult};

impl DynamoStore {
    /// Likes or unlikes: the like item and its count on the member's shard
    /// in one transaction; then the post's likes, read consistently from
    /// every shard (a like's answer includes itself).
    async fn set_like(
        &self,
        board: &str,
        post_id: &str,
        member_id: &str,
        liked: bool,
    ) -> StoreResult<Option<LikeState>> {
        let like_key = key(likes_pk(post_id, member_id), like_sk(member_id));
        let (change, delta) = if liked {
            let mut item = like_key;
            item.insert("board".into(), s(board));
            item.insert("owner".into(), s(member_id));
            item.insert("owner_sk".into(), s(owned_like_sk(post_id)));
            (self.put(item, "attribute_not_exists(PK)")?, 1)
        } else {
            (self.delete(like_key, Some("attribute_exists(PK)"))?, -1)
        };
        let shard = shard_of(member_id, self.layout.counter_shards);
        let counter = self.count_on_shard(board, post_id, shard, "likes", delta)?;
        // A failed like-item condition means already liked (or not liked):
        // nothing to change, which is not an error.
        if self
            .transact_counting(board, post_id, shard, 1, vec![change, counter])
            .await?
            .is_none()
        {
            return Ok(None);
        }
        self.cache.shards.remove(&post_id.to_owned());
        let shards = self.read_shards(board, &[post_id], true).await?;
        let likes: i64 = shards.values().flatten().map(|c| c.likes).sum();
        Ok(Some(LikeState {
            liked,
            like_count: u64::try_from(likes).unwrap_or(0),
        }))
    }
}

#[async_trait]
impl Likes for DynamoStore {
    async fn like(&self, post_key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.set_like(post_key.board.as_str(), post_key.post.as_str(), member.as_str(), true)
            .await
    }

    async fn unlike(&self, post_key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.set_like(post_key.board.as_str(), post_key.post.as_str(), member.as_str(), false)
            .await
    }

    async fn has_liked(&self, post: &PostId, member: &MemberId) -> StoreResult<bool> {
        let (post, member) = (post.as_str(), member.as_str());
        Ok(self.get(key(likes_pk(post, member), like_sk(member))).await?.is_some())
    }
}
