//! The board's moderation log: one item per entry under `MODLOG#<board>`,
//! written in the transaction of the change it records.

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::partitions::paged;
use crate::domain::{BoardSlug, LogEntry, LogPage, PageLimit};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{from_item, to_item};
use crate::store::dynamo::items::{LogItem, modlog_pk};
use crate::store::{StoreResult, cursor, from_json, to_json};

impl DynamoStore {
    /// The transaction item that writes `entry` to the board's log.
    pub(in crate::store::dynamo) fn log_put(&self, board: &str, entry: &LogEntry) -> StoreResult<TransactWriteItem> {
        let item = to_item(&LogItem {
            pk: modlog_pk(board),
            sk: entry.id.clone(),
            entry: to_json(entry)?,
        })?;
        self.put(item, "attribute_not_exists(PK)")
    }
}

/// One Query of the board's log, newest first (more past the 1 MB cap).
pub(super) async fn modlog(
    store: &DynamoStore,
    board: &BoardSlug,
    limit: PageLimit,
    cursor: Option<&str>,
) -> StoreResult<LogPage> {
    let after = cursor.map(cursor::decode).transpose()?;
    let limit = limit.get();
    let items = store
        .newest_first(&modlog_pk(board.as_str()), after.as_deref(), limit + 1, None)
        .await?;
    let rows = items
        .into_iter()
        .map(|item| {
            let item: LogItem = from_item(item)?;
            Ok((item.sk, from_json::<LogEntry>(&item.entry)?))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    let (entries, next_cursor) = paged(rows, limit);
    Ok(LogPage { entries, next_cursor })
}
