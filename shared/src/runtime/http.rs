//! The HTTP adapter's settings from the environment (server mode).

use super::{ConfigError, Env};
use crate::http::HttpSettings;
use crate::http::client_ip::parse_trusted_proxies;

pub(super) fn http_settings(env: &Env<'_>) -> Result<HttpSettings, ConfigError> {
    if env.get("TRUST_PROXY").is_some() {
        return Err(ConfigError::invalid(
            "TRUST_PROXY is gone: list the proxies in TRUSTED_PROXIES (CIDRs); the right-most untrusted X-Forwarded-For address is the client",
        ));
    }
    Ok(HttpSettings {
        trusted_proxies: match env.get("TRUSTED_PROXIES") {
            Some(list) => parse_trusted_proxies(&list).map_err(ConfigError::Invalid)?,
            None => Vec::new(),
        },
    })
}
