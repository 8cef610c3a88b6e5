//! What moderation keeps and shows (docs/API.md, Roles and moderation,
//! Guest tag): bans, reports, the moderation log, the writer key every post
//! and comment stores, and the blocked-words rule.

use serde::{Deserialize, Serialize};

mod bans;
mod blocked_words;
mod log;
mod reports;
mod writer;

pub use bans::{Ban, BanPage, BanRecord, BanScope, BanSubject, BanTarget};
pub use blocked_words::{BlockedWords, Screened};
pub use log::{LogAction, LogEntry, LogPage, LogTarget};
pub use reports::{Report, ReportPage, ReportTarget, Reported};
pub use writer::{Writer, WriterKey, tag_of};

/// A board's moderators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Moderators {
    pub moderators: Vec<super::Member>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_is_the_keys_prefix_and_debug_shows_only_it() {
        let key = WriterKey::new("abcdefgh234567abcdefgh234567abcdefgh234567abcdefgh23".into());
        assert_eq!(key.tag(), "abcdefgh");
        assert_eq!(format!("{key:?}"), "WriterKey(abcdefgh..)");
    }
}
