//! A post's version (docs/API.md, Conventions): what its `ETag` says
//! and `If-Match` names. A digest of the title and body, so it changes with
//! every edit of either and never with counts, and is the same for the same
//! text in every store and deployment (nothing to store or migrate).

use sha2::{Digest, Sha256};

use crate::error::ApiError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostVersion(String);

/// At most this many entity tags in one `If-Match`.
const MAX_TAGS: usize = 16;

impl PostVersion {
    pub fn of(title: &str, body: &str) -> Self {
        let mut digest = Sha256::new();
        // Length-prefixed: ("ab", "c") and ("a", "bc") differ.
        digest.update((title.len() as u64).to_be_bytes());
        digest.update(title.as_bytes());
        digest.update(body.as_bytes());
        let hex: String = digest.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect();
        PostVersion(hex)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The `ETag` header value: a strong entity tag.
    pub fn etag(&self) -> String {
        format!("\"{}\"", self.0)
    }

    /// The versions an `If-Match` value names (RFC 9110: a comma list of
    /// entity tags, or `*`). `None` for `*`: any version of an existing post.
    /// Weak tags (`W/"..."`) never match under the strong comparison an edit
    /// needs, so they name nothing.
    pub fn parse_if_match(value: &str) -> Result<Option<Vec<PostVersion>>, ApiError> {
        let value = value.trim();
        if value == "*" {
            return Ok(None);
        }
        let refused = || ApiError::invalid("If-Match", "must be `*` or a list of entity tags (\"...\")");
        let mut versions = Vec::new();
        for tag in value.split(',').map(str::trim) {
            let (weak, quoted) = match tag.strip_prefix("W/") {
                Some(rest) => (true, rest),
                None => (false, tag),
            };
            let inner = quoted
                .strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .filter(|t| t.bytes().all(|b| b == 0x21 || (0x23..=0x7e).contains(&b)))
                .ok_or_else(refused)?;
            if !weak {
                versions.push(PostVersion(inner.to_owned()));
            }
        }
        if versions.len() > MAX_TAGS {
            return Err(ApiError::invalid(
                "If-Match",
                format_args!("may name at most {MAX_TAGS} entity tags"),
            ));
        }
        Ok(Some(versions))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_follows_title_and_body_only() {
        let v = PostVersion::of("title", "body");
        assert_eq!(v, PostVersion::of("title", "body"));
        assert_ne!(v, PostVersion::of("title", "body!"));
        assert_ne!(v, PostVersion::of("titl", "ebody"));
        assert_eq!(v.as_str().len(), 32);
        assert_eq!(v.etag(), format!("\"{}\"", v.as_str()));
    }

    #[test]
    fn if_match_is_star_or_a_list_of_entity_tags() {
        let v = PostVersion::of("t", "b");
        assert_eq!(PostVersion::parse_if_match("*").unwrap(), None);
        assert_eq!(PostVersion::parse_if_match(&v.etag()).unwrap(), Some(vec![v.clone()]));
        let list = format!("\"other\", {} , W/\"weak\"", v.etag());
        assert_eq!(
            PostVersion::parse_if_match(&list).unwrap(),
            Some(vec![PostVersion("other".into()), v])
        );
        for bad in ["", "abc", "\"unterminated", "\"a\"b\"", "\"sp ace\""] {
            let e = PostVersion::parse_if_match(bad).unwrap_err();
            assert!(e.to_string().contains("If-Match"), "{bad}: {e}");
        }
        let many = vec!["\"a\""; 17].join(",");
        assert!(PostVersion::parse_if_match(&many).is_err());
    }
}
