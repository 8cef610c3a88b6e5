//! The tokens search indexes and asks for (docs/DESIGN.md, Search): text is
//! folded (NFKC, case folding), then cut into runs of syllabic characters
//! (Hangul syllables, CJK ideographs, kana) and of other letters and
//! digits. A syllabic run is indexed as its overlapping bigrams (a lone
//! character as itself), the two characters Korean words share whatever
//! particle follows; a word run as each of its suffixes, cut to
//! [`WORD_TOKEN_CHARS`], so a term inside a word is a prefix of one of them.
//! A term asks for the bigrams of its syllabic runs and a token starting
//! with each of its word runs: every text holding the term holds those, so
//! nothing is missed; the candidates are then checked for the term itself.

use std::collections::BTreeSet;

use caseless::Caseless as _;
use unicode_normalization::UnicodeNormalization as _;

/// The longest token a word run gives; a longer word searches by its first
/// this many characters, and the check after finds the whole word.
pub const WORD_TOKEN_CHARS: usize = 12;

/// NFKC, then full Unicode case folding, then NFKC again (folding can
/// un-normalize: the compatibility caseless match of Unicode 3.13), lazily:
/// a caller takes only as much as it reads.
pub fn folded(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().nfkc().default_case_fold().nfkc()
}

/// A text as search compares it.
pub fn fold(text: &str) -> String {
    folded(text).collect()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Syllabic,
    Word,
    Other,
}

fn class(c: char) -> Class {
    match c {
        '\u{AC00}'..='\u{D7A3}' // Hangul syllables
        | '\u{3040}'..='\u{30FF}' // hiragana, katakana
        | '\u{3400}'..='\u{4DBF}' // CJK extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}' => Class::Syllabic,
        c if c.is_alphanumeric() => Class::Word,
        _ => Class::Other,
    }
}

/// The syllabic and word runs of a folded text, in order.
fn runs(text: &str) -> Vec<(Class, Vec<char>)> {
    let mut runs: Vec<(Class, Vec<char>)> = Vec::new();
    for c in text.chars() {
        let class = class(c);
        match runs.last_mut() {
            Some((last, chars)) if *last == class => chars.push(c),
            _ => runs.push((class, vec![c])),
        }
    }
    runs.retain(|(class, _)| *class != Class::Other);
    runs
}

fn bigrams(run: &[char]) -> impl Iterator<Item = String> + '_ {
    run.windows(2).map(|pair| pair.iter().collect())
}

/// Every token a folded text is indexed by, once each.
pub fn index_tokens(folded: &str) -> BTreeSet<String> {
    let mut tokens = BTreeSet::new();
    for (class, run) in runs(folded) {
        match class {
            Class::Syllabic if run.len() == 1 => {
                tokens.insert(run[0].to_string());
            }
            Class::Syllabic => tokens.extend(bigrams(&run)),
            Class::Word => tokens
                .extend((0..run.len()).map(|start| run[start..].iter().take(WORD_TOKEN_CHARS).collect::<String>())),
            Class::Other => {}
        }
    }
    tokens
}

/// What a text must be indexed by to hold a term: these tokens, and for
/// each prefix a token starting with it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TermTokens {
    pub exact: Vec<String>,
    pub prefixes: Vec<String>,
}

impl TermTokens {
    /// Nothing to look up (a term of lone syllables and punctuation): the
    /// candidates are every text, checked one by one.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.prefixes.is_empty()
    }
}

/// The tokens a folded term asks for. A lone syllabic character asks for
/// nothing: in a text it may sit inside a bigram, on either side.
pub fn term_tokens(folded_term: &str) -> TermTokens {
    let mut tokens = TermTokens::default();
    for (class, run) in runs(folded_term) {
        match class {
            Class::Syllabic => tokens.exact.extend(bigrams(&run)),
            Class::Word => tokens.prefixes.push(run.iter().take(WORD_TOKEN_CHARS).collect()),
            Class::Other => {}
        }
    }
    tokens.exact.sort();
    tokens.exact.dedup();
    tokens.prefixes.sort();
    tokens.prefixes.dedup();
    tokens
}

/// Whether a folded text holds every folded term: the rule the index's
/// candidates are checked by.
pub fn holds_all(folded_text: &str, folded_terms: &[String]) -> bool {
    folded_terms.iter().all(|term| folded_text.contains(term.as_str()))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn indexed_by(text: &str, term: &str) -> bool {
        let index = index_tokens(&fold(text));
        let asked = term_tokens(&fold(term));
        asked.exact.iter().all(|t| index.contains(t))
            && asked.prefixes.iter().all(|p| {
                index
                    .range(p.clone()..)
                    .next()
                    .is_some_and(|t| t.starts_with(p.as_str()))
            })
    }

    #[test]
    fn two_syllables_find_the_word_whatever_particle_follows() {
        for text in ["서울에서 만나요", "서울은 춥다", "나는서울사람"] {
            assert!(indexed_by(text, "서울"), "{text}");
        }
        assert!(!indexed_by("서해 울산", "서울"));
        assert_eq!(term_tokens("서울특별시").exact, ["별시", "서울", "울특", "특별"]);
    }

    #[test]
    fn a_latin_term_is_found_inside_a_word_after_folding() {
        assert!(indexed_by("Rust를 배우자", "rust"));
        assert!(indexed_by("TRUSTWORTHY", "ust"));
        assert!(indexed_by("ｒｕｓｔ", "Rust"), "full-width letters fold to ASCII");
        assert!(indexed_by("Straße", "STRASSE"), "ß folds to ss");
        assert!(!indexed_by("rest", "rust"));
    }

    #[test]
    fn a_long_word_asks_for_its_first_characters_only() {
        let word = "supercalifragilistic";
        assert_eq!(term_tokens(word).prefixes, [word[..WORD_TOKEN_CHARS].to_owned()]);
        assert!(indexed_by("a supercalifragilistic day", word));
        assert!(index_tokens(word).iter().all(|t| t.chars().count() <= WORD_TOKEN_CHARS));
    }

    #[test]
    fn a_lone_syllable_is_indexed_as_itself_and_asks_for_nothing() {
        assert!(index_tokens("밥 먹자").contains("밥"));
        assert!(term_tokens("밥!").is_empty());
        assert_eq!(term_tokens("a밥").prefixes, ["a"]);
    }

    #[test]
    fn mixed_terms_ask_for_each_run() {
        let asked = term_tokens(&fold("LoL게임"));
        assert_eq!(
            (asked.prefixes, asked.exact),
            (vec!["lol".to_owned()], vec!["게임".to_owned()])
        );
        assert!(indexed_by("오늘 LoL게임 했다", "lol게임"));
    }

    #[test]
    fn the_check_wants_every_term() {
        let terms = ["서울".to_owned(), "rust".to_owned()];
        assert!(holds_all(&fold("서울에서 Rust 모임"), &terms));
        assert!(!holds_all(&fold("서울에서 모임"), &terms));
    }

    /// Text from a few syllables, letters, digits and separators, so terms
    /// cut from it often occur more than once.
    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("서"),
                Just("울"),
                Just("은"),
                Just("게"),
                Just("임"),
                Just("a"),
                Just("B"),
                Just("ß"),
                Just("7"),
                Just(" "),
                Just("."),
                Just("Ａ"),
            ],
            0..40,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        /// Nothing that holds a term is missed: every term cut from a text
        /// asks only for tokens that text is indexed by.
        #[test]
        fn every_text_holding_a_term_is_indexed_by_what_the_term_asks_for(
            text in text(),
            start in 0usize..40,
            len in 2usize..8,
        ) {
            let folded: Vec<char> = fold(&text).chars().collect();
            prop_assume!(start + len <= folded.len());
            let term: String = folded[start..start + len].iter().collect();
            prop_assume!(!term.contains(' '));
            prop_assert!(indexed_by(&text, &term), "{text:?} / {term:?}");
        }
    }
}
