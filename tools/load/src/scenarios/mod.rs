//! The scenarios of the field reports. Each runs for a bounded time and
//! records every request under an endpoint name with the statuses it expects.
//! Shared here: the passwords, picking an item, running closed-loop users.

use std::time::Instant;

use rand::RngExt as _;

mod actions;
mod api;
mod flood;
mod focused;
mod mixed;
mod reads;
mod seed;
mod votes;

pub(crate) use api::Api;
pub(crate) use flood::{FloodRun, flood_markdown, guest_flood};
pub(crate) use focused::{hot_post, login_attack, login_write, signup};
pub(crate) use mixed::{Extras, Groups, Pacing, mixed, mixed_reads};
pub(crate) use reads::reads;
pub(crate) use seed::{ADMIN, ADMIN_ENROLL_TOKEN, Seed, seed, seed_bans, seed_comments};
pub(crate) use votes::Voting;

pub(crate) const PASSWORD: &str = "load-test-password";
pub(crate) const GUEST_PASSWORD: &str = "guest-pw";

fn pick(items: &[String]) -> &str {
    &items[rand::rng().random_range(0..items.len())]
}

/// Runs `users` closed-loop users until `deadline`.
async fn users<F, Fut>(users: usize, deadline: Instant, user: F)
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let tasks: Vec<_> = (0..users).map(|u| tokio::spawn(user(u))).collect();
    for t in tasks {
        let _ = t.await;
    }
    let _ = deadline;
}
