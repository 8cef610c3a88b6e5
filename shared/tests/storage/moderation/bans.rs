//! Bans: found until they end, replaced at once, paged, second subjects, races.

use crate::moderation::{address, ban_entry, ban_id, ban_of, banned, log_entry, log_of, member_subject};
use crate::{Dyn, NOW, board, limit};
use futures::future::join_all;
use shared::domain::{BanId, BanRecord, BanSubject, LogAction, WriterKey, new_id};
use shared::store::{StoreError, cursor};

conformance!(
    a_ban_of_a_member_or_an_address_is_found_until_it_ends_and_an_unban_or_a_new_ban_replaces_it_at_once,
    active_bans_are_paged_newest_first_without_gaps_skipping_ended_ones,
    concurrent_bans_of_one_writer_leave_exactly_one_active_ban,
    a_bans_second_subject_is_found_with_it_lifted_with_it_and_replaced_with_it,
);

async fn a_ban_of_a_member_or_an_address_is_found_until_it_ends_and_an_unban_or_a_new_ban_replaces_it_at_once(
    store: Dyn,
) {
    let free = board("free");
    let (kim, guest, other) = (
        member_subject(),
        address("bannedaddresskey"),
        address("otheraddresskey"),
    );
    assert_eq!(
        store
            .active_ban(&free, &[kim.clone(), guest.clone()], NOW)
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.active_ban(&free, &[], NOW).await.unwrap(), None);

    let timed = ban_of("free", &kim, Some(NOW + 100));
    banned(&store, &timed).await;
    let found = |subjects: Vec<BanSubject>, at: i64| {
        let store = store.clone();
        async move { store.active_ban(&board("free"), &subjects, at).await.unwrap() }
    };
    assert_eq!(found(vec![kim.clone()], NOW).await, Some(timed.clone()));
    assert_eq!(
        found(vec![other.clone(), kim.clone()], NOW + 99).await,
        Some(timed.clone()),
        "among several subjects"
    );
    assert_eq!(
        found(vec![kim.clone(), other.clone()], NOW + 100).await,
        None,
        "it ended"
    );
    assert_eq!(
        store
            .active_ban(&board("qna"), std::slice::from_ref(&kim), NOW)
            .await
            .unwrap(),
        None,
        "another board"
    );

    let permanent = ban_of("free", &guest, None);
    banned(&store, &permanent).await;
    assert_eq!(
        found(vec![kim.clone(), guest.clone()], NOW).await,
        Some(timed.clone()),
        "the first active one in the subjects' order"
    );
    assert_eq!(
        found(vec![guest.clone(), kim.clone()], NOW).await,
        Some(permanent.clone())
    );
    assert_eq!(
        found(vec![kim.clone(), guest.clone()], NOW + 1_000_000).await,
        Some(permanent.clone()),
        "the member's ended, the address's never ends"
    );
    assert_eq!(
        store.ban_by_id(&free, &ban_id(&permanent)).await.unwrap(),
        Some(permanent.clone())
    );
    assert_eq!(store.ban_by_id(&board("qna"), &ban_id(&permanent)).await.unwrap(), None);
    assert_eq!(
        store.ban_by_id(&free, &BanId::parse(&new_id()).unwrap()).await.unwrap(),
        None
    );

    // An unban ends it at once.
    let lifted = log_entry(LogAction::Unban, permanent.ban.target.clone().into());
    assert!(store.unban(&permanent, &lifted).await.unwrap());
    assert_eq!(found(vec![guest.clone()], NOW).await, None);
    assert_eq!(store.ban_by_id(&free, &ban_id(&permanent)).await.unwrap(), None);
    let again = log_entry(LogAction::Unban, permanent.ban.target.clone().into());
    assert!(!store.unban(&permanent, &again).await.unwrap(), "lifted already");

    // A new ban of the same subject replaces the earlier one.
    let lee = member_subject();
    let earlier = ban_of("free", &lee, None);
    banned(&store, &earlier).await;
    let later = ban_of("free", &lee, Some(NOW + 50));
    banned(&store, &later).await;
    assert_eq!(found(vec![lee.clone()], NOW).await, Some(later.clone()));
    assert_eq!(
        found(vec![lee.clone()], NOW + 50).await,
        None,
        "the permanent one is gone"
    );
    assert_eq!(store.ban_by_id(&free, &ban_id(&earlier)).await.unwrap(), None);
    let listed = store.list_bans(&free, limit(10), None, NOW).await.unwrap();
    assert_eq!(listed.bans, vec![later.ban.clone(), timed.ban.clone()]);
    assert_eq!(listed.next_cursor, None);
    // The replaced ban cannot be lifted; its replacement can.
    let entry = log_entry(LogAction::Unban, earlier.ban.target.clone().into());
    assert!(!store.unban(&earlier, &entry).await.unwrap());
    assert_eq!(found(vec![lee.clone()], NOW).await, Some(later.clone()));
    let entry = log_entry(LogAction::Unban, later.ban.target.clone().into());
    assert!(store.unban(&later, &entry).await.unwrap());
    assert_eq!(found(vec![lee], NOW).await, None);

    let actions: Vec<LogAction> = log_of(&store, "free").await.iter().map(|e| e.action).collect();
    use LogAction::{Ban as B, Unban as U};
    assert_eq!(actions, vec![U, B, B, U, B, B], "newest first, one per change");
}

async fn active_bans_are_paged_newest_first_without_gaps_skipping_ended_ones(store: Dyn) {
    let free = board("free");
    let mut active = Vec::new();
    for i in 0..23 {
        // The oldest is ended, so the last active ban is followed only by ended ones.
        let expires = match i % 3 {
            0 => Some(NOW - 10),
            1 => None,
            _ => Some(NOW + 1_000),
        };
        let subject = if i % 2 == 0 {
            member_subject()
        } else {
            address(&format!("address{i}"))
        };
        let record = ban_of("free", &subject, expires);
        banned(&store, &record).await;
        if record.active_at(NOW) {
            active.push(record.ban);
        }
    }
    banned(&store, &ban_of("qna", &member_subject(), None)).await;
    active.reverse(); // newest first
    assert_eq!(active.len(), 15);

    for page_size in [4, 5, 20] {
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = store
                .list_bans(&free, limit(page_size), cursor.as_deref(), NOW)
                .await
                .unwrap();
            assert!(page.bans.len() <= page_size);
            seen.extend(page.bans);
            match page.next_cursor {
                Some(next) => {
                    assert_eq!(seen.len() % page_size, 0, "only a full page has a cursor");
                    cursor = Some(next);
                }
                None => break,
            }
        }
        assert_eq!(seen, active, "pages of {page_size}");
    }
    // Later the timed ones have ended too.
    let later = store.list_bans(&free, limit(100), None, NOW + 1_000).await.unwrap();
    assert_eq!(later.bans.len(), 8);
    assert!(later.bans.iter().all(|b| b.expires_at.is_none()));
    assert_eq!(
        store.list_bans(&free, limit(5), Some("garbage!"), NOW).await,
        Err(StoreError::InvalidCursor)
    );
    assert_eq!(
        store
            .list_bans(&free, limit(5), Some(&cursor::encode("not-a-ulid")), NOW)
            .await,
        Err(StoreError::InvalidCursor)
    );
}

async fn concurrent_bans_of_one_writer_leave_exactly_one_active_ban(store: Dyn) {
    let subject = address("racingaddresskey");
    let records: Vec<BanRecord> = (0..10).map(|_| ban_of("free", &subject, None)).collect();
    let bans = records.iter().map(|r| {
        let (store, r) = (store.clone(), r.clone());
        tokio::spawn(async move { store.ban(&r, &ban_entry(&r), None).await })
    });
    for result in join_all(bans).await {
        result.unwrap().unwrap();
    }
    let listed = store.list_bans(&board("free"), limit(20), None, NOW).await.unwrap();
    assert_eq!(listed.bans.len(), 1, "one active ban: {listed:?}");
    let found = store
        .active_ban(&board("free"), std::slice::from_ref(&subject), NOW)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.ban, listed.bans[0], "the check finds the listed one");
    for record in &records {
        let stored = store.ban_by_id(&board("free"), &ban_id(record)).await.unwrap();
        assert_eq!(stored.is_some(), record.ban == found.ban, "the others were replaced");
    }
    assert_eq!(log_of(&store, "free").await.len(), 10, "every ban is logged");
}

/// A ban with a second subject (guest writes from where a banned
/// member's post was written) is found by either, goes with its unban, and
/// a ban of the same member that replaces it takes its second subject along.
async fn a_bans_second_subject_is_found_with_it_lifted_with_it_and_replaced_with_it(store: Dyn) {
    let free = board("free");
    let lee = member_subject();
    let (home, elsewhere) = (
        BanSubject::GuestAddress(WriterKey::new("homeaddresskey".into())),
        BanSubject::GuestRange(WriterKey::new("elsewhererangekey".into())),
    );
    let found = |subjects: Vec<BanSubject>| {
        let store = store.clone();
        async move { store.active_ban(&board("free"), &subjects, NOW).await.unwrap() }
    };
    let first = BanRecord {
        also: Some(home.clone()),
        ..ban_of("free", &lee, None)
    };
    banned(&store, &first).await;
    assert_eq!(
        found(vec![home.clone()]).await,
        Some(first.clone()),
        "by its second subject"
    );
    assert_eq!(found(vec![lee.clone()]).await, Some(first.clone()));
    assert_eq!(
        store.ban_by_id(&free, &ban_id(&first)).await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        store
            .active_ban(&board("qna"), std::slice::from_ref(&home), NOW)
            .await
            .unwrap(),
        None,
        "another board"
    );

    // Banned again through another post: the first one's second subject goes.
    let second = BanRecord {
        also: Some(elsewhere.clone()),
        ..ban_of("free", &lee, None)
    };
    banned(&store, &second).await;
    assert_eq!(found(vec![home.clone()]).await, None, "replaced with the ban");
    assert_eq!(found(vec![elsewhere.clone()]).await, Some(second.clone()));
    assert_eq!(
        store.list_bans(&free, limit(10), None, NOW).await.unwrap().bans,
        vec![second.ban.clone()]
    );

    let entry = log_entry(LogAction::Unban, second.ban.target.clone().into());
    assert!(store.unban(&second, &entry).await.unwrap());
    assert_eq!(found(vec![elsewhere, lee]).await, None, "lifted with the ban");
}
