//! The tag key (docs/DESIGN.md, Moderation): `TAG_KEY` where it is set, on
//! the server otherwise derived from the pepper, on Lambda required.

use std::fmt;

use secrecy::SecretString;

use super::ConfigError;
use crate::runtime::Env;

/// Where the tag key comes from.
#[derive(Debug)]
pub enum TagKeySource {
    /// `TAG_KEY` (and, after a rotation, `TAG_KEY_PREVIOUS`).
    Configured {
        current: SecretString,
        previous: Option<SecretString>,
    },
    /// The server without `TAG_KEY`: derived from this secret (the pepper)
    /// and from the ones it replaced (`PEPPER_PREVIOUS`).
    Derived {
        current: SecretString,
        previous: Vec<SecretString>,
    },
}

/// The tag key of a process whose functions write on boards or check bans;
/// `secret` reads a secret setting (on the server, generating it once).
pub(super) fn source(
    env: &Env<'_>,
    secret: &dyn Fn(&str) -> Result<String, ConfigError>,
    server: bool,
) -> Result<TagKeySource, ConfigError> {
    Ok(match env.get("TAG_KEY") {
        Some(key) => TagKeySource::Configured {
            current: SecretString::from(key),
            previous: env.get("TAG_KEY_PREVIOUS").map(SecretString::from),
        },
        // The server keeps a pepper (or, with PEPPER=none, a key of its own).
        // With the keys of the peppers it replaced: a rotation lifts no
        // ban (docs/API.md, Hardening).
        None if server => match super::pepper_and_previous(env, secret)? {
            Some((current, previous)) => TagKeySource::Derived { current, previous },
            None => TagKeySource::Derived {
                current: SecretString::from(secret("TAG_KEY")?),
                previous: Vec::new(),
            },
        },
        None => {
            return Err(ConfigError::invalid(
                "TAG_KEY is required on Lambda: set TAG_KEY_ARN (a Secrets Manager secret) or TAG_KEY",
            ));
        }
    })
}

/// For the start-up summary: where the key comes from, never its value.
impl fmt::Display for TagKeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TagKeySource::Configured { previous, .. } => {
                write!(f, "tag_key=set")?;
                if previous.is_some() {
                    write!(f, " tag_key_previous=set")?;
                }
            }
            TagKeySource::Derived { previous, .. } => {
                write!(f, "tag_key=derived")?;
                if !previous.is_empty() {
                    write!(f, " tag_key_previous=derived")?;
                }
            }
        }
        Ok(())
    }
}
