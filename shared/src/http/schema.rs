//! The field schemas of docs/API.md (Field rules), as OpenAPI schemas: the
//! request types name them (`schema_with`), and the OpenAPI generator reads
//! them through those types, so neither imports the other.

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};
use utoipa::openapi::schema::{SchemaType, Type};
use utoipa::openapi::{ObjectBuilder, Schema};

use crate::domain::fields::{GUEST_PASSWORD_MIN, MEMBER_PASSWORD_MIN, PASSWORD_MAX, RENDERS_AS_NOTHING, is_mark};

/// What `str::trim` removes (Unicode White_Space), as a regex class body.
const SPACE: &str = "\t\n\u{b}\u{c}\r \u{85}\u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}";
/// Control characters (Cc), as a regex class body.
const CONTROL: &str = "\u{0}-\u{1f}\u{7f}-\u{9f}";

fn string(min: Option<usize>, max: Option<usize>, pattern: Option<String>, description: Option<&str>) -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(min)
        .max_length(max)
        .pattern(pattern)
        .description(description)
        .build()
        .into()
}

/// Unicode format characters (Cf), as a regex class body: read from the same
/// Unicode tables the server checks with, so the schema says exactly what the
/// server refuses.
fn format_class() -> &'static str {
    static CLASS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CLASS.get_or_init(|| class_of(|c| c.general_category() == GeneralCategory::Format))
}

/// What renders as nothing and is not a format character: combining marks
/// (a text needs a base character) and the server's own list.
fn invisible_class() -> &'static str {
    static CLASS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CLASS.get_or_init(|| {
        class_of(|c| {
            is_mark(c)
                || RENDERS_AS_NOTHING
                    .iter()
                    .any(|(first, last)| (*first..=*last).contains(&c))
        })
    })
}

/// The characters `pred` holds for, as a regex class body of ranges.
fn class_of(pred: impl Fn(char) -> bool) -> String {
    let mut ranges: Vec<(char, char)> = Vec::new();
    for c in (0..=0x10FFFF).filter_map(char::from_u32).filter(|c| pred(*c)) {
        match ranges.last_mut() {
            Some((_, last)) if u32::from(*last) + 1 == u32::from(c) => *last = c,
            _ => ranges.push((c, c)),
        }
    }
    ranges
        .into_iter()
        .map(|(first, last)| {
            if first == last {
                first.to_string()
            } else {
                format!("{first}-{last}")
            }
        })
        .collect()
}

/// Bidirectional overrides and isolates, refused in titles.
const BIDI: &str = "\u{202a}-\u{202e}\u{2066}-\u{2069}";

/// 1-`max` characters after trimming (docs/API.md, Field rules: nickname,
/// title): no control characters nor `refused`, and something visible (not
/// only whitespace and format characters).
fn trimmed_text(max: usize, what: &str, refused: &str, rule: &str) -> Schema {
    // The first and last characters after trimming are visible (not format
    // characters): a text of only invisibles is blank. (This also keeps a
    // title from starting or ending with a joiner, which the server would
    // take; no lookahead, which makes schema-driven generators crawl.)
    // The first is also a base character (not a combining mark, not one
    // that renders as nothing), so a text of only those is blank too.
    let format = format_class();
    let invisible = invisible_class();
    let first = format!("[^{SPACE}{CONTROL}{format}{invisible}{refused}]");
    let last = format!("[^{SPACE}{CONTROL}{format}{refused}]");
    let pattern = format!(
        "^[{SPACE}]*{first}(?:[^{CONTROL}{refused}]{{0,{}}}{last})?[{SPACE}]*$",
        max - 2
    );
    let description = format!("{what}: 1-{max} characters after trimming whitespace; {rule}");
    string(Some(1), None, Some(pattern), Some(&description))
}

/// 1-`max` characters with something visible; no control characters but tab,
/// LF and CR (post and comment bodies).
fn body_text(max: usize) -> Schema {
    let format = format_class();
    let invisible = invisible_class();
    let description = format!(
        "1-{max} characters with at least one that shows (not only whitespace, format characters, combining marks or Hangul fillers); no control characters but tab and line breaks"
    );
    // Allowed characters, one visible, allowed characters: exact, no lookahead.
    let allowed = "[^\u{0}-\u{8}\u{b}\u{c}\u{e}-\u{1f}\u{7f}-\u{9f}]*";
    let pattern = format!("^{allowed}[^{SPACE}{format}{invisible}\u{0}-\u{1f}\u{7f}-\u{9f}]{allowed}$");
    string(Some(1), Some(max), Some(pattern), Some(&description))
}

pub fn username() -> Schema {
    string(None, None, Some("^[a-z0-9_]{3,30}$".into()), None)
}

pub fn member_password() -> Schema {
    string(Some(MEMBER_PASSWORD_MIN), Some(PASSWORD_MAX), None, None)
}

pub fn guest_password() -> Schema {
    string(Some(GUEST_PASSWORD_MIN), Some(PASSWORD_MAX), None, None)
}

pub fn login_password() -> Schema {
    string(Some(1), Some(PASSWORD_MAX), None, None)
}

pub fn nickname() -> Schema {
    trimmed_text(30, "nickname", format_class(), "no control or format characters")
}

pub fn title() -> Schema {
    trimmed_text(
        200,
        "title",
        BIDI,
        "no control characters, no bidirectional override or isolate characters",
    )
}

pub fn post_body() -> Schema {
    body_text(20_000)
}

pub fn comment_body() -> Schema {
    body_text(2_000)
}

pub fn parent_id() -> Schema {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .description(Some("A top-level comment of the same post"))
        .build()
        .into()
}
