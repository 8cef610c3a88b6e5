//! Reports: what they are about, the one open report of a target.

use serde::{Deserialize, Serialize};

/// What a report is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ReportTarget {
    Post {
        /// ULID
        #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
        post_id: String,
    },
    Comment {
        /// ULID
        #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
        post_id: String,
        /// ULID
        #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
        comment_id: String,
    },
}

impl ReportTarget {
    pub fn post_id(&self) -> &str {
        match self {
            ReportTarget::Post { post_id } | ReportTarget::Comment { post_id, .. } => post_id,
        }
    }

    /// One string per target: `post:<id>` or `comment:<id>`.
    pub fn key(&self) -> String {
        match self {
            ReportTarget::Post { post_id } => format!("post:{post_id}"),
            ReportTarget::Comment { comment_id, .. } => format!("comment:{comment_id}"),
        }
    }
}

/// The one open report of a target (docs/API.md, Roles and moderation:
/// Reports). `reporters` is shown in the staff list only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Report {
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    pub board: String,
    pub target: ReportTarget,
    /// The first reporter's reason.
    pub reason: String,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
    /// Distinct reporters (members, or address keys for anonymous
    /// reports); in the staff list only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporters: Option<u64>,
}

impl Report {
    /// The report as its reporter sees it: without the count.
    pub fn for_reporter(mut self) -> Self {
        self.reporters = None;
        self
    }
}

/// What a report did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reported {
    /// The target's first open report: `201`.
    Opened(Report),
    /// Added to the target's open report (or this reporter was counted
    /// already): `200` with that report.
    Joined(Report),
}

/// A page of open reports, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReportPage {
    pub reports: Vec<Report>,
    /// Present, null on the last page.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub next_cursor: Option<String>,
}
