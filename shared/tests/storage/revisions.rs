//! Edit history (docs/API.md, Edit history and edit locks): every
//! edit keeps the version it replaces, newest first, the newest
//! [`MAX_REVISIONS`] only; a refused edit keeps nothing; a deleted post's
//! history goes with it.

use std::collections::HashSet;

use crate::{Dyn, created_post, edit, post_key, purged};
use futures::future::join_all;
use shared::domain::{MAX_REVISIONS, PageLimit, PostKey, PostVersion, Revision, new_id};
use shared::store::{Edited, PostEdit, StoreError};

conformance!(
    every_edit_keeps_the_version_it_replaced_newest_first,
    fifty_one_edits_keep_the_newest_fifty,
    an_edit_refused_by_its_version_keeps_no_revision,
    racing_edits_each_keep_the_version_they_replaced,
    a_deleted_posts_history_goes_with_it,
    revisions_page_newest_first_without_skips_or_repeats,
    a_deleted_revision_leaves_the_history_and_its_count_and_later_edits_count_right,
);

/// The `n`-th edit's text and time (distinct, increasing).
fn nth_edit(n: u32) -> PostEdit {
    edit(
        &format!("title {n}"),
        &format!("body {n}"),
        &format!("2030-01-01T00:{:02}:{:02}.000Z", n / 60, n % 60),
    )
}

async fn revision_count(store: &Dyn, key: &PostKey) -> u32 {
    store.post_detail(key).await.unwrap().unwrap().post.revision_count
}

async fn history(store: &Dyn, key: &PostKey) -> Vec<Revision> {
    crate::all_revisions(store, key).await.expect("the post is there")
}

/// Eight edits at once, the `n`-th edits for `from..from + 8`.
fn racing(
    store: &Dyn,
    key: &PostKey,
    if_version: Option<Vec<PostVersion>>,
    from: u32,
) -> Vec<tokio::task::JoinHandle<Edited>> {
    (from..from + 8)
        .map(|n| {
            let (store, key, if_version) = (store.clone(), key.clone(), if_version.clone());
            tokio::spawn(async move {
                let e = PostEdit {
                    if_version,
                    ..nth_edit(n)
                };
                store.update_post(&key, &e).await.unwrap()
            })
        })
        .collect()
}

async fn every_edit_keeps_the_version_it_replaced_newest_first(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    assert_eq!(history(&store, &key).await, vec![]);
    assert_eq!(revision_count(&store, &key).await, 0);
    for n in 1..=3 {
        assert_eq!(store.update_post(&key, &nth_edit(n)).await.unwrap(), Edited::Done);
    }
    let original = Revision {
        number: 1,
        title: p.summary.title.clone(),
        body: p.body.clone(),
        edited_at: p.updated_at.clone(),
    };
    let version = |n: u32| {
        let e = nth_edit(n);
        Revision {
            number: u64::from(n) + 1,
            title: e.title.as_str().to_owned(),
            body: e.body.as_str().to_owned(),
            edited_at: e.updated_at,
        }
    };
    assert_eq!(history(&store, &key).await, vec![version(2), version(1), original]);
    assert_eq!(revision_count(&store, &key).await, 3);
    // The post itself is the third edit's version, in no revision.
    let post = store.post_detail(&key).await.unwrap().unwrap().post;
    assert_eq!(
        (post.summary.title.as_str(), post.updated_at.as_str()),
        ("title 3", version(3).edited_at.as_str())
    );
    // No such post, or not on that board: no history at all.
    assert_eq!(crate::all_revisions(&store, &post_key("free", &new_id())).await, None);
    assert_eq!(
        crate::all_revisions(&store, &post_key("qna", &p.summary.id)).await,
        None
    );
    assert_eq!(
        store
            .update_post(&post_key("qna", &p.summary.id), &nth_edit(4))
            .await
            .unwrap(),
        Edited::NoSuchPost
    );
    assert_eq!(
        history(&store, &key).await.len(),
        3,
        "an edit through another board keeps nothing"
    );
}

async fn fifty_one_edits_keep_the_newest_fifty(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    for n in 1..=MAX_REVISIONS {
        store.update_post(&key, &nth_edit(n)).await.unwrap();
    }
    let fifty = history(&store, &key).await;
    assert_eq!(fifty.len(), MAX_REVISIONS as usize);
    assert_eq!(
        fifty.last().unwrap().title,
        p.summary.title,
        "the original is the oldest kept"
    );
    store.update_post(&key, &nth_edit(MAX_REVISIONS + 1)).await.unwrap();
    let kept = history(&store, &key).await;
    let titles: Vec<&str> = kept.iter().map(|r| r.title.as_str()).collect();
    let expected: Vec<String> = (1..=MAX_REVISIONS).rev().map(|n| format!("title {n}")).collect();
    assert_eq!(titles, expected, "the original went, the 50 edits' versions stay");
    assert_eq!(kept[0].edited_at, nth_edit(MAX_REVISIONS).updated_at);
    assert_eq!(revision_count(&store, &key).await, MAX_REVISIONS);
    store.update_post(&key, &nth_edit(MAX_REVISIONS + 2)).await.unwrap();
    let kept = history(&store, &key).await;
    assert_eq!(kept.len(), MAX_REVISIONS as usize);
    assert_eq!(
        (kept[0].title.as_str(), kept.last().unwrap().title.as_str()),
        ("title 51", "title 2")
    );
    assert_eq!(revision_count(&store, &key).await, MAX_REVISIONS);
}

async fn an_edit_refused_by_its_version_keeps_no_revision(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let at = |versions: Vec<PostVersion>, n: u32| PostEdit {
        if_version: Some(versions),
        ..nth_edit(n)
    };
    let stale = PostVersion::of("another", "text");
    assert_eq!(
        store.update_post(&key, &at(vec![stale.clone()], 1)).await.unwrap(),
        Edited::OtherVersion
    );
    assert_eq!(history(&store, &key).await, vec![]);
    assert_eq!(revision_count(&store, &key).await, 0);
    let current = PostVersion::of(&p.summary.title, &p.body);
    assert_eq!(
        store.update_post(&key, &at(vec![current.clone()], 1)).await.unwrap(),
        Edited::Done
    );
    // The version it named is gone now: refused, and still one revision.
    assert_eq!(
        store.update_post(&key, &at(vec![current], 2)).await.unwrap(),
        Edited::OtherVersion
    );
    let kept = history(&store, &key).await;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].title, p.summary.title);
    assert_eq!(revision_count(&store, &key).await, 1);
}

/// Edits racing (without `If-Match`, all applied; with one, one applied):
/// each revision is the version its edit replaced, so the history and the
/// post hold every version exactly once.
async fn racing_edits_each_keep_the_version_they_replaced(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let outcomes: Vec<Edited> = join_all(racing(&store, &key, None, 1))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(outcomes.iter().all(|o| *o == Edited::Done), "{outcomes:?}");
    let post = store.post_detail(&key).await.unwrap().unwrap().post;
    let kept = history(&store, &key).await;
    assert_eq!(kept.len(), 8);
    let mut versions: Vec<&str> = kept.iter().map(|r| r.title.as_str()).collect();
    versions.push(post.summary.title.as_str());
    let distinct: HashSet<&str> = versions.iter().copied().collect();
    let expected: HashSet<String> = (1..=8)
        .map(|n| format!("title {n}"))
        .chain([p.summary.title.clone()])
        .collect();
    assert_eq!(
        distinct,
        expected.iter().map(String::as_str).collect::<HashSet<_>>(),
        "{versions:?}"
    );
    assert_eq!(kept.last().unwrap().title, p.summary.title, "the original first");
    // Each revision's text is that of one version, its body with its title.
    for r in &kept[..7] {
        assert_eq!(r.body, r.title.replace("title", "body"), "{r:?}");
    }

    let current = PostVersion::of(&post.summary.title, &post.body);
    let outcomes: Vec<Edited> = join_all(racing(&store, &key, Some(vec![current]), 11))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == Edited::Done).count(),
        1,
        "{outcomes:?}"
    );
    let kept = history(&store, &key).await;
    assert_eq!(kept.len(), 9, "one more, of the version the winner replaced");
    assert_eq!(kept[0].title, post.summary.title);
    assert_eq!(revision_count(&store, &key).await, 9);
}

async fn a_deleted_posts_history_goes_with_it(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    for n in 1..=2 {
        store.update_post(&key, &nth_edit(n)).await.unwrap();
    }
    let survivor = created_post(&store, "free").await;
    let survivor_key = post_key("free", &survivor.summary.id);
    store.update_post(&survivor_key, &nth_edit(1)).await.unwrap();
    assert!(store.delete_post(&key, false).await.unwrap());
    // At once, before the purge (DynamoDB's step 2) has run.
    assert_eq!(crate::all_revisions(&store, &key).await, None);
    purged(&store).await;
    assert_eq!(crate::all_revisions(&store, &key).await, None);
    assert_eq!(store.update_post(&key, &nth_edit(3)).await.unwrap(), Edited::NoSuchPost);
    assert_eq!(history(&store, &survivor_key).await.len(), 1, "other posts keep theirs");
}

fn numbers(revisions: &[Revision]) -> Vec<u64> {
    revisions.iter().map(|r| r.number).collect()
}

async fn revisions_page_newest_first_without_skips_or_repeats(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    for n in 1..=7 {
        store.update_post(&key, &nth_edit(n)).await.unwrap();
    }
    let three = PageLimit::parse(Some("3"), 50).unwrap();
    let mut pages = Vec::new();
    let mut before = None;
    loop {
        let page = store.revisions(&key, three, before).await.unwrap().unwrap();
        pages.push(numbers(&page.revisions));
        match page.next_cursor {
            Some(cursor) => before = Some(shared::store::cursor::decode_revision(&cursor).unwrap()),
            None => break,
        }
    }
    assert_eq!(pages, vec![vec![7, 6, 5], vec![4, 3, 2], vec![1]]);
    assert_eq!(
        shared::store::cursor::decode_revision("not-a-cursor"),
        Err(StoreError::InvalidCursor)
    );
}

async fn a_deleted_revision_leaves_the_history_and_its_count_and_later_edits_count_right(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    for n in 1..=MAX_REVISIONS {
        store.update_post(&key, &nth_edit(n)).await.unwrap();
    }
    assert!(store.delete_revision(&key, 3, None).await.unwrap());
    assert!(!store.delete_revision(&key, 3, None).await.unwrap(), "already gone");
    assert!(!store.delete_revision(&key, 99, None).await.unwrap(), "never kept");
    assert!(
        !store
            .delete_revision(&post_key("qna", &p.summary.id), 4, None)
            .await
            .unwrap(),
        "not through another board"
    );
    let kept = history(&store, &key).await;
    assert!(!numbers(&kept).contains(&3));
    assert_eq!((kept.len(), revision_count(&store, &key).await), (49, 49));

    // The oldest (1) goes with the 51st edit; with 3 gone, 49 stay.
    store.update_post(&key, &nth_edit(MAX_REVISIONS + 1)).await.unwrap();
    assert_eq!(revision_count(&store, &key).await, 49);
    // Deleting 2 leaves 48; edit 52 would push 2 out, already gone: 49.
    assert!(store.delete_revision(&key, 2, None).await.unwrap());
    store.update_post(&key, &nth_edit(MAX_REVISIONS + 2)).await.unwrap();
    let kept = history(&store, &key).await;
    assert_eq!(kept.len(), 49, "{:?}", numbers(&kept));
    assert_eq!(revision_count(&store, &key).await, 49);
    assert_eq!(kept.last().map(|r| r.number), Some(4));
}
