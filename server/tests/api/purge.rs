//! A post's delete answers before its children go (docs/storage.md,
//! Deleting a post): on DynamoDB the request writes the removal and its
//! purge marker, and the server's background task deletes the comments; on
//! SQLite the one transaction does both. Prints the delete times side by
//! side; asserts what the answer and the store show.
//!
//! The same background task finishes the account deletions an earlier
//! process left pending (docs/DESIGN.md, Accounts).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use reqwest::Method;
use serde_json::json;

use crate::helpers::{Backend, HEAVY, body, spawn_app, spawn_app_in};

on_both_stores!(
    deleting_a_post_with_2000_comments_answers_at_once_and_its_comments_go_after,
    an_account_deletion_a_crash_left_pending_is_finished_by_the_next_processes_background_task,
);

const COMMENTS: usize = 2_000;

async fn deleting_a_post_with_2000_comments_answers_at_once_and_its_comments_go_after(backend: Backend) {
    let _alone = HEAVY.lock().await;
    let app = spawn_app(backend).await;
    let token = app.member_token("bomber").await;
    let full = app.member_post(&token).await;
    let added: Vec<u16> = stream::iter(0..COMMENTS)
        .map(|i| {
            let (app, token, full) = (&app, &token, &full);
            async move {
                app.request(
                    Method::POST,
                    &format!("/boards/free/posts/{full}/comments"),
                    Some(token),
                    Some(json!({ "body": format!("comment {i}") })),
                )
                .await
                .status()
                .as_u16()
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(added.iter().all(|s| *s == 201), "every comment created");

    // Three posts without comments, timed one after another, then the full one.
    let mut empty_ms = Vec::new();
    for _ in 0..3 {
        let empty = app.member_post(&token).await;
        let started = Instant::now();
        let answer = app
            .request(
                Method::DELETE,
                &format!("/boards/free/posts/{empty}"),
                Some(&token),
                None,
            )
            .await;
        empty_ms.push(started.elapsed().as_secs_f64() * 1e3);
        assert_eq!(answer.status(), 204);
    }
    let started = Instant::now();
    let answer = app
        .request(
            Method::DELETE,
            &format!("/boards/free/posts/{full}"),
            Some(&token),
            None,
        )
        .await;
    let full_ms = started.elapsed().as_secs_f64() * 1e3;
    assert_eq!(answer.status(), 204);
    empty_ms.sort_by(f64::total_cmp);
    let empty_median = empty_ms[1];
    println!(
        "{backend:?}: DELETE of a post with {COMMENTS} comments {full_ms:.1} ms, of one with none {empty_median:.1} ms (median of 3): ratio {:.2}",
        full_ms / empty_median
    );

    // Gone at once for every reader.
    assert_eq!(app.get(&format!("/boards/free/posts/{full}")).await.status(), 404);
    assert_eq!(
        app.get(&format!("/boards/free/posts/{full}/comments")).await.status(),
        404
    );
    // And its children in the store soon after.
    let store = app.state.app.store();
    let deadline = Instant::now() + Duration::from_secs(60);
    let purged_after = loop {
        let pending = store.pending_purges(10).await.unwrap();
        if pending.is_empty() {
            break started.elapsed();
        }
        assert!(Instant::now() < deadline, "still pending after a minute: {pending:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    println!("{backend:?}: no purge pending {purged_after:?} after the delete was sent");
    // None of the member's comments is left (the index by author).
    let own = body(
        app.request(Method::GET, "/members/me/comments", Some(&token), None)
            .await,
    )
    .await;
    assert_eq!(own["comments"], json!([]), "{own}");
}

/// A process that wrote an account deletion's step 1 and died before step 2
/// (here: step 1 written at the store, as `delete_account` writes it, and
/// nothing after): the process started next on the same store finishes
/// it, with no other account deletion to sweep it.
async fn an_account_deletion_a_crash_left_pending_is_finished_by_the_next_processes_background_task(backend: Backend) {
    use shared::domain::{MemberId, Username};
    let data = Arc::new(tempfile::tempdir().unwrap());
    let table = format!("e2e-{}", shared::domain::new_id().to_lowercase());
    let first = spawn_app_in(backend, &[], data.clone(), Some(table.clone())).await;
    let (leaver, stayer) = (first.member_token("leaver").await, first.member_token("stayer").await);
    let theirs = first.member_post(&stayer).await;
    let mine = first.member_post(&leaver).await;
    for post in [&theirs, &mine] {
        for i in 0..6 {
            let answer = first
                .request(
                    Method::POST,
                    &format!("/boards/free/posts/{post}/comments"),
                    Some(&leaver),
                    Some(json!({ "body": format!("leaving soon {i}") })),
                )
                .await;
            assert_eq!(answer.status(), 201);
        }
    }
    let like = first
        .request(
            Method::PUT,
            &format!("/boards/free/posts/{theirs}/like"),
            Some(&leaver),
            None,
        )
        .await;
    assert_eq!(like.status(), 200);
    let me = body(first.request(Method::GET, "/members/me", Some(&leaver), None).await).await;
    let id = MemberId::from_stored(me["id"].as_str().unwrap().to_owned());
    let store = first.state.app.store().clone();
    assert!(
        store
            .close_account(&id, &Username::parse("leaver".into()).unwrap(), true, &[])
            .await
            .unwrap()
    );
    // The running process leaves it: its background task resumes
    // deletions on its first look only (its own run to their end).
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(store.pending_deletions(10).await.unwrap().len(), 1);
    assert!(!store.owned(&id, true, 100).await.unwrap().is_empty());

    let started = Instant::now();
    let next = spawn_app_in(backend, &[], data.clone(), Some(table)).await;
    let deadline = started + Duration::from_secs(60);
    while !store.pending_deletions(10).await.unwrap().is_empty() {
        assert!(Instant::now() < deadline, "still pending a minute after the start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!(
        "{backend:?}: the pending deletion was finished {:?} after the next process started",
        started.elapsed()
    );
    assert!(
        store.owned(&id, true, 100).await.unwrap().is_empty(),
        "nothing of the member's is left"
    );
    assert_eq!(next.get(&format!("/boards/free/posts/{mine}")).await.status(), 404);
    let post = body(next.get(&format!("/boards/free/posts/{theirs}")).await).await;
    assert_eq!(
        (post["comment_count"].as_u64(), post["like_count"].as_u64()),
        (Some(0), Some(0)),
        "{post}"
    );
    let login = next.login("leaver", "password-123").await;
    assert_eq!(login.status(), 401, "the account stays closed");
}
