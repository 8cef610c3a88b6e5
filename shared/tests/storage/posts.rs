//! Posts: reading, listing, editing and deleting, guest guards, paging under
//! inserts.

use std::collections::HashSet;

use crate::{
    Dyn, board, comment, comment_key, created_post, edit, guest_hash, hash, limit, member_author, member_id, post,
    post_id, post_key, purged, views, writer,
};
use futures::future::join_all;
use shared::domain::{Author, PostVersion, new_id, now};
use shared::store::{Edited, PostEdit, StoreError};

conformance!(
    a_post_reads_back_with_its_comments_oldest_first,
    posts_of_another_board_are_not_found,
    listing_is_newest_first_and_pages_neither_skip_nor_repeat,
    a_cursor_that_was_not_issued_is_refused,
    updating_a_post_changes_title_body_and_updated_at,
    an_edit_with_a_version_changes_only_that_version,
    racing_edits_of_one_version_leave_exactly_one_winner,
    deleting_a_post_removes_its_comments_and_likes,
    guest_password_hashes_appear_only_in_guards,
    pagination_under_concurrent_inserts_never_repeats_a_post,
);

async fn a_post_reads_back_with_its_comments_oldest_first(store: Dyn) {
    let p = created_post(&store, "free").await;
    let first = comment(&p.summary.id, None, "first");
    store
        .create_comment(
            &board("free"),
            &first,
            &writer(),
            Some(&hash("guest-hash")),
            false,
            None,
        )
        .await
        .unwrap();
    let reply = comment(&p.summary.id, Some(&first.id), "reply");
    store
        .create_comment(&board("free"), &reply, &writer(), None, false, None)
        .await
        .unwrap();
    let third = comment(&p.summary.id, None, "third");
    store
        .create_comment(&board("free"), &third, &writer(), None, false, None)
        .await
        .unwrap();

    let detail = store
        .post_detail(&post_key("free", &p.summary.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.post.summary.comment_count, 3);
    assert_eq!(detail.post.body, p.body);
    assert_eq!(detail.post.summary.title, p.summary.title);
    assert_eq!(detail.post.summary.author, p.summary.author);
    assert_eq!(detail.comments, vec![first, reply, third]);
    assert_eq!(detail.comments_next_cursor, None, "all comments fit the first page");
    assert_eq!(store.post_detail(&post_key("free", &new_id())).await.unwrap(), None);
}

async fn posts_of_another_board_are_not_found(store: Dyn) {
    let p = created_post(&store, "free").await;
    let id = &p.summary.id;
    let qna = post_key("qna", id);
    assert_eq!(store.post_detail(&qna).await.unwrap(), None);
    assert_eq!(views(&store, &qna).await, None);
    assert_eq!(store.post_guard(&qna).await.unwrap(), None);
    assert_eq!(
        store.update_post(&qna, &edit("t", "b", &now())).await.unwrap(),
        Edited::NoSuchPost
    );
    assert_eq!(
        store
            .vote(&qna, &member_id(), shared::domain::VoteChange::Like, None)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .create_comment(&board("qna"), &comment(id, None, "x"), &writer(), None, false, None)
            .await,
        Err(StoreError::NotFound)
    );
    assert!(!store.delete_post(&qna, false).await.unwrap());
    // Nothing above touched the post.
    let detail = store.post_detail(&post_key("free", id)).await.unwrap().unwrap();
    assert_eq!(
        (
            detail.post.summary.view_count,
            detail.post.summary.like_count,
            detail.post.summary.comment_count
        ),
        (0, 0, 0)
    );
    assert_eq!(detail.post.summary.title, "hello");
}

async fn listing_is_newest_first_and_pages_neither_skip_nor_repeat(store: Dyn) {
    let mut ids = Vec::new();
    for i in 0..23 {
        let p = post("qna", &format!("post {i}"), member_author());
        store.create_post(&p, &writer(), None, None).await.unwrap();
        ids.push(p.summary.id);
    }
    store
        .create_post(&post("free", "elsewhere", member_author()), &writer(), None, None)
        .await
        .unwrap();
    ids.reverse(); // newest first

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = store
            .list_posts(&board("qna"), limit(7), cursor.as_deref())
            .await
            .unwrap();
        assert!(page.posts.len() <= 7);
        seen.extend(page.posts.iter().map(|p| p.id.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ids);
    let exact = store.list_posts(&board("qna"), limit(23), None).await.unwrap();
    assert_eq!(exact.posts.len(), 23);
    assert_eq!(exact.next_cursor, None, "no cursor when nothing follows");
    assert!(
        store
            .list_posts(&board("notice"), limit(20), None)
            .await
            .unwrap()
            .posts
            .is_empty()
    );
}

async fn a_cursor_that_was_not_issued_is_refused(store: Dyn) {
    assert_eq!(
        store.list_posts(&board("free"), limit(20), Some("garbage!")).await,
        Err(StoreError::InvalidCursor)
    );
}

async fn updating_a_post_changes_title_body_and_updated_at(store: Dyn) {
    let p = created_post(&store, "free").await;
    let later = "2030-01-01T00:00:00.000Z";
    assert_eq!(
        store
            .update_post(&post_key("free", &p.summary.id), &edit("new title", "new body", later))
            .await
            .unwrap(),
        Edited::Done
    );
    let updated = store
        .post_detail(&post_key("free", &p.summary.id))
        .await
        .unwrap()
        .unwrap()
        .post;
    assert_eq!(updated.summary.title, "new title");
    assert_eq!(updated.body, "new body");
    assert_eq!(updated.updated_at, later);
    assert_eq!(updated.summary.created_at, p.summary.created_at);
    assert_eq!(
        store
            .update_post(&post_key("free", &new_id()), &edit("t", "b", later))
            .await
            .unwrap(),
        Edited::NoSuchPost
    );
}

/// docs/API.md, Conventions: an edit with `If-Match` changes the post
/// only at one of the versions it names, atomically with the check.
async fn an_edit_with_a_version_changes_only_that_version(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let current = PostVersion::of(&p.summary.title, &p.body);
    let stale = PostVersion::of("another", "text");
    let at = |versions: Vec<PostVersion>, title: &str| PostEdit {
        if_version: Some(versions),
        ..edit(title, "b", &now())
    };
    assert_eq!(
        store.update_post(&key, &at(vec![stale.clone()], "no")).await.unwrap(),
        Edited::OtherVersion
    );
    assert_eq!(
        store.update_post(&key, &at(vec![], "no")).await.unwrap(),
        Edited::OtherVersion
    );
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(detail.post.summary.title, p.summary.title, "unchanged");
    assert_eq!(
        store
            .update_post(&key, &at(vec![stale.clone(), current.clone()], "yes"))
            .await
            .unwrap(),
        Edited::Done
    );
    // The old version is gone with the edit; the new one is the text's.
    assert_eq!(
        store.update_post(&key, &at(vec![current], "again")).await.unwrap(),
        Edited::OtherVersion
    );
    assert_eq!(
        store
            .update_post(&key, &at(vec![PostVersion::of("yes", "b")], "again"))
            .await
            .unwrap(),
        Edited::Done
    );
    let gone = post_key("free", &new_id());
    assert_eq!(
        store.update_post(&gone, &at(vec![stale], "x")).await.unwrap(),
        Edited::NoSuchPost
    );
}

/// docs/API.md, Conventions: many edits racing with the same `If-Match`:
/// exactly one wins, the others are told another version is there.
async fn racing_edits_of_one_version_leave_exactly_one_winner(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let version = PostVersion::of(&p.summary.title, &p.body);
    let edits = (0..8).map(|i| {
        let (store, key, version) = (store.clone(), key.clone(), version.clone());
        tokio::spawn(async move {
            let e = PostEdit {
                if_version: Some(vec![version]),
                ..edit(&format!("edit {i}"), "b", &now())
            };
            store.update_post(&key, &e).await.unwrap()
        })
    });
    let outcomes: Vec<Edited> = join_all(edits).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == Edited::Done).count(),
        1,
        "{outcomes:?}"
    );
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Edited::Done | Edited::OtherVersion))
    );
}

async fn deleting_a_post_removes_its_comments_and_likes(store: Dyn) {
    let p = created_post(&store, "free").await;
    let id = &p.summary.id;
    let key = post_key("free", id);
    let m1 = member_id();
    let c = comment(id, None, "bye");
    store
        .create_comment(&board("free"), &c, &writer(), Some(&hash("h")), false, None)
        .await
        .unwrap();
    store
        .vote(&key, &m1, shared::domain::VoteChange::Like, None)
        .await
        .unwrap();
    let survivor = created_post(&store, "free").await;
    store
        .vote(
            &post_key("free", &survivor.summary.id),
            &m1,
            shared::domain::VoteChange::Like,
            None,
        )
        .await
        .unwrap();

    assert!(store.delete_post(&key, false).await.unwrap());
    assert!(!store.delete_post(&key, false).await.unwrap(), "already gone");
    purged(&store).await;
    assert_eq!(store.post_detail(&key).await.unwrap(), None);
    assert_eq!(
        store.comment_guard(&comment_key("free", id, &c.id)).await.unwrap(),
        None
    );
    assert!(!store.has_liked(&post_id(id), &m1).await.unwrap());
    assert!(
        store.has_liked(&post_id(&survivor.summary.id), &m1).await.unwrap(),
        "other posts keep their likes"
    );
    let listed: Vec<_> = store.list_posts(&board("free"), limit(20), None).await.unwrap().posts;
    assert_eq!(
        listed.iter().map(|p| &p.id).collect::<Vec<_>>(),
        vec![&survivor.summary.id]
    );
}

async fn guest_password_hashes_appear_only_in_guards(store: Dyn) {
    let guest = Author::Guest {
        nickname: "visitor".into(),
        tag: Some(writer().key.tag()),
    };
    let p = post("free", "guest post", guest.clone());
    store
        .create_post(&p, &writer(), Some(&hash("$2b$08$post-secret-hash")), None)
        .await
        .unwrap();
    let c = comment(&p.summary.id, None, "guest comment");
    store
        .create_comment(
            &board("free"),
            &c,
            &writer(),
            Some(&hash("$2b$08$comment-secret-hash")),
            false,
            None,
        )
        .await
        .unwrap();
    let (free, qna) = (post_key("free", &p.summary.id), post_key("qna", &p.summary.id));
    let (free_c, qna_c) = (
        comment_key("free", &p.summary.id, &c.id),
        comment_key("qna", &p.summary.id, &c.id),
    );

    let guard = store.post_guard(&free).await.unwrap().unwrap();
    assert_eq!(guard.author, guest);
    assert_eq!(guest_hash(&guard), Some("$2b$08$post-secret-hash"));
    let guard = store.comment_guard(&free_c).await.unwrap().unwrap();
    assert_eq!(guest_hash(&guard), Some("$2b$08$comment-secret-hash"));
    assert_eq!(store.comment_guard(&qna_c).await.unwrap(), None);

    let shown = serde_json::to_string(&store.post_detail(&free).await.unwrap()).unwrap()
        + &serde_json::to_string(&store.list_posts(&board("free"), limit(20), None).await.unwrap()).unwrap()
        + &format!("{:?}", store.update_post(&free, &edit("t", "b", &now())).await.unwrap())
        + &serde_json::to_string(&store.list_comments(&free, limit(20), None).await.unwrap()).unwrap();
    assert!(
        !shown.contains("secret-hash"),
        "a hash reached a response type: {shown}"
    );

    assert!(
        store
            .replace_post_guest_hash(&free, &hash("$2b$08$post-secret-hash"), &hash("new-post-hash"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .replace_post_guest_hash(&free, &hash("$2b$08$post-secret-hash"), &hash("x"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .replace_post_guest_hash(&qna, &hash("new-post-hash"), &hash("x"))
            .await
            .unwrap()
    );
    let guard = store.post_guard(&free).await.unwrap().unwrap();
    assert_eq!(guest_hash(&guard), Some("new-post-hash"));
    assert!(
        store
            .replace_comment_guest_hash(&free_c, &hash("$2b$08$comment-secret-hash"), &hash("new-comment-hash"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .replace_comment_guest_hash(&qna_c, &hash("new-comment-hash"), &hash("x"))
            .await
            .unwrap()
    );
    let guard = store.comment_guard(&free_c).await.unwrap().unwrap();
    assert_eq!(guest_hash(&guard), Some("new-comment-hash"));
}

async fn pagination_under_concurrent_inserts_never_repeats_a_post(store: Dyn) {
    for i in 0..30 {
        store
            .create_post(
                &post("notice", &format!("old {i}"), member_author()),
                &writer(),
                None,
                None,
            )
            .await
            .unwrap();
    }
    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 0..30 {
                store
                    .create_post(
                        &post("notice", &format!("new {i}"), member_author()),
                        &writer(),
                        None,
                        None,
                    )
                    .await
                    .unwrap();
            }
        })
    };
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = store
            .list_posts(&board("notice"), limit(4), cursor.as_deref())
            .await
            .unwrap();
        for p in &page.posts {
            assert!(seen.insert(p.id.clone()), "post {} repeated", p.id);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    writer.await.unwrap();
    assert!(seen.len() >= 30, "every post that existed before the walk was seen");
}
