//! Report 1's mix of thread groups, and its readers alone as a baseline.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::RngExt as _;

use super::actions::{guest_write, like_toggle, member_login, member_write, read_post, report};
use super::votes::Voting;
use super::{Api, Seed, pick, users};

/// How the users of a scenario pace themselves between requests.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Pacing {
    /// Think after every request, uniformly between half and one and a half
    /// times the mean (JMeter's Uniform Random Timer), starting at a random
    /// offset: the report's users, whose offered load stays put however
    /// slow the server gets (up to their own wait).
    Think { mean: Duration },
    /// No pause: a closed loop that offers as much as the server answers.
    Closed,
}

impl Pacing {
    async fn pause(self, deadline: Instant) {
        if let Pacing::Think { mean } = self {
            let pause = mean.mul_f64(rand::rng().random_range(0.5..1.5));
            tokio::time::sleep_until((Instant::now() + pause).min(deadline).into()).await;
        }
    }

    async fn stagger(self, deadline: Instant) {
        if let Pacing::Think { mean } = self {
            let offset = mean.mul_f64(rand::rng().random_range(0.0..1.0));
            tokio::time::sleep_until((Instant::now() + offset).min(deadline).into()).await;
        }
    }
}

/// Report 1's thread groups: TG1 readers 50%, TG2 members logging in and
/// writing 20%, TG3 guests writing 20%, TG4 likers 10%.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Groups {
    pub readers: usize,
    pub members: usize,
    pub guests: usize,
    pub likers: usize,
}

impl Groups {
    pub(crate) fn of(users: usize) -> Self {
        let (readers, members, guests) = (users / 2, users / 5, users / 5);
        Groups {
            readers,
            members,
            guests,
            likers: users - readers - members - guests,
        }
    }

    /// Member accounts the scenario needs: one per member and per liker, so
    /// that no two users share an account (as no two real people do).
    pub(crate) fn accounts(self) -> usize {
        (self.members + self.likers).max(1)
    }
}

/// What the mix adds to report 1's thread groups.
#[derive(Clone, Default)]
pub(crate) struct Extras {
    /// mixed-moderated: this share of every group's requests are reports.
    pub report_share: f64,
    /// mixed-votes: the likers vote as version 4's voters do instead of
    /// toggling a like: the first half (rounded up) as members, the rest
    /// as guests.
    pub voting: Option<Arc<Voting>>,
}

/// Report 1's mix as its thread groups ran it: readers read a random post;
/// each member logs into its own account, then posts or comments; guests
/// post or comment; likers toggle a like with their own account. With
/// `many_ips` each user has an address of its own.
pub(crate) async fn mixed(
    api: Api,
    seed: Arc<Seed>,
    groups: Groups,
    pacing: Pacing,
    seconds: u64,
    many_ips: bool,
    extras: Extras,
) {
    let Extras { report_share, voting } = extras;
    let member_voters = groups.likers - groups.likers / 2;
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let total = groups.readers + groups.members + groups.guests + groups.likers;
    users(total, deadline, |u| {
        let api = if many_ips { api.as_user_ip(u) } else { api.clone() };
        let (seed, voting) = (seed.clone(), voting.clone());
        async move {
            pacing.stagger(deadline).await;
            let member = u.checked_sub(groups.readers).filter(|&m| m < groups.members);
            let guest = u
                .checked_sub(groups.readers + groups.members)
                .filter(|&g| g < groups.guests);
            let liker = u.checked_sub(groups.readers + groups.members + groups.guests);
            while Instant::now() < deadline {
                let post = pick(&seed.posts).to_owned();
                // mixed-moderated: this share of every group's requests are reports.
                if report_share > 0.0 && rand::rng().random_bool(report_share) {
                    report(&api, &post).await;
                    pacing.pause(deadline).await;
                    continue;
                }
                if let Some(m) = member {
                    let username = &seed.usernames[m % seed.usernames.len()];
                    if let Some(token) = member_login(&api, username).await {
                        pacing.pause(deadline).await;
                        if Instant::now() >= deadline {
                            break;
                        }
                        member_write(&api, &token, &post).await;
                    }
                } else if guest.is_some() {
                    guest_write(&api, &post).await;
                } else if let Some(l) = liker {
                    let token = &seed.tokens[(groups.members + l) % seed.tokens.len()];
                    match &voting {
                        None => like_toggle(&api, token, &post).await,
                        Some(voting) => {
                            let post = &seed.posts[voting.popular()];
                            if l < member_voters {
                                voting.member_vote(&api, l, token, post).await;
                            } else {
                                voting.guest_vote(&api, post).await;
                            }
                        }
                    }
                } else {
                    read_post(&api, &post).await;
                }
                pacing.pause(deadline).await;
            }
        }
    })
    .await;
}

/// `mixed-reads`: reads only (report 1's readers alone): the baseline for the read P99
/// under `mixed`, at the same pacing.
pub(crate) async fn mixed_reads(api: Api, seed: Arc<Seed>, n: usize, pacing: Pacing, seconds: u64) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    users(n, deadline, |_| {
        let (api, seed) = (api.clone(), seed.clone());
        async move {
            pacing.stagger(deadline).await;
            while Instant::now() < deadline {
                read_post(&api, pick(&seed.posts)).await;
                pacing.pause(deadline).await;
            }
        }
    })
    .await;
}
