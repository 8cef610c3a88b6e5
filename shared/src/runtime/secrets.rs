//! Secrets a Lambda function reads from Secrets Manager at its cold start
//! (docs/DESIGN.md, Deployments): `JWT_SECRET_ARN` becomes `JWT_SECRET`,
//! `PEPPER_ARN` becomes `PEPPER`, and the pepper secret's previous version
//! (`AWSPREVIOUS`, left by a rotation) joins `PEPPER_PREVIOUS`, so hashes
//! made with it still verify (and are rehashed). Only the secrets the
//! function uses are read; IAM lets each function read exactly those. No
//! secret value sits in the function's configuration or the template.

use aws_sdk_secretsmanager::Client;
use aws_sdk_secretsmanager::error::DisplayErrorContext;

use super::{ConfigError, Env};
use crate::function::Needs;

/// What was read, as settings: `(name, value)`.
pub type Resolved = Vec<(String, String)>;

/// Reads the secrets `needs` names whose `*_ARN` is set in `env`. With
/// `endpoint` (a local Secrets Manager in tests) the client uses it with
/// dummy credentials; otherwise the environment's region and credentials
/// (`AWS_ENDPOINT_URL_SECRETS_MANAGER` works too).
pub async fn resolve(needs: Needs, env: &Env<'_>, endpoint: Option<&str>) -> Result<Resolved, ConfigError> {
    let wanted: Vec<(&str, String)> = [
        ("JWT_SECRET", needs.tokens),
        ("PEPPER", needs.hashing),
        ("TAG_KEY", needs.tags),
        // Optional: without it the proof-of-work key is derived from the tag key.
        ("POW_KEY", needs.tags),
        // Optional: without it the TOTP key is derived from the pepper.
        ("TOTP_KEY", needs.totp),
    ]
    .into_iter()
    .filter(|(_, needed)| *needed)
    .filter_map(|(name, _)| env.get(&format!("{name}_ARN")).map(|arn| (name, arn)))
    .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let settings = crate::aws::AwsSettings::new(endpoint, super::store::ca_bundle(env)?.as_deref())?;
    let client = Client::new(&settings.loader().load().await);
    let reads = wanted.iter().map(|(name, arn)| read(&client, name, arn));
    let mut resolved = Vec::new();
    for found in futures_util::future::join_all(reads).await {
        resolved.extend(found?);
    }
    Ok(resolved)
}

/// One secret's current value, and for the pepper its previous one.
async fn read(client: &Client, name: &str, arn: &str) -> Result<Resolved, ConfigError> {
    let setting = format!("{name}_ARN");
    let current = client
        .get_secret_value()
        .secret_id(arn)
        .send()
        .await
        .map_err(|e| ConfigError::invalid(format!("{setting}: reading {arn}: {}", DisplayErrorContext(&e))))?
        .secret_string
        .ok_or_else(|| ConfigError::invalid(format!("{setting}: {arn} holds no string")))?;
    let mut resolved = vec![(name.to_owned(), current)];
    // A rotated pepper keeps older hashes verifying; a rotated tag key keeps
    // address bans made under the older key working.
    if name == "PEPPER" || name == "TAG_KEY" || name == "TOTP_KEY" {
        let previous = client
            .get_secret_value()
            .secret_id(arn)
            .version_stage("AWSPREVIOUS")
            .send()
            .await;
        match previous {
            Ok(out) => {
                if let Some(previous) = out.secret_string {
                    resolved.push((format!("{name}_PREVIOUS"), previous));
                }
            }
            // Never rotated: no previous version.
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) => {}
            Err(e) => {
                return Err(ConfigError::invalid(format!(
                    "{setting}: reading the previous version of {arn}: {}",
                    DisplayErrorContext(&e)
                )));
            }
        }
    }
    Ok(resolved)
}

/// `env` with `resolved` on top; a resolved `PEPPER_PREVIOUS` is added to
/// any set in the environment.
pub fn overlay<'a>(env: &'a Env<'a>, resolved: &'a Resolved) -> Env<'a> {
    Env::new(move |name| {
        let found = resolved.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        match (name, found, env.get(name)) {
            ("PEPPER_PREVIOUS", Some(read), Some(set)) => Some(format!("{set},{read}")),
            (_, Some(read), _) => Some(read),
            (_, None, set) => set,
        }
    })
}
