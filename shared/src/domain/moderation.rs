//! (v3) What moderation keeps and shows (docs/API.md, Roles and moderation,
//! Guest tag): bans, reports, the moderation log, the writer key every post
//! and comment stores, and the blocked-words rule.

use aho_corasick::{AhoCorasick, MatchKind};
use caseless::Caseless as _;
use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization as _;

use super::Author;
use crate::error::ApiError;

/// A client address key (IPv4, or IPv6 /64) under the server's tag key:
/// base32 of HMAC-SHA-256, 52 characters of `[a-z2-7]`. Stored with every
/// post and comment and in address bans; never shown. Its first
/// [`WriterKey::TAG_LEN`] characters are the guest's public tag.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriterKey(String);

impl std::fmt::Debug for WriterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WriterKey({}..)", self.tag())
    }
}

impl WriterKey {
    pub const TAG_LEN: usize = 8;

    /// A key as computed by the application or read back from the store.
    pub fn new(key: String) -> Self {
        WriterKey(key)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The public tag: a prefix, so it shows nothing the key does not, and
    /// 40 bits of it tell two guests of one nickname apart.
    pub fn tag(&self) -> String {
        tag_of(&self.0)
    }
}

/// The tag of a stored writer key.
pub fn tag_of(writer_key: &str) -> String {
    writer_key.chars().take(WriterKey::TAG_LEN).collect()
}

/// (v4) The keys a post or comment is stored with: its writer's address
/// key and the key of the range around it (the IPv4 /24 or the IPv6 /48),
/// both under the tag key. A `"range"` ban names the second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    pub key: WriterKey,
    pub range: WriterKey,
}

/// (v4) How wide an address ban reaches (docs/API.md, Hardening, Bans): the
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
/// from), an address key or (v4) a range key (guest or member), or (v4)
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
        /// (v4) A ban through the member's post or comment: how wide it
        /// also stops guest writes from where that was written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<BanScope>,
    },
    Guest {
        #[cfg_attr(feature = "openapi", schema(pattern = "^[a-z2-7]{8}$"))]
        tag: String,
        /// (v4) `address` on bans from before v4.
        #[serde(default)]
        scope: BanScope,
    },
    /// (v4) A banned member whose account is deleted since.
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
    /// (v4) A second subject the ban stops: guest writes from the address
    /// or range a banned member's post was written from.
    pub also: Option<BanSubject>,
    pub expires: Option<i64>,
}

impl BanRecord {
    pub fn active_at(&self, now: i64) -> bool {
        self.expires.is_none_or(|end| end > now)
    }
}

/// What a report is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ReportTarget {
    Post {
        /// ULID
        #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
        post_id: String,
    },
    Comment {
        /// ULID
        #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
        post_id: String,
        /// ULID
        #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
        comment_id: String,
    },
}

impl ReportTarget {
    pub fn post_id(&self) -> &str {
        match self {
            ReportTarget::Post { post_id } | ReportTarget::Comment { post_id, .. } => post_id,
        }
    }

    /// One string per target: `post:<id>` or `comment:<id>`.
    pub fn key(&self) -> String {
        match self {
            ReportTarget::Post { post_id } => format!("post:{post_id}"),
            ReportTarget::Comment { comment_id, .. } => format!("comment:{comment_id}"),
        }
    }
}

/// The one open report of a target (docs/API.md, Roles and moderation:
/// Reports). `reporters` is shown in the staff list only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Report {
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    pub board: String,
    pub target: ReportTarget,
    /// The first reporter's reason.
    pub reason: String,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
    /// Distinct reporters (members, or address keys for anonymous
    /// reports); in the staff list only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporters: Option<u64>,
}

impl Report {
    /// The report as its reporter sees it: without the count.
    pub fn for_reporter(mut self) -> Self {
        self.reporters = None;
        self
    }
}

/// What a report did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reported {
    /// The target's first open report: `201`.
    Opened(Report),
    /// Added to the target's open report (or this reporter was counted
    /// already): `200` with that report.
    Joined(Report),
}

/// What a moderation log entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LogAction {
    RemovePost,
    RemoveComment,
    Ban,
    Unban,
    AddModerator,
    RemoveModerator,
}

/// What a log entry is about: a removed post keeps its title (never its
/// body); a guest shows only the tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LogTarget {
    Post {
        post_id: String,
        title: String,
    },
    Comment {
        post_id: String,
        comment_id: String,
    },
    Member {
        member_id: String,
        nickname: String,
        /// (v4) As the ban's target says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<BanScope>,
    },
    Guest {
        #[cfg_attr(feature = "openapi", schema(pattern = "^[a-z2-7]{8}$"))]
        tag: String,
        /// (v4) On bans: as the ban's target says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<BanScope>,
    },
    /// (v4) A member whose account is deleted since.
    #[serde(rename = "deleted_member")]
    DeletedMember {},
}

impl From<BanTarget> for LogTarget {
    fn from(target: BanTarget) -> Self {
        match target {
            BanTarget::Member {
                member_id,
                nickname,
                scope,
            } => LogTarget::Member {
                member_id,
                nickname,
                scope,
            },
            BanTarget::Guest { tag, scope } => LogTarget::Guest {
                tag,
                scope: Some(scope),
            },
            BanTarget::DeletedMember {} => LogTarget::DeletedMember {},
        }
    }
}

/// One entry of a board's public moderation log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogEntry {
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    pub action: LogAction,
    pub target: LogTarget,
    /// Present, null where the action takes none (unban, moderators).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub reason: Option<String>,
    /// The staff member who acted.
    pub by: Author,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub at: String,
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

/// A page of open reports, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReportPage {
    pub reports: Vec<Report>,
    /// Present, null on the last page.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub next_cursor: Option<String>,
}

/// A page of the moderation log, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogPage {
    pub entries: Vec<LogEntry>,
    /// Present, null on the last page.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub next_cursor: Option<String>,
}

/// A board's moderators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Moderators {
    pub moderators: Vec<super::Member>,
}

/// Words a deployment refuses (`BLOCKED_WORDS`, docs/API.md, Field rules):
/// kept NFKC-normalized and case folded, and compared with the text folded
/// the same way, so `ＳＰＡＭ`, `Spam` and `spam` are one word. All the words
/// are one Aho-Corasick automaton, built once at start: a text is searched
/// in one pass whatever the number of words (one `contains` per word took
/// 120 ms for 3,000 words over an expanded body).
#[derive(Clone, Default)]
pub struct BlockedWords {
    words: Vec<String>,
    /// `None` for an empty list: nothing to fold or search.
    matcher: Option<AhoCorasick>,
}

impl std::fmt::Debug for BlockedWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BlockedWords").field(&self.words).finish()
    }
}

/// The automaton follows from the words.
impl PartialEq for BlockedWords {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words
    }
}

impl Eq for BlockedWords {}

/// A field screened for blocked words, with its limit in characters
/// (domain/fields.rs, docs/API.md Field rules): at most that many
/// characters of its normalized text are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Screened {
    Nickname,
    Title,
    PostBody,
    CommentBody,
    Reason,
}

impl Screened {
    /// The name the refusal gives.
    pub fn name(self) -> &'static str {
        match self {
            Screened::Nickname => "nickname",
            Screened::Title => "title",
            Screened::PostBody | Screened::CommentBody => "body",
            Screened::Reason => "reason",
        }
    }

    /// The field's limit, as its parser in fields.rs holds it (a test
    /// there-and-here keeps the two equal).
    pub fn limit(self) -> usize {
        match self {
            Screened::Nickname => 30,
            Screened::Title => 200,
            Screened::PostBody => 20_000,
            Screened::CommentBody => 2_000,
            Screened::Reason => 500,
        }
    }
}

/// NFKC, then full Unicode case folding, then NFKC again (folding can
/// un-normalize: the compatibility caseless match of Unicode 3.13), lazily:
/// the caller takes only as much as it searches.
fn folded(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().nfkc().default_case_fold().nfkc()
}

impl BlockedWords {
    /// A comma list; blank entries are skipped.
    pub fn parse_list(list: &str) -> Self {
        let mut words: Vec<String> = list
            .split(',')
            .map(|w| folded(w).collect::<String>().trim().to_owned())
            .collect();
        words.retain(|w| !w.is_empty());
        words.sort();
        words.dedup();
        // Building fails only past billions of automaton states; a list in
        // an environment variable is kilobytes.
        let matcher = (!words.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&words)
                .expect("BLOCKED_WORDS is too large for the matcher")
        });
        BlockedWords { words, matcher }
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// `400 validation_failed` naming the field when `text` contains a
    /// blocked word; which word is not said.
    ///
    /// Only the first [`Screened::limit`] characters of the normalized text
    /// are searched. The raw text is already at most that long, so a text
    /// normalization does not lengthen is searched whole; only expansion
    /// (U+FDFA is 18 characters in NFKC) reaches past it, and a word found
    /// only there stands behind at least a limit's worth of expansions (in a
    /// body, 1,111 U+FDFA) that every reader sees as such. Searching all of
    /// it would let one text cost 18 times a plain one of its field; cut,
    /// no text costs more than about twice.
    pub fn check(&self, field: Screened, text: &str) -> Result<(), ApiError> {
        let Some(matcher) = &self.matcher else {
            return Ok(());
        };
        let limit = field.limit();
        let mut normalized = String::with_capacity(text.len().min(limit * 4));
        normalized.extend(folded(text).take(limit));
        if matcher.is_match(&normalized) {
            return Err(ApiError::validation(format!(
                "{} contains a blocked word",
                field.name()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_words_match_after_nfkc_and_case_folding() {
        let words = BlockedWords::parse_list(" SPAM , casino,,Straße");
        assert_eq!(words.len(), 3);
        for text in ["buy spam now", "ＳＰＡＭ", "Spam", "CASINO!", "strasse", "STRASSE"] {
            let err = words.check(Screened::Title, text).unwrap_err();
            assert_eq!(err, ApiError::validation("title contains a blocked word"), "{text}");
        }
        for text in ["sp am", "casin0", "a fine title"] {
            assert!(words.check(Screened::Title, text).is_ok(), "{text}");
        }
        assert!(BlockedWords::default().check(Screened::PostBody, "spam").is_ok());
    }

    /// The automaton answers what one `contains` per folded word answered
    /// (the algorithm before it), on texts that do not expand past the limit.
    fn per_word(words: &[&str], text: &str) -> bool {
        let fold = |s: &str| -> String {
            let once: String = s.nfkc().collect();
            caseless::default_case_fold_str(&once).nfkc().collect()
        };
        let folded = fold(text);
        words
            .iter()
            .map(|w| fold(w).trim().to_owned())
            .any(|w| !w.is_empty() && folded.contains(w.as_str()))
    }

    proptest::proptest! {
        #[test]
        fn one_pass_finds_what_one_search_per_word_found(
            words in proptest::collection::vec("[aAsSß\u{1E9E}ﬁ\u{212A}kİi\u{0307}\u{0301}é가각\u{1100}\u{1161}\u{11A8} ]{0,4}", 0..6),
            text in "[aAsSß\u{1E9E}ﬁ\u{212A}kİi\u{0307}\u{0301}é가각\u{1100}\u{1161}\u{11A8} x]{0,40}",
        ) {
            let blocked = BlockedWords::parse_list(&words.join(","));
            let refs: Vec<&str> = words.iter().map(String::as_str).collect();
            proptest::prop_assert_eq!(
                blocked.check(Screened::Title, &text).is_err(),
                per_word(&refs, &text),
                "words {:?} text {:?}", words, text
            );
        }
    }

    #[test]
    fn each_of_many_words_is_found_and_no_other_text() {
        let words: Vec<String> = (0..3_000).map(|i| format!("w{i:04}z")).collect();
        let blocked = BlockedWords::parse_list(&words.join(","));
        assert_eq!(blocked.len(), 3_000);
        for word in words.iter().step_by(7).chain(words.last()) {
            let text = format!("some text around {} and after", word.to_uppercase());
            assert!(blocked.check(Screened::PostBody, &text).is_err(), "{word}");
        }
        let clean = "w0000 w12z w30000z ".repeat(1_000);
        assert!(blocked.check(Screened::PostBody, &clean).is_ok());
    }

    #[test]
    fn at_most_the_fields_limit_of_normalized_text_is_searched() {
        let words = BlockedWords::parse_list("spam");
        // A plain text at its limit is searched whole, to its last character.
        let plain = format!("{}spam", "a".repeat(Screened::PostBody.limit() - 4));
        assert!(words.check(Screened::PostBody, &plain).is_err());
        // U+FDFA is 18 characters in NFKC: 1,000 of them and the word are
        // within the body's 20,000; 1,111 of them fill it, and what follows
        // is not searched.
        let within = format!("{}spam", "\u{FDFA}".repeat(1_000));
        assert!(words.check(Screened::PostBody, &within).is_err());
        let beyond = format!("{}spam", "\u{FDFA}".repeat(1_111));
        assert!(words.check(Screened::PostBody, &beyond).is_ok());
        // Each field by its own limit: a comment's 2,000.
        let comment = format!("{}spam", "\u{FDFA}".repeat(111));
        assert!(words.check(Screened::CommentBody, &comment).is_ok());
        assert!(words.check(Screened::PostBody, &comment).is_err());
        // A word cut at the limit is not found either.
        let cut = format!("{}spam", "a".repeat(Screened::Title.limit() - 2));
        assert!(words.check(Screened::Title, &cut).is_ok());
    }

    #[test]
    fn the_screened_limits_are_the_parsers_limits() {
        use crate::domain::{CommentBody, Nickname, PostBody, Reason, Title};
        let parses = |field: Screened, n: usize| {
            let s = "a".repeat(n);
            match field {
                Screened::Nickname => Nickname::parse(s).is_ok(),
                Screened::Title => Title::parse(s).is_ok(),
                Screened::PostBody => PostBody::parse(s).is_ok(),
                Screened::CommentBody => CommentBody::parse(s).is_ok(),
                Screened::Reason => Reason::parse(s).is_ok(),
            }
        };
        for field in [
            Screened::Nickname,
            Screened::Title,
            Screened::PostBody,
            Screened::CommentBody,
            Screened::Reason,
        ] {
            assert!(parses(field, field.limit()), "{field:?}");
            assert!(!parses(field, field.limit() + 1), "{field:?}");
        }
    }

    #[test]
    fn a_tag_is_the_keys_prefix_and_debug_shows_only_it() {
        let key = WriterKey::new("abcdefgh234567abcdefgh234567abcdefgh234567abcdefgh23".into());
        assert_eq!(key.tag(), "abcdefgh");
        assert_eq!(format!("{key:?}"), "WriterKey(abcdefgh..)");
    }

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
