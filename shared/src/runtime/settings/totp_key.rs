//! The TOTP key (docs/DESIGN.md, Passwords and TOTP): what TOTP
//! secrets are sealed and recovery codes hashed with. `TOTP_KEY` where set
//! (with `TOTP_KEY_PREVIOUS` after a rotation); otherwise derived from the
//! pepper, which `login` and `account` hold already, with the peppers it
//! replaced (`PEPPER_PREVIOUS`), so rotating the pepper locks no one out.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};

use super::ConfigError;
use crate::runtime::Env;

/// At least this many bytes, as every other key.
const MIN_KEY_BYTES: usize = 32;

/// Where the TOTP key comes from.
#[derive(Debug)]
pub enum TotpKeySource {
    /// `TOTP_KEY` (and, after a rotation, `TOTP_KEY_PREVIOUS`).
    Configured {
        current: SecretString,
        previous: Option<SecretString>,
    },
    /// Derived from this secret (the pepper; on a server run with
    /// `PEPPER=none`, a key of its own under `DATA_DIR`) and the ones it replaced.
    Derived {
        current: SecretString,
        previous: Vec<SecretString>,
    },
}

impl TotpKeySource {
    /// The keys, newest first.
    pub fn keys(&self) -> Vec<&[u8]> {
        let (current, previous): (_, &[SecretString]) = match self {
            TotpKeySource::Configured { current, previous } => (current, previous.as_slice()),
            TotpKeySource::Derived { current, previous } => (current, previous),
        };
        std::iter::once(current)
            .chain(previous)
            .map(|k| k.expose_secret().as_bytes())
            .collect()
    }
}

pub(super) fn source(
    env: &Env<'_>,
    secret: &dyn Fn(&str) -> Result<String, ConfigError>,
    server: bool,
) -> Result<TotpKeySource, ConfigError> {
    if let Some(key) = env.get("TOTP_KEY") {
        let check = |name: &str, key: String| {
            if key.len() < MIN_KEY_BYTES {
                return Err(ConfigError::invalid(format!(
                    "{name} must be at least {MIN_KEY_BYTES} bytes (it is {})",
                    key.len()
                )));
            }
            Ok(SecretString::from(key))
        };
        return Ok(TotpKeySource::Configured {
            current: check("TOTP_KEY", key)?,
            previous: env
                .get("TOTP_KEY_PREVIOUS")
                .map(|key| check("TOTP_KEY_PREVIOUS", key))
                .transpose()?,
        });
    }
    Ok(match super::pepper_and_previous(env, secret)? {
        Some((current, previous)) => TotpKeySource::Derived { current, previous },
        None if server => TotpKeySource::Derived {
            current: SecretString::from(secret("TOTP_KEY")?),
            previous: Vec::new(),
        },
        None => {
            return Err(ConfigError::invalid(
                "TOTP_KEY is required on Lambda when PEPPER is none: set TOTP_KEY_ARN (a Secrets Manager secret) or TOTP_KEY",
            ));
        }
    })
}

/// For the start-up summary: where the key comes from, never its value.
impl fmt::Display for TotpKeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (how, previous) = match self {
            TotpKeySource::Configured { previous, .. } => ("set", usize::from(previous.is_some())),
            TotpKeySource::Derived { previous, .. } => ("derived", previous.len()),
        };
        write!(f, "totp_key={how}")?;
        if previous > 0 {
            write!(f, " totp_key_previous={previous}")?;
        }
        Ok(())
    }
}
