//! Votes and best posts: a member's like and dislike exclude each
//! other, a guest votes once, counts are exact under racing votes, the
//! crossing vote marks the post best once and for good unless staff took
//! it out, and a deleted post takes no vote.

use crate::boards::{category, numbered_post};
use crate::moderation::log_entry;
use crate::{Dyn, board, created_post, limit, member_id, post_key, purged};
use futures::future::join_all;
use shared::domain::{LogAction, LogTarget, MemberId, PostKey, Tally, Vote, VoteChange, WriterKey, new_id};
use shared::store::GuestVoted;

conformance!(
    liking_and_unliking_are_idempotent,
    fifty_members_liking_one_post_at_once_are_all_counted,
    one_member_liking_twenty_times_at_once_counts_once,
    a_members_like_and_dislike_exclude_each_other_and_repeat_harmlessly,
    a_guest_votes_once_per_post_and_key,
    racing_members_and_guests_are_all_counted_exactly,
    the_vote_that_crosses_best_likes_makes_the_post_best_for_good,
    racing_votes_make_a_post_best_exactly_once,
    a_post_staff_took_out_never_becomes_best_again,
    the_best_list_pages_newest_first_and_filters_by_category,
    a_deleted_post_takes_no_vote,
);

/// A distinct guest address key.
pub(crate) fn voter() -> WriterKey {
    WriterKey::new(format!("voter{}", new_id().to_lowercase()))
}

async fn vote(store: &Dyn, key: &PostKey, member: &MemberId, change: VoteChange, best_at: Option<u32>) -> Tally {
    store.vote(key, member, change, best_at).await.unwrap().unwrap()
}

fn counts(tally: &Tally) -> (u64, u64, Option<Vote>) {
    (tally.like_count, tally.dislike_count, tally.mine)
}

async fn summary_counts(store: &Dyn, key: &PostKey) -> (u64, Option<u64>, bool) {
    let s = store.post_detail(key).await.unwrap().unwrap().post.summary;
    (s.like_count, s.dislike_count, s.best)
}

fn unbest_entry(post_id: &str) -> shared::domain::LogEntry {
    log_entry(
        LogAction::Unbest,
        LogTarget::Post {
            post_id: post_id.to_owned(),
            title: "numbered".into(),
        },
    )
}

async fn best_ids(store: &Dyn, board_slug: &str) -> Vec<String> {
    let page = store
        .list_best(&board(board_slug), None, limit(100), None)
        .await
        .unwrap();
    page.posts.iter().map(|p| p.id.clone()).collect()
}

async fn a_members_like_and_dislike_exclude_each_other_and_repeat_harmlessly(store: Dyn) {
    let p = numbered_post(&store, "free", None).await;
    let key = post_key("free", &p.summary.id);
    let (m, other) = (member_id(), member_id());
    vote(&store, &key, &other, VoteChange::Like, None).await;
    assert_eq!(
        counts(&vote(&store, &key, &m, VoteChange::Like, None).await),
        (2, 0, Some(Vote::Like))
    );
    for _ in 0..2 {
        let t = vote(&store, &key, &m, VoteChange::Dislike, None).await;
        assert_eq!(counts(&t), (1, 1, Some(Vote::Dislike)), "switched in one change");
    }
    assert_eq!(store.member_vote(&key.post, &m).await.unwrap(), Some(Vote::Dislike));
    assert!(!store.has_liked(&key.post, &m).await.unwrap());
    // An unlike leaves a dislike alone.
    assert_eq!(
        counts(&vote(&store, &key, &m, VoteChange::Unlike, None).await),
        (1, 1, Some(Vote::Dislike))
    );
    assert_eq!(
        counts(&vote(&store, &key, &m, VoteChange::Like, None).await),
        (2, 0, Some(Vote::Like))
    );
    assert_eq!(
        counts(&vote(&store, &key, &m, VoteChange::Undislike, None).await),
        (2, 0, Some(Vote::Like))
    );
    assert!(store.has_liked(&key.post, &m).await.unwrap());
    assert_eq!(
        counts(&vote(&store, &key, &m, VoteChange::Withdraw, None).await),
        (1, 0, None)
    );
    vote(&store, &key, &m, VoteChange::Dislike, None).await;
    for _ in 0..2 {
        assert_eq!(
            counts(&vote(&store, &key, &m, VoteChange::Undislike, None).await),
            (1, 0, None)
        );
    }
    vote(&store, &key, &m, VoteChange::Dislike, None).await;
    assert_eq!(
        counts(&vote(&store, &key, &m, VoteChange::Withdraw, None).await),
        (1, 0, None)
    );
    assert_eq!(store.member_vote(&key.post, &m).await.unwrap(), None);
    vote(&store, &key, &m, VoteChange::Dislike, None).await;
    assert_eq!(summary_counts(&store, &key).await, (1, Some(1), false));
    let page = store.list_posts(&board("free"), limit(5), None).await.unwrap();
    assert_eq!((page.posts[0].like_count, page.posts[0].dislike_count), (1, Some(1)));
}

async fn a_guest_votes_once_per_post_and_key(store: Dyn) {
    let p = numbered_post(&store, "free", None).await;
    let key = post_key("free", &p.summary.id);
    let (first, second) = (voter(), voter());
    let GuestVoted::Counted(t) = store.guest_vote(&key, &first, Vote::Like, None).await.unwrap() else {
        panic!("counted")
    };
    assert_eq!(counts(&t), (1, 0, Some(Vote::Like)));
    for vote in [Vote::Like, Vote::Dislike] {
        assert_eq!(
            store.guest_vote(&key, &first, vote, None).await.unwrap(),
            GuestVoted::AlreadyVoted
        );
    }
    let GuestVoted::Counted(t) = store.guest_vote(&key, &second, Vote::Dislike, None).await.unwrap() else {
        panic!("counted")
    };
    assert_eq!(counts(&t), (1, 1, Some(Vote::Dislike)));
    // The same key on another post is another vote.
    let q = numbered_post(&store, "free", None).await;
    assert!(matches!(
        store
            .guest_vote(&post_key("free", &q.summary.id), &first, Vote::Dislike, None)
            .await
            .unwrap(),
        GuestVoted::Counted(_)
    ));
    assert_eq!(summary_counts(&store, &key).await, (1, Some(1), false));
    assert_eq!(
        store
            .guest_vote(&post_key("qna", &p.summary.id), &voter(), Vote::Like, None)
            .await
            .unwrap(),
        GuestVoted::NoSuchPost
    );
}

async fn racing_members_and_guests_are_all_counted_exactly(store: Dyn) {
    let p = numbered_post(&store, "free", None).await;
    let key = post_key("free", &p.summary.id);
    let members = (0..16).map(|i| {
        let (store, key, m) = (store.clone(), key.clone(), member_id());
        tokio::spawn(async move {
            // Half like then switch to a dislike, half like twice.
            vote(&store, &key, &m, VoteChange::Like, Some(1_000)).await;
            let second = if i % 2 == 0 {
                VoteChange::Dislike
            } else {
                VoteChange::Like
            };
            vote(&store, &key, &m, second, Some(1_000)).await
        })
    });
    let guests = (0..16).map(|i| {
        let (store, key, v) = (store.clone(), key.clone(), voter());
        tokio::spawn(async move {
            let vote = if i % 4 == 0 { Vote::Dislike } else { Vote::Like };
            store.guest_vote(&key, &v, vote, Some(1_000)).await.unwrap()
        })
    });
    for result in join_all(members).await {
        result.unwrap();
    }
    for result in join_all(guests).await {
        assert!(matches!(result.unwrap(), GuestVoted::Counted(_)));
    }
    // Members: 8 likes, 8 dislikes; guests: 12 likes, 4 dislikes.
    assert_eq!(summary_counts(&store, &key).await, (20, Some(12), false));
}

async fn the_vote_that_crosses_best_likes_makes_the_post_best_for_good(store: Dyn) {
    let p = numbered_post(&store, "free", None).await;
    let key = post_key("free", &p.summary.id);
    let at = Some(3);
    let disliker = member_id();
    assert!(!vote(&store, &key, &member_id(), VoteChange::Like, at).await.best);
    assert!(!vote(&store, &key, &member_id(), VoteChange::Like, at).await.best);
    // A dislike holds it back: 2 - 1.
    assert!(!vote(&store, &key, &disliker, VoteChange::Dislike, at).await.best);
    let GuestVoted::Counted(t) = store.guest_vote(&key, &voter(), Vote::Like, at).await.unwrap() else {
        panic!("counted")
    };
    assert!(!t.best, "3 - 1 is under 3");
    let crossing = vote(&store, &key, &disliker, VoteChange::Withdraw, at).await;
    assert_eq!(
        (crossing.like_count, crossing.dislike_count, crossing.best),
        (3, 0, true)
    );
    assert_eq!(best_ids(&store, "free").await, vec![p.summary.id.clone()]);
    assert_eq!(summary_counts(&store, &key).await, (3, Some(0), true));
    // Later votes do not undo it.
    for _ in 0..4 {
        assert!(vote(&store, &key, &member_id(), VoteChange::Dislike, at).await.best);
    }
    assert_eq!(summary_counts(&store, &key).await, (3, Some(4), true));
    let page = store.list_posts(&board("free"), limit(5), None).await.unwrap();
    assert!(page.posts[0].best);
    // A board without best posts makes none.
    let q = numbered_post(&store, "free", None).await;
    let q_key = post_key("free", &q.summary.id);
    for _ in 0..3 {
        assert!(!vote(&store, &q_key, &member_id(), VoteChange::Like, None).await.best);
    }
    assert_eq!(best_ids(&store, "free").await, vec![p.summary.id.clone()]);
}

async fn racing_votes_make_a_post_best_exactly_once(store: Dyn) {
    let p = numbered_post(&store, "free", None).await;
    let key = post_key("free", &p.summary.id);
    let at = Some(10);
    let members = (0..16).map(|_| {
        let (store, key, m) = (store.clone(), key.clone(), member_id());
        tokio::spawn(async move { vote(&store, &key, &m, VoteChange::Like, at).await })
    });
    let guests = (0..16).map(|i| {
        let (store, key, v) = (store.clone(), key.clone(), voter());
        tokio::spawn(async move {
            let vote = if i % 4 == 0 { Vote::Dislike } else { Vote::Like };
            store.guest_vote(&key, &v, vote, at).await.unwrap()
        })
    });
    let mut best_answers = 0;
    for result in join_all(members).await {
        best_answers += usize::from(result.unwrap().best);
    }
    for result in join_all(guests).await {
        let GuestVoted::Counted(t) = result.unwrap() else {
            panic!("counted")
        };
        best_answers += usize::from(t.best);
    }
    assert!(best_answers >= 1, "the crossing vote answers best");
    assert_eq!(summary_counts(&store, &key).await, (28, Some(4), true));
    assert_eq!(best_ids(&store, "free").await, vec![p.summary.id.clone()]);
}

async fn a_post_staff_took_out_never_becomes_best_again(store: Dyn) {
    let p = numbered_post(&store, "free", None).await;
    let key = post_key("free", &p.summary.id);
    assert!(vote(&store, &key, &member_id(), VoteChange::Like, Some(1)).await.best);
    assert!(store.unbest(&key, &unbest_entry(&p.summary.id)).await.unwrap());
    assert!(best_ids(&store, "free").await.is_empty());
    assert_eq!(summary_counts(&store, &key).await, (1, Some(0), false));
    for _ in 0..3 {
        assert!(!vote(&store, &key, &member_id(), VoteChange::Like, Some(1)).await.best);
    }
    assert!(best_ids(&store, "free").await.is_empty());
    // Taken out before it ever crossed: the same.
    let q = numbered_post(&store, "free", None).await;
    let q_key = post_key("free", &q.summary.id);
    assert!(store.unbest(&q_key, &unbest_entry(&q.summary.id)).await.unwrap());
    let GuestVoted::Counted(t) = store.guest_vote(&q_key, &voter(), Vote::Like, Some(1)).await.unwrap() else {
        panic!("counted")
    };
    assert!(!t.best);
    assert!(best_ids(&store, "free").await.is_empty());
    assert_eq!(
        store
            .modlog(&board("free"), limit(10), None)
            .await
            .unwrap()
            .entries
            .len(),
        2
    );
    assert!(
        !store
            .unbest(&post_key("qna", &p.summary.id), &unbest_entry(&p.summary.id))
            .await
            .unwrap()
    );
    assert!(
        !store
            .unbest(&post_key("free", &new_id()), &unbest_entry("gone"))
            .await
            .unwrap()
    );
}

async fn the_best_list_pages_newest_first_and_filters_by_category(store: Dyn) {
    let mut best_info = Vec::new();
    let mut best_all = Vec::new();
    for i in 0..6 {
        let category_name = if i % 2 == 0 { Some("정보") } else { None };
        let p = numbered_post(&store, "free", category_name).await;
        numbered_post(&store, "free", category_name).await; // never best
        assert!(
            vote(
                &store,
                &post_key("free", &p.summary.id),
                &member_id(),
                VoteChange::Like,
                Some(1)
            )
            .await
            .best
        );
        if category_name.is_some() {
            best_info.push(p.summary.id.clone());
        }
        best_all.push(p.summary.id.clone());
    }
    best_all.reverse();
    best_info.reverse();
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .list_best(&board("free"), None, limit(4), cursor.as_deref())
            .await
            .unwrap();
        assert!(page.posts.iter().all(|p| p.best));
        seen.extend(page.posts.iter().map(|p| p.id.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, best_all);
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .list_best(&board("free"), Some(&category("정보")), limit(2), cursor.as_deref())
            .await
            .unwrap();
        assert!(page.posts.iter().all(|p| p.category.as_deref() == Some("정보")));
        seen.extend(page.posts.iter().map(|p| p.id.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, best_info);
    assert!(best_ids(&store, "qna").await.is_empty());
}

async fn a_deleted_post_takes_no_vote(store: Dyn) {
    let p = numbered_post(&store, "free", None).await;
    let key = post_key("free", &p.summary.id);
    let m = member_id();
    vote(&store, &key, &m, VoteChange::Dislike, Some(1)).await;
    store.guest_vote(&key, &voter(), Vote::Like, Some(5)).await.unwrap();
    assert!(store.delete_post(&key, false).await.unwrap());
    for change in [
        VoteChange::Like,
        VoteChange::Dislike,
        VoteChange::Withdraw,
        VoteChange::Unlike,
    ] {
        assert_eq!(store.vote(&key, &member_id(), change, Some(1)).await.unwrap(), None);
        assert_eq!(store.vote(&key, &m, change, Some(1)).await.unwrap(), None);
    }
    assert_eq!(
        store.guest_vote(&key, &voter(), Vote::Like, Some(1)).await.unwrap(),
        GuestVoted::NoSuchPost
    );
    purged(&store).await;
    assert_eq!(store.member_vote(&key.post, &m).await.unwrap(), None);
    assert_eq!(
        store.guest_vote(&key, &voter(), Vote::Like, Some(1)).await.unwrap(),
        GuestVoted::NoSuchPost
    );
    assert!(best_ids(&store, "free").await.is_empty());
}

async fn liking_and_unliking_are_idempotent(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let (m1, m2) = (member_id(), member_id());
    for _ in 0..2 {
        let state = store.vote(&key, &m1, VoteChange::Like, None).await.unwrap().unwrap();
        assert_eq!(state.mine, Some(Vote::Like));
        assert_eq!(state.like_count, 1);
    }
    assert_eq!(
        store
            .vote(&key, &m2, VoteChange::Like, None)
            .await
            .unwrap()
            .unwrap()
            .like_count,
        2
    );
    for _ in 0..2 {
        let state = store.vote(&key, &m1, VoteChange::Unlike, None).await.unwrap().unwrap();
        assert_eq!(state.mine, None);
        assert_eq!(state.like_count, 1);
    }
    assert!(!store.has_liked(&key.post, &m1).await.unwrap());
    assert!(store.has_liked(&key.post, &m2).await.unwrap());
    assert_eq!(
        store
            .vote(&post_key("free", &new_id()), &m1, VoteChange::Like, None)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .vote(&post_key("free", &new_id()), &m1, VoteChange::Unlike, None)
            .await
            .unwrap(),
        None
    );
}

async fn fifty_members_liking_one_post_at_once_are_all_counted(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let members: Vec<MemberId> = (0..50).map(|_| member_id()).collect();
    let likes = members.iter().map(|m| {
        let (store, key, m) = (store.clone(), key.clone(), m.clone());
        tokio::spawn(async move { store.vote(&key, &m, VoteChange::Like, None).await })
    });
    for result in join_all(likes).await {
        assert!(result.unwrap().unwrap().unwrap().mine == Some(Vote::Like));
    }
    assert_eq!(
        store.post_detail(&key).await.unwrap().unwrap().post.summary.like_count,
        50
    );
    for m in &members {
        assert!(store.has_liked(&key.post, m).await.unwrap());
    }
}

async fn one_member_liking_twenty_times_at_once_counts_once(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let same_member = member_id();
    let likes = (0..20).map(|_| {
        let (store, key, m) = (store.clone(), key.clone(), same_member.clone());
        tokio::spawn(async move { store.vote(&key, &m, VoteChange::Like, None).await })
    });
    for result in join_all(likes).await {
        assert!(result.unwrap().unwrap().unwrap().mine == Some(Vote::Like));
    }
    assert_eq!(
        store.post_detail(&key).await.unwrap().unwrap().post.summary.like_count,
        1
    );
}
