//! Notifications and blocks (docs/API.md, Notifications and blocks;
//! docs/storage.md): a text notifies once, withdrawal holds against late
//! adds, unread counts stay exact under racing adds and marks, a member
//! keeps the newest 1,000, blocks are capped at 500.

use futures::future::join_all;
use shared::domain::notifications::{MAX_BLOCKS, MAX_NOTIFICATIONS};
use shared::domain::{
    Author, BlockEntry, Blocked, Blocking, GuestTag, MemberId, NewNotification, Notification, NotificationKind,
    TextRef, new_id, now,
};

use crate::{Dyn, limit, member, member_id, post_key};

conformance!(
    a_text_notifies_once_and_a_withdrawn_one_never_again,
    withdrawing_a_post_withdraws_its_comments_and_refuses_their_late_adds,
    racing_adds_and_marks_keep_the_unread_count_exact,
    a_member_keeps_the_newest_thousand,
    blocks_are_listed_oldest_first_kept_once_and_capped,
    forgetting_a_member_drops_their_notifications_marks_and_blocks,
);

fn text_on(post: &str, comment: Option<&str>) -> TextRef {
    TextRef {
        post: post_key("free", post),
        comment: comment.map(str::to_owned),
    }
}

fn actor() -> Author {
    Author::Member {
        member_id: new_id(),
        nickname: "writer".into(),
    }
}

fn to(recipient: &MemberId, kind: NotificationKind) -> NewNotification {
    NewNotification {
        recipient: recipient.clone(),
        kind,
        actor: actor(),
        excerpt: "hello".into(),
        created_at: now(),
    }
}

/// Every notification of the member, newest first, paging as a client does.
async fn all_of(store: &Dyn, member: &MemberId) -> Vec<Notification> {
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .notifications(member, limit(100), cursor.as_deref())
            .await
            .unwrap();
        all.extend(page.notifications);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return all,
        }
    }
}

async fn a_text_notifies_once_and_a_withdrawn_one_never_again(store: Dyn) {
    let (alice, bob) = (member_id(), member_id());
    let post = new_id();
    let comment = new_id();
    let text = text_on(&post, Some(&comment));
    let sent = [
        to(&alice, NotificationKind::Comment),
        to(&bob, NotificationKind::Mention),
    ];
    assert!(store.add_notifications(&text, &sent).await.unwrap());
    assert!(
        !store.add_notifications(&text, &sent).await.unwrap(),
        "a redelivery adds nothing"
    );
    assert_eq!(all_of(&store, &alice).await.len(), 1);
    assert_eq!(store.unread_notifications(&bob).await.unwrap(), 1);

    store.withdraw_notifications(&text).await.unwrap();
    assert!(all_of(&store, &alice).await.is_empty());
    assert_eq!(store.unread_notifications(&bob).await.unwrap(), 0);
    assert!(
        !store.add_notifications(&text, &sent).await.unwrap(),
        "a late add of a withdrawn text adds nothing"
    );
    assert_eq!(store.unread_notifications(&alice).await.unwrap(), 0);

    // A text withdrawn before it notified (the stream's order is per item).
    let early = text_on(&post, Some(&new_id()));
    store.withdraw_notifications(&early).await.unwrap();
    assert!(!store.add_notifications(&early, &sent).await.unwrap());
    assert!(all_of(&store, &bob).await.is_empty());
}

async fn withdrawing_a_post_withdraws_its_comments_and_refuses_their_late_adds(store: Dyn) {
    let owner = member_id();
    let (post, other_post) = (new_id(), new_id());
    for comment in [None, Some(new_id()), Some(new_id())] {
        let text = text_on(&post, comment.as_deref());
        assert!(
            store
                .add_notifications(&text, &[to(&owner, NotificationKind::Comment)])
                .await
                .unwrap()
        );
    }
    let elsewhere = text_on(&other_post, Some(&new_id()));
    assert!(
        store
            .add_notifications(&elsewhere, &[to(&owner, NotificationKind::Reply)])
            .await
            .unwrap()
    );
    assert_eq!(store.unread_notifications(&owner).await.unwrap(), 4);

    store.withdraw_notifications(&text_on(&post, None)).await.unwrap();
    let left = all_of(&store, &owner).await;
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].post_id, other_post);
    assert_eq!(store.unread_notifications(&owner).await.unwrap(), 1);
    let late = text_on(&post, Some(&new_id()));
    assert!(
        !store
            .add_notifications(&late, &[to(&owner, NotificationKind::Comment)])
            .await
            .unwrap(),
        "a comment of a withdrawn post notifies nobody"
    );
    // Withdrawing again (a redelivered stream record) changes nothing.
    store.withdraw_notifications(&text_on(&post, None)).await.unwrap();
    assert_eq!(store.unread_notifications(&owner).await.unwrap(), 1);
}

async fn racing_adds_and_marks_keep_the_unread_count_exact(store: Dyn) {
    let reader = member_id();
    let post = new_id();
    let adds = (0..24).map(|_| {
        let store = store.clone();
        let reader = reader.clone();
        let post = post.clone();
        tokio::spawn(async move {
            let text = text_on(&post, Some(&new_id()));
            assert!(
                store
                    .add_notifications(&text, &[to(&reader, NotificationKind::Comment)])
                    .await
                    .unwrap()
            );
        })
    });
    let marks = (0..6).map(|_| {
        let store = store.clone();
        let reader = reader.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(rand::random::<u64>() % 40)).await;
            store.mark_notifications_read(&reader, None).await.unwrap()
        })
    });
    let (added, marked) = futures::join!(join_all(adds), join_all(marks));
    assert!(added.into_iter().all(|a| a.is_ok()));
    assert!(marked.into_iter().all(|m| m.is_ok()));

    let all = all_of(&store, &reader).await;
    assert_eq!(all.len(), 24);
    let unread_listed = all.iter().filter(|n| !n.read).count() as u64;
    let unread = store.unread_notifications(&reader).await.unwrap();
    println!("racing: {unread} of 24 unread after 6 marks among the adds");
    assert_eq!(unread, unread_listed, "the count and the list agree");
    // Read flags are a prefix in time: the mark is one id.
    let first_read = all.iter().position(|n| n.read).unwrap_or(all.len());
    assert!(all[first_read..].iter().all(|n| n.read));

    // Marking up to an older id than the mark changes nothing.
    let oldest = &all.last().unwrap().id;
    assert_eq!(
        store.mark_notifications_read(&reader, Some(oldest)).await.unwrap(),
        unread
    );
    // Two more, marked up to the first of them: exactly the newest stays unread.
    for _ in 0..2 {
        let text = text_on(&post, Some(&new_id()));
        assert!(
            store
                .add_notifications(&text, &[to(&reader, NotificationKind::Comment)])
                .await
                .unwrap()
        );
    }
    let all = all_of(&store, &reader).await;
    assert_eq!(store.unread_notifications(&reader).await.unwrap(), unread + 2);
    assert_eq!(
        store.mark_notifications_read(&reader, Some(&all[1].id)).await.unwrap(),
        1
    );
    assert_eq!(store.unread_notifications(&reader).await.unwrap(), 1);
    let flags: Vec<bool> = all_of(&store, &reader).await.iter().take(2).map(|n| n.read).collect();
    assert_eq!(flags, [false, true]);
}

async fn a_member_keeps_the_newest_thousand(store: Dyn) {
    let reader = member_id();
    let post = new_id();
    let mut first = None;
    for at in 0..MAX_NOTIFICATIONS + 3 {
        let comment = new_id();
        if at < 3 {
            first.get_or_insert_with(Vec::new).push(comment.clone());
        }
        let text = text_on(&post, Some(&comment));
        assert!(
            store
                .add_notifications(&text, &[to(&reader, NotificationKind::Comment)])
                .await
                .unwrap()
        );
    }
    let all = all_of(&store, &reader).await;
    assert_eq!(all.len(), MAX_NOTIFICATIONS);
    let kept: Vec<&str> = all.iter().filter_map(|n| n.comment_id.as_deref()).collect();
    assert!(
        first.unwrap().iter().all(|c| !kept.contains(&c.as_str())),
        "the oldest three went"
    );
    assert_eq!(
        store.unread_notifications(&reader).await.unwrap(),
        MAX_NOTIFICATIONS as u64
    );
}

async fn blocks_are_listed_oldest_first_kept_once_and_capped(store: Dyn) {
    let blocker = member_id();
    let blocked = member("blocked_one");
    let member_entry = BlockEntry {
        blocked: Blocked::Member(MemberId::parse(&blocked.id).unwrap()),
        created_at: "2026-01-02T00:00:00.000Z".into(),
        member: Some(blocked.clone()),
    };
    let guest_entry = BlockEntry {
        blocked: Blocked::Guest(GuestTag::parse("abcdefgh".into()).unwrap()),
        created_at: "2026-01-01T00:00:00.000Z".into(),
        member: None,
    };
    assert_eq!(store.block(&blocker, &guest_entry).await.unwrap(), Blocking::Added);
    assert_eq!(store.block(&blocker, &member_entry).await.unwrap(), Blocking::Added);
    assert_eq!(store.block(&blocker, &member_entry).await.unwrap(), Blocking::Already);
    let list = store.blocks(&blocker).await.unwrap();
    assert_eq!(
        list,
        vec![guest_entry.clone(), member_entry.clone()],
        "oldest first, names kept"
    );
    assert!(store.unblock(&blocker, &guest_entry.blocked).await.unwrap());
    assert!(!store.unblock(&blocker, &guest_entry.blocked).await.unwrap());
    assert_eq!(store.blocks(&blocker).await.unwrap(), vec![member_entry.clone()]);

    // Up to the cap, racing blocks all land; one more is refused.
    let more = (1..MAX_BLOCKS).map(|i| {
        let store = store.clone();
        let blocker = blocker.clone();
        tokio::spawn(async move {
            let entry = BlockEntry {
                blocked: Blocked::Member(member_id()),
                created_at: format!("2026-02-01T00:00:{:02}.{:03}Z", i / 1000, i % 1000),
                member: None,
            };
            store.block(&blocker, &entry).await.unwrap()
        })
    });
    let results = join_all(more).await;
    assert!(results.into_iter().all(|r| r.unwrap() == Blocking::Added));
    assert_eq!(store.blocks(&blocker).await.unwrap().len(), MAX_BLOCKS);
    assert_eq!(store.block(&blocker, &guest_entry).await.unwrap(), Blocking::Full);
    assert_eq!(store.block(&blocker, &member_entry).await.unwrap(), Blocking::Already);
}

async fn forgetting_a_member_drops_their_notifications_marks_and_blocks(store: Dyn) {
    let (gone, stays) = (member_id(), member_id());
    let text = text_on(&new_id(), None);
    let sent = [
        to(&gone, NotificationKind::Mention),
        to(&stays, NotificationKind::Mention),
    ];
    assert!(store.add_notifications(&text, &sent).await.unwrap());
    store.mark_notifications_read(&gone, None).await.unwrap();
    let entry = BlockEntry {
        blocked: Blocked::Member(stays.clone()),
        created_at: now(),
        member: None,
    };
    store.block(&gone, &entry).await.unwrap();

    store.forget_member(&gone).await.unwrap();
    store.forget_member(&gone).await.unwrap();
    assert!(all_of(&store, &gone).await.is_empty());
    assert_eq!(store.unread_notifications(&gone).await.unwrap(), 0);
    assert!(store.blocks(&gone).await.unwrap().is_empty());
    // The text's withdrawal still reaches the others, and writes nothing
    // back for the forgotten member.
    store.withdraw_notifications(&text).await.unwrap();
    assert!(all_of(&store, &stays).await.is_empty());
    assert_eq!(store.unread_notifications(&gone).await.unwrap(), 0);
}
