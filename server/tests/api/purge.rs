//! (v3) A post's delete answers before its children go (docs/storage.md,
//! Deleting a post): on DynamoDB the request writes the removal and its
//! purge marker, and the server's background task deletes the comments; on
//! SQLite the one transaction does both. Prints the delete times side by
//! side; asserts what the answer and the store show.

use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use reqwest::Method;
use serde_json::json;

use crate::helpers::{Backend, HEAVY, body, spawn_app};

on_both_stores!(deleting_a_post_with_2000_comments_answers_at_once_and_its_comments_go_after,);

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
