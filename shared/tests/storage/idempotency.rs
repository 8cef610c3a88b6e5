//! Idempotency: claims, replays, releases, expiry and races.

use crate::{
    Dyn, NOW, board, comment, created_post, hash, limit, member, member_author, post, post_key, username, writer,
};
use futures::future::join_all;
use shared::domain::new_id;
use shared::store::StoreError;
use shared::store::idempotency::{Claim, Claimed, LEASE_SECONDS, RECORD_SECONDS};

conformance!(
    an_idempotency_key_is_claimed_once_and_replays_what_its_create_wrote,
    a_create_whose_claim_was_released_or_taken_over_writes_nothing,
    expired_records_and_dead_leases_free_their_key,
    one_of_many_concurrent_claims_on_a_key_wins,
);

pub(crate) fn claim(key: &str, fingerprint: &str, now: i64) -> Claim {
    Claim {
        key: key.to_owned(),
        fingerprint: fingerprint.to_owned(),
        token: new_id(),
        now,
    }
}

async fn an_idempotency_key_is_claimed_once_and_replays_what_its_create_wrote(store: Dyn) {
    let p = created_post(&store, "free").await;
    let first = claim("key-1", "request-a", NOW);
    assert_eq!(store.claim(&first).await.unwrap(), Claimed::Fresh);
    // While the first request runs, the same request waits and another is refused.
    assert_eq!(
        store.claim(&claim("key-1", "request-a", NOW + 1)).await.unwrap(),
        Claimed::InProgress
    );
    assert_eq!(
        store.claim(&claim("key-1", "request-b", NOW + 1)).await.unwrap(),
        Claimed::Reused
    );
    let c = comment(&p.summary.id, None, "once");
    let done = first.complete(201, "{\"id\":\"c\"}".into());
    store
        .create_comment(&board("free"), &c, &writer(), None, false, Some(&done))
        .await
        .unwrap();
    let replayed = store.claim(&claim("key-1", "request-a", NOW + 2)).await.unwrap();
    assert_eq!(replayed, Claimed::Replay(done.response.clone()));
    assert_eq!(
        store.claim(&claim("key-1", "request-b", NOW + 2)).await.unwrap(),
        Claimed::Reused
    );
    // A release after completion changes nothing.
    store.release("key-1", &first.token).await.unwrap();
    assert_eq!(
        store.claim(&claim("key-1", "request-a", NOW + 3)).await.unwrap(),
        Claimed::Replay(done.response.clone())
    );
    // Signup and posts complete their records the same way.
    let for_member = claim("key-2", "signup", NOW);
    assert_eq!(store.claim(&for_member).await.unwrap(), Claimed::Fresh);
    let done = for_member.complete(201, "{}".into());
    store
        .create_member(&member("idem"), &hash("h"), Some(&done))
        .await
        .unwrap();
    assert_eq!(
        store.claim(&claim("key-2", "signup", NOW + 1)).await.unwrap(),
        Claimed::Replay(done.response)
    );
    let for_post = claim("key-3", "post", NOW);
    assert_eq!(store.claim(&for_post).await.unwrap(), Claimed::Fresh);
    let done = for_post.complete(201, "{}".into());
    store
        .create_post(&post("free", "t", member_author()), &writer(), None, Some(&done))
        .await
        .unwrap();
    assert_eq!(
        store.claim(&claim("key-3", "post", NOW + 1)).await.unwrap(),
        Claimed::Replay(done.response)
    );
}

async fn a_create_whose_claim_was_released_or_taken_over_writes_nothing(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    // Released (its request answered an error): a late create cannot apply.
    let released = claim("key-r", "a", NOW);
    assert_eq!(store.claim(&released).await.unwrap(), Claimed::Fresh);
    store.release("key-r", &released.token).await.unwrap();
    let late = comment(&p.summary.id, None, "late");
    assert_eq!(
        store
            .create_comment(
                &board("free"),
                &late,
                &writer(),
                None,
                false,
                Some(&released.complete(201, "{}".into()))
            )
            .await,
        Err(StoreError::ClaimLost)
    );
    // Taken over after its lease ended: the old request cannot apply either.
    let old = claim("key-t", "a", NOW);
    assert_eq!(store.claim(&old).await.unwrap(), Claimed::Fresh);
    let new = claim("key-t", "a", NOW + LEASE_SECONDS);
    assert_eq!(store.claim(&new).await.unwrap(), Claimed::Fresh);
    let m = member("late");
    assert_eq!(
        store
            .create_member(&m, &hash("h"), Some(&old.complete(201, "{}".into())))
            .await,
        Err(StoreError::ClaimLost)
    );
    assert_eq!(store.member_credentials(&username("late")).await.unwrap(), None);
    let lost_post = post("free", "late post", member_author());
    assert_eq!(
        store
            .create_post(&lost_post, &writer(), None, Some(&old.complete(201, "{}".into())))
            .await,
        Err(StoreError::ClaimLost)
    );
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert!(detail.comments.is_empty());
    assert_eq!(detail.post.summary.comment_count, 0, "nothing was counted");
    let page = store.list_posts(&board("free"), limit(20), None).await.unwrap();
    assert_eq!(page.posts.len(), 1, "the lost post was not written");
}

async fn expired_records_and_dead_leases_free_their_key(store: Dyn) {
    let answered = claim("key-e", "a", NOW);
    store.claim(&answered).await.unwrap();
    let m = member("expiring");
    store
        .create_member(&m, &hash("h"), Some(&answered.complete(201, "{}".into())))
        .await
        .unwrap();
    // 24 hours later the key is free, for any request.
    assert_eq!(
        store
            .claim(&claim("key-e", "b", NOW + RECORD_SECONDS - 1))
            .await
            .unwrap(),
        Claimed::Reused
    );
    assert_eq!(
        store.claim(&claim("key-e", "b", NOW + RECORD_SECONDS)).await.unwrap(),
        Claimed::Fresh
    );
    // A request that died holding a key frees it when its lease ends.
    let dead = claim("key-d", "a", NOW);
    store.claim(&dead).await.unwrap();
    assert_eq!(
        store
            .claim(&claim("key-d", "a", NOW + LEASE_SECONDS - 1))
            .await
            .unwrap(),
        Claimed::InProgress
    );
    assert_eq!(
        store.claim(&claim("key-d", "a", NOW + LEASE_SECONDS)).await.unwrap(),
        Claimed::Fresh
    );
    // v3: and for any other request too: a claim that was never answered
    // cannot squat a key for 24 hours.
    store.claim(&claim("key-s", "squatter", NOW)).await.unwrap();
    assert_eq!(
        store.claim(&claim("key-s", "owner", NOW + 1)).await.unwrap(),
        Claimed::Reused,
        "while the squatter's lease runs"
    );
    assert_eq!(
        store
            .claim(&claim("key-s", "owner", NOW + LEASE_SECONDS))
            .await
            .unwrap(),
        Claimed::Fresh
    );
}

async fn one_of_many_concurrent_claims_on_a_key_wins(store: Dyn) {
    let claims = (0..20).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.claim(&claim("key-c", "a", NOW)).await })
    });
    let results: Vec<Claimed> = join_all(claims)
        .await
        .into_iter()
        .map(|r| r.unwrap().unwrap())
        .collect();
    let fresh = results.iter().filter(|c| **c == Claimed::Fresh).count();
    assert_eq!(fresh, 1, "{results:?}");
    assert!(
        results
            .iter()
            .all(|c| matches!(c, Claimed::Fresh | Claimed::InProgress))
    );
}
