//! What every function shares: the condition and globals, the secrets, the
//! table and the HTTP API.

use std::fmt::Write as _;

use crate::yaml::{strings, yaml_list};
use shared::http::conventions::{CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_METHODS};
use shared::store::dynamo::schema::TableDefinition;

/// `Conditions`, `Globals` and the first resources: the secrets and the
/// table (from infra/table.json).
pub(crate) fn globals_secrets_and_table(table: &TableDefinition, managed: bool) -> anyhow::Result<String> {
    let mut t = String::new();
    // Managed instances leave the tier settings unset: the functions then
    // hash with the tier file's fixed-capacity tiers (shared::hashing::Compute).
    let tier_settings = if managed {
        ""
    } else {
        "\n        MEMBER_TIER: !Ref MemberTier\n        GUEST_TIER: !Ref GuestTier"
    };
    writeln!(
        t,
        "
Conditions:
  HasAlarmTopic: !Not [!Equals [!Ref AlarmTopicArn, '']]

Globals:
  Function:
    Runtime: provided.al2023
    Architectures:
      - arm64
    Handler: bootstrap
    Timeout: 10
    LoggingConfig:
      LogFormat: JSON
      ApplicationLogLevel: INFO
      SystemLogLevel: WARN
    Environment:
      Variables:
        TABLE_NAME: !Ref Table{tier_settings}
        BOARDS: !Ref Boards
        COUNTER_SHARDS: !Ref CounterShards
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: !Ref TracesEndpoint
        # Where image URLs in posts and comments point: the media
        # distribution (functions -> distribution -> bucket, no cycle).
        MEDIA_BASE_URL: !Sub 'https://${{MediaDistribution.DomainName}}'

Resources:
  JwtSecret:
    Type: AWS::SecretsManager::Secret
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_149
            comment: The AWS-managed key is enough - only the functions that use this secret may read it (by IAM, at their cold start); a CMK adds cost without a reader to restrict.
          - id: CKV2_AWS_57
            comment: Rotating the JWT key signs everyone out; rotate by hand and redeploy (see docs/deploy.md).
    Properties:
      Description: HS256 key for bearer tokens
      GenerateSecretString:
        PasswordLength: 64
        ExcludePunctuation: true

  Pepper:
    Type: AWS::SecretsManager::Secret
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_149
            comment: The AWS-managed key is enough - only the functions that use this secret may read it (by IAM, at their cold start); a CMK adds cost without a reader to restrict.
          - id: CKV2_AWS_57
            comment: A pepper rotation must keep the old one in PEPPER_PREVIOUS until hashes are upgraded; automatic rotation would lock users out.
    Properties:
      Description: Pepper for password pre-hashing (HMAC-SHA-384)
      GenerateSecretString:
        PasswordLength: 64
        ExcludePunctuation: true

  TagKey:
    Type: AWS::SecretsManager::Secret
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_149
            comment: The AWS-managed key is enough - only the functions that use this secret may read it (by IAM, at their cold start); a CMK adds cost without a reader to restrict.
          - id: CKV2_AWS_57
            comment: Rotating the tag key changes every guest tag; address bans made before keep working through its previous version (TAG_KEY_PREVIOUS) until it is rotated again, so rotate by hand (see docs/deploy.md).
    Properties:
      Description: Key for guest tags and stored writer keys (HMAC-SHA-256 of client addresses)
      GenerateSecretString:
        PasswordLength: 64
        ExcludePunctuation: true

  Table:
    Type: AWS::DynamoDB::Table
    DeletionPolicy: Retain
    UpdateReplacePolicy: Retain
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_119
            comment: Encrypted at rest with the AWS-owned key (SSESpecification); a CMK adds per-request KMS cost.
    Properties:
      BillingMode: {billing}
      # The purge function reads the inserts of purge markers from it,
      # the notify function the writes and deletes of posts and comments.
      StreamSpecification:
        StreamViewType: {stream_view}
      PointInTimeRecoverySpecification:
        PointInTimeRecoveryEnabled: true
      SSESpecification:
        SSEEnabled: true
      TimeToLiveSpecification:
        AttributeName: {ttl}
        Enabled: {ttl_enabled}
      AttributeDefinitions:",
        billing = table.billing_mode,
        stream_view = table.stream_specification.stream_view_type,
        ttl = table.time_to_live_specification.attribute_name,
        ttl_enabled = table.time_to_live_specification.enabled,
    )?;
    for a in &table.attribute_definitions {
        writeln!(
            t,
            "        - AttributeName: {}\n          AttributeType: {}",
            a.attribute_name, a.attribute_type
        )?;
    }
    writeln!(t, "      KeySchema:")?;
    for k in &table.key_schema {
        writeln!(
            t,
            "        - AttributeName: {}\n          KeyType: {}",
            k.attribute_name, k.key_type
        )?;
    }
    writeln!(t, "      GlobalSecondaryIndexes:")?;
    for index in &table.global_secondary_indexes {
        writeln!(t, "        - IndexName: {}\n          KeySchema:", index.index_name)?;
        for k in &index.key_schema {
            writeln!(
                t,
                "            - AttributeName: {}\n              KeyType: {}",
                k.attribute_name, k.key_type
            )?;
        }
        writeln!(
            t,
            "          Projection:\n            ProjectionType: {}",
            index.projection.projection_type
        )?;
        if !index.projection.non_key_attributes.is_empty() {
            writeln!(t, "            NonKeyAttributes:")?;
            t += &yaml_list(&index.projection.non_key_attributes, 14);
        }
    }
    Ok(t)
}

/// The HTTP API and its access logs, with the server's CORS lists.
pub(crate) fn http_api() -> anyhow::Result<String> {
    let mut t = String::new();
    writeln!(
        t,
        "
  ApiAccessLogs:
    Type: AWS::Logs::LogGroup
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_158
            comment: Access logs hold no secrets (no bodies, no headers); the default encryption of CloudWatch Logs applies.
    Properties:
      RetentionInDays: !Ref LogRetentionDays

  HttpApi:
    Type: AWS::Serverless::HttpApi
    Properties:
      DefaultRouteSettings:
        ThrottlingRateLimit: !Ref ThrottlingRateLimit
        ThrottlingBurstLimit: !Ref ThrottlingBurstLimit
      CorsConfiguration:
        AllowOrigins: !Ref CorsOrigins
        AllowMethods:
{cors_methods}        AllowHeaders:
{cors_allowed}        ExposeHeaders:
{cors_exposed}      AccessLogSettings:
        DestinationArn: !GetAtt ApiAccessLogs.Arn
        Format: '{{\"requestId\":\"$context.requestId\",\"ip\":\"$context.identity.sourceIp\",\"method\":\"$context.httpMethod\",\"path\":\"$context.path\",\"status\":\"$context.status\",\"latency\":\"$context.responseLatency\",\"integrationLatency\":\"$context.integrationLatency\"}}'",
        // docs/API.md, Conventions: the same lists as the server's CORS.
        cors_methods = yaml_list(&strings(&CORS_METHODS), 10),
        cors_allowed = yaml_list(&strings(&CORS_ALLOWED_HEADERS), 10),
        cors_exposed = yaml_list(&strings(&CORS_EXPOSED_HEADERS), 10),
    )?;
    Ok(t)
}
