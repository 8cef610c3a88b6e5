//! A text's record, `NOTIFIED#<post>` / `<text id>`: which notifications
//! it made (`sent`), or that it was withdrawn.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::Utc;

use crate::domain::notifications::NOTIFICATION_DAYS;
use crate::store::dynamo::attributes::{Item, s};

pub(super) fn notified_pk(post: &str) -> String {
    format!("NOTIFIED#{post}")
}

/// A `sent` entry of a text's record: `<member> <notification id>`.
pub(super) fn sent_entry(member: &str, id: &str) -> AttributeValue {
    s(format!("{member} {id}"))
}

/// The notifications a text's record says it made, by member.
pub(super) fn sent_of(record: Option<&Item>) -> BTreeMap<String, Vec<String>> {
    let mut by_member: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let entries = record
        .and_then(|r| r.get("sent"))
        .and_then(|v| v.as_l().ok())
        .map(Vec::as_slice)
        .unwrap_or_default();
    for entry in entries.iter().filter_map(|e| e.as_s().ok()) {
        if let Some((member, id)) = entry.split_once(' ') {
            by_member.entry(member.to_owned()).or_default().push(id.to_owned());
        }
    }
    by_member
}

pub(super) const WITHDRAWN_CHECK: &str = "attribute_not_exists(withdrawn)";

/// A text's record outlives its notifications: a stream keeps records 24
/// hours, so no add comes later.
pub(super) fn record_expiry() -> i64 {
    Utc::now().timestamp() + (NOTIFICATION_DAYS + 2) * 86_400
}
