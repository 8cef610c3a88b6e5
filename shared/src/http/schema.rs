//! The field schemas of docs/API.md (Field rules), as OpenAPI schemas: the
//! request types name them (`schema_with`), and the OpenAPI generator reads
//! them through those types, so neither imports the other.

use std::sync::OnceLock;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};

use utoipa::openapi::schema::{SchemaType, Type};
use utoipa::openapi::{ObjectBuilder, Schema};

use crate::domain::fields::{GUEST_PASSWORD_MIN, MEMBER_PASSWORD_MIN, PASSWORD_MAX, RENDERS_AS_NOTHING, is_mark};

/// A set of characters, as inclusive ranges; rendered into a regex class body
/// by [`class`].
type Ranges = Vec<(char, char)>;

/// What `str::trim` removes (Unicode White_Space).
fn space() -> &'static Ranges {
    static SET: OnceLock<Ranges> = OnceLock::new();
    SET.get_or_init(|| ranges_of(char::is_whitespace))
}

/// Control characters (Cc).
fn control() -> &'static Ranges {
    static SET: OnceLock<Ranges> = OnceLock::new();
    SET.get_or_init(|| ranges_of(char::is_control))
}

/// Control characters but tab, LF and CR (what a post or comment body refuses).
fn body_control() -> &'static Ranges {
    static SET: OnceLock<Ranges> = OnceLock::new();
    SET.get_or_init(|| ranges_of(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')))
}

/// Bidirectional overrides and isolates, refused in titles.
fn bidi() -> Ranges {
    vec![('\u{202a}', '\u{202e}'), ('\u{2066}', '\u{2069}')]
}

/// Unicode format characters (Cf): read from the same Unicode tables the
/// server checks with, so the schema says what the server refuses.
fn format() -> &'static Ranges {
    static SET: OnceLock<Ranges> = OnceLock::new();
    SET.get_or_init(|| ranges_of(|c| c.general_category() == GeneralCategory::Format))
}

/// What renders as nothing and is not a format character: combining marks
/// (a text needs a base character) and the server's own list.
fn invisible() -> &'static Ranges {
    static SET: OnceLock<Ranges> = OnceLock::new();
    SET.get_or_init(|| {
        ranges_of(|c| {
            is_mark(c)
                || RENDERS_AS_NOTHING
                    .iter()
                    .any(|(first, last)| (*first..=*last).contains(&c))
        })
    })
}

/// The characters `pred` holds for, as ranges.
fn ranges_of(pred: impl Fn(char) -> bool) -> Ranges {
    let mut ranges: Ranges = Vec::new();
    for c in (0..=0x10FFFF).filter_map(char::from_u32).filter(|c| pred(*c)) {
        match ranges.last_mut() {
            Some((_, last)) if u32::from(*last) + 1 == u32::from(c) => *last = c,
            _ => ranges.push((c, c)),
        }
    }
    ranges
}

/// A regex class body of `sets`, every character but ASCII letters and
/// digits written as a `\uXXXX` escape: the document holds no raw control,
/// invisible or direction character, and the class means the same in
/// ECMA-262 with and without the `u` flag and in Python's `re`. Characters
/// outside the Basic Multilingual Plane are left out: without the `u` flag a
/// regex sees them as two UTF-16 halves and cannot name them (Spectral
/// compiles patterns so), so the pattern lets them through and the server
/// still refuses the ones its rule names.
fn class(sets: &[&Ranges]) -> String {
    let mut all: Vec<(u32, u32)> = sets
        .iter()
        .flat_map(|set| set.iter())
        .filter(|(first, _)| u32::from(*first) <= 0xFFFF)
        .map(|(first, last)| (u32::from(*first), u32::from(*last).min(0xFFFF)))
        .collect();
    all.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (first, last) in all {
        match merged.last_mut() {
            Some((_, end)) if first <= *end + 1 => *end = (*end).max(last),
            _ => merged.push((first, last)),
        }
    }
    let one = |c: u32| match char::from_u32(c) {
        Some(c) if c.is_ascii_alphanumeric() => c.to_string(),
        _ => format!("\\u{c:04x}"),
    };
    merged
        .into_iter()
        .map(|(first, last)| match last - first {
            0 => one(first),
            1 => format!("{}{}", one(first), one(last)),
            _ => format!("{}-{}", one(first), one(last)),
        })
        .collect()
}

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

/// What a pattern's description says of the characters it cannot name.
const ASTRAL: &str =
    "(the pattern names refused characters of the Basic Multilingual Plane only; the server refuses the others too)";

/// 1-`max` characters after trimming (docs/API.md, Field rules: nickname,
/// title): no control characters nor `refused`, and something visible (not
/// only whitespace and format characters).
fn trimmed_text(max: usize, what: &str, refused: &Ranges, rule: &str) -> Schema {
    // The first and last characters after trimming are visible (not format
    // characters): a text of only invisibles is blank. (This also keeps a
    // title from starting or ending with a joiner, which the server would
    // take; no lookahead, which makes schema-driven generators crawl.)
    // The first is also a base character (not a combining mark, not one
    // that renders as nothing), so a text of only those is blank too.
    let (space, control, format, invisible) = (space(), control(), format(), invisible());
    let spaces = class(&[space]);
    let first = class(&[space, control, format, invisible, refused]);
    let last = class(&[space, control, format, refused]);
    let inner = class(&[control, refused]);
    let pattern = format!(
        "^[{spaces}]*[^{first}](?:[^{inner}]{{0,{}}}[^{last}])?[{spaces}]*$",
        max - 2
    );
    let description = format!("{what}: 1-{max} characters after trimming whitespace; {rule} {ASTRAL}");
    string(Some(1), None, Some(pattern), Some(&description))
}

/// 1-`max` characters with something visible; no control characters but tab,
/// LF and CR (post and comment bodies).
fn body_text(max: usize) -> Schema {
    let description = format!(
        "1-{max} characters with at least one that shows (not only whitespace, format characters, combining marks or Hangul fillers); no control characters but tab and line breaks {ASTRAL}"
    );
    // Allowed characters, one visible, allowed characters: exact, no lookahead.
    let (space, control, format, invisible) = (space(), control(), format(), invisible());
    let allowed = format!("[^{}]*", class(&[body_control()]));
    let visible = class(&[space, format, invisible, control]);
    let pattern = format!("^{allowed}[^{visible}]{allowed}$");
    string(Some(1), Some(max), Some(pattern), Some(&description))
}

pub fn username() -> Schema {
    string(None, None, Some("^[a-z0-9_]{3,30}$".into()), None)
}

/// No NUL in a password (docs/API.md, Field rules).
fn password(min: usize) -> Schema {
    string(
        Some(min),
        Some(PASSWORD_MAX),
        Some("^[^\\u0000]*$".to_owned()),
        Some("no NUL (U+0000): bcrypt would stop reading there"),
    )
}

pub fn member_password() -> Schema {
    password(MEMBER_PASSWORD_MIN)
}

pub fn guest_password() -> Schema {
    password(GUEST_PASSWORD_MIN)
}

pub fn login_password() -> Schema {
    password(1)
}

pub fn nickname() -> Schema {
    trimmed_text(30, "nickname", format(), "no control or format characters")
}

/// A post's 말머리: null, or one of its board's categories
/// (each 1-12 characters, no comma); which ones only the board says.
pub fn category() -> Schema {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .min_length(Some(1))
        .description(Some(
            "Null, or one of the board's `categories` (1-12 characters, no comma); any other: `400 validation_failed` naming `category`",
        ))
        .build()
        .into()
}

pub fn title() -> Schema {
    trimmed_text(
        200,
        "title",
        &bidi(),
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

/// A post's `media`: ids of ready uploads, at most 20.
pub fn post_media() -> Schema {
    media_ids(crate::domain::media::MAX_POST_MEDIA)
}

/// A comment's `media`: at most one id.
pub fn comment_media() -> Schema {
    media_ids(crate::domain::media::MAX_COMMENT_MEDIA)
}

fn media_ids(max: usize) -> Schema {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(SchemaType::from(Type::String))
                .pattern(Some("^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$")),
        )
        .max_items(Some(max))
        .unique_items(true)
        .description(Some(
            "Ids of images (`POST /boards/{slug}/media`) that are `ready`, granted on this board to this writer and attached nowhere else; else `400 validation_failed` naming `media`",
        ))
        .build()
        .into()
}

/// A moderator's or reporter's reason: the title's rules, 1-500.
/// A board's name: the title's rules, 1-40 characters.
pub fn board_name() -> Schema {
    trimmed_text(
        40,
        "name",
        &bidi(),
        "no control characters, no bidirectional override or isolate characters",
    )
}

/// A board's description: empty, or the title's rules up to 500
/// characters.
pub fn board_description() -> Schema {
    let text = trimmed_text(
        500,
        "description",
        &bidi(),
        "or empty; no control characters, no bidirectional override or isolate characters",
    );
    let Schema::Object(mut object) = text else { return text };
    object.pattern = object.pattern.map(|p| format!("^$|{p}"));
    object.min_length = None;
    Schema::Object(object)
}

/// One of a board's categories: the title's rules, 1-12
/// characters, no comma.
pub fn board_category() -> Schema {
    let mut refused = bidi();
    refused.push((',', ','));
    trimmed_text(
        12,
        "a category",
        &refused,
        "no comma, no control characters, no bidirectional override or isolate characters; unique in the list after NFKC and case folding",
    )
}

/// A board's categories: at most 20.
pub fn board_categories() -> Schema {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(utoipa::openapi::RefOr::T(board_category()))
        .max_items(Some(crate::domain::board::MAX_CATEGORIES))
        .description(Some(
            "At most 20 categories (malmeori), unique after NFKC and case folding; absent: none",
        ))
        .build()
        .into()
}

pub fn reason() -> Schema {
    trimmed_text(
        500,
        "reason",
        &bidi(),
        "no control characters, no bidirectional override or isolate characters",
    )
}

/// An id in a body: a ULID.
pub fn ulid() -> Schema {
    string(None, None, Some("^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$".into()), None)
}

/// A ban's length in seconds, or null for a permanent ban.
pub fn duration_s() -> Schema {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Integer, Type::Null]))
        .minimum(Some(crate::domain::BanDuration::MIN_SECS as f64))
        .maximum(Some(crate::domain::BanDuration::MAX_SECS as f64))
        .description(Some("Seconds the ban lasts; absent or null: permanent"))
        .build()
        .into()
}
