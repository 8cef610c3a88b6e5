//! The `notify` function's entry adapter: the table's stream
//! records in, [`App::on_text_event`] per post or comment written,
//! deleted or disowned, the record that failed out (docs/DESIGN.md,
//! Notifications off the request). Which records are which is the DynamoDB adapter's
//! knowledge ([`text_event_of`]). The event source mapping's filter
//! delivers only those records; anything else is skipped here too, so a
//! wider filter costs an invocation, never a wrong notification.

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};

use serde_json::{Value, json};

use crate::app::App;
use crate::domain::TextEvent;
use crate::store::dynamo::{COMMENT_SK_PREFIX, DELETED_MEMBER_KIND, POST_PK_PREFIX, POST_SK, PURGE_PK, text_event_of};

/// The event source mapping's filter (tools/sam-template renders it): the
/// records [`event_of`] reads, one pattern each (a record passes when any
/// matches), so the function is not invoked for the table's other writes.
/// The inserts and removes of comments, the inserts of posts and of purge
/// markers, and the modifies of posts and comments whose author is now
/// `deleted_member` (a later modify of such a text passes too: its
/// disowning is done again, which changes nothing).
pub fn notify_filters() -> Vec<Value> {
    let post_partition = json!({ "S": [{ "prefix": POST_PK_PREFIX }] });
    let post_or_comment = json!({ "S": [POST_SK, { "prefix": COMMENT_SK_PREFIX }] });
    vec![
        json!({
            "eventName": ["INSERT"],
            "dynamodb": { "Keys": { "PK": post_partition, "SK": post_or_comment } },
        }),
        json!({
            "eventName": ["REMOVE"],
            "dynamodb": { "Keys": { "PK": post_partition, "SK": { "S": [{ "prefix": COMMENT_SK_PREFIX }] } } },
        }),
        json!({
            "eventName": ["MODIFY"],
            "dynamodb": {
                "Keys": { "PK": post_partition, "SK": post_or_comment },
                "NewImage": { "author_kind": { "S": [DELETED_MEMBER_KIND] } },
            },
        }),
        json!({
            "eventName": ["INSERT"],
            "dynamodb": { "Keys": { "PK": { "S": [PURGE_PK] } } },
        }),
    ]
}

/// The text event of one stream record, if it is one.
pub fn event_of(record: &EventRecord) -> Option<TextEvent> {
    text_event_of(&record.event_name, &record.change.keys, &record.change.new_image)
}

/// Hands each record's text event to the notifier, in order. At the first
/// failure it stops and names that record (its sequence number): Lambda
/// retries the batch from there (`ReportBatchItemFailures`), so the
/// records after it are not skipped. The notifier is idempotent (the
/// store keeps each text's notifications once), so the records before it,
/// if delivered again, notify nobody twice.
pub async fn notify_records(app: &App, event: Event) -> DynamoDbEventResponse {
    let mut response = DynamoDbEventResponse::default();
    for record in &event.records {
        let Some(text_event) = event_of(record) else {
            tracing::debug!(event = %record.event_name, "a stream record that is no text event, skipped");
            continue;
        };
        if let Err(e) = app.on_text_event(&text_event).await {
            tracing::warn!(error = %e, event = %record.event_name, "a text event failed; the stream retries it");
            let mut failure = DynamoDbBatchItemFailure::default();
            failure.item_identifier = record.change.sequence_number.clone();
            response.batch_item_failures.push(failure);
            break;
        }
    }
    response
}

/// One invocation of the `notify` function: a stream batch as Lambda's
/// JSON in, its failed records out (`ReportBatchItemFailures`). A payload
/// that is no stream batch fails the invocation.
pub async fn handle(app: &App, payload: Value) -> Result<Value, String> {
    let event: Event = serde_json::from_value(payload).map_err(|e| format!("not a stream batch: {e}"))?;
    serde_json::to_value(notify_records(app, event).await).map_err(|e| e.to_string())
}
