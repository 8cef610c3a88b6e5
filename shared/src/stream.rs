//! (v3) The `purge` function's entry adapter: DynamoDB stream records in,
//! [`App::purge`] per deleted post, the records that failed out
//! (docs/storage.md, Deleting a post). The event source mapping's filter
//! delivers only the inserts of purge markers; anything else is skipped
//! here too, so a wider filter costs an invocation, never a wrong delete.

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use serde_dynamo::AttributeValue;

use crate::app::App;
use crate::store::PendingPurge;
use crate::store::dynamo::PURGE_PK;

/// The purge a record asks for: the insert of a marker `PURGE` / `<post>`
/// whose new image names the board (the stream's view is `NEW_IMAGE`).
pub fn purge_of(record: &EventRecord) -> Option<PendingPurge> {
    let text = |item: &serde_dynamo::Item, name: &str| match item.get(name) {
        Some(AttributeValue::S(s)) => Some(s.clone()),
        _ => None,
    };
    if record.event_name != "INSERT" || text(&record.change.keys, "PK").as_deref() != Some(PURGE_PK) {
        return None;
    }
    Some(PendingPurge {
        post: text(&record.change.keys, "SK")?,
        board: text(&record.change.new_image, "board")?,
    })
}

/// Purges each record's post in order. At the first failure it stops and
/// names that record (its sequence number): Lambda retries the batch from
/// there (`ReportBatchItemFailures`), so the records before it are not
/// purged twice, and the ones after are not skipped. A purge is idempotent,
/// so a redelivered record costs one read.
pub async fn purge_records(app: &App, event: Event) -> DynamoDbEventResponse {
    let mut response = DynamoDbEventResponse::default();
    for record in &event.records {
        let Some(pending) = purge_of(record) else {
            tracing::warn!(event = %record.event_name, "a stream record that is no purge marker's insert, skipped");
            continue;
        };
        if let Err(e) = app.purge(&pending).await {
            tracing::warn!(error = %e, post = %pending.post, "a deleted post's purge failed; the stream retries it");
            let mut failure = DynamoDbBatchItemFailure::default();
            failure.item_identifier = record.change.sequence_number.clone();
            response.batch_item_failures.push(failure);
            break;
        }
        tracing::info!(post = %pending.post, "deleted post purged");
    }
    response
}
