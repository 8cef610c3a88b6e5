//! The client address every limit counts per (docs/API.md, Client address):
//! API Gateway's `requestContext.http.sourceIp` on Lambda; on the server the
//! TCP peer, or, when the peer is a trusted proxy (`TRUSTED_PROXIES`), the
//! right-most `X-Forwarded-For` address that is not itself trusted. The
//! left-most entry, which the client writes, is never believed. IPv6 clients
//! are keyed by their /64: one subscriber gets one /64, not one address (the
//! application adds their /48, `app::throttle`).

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use http::request::Parts;
use ipnet::IpNet;
#[cfg(feature = "lambda")]
use lambda_http::request::RequestContext;

use super::AppState;
use crate::app::ClientAddress;
use crate::error::ApiError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIp(pub ClientAddress);

impl FromRequestParts<AppState> for ClientIp {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        Ok(ClientIp(client_address(parts, &state.trusted_proxies)))
    }
}

/// The key of an address: IPv4 as is, IPv6 as its /64 (an IPv4-mapped IPv6
/// address counts as the IPv4 address).
pub fn keyed(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let net = ipnet::Ipv6Net::new(v6, 64).expect("64 is a valid prefix").trunc();
                net.to_string()
            }
        },
    }
}

fn trusted(ip: IpAddr, proxies: &[IpNet]) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    proxies.iter().any(|net| net.contains(&ip))
}

pub fn client_address(parts: &Parts, trusted_proxies: &[IpNet]) -> ClientAddress {
    #[cfg(feature = "lambda")]
    if let Some(RequestContext::ApiGatewayV2(ctx)) = parts.extensions.get::<RequestContext>()
        && let Some(source) = &ctx.http.source_ip
    {
        return ClientAddress(source.parse::<IpAddr>().map_or_else(|_| source.clone(), keyed));
    }
    let Some(ConnectInfo(peer)) = parts.extensions.get::<ConnectInfo<SocketAddr>>() else {
        return ClientAddress("unknown".to_owned());
    };
    let mut client = peer.ip();
    if trusted(client, trusted_proxies) {
        // Walk the chain from the right, entry by entry (a header line that
        // is not UTF-8 is still split into its entries): each trusted hop
        // vouches for the one before it.
        let hops = parts
            .headers
            .get_all("x-forwarded-for")
            .iter()
            .flat_map(|h| h.as_bytes().split(|b| *b == b','))
            .collect::<Vec<_>>();
        for hop in hops.iter().rev() {
            // An entry that is not an address ends what can be believed: the
            // client is the hop just right of it.
            let Some(ip) = hop_address(hop) else { break };
            client = ip;
            if !trusted(ip, trusted_proxies) {
                break;
            }
        }
    }
    ClientAddress(keyed(client))
}

/// One `X-Forwarded-For` entry: an address, with or without a port
/// (`198.51.100.7:4711`, `[2001:db8::1]:4711`, `[2001:db8::1]`).
fn hop_address(entry: &[u8]) -> Option<IpAddr> {
    let entry = std::str::from_utf8(entry).ok()?.trim();
    entry
        .parse::<IpAddr>()
        .ok()
        .or_else(|| entry.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| entry.strip_prefix('[')?.strip_suffix(']')?.parse::<IpAddr>().ok())
}

/// `TRUSTED_PROXIES`: a comma list of CIDRs (a bare address is a /32 or /128).
pub fn parse_trusted_proxies(list: &str) -> Result<Vec<IpNet>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<IpNet>()
                .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| format!("TRUSTED_PROXIES: {s:?} is not a CIDR (e.g. 10.0.0.0/8) or an address"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(peer: [u8; 4], xff: &[&str]) -> Parts {
        let mut builder = http::Request::builder().uri("/");
        for h in xff {
            builder = builder.header("x-forwarded-for", *h);
        }
        let (mut parts, ()) = builder.body(()).unwrap().into_parts();
        parts.extensions.insert(ConnectInfo(SocketAddr::from((peer, 5000))));
        parts
    }

    fn address(peer: [u8; 4], xff: &[&str], trusted: &str) -> String {
        client_address(&parts(peer, xff), &parse_trusted_proxies(trusted).unwrap()).0
    }

    #[test]
    fn the_peer_is_the_client_unless_it_is_a_trusted_proxy() {
        assert_eq!(address([10, 0, 0, 7], &["203.0.113.9"], ""), "10.0.0.7");
        assert_eq!(address([10, 0, 0, 7], &["203.0.113.9"], "192.168.0.0/16"), "10.0.0.7");
        assert_eq!(address([10, 0, 0, 7], &["203.0.113.9"], "10.0.0.0/8"), "203.0.113.9");
    }

    #[test]
    fn the_right_most_untrusted_address_wins_and_the_left_most_is_never_believed() {
        // The client wrote "1.1.1.1" itself; the proxy appended the address it saw.
        let spoofed = ["1.1.1.1, 203.0.113.9"];
        assert_eq!(address([10, 0, 0, 7], &spoofed, "10.0.0.0/8"), "203.0.113.9");
        // Two trusted hops: the chain is walked past both.
        let chain = ["1.1.1.1, 203.0.113.9, 10.0.0.2"];
        assert_eq!(address([10, 0, 0, 7], &chain, "10.0.0.0/8"), "203.0.113.9");
        // Split over two headers, in order.
        assert_eq!(
            address([10, 0, 0, 7], &["1.1.1.1", "203.0.113.9"], "10.0.0.0/8"),
            "203.0.113.9"
        );
        // Garbage ends the chain: the last believed hop stays.
        assert_eq!(
            address([10, 0, 0, 7], &["203.0.113.9, garbage"], "10.0.0.0/8"),
            "10.0.0.7"
        );
        // Everything trusted: the left-most address reached.
        assert_eq!(address([10, 0, 0, 7], &["10.0.0.3"], "10.0.0.0/8"), "10.0.0.3");
    }

    #[test]
    fn entries_with_ports_count_by_their_address_and_a_bad_entry_voids_nothing_to_its_right() {
        let trusted = "10.0.0.0/8";
        assert_eq!(address([10, 0, 0, 7], &["198.51.100.7:4711"], trusted), "198.51.100.7");
        assert_eq!(
            address([10, 0, 0, 7], &["[2001:db8::1]:4711"], trusted),
            "2001:db8::/64"
        );
        assert_eq!(address([10, 0, 0, 7], &["[2001:db8::1]"], trusted), "2001:db8::/64");
        assert_eq!(
            address([10, 0, 0, 7], &["1.1.1.1, 203.0.113.9:80, 10.0.0.2:443"], trusted),
            "203.0.113.9"
        );
        // A line that is not UTF-8 further left keeps the valid entries of its own line.
        let mut builder = http::Request::builder().uri("/");
        builder = builder.header(
            "x-forwarded-for",
            http::HeaderValue::from_bytes(b"\xff\xfe, 203.0.113.9").unwrap(),
        );
        let (mut parts, ()) = builder.body(()).unwrap().into_parts();
        parts
            .extensions
            .insert(ConnectInfo(SocketAddr::from(([10, 0, 0, 7], 5000))));
        assert_eq!(
            client_address(&parts, &parse_trusted_proxies(trusted).unwrap()).0,
            "203.0.113.9"
        );
        // Reached before an untrusted address: keyed by the entry just right of it.
        assert_eq!(
            address([10, 0, 0, 7], &["203.0.113.9, nonsense, 10.0.0.2"], trusted),
            "10.0.0.2"
        );
    }

    #[test]
    fn ipv6_clients_are_keyed_by_their_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(keyed(a), "2001:db8:1:2::/64");
        assert_eq!(keyed(a), keyed(b));
        assert_ne!(keyed(a), keyed(other));
        assert_eq!(keyed("::ffff:203.0.113.9".parse().unwrap()), "203.0.113.9");
        assert!(parse_trusted_proxies("10.0.0.0/8, 127.0.0.1, ::1").is_ok());
        assert!(
            parse_trusted_proxies("10.0.0.0/33")
                .unwrap_err()
                .starts_with("TRUSTED_PROXIES")
        );
    }
}
