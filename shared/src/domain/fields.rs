//! Values that exist only when valid (docs/API.md, Field rules): request
//! input is parsed into these once, at the edge, and stays typed down to the
//! store adapters. Each error names the field and the rule.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization as _;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};

use crate::error::ApiError;

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Unicode format characters (Cf): zero-width spaces and joiners, direction
/// marks, the byte order mark... invisible, so a text of only these is blank.
fn is_format(c: char) -> bool {
    c.general_category() == GeneralCategory::Format
}

/// Bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069): they
/// make a title read differently from what it holds.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Characters that render as nothing though they are not whitespace or
/// format characters (docs/API.md, Field rules, v3): the Hangul fillers
/// (U+3164 is the usual way to post a blank nickname on Korean boards), the
/// blank Braille pattern, the combining grapheme joiner and the variation
/// selectors. Inclusive ranges; the OpenAPI schema reads the same list.
pub const RENDERS_AS_NOTHING: &[(char, char)] = &[
    ('\u{034F}', '\u{034F}'),
    ('\u{115F}', '\u{1160}'),
    ('\u{2800}', '\u{2800}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FE00}', '\u{FE0F}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{E0100}', '\u{E01EF}'),
];

/// A combining mark (Mn, Mc, Me): drawn on the character before it.
pub fn is_mark(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::NonspacingMark | GeneralCategory::SpacingMark | GeneralCategory::EnclosingMark
    )
}

/// Nothing left after removing whitespace, format characters, characters
/// that render as nothing and combining marks: a text needs one base
/// character that shows.
fn is_blank(s: &str) -> bool {
    s.chars().all(|c| {
        c.is_whitespace()
            || is_format(c)
            || is_mark(c)
            || RENDERS_AS_NOTHING
                .iter()
                .any(|(first, last)| (*first..=*last).contains(&c))
    })
}

/// Which characters a text field refuses (docs/API.md, Field rules).
#[derive(Clone, Copy)]
enum Refuse {
    /// Nicknames: control (Cc) and format (Cf) characters.
    FormatAndControl,
    /// Titles: control characters, bidirectional overrides and isolates.
    BidiAndControl,
    /// Bodies: control characters other than tab, LF and CR.
    ControlButLineBreaks,
}

/// A string newtype: serialized as the string, read with `as_str`.
macro_rules! text_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

text_type!(
    /// 3-30 characters of `a-z`, `0-9` and `_`.
    Username
);
text_type!(
    /// 1-30 characters after trimming, no control characters.
    Nickname
);
text_type!(
    /// 1-200 characters after trimming, no control characters.
    Title
);
text_type!(
    /// 1-20,000 characters, not blank; whitespace and line breaks kept.
    PostBody
);
text_type!(
    /// 1-2,000 characters, not blank.
    CommentBody
);
text_type!(
    /// (v3) Why a moderator removed or banned, or why someone reported:
    /// 1-500 characters after trimming, the title's character rules.
    Reason
);
text_type!(
    /// `[a-z0-9-]{1,40}`: well formed. Only [`Boards::resolve`] says it is configured.
    BoardSlug
);
text_type!(
    /// A post's id (a ULID, upper case).
    PostId
);
text_type!(
    /// A comment's id (a ULID, upper case).
    CommentId
);
text_type!(
    /// A member's id (a ULID, upper case).
    MemberId
);
text_type!(
    /// (v3) A ban's id (a ULID).
    BanId
);
text_type!(
    /// (v3) A report's id (a ULID).
    ReportId
);

impl Username {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        let ok = (3..=30).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if ok {
            Ok(Username(s))
        } else {
            Err(ApiError::validation(
                "username must be 3-30 characters of a-z, 0-9 and _",
            ))
        }
    }
}

/// Text of `1..=max` characters after NFC normalization (and trimming where
/// `trim`), not blank, without the characters `refuse` names.
fn text(field: &str, s: String, max: usize, trim: bool, refuse: Refuse) -> Result<String, ApiError> {
    let normalized: String = s.nfc().collect();
    let value = if trim { normalized.trim().to_owned() } else { normalized };
    if is_blank(&value) || chars(&value) > max {
        let after = if trim { " after trimming" } else { " and not blank" };
        return Err(ApiError::validation(format!(
            "{field} must be 1-{max} characters{after}"
        )));
    }
    let refused = match refuse {
        Refuse::FormatAndControl => value.chars().find_map(|c| {
            if c.is_control() {
                Some("control characters")
            } else if is_format(c) {
                Some("format characters (zero-width, direction marks)")
            } else {
                None
            }
        }),
        Refuse::BidiAndControl => value.chars().find_map(|c| {
            if c.is_control() {
                Some("control characters")
            } else if is_bidi_control(c) {
                Some("bidirectional override or isolate characters")
            } else {
                None
            }
        }),
        Refuse::ControlButLineBreaks => value
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
            .then_some("control characters other than tab and line breaks"),
    };
    match refused {
        Some(what) => Err(ApiError::validation(format!("{field} must not contain {what}"))),
        None => Ok(value),
    }
}

impl Nickname {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        text("nickname", s, 30, true, Refuse::FormatAndControl).map(Nickname)
    }
}

impl Title {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        text("title", s, 200, true, Refuse::BidiAndControl).map(Title)
    }
}

impl PostBody {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        text("body", s, 20_000, false, Refuse::ControlButLineBreaks).map(PostBody)
    }
}

impl CommentBody {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        text("body", s, 2_000, false, Refuse::ControlButLineBreaks).map(CommentBody)
    }
}

impl Reason {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        text("reason", s, 500, true, Refuse::BidiAndControl).map(Reason)
    }
}

/// (v3) How long a ban lasts: 60 seconds to one year; `None` is permanent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BanDuration(Option<i64>);

impl BanDuration {
    pub const MIN_SECS: i64 = 60;
    pub const MAX_SECS: i64 = 31_536_000;

    pub fn parse(seconds: Option<i64>) -> Result<Self, ApiError> {
        match seconds {
            None => Ok(BanDuration(None)),
            Some(s) if (Self::MIN_SECS..=Self::MAX_SECS).contains(&s) => Ok(BanDuration(Some(s))),
            Some(_) => Err(ApiError::validation(format!(
                "duration_s must be {} to {} seconds, or null for a permanent ban",
                Self::MIN_SECS,
                Self::MAX_SECS
            ))),
        }
    }

    pub fn seconds(self) -> Option<i64> {
        self.0
    }
}

fn well_formed_slug(slug: &str) -> bool {
    (1..=40).contains(&slug.len())
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

impl BoardSlug {
    /// A slug as a store kept it: it was written from a resolved one.
    pub fn from_stored(s: String) -> Self {
        BoardSlug(s)
    }
}

/// The configured boards (`BOARDS`, default `free,qna,notice`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boards(Vec<BoardSlug>);

impl Default for Boards {
    fn default() -> Self {
        Boards(["free", "qna", "notice"].map(|b| BoardSlug(b.to_owned())).to_vec())
    }
}

impl Boards {
    /// `BOARDS`: comma-separated, each `[a-z0-9-]{1,40}`.
    pub fn parse_list(s: &str) -> Result<Self, String> {
        let names: Vec<&str> = s.split(',').map(str::trim).filter(|b| !b.is_empty()).collect();
        if names.is_empty() {
            return Err("BOARDS must name at least one board".into());
        }
        names
            .into_iter()
            .map(|b| {
                well_formed_slug(b)
                    .then(|| BoardSlug(b.to_owned()))
                    .ok_or_else(|| format!("BOARDS: {b:?} must be 1-40 characters of a-z, 0-9 and -"))
            })
            .collect::<Result<_, _>>()
            .map(Boards)
    }

    pub fn slugs(&self) -> &[BoardSlug] {
        &self.0
    }

    pub fn names(&self) -> Vec<&str> {
        self.0.iter().map(BoardSlug::as_str).collect()
    }

    /// The configured board a slug names; anything else is an unknown board.
    pub fn resolve(&self, slug: &str) -> Result<BoardSlug, ApiError> {
        if let Some(board) = self.0.iter().find(|b| b.as_str() == slug) {
            Ok(board.clone())
        } else if well_formed_slug(slug) {
            Err(ApiError::NotFound(format!("board {slug:?} does not exist")))
        } else {
            // Not echoed: it can be anything a client put in the path.
            Err(ApiError::NotFound("board does not exist".into()))
        }
    }
}

/// Ids are ULIDs; anything else cannot name a post or comment.
fn ulid(what: &str, s: &str) -> Result<String, ApiError> {
    match ulid::Ulid::from_string(s) {
        Ok(_) if s.len() == 26 => Ok(s.to_ascii_uppercase()),
        _ => Err(ApiError::not_found(what)),
    }
}

/// A new unique, time-ordered id (a ULID, 26 characters). Ids made by one
/// process increase strictly, even within one millisecond, so "newest first"
/// is exact for them; across processes it holds to the millisecond.
pub fn new_id() -> String {
    static GENERATOR: std::sync::Mutex<ulid::Generator> = std::sync::Mutex::new(ulid::Generator::new());
    let mut generator = GENERATOR.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // Overflow needs 2^80 ids in one millisecond; fall back to a random one.
    generator
        .generate()
        .unwrap_or_else(|_| ulid::Ulid::generate())
        .to_string()
}

macro_rules! id_type {
    ($name:ident, $what:literal) => {
        impl $name {
            /// A fresh id.
            pub fn generate() -> Self {
                $name(new_id())
            }

            /// An id read back from the store, which only holds valid ones.
            pub fn from_stored(s: String) -> Self {
                $name(s)
            }

            /// An id from a path: anything but a ULID names nothing (404).
            pub fn parse(s: &str) -> Result<Self, ApiError> {
                ulid($what, s).map($name)
            }
        }
    };
}

id_type!(PostId, "post");
id_type!(CommentId, "comment");
id_type!(MemberId, "member");
id_type!(BanId, "ban");
id_type!(ReportId, "report");

impl CommentId {
    /// A `parent_id` field: a malformed one cannot be a comment of this post.
    pub fn parse_parent(s: &str) -> Result<Self, ApiError> {
        Self::parse(s).map_err(|_| ApiError::validation("parent_id must be a top-level comment of the same post"))
    }
}

/// A post on its board: every post read or write names both, so a post of
/// another board is simply not found.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PostKey {
    pub board: BoardSlug,
    pub post: PostId,
}

/// A comment under its post.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommentKey {
    pub post: PostKey,
    pub comment: CommentId,
}

/// A password: NFKC-normalized (NIST SP 800-63B), so the same password
/// typed on different keyboards verifies; never logged, never shown, never
/// truncated, never with a NUL. When normalization changed it, the password
/// as typed is kept too: a v1 hash (made before normalization) is checked
/// against it and then replaced (docs/API.md, Field rules).
#[derive(Clone)]
pub struct Password {
    normalized: SecretString,
    as_typed: Option<SecretString>,
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(..)")
    }
}

pub const MEMBER_PASSWORD_MIN: usize = 8;
pub const GUEST_PASSWORD_MIN: usize = 4;
pub const PASSWORD_MAX: usize = 256;

impl Password {
    /// A new member password: 8-256 characters.
    pub fn member(s: String) -> Result<Self, ApiError> {
        Self::within("password", s, MEMBER_PASSWORD_MIN)
    }

    /// (v3) A new member password in a field of another name (`new_password`).
    pub fn member_in(field: &str, s: String) -> Result<Self, ApiError> {
        Self::within(field, s, MEMBER_PASSWORD_MIN)
    }

    /// A guest password: 4-256 characters.
    pub fn guest(s: String) -> Result<Self, ApiError> {
        Self::within("password", s, GUEST_PASSWORD_MIN)
    }

    /// A login attempt: any length up to the maximum may be tried; a wrong one simply does not match.
    pub fn attempt(s: String) -> Result<Self, ApiError> {
        Self::within("password", s, 1)
    }

    /// (v3) An attempt in a field of another name (`current_password`).
    pub fn attempt_in(field: &str, s: String) -> Result<Self, ApiError> {
        Self::within(field, s, 1)
    }

    /// The length rule counts characters as typed.
    fn within(field: &str, s: String, min: usize) -> Result<Self, ApiError> {
        if !(min..=PASSWORD_MAX).contains(&chars(&s)) {
            return Err(ApiError::validation(format!(
                "{field} must be {min}-{PASSWORD_MAX} characters"
            )));
        }
        // bcrypt ends its input at a NUL byte (without a pepper "\0\0\0\0"
        // would verify as "\0\0\0\0\0\0\0"): refused everywhere, so no
        // configuration has to think about it.
        if s.contains('\0') {
            return Err(ApiError::validation(format!("{field} must not contain NUL characters")));
        }
        let normalized: String = s.nfkc().collect();
        let as_typed = (normalized != s).then(|| SecretString::from(s));
        Ok(Password {
            normalized: SecretString::from(normalized),
            as_typed,
        })
    }

    /// What is hashed and verified.
    pub fn secret(&self) -> &SecretString {
        &self.normalized
    }

    /// The password as typed, when NFKC changed it: the form a hash stored
    /// before normalization was made from.
    pub fn as_typed(&self) -> Option<&SecretString> {
        self.as_typed.as_ref()
    }

    /// Bytes of the longest form that may be hashed or verified.
    pub fn byte_len(&self) -> usize {
        let typed = self.as_typed.as_ref().map_or(0, |t| t.expose_secret().len());
        self.normalized.expose_secret().len().max(typed)
    }
}

/// A stored password hash (PHC string, maybe with a pepper prefix). Shown to
/// no one: its `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHash(String);

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordHash(..)")
    }
}

impl PasswordHash {
    /// What a hasher produced or a store kept.
    pub fn new(hash: String) -> Self {
        PasswordHash(hash)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A page size: 1-100; the default depends on what is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLimit(usize);

pub const MAX_PAGE: usize = 100;

impl PageLimit {
    pub fn parse(s: Option<&str>, default: usize) -> Result<Self, ApiError> {
        match s {
            None => Ok(PageLimit(default)),
            Some(s) => match s.parse::<usize>() {
                Ok(n) if (1..=MAX_PAGE).contains(&n) => Ok(PageLimit(n)),
                _ => Err(ApiError::validation(format!(
                    "limit must be a whole number from 1 to {MAX_PAGE}"
                ))),
            },
        }
    }

    pub fn get(self) -> usize {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_follow_the_charset_and_length() {
        assert!(Username::parse("kim_01".into()).is_ok());
        for bad in ["ab", "Kim", "kim!", "a".repeat(31).as_str(), "김철수"] {
            assert_eq!(
                Username::parse(bad.into()),
                Err(ApiError::validation(
                    "username must be 3-30 characters of a-z, 0-9 and _"
                ))
            );
        }
    }

    #[test]
    fn passwords_count_characters() {
        assert!(Password::member("1234567".into()).is_err());
        assert!(
            Password::member("한".repeat(256)).is_ok(),
            "256 characters of 3 bytes each"
        );
        assert!(Password::member("x".repeat(257)).is_err());
        assert!(Password::guest("123".into()).is_err() && Password::guest("1234".into()).is_ok());
        let nul = Password::guest("ab\0d".into()).unwrap_err();
        assert!(nul.to_string().contains("NUL"), "{nul}");
        assert_eq!(
            format!("{:?}", Password::guest("hunter22".into()).unwrap()),
            "Password(..)"
        );
        assert_eq!(
            format!("{:?}", PasswordHash::new("$2b$04$abc".into())),
            "PasswordHash(..)"
        );
    }

    #[test]
    fn text_that_renders_as_nothing_is_blank_and_a_base_character_with_marks_is_not() {
        for blank in [
            "\u{3164}",
            "\u{115f}\u{1160}\u{ffa0}",
            "\u{2800}",
            "\u{fe0f}\u{e0100}",
            "\u{34f}",
            "\u{301}\u{20dd}",
            " \u{3164}\u{200b} ",
        ] {
            assert!(is_blank(blank), "{blank:?}");
        }
        for shown in [
            "a\u{301}",
            "\u{3164}ㅇㅇ",
            "\u{2764}\u{fe0f}",
            "\u{915}\u{93f}",
            "\u{301}a",
        ] {
            assert!(!is_blank(shown), "{shown:?}");
        }
    }

    #[test]
    fn text_fields_trim_and_refuse_blank_long_and_control_characters() {
        assert_eq!(Nickname::parse("  Kim  ".into()).unwrap().as_str(), "Kim");
        assert_eq!(
            Nickname::parse("   ".into()),
            Err(ApiError::validation("nickname must be 1-30 characters after trimming"))
        );
        assert_eq!(
            Nickname::parse("a\u{7}b".into()),
            Err(ApiError::validation("nickname must not contain control characters"))
        );
        assert!(Title::parse("t".repeat(200)).is_ok());
        assert!(Title::parse("t".repeat(201)).is_err());
        assert_eq!(
            PostBody::parse("line 1\n\tline 2".into()).unwrap().as_str(),
            "line 1\n\tline 2"
        );
        assert_eq!(
            CommentBody::parse(" \n ".into()),
            Err(ApiError::validation("body must be 1-2000 characters and not blank"))
        );
    }

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
        assert!(matches!(CommentId::parse_parent("x"), Err(ApiError::Validation(_))));
        assert_eq!(PageLimit::parse(None, 20).unwrap().get(), 20);
        assert_eq!(PageLimit::parse(Some("100"), 20).unwrap().get(), 100);
        for bad in ["0", "101", "ten"] {
            assert!(PageLimit::parse(Some(bad), 20).is_err());
        }
    }

    #[test]
    fn ids_are_unique_and_sort_by_time() {
        let ids: Vec<String> = (0..1000).map(|_| new_id()).collect();
        assert!(ids.iter().all(|id| id.len() == 26));
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "strictly increasing, even within a millisecond"
        );
    }
}
