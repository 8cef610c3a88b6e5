//! [`Votes`] on SQLite: the `likes` table, each change counted on its post
//! in the same transaction.

use async_trait::async_trait;
use rusqlite::{Connection, TransactionBehavior, params};

use super::rows::{count, post_exists};
use super::{SqliteStore, sql_error};
use crate::domain::{MemberId, PostId, PostKey, Tally, Vote, VoteChange, WriterKey};
use crate::store::{GuestVoted, StoreError, StoreResult, Votes};

fn like_count(conn: &Connection, post_id: &str) -> StoreResult<u64> {
    conn.query_row("SELECT like_count FROM posts WHERE id = ?1", [post_id], |row| {
        count(row, 0)
    })
    .map_err(sql_error)
}

#[async_trait]
impl Votes for SqliteStore {
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
        let (post_id, member_id) = (post.as_str().to_owned(), member.as_str().to_owned());
        self.read(move |conn| {
            conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM likes WHERE post_id = ?1 AND member_id = ?2)",
                params![post_id, member_id],
                |row| row.get(0),
            )
            .map_err(sql_error)
        })
        .await
    }
}

impl SqliteStore {
    async fn set_like(&self, board: &str, post_id: &str, member_id: &str, liked: bool) -> StoreResult<Option<Tally>> {
        let (board, post_id, member_id) = (board.to_owned(), post_id.to_owned(), member_id.to_owned());
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            if !post_exists(&tx, &board, &post_id)? {
                return Ok(None);
            }
            let (change, delta) = if liked {
                (
                    "INSERT OR IGNORE INTO likes (post_id, member_id) VALUES (?1, ?2)",
                    "+ 1",
                )
            } else {
                ("DELETE FROM likes WHERE post_id = ?1 AND member_id = ?2", "- 1")
            };
            if tx.execute(change, params![post_id, member_id]).map_err(sql_error)? == 1 {
                tx.execute(
                    &format!("UPDATE posts SET like_count = like_count {delta} WHERE id = ?1"),
                    [&post_id],
                )
                .map_err(sql_error)?;
            }
            let like_count = like_count(&tx, &post_id)?;
            tx.commit().map_err(sql_error)?;
            Ok(Some(Tally {
                like_count,
                dislike_count: 0,
                mine: liked.then_some(Vote::Like),
                best: false,
            }))
        })
        .await
    }
}
