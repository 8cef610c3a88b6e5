//! [`Votes`] on DynamoDB (docs/storage.md, Votes and best posts).
//!
//! A member's vote is one item (`LIKES#<post id>#<h>` / `MEMBER#<member id>`,
//! `vote` = `dislike` for a dislike, none for a like: every like item from
//! before v4 is a like), spread over the post's like partitions and indexed
//! under its member in `ByOwner` (`LIKE#<post id>`, so an account deletion
//! withdraws likes and dislikes alike). A guest's vote is one item beside
//! them (`GUEST#<address key>`), put once. Each change is one transaction:
//! the vote item, conditioned on the vote it replaces (read first; a change
//! in between starts over), and `ADD likes, dislikes` on the voter's counter
//! shard.
//!
//! Best posts: while a post is not best, its gate (`POST#<post id>` /
//! `GATE`, `net` = likes - dislikes) is in every vote's transaction too:
//! `ADD net` on the condition that the vote leaves `net` under `best_at`
//! (`net < best_at - delta`). The vote that would reach it fails that
//! condition, reads the gate again and runs the crossing transaction
//! instead: the gate set `best` on the condition that `net` is still what it
//! read, and the post item given `best_board` (the `Best` index's key),
//! with the vote and its count. Exactly one vote crosses; once the gate is
//! `best` (or `closed` by staff: [`crate::store::Posts::unbest`]) votes
//! leave it out, and a process that saw it done never reads it again, so a
//! hot best post keeps the sharded counters' throughput. A post's first
//! vote since v4 creates its gate from its counts, read consistently (no
//! vote commits while the gate is missing: each needs it or knows it done).

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::DynamoStore;
use super::attributes::{Item, from_item, key, n, s, text};
use super::items::{
    DISLIKE, GATE_SK, LIKE, POST_ON_BOARD, POST_SK, PostItem, guest_vote_sk, like_sk, likes_pk, owned_like_sk, post_pk,
    shard_key, shard_of,
};
use super::transact::{Race, failed_at, retry_races};
use crate::domain::{MemberId, PostId, PostKey, Tally, Vote, VoteChange, WriterKey};
use crate::store::{GuestVoted, StoreResult, Votes};

/// A post's gate as a vote read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    /// The post's first vote since v4: the gate is created first.
    Missing,
    Open {
        net: i64,
    },
    Best,
    /// Staff took the post out of the best posts: never best again.
    Closed,
}

/// A vote's own writes: its item, and what it adds to likes and dislikes
/// on the voter's shard.
struct VoteWrite<'a> {
    board: &'a str,
    post_id: &'a str,
    shard: u32,
    vote_item: TransactWriteItem,
    deltas: (i64, i64),
}

/// How a vote's transaction ended.
enum Counted {
    Done {
        best: bool,
    },
    NoSuchPost,
    /// The vote item is not as read (another change of the same voter).
    VoteChanged,
    /// The gate changed since it was read (another vote, or it is done):
    /// read it again after a short pause.
    GateChanged,
}

const GATE_STATE: &str = "state";
const GATE_BEST: &str = "best";
const GATE_CLOSED: &str = "closed";

fn gate_key(post_id: &str) -> Item {
    key(post_pk(post_id), GATE_SK.into())
}

/// The vote an item records.
fn vote_of(item: &Item) -> Vote {
    match text(item, "vote") {
        Some(DISLIKE) => Vote::Dislike,
        _ => Vote::Like,
    }
}

fn vote_name(vote: Vote) -> &'static str {
    match vote {
        Vote::Like => LIKE,
        Vote::Dislike => DISLIKE,
    }
}

/// The member's vote after `change`, when it differs from `current`.
fn after_change(current: Option<Vote>, change: VoteChange) -> Option<Option<Vote>> {
    let after = change.applied_to(current);
    (after != current).then_some(after)
}

use crate::domain::board::vote_deltas as deltas;
use crate::store::dynamo::transact::Condition;

/// The condition that a vote item still records `current`.
fn recorded(current: Option<Vote>) -> (&'static str, Vec<(&'static str, AttributeValue)>) {
    match current {
        None => ("attribute_not_exists(PK)", vec![]),
        Some(Vote::Like) => (
            "attribute_exists(PK) AND (attribute_not_exists(#vote) OR #vote = :was)",
            vec![(":was", s(LIKE))],
        ),
        Some(Vote::Dislike) => ("attribute_exists(PK) AND #vote = :was", vec![(":was", s(DISLIKE))]),
    }
}

impl DynamoStore {
    /// The transaction item that closes a post's gate for good (staff's unbest).
    pub(super) fn close_gate(&self, post_id: &str) -> StoreResult<TransactWriteItem> {
        let mut item = gate_key(post_id);
        item.insert(GATE_STATE.into(), s(GATE_CLOSED));
        self.overwrite(item)
    }

    fn gate_of(&self, post_id: &str, item: Option<&Item>) -> Gate {
        let Some(item) = item else { return Gate::Missing };
        let gate = match text(item, GATE_STATE) {
            Some(GATE_BEST) => Gate::Best,
            Some(GATE_CLOSED) => Gate::Closed,
            _ => {
                return Gate::Open {
                    net: item
                        .get("net")
                        .and_then(|v| v.as_n().ok())
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                };
            }
        };
        self.cache
            .gates_done
            .put_at(post_id.to_owned(), gate == Gate::Best, std::time::Instant::now());
        gate
    }

    /// The voter's item and the post's gate: one consistent BatchGetItem
    /// (the voter's item alone when this process knows the gate is done).
    async fn vote_and_gate(&self, post_id: &str, vote_key: &Item) -> StoreResult<(Option<Item>, Gate)> {
        if let Some(best) = self.cache.gates_done.get(&post_id.to_owned()) {
            let gate = if best { Gate::Best } else { Gate::Closed };
            return Ok((self.get(vote_key.clone()).await?, gate));
        }
        let gate_pk = post_pk(post_id);
        let items = self
            .batch_get(vec![vote_key.clone(), gate_key(post_id)], true, None)
            .await?;
        let (mut vote, mut gate) = (None, None);
        for item in items {
            if text(&item, "PK") == Some(gate_pk.as_str()) {
                gate = Some(item);
            } else {
                vote = Some(item);
            }
        }
        Ok((vote, self.gate_of(post_id, gate.as_ref())))
    }

    /// Creates the gate of a post that has none, its `net` from the post's
    /// counts read consistently, in one transaction with a check that the
    /// post is on `board`; false when it is not.
    async fn open_gate(&self, board: &str, post_id: &str) -> StoreResult<bool> {
        let post_key = key(post_pk(post_id), POST_SK.into());
        let ids = [post_id];
        let (post, shards) = tokio::try_join!(self.get(post_key.clone()), self.read_shards(board, &ids, true))?;
        let Some(post) = post.map(from_item::<PostItem>).transpose()? else {
            return Ok(false);
        };
        if post.summary.board != board {
            return Ok(false);
        }
        let counts = post.summary.legacy.counts() + shards.into_values().flatten().sum();
        let mut gate = gate_key(post_id);
        gate.insert("net".into(), n(counts.likes - counts.dislikes));
        let items = vec![
            self.check(post_key, POST_ON_BOARD, &[(":board", s(board))])?,
            self.put(gate, "attribute_not_exists(PK)")?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(super::transact::TxFailure::Conditions(failed)) => Ok(!failed_at(&failed, 0)),
            Err(super::transact::TxFailure::Store(e)) => Err(e),
        }
    }

    /// One vote's transaction: its vote item (item 0), its counts on its
    /// shard, and the gate as `gate` says (above).
    async fn count_vote(&self, write: VoteWrite<'_>, gate: Gate, best_at: Option<u32>) -> StoreResult<Counted> {
        let VoteWrite {
            board,
            post_id,
            shard,
            vote_item,
            deltas: (likes, dislikes),
        } = write;
        let net_delta = likes - dislikes;
        let counter = self.update(
            shard_key(board, post_id, shard),
            "ADD #likes :likes, #dislikes :dislikes",
            Some("attribute_exists(PK)"),
            &[("#likes", "likes"), ("#dislikes", "dislikes")],
            &[(":likes", n(likes)), (":dislikes", n(dislikes))],
        )?;
        let mut items = vec![vote_item, counter];
        let mut crossing = false;
        if let Gate::Open { net } = gate {
            let at = best_at.map(i64::from);
            if at.is_some_and(|at| net + net_delta >= at) {
                crossing = true;
                items.push(self.update(
                    gate_key(post_id),
                    "SET #state = :best, #net = :after",
                    Some("#net = :net AND attribute_not_exists(#state)"),
                    &[("#state", GATE_STATE), ("#net", "net")],
                    &[
                        (":best", s(GATE_BEST)),
                        (":after", n(net + net_delta)),
                        (":net", n(net)),
                    ],
                )?);
                items.push(self.update(
                    key(post_pk(post_id), POST_SK.into()),
                    "SET best_board = :board",
                    Some(POST_ON_BOARD),
                    &[],
                    &[(":board", s(board))],
                )?);
            } else if net_delta != 0 {
                let (condition, values) = match at {
                    Some(at) => (
                        "attribute_exists(PK) AND attribute_not_exists(#state) AND #net < :limit",
                        vec![(":delta", n(net_delta)), (":limit", n(at - net_delta))],
                    ),
                    None => (
                        "attribute_exists(PK) AND attribute_not_exists(#state)",
                        vec![(":delta", n(net_delta))],
                    ),
                };
                items.push(self.update(
                    gate_key(post_id),
                    "ADD #net :delta",
                    Some(condition),
                    &[("#state", GATE_STATE), ("#net", "net")],
                    &values,
                )?);
            }
        }
        Ok(match self.transact_counting(board, post_id, shard, 1, items).await? {
            None => Counted::NoSuchPost,
            Some(Ok(())) => {
                if crossing {
                    self.cache
                        .gates_done
                        .put_at(post_id.to_owned(), true, std::time::Instant::now());
                    self.cache.forget_post(post_id);
                    self.cache.pages.clear();
                }
                Counted::Done {
                    best: crossing || gate == Gate::Best,
                }
            }
            Some(Err(failed)) if failed_at(&failed, 0) => Counted::VoteChanged,
            Some(Err(_)) => Counted::GateChanged,
        })
    }

    /// The post's likes and dislikes, every shard read consistently (the
    /// answer includes the vote just made).
    async fn vote_tally(&self, board: &str, post_id: &str, mine: Option<Vote>, best: bool) -> StoreResult<Tally> {
        self.cache.shards.remove(&post_id.to_owned());
        let shards = self.read_shards(board, &[post_id], true).await?;
        let counts: super::items::Counts = shards.into_values().flatten().sum();
        Ok(Tally {
            like_count: u64::try_from(counts.likes).unwrap_or(0),
            dislike_count: u64::try_from(counts.dislikes).unwrap_or(0),
            mine,
            best,
        })
    }

    /// A change that changes nothing: the tally, `None` when there is no such post.
    async fn unchanged(
        &self,
        board: &str,
        post_id: &str,
        mine: Option<Vote>,
        gate: Gate,
    ) -> StoreResult<Option<Tally>> {
        let (post_board, tally) = tokio::try_join!(
            self.post_board(post_id),
            self.vote_tally(board, post_id, mine, gate == Gate::Best)
        )?;
        Ok(post_board.is_some_and(|b| b == board).then_some(tally))
    }

    /// One attempt of a vote: read, then the transaction; `Lost` or `Again`
    /// when something it read changed before the write.
    async fn member_vote_once(
        &self,
        board: &str,
        post_id: &str,
        member_id: &str,
        change: VoteChange,
        best_at: Option<u32>,
    ) -> StoreResult<Race<Option<Tally>, ()>> {
        let vote_key = key(likes_pk(post_id, member_id), like_sk(member_id));
        let (item, gate) = self.vote_and_gate(post_id, &vote_key).await?;
        let current = item.as_ref().map(vote_of);
        let Some(after) = after_change(current, change) else {
            return Ok(Race::Done(self.unchanged(board, post_id, current, gate).await?));
        };
        if gate == Gate::Missing {
            return Ok(match self.open_gate(board, post_id).await? {
                true => Race::Again(()),
                false => Race::Done(None),
            });
        }
        let (condition, values) = recorded(current);
        let names = [("#vote", "vote")];
        let names: &[(&str, &str)] = if current.is_some() { &names } else { &[] };
        let vote_item = match after {
            None => self.delete(vote_key, Condition::new(condition).names(names).values(&values))?,
            Some(vote) => {
                let mut item = vote_key;
                item.insert("board".into(), s(board));
                item.insert("owner".into(), s(member_id));
                item.insert("owner_sk".into(), s(owned_like_sk(post_id)));
                if vote == Vote::Dislike {
                    item.insert("vote".into(), s(DISLIKE));
                }
                self.put(item, Condition::new(condition).names(names).values(&values))?
            }
        };
        let shard = shard_of(member_id, self.layout.counter_shards);
        let deltas = deltas(current, after);
        Ok(
            match self
                .count_vote(
                    VoteWrite {
                        board,
                        post_id,
                        shard,
                        vote_item,
                        deltas,
                    },
                    gate,
                    best_at,
                )
                .await?
            {
                Counted::Done { best } => Race::Done(Some(self.vote_tally(board, post_id, after, best).await?)),
                Counted::NoSuchPost => Race::Done(None),
                Counted::VoteChanged => Race::Lost(()),
                Counted::GateChanged => Race::Lost(()),
            },
        )
    }

    async fn guest_vote_once(
        &self,
        board: &str,
        post_id: &str,
        voter: &str,
        vote: Vote,
        best_at: Option<u32>,
    ) -> StoreResult<Race<GuestVoted, ()>> {
        let vote_key = key(likes_pk(post_id, voter), guest_vote_sk(voter));
        let (item, gate) = self.vote_and_gate(post_id, &vote_key).await?;
        if item.is_some() {
            return Ok(Race::Done(match self.post_board(post_id).await? {
                Some(b) if b == board => GuestVoted::AlreadyVoted,
                _ => GuestVoted::NoSuchPost,
            }));
        }
        if gate == Gate::Missing {
            return Ok(match self.open_gate(board, post_id).await? {
                true => Race::Again(()),
                false => Race::Done(GuestVoted::NoSuchPost),
            });
        }
        let mut item = vote_key;
        item.insert("board".into(), s(board));
        item.insert("vote".into(), s(vote_name(vote)));
        let vote_item = self.put(item, "attribute_not_exists(PK)")?;
        let write = VoteWrite {
            board,
            post_id,
            shard: shard_of(voter, self.layout.counter_shards),
            vote_item,
            deltas: deltas(None, Some(vote)),
        };
        Ok(match self.count_vote(write, gate, best_at).await? {
            Counted::Done { best } => Race::Done(GuestVoted::Counted(
                self.vote_tally(board, post_id, Some(vote), best).await?,
            )),
            Counted::NoSuchPost => Race::Done(GuestVoted::NoSuchPost),
            // Put by a request racing this one: it counted.
            Counted::VoteChanged => Race::Done(GuestVoted::AlreadyVoted),
            Counted::GateChanged => Race::Lost(()),
        })
    }
}

#[async_trait]
impl Votes for DynamoStore {
    async fn vote(
        &self,
        key: &PostKey,
        member: &MemberId,
        change: VoteChange,
        best_at: Option<u32>,
    ) -> StoreResult<Option<Tally>> {
        let (board, post_id, member_id) = (key.board.as_str(), key.post.as_str(), member.as_str());
        retry_races("a vote kept losing races with other votes", (), |()| {
            self.member_vote_once(board, post_id, member_id, change, best_at)
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
        let (board, post_id) = (key.board.as_str(), key.post.as_str());
        retry_races("a vote kept losing races with other votes", (), |()| {
            self.guest_vote_once(board, post_id, voter.as_str(), vote, best_at)
        })
        .await
    }

    /// One consistent GetItem of the member's vote item.
    async fn member_vote(&self, post: &PostId, member: &MemberId) -> StoreResult<Option<Vote>> {
        let (post, member) = (post.as_str(), member.as_str());
        let item = self.get(key(likes_pk(post, member), like_sk(member))).await?;
        Ok(item.as_ref().map(vote_of))
    }

    async fn has_liked(&self, post: &PostId, member: &MemberId) -> StoreResult<bool> {
        Ok(self.member_vote(post, member).await? == Some(Vote::Like))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_says_the_vote_after_it_only_when_it_changes_something() {
        use Vote::{Dislike, Like};
        assert_eq!(after_change(None, VoteChange::Like), Some(Some(Like)));
        assert_eq!(after_change(Some(Like), VoteChange::Like), None);
        assert_eq!(after_change(Some(Like), VoteChange::Dislike), Some(Some(Dislike)));
        assert_eq!(after_change(Some(Like), VoteChange::Undislike), None);
        assert_eq!(after_change(Some(Dislike), VoteChange::Unlike), None);
        assert_eq!(after_change(Some(Dislike), VoteChange::Withdraw), Some(None));
        assert_eq!(after_change(None, VoteChange::Withdraw), None);
        assert_eq!(deltas(Some(Like), Some(Dislike)), (-1, 1));
        assert_eq!(deltas(None, Some(Like)), (1, 0));
        assert_eq!(deltas(Some(Dislike), None), (0, -1));
    }

    #[test]
    fn a_like_item_from_before_v4_is_a_like() {
        let item = key("LIKES#P#1".into(), "MEMBER#M".into());
        assert_eq!(vote_of(&item), Vote::Like);
        let mut disliked = item.clone();
        disliked.insert("vote".into(), s(DISLIKE));
        assert_eq!(vote_of(&disliked), Vote::Dislike);
    }
}
