//! Comments: replies, deletes, counts, paging and the read of one comment.

use std::collections::HashSet;

use crate::moderation::log_entry;
use crate::{
    Dyn, add_comments, board, comment, comment_by, comment_count, comment_key, created_post, hash, id_of, ids, limit,
    member, post_key, writer,
};
use futures::future::join_all;
use shared::domain::{COMMENTS_PAGE, LogAction, LogTarget, Owned, new_id};
use shared::store::{StoreError, cursor};

conformance!(
    replies_must_name_a_top_level_comment_of_the_same_post,
    deleting_a_comment_uncounts_it_once,
    concurrent_comments_are_all_counted,
    a_post_with_many_comments_pages_them_oldest_first,
    exactly_a_page_of_comments_leaves_no_cursor,
    comments_of_a_missing_or_foreign_post_are_not_listed,
    a_comments_cursor_outlives_the_comment_it_names,
    one_comment_reads_as_its_page_shows_it_and_only_under_its_own_post,
);

async fn replies_must_name_a_top_level_comment_of_the_same_post(store: Dyn) {
    let p = created_post(&store, "free").await;
    let other = created_post(&store, "free").await;
    let top = comment(&p.summary.id, None, "top");
    store
        .create_comment(&board("free"), &top, &writer(), None, false, None)
        .await
        .unwrap();
    let reply = comment(&p.summary.id, Some(&top.id), "reply");
    store
        .create_comment(&board("free"), &reply, &writer(), None, false, None)
        .await
        .unwrap();
    let elsewhere = comment(&other.summary.id, None, "elsewhere");
    store
        .create_comment(&board("free"), &elsewhere, &writer(), None, false, None)
        .await
        .unwrap();

    for parent in [elsewhere.id.as_str(), reply.id.as_str(), "01ARZ3NDEKTSV4RRFFQ69G5FAV"] {
        let bad = comment(&p.summary.id, Some(parent), "bad");
        assert_eq!(
            store
                .create_comment(&board("free"), &bad, &writer(), None, false, None)
                .await,
            Err(StoreError::InvalidParent),
            "{parent}"
        );
    }
    assert_eq!(
        comment_count(&store, "free", &p.summary.id).await,
        2,
        "refused replies are not counted"
    );
}

async fn deleting_a_comment_uncounts_it_once(store: Dyn) {
    let p = created_post(&store, "free").await;
    let (a, b) = (comment(&p.summary.id, None, "a"), comment(&p.summary.id, None, "b"));
    store
        .create_comment(&board("free"), &a, &writer(), None, false, None)
        .await
        .unwrap();
    store
        .create_comment(&board("free"), &b, &writer(), None, false, None)
        .await
        .unwrap();
    assert!(
        !store
            .delete_comment(&comment_key("qna", &p.summary.id, &a.id))
            .await
            .unwrap(),
        "wrong board"
    );
    let free_a = comment_key("free", &p.summary.id, &a.id);
    assert!(store.delete_comment(&free_a).await.unwrap());
    assert!(!store.delete_comment(&free_a).await.unwrap());
    let detail = store
        .post_detail(&post_key("free", &p.summary.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.post.summary.comment_count, 1);
    assert_eq!(detail.comments, vec![b]);
    assert_eq!(detail.comments_next_cursor, None);
}

async fn concurrent_comments_are_all_counted(store: Dyn) {
    let p = created_post(&store, "free").await;
    let id = p.summary.id.clone();
    let writes = (0..30).map(|i| {
        let (store, c) = (store.clone(), comment(&id, None, &format!("comment {i}")));
        tokio::spawn(async move {
            store
                .create_comment(&board("free"), &c, &writer(), None, false, None)
                .await
        })
    });
    for result in join_all(writes).await {
        result.unwrap().unwrap();
    }
    let detail = store.post_detail(&post_key("free", &id)).await.unwrap().unwrap();
    assert_eq!(detail.comments.len(), 30);
    assert_eq!(detail.post.summary.comment_count, 30);
    assert_eq!(detail.comments_next_cursor, None);
}

async fn a_post_with_many_comments_pages_them_oldest_first(store: Dyn) {
    let p = created_post(&store, "free").await;
    let all = add_comments(&store, "free", &p.summary.id, 120).await;
    let key = post_key("free", &p.summary.id);

    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(detail.post.summary.comment_count, 120);
    assert_eq!(detail.comments.len(), COMMENTS_PAGE);
    assert_eq!(detail.comments, all[..COMMENTS_PAGE], "the 50 oldest, oldest first");
    let detail_cursor = detail
        .comments_next_cursor
        .clone()
        .expect("a cursor: 70 comments follow");

    let mut seen = detail.comments;
    let mut sizes = Vec::new();
    let mut cursor = detail_cursor.clone();
    loop {
        let page = store
            .list_comments(&key, limit(30), Some(&cursor))
            .await
            .unwrap()
            .expect("the post exists");
        sizes.push(page.comments.len());
        seen.extend(page.comments);
        match page.next_cursor {
            Some(next) => cursor = next,
            None => break,
        }
        assert!(sizes.len() < 10, "paging does not end: {sizes:?}");
    }
    assert_eq!(sizes, vec![30, 30, 10], "the last page has no cursor");
    let seen_ids = ids(&seen);
    assert_eq!(
        seen_ids.iter().collect::<HashSet<_>>().len(),
        seen_ids.len(),
        "no comment repeats"
    );
    assert_eq!(seen, all, "every comment once, oldest first, none skipped");

    // Without a cursor the pages start where the detail does.
    let first = store.list_comments(&key, limit(50), None).await.unwrap().unwrap();
    assert_eq!(first.comments, all[..50]);
    assert_eq!(first.next_cursor, Some(detail_cursor));
}

async fn exactly_a_page_of_comments_leaves_no_cursor(store: Dyn) {
    let p = created_post(&store, "qna").await;
    let all = add_comments(&store, "qna", &p.summary.id, COMMENTS_PAGE).await;
    let key = post_key("qna", &p.summary.id);
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(detail.comments, all);
    assert_eq!(detail.comments_next_cursor, None, "nothing follows the first page");

    let half = store.list_comments(&key, limit(25), None).await.unwrap().unwrap();
    assert_eq!(half.comments, all[..25]);
    let next = half.next_cursor.expect("25 follow");
    let rest = store
        .list_comments(&key, limit(25), Some(&next))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rest.comments, all[25..]);
    assert_eq!(rest.next_cursor, None);
}

async fn comments_of_a_missing_or_foreign_post_are_not_listed(store: Dyn) {
    let p = created_post(&store, "free").await;
    let all = add_comments(&store, "free", &p.summary.id, 3).await;
    let issued = cursor::encode(&all[0].id);
    for cursor in [None, Some(issued.as_str())] {
        assert_eq!(
            store
                .list_comments(&post_key("qna", &p.summary.id), limit(20), cursor)
                .await
                .unwrap(),
            None,
            "a post of another board is not found"
        );
        assert_eq!(
            store
                .list_comments(&post_key("free", &new_id()), limit(20), cursor)
                .await
                .unwrap(),
            None,
            "no such post"
        );
    }
    let free = post_key("free", &p.summary.id);
    for garbage in ["garbage!".to_owned(), cursor::encode("not-a-ulid"), String::from("!!")] {
        assert_eq!(
            store.list_comments(&free, limit(20), Some(&garbage)).await,
            Err(StoreError::InvalidCursor),
            "{garbage}"
        );
    }
    let page = store.list_comments(&free, limit(20), None).await.unwrap().unwrap();
    assert_eq!((page.comments, page.next_cursor), (all, None));
}

async fn a_comments_cursor_outlives_the_comment_it_names(store: Dyn) {
    let p = created_post(&store, "free").await;
    let all = add_comments(&store, "free", &p.summary.id, 5).await;
    let key = post_key("free", &p.summary.id);
    let first = store.list_comments(&key, limit(2), None).await.unwrap().unwrap();
    assert_eq!(first.comments, all[..2]);
    let cursor = first.next_cursor.unwrap();
    assert!(
        store
            .delete_comment(&comment_key("free", &p.summary.id, &all[1].id))
            .await
            .unwrap()
    );
    let second = store
        .list_comments(&key, limit(2), Some(&cursor))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.comments, all[2..4], "continues after the deleted comment");
    let third = store
        .list_comments(&key, limit(2), second.next_cursor.as_deref())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((third.comments, third.next_cursor), (all[4..].to_vec(), None));
}

async fn one_comment_reads_as_its_page_shows_it_and_only_under_its_own_post(store: Dyn) {
    let p = created_post(&store, "free").await;
    let other = created_post(&store, "free").await;
    let pid = p.summary.id.as_str();
    let guests = add_comments(&store, "free", pid, 3).await;
    let (kim, leaving) = (member("kim"), member("leaving"));
    for m in [&kim, &leaving] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let kims = comment_by(&store, "free", pid, &kim).await;
    let disowned = comment_by(&store, "free", pid, &leaving).await;
    let disowned_key = comment_key("free", pid, &disowned.id);
    store
        .disown(&id_of(&leaving), &[Owned::Comment(disowned_key)])
        .await
        .unwrap();
    let reply = comment(pid, Some(&guests[0].id), "reply");
    store
        .create_comment(&board("free"), &reply, &writer(), None, false, None)
        .await
        .unwrap();

    let read = |board_slug: &'static str, post: String, id: String| {
        let store = store.clone();
        async move { store.comment(&comment_key(board_slug, &post, &id)).await.unwrap() }
    };
    let page = store
        .list_comments(&post_key("free", pid), limit(20), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(page.comments.len(), 6);
    for shown in &page.comments {
        assert_eq!(
            read("free", pid.to_owned(), shown.id.clone()).await.as_ref(),
            Some(shown),
            "a guest's, a member's, a deleted member's and a reply, as the page shows them"
        );
    }
    assert!(page.comments.contains(&kims));

    let first = guests[0].id.clone();
    assert_eq!(
        read("free", other.summary.id.clone(), first.clone()).await,
        None,
        "another post"
    );
    assert_eq!(read("qna", pid.to_owned(), first.clone()).await, None, "another board");
    assert_eq!(read("free", pid.to_owned(), new_id()).await, None, "no such comment");
    assert_eq!(read("free", new_id(), first.clone()).await, None, "no such post");

    assert!(store.delete_comment(&comment_key("free", pid, &first)).await.unwrap());
    assert_eq!(read("free", pid.to_owned(), first).await, None, "deleted");
    assert_eq!(
        read("free", pid.to_owned(), reply.id.clone()).await,
        Some(reply),
        "its reply stays"
    );

    let removed = guests[1].id.clone();
    let target = LogTarget::Comment {
        post_id: pid.to_owned(),
        comment_id: removed.clone(),
    };
    let entry = log_entry(LogAction::RemoveComment, target);
    assert!(
        store
            .remove_comment(&comment_key("free", pid, &removed), &entry, None)
            .await
            .unwrap()
    );
    assert_eq!(read("free", pid.to_owned(), removed).await, None, "removed");

    // A deleted post's comments, before its purge has run (DynamoDB).
    let last = &guests[2];
    assert!(store.delete_post(&post_key("free", pid), false).await.unwrap());
    assert_eq!(
        read("free", pid.to_owned(), last.id.clone()).await,
        None,
        "its post is deleted"
    );
}
