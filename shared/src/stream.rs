//! The `purge` function's entry adapter: DynamoDB stream records in,
//! [`App::purge`] per deleted post, the records that failed out
//! (docs/storage.md, Deleting a post). The event source mapping's filter
//! delivers only the inserts of purge markers; anything else is skipped
//! here too, so a wider filter costs an invocation, never a wrong delete.
//!
//! The same function runs on a schedule (EventBridge), and then
//! finishes what account deletions and post purges left pending
//! ([`App::resume_pending`]; docs/DESIGN.md, Accounts).

use std::time::{Duration, Instant};

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use serde_dynamo::AttributeValue;
use serde_json::{Value, json};

use crate::app::App;
use crate::store::PendingPurge;
use crate::store::dynamo::PURGE_PK;

pub mod notify;

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

/// What invoked the `purge` function.
#[derive(Debug)]
pub enum Invocation {
    /// The table's stream: a batch of records.
    Stream(Event),
    /// Its EventBridge schedule.
    Schedule,
}

/// Tells the two apart: a scheduled event is EventBridge's
/// `"source": "aws.events"` with `"detail-type": "Scheduled Event"`;
/// anything else must read as a stream batch (or the invocation fails).
pub fn invocation_of(payload: Value) -> Result<Invocation, serde_json::Error> {
    let text = |name: &str| payload.get(name).and_then(Value::as_str);
    if text("source") == Some("aws.events") && text("detail-type") == Some("Scheduled Event") {
        return Ok(Invocation::Schedule);
    }
    serde_json::from_value(payload).map(Invocation::Stream)
}

/// What a scheduled run leaves of the invocation's time: enough to answer
/// before Lambda's timeout cuts it off (an abandoned deletion is resumed
/// batch by batch, so stopping early loses nothing).
pub const SCHEDULE_MARGIN: Duration = Duration::from_secs(10);

/// One scheduled run: pending account deletions, then pending purges,
/// until `deadline` less [`SCHEDULE_MARGIN`]. Its answer says what it did;
/// an error (a store that cannot be read, a deletion that failed) fails
/// the invocation, so Lambda's `Errors` metric counts it, and the next
/// run retries.
pub async fn resume_scheduled(app: &App, deadline: Instant) -> Result<Value, String> {
    let until = deadline.checked_sub(SCHEDULE_MARGIN).unwrap_or_else(Instant::now);
    let resumed = app.resume_pending(until).await.map_err(|e| e.to_string())?;
    tracing::info!(
        deletions = resumed.deletions,
        deletions_failed = resumed.deletions_failed,
        purges = resumed.purges,
        complete = resumed.complete,
        "scheduled purge"
    );
    if resumed.deletions_failed > 0 {
        return Err(format!(
            "{} pending account deletion(s) failed; they stay pending",
            resumed.deletions_failed
        ));
    }
    Ok(json!({
        "deletions": resumed.deletions,
        "purges": resumed.purges,
        "complete": resumed.complete,
    }))
}

/// One invocation of the `purge` function, whichever invoked it: a stream
/// batch answers its failed records (`ReportBatchItemFailures`), a
/// scheduled run what it finished.
pub async fn handle(app: &App, payload: Value, deadline: Instant) -> Result<Value, String> {
    match invocation_of(payload).map_err(|e| format!("neither a stream batch nor a scheduled event: {e}"))? {
        Invocation::Stream(event) => {
            let answer = purge_records(app, event).await;
            serde_json::to_value(answer).map_err(|e| e.to_string())
        }
        Invocation::Schedule => resume_scheduled(app, deadline).await,
    }
}
