//! Settings by name: the process environment, or a list in tests. The one
//! place this crate reads `std::env` (a layer test checks it).

use std::time::Duration;

use super::ConfigError;

/// A setting's value by its name.
type Lookup<'a> = Box<dyn Fn(&str) -> Option<String> + 'a>;

/// Settings by name. Empty or blank means unset.
pub struct Env<'a>(Lookup<'a>);

impl std::fmt::Debug for Env<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values may be secrets: never printed.
        f.write_str("Env(..)")
    }
}

impl<'a> Env<'a> {
    pub fn new(lookup: impl Fn(&str) -> Option<String> + 'a) -> Self {
        Env(Box::new(lookup))
    }

    pub fn process() -> Env<'static> {
        Env::new(|name| std::env::var(name).ok())
    }

    pub fn from_pairs(pairs: &'a [(&'a str, &'a str)]) -> Self {
        Env::new(move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned()))
    }

    pub fn get(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.trim().is_empty())
    }

    /// A number of at least `min`; `what` says what is expected.
    pub fn number<T: std::str::FromStr + PartialOrd>(
        &self,
        name: &str,
        min: T,
        what: &str,
    ) -> Result<Option<T>, ConfigError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => match v.trim().parse::<T>() {
                Ok(n) if n >= min => Ok(Some(n)),
                _ => Err(ConfigError::invalid(format!("{name} must be {what}, not {v:?}"))),
            },
        }
    }

    /// A positive whole number of milliseconds.
    pub fn millis(&self, name: &str) -> Result<Option<Duration>, ConfigError> {
        Ok(self
            .number::<u64>(name, 1, "a positive whole number")?
            .map(Duration::from_millis))
    }

    /// `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off` (unset is false).
    pub fn flag(&self, name: &str) -> Result<bool, ConfigError> {
        match self.get(name).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("0" | "false" | "no" | "off") => Ok(false),
            Some("1" | "true" | "yes" | "on") => Ok(true),
            Some(other) => Err(ConfigError::invalid(format!("{name} must be 1 or 0, not {other:?}"))),
        }
    }

    /// A comma-separated list, each item trimmed, empty items dropped.
    pub fn list(&self, name: &str) -> Option<Vec<String>> {
        self.get(name).map(|list| {
            list.split(',')
                .map(|item| item.trim().to_owned())
                .filter(|item| !item.is_empty())
                .collect()
        })
    }
}
