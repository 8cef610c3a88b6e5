//! [`Votes`] on DynamoDB: a like item per member, spread over the post's
//! like partitions, and its count on the member's counter shard, changed
//! together in one transaction. A like item names its post's board
//! and is indexed under its member in `ByOwner` (`LIKE#<post id>`), so an
//! account deletion finds a member's likes and withdraws each by its post's key.

use async_trait::async_trait;

use super::DynamoStore;
use super::attributes::{key, s};
use super::items::{like_sk, likes_pk, owned_like_sk, shard_of};
use crate::domain::{MemberId, PostId, PostKey, Tally, Vote, VoteChange, WriterKey};
use crate::store::{GuestVoted, StoreError, StoreResult, Votes};

impl DynamoStore {
    /// Likes or unlikes: the like item and its count on the member's shard
    /// in one transaction; then the post's likes, read consistently from
    /// every shard (a like's answer includes itself).
    async fn set_like(&self, board: &str, post_id: &str, member_id: &str, liked: bool) -> StoreResult<Option<Tally>> {
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
        Ok(Some(Tally {
            like_count: u64::try_from(likes).unwrap_or(0),
            dislike_count: 0,
            mine: liked.then_some(Vote::Like),
            best: false,
        }))
    }
}

#[async_trait]
impl Votes for DynamoStore {
    async fn vote(
        &self,
        key: &PostKey,
        member: &MemberId,
        change: VoteChange,
        _best_at: Option<u32>,
    ) -> StoreResult<Option<Tally>> {
        let liked = match change {
            VoteChange::Like => true,
            VoteChange::Unlike | VoteChange::Withdraw => false,
            VoteChange::Dislike | VoteChange::Undislike => {
                return Err(StoreError::Internal("dislikes: not built yet".into()));
            }
        };
        self.set_like(key.board.as_str(), key.post.as_str(), member.as_str(), liked)
            .await
    }

    async fn guest_vote(
        &self,
        _key: &PostKey,
        _voter: &WriterKey,
        _vote: Vote,
        _best_at: Option<u32>,
    ) -> StoreResult<GuestVoted> {
        Err(StoreError::Internal("guest votes: not built yet".into()))
    }

    async fn member_vote(&self, post: &PostId, member: &MemberId) -> StoreResult<Option<Vote>> {
        Ok(self.has_liked(post, member).await?.then_some(Vote::Like))
    }

    async fn has_liked(&self, post: &PostId, member: &MemberId) -> StoreResult<bool> {
        let (post, member) = (post.as_str(), member.as_str());
        Ok(self.get(key(likes_pk(post, member), like_sk(member))).await?.is_some())
    }
}
