//! Domain newtypes that parse request input once, with API.md's rules and
//! messages that name the field and the rule.

use secrecy::SecretString;

use super::error::ApiError;

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Username(String);

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

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A password, checked for length and never shown. Over 72 bytes is refused
/// only where no pepper is configured (bcrypt would truncate it).
pub fn password(s: String, min_chars: usize, peppered: bool) -> Result<SecretString, ApiError> {
    let n = chars(&s);
    if !(min_chars..=256).contains(&n) {
        return Err(ApiError::validation(format!(
            "password must be {min_chars}-256 characters"
        )));
    }
    if !peppered && s.len() > crate::hashing::UNPEPPERED_MAX_BYTES {
        return Err(ApiError::validation("password must be at most 72 bytes"));
    }
    Ok(SecretString::from(s))
}

pub const MEMBER_PASSWORD_MIN: usize = 8;
pub const GUEST_PASSWORD_MIN: usize = 4;

/// Trimmed text of `min..=max` characters; `control` says whether control characters are allowed.
fn text(field: &str, s: String, max: usize, trim: bool, control: bool) -> Result<String, ApiError> {
    let value = if trim { s.trim().to_owned() } else { s };
    let blank = value.trim().is_empty();
    if blank || chars(&value) > max {
        let after = if trim { " after trimming" } else { " and not blank" };
        return Err(ApiError::validation(format!(
            "{field} must be 1-{max} characters{after}"
        )));
    }
    if !control && has_control(&value) {
        return Err(ApiError::validation(format!(
            "{field} must not contain control characters"
        )));
    }
    Ok(value)
}

pub fn nickname(s: String) -> Result<String, ApiError> {
    text("nickname", s, 30, true, false)
}

pub fn title(s: String) -> Result<String, ApiError> {
    text("title", s, 200, true, false)
}

/// Post bodies keep their whitespace and line breaks (tabs and newlines included).
pub fn post_body(s: String) -> Result<String, ApiError> {
    text("body", s, 20_000, false, true)
}

pub fn comment_body(s: String) -> Result<String, ApiError> {
    text("body", s, 2_000, false, true)
}

/// The configured board a slug names; anything else is an unknown board.
pub fn board(slug: &str, boards: &[String]) -> Result<String, ApiError> {
    let well_formed = (1..=40).contains(&slug.len())
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if well_formed && boards.iter().any(|b| b == slug) {
        Ok(slug.to_owned())
    } else if well_formed {
        Err(ApiError::NotFound(format!("board {slug:?} does not exist")))
    } else {
        // Not echoed: it can be anything a client put in the path.
        Err(ApiError::NotFound("board does not exist".into()))
    }
}

/// Ids are ULIDs; anything else cannot name a post or comment.
pub fn id(what: &str, s: &str) -> Result<String, ApiError> {
    match ulid::Ulid::from_string(s) {
        Ok(_) if s.len() == 26 => Ok(s.to_ascii_uppercase()),
        _ => Err(ApiError::not_found(what)),
    }
}

/// An optional `parent_id` field: a malformed one cannot be a comment of this post.
pub fn parent_id(s: Option<String>) -> Result<Option<String>, ApiError> {
    s.map(|p| {
        id("comment", &p).map_err(|_| ApiError::validation("parent_id must be a top-level comment of the same post"))
    })
    .transpose()
}

pub fn limit(s: Option<&str>) -> Result<usize, ApiError> {
    match s {
        None => Ok(20),
        Some(s) => match s.parse::<usize>() {
            Ok(n) if (1..=crate::store::MAX_PAGE).contains(&n) => Ok(n),
            _ => Err(ApiError::validation("limit must be a whole number from 1 to 100")),
        },
    }
}

/// Board slugs for `BOARDS`: comma-separated, each `[a-z0-9-]{1,40}`.
pub fn board_list(s: &str) -> Result<Vec<String>, String> {
    let boards: Vec<String> = s
        .split(',')
        .map(|b| b.trim().to_owned())
        .filter(|b| !b.is_empty())
        .collect();
    if boards.is_empty() {
        return Err("BOARDS must name at least one board".into());
    }
    for b in &boards {
        board(b, std::slice::from_ref(b))
            .map_err(|_| format!("BOARDS: {b:?} must be 1-40 characters of a-z, 0-9 and -"))?;
    }
    Ok(boards)
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

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
    fn passwords_count_characters_and_bytes_only_without_pepper() {
        assert!(password("1234567".into(), 8, true).is_err());
        assert!(
            password("한".repeat(256), 8, true).is_ok(),
            "256 characters of 3 bytes each, peppered"
        );
        assert!(password("x".repeat(257), 8, true).is_err());
        assert_eq!(
            password("x".repeat(73), 8, false).unwrap_err(),
            ApiError::validation("password must be at most 72 bytes")
        );
        assert_eq!(password("x".repeat(72), 8, false).unwrap().expose_secret().len(), 72);
        assert_eq!(password("ab\0d".into(), 4, true).unwrap().expose_secret(), "ab\0d");
    }

    #[test]
    fn text_fields_trim_and_refuse_blank_long_and_control_characters() {
        assert_eq!(nickname("  Kim  ".into()).unwrap(), "Kim");
        assert_eq!(
            nickname("   ".into()),
            Err(ApiError::validation("nickname must be 1-30 characters after trimming"))
        );
        assert_eq!(
            nickname("a\u{7}b".into()),
            Err(ApiError::validation("nickname must not contain control characters"))
        );
        assert!(title("t".repeat(200)).is_ok());
        assert!(title("t".repeat(201)).is_err());
        assert_eq!(post_body("line 1\n\tline 2".into()).unwrap(), "line 1\n\tline 2");
        assert_eq!(
            comment_body(" \n ".into()),
            Err(ApiError::validation("body must be 1-2000 characters and not blank"))
        );
    }

    #[test]
    fn boards_ids_and_limits() {
        let boards = vec!["free".to_owned(), "qna".to_owned()];
        assert_eq!(board("free", &boards).unwrap(), "free");
        assert!(matches!(board("notice", &boards), Err(ApiError::NotFound(_))));
        assert!(matches!(board("../etc", &boards), Err(ApiError::NotFound(_))));
        assert!(id("post", "01ARZ3NDEKTSV4RRFFQ69G5FAV").is_ok());
        assert!(matches!(id("post", "1 OR 1=1"), Err(ApiError::NotFound(_))));
        assert_eq!(limit(None), Ok(20));
        assert_eq!(limit(Some("100")), Ok(100));
        assert!(limit(Some("0")).is_err() && limit(Some("101")).is_err() && limit(Some("ten")).is_err());
        assert_eq!(board_list(" free, qna ").unwrap(), boards);
        assert!(board_list("Free").is_err());
    }
}
