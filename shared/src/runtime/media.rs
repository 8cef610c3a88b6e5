//! The `media` function's S3 side, built once at a cold start:
//! the credentials that sign upload grants (the function's role, refreshed
//! by the SDK) and the S3 client that reads uploads and writes files.

use std::sync::Arc;

use anyhow::Context as _;

use crate::app::media::{MediaKit, MediaSettings, S3Uploads, Uploads};
use crate::aws::AwsSettings;
use crate::store::StoreSettings;
use crate::store::files::S3Files;

pub(super) async fn s3_kit(
    store: &StoreSettings,
    settings: &MediaSettings,
    bucket: String,
) -> anyhow::Result<MediaKit> {
    let ca_bundle = match store {
        StoreSettings::Dynamo { extra_roots, .. } => extra_roots.as_deref(),
        #[cfg(feature = "sqlite")]
        _ => None,
    };
    let aws = AwsSettings::new(settings.s3_endpoint.as_deref(), ca_bundle).context("S3_ENDPOINT")?;
    let sdk = aws.loader().load().await;
    let region = sdk
        .region()
        .map(|r| r.as_ref().to_owned())
        .context("no AWS region to sign upload grants for (AWS_REGION)")?;
    let credentials = sdk
        .credentials_provider()
        .context("no AWS credentials to sign upload grants with")?;
    // moto serves buckets by path, as S3 itself does not need.
    let client = aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&sdk)
            .force_path_style(aws.is_local())
            .build(),
    );
    Ok(MediaKit {
        uploads: Uploads::S3(S3Uploads {
            bucket: bucket.clone(),
            region,
            endpoint: settings.s3_endpoint.clone(),
            credentials,
        }),
        files: Some(Arc::new(S3Files::new(client, bucket))),
        max_bytes: settings.max_bytes,
        served_from: None,
    })
}
