//! What account operations cost, and why the owner index projects summaries.

use std::collections::HashSet;
use std::sync::Arc;

use crate::dynamo::{metered_dynamo_store, plain_client};
use crate::moderation::{log_entry, member_target};
use crate::{
    Dyn, authored_by, board, comment, comment_by, comment_key, guest_post, hash, id_of, limit, member, name_of, post,
    post_by, post_key, views, writer,
};
use shared::domain::{Comment, LogAction, Owned, Post, new_id};
use shared::store::dynamo::{DynamoStore, Layout};

/// DynamoDB only (docs/storage.md, Accounts): the requests and units of
/// every account operation, small items, default layout (16 shards, cache
/// off). Prints the table docs/storage.md shows; pins the request counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_account_operation_costs_a_fixed_number_of_dynamodb_requests() {
    let (dynamo, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let store: Dyn = dynamo.clone();
    let (free, qna, notice) = (board("free"), board("qna"), board("notice"));
    let mut rows: Vec<(&str, u64, f64, f64, String)> = Vec::new();
    macro_rules! measure {
        ($what:expr, $requests:pat, $work:expr) => {{
            meter.take();
            let before = counter.count();
            let out = $work;
            let requests = counter.count() - before;
            let units = meter.take();
            let indexes = units
                .indexes
                .iter()
                .map(|(name, u)| format!("{name} {} / {}", u.read, u.write))
                .collect::<Vec<_>>()
                .join(", ");
            rows.push(($what, requests, units.table.read, units.table.write, indexes));
            assert!(matches!(requests, $requests), "{}: {requests} requests", $what);
            out
        }};
    }
    let (kim, other) = (member("measured"), member("other"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let (id, name) = (id_of(&kim), name_of(&kim));
    measure!("session state, uncached (GetItem, consistent, 4 attributes)", 1, {
        assert_eq!(store.session_state(&id, &name).await.unwrap().map(|s| s.epoch), Some(0))
    });
    measure!("session state, cached (10 s)", 0, {
        assert_eq!(store.session_state(&id, &name).await.unwrap().map(|s| s.epoch), Some(0))
    });
    measure!("end_sessions (UpdateItem)", 1, {
        assert!(store.end_sessions(&id, &name).await.unwrap())
    });
    measure!("change_password (UpdateItem)", 1, {
        assert!(store.change_password(&id, &name, &hash("h2")).await.unwrap())
    });

    // What ByOwner adds to a member's writes (guests' write nothing to it).
    let first = measure!(
        "a member's post (transaction of the post and its board's count; + ByOwner entry)",
        1,
        post_by(&store, "notice", &kim).await
    );
    let key = post_key("notice", &first.summary.id);
    // The like's shard (by member) exists; the comment's (by comment id)
    // may not: its first write creates it (2 more requests).
    store
        .vote(&key, &id, shared::domain::VoteChange::Like, None)
        .await
        .unwrap()
        .unwrap();
    store
        .vote(&key, &id, shared::domain::VoteChange::Unlike, None)
        .await
        .unwrap()
        .unwrap();
    measure!(
        "a member's comment (transaction: comment, shard; + ByOwner entry)",
        1 | 3,
        comment_by(&store, "notice", &first.summary.id, &kim).await
    );
    let liked = measure!(
        "like (BatchGetItem of the vote and the best gate; transaction: like item, shard, gate; BatchGetItem of the shards; + ByOwner entry)",
        3,
        store
            .vote(&key, &id, shared::domain::VoteChange::Like, None)
            .await
            .unwrap()
            .unwrap()
    );
    assert_eq!(liked.mine, Some(shared::domain::Vote::Like));
    // DynamoDB Local reports its flat 4 WCU of a transaction on the index too.
    let indexes = rows.last().map(|r| r.4.clone()).unwrap_or_default();
    assert!(
        indexes.starts_with("ByOwner 0 / ") && !indexes.contains(','),
        "a like writes a ByOwner entry and no other index: {indexes}"
    );
    measure!(
        "unlike (BatchGetItem; transaction; BatchGetItem; - ByOwner entry)",
        3,
        store
            .vote(&key, &id, shared::domain::VoteChange::Unlike, None)
            .await
            .unwrap()
            .unwrap()
    );
    measure!(
        "a guest's post (transaction; no ByOwner entry)",
        1,
        guest_post(&store, "notice").await
    );
    assert!(
        rows.last().is_some_and(|r| !r.4.contains("ByOwner")),
        "{:?}",
        rows.last()
    );

    // 20 posts on two boards, each viewed once (one shard each), and 25
    // comments, others' in between; then some likes.
    let mut mine = Vec::new();
    for i in 0..20 {
        let slug = if i % 2 == 0 { "free" } else { "qna" };
        let p = post_by(&store, slug, &kim).await;
        post_by(&store, slug, &other).await;
        views(&store, &post_key(slug, &p.summary.id)).await.unwrap();
        mine.push(p);
    }
    let mut my_comments = Vec::new();
    for i in 0..25 {
        let p = &mine[i % mine.len()];
        my_comments.push(comment_by(&store, &p.summary.board, &p.summary.id, &kim).await);
    }
    for p in mine.iter().take(5) {
        let key = post_key(&p.summary.board, &p.summary.id);
        store
            .vote(&key, &id, shared::domain::VoteChange::Like, None)
            .await
            .unwrap()
            .unwrap();
    }
    let page = measure!(
        "member_posts, a page of 20 on 2 boards (ByOwner Query; shards by key: 2 BatchGetItems per board)",
        5,
        store.member_posts(&id, limit(20), None).await.unwrap()
    );
    assert_eq!(page.posts.len(), 20);
    assert!(page.posts.iter().all(|s| s.view_count == 1));
    let comments = measure!(
        "member_comments, a page of 20 (ByOwner Query; BatchGetItem of the comments)",
        2,
        store.member_comments(&id, limit(20), None).await.unwrap()
    );
    assert_eq!(comments.comments.len(), 20);
    let batch = measure!(
        "owned, likes too, a batch of 25 (ByOwner Query, descending: posts, likes, comments)",
        1,
        store.owned(&id, true, 25).await.unwrap()
    );
    assert_eq!(batch.len(), 25);
    measure!(
        "owned, no likes, a batch of 30 (ByOwner Queries: the posts, then the comments)",
        2,
        assert_eq!(store.owned(&id, false, 30).await.unwrap().len(), 30)
    );
    let posts_and_comments: Vec<Owned> = mine
        .iter()
        .take(12)
        .map(|p| Owned::Post(post_key(&p.summary.board, &p.summary.id)))
        .chain(my_comments.iter().take(13).map(|c| {
            let slug = &mine.iter().find(|p| p.summary.id == c.post_id).unwrap().summary.board;
            Owned::Comment(comment_key(slug, &c.post_id, &c.id))
        }))
        .collect();
    measure!(
        "disown, 25: 12 posts, 13 comments (UpdateItem each, 8 at a time)",
        25,
        store.disown(&id, &posts_and_comments).await.unwrap()
    );

    let entry = log_entry(LogAction::AddModerator, member_target(&kim));
    store.add_moderator(&free, &kim, &entry).await.unwrap();
    let all = [free.clone(), qna.clone(), notice.clone()];
    let moderates = measure!(
        "moderated_boards, 3 boards, 1 appointment (BatchGetItem, consistent)",
        1,
        store.moderated_boards(&id, &all).await.unwrap()
    );
    assert_eq!(moderates, vec![free.clone()]);
    measure!(
        "close_account, 1 appointment (transaction: tombstone, record, appointment)",
        1,
        assert!(store.close_account(&id, &name, true, &moderates).await.unwrap())
    );
    measure!("pending_deletions (Query)", 1, {
        assert_eq!(store.pending_deletions(10).await.unwrap().len(), 1)
    });
    measure!(
        "finish_deletion (DeleteItem)",
        1,
        store.finish_deletion(&id).await.unwrap()
    );

    println!("| operation | requests | table RCU | table WCU | index RCU / WCU |\n|---|---:|---:|---:|---|");
    for (what, requests, read, write, indexes) in &rows {
        println!("| {what} | {requests} | {read} | {write} | {indexes} |");
    }
}

/// DynamoDB only (docs/storage.md, Accounts): why `ByOwner` projects the
/// summary fields (INCLUDE) and not only its keys. The same member's 21
/// posts and 21 comments go to two tables, one with the index as declared,
/// one with it KEYS_ONLY; a page of 20 then reads, on the first, the index
/// (and, for comments, a BatchGetItem of their bodies: the index holds
/// none); on the second the index and a BatchGetItem of every item of the
/// page. Small items and the largest the API takes. Counter shards are left
/// out: the same both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_index_pages_cost_fewer_read_units_than_a_keys_only_index_and_batch_gets() {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, KeysAndAttributes,
        Projection, ProjectionType, ReturnConsumedCapacity, ScalarAttributeType,
    };
    let client = plain_client().await;
    let def = shared::store::dynamo::schema::TableDefinition::load();
    let keys = |elements: &[shared::store::dynamo::schema::KeyElement]| -> Vec<KeySchemaElement> {
        elements
            .iter()
            .map(|k| {
                KeySchemaElement::builder()
                    .attribute_name(&k.attribute_name)
                    .key_type(KeyType::from(k.key_type.as_str()))
                    .build()
                    .unwrap()
            })
            .collect()
    };
    let keys_only = format!("test-{}", new_id().to_lowercase());
    let mut create = client
        .create_table()
        .table_name(&keys_only)
        .set_key_schema(Some(keys(&def.key_schema)))
        .billing_mode(BillingMode::PayPerRequest);
    for a in &def.attribute_definitions {
        create = create.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(&a.attribute_name)
                .attribute_type(ScalarAttributeType::from(a.attribute_type.as_str()))
                .build()
                .unwrap(),
        );
    }
    for index in &def.global_secondary_indexes {
        let projection = if index.index_name == "ByOwner" {
            Projection::builder().projection_type(ProjectionType::KeysOnly).build()
        } else {
            Projection::builder()
                .projection_type(ProjectionType::from(index.projection.projection_type.as_str()))
                .set_non_key_attributes(
                    (!index.projection.non_key_attributes.is_empty())
                        .then(|| index.projection.non_key_attributes.clone()),
                )
                .build()
        };
        create = create.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(&index.index_name)
                .set_key_schema(Some(keys(&index.key_schema)))
                .projection(projection)
                .build()
                .unwrap(),
        );
    }
    create.send().await.unwrap();

    let (included, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let included: Dyn = included;
    let plain: Dyn = Arc::new(
        DynamoStore::with_client(client.clone(), &keys_only, false)
            .await
            .unwrap(),
    );
    // What the KEYS_ONLY table's page costs: its index Query, then the items.
    let keys_only_page = |prefix: &'static str, member: String, n: usize| {
        let (client, table) = (client.clone(), keys_only.clone());
        async move {
            let out = client
                .query()
                .table_name(&table)
                .index_name("ByOwner")
                .key_condition_expression("#owner = :owner AND begins_with(owner_sk, :prefix)")
                .expression_attribute_names("#owner", "owner")
                .expression_attribute_values(":owner", aws_sdk_dynamodb::types::AttributeValue::S(member))
                .expression_attribute_values(":prefix", aws_sdk_dynamodb::types::AttributeValue::S(prefix.into()))
                .scan_index_forward(false)
                .limit(i32::try_from(n + 1).unwrap())
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .send()
                .await
                .unwrap();
            let index: f64 = out
                .consumed_capacity()
                .and_then(|c| c.global_secondary_indexes())
                .and_then(|i| i.get("ByOwner"))
                .and_then(|c| c.read_capacity_units().or(c.capacity_units()))
                .unwrap_or(0.0);
            let page: Vec<_> = out
                .items()
                .iter()
                .take(n)
                .map(|item| {
                    [("PK", item["PK"].clone()), ("SK", item["SK"].clone())]
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect()
                })
                .collect();
            let got = client
                .batch_get_item()
                .request_items(
                    &table,
                    KeysAndAttributes::builder().set_keys(Some(page)).build().unwrap(),
                )
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .send()
                .await
                .unwrap();
            let items: f64 = got.consumed_capacity().iter().filter_map(|c| c.capacity_units()).sum();
            (index, items, got.responses().map_or(0, |r| r[&table].len()))
        }
    };
    let mut rows = Vec::new();
    for (size, title, body, comment_body) in [
        (
            "small",
            "a title".to_owned(),
            "a body".to_owned(),
            "a comment".to_owned(),
        ),
        ("largest", "제".repeat(200), "한".repeat(20_000), "말".repeat(2_000)),
    ] {
        let kim = member(&format!("projected-{size}"));
        for _ in 0..21 {
            let p = Post {
                body: body.clone(),
                ..post("free", &title, authored_by(&kim))
            };
            let c = Comment {
                author: authored_by(&kim),
                ..comment(&p.summary.id, None, &comment_body)
            };
            for store in [&included, &plain] {
                store.create_post(&p, &writer(), None, None).await.unwrap();
                store
                    .create_comment(&board("free"), &c, &writer(), None, false, None)
                    .await
                    .unwrap();
            }
        }
        // What one post's create writes to the index.
        meter.take();
        let p = Post {
            body: body.clone(),
            ..post("qna", &title, authored_by(&kim))
        };
        included.create_post(&p, &writer(), None, None).await.unwrap();
        let create = meter.take().indexes.get("ByOwner").map_or(0.0, |u| u.write);
        included
            .delete_post(&post_key("qna", &p.summary.id), false)
            .await
            .unwrap();

        let id = id_of(&kim);
        meter.take();
        let before = counter.count();
        let page = included.member_posts(&id, limit(20), None).await.unwrap();
        let posts = meter.take();
        let posts_requests = counter.count() - before;
        // DynamoDB Local cuts an index Query at 1 MB of the whole items
        // (18 of the largest posts), not of the index entries (21 of them
        // are 20 KB) as DynamoDB does: the page then ends early, with a
        // cursor, and the next page goes on from it.
        let shown = page.posts.len();
        assert!(shown == 20 || (size == "largest" && shown >= 16), "{size}: {shown}");
        let rest = included
            .member_posts(&id, limit(20), page.next_cursor.as_deref())
            .await
            .unwrap();
        let listed: HashSet<String> = page.posts.iter().chain(&rest.posts).map(|s| s.id.clone()).collect();
        assert_eq!(
            (listed.len(), page.posts.len() + rest.posts.len()),
            (21, 21),
            "{size}: no gaps, no repeats"
        );
        let posts_index = posts.indexes.get("ByOwner").map_or(0.0, |u| u.read);
        meter.take();
        let page = included.member_comments(&id, limit(20), None).await.unwrap();
        let comments = meter.take();
        let comments_shown = page.comments.len();
        assert!(comments_shown == 20 || size == "largest", "{size}: {comments_shown}");
        let comments_index = comments.indexes.get("ByOwner").map_or(0.0, |u| u.read);
        let (ko_posts_index, ko_posts_items, found) = keys_only_page("POST#", kim.id.clone(), shown).await;
        assert_eq!(found, shown);
        let (ko_comments_index, ko_comments_items, found) =
            keys_only_page("COMMENT#", kim.id.clone(), comments_shown).await;
        assert_eq!(found, comments_shown);
        rows.push(format!(
            "| {shown} posts, {size} | INCLUDE: index {posts_index} RCU (then the shards: {} RCU, {posts_requests} requests in all) \
             | KEYS_ONLY: index {ko_posts_index} + items {ko_posts_items} RCU | index WCU per create: {create} |",
            posts.table.read
        ));
        rows.push(format!(
            "| {comments_shown} comments, {size} | INCLUDE: index {comments_index} + bodies {} RCU \
             | KEYS_ONLY: index {ko_comments_index} + items {ko_comments_items} RCU | |",
            comments.table.read
        ));
        assert!(
            posts_index < ko_posts_index + ko_posts_items,
            "{size}: INCLUDE {posts_index}, KEYS_ONLY {ko_posts_index} + {ko_posts_items}"
        );
        assert!(
            comments_index + comments.table.read <= ko_comments_index + ko_comments_items + 1.0,
            "{size}: comments cost about the same both ways"
        );
    }
    println!("a member's page of 20, eventually consistent reads, DynamoDB Local:");
    for row in rows {
        println!("{row}");
    }
}
