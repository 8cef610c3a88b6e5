//! DynamoDB only: what the DynamoDB adapter alone has (table layout and its
//! upgrades, the read cache, request costs, what a purge leaves), each test on
//! a fresh table of DynamoDB Local.

use std::sync::Arc;

use crate::{Dyn, endpoint};
use shared::domain::new_id;
use shared::store::dynamo::{CapacityMeter, DynamoStore, Layout, RequestCounter, SdkTuning, client_config};

mod accounts;
mod boards;
mod layout;
mod moderation;
mod purges;
mod reads;
mod revisions;
mod second_factors;

/// A DynamoDB store on a fresh table whose client counts its HTTP requests.
pub(crate) async fn counted_dynamodb() -> (Dyn, RequestCounter) {
    counted_dynamodb_with(Layout::default()).await
}

pub(crate) async fn counted_dynamodb_with(layout: Layout) -> (Dyn, RequestCounter) {
    let (store, counter) = counted_dynamo_store(layout).await;
    (Arc::new(store), counter)
}

/// The DynamoDB store itself (for what only it tells), on a fresh table.
pub(crate) async fn counted_dynamo_store(layout: Layout) -> (DynamoStore, RequestCounter) {
    counted_dynamo_store_on(layout, &format!("test-{}", new_id().to_lowercase())).await
}

pub(crate) async fn counted_dynamo_store_on(layout: Layout, table: &str) -> (DynamoStore, RequestCounter) {
    let counter = RequestCounter::default();
    let config = client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
        .await
        .unwrap()
        .interceptor(counter.clone())
        .build();
    let store = DynamoStore::with_client(aws_sdk_dynamodb::Client::from_conf(config), table, true)
        .await
        .unwrap()
        .with_layout(layout);
    (store, counter)
}

/// A DynamoDB store on a fresh table that counts its requests and meters its units.
pub(crate) async fn metered_dynamo_store(layout: Layout) -> (Arc<DynamoStore>, RequestCounter, CapacityMeter) {
    let (store, counter) = counted_dynamo_store(layout).await;
    let meter = CapacityMeter::default();
    (Arc::new(store.metered(meter.clone())), counter, meter)
}

/// A client of DynamoDB Local without the store (for a table scan).
pub(crate) async fn plain_client() -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    )
}

/// Items of `table` that name `text` in their key, their `report_id` or
/// their `report` (JSON): every page of a Scan.
pub(crate) async fn items_naming(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    text: &str,
) -> Vec<std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>> {
    let mut found = Vec::new();
    let mut start = None;
    loop {
        let out = client
            .scan()
            .table_name(table)
            .filter_expression("contains(PK, :t) OR contains(SK, :t) OR #rid = :t OR contains(#report, :t)")
            .expression_attribute_names("#rid", "report_id")
            .expression_attribute_names("#report", "report")
            .expression_attribute_values(":t", aws_sdk_dynamodb::types::AttributeValue::S(text.to_owned()))
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        found.extend(out.items.unwrap_or_default());
        start = out.last_evaluated_key;
        if start.is_none() {
            return found;
        }
    }
}
