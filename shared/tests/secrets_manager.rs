//! The Lambda cold start reads its secrets from Secrets Manager by ARN
//! (`shared::secrets`), here against a local Secrets Manager: moto in server
//! mode, which `scripts/test-all` starts (these tests fail, never skip,
//! without `SECRETS_MANAGER_ENDPOINT`). AWS itself cannot run here; moto
//! answers Secrets Manager's API, versions and stages included.

use aws_sdk_secretsmanager::Client;
use aws_sdk_secretsmanager::config::{Credentials, Region};
use secrecy::{ExposeSecret, SecretString};
use shared::function::Function;
use shared::hashing::Pepper;
use shared::runtime::secrets::{overlay, resolve};
use shared::runtime::{Config, Deployment, Env};

fn endpoint() -> String {
    std::env::var("SECRETS_MANAGER_ENDPOINT").expect(
        "SECRETS_MANAGER_ENDPOINT is not set: run the suite with `bash scripts/test-all`, which starts a local Secrets Manager",
    )
}

async fn admin() -> Client {
    let config = aws_sdk_secretsmanager::Config::builder()
        .behavior_version(aws_sdk_secretsmanager::config::BehaviorVersion::latest())
        .endpoint_url(endpoint())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("local", "local", None, None, "test"))
        .build();
    Client::from_conf(config)
}

/// A new secret holding `value`; its ARN.
async fn secret(client: &Client, value: &str) -> String {
    let name = format!("test-{}", shared::domain::new_id());
    client
        .create_secret()
        .name(name)
        .secret_string(value)
        .send()
        .await
        .unwrap()
        .arn
        .unwrap()
}

const JWT: &str = "jwt-from-secrets-manager-0123456789abcdef";
const OLD_PEPPER: &str = "pepper-before-rotation-0123456789abcdef";
const NEW_PEPPER: &str = "pepper-after-rotation-0123456789abcdefgh";

fn lambda(function: Function) -> Deployment {
    Deployment::Lambda {
        functions: vec![function],
    }
}

#[tokio::test]
async fn a_function_reads_the_secrets_it_uses_by_arn_with_the_previous_pepper() {
    let client = admin().await;
    let jwt_arn = secret(&client, JWT).await;
    let pepper_arn = secret(&client, OLD_PEPPER).await;
    // A rotation: the old value becomes AWSPREVIOUS.
    client
        .put_secret_value()
        .secret_id(&pepper_arn)
        .secret_string(NEW_PEPPER)
        .send()
        .await
        .unwrap();
    let pairs = [
        ("JWT_SECRET_ARN", jwt_arn.as_str()),
        ("PEPPER_ARN", pepper_arn.as_str()),
        ("TABLE_NAME", "boards"),
    ];
    let env = Env::from_pairs(&pairs);
    let resolved = resolve(Function::Login.needs(), &env, Some(&endpoint())).await.unwrap();
    let names: Vec<&str> = resolved.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["JWT_SECRET", "PEPPER", "PEPPER_PREVIOUS"]);

    let config = Config::from(lambda(Function::Login), &overlay(&env, &resolved)).unwrap();
    assert_eq!(config.jwt_secret.as_ref().unwrap().expose_secret(), JWT);
    let peppers = &config.hashing.as_ref().unwrap().peppers;
    let id = |p: &str| Pepper::parse("PEPPER", SecretString::from(p)).unwrap().id().to_owned();
    assert_eq!(peppers.current().unwrap().id(), id(NEW_PEPPER));
    assert!(
        peppers.by_id(&id(OLD_PEPPER)).is_some(),
        "hashes under the old pepper still verify"
    );
    // No secret value in what the function prints at start.
    let printed = config.to_string();
    for value in [JWT, OLD_PEPPER, NEW_PEPPER] {
        assert!(!printed.contains(value), "{printed}");
    }
}

#[tokio::test]
async fn a_function_reads_only_its_own_secrets_and_a_missing_one_names_its_setting() {
    let client = admin().await;
    let jwt_arn = secret(&client, JWT).await;
    let pepper_arn = secret(&client, NEW_PEPPER).await;
    let pairs = [
        ("JWT_SECRET_ARN", jwt_arn.as_str()),
        ("PEPPER_ARN", pepper_arn.as_str()),
        ("TABLE_NAME", "boards"),
    ];
    let env = Env::from_pairs(&pairs);
    for (function, expected) in [
        // read verifies bearer tokens: my_vote, hidden dislikes for staff.
        (Function::Read, vec!["JWT_SECRET"]),
        (Function::Like, vec!["JWT_SECRET"]),
        // Never rotated: no previous pepper.
        (Function::GuestComment, vec!["PEPPER"]),
    ] {
        let resolved = resolve(function.needs(), &env, Some(&endpoint())).await.unwrap();
        let names: Vec<&str> = resolved.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, expected, "{}", function.name());
    }
    let missing = [
        (
            "JWT_SECRET_ARN",
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:nope-AbCdEf",
        ),
        ("TABLE_NAME", "boards"),
    ];
    let err = resolve(Function::Like.needs(), &Env::from_pairs(&missing), Some(&endpoint()))
        .await
        .unwrap_err();
    assert!(err.to_string().starts_with("JWT_SECRET_ARN: reading"), "{err}");
    // Neither an ARN nor a value: the start fails naming both ways.
    let err = Config::from(lambda(Function::Like), &Env::from_pairs(&[("TABLE_NAME", "boards")])).unwrap_err();
    assert!(err.to_string().contains("JWT_SECRET_ARN"), "{err}");
}

/// The tag key is read by ARN like the others, and its previous
/// version (a rotation) becomes `TAG_KEY_PREVIOUS`, which keeps address
/// bans made under it working (docs/API.md, Guest tag).
#[tokio::test]
async fn the_tag_key_is_read_by_arn_with_its_previous_version() {
    let client = admin().await;
    let jwt_arn = secret(&client, JWT).await;
    let old_key = "old-tag-key-for-moto-0123456789abcdefghij";
    let new_key = "new-tag-key-for-moto-0123456789abcdefghij";
    let tag_arn = secret(&client, old_key).await;
    client
        .put_secret_value()
        .secret_id(&tag_arn)
        .secret_string(new_key)
        .send()
        .await
        .unwrap();
    let pairs = [
        ("JWT_SECRET_ARN", jwt_arn.as_str()),
        ("TAG_KEY_ARN", tag_arn.as_str()),
        ("TABLE_NAME", "boards"),
    ];
    let env = Env::from_pairs(&pairs);
    let resolved = resolve(Function::Moderation.needs(), &env, Some(&endpoint()))
        .await
        .unwrap();
    let found: Vec<(&str, &str)> = resolved.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        found,
        [("JWT_SECRET", JWT), ("TAG_KEY", new_key), ("TAG_KEY_PREVIOUS", old_key)]
    );
    let config = Config::from(lambda(Function::Moderation), &overlay(&env, &resolved)).unwrap();
    assert!(config.hashing.is_none(), "moderation hashes nothing");
    let printed = config.to_string();
    assert!(printed.contains("tag_key=set tag_key_previous=set"), "{printed}");
    for value in [old_key, new_key] {
        assert!(!printed.contains(value), "{printed}");
    }
    // The read function takes the JWT secret (a reader's my_vote) and
    // the tag key, which its proof-of-work challenges are signed under.
    let read = resolve(Function::Read.needs(), &env, Some(&endpoint())).await.unwrap();
    let names: Vec<&str> = read.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["JWT_SECRET", "TAG_KEY", "TAG_KEY_PREVIOUS"]);
}
