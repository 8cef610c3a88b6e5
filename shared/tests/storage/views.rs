//! Views: exact counts under concurrency and batching, nothing counted
//! for a deleted post.

use crate::{Dyn, board, comment, created_post, limit, member_id, post_key, views, writer};
use futures::future::join_all;
use shared::domain::new_id;
use shared::store::StoreError;

conformance!(
    views_are_counted_one_by_one,
    views_added_in_a_batch_count_once_each_and_a_gone_post_takes_none,
    two_hundred_concurrent_views_count_exactly_two_hundred,
    a_post_deleted_while_its_first_views_race_accepts_nothing_afterwards,
);

async fn views_are_counted_one_by_one(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    for expected in 1..=3 {
        assert_eq!(views(&store, &key).await, Some(expected));
    }
    assert_eq!(
        store.post_detail(&key).await.unwrap().unwrap().post.summary.view_count,
        3
    );
    assert_eq!(views(&store, &post_key("free", &new_id())).await, None);
}

async fn two_hundred_concurrent_views_count_exactly_two_hundred(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let views = (0..200).map(|_| {
        let (store, key) = (store.clone(), key.clone());
        tokio::spawn(async move { views(&store, &key).await })
    });
    let counts: Vec<u64> = join_all(views).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
    // Each answer includes its own view; concurrent views may or may not
    // see each other (docs/API.md, Counting).
    assert!(counts.iter().all(|c| (1..=200).contains(c)), "{counts:?}");
    assert_eq!(
        store.post_detail(&key).await.unwrap().unwrap().post.summary.view_count,
        200
    );
}

/// Deletes racing the first views of their posts (each view may be the one
/// that creates a counter shard) never leave a post that takes writes: after
/// the race, every comment, like and view of a deleted post is refused as
/// not found, and nothing is counted for it.
async fn a_post_deleted_while_its_first_views_race_accepts_nothing_afterwards(store: Dyn) {
    let posts: Vec<String> = join_all((0..20).map(|_| created_post(&store, "free")))
        .await
        .into_iter()
        .map(|p| p.summary.id)
        .collect();
    let races = posts.iter().map(|id| {
        let (store, key) = (store.clone(), post_key("free", id));
        tokio::spawn(async move {
            let viewers = (0..4).map(|_| {
                let (store, key) = (store.clone(), key.clone());
                tokio::spawn(async move { store.view_post(&key).await })
            });
            let deleted = store.delete_post(&key, false);
            let (deleted, viewed) = tokio::join!(deleted, join_all(viewers));
            assert!(deleted.unwrap(), "each post is deleted once");
            for view in viewed {
                view.unwrap().unwrap(); // Some before the delete, None after: never an error
            }
        })
    });
    for race in join_all(races).await {
        race.unwrap();
    }
    let m = member_id();
    for id in &posts {
        let key = post_key("free", id);
        assert_eq!(
            store.view_post(&key).await.unwrap(),
            None,
            "a view of deleted post {id}"
        );
        assert_eq!(
            store
                .vote(&key, &m, shared::domain::VoteChange::Like, None)
                .await
                .unwrap(),
            None,
            "a like of deleted post {id}"
        );
        let c = comment(id, None, "too late");
        assert_eq!(
            store
                .create_comment(&board("free"), &c, &writer(), None, false, None)
                .await,
            Err(StoreError::NotFound),
            "a comment on deleted post {id}"
        );
        assert_eq!(store.post_detail(&key).await.unwrap(), None);
    }
}

/// The server's view buffer writes many posts' views in one call: each
/// post gets exactly its own, added to what single views counted, and a
/// deleted post (gone before the flush) gets nothing and no error.
async fn views_added_in_a_batch_count_once_each_and_a_gone_post_takes_none(store: Dyn) {
    let posts: Vec<String> = join_all((0..3).map(|_| created_post(&store, "free")))
        .await
        .into_iter()
        .map(|p| p.summary.id)
        .collect();
    let keys: Vec<_> = posts.iter().map(|id| post_key("free", id)).collect();
    assert_eq!(views(&store, &keys[0]).await, Some(1));
    assert!(store.delete_post(&keys[2], false).await.unwrap());

    let batch = [(keys[0].clone(), 41), (keys[1].clone(), 7), (keys[2].clone(), 5)];
    store.add_views(&batch).await.unwrap();
    store.add_views(&batch[..1]).await.unwrap();

    let count = |key| {
        let store = store.clone();
        async move {
            store
                .post_detail(&key)
                .await
                .unwrap()
                .map(|d| d.post.summary.view_count)
        }
    };
    assert_eq!(count(keys[0].clone()).await, Some(83));
    assert_eq!(count(keys[1].clone()).await, Some(7));
    assert_eq!(count(keys[2].clone()).await, None);
    assert_eq!(
        views(&store, &keys[1]).await,
        Some(8),
        "single views go on from the batch"
    );
    let page = store.list_posts(&board("free"), limit(50), None).await.unwrap();
    let listed: Vec<u64> = page
        .posts
        .iter()
        .filter(|s| posts[..2].contains(&s.id))
        .map(|s| s.view_count)
        .collect();
    assert_eq!(listed.iter().sum::<u64>(), 83 + 8, "board pages show the batch too");
}

/// The server's view buffer when a flush fails halfway (the file locked by
/// another process, past the busy timeout): the flush's one transaction
/// writes nothing, the views keep waiting, and the next flush writes each
/// exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_a_failed_flush_could_not_write_are_written_once_by_the_next() {
    use shared::app::views::ViewBuffer;
    use shared::store::sqlite::{SqliteStore, Synchronous};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("boards.sqlite3");
    let sqlite = SqliteStore::open_with(&path, std::time::Duration::from_millis(100), Synchronous::Full).unwrap();
    let store: Dyn = std::sync::Arc::new(sqlite);
    let posts: Vec<String> = join_all((0..2).map(|_| created_post(&store, "free")))
        .await
        .into_iter()
        .map(|p| p.summary.id)
        .collect();
    let keys: Vec<_> = posts.iter().map(|id| post_key("free", id)).collect();
    let buffer = ViewBuffer::new();
    for key in &keys {
        for _ in 0..3 {
            buffer.view(key, 0, buffer.sweep()).unwrap();
        }
    }

    let locker = rusqlite::Connection::open(&path).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    assert!(buffer.flush(store.as_ref()).await.is_err(), "the file is locked");
    assert_eq!(buffer.waiting(), 6, "nothing was taken off");
    locker.execute_batch("COMMIT").unwrap();

    let flushed = buffer.flush(store.as_ref()).await.unwrap();
    assert_eq!((flushed.posts, flushed.views), (2, 6));
    assert_eq!(buffer.waiting(), 0);
    assert_eq!(buffer.flush(store.as_ref()).await.unwrap().views, 0, "nothing twice");
    for key in &keys {
        let detail = store.post_detail(key).await.unwrap().unwrap();
        assert_eq!(detail.post.summary.view_count, 3);
    }
}

/// The periodic flush and the shutdown's may overlap (SIGTERM while one
/// writes): each view is still written once, by whichever comes first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_flushed_by_overlapping_flushes_are_written_once() {
    use shared::app::views::ViewBuffer;
    use shared::store::sqlite::SqliteStore;

    let dir = tempfile::tempdir().unwrap();
    let store: Dyn = std::sync::Arc::new(SqliteStore::open(&dir.path().join("boards.sqlite3")).unwrap());
    let posts: Vec<String> = join_all((0..3).map(|_| created_post(&store, "free")))
        .await
        .into_iter()
        .map(|p| p.summary.id)
        .collect();
    let keys: Vec<_> = posts.iter().map(|id| post_key("free", id)).collect();
    let buffer = std::sync::Arc::new(ViewBuffer::new());
    for round in 0..20 {
        for key in &keys {
            buffer.view(key, 0, buffer.sweep()).unwrap();
        }
        let flushes = (0..4).map(|_| {
            let (buffer, store) = (buffer.clone(), store.clone());
            tokio::spawn(async move { buffer.flush(store.as_ref()).await.unwrap().views })
        });
        let written: u64 = join_all(flushes).await.into_iter().map(Result::unwrap).sum();
        assert_eq!(written, 3, "round {round}: each waiting view written by one flush");
    }
    for key in &keys {
        let detail = store.post_detail(key).await.unwrap().unwrap();
        assert_eq!(detail.post.summary.view_count, 20);
    }
}
