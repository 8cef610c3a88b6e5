//! [`Votes`] on SQLite: a member's vote is their row of `likes` (its
//! `vote` says like or dislike), a guest's a row of `guest_votes`; each
//! change is counted on its post, and marks the post best when its score
//! reaches the board's `best_likes`, in the same transaction.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::rows::{BEST, post_exists};
use super::{SqliteStore, sql_error};
use crate::domain::{MemberId, PostId, PostKey, Tally, Vote, VoteChange, WriterKey};
use crate::store::{GuestVoted, StoreResult, Votes};

fn vote_name(vote: Vote) -> &'static str {
    match vote {
        Vote::Like => "like",
        Vote::Dislike => "dislike",
    }
}

fn vote_of(name: &str) -> Vote {
    if name == "dislike" { Vote::Dislike } else { Vote::Like }
}

/// What a member's vote becomes: the change asked of the vote they have.
fn after(change: VoteChange, before: Option<Vote>) -> Option<Vote> {
    change.applied_to(before)
}

use crate::domain::board::vote_deltas as deltas;

/// Counts the deltas on the post and marks it best if its score now
/// reaches `best_at` (and staff never took it out): the post's tally.
fn count(
    tx: &Transaction<'_>,
    post_id: &str,
    (likes, dislikes): (i64, i64),
    best_at: Option<u32>,
) -> StoreResult<Tally> {
    if likes != 0 || dislikes != 0 {
        tx.execute(
            "UPDATE posts SET like_count = like_count + ?2, dislike_count = dislike_count + ?3 WHERE id = ?1",
            params![post_id, likes, dislikes],
        )
        .map_err(sql_error)?;
    }
    if let Some(at) = best_at {
        tx.execute(
            "UPDATE posts SET best = ?3 WHERE id = ?1 AND best = 0 AND like_count - dislike_count >= ?2",
            params![post_id, i64::from(at), BEST],
        )
        .map_err(sql_error)?;
    }
    tx.query_row(
        "SELECT like_count, dislike_count, best FROM posts WHERE id = ?1",
        [post_id],
        |row| {
            Ok(Tally {
                like_count: u64::try_from(row.get::<_, i64>(0)?).unwrap_or(0),
                dislike_count: u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                mine: None,
                best: row.get::<_, i64>(2)? == BEST,
            })
        },
    )
    .map_err(sql_error)
}

#[async_trait]
impl Votes for SqliteStore {
    async fn vote(
        &self,
        key: &PostKey,
        member: &MemberId,
        change: VoteChange,
        best_at: Option<u32>,
    ) -> StoreResult<Option<Tally>> {
        let (board, post_id, member_id) = (
            key.board.as_str().to_owned(),
            key.post.as_str().to_owned(),
            member.as_str().to_owned(),
        );
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            if !post_exists(&tx, &board, &post_id)? {
                return Ok(None);
            }
            let before: Option<Vote> = tx
                .query_row(
                    "SELECT vote FROM likes WHERE post_id = ?1 AND member_id = ?2",
                    params![post_id, member_id],
                    |row| row.get::<_, String>(0),
                )
                .optional()
                .map_err(sql_error)?
                .map(|name| vote_of(&name));
            let now = after(change, before);
            if now != before {
                match now {
                    Some(vote) => tx.execute(
                        "INSERT INTO likes (post_id, member_id, vote) VALUES (?1, ?2, ?3)
                         ON CONFLICT (post_id, member_id) DO UPDATE SET vote = excluded.vote",
                        params![post_id, member_id, vote_name(vote)],
                    ),
                    None => tx.execute(
                        "DELETE FROM likes WHERE post_id = ?1 AND member_id = ?2",
                        params![post_id, member_id],
                    ),
                }
                .map_err(sql_error)?;
            }
            let tally = count(&tx, &post_id, deltas(before, now), best_at)?;
            tx.commit().map_err(sql_error)?;
            Ok(Some(Tally { mine: now, ..tally }))
        })
        .await
    }

    async fn guest_vote(
        &self,
        key: &PostKey,
        voter: &WriterKey,
        vote: Vote,
        best_at: Option<u32>,
    ) -> StoreResult<GuestVoted> {
        let (board, post_id, voter) = (
            key.board.as_str().to_owned(),
            key.post.as_str().to_owned(),
            voter.as_str().to_owned(),
        );
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            if !post_exists(&tx, &board, &post_id)? {
                return Ok(GuestVoted::NoSuchPost);
            }
            let counted = tx
                .execute(
                    "INSERT INTO guest_votes (post_id, voter, vote) VALUES (?1, ?2, ?3)
                     ON CONFLICT (post_id, voter) DO NOTHING",
                    params![post_id, voter, vote_name(vote)],
                )
                .map_err(sql_error)?;
            if counted == 0 {
                return Ok(GuestVoted::AlreadyVoted);
            }
            let tally = count(&tx, &post_id, deltas(None, Some(vote)), best_at)?;
            tx.commit().map_err(sql_error)?;
            Ok(GuestVoted::Counted(Tally {
                mine: Some(vote),
                ..tally
            }))
        })
        .await
    }

    async fn member_vote(&self, post: &PostId, member: &MemberId) -> StoreResult<Option<Vote>> {
        let (post_id, member_id) = (post.as_str().to_owned(), member.as_str().to_owned());
        let vote: Option<String> = self
            .read(move |conn| {
                conn.query_row(
                    "SELECT vote FROM likes WHERE post_id = ?1 AND member_id = ?2",
                    params![post_id, member_id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(sql_error)
            })
            .await?;
        Ok(vote.map(|name| vote_of(&name)))
    }

    async fn has_liked(&self, post: &PostId, member: &MemberId) -> StoreResult<bool> {
        Ok(self.member_vote(post, member).await? == Some(Vote::Like))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_like_and_a_dislike_exclude_each_other() {
        use Vote::{Dislike, Like};
        assert_eq!(after(VoteChange::Dislike, Some(Like)), Some(Dislike));
        assert_eq!(deltas(Some(Like), Some(Dislike)), (-1, 1));
        assert_eq!(after(VoteChange::Unlike, Some(Dislike)), Some(Dislike));
        assert_eq!(after(VoteChange::Undislike, Some(Dislike)), None);
        assert_eq!(after(VoteChange::Withdraw, Some(Dislike)), None);
        assert_eq!(deltas(Some(Like), Some(Like)), (0, 0));
    }
}
