//! The client address every limit counts per (docs/API.md, Client address):
//! API Gateway's `requestContext.http.sourceIp` on Lambda; on the server the
//! TCP peer, or, when the peer is a trusted proxy (`TRUSTED_PROXIES`), the
//! right-most `X-Forwarded-For` address that is not itself trusted. The
//! left-most entry, which the client writes, is never believed. IPv6 clients
//! are keyed by their /64: one subscriber gets one /64, not one address (the
//! application adds their /48, `app::throttle`). An IPv4 address written in
//! IPv6 (mapped, 6to4, NAT64) is keyed as that IPv4 address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

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

/// The key of an address: IPv4 as is, IPv6 as its /64, and an IPv4 address
/// written in IPv6 (mapped, 6to4 or NAT64; [`embedded_ipv4`]) as that IPv4
/// address.
pub fn keyed(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match embedded_ipv4(v6) {
            Some(v4) => v4.to_string(),
            None => {
                let net = ipnet::Ipv6Net::new(v6, 64).expect("64 is a valid prefix").trunc();
                net.to_string()
            }
        },
    }
}

/// The IPv4 address an IPv6 address stands for: mapped (`::ffff:0:0/96`),
/// 6to4 (`2002::/16`, the IPv4 address in bits 16..48) or NAT64
/// (`64:ff9b::/96`, in the last 32 bits). Keyed as IPv4, one IPv4 address
/// is one client in every form: its 6to4 /48 does not buy 65,536 /64
/// budgets, tags or bans.
pub fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(mapped) = v6.to_ipv4_mapped() {
        return Some(mapped);
    }
    let v4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    match v6.segments() {
        [0x2002, high, low, ..] => Some(v4(high, low)),
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => Some(v4(high, low)),
        _ => None,
    }
}

/// Only the mapped form of a trusted IPv4 proxy is that proxy (the same
/// socket seen through a dual-stack listener): a 6to4 or NAT64 source is
/// another host, and trusting it would let it vouch for spoofed entries.
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
        assert_eq!(keyed("203.0.113.9".parse().unwrap()), "203.0.113.9");
        assert!(parse_trusted_proxies("10.0.0.0/8, 127.0.0.1, ::1").is_ok());
        assert!(
            parse_trusted_proxies("10.0.0.0/33")
                .unwrap_err()
                .starts_with("TRUSTED_PROXIES")
        );
    }

    #[test]
    fn ipv4_written_as_6to4_or_nat64_is_keyed_as_that_ipv4_address() {
        let key = |ip: &str| keyed(ip.parse().unwrap());
        // 6to4: 2002:AABB:CCDD::/48 is AA.BB.CC.DD, whatever its /64 and host.
        assert_eq!(key("2002:cb00:7109::1"), "203.0.113.9");
        assert_eq!(key("2002:cb00:7109:ffff:1234::5"), "203.0.113.9");
        assert_eq!(key("2002:cb00:710a::1"), "203.0.113.10");
        // NAT64, well-known prefix: the last 32 bits.
        assert_eq!(key("64:ff9b::cb00:7109"), "203.0.113.9");
        assert_eq!(key("64:ff9b::203.0.113.9"), "203.0.113.9");
        // Mapped, as before.
        assert_eq!(key("::ffff:cb00:7109"), "203.0.113.9");
        // Near misses stay IPv6 /64s: another /16, the NAT64 prefix with
        // bits set between it and the IPv4 address, plain v6.
        assert_eq!(key("2003:cb00:7109::1"), "2003:cb00:7109::/64");
        assert_eq!(key("64:ff9b:0:0:1::cb00:7109"), "64:ff9b::/64");
        assert_eq!(key("2001:db8:1:2::1"), "2001:db8:1:2::/64");
    }

    #[test]
    fn a_6to4_or_nat64_source_is_never_a_trusted_ipv4_proxy() {
        let proxies = parse_trusted_proxies("10.0.0.0/8").unwrap();
        assert!(trusted("::ffff:10.0.0.7".parse().unwrap(), &proxies));
        assert!(!trusted("2002:a00:7::1".parse().unwrap(), &proxies));
        assert!(!trusted("64:ff9b::a00:7".parse().unwrap(), &proxies));
    }

    #[test]
    fn a_forwarded_6to4_client_is_keyed_as_its_ipv4_address() {
        assert_eq!(
            address([10, 0, 0, 7], &["2002:cb00:7109:42::1"], "10.0.0.0/8"),
            "203.0.113.9"
        );
        assert_eq!(
            address([10, 0, 0, 7], &["[64:ff9b::cb00:7109]:4711"], "10.0.0.0/8"),
            "203.0.113.9"
        );
    }
}
