//! Who asks for a hash, and how much of a tier's queue one asker may hold:
//! a quarter for one client, twice that for the /64s of one IPv6 /48.

/// Who asks for a hash, for the per-client share of a queue: the client
/// address key and, for an IPv6 client, its /48, hashed (the gate needs
/// only to tell clients apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueueOwner {
    pub(super) key: u64,
    pub(super) prefix_48: Option<u64>,
}

impl QueueOwner {
    pub fn of(client_key: &str) -> Self {
        use std::hash::{BuildHasher, BuildHasherDefault};
        // A fixed hasher: the same client is the same owner in every request.
        let hash = |s: &str| BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(s);
        QueueOwner {
            key: hash(client_key),
            prefix_48: prefix_48(client_key).map(|net| hash(&net.to_string())),
        }
    }
}

/// The /48 of an IPv6 /64 client key, as `app::throttle` counts it; `None`
/// for an IPv4 key.
pub(super) fn prefix_48(client_key: &str) -> Option<ipnet::Ipv6Net> {
    let net: ipnet::Ipv6Net = client_key.parse().ok()?;
    (net.prefix_len() == 64).then(|| ipnet::Ipv6Net::new(net.addr(), 48).ok().map(|n| n.trunc()))?
}

/// How many places of a tier's `queue` one owner may hold: a quarter, at
/// least one, and never all of a queue of two or more.
pub fn fair_share(queue: usize) -> usize {
    (queue / 4).max(1).min(queue.saturating_sub(1).max(1))
}

/// How many places the /64s of one /48 may hold together: twice
/// [`fair_share`], and never all of a queue of two or more (one free /48
/// must not buy 65,536 shares).
pub(super) fn fair_share_48(queue: usize) -> usize {
    (2 * fair_share(queue)).min(queue.saturating_sub(1).max(1))
}
