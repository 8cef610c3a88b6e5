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
