//! Spent proof-of-work challenges (docs/API.md, Proof of work for
//! anonymous writes): each is accepted once.

use crate::Dyn;
use futures::future::join_all;
use shared::domain::new_id;

conformance!(
    a_challenge_is_spent_once,
    racing_spends_of_one_challenge_leave_exactly_one_winner,
);

/// A week from now, in Unix seconds: unexpired while the test runs.
fn next_week() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    i64::try_from(now).unwrap() + 7 * 24 * 3600
}

/// A challenge as the server makes them: a hex digest.
fn challenge() -> String {
    let id = new_id().to_lowercase();
    format!("{id:0>64}")
}

async fn a_challenge_is_spent_once(store: Dyn) {
    let (spent, other) = (challenge(), challenge());
    assert!(store.spend_challenge(&spent, next_week()).await.unwrap());
    assert!(!store.spend_challenge(&spent, next_week()).await.unwrap());
    assert!(
        !store.spend_challenge(&spent, next_week() + 60).await.unwrap(),
        "whatever its expiry"
    );
    assert!(
        store.spend_challenge(&other, next_week()).await.unwrap(),
        "another is its own"
    );
    assert!(!store.spend_challenge(&other, next_week()).await.unwrap());
}

async fn racing_spends_of_one_challenge_leave_exactly_one_winner(store: Dyn) {
    let spent = challenge();
    let spends = (0..8).map(|_| {
        let (store, spent) = (store.clone(), spent.clone());
        tokio::spawn(async move { store.spend_challenge(&spent, next_week()).await.unwrap() })
    });
    let won: Vec<bool> = join_all(spends).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(won.iter().filter(|w| **w).count(), 1, "{won:?}");
}
