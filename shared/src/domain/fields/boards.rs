//! Board slugs and the configured boards (`BOARDS`).

use crate::error::ApiError;

text_type!(
    /// `[a-z0-9-]{1,40}`: well formed. Only [`Boards::resolve`] says it is configured.
    BoardSlug
);

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
