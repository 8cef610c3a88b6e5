//! Search (docs/API.md, Search): what a query is, and the tokens an index
//! keeps for it ([`tokens`]).

pub mod tokens;

use unicode_normalization::UnicodeNormalization as _;

use crate::error::ApiError;
pub use tokens::{TermTokens, fold, holds_all, index_tokens, term_tokens};

/// The most characters `q` may have, after NFKC and trimming.
pub const MAX_QUERY_CHARS: usize = 100;
/// The most terms a query may have; all must match.
pub const MAX_TERMS: usize = 5;
/// The fewest characters a term may have.
pub const MIN_TERM_CHARS: usize = 2;

/// Which field a search looks in (`in`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchIn {
    #[default]
    TitleBody,
    Title,
    Author,
    Comment,
}

impl SearchIn {
    pub fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value {
            None => Ok(SearchIn::TitleBody),
            Some("title_body") => Ok(SearchIn::TitleBody),
            Some("title") => Ok(SearchIn::Title),
            Some("author") => Ok(SearchIn::Author),
            Some("comment") => Ok(SearchIn::Comment),
            Some(_) => Err(ApiError::invalid(
                "in",
                "must be one of title_body, title, author, comment",
            )),
        }
    }
}

/// A query's terms, each folded (NFKC, case folding), all to be matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchTerms(Vec<String>);

impl SearchTerms {
    pub fn parse(q: Option<&str>) -> Result<Self, ApiError> {
        let q: String = q.unwrap_or_default().nfkc().collect();
        let q = q.trim();
        let chars = q.chars().count();
        if chars == 0 || chars > MAX_QUERY_CHARS {
            return Err(ApiError::invalid(
                "q",
                format!("must be 1 to {MAX_QUERY_CHARS} characters"),
            ));
        }
        let terms: Vec<&str> = q.split_whitespace().collect();
        if terms.len() > MAX_TERMS {
            return Err(ApiError::invalid("q", format!("must have at most {MAX_TERMS} terms")));
        }
        if terms.iter().any(|t| t.chars().count() < MIN_TERM_CHARS) {
            return Err(ApiError::invalid(
                "q",
                format!("each term must have at least {MIN_TERM_CHARS} characters"),
            ));
        }
        let mut folded: Vec<String> = terms.iter().map(|t| fold(t)).collect();
        folded.sort();
        folded.dedup();
        Ok(SearchTerms(folded))
    }

    pub fn terms(&self) -> &[String] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(q: &str) -> String {
        let err = SearchTerms::parse(Some(q)).unwrap_err();
        format!("{err:?}")
    }

    #[test]
    fn a_query_is_folded_and_split_into_terms() {
        let terms = SearchTerms::parse(Some("  Ｒｕｓｔ 서울  rust ")).unwrap();
        assert_eq!(terms.terms(), ["rust", "서울"]);
    }

    #[test]
    fn a_blank_long_short_or_crowded_query_names_q() {
        for q in ["", "   ", "a", "서울 a", "a b c d e f", &"가".repeat(101)] {
            let err = refused(q);
            assert!(err.contains("\"q\""), "{q:?}: {err}");
        }
        assert!(SearchTerms::parse(Some(&"가".repeat(100))).is_ok());
        assert!(SearchTerms::parse(None).is_err());
    }

    #[test]
    fn in_defaults_to_title_and_body_and_names_itself_when_unknown() {
        assert_eq!(SearchIn::parse(None).unwrap(), SearchIn::TitleBody);
        assert_eq!(SearchIn::parse(Some("comment")).unwrap(), SearchIn::Comment);
        assert!(format!("{:?}", SearchIn::parse(Some("body")).unwrap_err()).contains("\"in\""));
    }
}
