//! The blocked-words rule (`BLOCKED_WORDS`).

use aho_corasick::{AhoCorasick, MatchKind};

use crate::domain::search::tokens::folded;

use crate::error::ApiError;

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
/// (domain/fields/text.rs, docs/API.md Field rules): at most that many
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

    /// The field's limit, as its parser in fields/text.rs holds it (a test
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
            return Err(ApiError::invalid(field.name(), "contains a blocked word"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use unicode_normalization::UnicodeNormalization as _;

    use super::*;

    #[test]
    fn blocked_words_match_after_nfkc_and_case_folding() {
        let words = BlockedWords::parse_list(" SPAM , casino,,Straße");
        assert_eq!(words.len(), 3);
        for text in ["buy spam now", "ＳＰＡＭ", "Spam", "CASINO!", "strasse", "STRASSE"] {
            let err = words.check(Screened::Title, text).unwrap_err();
            assert_eq!(err, ApiError::invalid("title", "contains a blocked word"), "{text}");
            assert_eq!(err.to_string(), "title contains a blocked word");
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
}
