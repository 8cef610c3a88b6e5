//! The writer key every post and comment is stored with, and the guest tag
//! shown of it.

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

/// The keys a post or comment is stored with: its writer's address
/// key and the key of the range around it (the IPv4 /24 or the IPv6 /48),
/// both under the tag key. A `"range"` ban names the second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    pub key: WriterKey,
    pub range: WriterKey,
}
