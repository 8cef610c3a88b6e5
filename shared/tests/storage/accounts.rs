//! Accounts: session epochs, account deletion, a member's own listings.

use std::collections::HashSet;

use crate::moderation::{log_entry, member_target};
use crate::{
    Dyn, authored_by, board, comment_by, comment_key, created_comment, guest_post, hash, id_of, limit, member,
    member_id, name_of, post_by, post_key, username, views, writer,
};
use shared::domain::{Author, Comment, LogAction, Member, Owned, PendingDeletion, Post, PostSummary, new_id};
use shared::store::StoreError;

conformance!(
    a_session_epoch_starts_at_zero_and_advances_with_ended_sessions_and_a_changed_password,
    a_closed_account_is_unreadable_keeps_its_username_taken_is_recorded_and_loses_its_appointments,
    a_members_posts_and_comments_page_newest_first_across_boards_without_gaps_or_repeats,
    owned_finds_a_members_posts_comments_and_likes_until_they_are_deleted_unliked_or_disowned,
    disowned_posts_and_comments_show_a_deleted_member_and_keep_their_counts,
);

pub(crate) async fn owned_set(store: &Dyn, m: &Member, likes: bool) -> HashSet<Owned> {
    let found = store.owned(&id_of(m), likes, 100).await.unwrap();
    let set: HashSet<Owned> = found.iter().cloned().collect();
    assert_eq!(set.len(), found.len(), "nothing twice: {found:?}");
    set
}

async fn a_session_epoch_starts_at_zero_and_advances_with_ended_sessions_and_a_changed_password(store: Dyn) {
    let kim = member("epoch");
    store.create_member(&kim, &hash("first"), None).await.unwrap();
    let (id, name) = (id_of(&kim), name_of(&kim));
    assert_eq!(store.session_state(&id, &name).await.unwrap().map(|s| s.epoch), Some(0));
    let credentials = store.member_credentials(&name).await.unwrap().unwrap();
    assert_eq!(credentials.session_epoch, 0);

    assert!(store.end_sessions(&id, &name).await.unwrap());
    assert_eq!(
        store.session_state(&id, &name).await.unwrap().map(|s| s.epoch),
        Some(1),
        "at once"
    );
    assert!(store.change_password(&id, &name, &hash("second")).await.unwrap());
    assert_eq!(store.session_state(&id, &name).await.unwrap().map(|s| s.epoch), Some(2));
    let credentials = store.member_credentials(&name).await.unwrap().unwrap();
    assert_eq!(
        (credentials.password_hash.as_str(), credentials.session_epoch),
        ("second", 2)
    );
    assert_eq!(credentials.member, kim);

    // Another id under the username, or no such username: no account.
    let stranger = member_id();
    assert_eq!(
        store.session_state(&stranger, &name).await.unwrap().map(|s| s.epoch),
        None
    );
    assert!(!store.end_sessions(&stranger, &name).await.unwrap());
    assert!(!store.change_password(&stranger, &name, &hash("theirs")).await.unwrap());
    let nobody = username("nobody");
    assert_eq!(store.session_state(&id, &nobody).await.unwrap().map(|s| s.epoch), None);
    assert!(!store.end_sessions(&id, &nobody).await.unwrap());
    assert!(!store.change_password(&id, &nobody, &hash("x")).await.unwrap());
    let credentials = store.member_credentials(&name).await.unwrap().unwrap();
    assert_eq!(
        (credentials.password_hash.as_str(), credentials.session_epoch),
        ("second", 2),
        "nothing changed by the refused writes"
    );
}

async fn a_closed_account_is_unreadable_keeps_its_username_taken_is_recorded_and_loses_its_appointments(store: Dyn) {
    let (free, qna, notice) = (board("free"), board("qna"), board("notice"));
    let (kim, lee) = (member("closing"), member("staying"));
    for m in [&kim, &lee] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let (id, name) = (id_of(&kim), name_of(&kim));
    for b in [&free, &qna] {
        let entry = log_entry(LogAction::AddModerator, member_target(&kim));
        assert!(store.add_moderator(b, &kim, &entry).await.unwrap());
    }
    let entry = log_entry(LogAction::AddModerator, member_target(&lee));
    assert!(store.add_moderator(&free, &lee, &entry).await.unwrap());
    let all = [free.clone(), qna.clone(), notice.clone()];
    assert_eq!(
        store.moderated_boards(&id, &all).await.unwrap(),
        vec![free.clone(), qna.clone()]
    );
    assert_eq!(store.moderated_boards(&id, &[]).await.unwrap(), vec![]);
    assert_eq!(store.moderated_boards(&member_id(), &all).await.unwrap(), vec![]);
    assert!(store.is_moderator(&qna, &id).await.unwrap());
    assert_eq!(store.session_state(&id, &name).await.unwrap().map(|s| s.epoch), Some(0));
    assert!(store.pending_deletions(10).await.unwrap().is_empty());

    assert!(
        !store.close_account(&member_id(), &name, true, &[]).await.unwrap(),
        "another id under the username: not this account"
    );
    assert!(
        store
            .close_account(&id, &name, true, &[free.clone(), qna.clone()])
            .await
            .unwrap()
    );
    assert_eq!(store.member_credentials(&name).await.unwrap(), None);
    assert_eq!(store.member_by_id(&id).await.unwrap(), None);
    assert_eq!(
        store.session_state(&id, &name).await.unwrap().map(|s| s.epoch),
        None,
        "at once"
    );
    assert!(!store.end_sessions(&id, &name).await.unwrap());
    assert!(!store.change_password(&id, &name, &hash("new")).await.unwrap());
    assert!(
        !store
            .replace_password_hash(&name, &hash("h"), &hash("new"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.create_member(&member("closing"), &hash("h2"), None).await,
        Err(StoreError::UsernameTaken),
        "the username stays taken"
    );
    assert_eq!(store.member_credentials(&name).await.unwrap(), None);
    assert_eq!(store.moderated_boards(&id, &all).await.unwrap(), vec![]);
    assert!(!store.is_moderator(&free, &id).await.unwrap());
    assert!(!store.is_moderator(&qna, &id).await.unwrap());
    assert_eq!(store.moderators(&free).await.unwrap(), vec![lee.clone()], "others stay");
    assert!(store.moderators(&qna).await.unwrap().is_empty());
    assert!(
        !store.close_account(&id, &name, true, &[]).await.unwrap(),
        "gone already"
    );

    // Another deletion, content kept: both pending, oldest first.
    let (lee_id, lee_name) = (id_of(&lee), name_of(&lee));
    assert!(
        store
            .close_account(&lee_id, &lee_name, false, std::slice::from_ref(&free))
            .await
            .unwrap()
    );
    assert!(store.moderators(&free).await.unwrap().is_empty());
    assert_eq!(
        store.pending_deletions(10).await.unwrap(),
        vec![
            PendingDeletion {
                member: id.clone(),
                delete_content: true
            },
            PendingDeletion {
                member: lee_id.clone(),
                delete_content: false
            },
        ]
    );
    assert_eq!(store.pending_deletions(1).await.unwrap().len(), 1);
    store.finish_deletion(&id).await.unwrap();
    store.finish_deletion(&id).await.unwrap();
    assert_eq!(
        store.pending_deletions(10).await.unwrap(),
        vec![PendingDeletion {
            member: lee_id,
            delete_content: false
        }]
    );
    assert_eq!(store.member_credentials(&lee_name).await.unwrap(), None);
}

async fn a_members_posts_and_comments_page_newest_first_across_boards_without_gaps_or_repeats(store: Dyn) {
    let (kim, other) = (member("lister"), member("other"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let mut mine = Vec::new();
    for i in 0..7 {
        let slug = if i % 2 == 0 { "free" } else { "qna" };
        mine.push(post_by(&store, slug, &kim).await);
        // Others' and guests' posts in between.
        post_by(&store, slug, &other).await;
        guest_post(&store, slug).await;
    }
    // Counts show as on the board's listing.
    let counted = &mine[2];
    let counted_key = post_key("free", &counted.summary.id);
    store
        .vote(&counted_key, &id_of(&other), shared::domain::VoteChange::Like, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(views(&store, &counted_key).await, Some(1));

    let mut my_comments = Vec::new();
    for (i, p) in mine.iter().enumerate() {
        let slug = p.summary.board.clone();
        my_comments.push(comment_by(&store, &slug, &p.summary.id, &kim).await);
        comment_by(&store, &slug, &p.summary.id, &other).await;
        created_comment(&store, &slug, &p.summary.id, None).await;
        if i == 3 {
            // One on another member's post.
            let theirs = post_by(&store, "notice", &other).await;
            my_comments.push(comment_by(&store, "notice", &theirs.summary.id, &kim).await);
        }
    }

    let id = id_of(&kim);
    let (mut listed, mut sizes, mut cursor) = (Vec::new(), Vec::new(), None::<String>);
    loop {
        let page = store.member_posts(&id, limit(3), cursor.as_deref()).await.unwrap();
        sizes.push(page.posts.len());
        for summary in &page.posts {
            assert_eq!(summary.author, authored_by(&kim));
            if summary.id == counted.summary.id {
                assert_eq!(
                    (summary.view_count, summary.like_count, summary.comment_count),
                    (1, 1, 3),
                    "{summary:?}"
                );
            }
        }
        listed.extend(page.posts.into_iter().map(|s| (s.board, s.id)));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
        assert!(sizes.len() < 10, "the pages end");
    }
    let newest_first: Vec<(String, String)> = mine
        .iter()
        .rev()
        .map(|p| (p.summary.board.clone(), p.summary.id.clone()))
        .collect();
    assert_eq!(sizes, vec![3, 3, 1]);
    assert_eq!(listed, newest_first, "newest first, across boards, each once");
    let all = store.member_posts(&id, limit(20), None).await.unwrap();
    assert_eq!(all.posts.len(), 7);
    assert_eq!(all.next_cursor, None);

    let (mut listed, mut sizes, mut cursor) = (Vec::new(), Vec::new(), None::<String>);
    loop {
        let page = store.member_comments(&id, limit(3), cursor.as_deref()).await.unwrap();
        sizes.push(page.comments.len());
        listed.extend(page.comments);
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
        assert!(sizes.len() < 10, "the pages end");
    }
    let newest_first: Vec<Comment> = my_comments.iter().rev().cloned().collect();
    assert_eq!(sizes, vec![3, 3, 2]);
    assert_eq!(listed, newest_first, "newest first, on every post, each once, whole");

    // Exactly a page: no cursor. Nobody's: empty.
    let exact = store.member_comments(&id, limit(8), None).await.unwrap();
    assert_eq!((exact.comments.len(), exact.next_cursor), (8, None));
    let stranger = member_id();
    assert!(
        store
            .member_posts(&stranger, limit(20), None)
            .await
            .unwrap()
            .posts
            .is_empty()
    );
    assert!(
        store
            .member_comments(&stranger, limit(20), None)
            .await
            .unwrap()
            .comments
            .is_empty()
    );
    assert_eq!(
        store
            .member_posts(&id, limit(3), Some("not a cursor"))
            .await
            .map(|_| ()),
        Err(StoreError::InvalidCursor)
    );
}

async fn owned_finds_a_members_posts_comments_and_likes_until_they_are_deleted_unliked_or_disowned(store: Dyn) {
    let (kim, other) = (member("owner"), member("someone"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let (p1, p2, p3) = (
        post_by(&store, "free", &kim).await,
        post_by(&store, "qna", &kim).await,
        post_by(&store, "free", &kim).await,
    );
    let guest = guest_post(&store, "qna").await;
    let theirs = post_by(&store, "free", &other).await;
    let (gid, tid) = (guest.summary.id.clone(), theirs.summary.id.clone());
    let c1 = comment_by(&store, "free", &p1.summary.id, &kim).await;
    let c2 = comment_by(&store, "qna", &gid, &kim).await;
    let c3 = comment_by(&store, "free", &p3.summary.id, &kim).await;
    comment_by(&store, "free", &tid, &other).await;
    created_comment(&store, "free", &p1.summary.id, None).await;
    let id = id_of(&kim);
    for key in [post_key("qna", &gid), post_key("free", &p1.summary.id)] {
        store
            .vote(&key, &id, shared::domain::VoteChange::Like, None)
            .await
            .unwrap()
            .unwrap();
    }
    store
        .vote(
            &post_key("free", &tid),
            &id_of(&other),
            shared::domain::VoteChange::Like,
            None,
        )
        .await
        .unwrap()
        .unwrap();

    let key_of = |p: &Post| post_key(&p.summary.board, &p.summary.id);
    let comment_of = |slug: &str, c: &Comment| Owned::Comment(comment_key(slug, &c.post_id, &c.id));
    let posts_and_comments: HashSet<Owned> = [
        Owned::Post(key_of(&p1)),
        Owned::Post(key_of(&p2)),
        Owned::Post(key_of(&p3)),
        comment_of("free", &c1),
        comment_of("qna", &c2),
        comment_of("free", &c3),
    ]
    .into();
    assert_eq!(owned_set(&store, &kim, false).await, posts_and_comments);
    let mut with_likes = posts_and_comments.clone();
    with_likes.insert(Owned::Like(post_key("qna", &gid)));
    with_likes.insert(Owned::Like(key_of(&p1)));
    assert_eq!(owned_set(&store, &kim, true).await, with_likes);
    let some = store.owned(&id, true, 2).await.unwrap();
    assert_eq!(some.len(), 2);
    assert!(some.iter().all(|o| with_likes.contains(o)));
    assert!(store.owned(&member_id(), true, 10).await.unwrap().is_empty());

    assert!(store.delete_post(&key_of(&p2), false).await.unwrap());
    assert!(
        store
            .delete_comment(&comment_key("free", &p3.summary.id, &c3.id))
            .await
            .unwrap()
    );
    store
        .vote(&key_of(&p1), &id, shared::domain::VoteChange::Unlike, None)
        .await
        .unwrap()
        .unwrap();
    store
        .disown(&id, &[Owned::Post(key_of(&p3)), comment_of("free", &c1)])
        .await
        .unwrap();
    let left: HashSet<Owned> = [
        Owned::Post(key_of(&p1)),
        comment_of("qna", &c2),
        Owned::Like(post_key("qna", &gid)),
    ]
    .into();
    assert_eq!(owned_set(&store, &kim, true).await, left);
    // The other member's are untouched.
    assert_eq!(owned_set(&store, &other, true).await.len(), 3);
}

async fn disowned_posts_and_comments_show_a_deleted_member_and_keep_their_counts(store: Dyn) {
    let (kim, other) = (member("leaving"), member("stays"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let p = post_by(&store, "free", &kim).await;
    let pid = p.summary.id.clone();
    let key = post_key("free", &pid);
    let mine = comment_by(&store, "free", &pid, &kim).await;
    let guests = created_comment(&store, "free", &pid, None).await;
    let theirs = post_by(&store, "free", &other).await;
    let their_comment = comment_by(&store, "free", &pid, &other).await;
    store
        .vote(&key, &id_of(&other), shared::domain::VoteChange::Like, None)
        .await
        .unwrap()
        .unwrap();
    store
        .vote(&key, &id_of(&kim), shared::domain::VoteChange::Like, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(views(&store, &key).await, Some(1));
    let counts = |s: &PostSummary| (s.view_count, s.like_count, s.comment_count);
    let before = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(counts(&before.post.summary), (1, 2, 3));

    let id = id_of(&kim);
    let items = [
        Owned::Post(key.clone()),
        Owned::Comment(comment_key("free", &pid, &mine.id)),
        Owned::Like(key.clone()),
        // Another member's: left as it is.
        Owned::Post(post_key("free", &theirs.summary.id)),
        Owned::Comment(comment_key("free", &pid, &their_comment.id)),
        // Gone: skipped.
        Owned::Post(post_key("free", &new_id())),
    ];
    store.disown(&id, &items).await.unwrap();
    store.disown(&id, &items).await.unwrap();

    let after = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(after.post.summary.author, Author::deleted_member());
    assert_eq!(counts(&after.post.summary), (1, 2, 3), "the counts stay");
    assert_eq!(
        (&after.post.body, &after.post.summary.title),
        (&p.body, &p.summary.title)
    );
    let authors: Vec<(&str, &Author)> = after.comments.iter().map(|c| (c.id.as_str(), &c.author)).collect();
    assert_eq!(
        authors,
        vec![
            (mine.id.as_str(), &Author::deleted_member()),
            (guests.id.as_str(), &guests.author),
            (their_comment.id.as_str(), &authored_by(&other)),
        ]
    );
    assert_eq!(
        after.comments[0],
        Comment {
            author: Author::deleted_member(),
            ..mine.clone()
        }
    );
    let page = store.list_comments(&key, limit(10), None).await.unwrap().unwrap();
    assert_eq!(page.comments, after.comments);
    let viewed = store.view_post(&key).await.unwrap().unwrap();
    assert_eq!(viewed.post.summary.author, Author::deleted_member());
    let listed = store.list_posts(&board("free"), limit(20), None).await.unwrap();
    let authors: Vec<(&str, &Author)> = listed.posts.iter().map(|s| (s.id.as_str(), &s.author)).collect();
    assert_eq!(
        authors,
        vec![
            (theirs.summary.id.as_str(), &authored_by(&other)),
            (pid.as_str(), &Author::deleted_member()),
        ]
    );
    assert_eq!(counts(&listed.posts[1]), (2, 2, 3));
    assert!(store.member_posts(&id, limit(20), None).await.unwrap().posts.is_empty());
    assert!(
        store
            .member_comments(&id, limit(20), None)
            .await
            .unwrap()
            .comments
            .is_empty()
    );
    assert_eq!(
        store
            .member_posts(&id_of(&other), limit(20), None)
            .await
            .unwrap()
            .posts
            .len(),
        1
    );
    assert!(
        store.has_liked(&key.post, &id).await.unwrap(),
        "likes are left as they are"
    );
    assert!(store.disown(&id, &[]).await.is_ok());
    // Nothing ties what a deleted account left to an address any more;
    // what was not disowned keeps its keys.
    let guard = store.post_guard(&key).await.unwrap().unwrap();
    assert_eq!((guard.writer, guard.writer_range), (None, None));
    let guard = store
        .comment_guard(&comment_key("free", &pid, &mine.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((guard.writer, guard.writer_range), (None, None));
    let kept = store
        .post_guard(&post_key("free", &theirs.summary.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (kept.writer, kept.writer_range),
        (Some(writer().key), Some(writer().range))
    );
}
