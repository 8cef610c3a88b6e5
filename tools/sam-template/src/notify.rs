//! The `notify` function (docs/DESIGN.md, Notifications off the request): the
//! table's stream delivers the posts and comments written, deleted and
//! disowned, filtered by the event source mapping
//! (`shared::stream::notify::notify_filters`), and the function notifies
//! whom they concern. A function of its own rather than a wider filter on
//! `purge`'s: each event source mapping keeps its own place in the stream,
//! so a failing notification holds back no purge (nor the reverse); its
//! role writes notifications and deletes no post's children; it is
//! invoked for every post and comment, `purge` for deletes only. The same
//! in both templates: it waits on DynamoDB, so it runs on classic Lambda
//! in either mode.

use crate::events;

/// The DynamoDB actions of the notify function (tests/iam.rs records
/// them): what the notifier reads (the post and the parent comment, the
/// mentioned members, the recipients' blocks, their notification states in
/// one batch get) and writes (a text's record, notifications and states in
/// one transaction with a check of the post's record; their withdrawal,
/// trimming and disowning). A deleted text's images go to the sweep:
/// the post's image children (Query), one transaction per image (its
/// update, its marker's put, its child's delete), and a child whose image
/// another release took first deleted alone (BatchWriteItem).
pub const NOTIFY_ACTIONS: &[&str] = &[
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
];

/// The event source mapping's filter patterns, one line each (a record
/// passes when any matches).
pub fn notify_filter_patterns() -> Vec<String> {
    shared::stream::notify::notify_filters()
        .iter()
        .map(|pattern| pattern.to_string())
        .collect()
}

pub(crate) fn notify_resources() -> String {
    let actions = events::actions(NOTIFY_ACTIONS);
    let filters: String = notify_filter_patterns()
        .iter()
        .map(|p| format!("\n                - Pattern: '{p}'"))
        .collect();
    format!(
        "
  NotifyFunction:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: rust-cargolambda
      BuildProperties:
        Binary: notify
      checkov:
        skip:
          - id: CKV_AWS_117
            comment: The function reaches only DynamoDB over the AWS API; a VPC adds NAT cost and protects nothing here.
          - id: CKV_AWS_116
            comment: Invoked only by the table's stream, whose failures go to the event source mapping's on-failure destination (NotifyDeadLetters).
          - id: CKV_AWS_115
            comment: Its concurrency is bounded by the stream's shards (one batch per shard at a time); it hashes nothing.
          - id: CKV_AWS_173
            comment: The environment holds no secret (the table name, boards and shard count); it is encrypted at rest with the AWS-managed key.
    Properties:
      Description: Notifies members of the posts and comments that concern them, and releases a deleted text's images to the sweep, from the table's stream (docs/DESIGN.md, Notifications off the request)
      CodeUri: ../functions/notify/
      MemorySize: 256
      # A batch of 25 texts is ~25-150 requests: seconds at most.
      Timeout: 60
      Policies:
        - Version: '2012-10-17'
          Statement:
            - Effect: Allow
              Action:{actions}
              Resource:
                - !GetAtt Table.Arn
            - Effect: Allow
              Action:
                - sqs:SendMessage
              Resource:
                - !GetAtt NotifyDeadLetters.Arn
{traces}      Events:
        TextChanges:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt Table.StreamArn
            # From the deploy on: texts written before it notify nobody
            # (their notifications would show as new).
            StartingPosition: LATEST
            BatchSize: 25
            # No batching window: a batch is invoked as soon as the
            # poller reads it (the delay from a write to its notification).
            MaximumBatchingWindowInSeconds: 0
            # Notifying is idempotent: retried from the record that failed,
            # for an hour at most, then recorded in the dead-letter queue
            # (those texts notify nobody).
            MaximumRetryAttempts: 10
            MaximumRecordAgeInSeconds: 3600
            BisectBatchOnFunctionError: true
            FunctionResponseTypes:
              - ReportBatchItemFailures
            FilterCriteria:
              Filters:{filters}
            DestinationConfig:
              OnFailure:
                Type: SQS
                Destination: !GetAtt NotifyDeadLetters.Arn
",
        traces = crate::functions::TRACES_STATEMENT,
    ) + &events::log_group("NotifyFunction")
        + &events::dead_letters(
            "Notify",
            "time to find why notifying failed",
            "Notifying failed on every retry for a batch of texts - those posts and comments notified nobody; see the notify function's logs (docs/operations.md)",
        )
        + &events::iterator_age_alarm("Notify", "Notifications")
}
