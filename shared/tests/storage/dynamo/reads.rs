//! What reading posts costs, and the read cache.

use std::sync::Arc;

use crate::dynamo::{counted_dynamo_store, counted_dynamodb, counted_dynamodb_with};
use crate::{Dyn, add_comments, board, comment, comment_count, created_post, endpoint, limit, post_key, views, writer};
use futures::future::join_all;
use shared::domain::{COMMENTS_PAGE, new_id};
use shared::store::dynamo::{DynamoStore, Layout, RequestCounter, SdkTuning, client_config};

/// DynamoDB only: the cost in requests of reading a post and counting the
/// view, whatever the comments: the post (GetItem) and its first comments
/// (one Query with Limit 51) side by side, then the view (UpdateItem on one
/// counter shard) and the other shards (BatchGetItem) side by side.
#[tokio::test]
async fn reading_a_post_and_counting_its_view_costs_four_dynamodb_requests_whatever_the_comments() {
    let one_shard = Layout {
        counter_shards: 1,
        ..Layout::default()
    };
    let (store, counter) = counted_dynamodb_with(one_shard).await;
    let p = created_post(&store, "free").await;
    let id = p.summary.id.clone();
    let key = post_key("free", &id);
    // A shard's first write creates it, in a transaction that checks the
    // post exists.
    let before = counter.count();
    assert_eq!(views(&store, &key).await, Some(1));
    let first = counter.count() - before;
    assert_eq!(
        first, 6,
        "post + comments, the view, the other shards, then the shard-creating transaction, the view"
    );

    for comments in [0usize, 5, 420] {
        let have = comment_count(&store, "free", &id).await as usize;
        let bodies: Vec<usize> = (have..comments).collect();
        for chunk in bodies.chunks(10) {
            let writes = chunk.iter().map(|i| {
                // 2,000-character bodies: 420 of them make about 0.85 MB.
                let (store, c) = (
                    store.clone(),
                    comment(&id, None, &format!("{i:04}{}", "x".repeat(1996))),
                );
                tokio::spawn(async move {
                    store
                        .create_comment(&board("free"), &c, &writer(), None, false, None)
                        .await
                })
            });
            for result in join_all(writes).await {
                result.unwrap().unwrap();
            }
        }
        let before = counter.count();
        let detail = store.view_post(&key).await.unwrap().unwrap();
        let requests = counter.count() - before;
        assert_eq!(detail.comments.len(), comments.min(COMMENTS_PAGE));
        assert_eq!(detail.comments_next_cursor.is_some(), comments > COMMENTS_PAGE);
        assert_eq!(detail.post.summary.comment_count, comments as u64);
        assert_eq!(requests, 4, "{requests} requests for a post with {comments} comments");
    }
}

/// DynamoDB only: a post read, and a comments page, cost the same number of
/// requests for 10 comments as for 300.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_post_detail_costs_the_same_dynamodb_requests_for_10_and_300_comments() {
    let (store, counter) = counted_dynamodb().await;
    let mut detail_costs = Vec::new();
    let mut page_costs = Vec::new();
    for comments in [10usize, 300] {
        let p = created_post(&store, "free").await;
        add_comments(&store, "free", &p.summary.id, comments).await;
        let key = post_key("free", &p.summary.id);

        let before = counter.count();
        let detail = store.post_detail(&key).await.unwrap().unwrap();
        detail_costs.push(counter.count() - before);
        assert_eq!(detail.post.summary.comment_count, comments as u64);
        assert_eq!(detail.comments.len(), comments.min(COMMENTS_PAGE));

        let before = counter.count();
        let page = store.list_comments(&key, limit(100), None).await.unwrap().unwrap();
        page_costs.push(counter.count() - before);
        assert_eq!(page.comments.len(), comments.min(100));
    }
    println!(
        "DynamoDB requests for a post detail: {} with 10 comments, {} with 300; \
         for a comments page of 100: {} and {}",
        detail_costs[0], detail_costs[1], page_costs[0], page_costs[1]
    );
    assert_eq!(detail_costs[0], detail_costs[1], "post detail cost grows with comments");
    assert_eq!(page_costs[0], page_costs[1], "comments page cost grows with comments");
}

/// DynamoDB only: with `READ_CACHE_TTL_MS` on, a repeated view is one
/// request (its shard's update), a process reads its own writes at once,
/// and another process's writes show once the TTL has passed.
#[tokio::test]
async fn the_read_cache_serves_repeated_views_with_one_write_and_forgets_its_own_writes() {
    let ttl = std::time::Duration::from_millis(500);
    let cached = Layout {
        counter_shards: 1,
        read_cache_ttl: ttl,
    };
    let counter = RequestCounter::default();
    let config = client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
        .await
        .unwrap()
        .interceptor(counter.clone())
        .build();
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(config);
    let this: Dyn = Arc::new(
        DynamoStore::with_client(client.clone(), &table, true)
            .await
            .unwrap()
            .with_layout(cached),
    );
    // Every process of a deployment has the same shard count (one setting).
    let uncached = Layout {
        counter_shards: 1,
        ..Layout::default()
    };
    let other: Dyn = Arc::new(
        DynamoStore::with_client(client, &table, false)
            .await
            .unwrap()
            .with_layout(uncached),
    );
    let p = created_post(&this, "free").await;
    let key = post_key("free", &p.summary.id);
    assert_eq!(views(&this, &key).await, Some(1));

    let before = counter.count();
    assert_eq!(views(&this, &key).await, Some(2));
    assert_eq!(counter.count() - before, 1, "a cached view is its shard's update only");

    // Its own comment shows at once.
    this.create_comment(
        &board("free"),
        &comment(&p.summary.id, None, "mine"),
        &writer(),
        None,
        false,
        None,
    )
    .await
    .unwrap();
    let detail = this.view_post(&key).await.unwrap().unwrap();
    assert_eq!((detail.comments.len(), detail.post.summary.comment_count), (1, 1));
    assert_eq!(detail.post.summary.view_count, 3);

    // Another process's comment and views show within the TTL.
    other
        .create_comment(
            &board("free"),
            &comment(&p.summary.id, None, "theirs"),
            &writer(),
            None,
            false,
            None,
        )
        .await
        .unwrap();
    assert_eq!(views(&other, &key).await, Some(4));
    let stale = this.view_post(&key).await.unwrap().unwrap();
    assert_eq!(stale.comments.len(), 1, "served from the cache");
    assert_eq!(
        stale.post.summary.view_count, 5,
        "the shard's own count is always fresh"
    );
    tokio::time::sleep(ttl + std::time::Duration::from_millis(100)).await;
    let fresh = this.view_post(&key).await.unwrap().unwrap();
    assert_eq!((fresh.comments.len(), fresh.post.summary.comment_count), (2, 2));
    assert_eq!(fresh.post.summary.view_count, 6);

    // A post deleted elsewhere is gone at the next view, cache or not.
    assert!(other.delete_post(&key, false).await.unwrap());
    assert_eq!(views(&this, &key).await, None);
}

/// DynamoDB only (docs/DESIGN.md, "At internet scale"): the read cache
/// keeps the hot posts while a crawler reads 1,000 cold posts once each.
/// 16 hot posts are viewed in turn, a cold one after every hot view, through
/// the store with `READ_CACHE_TTL_MS` of 60 s (long enough that only
/// eviction, not expiry, can lose an entry). Prints the hit rates and the
/// read units a hot view cost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hot_posts_stay_in_the_read_cache_under_a_scan_of_a_thousand_cold_posts() {
    let meter = shared::store::dynamo::CapacityMeter::default();
    let (dynamo, _) = counted_dynamo_store(Layout {
        read_cache_ttl: std::time::Duration::from_secs(60),
        ..Layout::default()
    })
    .await;
    let dynamo = Arc::new(dynamo.metered(meter.clone()));
    let store: Dyn = dynamo.clone();
    let mut keys = Vec::new();
    for chunk in (0..1_016).collect::<Vec<_>>().chunks(50) {
        let writes = chunk.iter().map(|_| created_post(&store, "free"));
        keys.extend(
            join_all(writes)
                .await
                .into_iter()
                .map(|p| post_key("free", &p.summary.id)),
        );
    }
    let (hot, cold) = keys.split_at(16);
    let before = dynamo.read_cache_stats()[0];
    meter.take();
    let (mut hot_reads, mut hot_units) = (0u64, 0.0f64);
    for (i, cold_key) in cold.iter().enumerate() {
        store.view_post(&hot[i % hot.len()]).await.unwrap().unwrap();
        hot_units += meter.take().table.read;
        hot_reads += 1;
        store.view_post(cold_key).await.unwrap().unwrap();
        meter.take();
    }
    let after = dynamo.read_cache_stats()[0];
    let (hits, misses) = (after.hits - before.hits, after.misses - before.misses);
    // Every cold read misses (each is read once): the misses beyond them are hot ones.
    let hot_misses = misses.saturating_sub(cold.len() as u64);
    let hot_rate = 1.0 - hot_misses as f64 / hot_reads as f64;
    println!(
        "read cache on DynamoDB Local: 16 hot posts + 1,000 cold read once, alternating: \
         {hits} hits, {misses} misses; hot hit rate {:.1}% ({hot_misses} hot misses of {hot_reads}), \
         {:.3} RCU per hot read",
        hot_rate * 1e2,
        hot_units / hot_reads as f64
    );
    assert!(hot_rate > 0.95, "the hot posts stayed cached: {hot_rate}");
}

/// DynamoDB only: what a view writes, alone and in the batches a
/// long-lived process could write (docs/storage.md, Views in batches). A
/// counter-shard update is billed by the item's size, not by how much it
/// adds: 100 views of one post cost 100 write units one by one and 1 as
/// one batch; 10 posts with 10 views each, 10 units.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_views_writes_one_unit_per_post_whatever_its_views() {
    let one_shard = Layout {
        counter_shards: 1,
        ..Layout::default()
    };
    let (dynamo, counter, meter) = crate::dynamo::metered_dynamo_store(one_shard).await;
    let store: Dyn = dynamo.clone();
    let posts: Vec<String> = join_all((0..10).map(|_| created_post(&store, "free")))
        .await
        .into_iter()
        .map(|p| p.summary.id)
        .collect();
    let keys: Vec<_> = posts.iter().map(|id| post_key("free", id)).collect();
    // One shard per post, made by a first view: no write below creates one.
    for key in &keys {
        views(&store, key).await.unwrap();
    }
    meter.take();
    let before = counter.count();
    for _ in 0..100 {
        store.add_views(&[(keys[0].clone(), 1)]).await.unwrap();
    }
    let one_by_one = (counter.count() - before, meter.take().table.write);
    let batch_of_one_post = {
        let before = counter.count();
        store.add_views(&[(keys[0].clone(), 100)]).await.unwrap();
        (counter.count() - before, meter.take().table.write)
    };
    let batch_of_ten_posts = {
        let before = counter.count();
        let batch: Vec<_> = keys.iter().map(|key| (key.clone(), 10)).collect();
        store.add_views(&batch).await.unwrap();
        (counter.count() - before, meter.take().table.write)
    };
    println!(
        "100 views of one post: one by one {} requests / {} WCU; one batch {} / {} WCU; \
         10 posts x 10 views in one batch {} / {} WCU",
        one_by_one.0,
        one_by_one.1,
        batch_of_one_post.0,
        batch_of_one_post.1,
        batch_of_ten_posts.0,
        batch_of_ten_posts.1
    );
    assert_eq!(one_by_one, (100, 100.0));
    assert_eq!(batch_of_one_post, (1, 1.0));
    assert_eq!(batch_of_ten_posts, (10, 10.0));
    let detail = store.post_detail(&keys[0]).await.unwrap().unwrap();
    assert_eq!(detail.post.summary.view_count, 1 + 100 + 100 + 10);
}
