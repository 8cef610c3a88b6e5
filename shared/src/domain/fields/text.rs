//! Text fields (docs/API.md, Field rules): usernames, nicknames, titles,
//! bodies and reasons, NFC-normalized, with the characters each refuses.

use unicode_normalization::UnicodeNormalization as _;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};

use super::chars;
use crate::error::ApiError;

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
/// format characters (docs/API.md, Field rules): the Hangul fillers
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
    /// A board's name (docs/API.md, Boards): 1-40 characters, the title's rules.
    BoardName
);
text_type!(
    /// A board's description: 0-500 characters, the title's rules, may be empty.
    BoardDescription
);
text_type!(
    /// A 말머리 (docs/API.md, Categories): 1-12 characters, the title's
    /// rules, no comma.
    Category
);
text_type!(
    /// Why a moderator removed or banned, or why someone reported:
    /// 1-500 characters after trimming, the title's character rules.
    Reason
);

impl Username {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        let ok = (3..=30).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if ok {
            Ok(Username(s))
        } else {
            Err(ApiError::invalid(
                "username",
                "must be 3-30 characters of a-z, 0-9 and _",
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
        return Err(ApiError::invalid(
            field,
            format_args!("must be 1-{max} characters{after}"),
        ));
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
        Some(what) => Err(ApiError::invalid(field, format_args!("must not contain {what}"))),
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

impl BoardName {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        text("name", s, 40, true, Refuse::BidiAndControl).map(BoardName)
    }
}

impl BoardDescription {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        if s.trim().is_empty() {
            return Ok(BoardDescription(String::new()));
        }
        text("description", s, 500, true, Refuse::BidiAndControl)
            .map(BoardDescription)
            .map_err(|_| {
                ApiError::invalid(
                    "description",
                    "must be 0-500 characters without control or bidirectional override characters",
                )
            })
    }

    pub fn empty() -> Self {
        BoardDescription(String::new())
    }
}

impl Category {
    /// One category as a board lists it or a post names it; `field` is
    /// `categories` or `category`.
    pub fn parse_as(field: &str, s: String) -> Result<Self, ApiError> {
        let value = text(field, s, 12, true, Refuse::BidiAndControl).map_err(|_| {
            ApiError::invalid(
                field,
                "must be 1-12 characters after trimming, without control or bidirectional override characters",
            )
        })?;
        if value.contains(',') {
            return Err(ApiError::invalid(field, "must not contain a comma"));
        }
        Ok(Category(value))
    }

    /// A category as the store kept it.
    pub fn from_stored(s: String) -> Self {
        Category(s)
    }
}

impl BoardName {
    /// A name as the store kept it, or a seeded board's (its slug).
    pub fn from_stored(s: String) -> Self {
        BoardName(s)
    }
}

impl BoardDescription {
    pub fn from_stored(s: String) -> Self {
        BoardDescription(s)
    }
}

impl Reason {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        text("reason", s, 500, true, Refuse::BidiAndControl).map(Reason)
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
                Err(ApiError::invalid(
                    "username",
                    "must be 3-30 characters of a-z, 0-9 and _"
                ))
            );
        }
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
            Err(ApiError::invalid("nickname", "must be 1-30 characters after trimming"))
        );
        assert_eq!(
            Nickname::parse("a\u{7}b".into()),
            Err(ApiError::invalid("nickname", "must not contain control characters"))
        );
        assert!(Title::parse("t".repeat(200)).is_ok());
        assert!(Title::parse("t".repeat(201)).is_err());
        assert_eq!(
            PostBody::parse("line 1\n\tline 2".into()).unwrap().as_str(),
            "line 1\n\tline 2"
        );
        assert_eq!(
            CommentBody::parse(" \n ".into()),
            Err(ApiError::invalid("body", "must be 1-2000 characters and not blank"))
        );
    }
}
