//! The public moderation log.

use super::{ModPage, named_members, shown_as_deleted};
use crate::app::App;
use crate::domain::{LogPage, LogTarget};
use crate::error::ApiError;

impl App {
    /// The public log: never an address, never a removed body.
    pub async fn modlog(&self, page: ModPage) -> Result<LogPage, ApiError> {
        let mut log = self.store.modlog(&page.board, page.limit, page.cursor()).await?;
        let named = named_members(log.entries.iter().map(|entry| {
            let target = match &entry.target {
                LogTarget::Member { member_id, .. } => Some(member_id.as_str()),
                _ => None,
            };
            (target, &entry.by)
        }));
        let deleted = self.deleted_members(named).await?;
        for entry in &mut log.entries {
            if matches!(&entry.target, LogTarget::Member { member_id, .. } if deleted.contains(member_id)) {
                entry.target = LogTarget::DeletedMember {};
            }
            shown_as_deleted(&mut entry.by, &deleted);
        }
        Ok(log)
    }
}
