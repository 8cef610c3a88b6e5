//! Images (docs/API.md, Images; docs/deploy.md, Images): the
//! media bucket, the CloudFront distribution that serves its checked files,
//! and what the `media` function adds to its own resources (its bucket
//! access, its settings and its two kinds of event beside its routes).
//!
//! The bucket is private: uploads arrive under `uploads/` by presigned POST
//! (signed with the `media` function's role), the function checks each one
//! when S3 reports it ("Object Created", through EventBridge) and writes the
//! re-encoded file and its thumbnail under `files/`, which only CloudFront
//! reads (origin access control). EventBridge rather than a direct bucket
//! notification: a notification makes the bucket depend on the function,
//! which depends on the distribution (`MEDIA_BASE_URL`), which depends on
//! the bucket: a cycle CloudFormation refuses. Here the dependencies run
//! one way: functions -> distribution -> bucket; the rule -> function and
//! bucket. The same resources in both templates: the function runs on
//! classic Lambda in either mode ([`crate::functions::on_capacity_provider`]).

use crate::events;

/// The `media` function's memory by default (`MediaMemory`): a check of the
/// largest image the limits let through (50 megapixels) takes about 160 MiB
/// to decode (imaging/README.md), and the decode is CPU-bound, so more
/// memory (a bigger CPU share) makes it faster.
pub const MEDIA_MEMORY_MB: u32 = 1024;

/// The `media` function's timeout: a grant is milliseconds, a check of a
/// large image (decode, re-encode, thumbnail) a few seconds at 1 GB.
pub const MEDIA_TIMEOUT_S: u32 = 60;

/// How often the sweep of images attached nowhere runs.
pub const MEDIA_SWEEP_SCHEDULE: &str = "rate(5 minutes)";

/// What the `media` function may do in its bucket, by key prefix: read and
/// delete the uploads it checks (and put them: a presigned POST is
/// authorized as the role that signed it), put the checked files and delete
/// them in the sweep (DeleteObjects is authorized per key as DeleteObject).
/// Nothing on the bucket itself: no listing, no policy, no ACL.
pub const MEDIA_S3_ACTIONS: &[(&str, &[&str])] = &[
    ("uploads/*", &["s3:DeleteObject", "s3:GetObject", "s3:PutObject"]),
    ("files/*", &["s3:DeleteObject", "s3:PutObject"]),
];

/// What CloudFront adds to every file it serves (docs/API.md, Images): a
/// file is never rewritten under its key, so it may be cached for a year.
pub const MEDIA_CACHE_CONTROL: &str = "public, max-age=31536000, immutable";

/// Days an upload as sent may stay under `uploads/` before S3 expires it
/// (the check deletes it at once; this catches one never checked).
pub const UPLOAD_EXPIRY_DAYS: u32 = 1;

/// The managed `CachingOptimized` cache policy (no cookies, headers or
/// query strings in the key; gzip and br keys off: images are compressed).
const CACHING_OPTIMIZED: &str = "658327ea-f89d-4fab-a63d-7e88639e58f6";

/// The media function's parameters (both templates).
pub(crate) fn media_parameters() -> String {
    format!(
        "  MediaMemory:
    Type: Number
    Description: Memory of the media function in MB (its share of a vCPU scales with it); an image check decodes up to 50 megapixels
    Default: {MEDIA_MEMORY_MB}
    MinValue: 512
    MaxValue: 10240
  MediaMaxBytes:
    Type: Number
    Description: The largest upload a grant allows, in bytes (MEDIA_MAX_BYTES)
    Default: {max_bytes}
    MinValue: 1
    MaxValue: 104857600
  MediaPriceClass:
    Type: String
    Description: The media distribution's edge locations - PriceClass_200 includes Korea and Japan; PriceClass_100 only North America, Europe and Israel
    Default: PriceClass_200
    AllowedValues:
      - PriceClass_100
      - PriceClass_200
      - PriceClass_All
",
        max_bytes = shared::domain::media::DEFAULT_MAX_BYTES,
    )
}

/// The `media` function's own settings (beside the table, secrets and
/// `MEDIA_BASE_URL` every function gets).
pub(crate) fn media_environment() -> &'static str {
    "          MEDIA_BUCKET: !Ref MediaBucket
          MEDIA_MAX_BYTES: !Ref MediaMaxBytes
"
}

/// The `media` function's policy statements on the bucket.
pub(crate) fn media_s3_statements() -> String {
    MEDIA_S3_ACTIONS
        .iter()
        .map(|(prefix, actions)| {
            let actions: String = actions.iter().map(|a| format!("                - {a}\n")).collect();
            format!(
                "            - Effect: Allow
              Action:
{actions}              Resource:
                - !Sub '${{MediaBucket.Arn}}/{prefix}'
"
            )
        })
        .collect()
}

/// The `media` function's events beside its routes: each upload's
/// "Object Created" (EventBridge) and the sweep's schedule.
pub(crate) fn media_events() -> String {
    format!(
        "        # Each upload, when S3 has stored it: the bucket sends its
        # events to EventBridge (NotificationConfiguration), this rule picks
        # the uploads. Invoked asynchronously: a failed check is retried
        # twice, then the upload stays pending until the sweep deletes it.
        Uploads:
          Type: EventBridgeRule
          Properties:
            Pattern:
              source:
                - aws.s3
              detail-type:
                - Object Created
              detail:
                bucket:
                  name:
                    - !Ref MediaBucket
                object:
                  key:
                    - prefix: uploads/
        # Deletes the images attached nowhere that are due (never attached
        # 24 hours after their grant, dropped by an edit, their text deleted).
        Sweep:
          Type: Schedule
          Properties:
            Schedule: {MEDIA_SWEEP_SCHEDULE}
            Description: Deletes the images attached nowhere that are due, files and items
"
    )
}

/// The bucket, its policy, the distribution and what it uses, and an alarm
/// on the function's failed checks and sweeps.
pub(crate) fn media_resources() -> String {
    format!(
        "
  # --- Images: the media bucket and the distribution serving its files ---
  MediaBucket:
    Type: AWS::S3::Bucket
    DeletionPolicy: Retain
    UpdateReplacePolicy: Retain
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_18
            comment: Reads go through CloudFront (its logs can be turned on there); writes are presigned uploads and the media function's, both in CloudTrail's data events when the operator enables them.
          - id: CKV_AWS_21
            comment: A file is written once under its key and deleted for good when its post goes (docs/API.md, Images); versioning would keep deleted users' images.
    Properties:
      BucketEncryption:
        ServerSideEncryptionConfiguration:
          - ServerSideEncryptionByDefault:
              SSEAlgorithm: AES256
      OwnershipControls:
        Rules:
          - ObjectOwnership: BucketOwnerEnforced
      PublicAccessBlockConfiguration:
        BlockPublicAcls: true
        BlockPublicPolicy: true
        IgnorePublicAcls: true
        RestrictPublicBuckets: true
      LifecycleConfiguration:
        Rules:
          # An upload is deleted by its check; one never checked goes after a day.
          - Id: ExpireUploads
            Status: Enabled
            Prefix: uploads/
            ExpirationInDays: {UPLOAD_EXPIRY_DAYS}
          - Id: AbortIncompleteMultipartUploads
            Status: Enabled
            AbortIncompleteMultipartUpload:
              DaysAfterInitiation: 1
      # The web client posts uploads from its origin (the API's CORS origins).
      CorsConfiguration:
        CorsRules:
          - AllowedOrigins: !Ref CorsOrigins
            AllowedMethods:
              - POST
            AllowedHeaders:
              - '*'
            MaxAge: 600
      # Object Created events go to EventBridge, whose rule (MediaFunction's
      # Uploads event) invokes the media function: no bucket -> function edge.
      NotificationConfiguration:
        EventBridgeConfiguration:
          EventBridgeEnabled: true

  MediaBucketPolicy:
    Type: AWS::S3::BucketPolicy
    Properties:
      Bucket: !Ref MediaBucket
      PolicyDocument:
        Version: '2012-10-17'
        Statement:
          # CloudFront reads the checked files, and only them: never an upload as sent.
          - Sid: CloudFrontReadsFiles
            Effect: Allow
            Principal:
              Service: cloudfront.amazonaws.com
            Action: s3:GetObject
            Resource: !Sub '${{MediaBucket.Arn}}/files/*'
            Condition:
              StringEquals:
                AWS:SourceArn: !Sub 'arn:${{AWS::Partition}}:cloudfront::${{AWS::AccountId}}:distribution/${{MediaDistribution}}'
          - Sid: TlsOnly
            Effect: Deny
            Principal: '*'
            Action: s3:*
            Resource:
              - !GetAtt MediaBucket.Arn
              - !Sub '${{MediaBucket.Arn}}/*'
            Condition:
              Bool:
                aws:SecureTransport: 'false'

  MediaOriginAccessControl:
    Type: AWS::CloudFront::OriginAccessControl
    Properties:
      OriginAccessControlConfig:
        Name: !Sub '${{AWS::StackName}}-media'
        Description: CloudFront signs its requests to the media bucket (SigV4)
        OriginAccessControlOriginType: s3
        SigningBehavior: always
        SigningProtocol: sigv4

  # docs/API.md, Images: served with the type that was decoded, never sniffed,
  # sandboxed if opened as a document, cached for a year.
  MediaResponseHeaders:
    Type: AWS::CloudFront::ResponseHeadersPolicy
    Properties:
      ResponseHeadersPolicyConfig:
        Name: !Sub '${{AWS::StackName}}-media'
        Comment: Uploaded images - nosniff, CSP sandbox, immutable cache
        SecurityHeadersConfig:
          ContentTypeOptions:
            Override: true
          ContentSecurityPolicy:
            ContentSecurityPolicy: sandbox
            Override: true
          StrictTransportSecurity:
            AccessControlMaxAgeSec: 31536000
            Override: true
        CustomHeadersConfig:
          Items:
            - Header: Cache-Control
              Value: {MEDIA_CACHE_CONTROL}
              Override: true

  # Anything but files/ is answered 404 at the edge, without reaching the bucket.
  MediaOnlyFiles:
    Type: AWS::CloudFront::Function
    Properties:
      Name: !Sub '${{AWS::StackName}}-media-only-files'
      AutoPublish: true
      FunctionConfig:
        Comment: Not a served image - 404
        Runtime: cloudfront-js-2.0
      FunctionCode: |
        function handler(event) {{
          return {{ statusCode: 404, statusDescription: 'Not Found' }};
        }}

  MediaDistribution:
    Type: AWS::CloudFront::Distribution
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_68
            comment: It serves public, immutable image files by GET and HEAD only (no application, no forms); abuse of uploads is bounded by the API's grant quotas. A web ACL can be attached by the operator.
          - id: CKV_AWS_86
            comment: Standard logs cost storage per request; the operator turns them on where needed (docs/deploy.md).
          - id: CKV_AWS_174
            comment: The default *.cloudfront.net certificate, whose minimum protocol CloudFront fixes; a custom domain with its certificate (TLSv1.2_2021) is the operator's (docs/deploy.md).
    Properties:
      DistributionConfig:
        Enabled: true
        Comment: Uploaded images (files/ of the media bucket)
        HttpVersion: http2and3
        IPV6Enabled: true
        PriceClass: !Ref MediaPriceClass
        Origins:
          - Id: MediaBucket
            DomainName: !GetAtt MediaBucket.RegionalDomainName
            OriginAccessControlId: !GetAtt MediaOriginAccessControl.Id
            S3OriginConfig:
              OriginAccessIdentity: ''
        CacheBehaviors:
          - PathPattern: files/*
            TargetOriginId: MediaBucket
            ViewerProtocolPolicy: redirect-to-https
            AllowedMethods:
              - GET
              - HEAD
            CachedMethods:
              - GET
              - HEAD
            Compress: false
            CachePolicyId: {CACHING_OPTIMIZED}
            ResponseHeadersPolicyId: !Ref MediaResponseHeaders
        DefaultCacheBehavior:
          TargetOriginId: MediaBucket
          ViewerProtocolPolicy: redirect-to-https
          AllowedMethods:
            - GET
            - HEAD
          CachedMethods:
            - GET
            - HEAD
          Compress: false
          CachePolicyId: {CACHING_OPTIMIZED}
          ResponseHeadersPolicyId: !Ref MediaResponseHeaders
          FunctionAssociations:
            - EventType: viewer-request
              FunctionARN: !GetAtt MediaOnlyFiles.FunctionMetadata.FunctionARN
        ViewerCertificate:
          CloudFrontDefaultCertificate: true
"
    ) + &events::errors_alarm(
        "MediaErrorsAlarm",
        "MediaFunction",
        "The media function failed in 3 periods of 5 minutes running - uploads are not checked (they stay pending) or images attached nowhere are not swept; see its logs (docs/operations.md)",
    )
}

/// The outputs a deployment of images needs: where files are served from
/// (the web client's `img-src`) and the bucket uploads go to (its `connect-src`).
pub(crate) fn media_outputs() -> &'static str {
    "  MediaUrl:
    Description: Where uploaded images are served from (MEDIA_BASE_URL; the web client's img-src)
    Value: !Sub 'https://${MediaDistribution.DomainName}'
  MediaBucketName:
    Description: The media bucket (upload grants post to https://<bucket>.s3.<region>.amazonaws.com; the web client's connect-src)
    Value: !Ref MediaBucket
"
}
