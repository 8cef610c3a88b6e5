//! [`Likes`] on SQLite: the `likes` table, each change counted on its post
//! in the same transaction.

use async_trait::async_trait;
use rusqlite::{Connection, TransactionBehavior, params};

use super::rows::{count, post_exists};
use super::{SqliteStore, sql_error};
use crate::domain::{LikeState, MemberId, PostId, PostKey};
use crate::store::{Likes, StoreResult};

fn like_count(conn: &Connection, post_id: &str) -> StoreResult<u64> {
    conn.query_row("SELECT like_count FROM posts WHERE id = ?1", [post_id], |row| {
        count(row, 0)
    })
    .map_err(sql_error)
}

#[async_trait]
impl Likes for SqliteStore {
    async fn like(&self, key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.set_like(key.board.as_str(), key.post.as_str(), member.as_str(), true)
            .await
    }

    async fn unlike(&self, key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.set_like(key.board.as_str(), key.post.as_str(), member.as_str(), false)
            .await
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
    async fn set_like(
        &self,
        board: &str,
        post_id: &str,
        member_id: &str,
        liked: bool,
    ) -> StoreResult<Option<LikeState>> {
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
            Ok(Some(LikeState { liked, like_count }))
        })
        .await
    }
}
