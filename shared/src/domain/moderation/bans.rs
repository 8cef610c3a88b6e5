//! Bans: whom they stop, as the store keys them and as the API shows them.

use serde::{Deserialize, Serialize};

use super::WriterKey;
use crate::domain::Author;

/// How wide an address ban reaches (docs/API.md, Hardening, Bans): the
/// address key (an IPv4 address, an IPv6 /64) or its range (the IPv4 /24,
/// the IPv6 /48), as Korean boards block a whole address band.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum BanScope {
    #[default]
    Address,
    Range,
}

/// Who a ban stops, as the store keys it: a member (wherever they write
/// from), an address key or a range key (guest or member), or
/// only guest writes from an address or range key: what a ban through a
/// member's post adds, so the member cannot go on as a guest.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BanSubject {
    Member(String),
    Address(WriterKey),
    Range(WriterKey),
    GuestAddress(WriterKey),
    GuestRange(WriterKey),
}

impl BanSubject {
    /// The subject as one string: `member:<id>`, `address:<key>`,
    /// `range:<key>`, `guest-address:<key>` or `guest-range:<key>`.
    pub fn key(&self) -> String {
        match self {
            BanSubject::Member(id) => format!("member:{id}"),
            BanSubject::Address(key) => format!("address:{}", key.as_str()),
            BanSubject::Range(key) => format!("range:{}", key.as_str()),
            BanSubject::GuestAddress(key) => format!("guest-address:{}", key.as_str()),
            BanSubject::GuestRange(key) => format!("guest-range:{}", key.as_str()),
        }
    }

    /// The subject a stored [`BanSubject::key`] names.
    pub fn from_key(key: &str) -> Option<Self> {
        let writer = |k: &str| WriterKey::new(k.to_owned());
        match key.split_once(':')? {
            ("member", id) => Some(BanSubject::Member(id.to_owned())),
            ("address", k) => Some(BanSubject::Address(writer(k))),
            ("range", k) => Some(BanSubject::Range(writer(k))),
            ("guest-address", k) => Some(BanSubject::GuestAddress(writer(k))),
            ("guest-range", k) => Some(BanSubject::GuestRange(writer(k))),
            _ => None,
        }
    }

    /// Whether it stops whoever writes from an address (members too), as
    /// against a member or only guests.
    pub fn is_address(&self) -> bool {
        matches!(self, BanSubject::Address(_) | BanSubject::Range(_))
    }
}

/// Whom a ban names, as the API shows it (never an address).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum BanTarget {
    Member {
        /// ULID
        #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
        member_id: String,
        nickname: String,
        /// A ban through the member's post or comment: how wide it
        /// also stops guest writes from where that was written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<BanScope>,
    },
    Guest {
        #[cfg_attr(feature = "openapi", schema(pattern = "^[a-z2-7]{8}$"))]
        tag: String,
        /// `address` on bans from before v4.
        #[serde(default)]
        scope: BanScope,
    },
    /// A banned member whose account is deleted since.
    #[serde(rename = "deleted_member")]
    DeletedMember {},
}

/// A ban (docs/API.md, Roles and moderation: Bans).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Ban {
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    pub board: String,
    pub target: BanTarget,
    pub reason: String,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
    /// Present, null for a permanent ban.
    #[cfg_attr(feature = "openapi", schema(format = DateTime, required = true))]
    pub expires_at: Option<String>,
    /// The moderator who banned.
    pub by: Author,
}

/// A ban with what the store keys it by and when it ends (Unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BanRecord {
    pub ban: Ban,
    pub subject: BanSubject,
    /// A second subject the ban stops: guest writes from the address
    /// or range a banned member's post was written from.
    pub also: Option<BanSubject>,
    pub expires: Option<i64>,
}

impl BanRecord {
    pub fn active_at(&self, now: i64) -> bool {
        self.expires.is_none_or(|end| end > now)
    }
}

/// A page of active bans, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BanPage {
    pub bans: Vec<Ban>,
    /// Present, null on the last page.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bans_end_when_they_expire_and_permanent_ones_never() {
        let ban = Ban {
            id: "B".into(),
            board: "free".into(),
            target: BanTarget::Guest {
                tag: "abcdefgh".into(),
                scope: BanScope::Address,
            },
            reason: "spam".into(),
            created_at: "t".into(),
            expires_at: None,
            by: Author::Guest {
                nickname: "x".into(),
                tag: None,
            },
        };
        let subject = BanSubject::Address(WriterKey::new("k".into()));
        let permanent = BanRecord {
            ban: ban.clone(),
            subject: subject.clone(),
            also: None,
            expires: None,
        };
        assert!(permanent.active_at(i64::MAX));
        let timed = BanRecord {
            ban,
            subject,
            also: None,
            expires: Some(100),
        };
        assert!(timed.active_at(99) && !timed.active_at(100));
    }

    #[test]
    fn every_ban_subject_reads_back_from_its_key_and_only_address_kinds_stop_members() {
        let key = || WriterKey::new("abcdefgh234567".into());
        for subject in [
            BanSubject::Member("01J0000000000000000000000A".into()),
            BanSubject::Address(key()),
            BanSubject::Range(key()),
            BanSubject::GuestAddress(key()),
            BanSubject::GuestRange(key()),
        ] {
            assert_eq!(BanSubject::from_key(&subject.key()), Some(subject.clone()));
            let stops_members = matches!(subject, BanSubject::Address(_) | BanSubject::Range(_));
            assert_eq!(subject.is_address(), stops_members, "{subject:?}");
        }
        assert_eq!(BanSubject::from_key("nonsense:x"), None);
        let before_v4: BanTarget = serde_json::from_str(r#"{"kind":"guest","tag":"abcdefgh"}"#).unwrap();
        assert_eq!(
            before_v4,
            BanTarget::Guest {
                tag: "abcdefgh".into(),
                scope: BanScope::Address
            }
        );
        assert_eq!(
            serde_json::to_value(BanTarget::DeletedMember {}).unwrap(),
            serde_json::json!({"kind": "deleted_member"})
        );
    }
}
