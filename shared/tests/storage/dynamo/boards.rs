//! DynamoDB only: what a voted, categorised, best post's purge leaves
//! (nothing), which index each listing reads, and the backfill that numbers
//! and counts the posts from before v4.

use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::boards::{category, numbered_post};
use crate::dynamo::{items_naming, metered_dynamo_store, plain_client};
use crate::votes::voter;
use crate::{Dyn, board, created_post, limit, member_id, post_key, purged};
use shared::domain::{PostId, Vote, VoteChange, new_id};
use shared::store::dynamo::{DynamoStore, Layout};

#[tokio::test]
async fn a_voted_best_post_in_a_category_leaves_nothing_after_its_purge() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = plain_client().await;
    let store: Dyn = Arc::new(DynamoStore::with_client(client.clone(), &table, true).await.unwrap());
    let p = numbered_post(&store, "free", Some("정보")).await;
    let key = post_key("free", &p.summary.id);
    let (liker, disliker) = (member_id(), member_id());
    store.vote(&key, &liker, VoteChange::Like, Some(2)).await.unwrap();
    store.vote(&key, &disliker, VoteChange::Dislike, Some(2)).await.unwrap();
    for vote in [Vote::Like, Vote::Like] {
        store.guest_vote(&key, &voter(), vote, Some(2)).await.unwrap();
    }
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert!(detail.post.summary.best);
    let kinds = |items: &[std::collections::HashMap<String, AttributeValue>]| {
        let mut sks: Vec<String> = items
            .iter()
            .map(|i| i["SK"].as_s().unwrap().split('#').next().unwrap().to_owned())
            .collect();
        sks.sort();
        sks.dedup();
        sks
    };
    let before = items_naming(&client, &table, &p.summary.id).await;
    // The post, its gate, member and guest votes and counter shards.
    for kind in ["POST", "GATE", "MEMBER", "GUEST"] {
        assert!(kinds(&before).iter().any(|k| k == kind), "{kind}: {:?}", kinds(&before));
    }
    assert!(store.delete_post(&key, false).await.unwrap());
    purged(&store).await;
    assert!(items_naming(&client, &table, &p.summary.id).await.is_empty());
    assert!(
        store
            .list_best(&board("free"), None, limit(10), None)
            .await
            .unwrap()
            .posts
            .is_empty()
    );
    assert!(
        store
            .list_category(&board("free"), &category("정보"), limit(10), None)
            .await
            .unwrap()
            .posts
            .is_empty()
    );
    assert_eq!(
        store.post_by_number(&board("free"), p.summary.number).await.unwrap(),
        None
    );
    assert_eq!(store.member_vote(&key.post, &disliker).await.unwrap(), None);
}

#[tokio::test]
async fn each_listing_reads_its_own_index_and_no_post_of_another_category() {
    let (store, _, meter) = metered_dynamo_store(Layout::default()).await;
    let dyn_store: Dyn = store.clone();
    let mut info = Vec::new();
    for i in 0..40 {
        let in_info = i % 20 == 0;
        let p = numbered_post(&dyn_store, "free", in_info.then_some("정보")).await;
        if in_info {
            info.push(p);
        }
    }
    dyn_store
        .vote(
            &post_key("free", &info[0].summary.id),
            &member_id(),
            VoteChange::Like,
            Some(1),
        )
        .await
        .unwrap();
    meter.take();
    let page = dyn_store
        .list_category(&board("free"), &category("정보"), limit(20), None)
        .await
        .unwrap();
    assert_eq!(page.posts.len(), 2);
    let used = meter.take();
    assert_eq!(used.indexes.keys().collect::<Vec<_>>(), ["ByCategory"], "{used:?}");
    let best = dyn_store
        .list_best(&board("free"), None, limit(20), None)
        .await
        .unwrap();
    assert_eq!(best.posts.len(), 1);
    let used = meter.take();
    assert_eq!(used.indexes.keys().collect::<Vec<_>>(), ["Best"], "{used:?}");
    let found = dyn_store
        .post_by_number(&board("free"), info[1].summary.number)
        .await
        .unwrap();
    assert_eq!(found, Some(PostId::from_stored(info[1].summary.id.clone())));
    let used = meter.take();
    assert_eq!(used.indexes.keys().collect::<Vec<_>>(), ["ByNumber"], "{used:?}");
    assert_eq!(used.table.read, 0.0, "a number is found in the index alone");
}

/// Posts from before v4 (no number, not counted): a v4 create reserves
/// their numbers; the backfill gives them `1..` oldest first and counts them;
/// a second run finds nothing.
#[tokio::test]
async fn the_backfill_numbers_and_counts_posts_from_before_v4_once_below_the_new_ones() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = plain_client().await;
    let concrete = DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let store: Dyn = Arc::new(concrete.clone());
    let mut old = Vec::new();
    for _ in 0..5 {
        old.push(created_post(&store, "free").await);
    }
    let other_board = created_post(&store, "qna").await;
    // Back to v3: no number, no count.
    for p in old.iter().chain([&other_board]) {
        client
            .update_item()
            .table_name(&table)
            .key("PK", AttributeValue::S(format!("POST#{}", p.summary.id)))
            .key("SK", AttributeValue::S("POST".into()))
            .update_expression("REMOVE #number")
            .expression_attribute_names("#number", "number")
            .send()
            .await
            .unwrap();
    }
    for board_slug in ["free", "qna"] {
        client
            .delete_item()
            .table_name(&table)
            .key("PK", AttributeValue::S(format!("POSTS#{board_slug}")))
            .key("SK", AttributeValue::S("LIVE".into()))
            .send()
            .await
            .unwrap();
    }
    // A pre-v4 post deleted before the backfill is not uncounted.
    let gone = old.remove(2);
    // v4 serves: the board's first allocation reserves 1..=6 for them.
    let new = numbered_post(&store, "free", None).await;
    assert_eq!(new.summary.number, 6);
    assert!(
        store
            .delete_post(&post_key("free", &gone.summary.id), false)
            .await
            .unwrap()
    );
    assert_eq!(
        store.post_counts(&[board("free"), board("qna")]).await.unwrap(),
        vec![1, 0]
    );

    let done = concrete.backfill().await.unwrap();
    assert_eq!(done.posts_numbered, 5, "{done:?}");
    for (i, p) in old.iter().enumerate() {
        let detail = store
            .post_detail(&post_key("free", &p.summary.id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(detail.post.summary.number, i as u64 + 1, "oldest first");
        assert_eq!(
            store.post_by_number(&board("free"), i as u64 + 1).await.unwrap(),
            Some(PostId::from_stored(p.summary.id.clone()))
        );
    }
    let qna = store
        .post_detail(&post_key("qna", &other_board.summary.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(qna.post.summary.number, 1);
    assert_eq!(
        store.post_counts(&[board("free"), board("qna")]).await.unwrap(),
        vec![5, 1]
    );
    assert_eq!(concrete.backfill().await.unwrap().posts_numbered, 0);
    assert_eq!(store.allocate_post_number(&board("free")).await.unwrap(), 7);
    assert_eq!(store.allocate_post_number(&board("qna")).await.unwrap(), 2);
    // A backfilled post's delete uncounts it.
    assert!(
        store
            .delete_post(&post_key("free", &old[0].summary.id), false)
            .await
            .unwrap()
    );
    assert_eq!(store.post_counts(&[board("free")]).await.unwrap(), vec![4]);
}
