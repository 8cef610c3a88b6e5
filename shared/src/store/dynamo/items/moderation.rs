//! The items of moderation: moderators, bans, log entries, reports.

use serde::{Deserialize, Serialize};

/// A moderator: the member as appointed, and when.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct ModeratorItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub member_id: String,
    pub username: String,
    pub nickname: String,
    pub created_at: String,
    pub appointed: String,
}

/// A ban, both as its record (`BANS#<board>` / `<ban id>`) and as its
/// subject's item (`BAN#<board>#<subject>` / `BAN`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct BanItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub ban_id: String,
    /// `BanSubject::key`.
    pub subject: String,
    /// The ban's second subject (`BanSubject::key`), whose own item
    /// holds a copy of this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub also: Option<String>,
    /// The `Ban` as JSON.
    pub ban: String,
    /// Unix seconds; none for a permanent ban.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<i64>,
    /// The table's TTL attribute: `expires`, so DynamoDB deletes an ended
    /// ban eventually (reads compare `expires` with their clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
}

/// A moderation log entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct LogItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    /// The `LogEntry` as JSON.
    pub entry: String,
}

/// An open report in its board's list.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct ReportItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub report_id: String,
    /// The `Report` as its reporter sees it (no count), JSON.
    pub report: String,
    pub reporters: u64,
}

/// A target's open report, found by the target (in its post's partition).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct ReportPointerItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub report_id: String,
    pub board: String,
    /// The report as shown to a reporter who joins it, JSON.
    pub report: String,
}

/// One distinct reporter of a report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct ReporterItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub report_id: String,
    pub reporter: String,
    pub expires_at: i64,
}
