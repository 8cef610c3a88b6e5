//! Boards: settings created once and updated with their log entries,
//! live post counts, post numbers unique under racing creates, posts by
//! number, categories listed on their own and changed by staff.

use std::collections::BTreeSet;

use crate::moderation::log_entry;
use crate::{Dyn, board, created_post, edit, limit, member_author, post, post_key, purged, writer};
use futures::future::join_all;
use shared::domain::{BoardSettings, BoardSlug, Category, LogAction, LogTarget, Post, PostId, new_id, now};

conformance!(
    a_board_is_created_once_and_its_update_keeps_its_creation_time,
    the_live_post_counts_follow_creates_and_deletes,
    sixteen_racing_creates_get_sixteen_distinct_numbers_from_one,
    a_post_is_found_by_its_number_until_it_is_deleted,
    a_category_lists_only_its_posts_newest_first_page_by_page,
    staff_and_edits_change_a_posts_category,
);

pub(crate) fn category(name: &str) -> Category {
    Category::from_stored(name.to_owned())
}

fn settings(slug: &str, name: &str) -> BoardSettings {
    let mut settings = BoardSettings::seeded(BoardSlug::from_stored(slug.to_owned()), now());
    settings.name = shared::domain::BoardName::from_stored(name.to_owned());
    settings.categories = vec![category("질문"), category("정보")];
    settings
}

fn board_entry(slug: &str) -> shared::domain::LogEntry {
    log_entry(LogAction::BoardSettings, LogTarget::Board { slug: slug.to_owned() })
}

/// A post on `board_slug` numbered as a create numbers it, in `category`.
pub(crate) async fn numbered_post(store: &Dyn, board_slug: &str, category_name: Option<&str>) -> Post {
    let mut p = post(board_slug, "numbered", member_author());
    p.summary.number = store.allocate_post_number(&board(board_slug)).await.unwrap();
    p.summary.category = category_name.map(str::to_owned);
    store.create_post(&p, &writer(), None, None).await.unwrap();
    p
}

async fn a_board_is_created_once_and_its_update_keeps_its_creation_time(store: Dyn) {
    let seeded = BoardSettings::seeded(BoardSlug::from_stored("zeta".into()), "2026-01-01T00:00:00.000Z".into());
    assert!(store.create_board(&seeded, None).await.unwrap());
    let made = settings("alpha", "Alpha");
    assert!(store.create_board(&made, Some(&board_entry("alpha"))).await.unwrap());
    let again = settings("alpha", "Another");
    assert!(!store.create_board(&again, Some(&board_entry("alpha"))).await.unwrap());
    assert_eq!(store.boards().await.unwrap(), vec![made.clone(), seeded.clone()]);

    let mut changed = settings("alpha", "Renamed");
    changed.categories = vec![category("잡담")];
    changed.best_likes = None;
    changed.created_at = "2030-01-01T00:00:00.000Z".into();
    assert!(store.update_board(&changed, &board_entry("alpha")).await.unwrap());
    let boards = store.boards().await.unwrap();
    let alpha = boards.iter().find(|b| b.slug.as_str() == "alpha").unwrap();
    assert_eq!(
        (alpha.name.as_str(), alpha.best_likes, alpha.categories.clone()),
        ("Renamed", None, vec![category("잡담")])
    );
    assert_eq!(alpha.created_at, made.created_at, "an update keeps created_at");
    assert!(
        !store
            .update_board(&settings("nowhere", "x"), &board_entry("nowhere"))
            .await
            .unwrap()
    );
    assert_eq!(store.boards().await.unwrap().len(), 2);
    // The create and the update with an entry wrote theirs; the refused create
    // and the seeded create none.
    let log = store
        .modlog(&BoardSlug::from_stored("alpha".into()), limit(10), None)
        .await
        .unwrap();
    assert_eq!(log.entries.len(), 2);
    let none = store
        .modlog(&BoardSlug::from_stored("zeta".into()), limit(10), None)
        .await
        .unwrap();
    assert!(none.entries.is_empty());
}

async fn the_live_post_counts_follow_creates_and_deletes(store: Dyn) {
    let slugs = [board("free"), board("qna"), board("notice")];
    assert_eq!(store.post_counts(&slugs).await.unwrap(), vec![0, 0, 0]);
    let mut posts = Vec::new();
    for _ in 0..3 {
        posts.push(numbered_post(&store, "free", None).await);
    }
    numbered_post(&store, "qna", None).await;
    assert_eq!(store.post_counts(&slugs).await.unwrap(), vec![3, 1, 0]);
    assert!(
        store
            .delete_post(&post_key("free", &posts[0].summary.id), false)
            .await
            .unwrap()
    );
    assert!(
        !store
            .delete_post(&post_key("free", &posts[0].summary.id), false)
            .await
            .unwrap()
    );
    assert!(
        !store
            .delete_post(&post_key("qna", &posts[1].summary.id), false)
            .await
            .unwrap()
    );
    assert_eq!(store.post_counts(&slugs).await.unwrap(), vec![2, 1, 0]);
    purged(&store).await;
    assert_eq!(
        store.post_counts(&[board("qna"), board("free")]).await.unwrap(),
        vec![1, 2]
    );
}

async fn sixteen_racing_creates_get_sixteen_distinct_numbers_from_one(store: Dyn) {
    let creates = (0..16).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { numbered_post(&store, "free", None).await })
    });
    let posts: Vec<Post> = join_all(creates).await.into_iter().map(Result::unwrap).collect();
    let numbers: BTreeSet<u64> = posts.iter().map(|p| p.summary.number).collect();
    assert_eq!(
        numbers,
        (1..=16).collect(),
        "distinct, none skipped when every create succeeded"
    );
    for p in &posts {
        let found = store.post_by_number(&board("free"), p.summary.number).await.unwrap();
        assert_eq!(found, Some(PostId::from_stored(p.summary.id.clone())));
    }
    // Another board counts from 1 on its own.
    assert_eq!(store.allocate_post_number(&board("qna")).await.unwrap(), 1);
    assert_eq!(store.allocate_post_number(&board("free")).await.unwrap(), 17);
    let page = store.list_posts(&board("free"), limit(16), None).await.unwrap();
    let listed: BTreeSet<u64> = page.posts.iter().map(|p| p.number).collect();
    assert_eq!(listed, numbers, "summaries carry the number");
}

async fn a_post_is_found_by_its_number_until_it_is_deleted(store: Dyn) {
    let first = numbered_post(&store, "free", None).await;
    let second = numbered_post(&store, "free", None).await;
    assert_eq!(second.summary.number, first.summary.number + 1);
    let by_number = |n| {
        let store = store.clone();
        async move { store.post_by_number(&board("free"), n).await.unwrap() }
    };
    assert_eq!(
        by_number(second.summary.number).await,
        Some(PostId::from_stored(second.summary.id.clone()))
    );
    assert_eq!(by_number(99).await, None);
    assert_eq!(
        store.post_by_number(&board("qna"), first.summary.number).await.unwrap(),
        None
    );
    let detail = store
        .post_detail(&post_key("free", &first.summary.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.post.summary.number, first.summary.number);
    store
        .delete_post(&post_key("free", &first.summary.id), false)
        .await
        .unwrap();
    assert_eq!(by_number(first.summary.number).await, None);
    purged(&store).await;
    assert_eq!(by_number(first.summary.number).await, None);
    // Never given again.
    let third = numbered_post(&store, "free", None).await;
    assert_eq!(third.summary.number, second.summary.number + 1);
}

async fn a_category_lists_only_its_posts_newest_first_page_by_page(store: Dyn) {
    let mut info = Vec::new();
    for i in 0..7 {
        info.push(numbered_post(&store, "free", Some("정보")).await);
        numbered_post(&store, "free", if i % 2 == 0 { None } else { Some("질문") }).await;
    }
    numbered_post(&store, "qna", Some("정보")).await;
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .list_category(&board("free"), &category("정보"), limit(3), cursor.as_deref())
            .await
            .unwrap();
        assert!(page.posts.len() <= 3);
        for p in &page.posts {
            assert_eq!((p.board.as_str(), p.category.as_deref()), ("free", Some("정보")));
            assert!(p.number > 0);
        }
        seen.extend(page.posts.iter().map(|p| p.id.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let mut newest_first: Vec<String> = info.iter().map(|p| p.summary.id.clone()).collect();
    newest_first.reverse();
    assert_eq!(seen, newest_first);
    let questions = store
        .list_category(&board("free"), &category("질문"), limit(20), None)
        .await
        .unwrap();
    assert_eq!(questions.posts.len(), 3);
    let none = store
        .list_category(&board("notice"), &category("정보"), limit(20), None)
        .await
        .unwrap();
    assert!(none.posts.is_empty() && none.next_cursor.is_none());
}

async fn staff_and_edits_change_a_posts_category(store: Dyn) {
    let p = numbered_post(&store, "free", None).await;
    let key = post_key("free", &p.summary.id);
    let listed = |name: &'static str| {
        let store = store.clone();
        async move {
            store
                .list_category(&board("free"), &category(name), limit(20), None)
                .await
                .unwrap()
                .posts
                .iter()
                .map(|p| p.id.clone())
                .collect::<Vec<_>>()
        }
    };
    let recategorize = log_entry(
        LogAction::Recategorize,
        LogTarget::Post {
            post_id: p.summary.id.clone(),
            title: p.summary.title.clone(),
        },
    );
    assert!(
        store
            .set_category(&key, Some(&category("정보")), &recategorize)
            .await
            .unwrap()
    );
    assert_eq!(listed("정보").await, vec![p.summary.id.clone()]);
    let category_of = || {
        let (store, key) = (store.clone(), key.clone());
        async move { store.post_detail(&key).await.unwrap().unwrap().post.summary.category }
    };
    assert_eq!(category_of().await.as_deref(), Some("정보"));
    let mut moved = recategorize.clone();
    moved.id = new_id();
    assert!(store.set_category(&key, Some(&category("질문")), &moved).await.unwrap());
    assert!(listed("정보").await.is_empty());
    assert_eq!(listed("질문").await, vec![p.summary.id.clone()]);
    let log = store.modlog(&board("free"), limit(10), None).await.unwrap();
    assert_eq!(log.entries.len(), 2);

    // An edit keeps the category without `category`, sets or clears it with.
    store.update_post(&key, &edit("t2", "b2", &now())).await.unwrap();
    assert_eq!(category_of().await.as_deref(), Some("질문"));
    let mut set = edit("t3", "b3", &now());
    set.category = Some(Some(category("정보")));
    store.update_post(&key, &set).await.unwrap();
    assert_eq!(category_of().await.as_deref(), Some("정보"));
    assert_eq!(listed("정보").await, vec![p.summary.id.clone()]);
    let mut clear = edit("t4", "b4", &now());
    clear.category = Some(None);
    store.update_post(&key, &clear).await.unwrap();
    assert_eq!(category_of().await, None);
    assert!(listed("정보").await.is_empty() && listed("질문").await.is_empty());

    let mut cleared = recategorize.clone();
    cleared.id = new_id();
    assert!(store.set_category(&key, None, &cleared).await.unwrap());
    let gone = created_post(&store, "free").await;
    store
        .delete_post(&post_key("free", &gone.summary.id), false)
        .await
        .unwrap();
    let mut late = recategorize.clone();
    late.id = new_id();
    assert!(
        !store
            .set_category(&post_key("free", &gone.summary.id), Some(&category("정보")), &late)
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_category(&post_key("qna", &p.summary.id), Some(&category("정보")), &late)
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .modlog(&board("free"), limit(10), None)
            .await
            .unwrap()
            .entries
            .len(),
        3
    );
}
