//! The table's keys and indexes, and the upgrades of tables written by earlier
//! layouts.

use std::collections::HashSet;
use std::sync::Arc;

use crate::accounts::owned_set;
use crate::dynamo::plain_client;
use crate::{
    Dyn, board, comment_by, comment_key, created_comment, created_post, edit, endpoint, guest_post, hash, id_of, limit,
    member, member_id, post_by, post_key, purged, views,
};
use shared::domain::{Owned, PostVersion, new_id, now};
use shared::store::dynamo::{DynamoStore, SdkTuning, client_config};
use shared::store::{Edited, PostEdit};

/// An index's name, keys (attribute, key type) and projection type.
type IndexShape = (String, Vec<(String, String)>, String);

/// DynamoDB only: the table made for tests has the keys and indexes of infra/table.json.
#[tokio::test]
async fn tables_are_created_from_the_shared_schema() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let described = client
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    let def = shared::store::dynamo::schema::TableDefinition::load();
    let keys: Vec<(String, String)> = described
        .key_schema()
        .iter()
        .map(|k| (k.attribute_name().to_owned(), k.key_type().as_str().to_owned()))
        .collect();
    let expected: Vec<(String, String)> = def
        .key_schema
        .iter()
        .map(|k| (k.attribute_name.clone(), k.key_type.clone()))
        .collect();
    assert_eq!(keys, expected);
    // Every index with its keys and projection.
    let mut indexes: Vec<IndexShape> = described
        .global_secondary_indexes()
        .iter()
        .map(|i| {
            (
                i.index_name().unwrap_or_default().to_owned(),
                i.key_schema()
                    .iter()
                    .map(|k| (k.attribute_name().to_owned(), k.key_type().as_str().to_owned()))
                    .collect(),
                i.projection()
                    .and_then(|p| p.projection_type())
                    .map(|p| p.as_str().to_owned())
                    .unwrap_or_default(),
            )
        })
        .collect();
    indexes.sort();
    let mut declared: Vec<IndexShape> = def
        .global_secondary_indexes
        .iter()
        .map(|i| {
            (
                i.index_name.clone(),
                i.key_schema
                    .iter()
                    .map(|k| (k.attribute_name.clone(), k.key_type.clone()))
                    .collect(),
                i.projection.projection_type.clone(),
            )
        })
        .collect();
    declared.sort();
    assert_eq!(indexes, declared);
    assert!(
        indexes.iter().any(|(name, keys, projection)| name == "ById"
            && keys == &[("id".to_owned(), "HASH".to_owned())]
            && projection == "KEYS_ONLY"),
        "{indexes:?}"
    );
    // `ByOwner`: a member's posts, comments and likes.
    assert!(
        indexes.iter().any(|(name, keys, projection)| name == "ByOwner"
            && keys
                == &[
                    ("owner".to_owned(), "HASH".to_owned()),
                    ("owner_sk".to_owned(), "RANGE".to_owned())
                ]
            && projection == "INCLUDE"),
        "{indexes:?}"
    );
    let by_owner = described
        .global_secondary_indexes()
        .iter()
        .find(|i| i.index_name() == Some("ByOwner"))
        .unwrap();
    let mut projected: Vec<String> = by_owner
        .projection()
        .map(|p| p.non_key_attributes().to_vec())
        .unwrap_or_default();
    projected.sort();
    let mut declared: Vec<String> = def
        .global_secondary_indexes
        .iter()
        .find(|i| i.index_name == "ByOwner")
        .unwrap()
        .projection
        .non_key_attributes
        .clone();
    declared.sort();
    assert_eq!(projected, declared);
    let ttl = client.describe_time_to_live().table_name(&table).send().await.unwrap();
    assert_eq!(
        ttl.time_to_live_description().and_then(|d| d.attribute_name()),
        Some(def.time_to_live_specification.attribute_name.as_str())
    );
}

/// DynamoDB only: a table written with the v1 layout (counts on the post
/// item, likes in one partition) reads right under v2 before the backfill,
/// and the backfill moves everything once, however often it runs, keeping a
/// like given again across the upgrade counted once.
#[tokio::test]
async fn the_backfill_moves_a_v1_table_to_counter_shards_once() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    let store = DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let (post, comment) = (new_id(), new_id());
    let (m1, m2, author) = (member_id(), member_id(), member_id());
    let text = |v: &str| AttributeValue::S(v.to_owned());
    let number = |v: u64| AttributeValue::N(v.to_string());
    let v1_items = [
        vec![
            ("PK", text(&format!("POST#{post}"))),
            ("SK", text("POST")),
            ("GSI1PK", text("BOARD#free")),
            ("GSI1SK", text(&post)),
            ("id", text(&post)),
            ("board", text("free")),
            ("title", text("from v1")),
            ("author_kind", text("member")),
            ("author_nickname", text("kim")),
            ("author_member_id", text(author.as_str())),
            ("created_at", text(&now())),
            ("updated_at", text(&now())),
            ("body", text("body")),
            ("view_count", number(5)),
            ("like_count", number(2)),
            ("comment_count", number(1)),
        ],
        vec![
            ("PK", text(&format!("POST#{post}"))),
            ("SK", text(&format!("COMMENT#{comment}"))),
            ("id", text(&comment)),
            ("post_id", text(&post)),
            ("board", text("free")),
            ("body", text("a v1 comment")),
            ("author_kind", text("guest")),
            ("author_nickname", text("g")),
            ("created_at", text(&now())),
        ],
        vec![
            ("PK", text(&format!("LIKES#{post}"))),
            ("SK", text(&format!("MEMBER#{}", m1.as_str()))),
        ],
        vec![
            ("PK", text(&format!("LIKES#{post}"))),
            ("SK", text(&format!("MEMBER#{}", m2.as_str()))),
        ],
    ];
    for item in v1_items {
        let item = item.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(item))
            .send()
            .await
            .unwrap();
    }
    let store: Dyn = Arc::new(store);
    let key = post_key("free", &post);
    let counts = |d: &shared::domain::PostDetail| {
        let s = &d.post.summary;
        (s.view_count, s.like_count, s.comment_count)
    };
    let listed = |page: shared::domain::Page| {
        let s = &page.posts[0];
        (s.view_count, s.like_count, s.comment_count)
    };

    // v2 reads the v1 counts before the backfill.
    assert_eq!(counts(&store.post_detail(&key).await.unwrap().unwrap()), (5, 2, 1));
    assert_eq!(
        listed(store.list_posts(&board("free"), limit(20), None).await.unwrap()),
        (5, 2, 1)
    );
    // m1's v1 like is not found where v2 looks, so m1 can like again.
    assert!(!store.has_liked(&key.post, &m1).await.unwrap());
    store
        .vote(&key, &m1, shared::domain::VoteChange::Like, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(counts(&store.post_detail(&key).await.unwrap().unwrap()), (5, 3, 1));

    let concrete = DynamoStore::with_client(client.clone(), &table, false).await.unwrap();
    let done = concrete.backfill().await.unwrap();
    assert_eq!(
        (done.likes_moved, done.duplicate_likes, done.posts_folded),
        (1, 1, 1),
        "{done:?}"
    );
    assert_eq!(counts(&store.post_detail(&key).await.unwrap().unwrap()), (5, 2, 1));
    assert_eq!(
        listed(store.list_posts(&board("free"), limit(20), None).await.unwrap()),
        (5, 2, 1)
    );
    assert!(store.has_liked(&key.post, &m1).await.unwrap());
    assert!(store.has_liked(&key.post, &m2).await.unwrap());
    let raw = client
        .get_item()
        .table_name(&table)
        .key("PK", text(&format!("POST#{post}")))
        .key("SK", text("POST"))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert!(
        !raw.contains_key("view_count") && !raw.contains_key("like_count"),
        "{raw:?}"
    );

    // Again: nothing left to move.
    let again = concrete.backfill().await.unwrap();
    assert_eq!(
        (again.likes_moved, again.duplicate_likes, again.posts_folded),
        (0, 0, 0)
    );
    assert_eq!(
        store
            .vote(&key, &m2, shared::domain::VoteChange::Unlike, None)
            .await
            .unwrap()
            .unwrap()
            .like_count,
        1
    );
    assert_eq!(views(&store, &key).await, Some(6));
    assert!(store.delete_post(&key, false).await.unwrap());
    purged(&store).await;
    assert_eq!(store.post_detail(&key).await.unwrap(), None);
    // Nothing of the post is left: not its comments, likes or shards.
    let left = client
        .scan()
        .table_name(&table)
        .filter_expression("contains(PK, :post) OR SK = :post")
        .expression_attribute_values(":post", text(&post))
        .send()
        .await
        .unwrap();
    assert_eq!(left.items().len(), 0, "{:?}", left.items());
}

/// DynamoDB only: a post item from before v3 has no stored version; an edit
/// naming the version of its text still applies, once, and a stale one not.
#[tokio::test]
async fn a_post_from_before_v3_is_edited_by_the_version_of_its_text() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    let store: Dyn = Arc::new(DynamoStore::with_client(client.clone(), &table, true).await.unwrap());
    let p = created_post(&store, "free").await;
    client
        .update_item()
        .table_name(&table)
        .key(
            "PK",
            aws_sdk_dynamodb::types::AttributeValue::S(format!("POST#{}", p.summary.id)),
        )
        .key("SK", aws_sdk_dynamodb::types::AttributeValue::S("POST".into()))
        .update_expression("REMOVE #v")
        .expression_attribute_names("#v", "version")
        .send()
        .await
        .unwrap();
    let key = post_key("free", &p.summary.id);
    let at = |v: PostVersion| PostEdit {
        if_version: Some(vec![v]),
        ..edit("edited", "b", &now())
    };
    let stale = PostVersion::of("another", "text");
    assert_eq!(store.update_post(&key, &at(stale)).await.unwrap(), Edited::OtherVersion);
    let current = PostVersion::of(&p.summary.title, &p.body);
    assert_eq!(
        store.update_post(&key, &at(current.clone())).await.unwrap(),
        Edited::Done
    );
    assert_eq!(
        store.update_post(&key, &at(current)).await.unwrap(),
        Edited::OtherVersion
    );
    let edited = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(edited.post.summary.title, "edited");
}

/// DynamoDB only: a v2 table's member posts, comments and likes (written
/// before `ByOwner`: no `owner`, likes no `board`) are indexed by the
/// backfill once, however often it runs; guests' items and a disowned
/// comment are left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backfill_indexes_a_v2_tables_member_posts_comments_and_likes_once() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let table = format!("test-{}", new_id().to_lowercase());
    let client = plain_client().await;
    let concrete = DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let store: Dyn = Arc::new(DynamoStore::with_client(client.clone(), &table, false).await.unwrap());
    let (kim, other) = (member("backfilled"), member("liker"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let id = id_of(&kim);
    let p = post_by(&store, "free", &kim).await;
    let g = guest_post(&store, "qna").await;
    let (pid, gid) = (p.summary.id.clone(), g.summary.id.clone());
    let c = comment_by(&store, "qna", &gid, &kim).await;
    let gone = comment_by(&store, "free", &pid, &kim).await;
    store
        .disown(&id, &[Owned::Comment(comment_key("free", &pid, &gone.id))])
        .await
        .unwrap();
    created_comment(&store, "free", &pid, None).await;
    store
        .vote(&post_key("qna", &gid), &id, shared::domain::VoteChange::Like, None)
        .await
        .unwrap()
        .unwrap();
    store
        .vote(
            &post_key("free", &pid),
            &id_of(&other),
            shared::domain::VoteChange::Like,
            None,
        )
        .await
        .unwrap()
        .unwrap();

    // Back to the v2 layout: no item has `owner`, no like `board`.
    let text = |v: &str| AttributeValue::S(v.to_owned());
    let indexed = client
        .scan()
        .table_name(&table)
        .filter_expression("attribute_exists(#owner)")
        .expression_attribute_names("#owner", "owner")
        .send()
        .await
        .unwrap();
    assert_eq!(indexed.items().len(), 4, "{:?}", indexed.items());
    for item in indexed.items() {
        let pk = item["PK"].as_s().unwrap();
        let remove = if pk.starts_with("LIKES#") {
            "REMOVE #owner, owner_sk, board"
        } else {
            "REMOVE #owner, owner_sk"
        };
        client
            .update_item()
            .table_name(&table)
            .key("PK", text(pk))
            .key("SK", item["SK"].clone())
            .update_expression(remove)
            .expression_attribute_names("#owner", "owner")
            .send()
            .await
            .unwrap();
    }
    assert!(store.owned(&id, true, 100).await.unwrap().is_empty());
    assert!(store.member_posts(&id, limit(20), None).await.unwrap().posts.is_empty());

    let done = concrete.backfill().await.unwrap();
    assert_eq!(
        (done.posts_owned, done.comments_owned, done.likes_owned),
        (1, 1, 2),
        "{done:?}"
    );
    let expected: HashSet<Owned> = [
        Owned::Post(post_key("free", &pid)),
        Owned::Comment(comment_key("qna", &gid, &c.id)),
        Owned::Like(post_key("qna", &gid)),
    ]
    .into();
    assert_eq!(owned_set(&store, &kim, true).await, expected);
    assert_eq!(owned_set(&store, &other, true).await.len(), 1);
    let posts = store.member_posts(&id, limit(20), None).await.unwrap();
    assert_eq!(
        posts.posts.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        [pid.as_str()]
    );
    assert_eq!(
        store.member_comments(&id, limit(20), None).await.unwrap().comments,
        vec![c]
    );

    let again = concrete.backfill().await.unwrap();
    assert_eq!(
        (again.posts_owned, again.comments_owned, again.likes_owned),
        (0, 0, 0),
        "{again:?}"
    );
    // A like indexed by the backfill is withdrawn by its post's key, and leaves the index.
    assert_eq!(
        store
            .vote(&post_key("qna", &gid), &id, shared::domain::VoteChange::Unlike, None)
            .await
            .unwrap()
            .unwrap()
            .like_count,
        0
    );
    assert_eq!(owned_set(&store, &kim, true).await.len(), 2);
}
