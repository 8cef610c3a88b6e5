//! A member's own account (docs/API.md, Accounts): what `GET
//! /members/me` answers and what an account deletion works through.

use serde::{Deserialize, Serialize};

use super::{CommentKey, Member, MemberId, PostKey};

/// The nickname every post and comment of a deleted account shows.
pub const DELETED_MEMBER_NICKNAME: &str = "deleted member";

/// `GET /members/me`: the member and what they may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    #[serde(flatten)]
    pub member: Member,
    pub roles: Roles,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Roles {
    /// Named in `ADMIN_USERNAMES`: staff of every board.
    pub admin: bool,
    /// The slugs of the boards an admin appointed this member to moderate.
    pub moderates: Vec<String>,
}

/// Something a member owns, as an account deletion finds it in the store's
/// index by member.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Owned {
    Post(PostKey),
    Comment(CommentKey),
    /// The member's like of a post.
    Like(PostKey),
}

/// An account deletion whose second step (the content) has not finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDeletion {
    pub member: MemberId,
    pub delete_content: bool,
}

/// What a session check reads of a member (docs/API.md, Accounts;
/// Passwords and staff sign-in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionState {
    /// What every valid token of the member carries.
    pub epoch: u64,
    /// Whether the member has confirmed TOTP: staff routes ask for it.
    pub totp: bool,
}

/// A member's TOTP as the store keeps it. The secret is sealed
/// (AES-256-GCM under a key the store never holds: `app::totp`), and the
/// recovery codes are kept only as keyed hashes.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredTotp {
    pub sealed_secret: String,
    /// False while an enrollment waits for its first code.
    pub confirmed: bool,
    /// The last time step a code was accepted for (0: none): each is accepted once.
    pub last_step: u64,
    /// The keyed hash of each recovery code not yet used.
    pub recovery_codes: Vec<String>,
}

/// Redacted: sealed or hashed, these are still what a second factor is made of.
impl std::fmt::Debug for StoredTotp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredTotp")
            .field("confirmed", &self.confirmed)
            .field("last_step", &self.last_step)
            .field("recovery_codes", &self.recovery_codes.len())
            .finish_non_exhaustive()
    }
}

/// What starting an enrollment found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TotpStart {
    /// The new secret waits for its first code (any earlier unconfirmed one is replaced).
    Started,
    /// TOTP is on already: nothing changed.
    AlreadyOn,
    /// No such live account.
    NoAccount,
}
