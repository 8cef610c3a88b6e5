//! The moderation log: each action staff take, on what, by whom.

use serde::{Deserialize, Serialize};

use super::{BanScope, BanTarget};
use crate::domain::Author;

/// What a moderation log entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LogAction {
    RemovePost,
    RemoveComment,
    Ban,
    Unban,
    AddModerator,
    RemoveModerator,
    /// A board created or its settings changed.
    BoardSettings,
    /// Staff changed a post's category.
    Recategorize,
    /// Staff took a post out of the best posts.
    Unbest,
    /// Staff deleted a revision of a post.
    DeleteRevision,
}

/// What a log entry is about: a removed post keeps its title (never its
/// body); a guest shows only the tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LogTarget {
    Post {
        post_id: String,
        title: String,
    },
    Comment {
        post_id: String,
        comment_id: String,
    },
    Member {
        member_id: String,
        nickname: String,
        /// As the ban's target says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<BanScope>,
    },
    Guest {
        #[cfg_attr(feature = "openapi", schema(pattern = "^[a-z2-7]{8}$"))]
        tag: String,
        /// On bans: as the ban's target says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<BanScope>,
    },
    /// A member whose account is deleted since.
    #[serde(rename = "deleted_member")]
    DeletedMember {},
    /// The board itself (`board_settings`).
    Board {
        #[cfg_attr(feature = "openapi", schema(pattern = "^[a-z0-9-]{1,40}$"))]
        slug: String,
    },
}

impl From<BanTarget> for LogTarget {
    fn from(target: BanTarget) -> Self {
        match target {
            BanTarget::Member {
                member_id,
                nickname,
                scope,
            } => LogTarget::Member {
                member_id,
                nickname,
                scope,
            },
            BanTarget::Guest { tag, scope } => LogTarget::Guest {
                tag,
                scope: Some(scope),
            },
            BanTarget::DeletedMember {} => LogTarget::DeletedMember {},
        }
    }
}

/// One entry of a board's public moderation log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogEntry {
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    pub action: LogAction,
    pub target: LogTarget,
    /// Present, null where the action takes none (unban, moderators).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub reason: Option<String>,
    /// The staff member who acted.
    pub by: Author,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub at: String,
}

/// A page of the moderation log, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogPage {
    pub entries: Vec<LogEntry>,
    /// Present, null on the last page.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub next_cursor: Option<String>,
}
