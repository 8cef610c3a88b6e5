//! Version 4's voters (`mixed-votes`): members who like, dislike and
//! withdraw, guests who vote once per post from many addresses, votes
//! drawn to a few popular posts so that some cross the board's
//! `best_likes` during the run; and the check after it that every seeded
//! post's counts and best mark are what the answers said.

use std::collections::HashMap;
use std::sync::Mutex;

use rand::RngExt as _;
use reqwest::Method;
use serde_json::{Value, json};

use super::Api;
use super::api::Call;
use crate::metrics::VoteCheck;

/// The board's default `best_likes` (`free` is seeded with it).
pub(crate) const BEST_LIKES: i64 = 10;
/// Addresses the guest votes come from (`X-Forwarded-For`): few enough
/// that a popular post meets an address that voted on it before (`409
/// already_voted`, normal traffic), many enough that most votes count.
const GUEST_ADDRESSES: u32 = 128;
/// A guest vote is a like this often, else a dislike.
const GUEST_LIKE_SHARE: f64 = 0.75;

/// What a member's vote request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemberVote {
    Like,
    Unlike,
    Dislike,
    Undislike,
}

impl MemberVote {
    /// Mostly likes, then withdrawals, then dislikes: a member changes
    /// their mind as often as they vote.
    fn draw() -> Self {
        match rand::rng().random_range(0..100) {
            0..40 => MemberVote::Like,
            40..65 => MemberVote::Unlike,
            65..85 => MemberVote::Dislike,
            _ => MemberVote::Undislike,
        }
    }

    fn request(self) -> (&'static str, Method, &'static str) {
        match self {
            MemberVote::Like => ("like", Method::PUT, "like"),
            MemberVote::Unlike => ("like", Method::DELETE, "like"),
            MemberVote::Dislike => ("dislike", Method::PUT, "dislike"),
            MemberVote::Undislike => ("dislike", Method::DELETE, "dislike"),
        }
    }
}

/// A member's vote on a post, as their last answer left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    Like,
    Dislike,
}

/// What the answers say each post's votes are.
#[derive(Default, Debug)]
struct PostVotes {
    /// Per member (the voter's index): their vote after their last answer.
    members: HashMap<usize, Option<Held>>,
    guest_likes: i64,
    guest_dislikes: i64,
    /// A vote went unanswered (or answered an error): its effect is unknown.
    unsure: bool,
}

impl PostVotes {
    fn counts(&self) -> (i64, i64) {
        let held = |want| self.members.values().filter(|v| **v == Some(want)).count() as i64;
        (
            held(Held::Like) + self.guest_likes,
            held(Held::Dislike) + self.guest_dislikes,
        )
    }
}

/// Who votes how, and what their answers said.
pub(crate) struct Voting {
    /// Cumulative weights of the seeded posts: the k-th (from 1) drawn with
    /// weight 1/k^1.5 (the first 43% of the time over 50 posts), as
    /// attention on a board goes to a few posts; steep enough that a run of
    /// a minute takes a post or two across `best_likes`.
    cumulative: Vec<f64>,
    tally: Mutex<HashMap<String, PostVotes>>,
}

impl Voting {
    pub(crate) fn new(posts: usize) -> Self {
        let cumulative = (1..=posts)
            .scan(0.0, |sum, k| {
                *sum += (k as f64).powf(-1.5);
                Some(*sum)
            })
            .collect();
        Voting {
            cumulative,
            tally: Mutex::default(),
        }
    }

    /// A seeded post's index, popular ones far more often.
    pub(crate) fn popular(&self) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let drawn = rand::rng().random_range(0.0..total.max(f64::MIN_POSITIVE));
        self.cumulative
            .partition_point(|&c| c <= drawn)
            .min(self.cumulative.len().saturating_sub(1))
    }

    /// A member's like, dislike or withdrawal (`200` vote state); the answer's
    /// `liked`/`disliked` is what the member now holds.
    pub(crate) async fn member_vote(&self, api: &Api, member: usize, token: &str, post: &str) {
        let (endpoint, method, route) = MemberVote::draw().request();
        let answer = api
            .call(Call {
                endpoint,
                method,
                path: format!("/boards/free/posts/{post}/{route}"),
                token: Some(token),
                body: None,
                forwarded_for: None,
                expected: &[200],
            })
            .await;
        let mut tally = self.tally.lock().unwrap();
        let votes = tally.entry(post.to_owned()).or_default();
        match answer {
            Some((200, state)) => {
                let held = if state["liked"] == true {
                    Some(Held::Like)
                } else if state["disliked"] == true {
                    Some(Held::Dislike)
                } else {
                    None
                };
                votes.members.insert(member, held);
            }
            _ => votes.unsure = true,
        }
    }

    /// A guest's vote from one of [`GUEST_ADDRESSES`]: `200` counted it, `409
    /// already_voted` says that address had voted on the post before.
    pub(crate) async fn guest_vote(&self, api: &Api, post: &str) {
        let address = rand::rng().random_range(0..GUEST_ADDRESSES);
        let like = rand::rng().random_bool(GUEST_LIKE_SHARE);
        let answer = api
            .call(Call {
                endpoint: "guest vote",
                method: Method::POST,
                path: format!("/boards/free/posts/{post}/votes/guest"),
                token: None,
                body: Some(json!({"vote": if like { "like" } else { "dislike" }})),
                forwarded_for: Some(format!("10.251.{}.{}", address >> 8, address & 255)),
                expected: &[200, 409],
            })
            .await;
        let mut tally = self.tally.lock().unwrap();
        let votes = tally.entry(post.to_owned()).or_default();
        match answer {
            Some((200, _)) if like => votes.guest_likes += 1,
            Some((200, _)) => votes.guest_dislikes += 1,
            Some((409, _)) => {}
            _ => votes.unsure = true,
        }
    }

    /// After the run: every voted post's counts and best mark as the
    /// server reads them, against what the answers said. One line per
    /// finding for the report.
    pub(crate) async fn check(&self, base: &str, posts: &[String]) -> anyhow::Result<VoteCheck> {
        let http = reqwest::Client::new();
        let mut check = VoteCheck::default();
        let tally = std::mem::take(&mut *self.tally.lock().unwrap());
        for post in posts {
            let Some(votes) = tally.get(post) else { continue };
            let detail: Value = http
                .get(format!("{base}/boards/free/posts/{post}"))
                .send()
                .await?
                .json()
                .await?;
            let read = (
                detail["like_count"].as_i64().unwrap_or(-1),
                detail["dislike_count"].as_i64().unwrap_or(-1),
            );
            let best = detail["best"] == true;
            let (likes, dislikes) = votes.counts();
            check.posts_voted += 1;
            check.best += u64::from(best);
            if votes.unsure {
                check.unsure += 1;
                continue;
            }
            if read != (likes, dislikes) {
                check.findings.push(format!(
                    "post {post}: the answers say {likes} likes and {dislikes} dislikes, the detail reads {} and {}",
                    read.0, read.1
                ));
            }
            // Best stays best once crossed; a post whose final tally is at
            // the line crossed it on some vote.
            if likes - dislikes >= BEST_LIKES && !best {
                check.findings.push(format!(
                    "post {post}: {likes} likes - {dislikes} dislikes reaches best_likes {BEST_LIKES} but it is not best"
                ));
            }
        }
        Ok(check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn popular_posts_draw_most_votes_and_every_post_can_be_drawn() {
        let voting = Voting::new(50);
        let mut drawn = [0u32; 50];
        for _ in 0..100_000 {
            drawn[voting.popular()] += 1;
        }
        // Weight 1/k^1.5 over 50 posts: the first 42.9%, the fifth 3.8%, the last 0.12%.
        assert!((41_000..44_800).contains(&drawn[0]), "{drawn:?}");
        assert!(drawn[0] > drawn[4] * 8 && drawn[4] > drawn[49] * 10, "{drawn:?}");
        assert!(drawn.iter().all(|&n| n > 0), "{drawn:?}");
    }

    #[test]
    fn a_post_counts_each_members_last_vote_and_every_counted_guest_vote() {
        let mut votes = PostVotes::default();
        votes.members.insert(0, Some(Held::Like));
        votes.members.insert(1, Some(Held::Dislike));
        votes.members.insert(2, None);
        votes.members.insert(0, Some(Held::Dislike));
        votes.guest_likes = 3;
        assert_eq!(votes.counts(), (3, 2));
    }
}
