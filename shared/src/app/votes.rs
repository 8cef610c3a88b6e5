//! Votes (docs/API.md, Votes and best posts): members like or
//! dislike (the two exclude each other), guests vote once per post per
//! address key; the vote that first brings a post's score to its board's
//! `best_likes` makes it best, in the same write.

use crate::domain::{Author, BoardSettings, DislikePolicy, PostKey, Vote, VoteChange, VoteState};
use crate::error::ApiError;
use crate::store::GuestVoted;

use super::{App, ClientAddress, SignedIn, throttle};

fn dislikes_off() -> ApiError {
    ApiError::Forbidden("dislikes are off on this board".into())
}

fn own_post() -> ApiError {
    ApiError::Forbidden("you cannot vote on your own post".into())
}

impl App {
    /// Whether the caller sees the board's dislike counts: everyone where
    /// they are shown, its staff where they are hidden, nobody where off.
    pub async fn dislikes_visible(&self, board: &BoardSettings, caller: Option<&SignedIn>) -> Result<bool, ApiError> {
        Ok(match board.dislikes {
            DislikePolicy::Shown => true,
            DislikePolicy::Off => false,
            DislikePolicy::Hidden => match caller {
                Some(member) => self.is_staff(&board.slug, member).await?,
                None => false,
            },
        })
    }

    /// A member's like or dislike, or its withdrawal: idempotent, and a
    /// like withdraws a dislike (and the reverse) in the same write. Not on
    /// the member's own post; dislikes not where the board has them off.
    pub async fn member_vote(
        &self,
        member: &SignedIn,
        client: &ClientAddress,
        key: &PostKey,
        change: VoteChange,
    ) -> Result<VoteState, ApiError> {
        let board = self.board_settings(key.board.as_str()).await?;
        if matches!(change, VoteChange::Dislike | VoteChange::Undislike) && board.dislikes == DislikePolicy::Off {
            return Err(dislikes_off());
        }
        self.require_not_banned(&key.board, client, Some(member)).await?;
        let guard = self.require_post(key).await?;
        if matches!(&guard.author, Author::Member { member_id, .. } if member_id == member.id.as_str()) {
            return Err(own_post());
        }
        let tally = self
            .store
            .vote(key, &member.id, change, board.best_likes)
            .await?
            .ok_or_else(|| self.not_found_post())?;
        let visible = self.dislikes_visible(&board, Some(member)).await?;
        Ok(VoteState::of(&tally, visible))
    }

    /// A guest's vote: once per post per IPv6 /48 or IPv4 address, never
    /// withdrawn (`409 already_voted`), under its own quota, not where the
    /// board takes no guest writes, and not on a post written from the same
    /// /48 or address (a guest's own). A /64 is one subscriber, but one /48
    /// holds 65,536 of them: counted per /64, the audit pushed its own post
    /// to the best posts with 11 likes in 0.03 s.
    pub async fn guest_vote(
        &self,
        client: &ClientAddress,
        key: &PostKey,
        vote: Vote,
        pow: Option<&str>,
    ) -> Result<VoteState, ApiError> {
        let board = self.board_settings(key.board.as_str()).await?;
        if !board.guest_writes {
            return Err(guests_cannot_write());
        }
        if vote == Vote::Dislike && board.dislikes == DislikePolicy::Off {
            return Err(dislikes_off());
        }
        let writer = self.require_not_banned(&key.board, client, None).await?;
        let counted = self
            .require_pow(super::pow::AnonymousWrite {
                client,
                board: Some(&key.board),
                proof: pow,
            })
            .await?;
        let keys = throttle::guest_vote_keys(&self.limits, &client.0);
        let reservation = throttle::reserve_after(&*self.store, &keys, throttle::Refusal::RateLimited, counted).await?;
        let voted = async {
            let guard = self.require_post(key).await?;
            // IPv6 keys are /64s (`2001:db8:1:2::/64`): the voter is the /48.
            let (voter, own) = if client.0.contains(':') {
                (&writer.range, guard.writer_range.as_ref() == Some(&writer.range))
            } else {
                (&writer.key, guard.writer.as_ref() == Some(&writer.key))
            };
            if own {
                return Err(own_post());
            }
            match self.store.guest_vote(key, voter, vote, board.best_likes).await? {
                GuestVoted::Counted(tally) => Ok(tally),
                GuestVoted::AlreadyVoted => Err(ApiError::AlreadyVoted),
                GuestVoted::NoSuchPost => Err(self.not_found_post()),
            }
        }
        .await;
        match voted {
            Ok(tally) => Ok(VoteState::of(&tally, board.dislikes == DislikePolicy::Shown)),
            Err(refused) => {
                // Only a vote counted stays counted against the quota.
                throttle::forgive(&*self.store, reservation).await;
                Err(refused)
            }
        }
    }
}

/// `guest_writes` false (docs/API.md, Boards).
pub(crate) fn guests_cannot_write() -> ApiError {
    ApiError::Forbidden("guests cannot write on this board".into())
}
