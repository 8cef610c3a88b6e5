//! Moderation (docs/API.md, Roles and moderation): admins appoint
//! moderators; staff (admins and a board's moderators) remove posts and
//! comments, ban writers and answer reports; anyone reports; everything
//! staff do goes to the board's public log.

use crate::app::{App, SignedIn};
use crate::domain::{Author, BoardSlug, LogAction, LogEntry, LogTarget, MemberId, PageLimit, Reason, new_id, now};
use crate::error::ApiError;

mod bans;
mod log;
mod moderators;
mod posts;
mod removals;
mod reports;
mod revisions;

pub use bans::{BanBy, BanCommand};
pub use removals::Removal;
pub use reports::ReportCommand;

#[derive(Debug)]
pub struct ModPage {
    pub board: BoardSlug,
    pub limit: PageLimit,
    pub cursor: Option<String>,
}

impl ModPage {
    fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref().filter(|c| !c.is_empty())
    }
}

fn entry(action: LogAction, target: LogTarget, reason: Option<&Reason>, by: &SignedIn) -> LogEntry {
    LogEntry {
        id: new_id(),
        action,
        target,
        reason: reason.map(|r| r.as_str().to_owned()),
        by: by.author(),
        at: now(),
    }
}

impl App {
    /// `403 forbidden` unless the member is staff of the board;
    /// `403 totp_required` for staff without confirmed TOTP while
    /// `STAFF_REQUIRE_TOTP` is on.
    async fn require_staff(&self, board: &BoardSlug, member: &SignedIn) -> Result<(), ApiError> {
        if self.is_staff(board, member).await? {
            self.require_staff_totp(member)
        } else {
            Err(ApiError::Forbidden(format!(
                "only staff of board {} may do this",
                board.as_str()
            )))
        }
    }

    fn require_admin(&self, member: &SignedIn) -> Result<(), ApiError> {
        if self.is_admin(member) {
            self.require_staff_totp(member)
        } else {
            Err(ApiError::Forbidden(
                "only admins may appoint or dismiss moderators".into(),
            ))
        }
    }

    /// Staff act with a second factor (docs/API.md, Passwords and
    /// staff sign-in): what the session check read, no read of its own.
    pub(crate) fn require_staff_totp(&self, member: &SignedIn) -> Result<(), ApiError> {
        if self.passwords.staff_require_totp && !member.second_factor {
            return Err(ApiError::StaffTotpRequired);
        }
        Ok(())
    }

    /// Which of the members a page names have deleted their account
    /// since: the log and the bans show them as `deleted_member`, as posts
    /// do (docs/API.md, Hardening, Bans). One lookup per distinct member on
    /// the page, at once.
    async fn deleted_members(
        &self,
        named: std::collections::BTreeSet<String>,
    ) -> Result<std::collections::HashSet<String>, ApiError> {
        let found = futures_util::future::try_join_all(named.into_iter().map(|id| async move {
            let live = self.store.member_by_id(&MemberId::from_stored(id.clone())).await?;
            Ok::<_, ApiError>(live.is_none().then_some(id))
        }))
        .await?;
        Ok(found.into_iter().flatten().collect())
    }
}

/// The distinct members a page names, as its target or as who acted:
/// collected before any await, so nothing borrowed is held across one.
fn named_members<'a>(named: impl Iterator<Item = (Option<&'a str>, &'a Author)>) -> std::collections::BTreeSet<String> {
    named
        .flat_map(|(target, by)| target.into_iter().chain(member_of(by)))
        .map(str::to_owned)
        .collect()
}

/// The member an author object names, if any.
fn member_of(author: &Author) -> Option<&str> {
    match author {
        Author::Member { member_id, .. } => Some(member_id.as_str()),
        _ => None,
    }
}

/// A deleted member's author object, as what they wrote shows it.
fn shown_as_deleted(author: &mut Author, deleted: &std::collections::HashSet<String>) {
    if member_of(author).is_some_and(|id| deleted.contains(id)) {
        *author = Author::deleted_member();
    }
}
