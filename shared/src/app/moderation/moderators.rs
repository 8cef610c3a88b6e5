//! Admins appoint and dismiss a board's moderators; anyone lists them.

use super::entry;
use crate::app::{App, SignedIn, throttle};
use crate::domain::{BanSubject, BoardSlug, LogAction, LogTarget, MemberId, Moderators};
use crate::error::ApiError;

impl App {
    pub async fn list_moderators(&self, board: &BoardSlug) -> Result<Moderators, ApiError> {
        Ok(Moderators {
            moderators: self.store.moderators(board).await?,
        })
    }

    /// Idempotent: appointing a moderator again changes nothing and logs nothing.
    pub async fn appoint_moderator(
        &self,
        admin: &SignedIn,
        board: &BoardSlug,
        member: &MemberId,
    ) -> Result<(), ApiError> {
        self.require_admin(admin)?;
        let member = self
            .store
            .member_by_id(member)
            .await?
            .ok_or_else(|| ApiError::not_found("member"))?;
        // A staff role takes effect only with TOTP on (docs/API.md, Third
        // audit): appointed without it, a phished password would enroll the
        // attacker's authenticator and act as the moderator.
        if self.passwords.staff_require_totp {
            let username = crate::domain::Username::parse(member.username.clone())?;
            let id = MemberId::from_stored(member.id.clone());
            let state = self.store.session_state(&id, &username).await?;
            if !state.is_some_and(|s| s.totp) {
                return Err(ApiError::ModeratorTotpRequired);
            }
        }
        // Else the appointment would lift the ban: staff are never
        // stopped, and may lift bans (docs/API.md, Hardening, Bans).
        let subject = [BanSubject::Member(member.id.clone())];
        if self
            .store
            .active_ban(board, &subject, throttle::unix_now())
            .await?
            .is_some()
        {
            return Err(ApiError::Forbidden(
                "a member banned on this board cannot be appointed its moderator".into(),
            ));
        }
        let target = LogTarget::Member {
            member_id: member.id.clone(),
            nickname: member.nickname.clone(),
            scope: None,
        };
        let entry = entry(LogAction::AddModerator, target, None, admin);
        self.store.add_moderator(board, &member, &entry).await?;
        Ok(())
    }

    pub async fn dismiss_moderator(
        &self,
        admin: &SignedIn,
        board: &BoardSlug,
        member: &MemberId,
    ) -> Result<(), ApiError> {
        self.require_admin(admin)?;
        let found = self
            .store
            .member_by_id(member)
            .await?
            .ok_or_else(|| ApiError::not_found("member"))?;
        let target = LogTarget::Member {
            member_id: found.id,
            nickname: found.nickname,
            scope: None,
        };
        let entry = entry(LogAction::RemoveModerator, target, None, admin);
        self.store.remove_moderator(board, member, &entry).await?;
        Ok(())
    }
}
