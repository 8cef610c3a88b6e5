//! The server's own settings (docs/configuration.md): where it listens, who
//! may call it from a browser, and what one connection may take of it. Read
//! from the same environment as every layer's (`shared::runtime::Env`);
//! printed at start.

use std::fmt;
use std::time::Duration;

use shared::runtime::{ConfigError, Env};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSettings {
    /// A host name or address (`localhost`, `0.0.0.0`, `::`).
    pub bind: String,
    pub port: u16,
    pub cors_origins: Vec<String>,
    pub connections: ConnectionLimits,
}

/// What one connection may take of the server (docs/security.md): a client
/// that sends nothing, or its headers a byte at a time, or keeps an idle
/// connection open, is cut off; so is a request that runs too long, or whose
/// head is too large, or an answer its client does not read; and at the cap
/// a connection whose answer is stalled, or else the longest-idle kept-alive
/// one, is closed for the next one (which waits while none is either).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// From the moment the server waits for a request (on a new or a
    /// kept-alive connection) until its headers are in: also the idle
    /// keep-alive timeout (hyper runs one timer for both).
    pub header_timeout: Duration,
    /// From the headers to the last byte of the answer (the body included).
    pub request_timeout: Duration,
    /// How long an answer may make no progress (its client reads
    /// nothing, so not a byte can be written) before its connection is
    /// closed (`SERVER_WRITE_TIMEOUT_MS`).
    pub write_timeout: Duration,
    /// At the cap, the connection idle longest between requests is closed
    /// to admit another.
    pub max_connections: usize,
    /// The largest request head (request line, header lines and
    /// the blank line, as hyper counts it) in bytes; larger: `431`, closed.
    /// Also what an unfinished head may hold of memory.
    pub max_header_bytes: usize,
    /// Connections one TCP peer address may hold at once
    /// (`MAX_CONNECTIONS_PER_ADDRESS`): one client cannot hold every slot.
    /// An IPv6 peer counts by its /64 (one host's usual share) and
    /// also by its /48 at 8 times this (one site's).
    pub per_address: usize,
    /// Peers without a per-address cap: the trusted proxies, which carry
    /// many clients' connections (`TRUSTED_PROXIES`, set by the caller).
    pub exempt: Vec<ipnet::IpNet>,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            max_connections: 1_024,
            max_header_bytes: 64 * 1024,
            per_address: 64,
            exempt: Vec::new(),
        }
    }
}

impl ServerSettings {
    pub fn from_env(env: &Env<'_>) -> Result<Self, ConfigError> {
        let bind = env
            .get("BIND")
            .map_or_else(|| "127.0.0.1".to_owned(), |v| v.trim().to_owned());
        if bind.contains([':', '/']) && bind.parse::<std::net::IpAddr>().is_err() {
            return Err(ConfigError::Invalid(format!(
                "BIND must be a host name or an IP address without a port, not {bind:?}"
            )));
        }
        let mut connections = ConnectionLimits::default();
        if let Some(t) = env.millis("SERVER_HEADER_TIMEOUT_MS")? {
            connections.header_timeout = t;
        }
        if let Some(t) = env.millis("SERVER_REQUEST_TIMEOUT_MS")? {
            connections.request_timeout = t;
        }
        if let Some(t) = env.millis("SERVER_WRITE_TIMEOUT_MS")? {
            connections.write_timeout = t;
        }
        if let Some(n) = env.number::<usize>("SERVER_MAX_CONNECTIONS", 1, "a positive whole number")? {
            connections.max_connections = n;
        }
        if let Some(n) = env.number::<usize>(
            "SERVER_MAX_HEADER_BYTES",
            1_024,
            "a whole number of bytes, at least 1024",
        )? {
            connections.max_header_bytes = n;
        }
        if let Some(n) = env.number::<usize>("MAX_CONNECTIONS_PER_ADDRESS", 1, "a positive whole number")? {
            connections.per_address = n;
        }
        Ok(ServerSettings {
            bind,
            port: env.number::<u16>("PORT", 0, "a port number (0-65535)")?.unwrap_or(3000),
            cors_origins: env.list("CORS_ORIGINS").unwrap_or_default(),
            connections,
        })
    }
}

impl fmt::Display for ServerSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bind={}:{} cors_origins={} header_timeout_ms={} request_timeout_ms={} write_timeout_ms={} max_connections={} max_connections_per_address={} max_header_bytes={}",
            self.bind,
            self.port,
            self.cors_origins.join(","),
            self.connections.header_timeout.as_millis(),
            self.connections.request_timeout.as_millis(),
            self.connections.write_timeout.as_millis(),
            self.connections.max_connections,
            self.connections.per_address,
            self.connections.max_header_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_server_settings_name_themselves() {
        for (name, value, expected) in [
            ("PORT", "http", "PORT must be a port number"),
            ("BIND", "localhost:80", "BIND must be a host name or an IP address"),
            ("SERVER_MAX_CONNECTIONS", "0", "SERVER_MAX_CONNECTIONS"),
            ("SERVER_MAX_CONNECTIONS", "-1", "SERVER_MAX_CONNECTIONS"),
            ("SERVER_HEADER_TIMEOUT_MS", "soon", "SERVER_HEADER_TIMEOUT_MS"),
            (
                "SERVER_WRITE_TIMEOUT_MS",
                "0",
                "SERVER_WRITE_TIMEOUT_MS must be a positive",
            ),
            ("SERVER_WRITE_TIMEOUT_MS", "10s", "SERVER_WRITE_TIMEOUT_MS"),
            ("MAX_CONNECTIONS_PER_ADDRESS", "0", "MAX_CONNECTIONS_PER_ADDRESS"),
            (
                "SERVER_MAX_HEADER_BYTES",
                "1023",
                "SERVER_MAX_HEADER_BYTES must be a whole number of bytes",
            ),
            ("SERVER_MAX_HEADER_BYTES", "64k", "SERVER_MAX_HEADER_BYTES"),
        ] {
            let pairs = [(name, value)];
            let err = ServerSettings::from_env(&Env::from_pairs(&pairs)).unwrap_err();
            assert!(err.to_string().starts_with(expected), "{name}: {err}");
        }
    }

    #[test]
    fn settings_are_read_and_printed() {
        let pairs = [
            ("CORS_ORIGINS", "https://a.example, https://b.example"),
            ("SERVER_HEADER_TIMEOUT_MS", "2500"),
            ("SERVER_WRITE_TIMEOUT_MS", "1500"),
            ("SERVER_MAX_CONNECTIONS", "64"),
            ("MAX_CONNECTIONS_PER_ADDRESS", "8"),
            ("SERVER_MAX_HEADER_BYTES", "16384"),
        ];
        let settings = ServerSettings::from_env(&Env::from_pairs(&pairs)).unwrap();
        assert_eq!(settings.connections.header_timeout, Duration::from_millis(2500));
        assert_eq!(settings.connections.write_timeout, Duration::from_millis(1500));
        assert_eq!(settings.connections.max_connections, 64);
        assert_eq!(settings.connections.per_address, 8);
        assert_eq!(settings.connections.max_header_bytes, 16_384);
        assert_eq!(settings.cors_origins, ["https://a.example", "https://b.example"]);
        let printed = settings.to_string();
        assert!(
            printed.contains("bind=127.0.0.1:3000")
                && printed.contains(
                    "header_timeout_ms=2500 request_timeout_ms=10000 write_timeout_ms=1500 max_connections=64 max_connections_per_address=8 max_header_bytes=16384"
                ),
            "{printed}"
        );
    }

    #[test]
    fn the_defaults_are_printed() {
        let printed = ServerSettings::from_env(&Env::from_pairs(&[])).unwrap().to_string();
        assert!(
            printed.contains(
                "write_timeout_ms=10000 max_connections=1024 max_connections_per_address=64 max_header_bytes=65536"
            ),
            "{printed}"
        );
    }
}
