//! What edits, their history and spent challenges leave in the
//! table (docs/storage.md, Revisions, edit locks and spent challenges).

use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::dynamo::plain_client;
use crate::{Dyn, edit, member, post_by, post_key};
use shared::domain::{MAX_REVISIONS, new_id};
use shared::store::dynamo::DynamoStore;

fn text(value: &str) -> AttributeValue {
    AttributeValue::S(value.to_owned())
}

/// DynamoDB only: past 50 edits each edit deletes the oldest revision item
/// (the history's limit does not just hide it); the post item counts its
/// edits; the backfill, which scans for members' items, leaves revisions be.
#[tokio::test]
async fn past_fifty_edits_each_edit_deletes_the_oldest_revision_item() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = plain_client().await;
    let concrete = DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let store: Dyn = Arc::new(concrete.clone());
    let kim = member("kim");
    let p = post_by(&store, "free", &kim).await;
    let key = post_key("free", &p.summary.id);
    let edits = MAX_REVISIONS + 2;
    for n in 1..=edits {
        store
            .update_post(&key, &edit(&format!("title {n}"), "b", "2030-01-01T00:00:00.000Z"))
            .await
            .unwrap();
    }
    let revision_keys = || async {
        let out = client
            .query()
            .table_name(&table)
            .key_condition_expression("PK = :pk AND begins_with(SK, :revision)")
            .expression_attribute_values(":pk", text(&format!("POST#{}", p.summary.id)))
            .expression_attribute_values(":revision", text("REVISION#"))
            .send()
            .await
            .unwrap();
        assert!(out.last_evaluated_key.is_none());
        out.items
            .unwrap_or_default()
            .into_iter()
            .map(|item| {
                assert!(!item.contains_key("owner"), "{item:?}");
                item["SK"].as_s().unwrap().clone()
            })
            .collect::<Vec<String>>()
    };
    let kept = revision_keys().await;
    assert_eq!(kept.len(), MAX_REVISIONS as usize, "{kept:?}");
    // The versions edits 3..=52 replaced; those of edits 1 and 2 are gone.
    assert_eq!(kept.first().map(String::as_str), Some("REVISION#0000000003"));
    assert_eq!(kept.last().map(String::as_str), Some("REVISION#0000000052"));
    let post = client
        .get_item()
        .table_name(&table)
        .key("PK", text(&format!("POST#{}", p.summary.id)))
        .key("SK", text("POST"))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert_eq!(post["edits"].as_n().unwrap(), &edits.to_string());

    concrete.backfill().await.unwrap();
    assert_eq!(revision_keys().await, kept);
    assert_eq!(
        crate::all_revisions(&store, &key).await.unwrap().len(),
        MAX_REVISIONS as usize
    );
}

/// DynamoDB only: a spent challenge is one item whose `expires_at` is the
/// table's TTL attribute, so DynamoDB removes it once it has expired.
#[tokio::test]
async fn a_spent_challenge_is_one_item_the_tables_ttl_removes() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = plain_client().await;
    let store: Dyn = Arc::new(DynamoStore::with_client(client.clone(), &table, true).await.unwrap());
    let challenge = format!("{:0>64}", new_id().to_lowercase());
    let expires_at = 4_102_444_800; // 2100-01-01
    assert!(store.spend_challenge(&challenge, expires_at).await.unwrap());
    let item = client
        .get_item()
        .table_name(&table)
        .key("PK", text(&format!("POW#{challenge}")))
        .key("SK", text("SPENT"))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    let ttl = client
        .describe_time_to_live()
        .table_name(&table)
        .send()
        .await
        .unwrap()
        .time_to_live_description
        .unwrap();
    let ttl_attribute = ttl.attribute_name.unwrap();
    assert_eq!(item[&ttl_attribute].as_n().unwrap(), &expires_at.to_string());
    assert_eq!(item.len(), 3, "the keys and the expiry only: {item:?}");
}
