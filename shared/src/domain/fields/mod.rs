//! Values that exist only when valid (docs/API.md, Field rules): request
//! input is parsed into these once, at the edge, and stays typed down to the
//! store adapters. Each error names the field and the rule.

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// A string newtype: serialized as the string, read with `as_str`.
macro_rules! text_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_inner(self) -> String {
                self.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

#[cfg(feature = "passwords")]
pub mod blocklist;
mod boards;
mod ids;
mod numbers;
mod password;
mod text;

pub use boards::{BoardSlug, Boards};
pub use ids::{BanId, CommentId, CommentKey, MediaId, MemberId, PostId, PostKey, ReportId, new_id};
pub use numbers::{BanDuration, MAX_PAGE, PageLimit};
pub use password::{GUEST_PASSWORD_MIN, MEMBER_PASSWORD_MIN, PASSWORD_MAX, Password, PasswordHash};
pub use text::{
    BoardDescription, BoardName, Category, CommentBody, Nickname, PostBody, RENDERS_AS_NOTHING, Reason, Title,
    Username, is_mark,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;

    #[test]
    fn boards_ids_and_limits() {
        let boards = Boards::parse_list(" free, qna ").unwrap();
        assert_eq!(boards.names(), ["free", "qna"]);
        assert_eq!(boards.resolve("free").unwrap().as_str(), "free");
        assert!(matches!(boards.resolve("notice"), Err(ApiError::NotFound(m)) if m.contains("notice")));
        assert_eq!(
            boards.resolve("../etc"),
            Err(ApiError::NotFound("board does not exist".into()))
        );
        assert!(Boards::parse_list("Free").is_err());
        assert_eq!(
            PostId::parse("01arz3ndektsv4rrffq69g5fav").unwrap().as_str(),
            "01ARZ3NDEKTSV4RRFFQ69G5FAV"
        );
        assert!(matches!(PostId::parse("1 OR 1=1"), Err(ApiError::NotFound(_))));
        assert!(
            matches!(CommentId::parse_parent("x"), Err(ApiError::Validation { field: Some(f), .. }) if f == "parent_id")
        );
        assert_eq!(PageLimit::parse(None, 20).unwrap().get(), 20);
        assert_eq!(PageLimit::parse(Some("100"), 20).unwrap().get(), 100);
        for bad in ["0", "101", "ten"] {
            assert!(PageLimit::parse(Some(bad), 20).is_err());
        }
    }
}
