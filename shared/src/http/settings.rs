//! The HTTP adapter's settings: whose `X-Forwarded-For` is believed
//! (docs/API.md, Client address). Server mode only; on Lambda the client
//! address is API Gateway's.

use std::fmt;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpSettings {
    /// Proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

impl fmt::Display for HttpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proxies: Vec<String> = self.trusted_proxies.iter().map(ToString::to_string).collect();
        write!(f, "trusted_proxies={}", proxies.join(","))
    }
}
