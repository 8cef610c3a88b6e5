//! The client address used for throttling (docs/API.md, Client address): API Gateway's
//! `requestContext.http.sourceIp` on Lambda; on the server the peer address,
//! or the left-most `X-Forwarded-For` entry when the server trusts a proxy.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use http::request::Parts;
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
        Ok(ClientIp(ClientAddress(client_ip(parts, state.trust_proxy))))
    }
}

pub fn client_ip(parts: &Parts, trust_proxy: bool) -> String {
    #[cfg(feature = "lambda")]
    if let Some(RequestContext::ApiGatewayV2(ctx)) = parts.extensions.get::<RequestContext>()
        && let Some(ip) = &ctx.http.source_ip
    {
        return ip.clone();
    }
    if trust_proxy
        && let Some(ip) = parts
            .headers
            .get("x-forwarded-for")
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.split(',').next())
            .and_then(|first| first.trim().parse::<IpAddr>().ok())
    {
        return ip.to_string();
    }
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |ConnectInfo(addr)| addr.ip().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(xff: Option<&str>) -> Parts {
        let mut builder = http::Request::builder().uri("/");
        if let Some(xff) = xff {
            builder = builder.header("x-forwarded-for", xff);
        }
        let (mut parts, ()) = builder.body(()).unwrap().into_parts();
        parts
            .extensions
            .insert(ConnectInfo(SocketAddr::from(([10, 0, 0, 7], 5000))));
        parts
    }

    #[test]
    fn the_peer_address_wins_unless_a_proxy_is_trusted() {
        assert_eq!(client_ip(&parts(Some("203.0.113.9")), false), "10.0.0.7");
        assert_eq!(client_ip(&parts(Some("203.0.113.9, 10.0.0.1")), true), "203.0.113.9");
        assert_eq!(client_ip(&parts(Some("garbage")), true), "10.0.0.7");
        assert_eq!(client_ip(&parts(None), true), "10.0.0.7");
    }
}
