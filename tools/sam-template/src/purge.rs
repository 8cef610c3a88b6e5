//! The `purge` function (docs/storage.md, Deleting a post): a post's
//! delete writes its purge marker and returns; the table's stream delivers
//! the marker's insert here, filtered by the event source mapping, and the
//! function deletes the post's children. Failures are retried from the
//! failed record (`ReportBatchItemFailures`), then land in a dead-letter
//! queue with an alarm. The same in both templates: the function waits on
//! DynamoDB, so it runs on classic Lambda in either mode.
//!
//! It also runs on a schedule ([`PURGE_SCHEDULE`]): each run finishes
//! the pending purges and the account deletions whose step 2 was cut short
//! (docs/DESIGN.md, Accounts), within its invocation's time.

use crate::events;

use shared::store::dynamo::PURGE_PK;

/// The DynamoDB actions of the purge function (tests/iam.rs records them):
/// a purge reads the marker (GetItem), the keys under the post's partitions
/// (Query) and deletes them (BatchWriteItem); its schedule also
/// finishes pending account deletions: the pending marks (Query), the index
/// by owner (Query on `ByOwner`), the post, comment and like deletes
/// (transactions: PutItem, UpdateItem, DeleteItem, ConditionCheckItem),
/// and an unlike's count after it (BatchGetItem of the post's shards).
/// A purge first releases the post's images and its comments' to the
/// sweep: their children (Query), one transaction per image (UpdateItem,
/// PutItem of its marker, DeleteItem of its child), a child released
/// already deleted alone (BatchWriteItem): nothing it did not have.
pub const PURGE_ACTIONS: &[&str] = &[
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
];

/// How often the purge function runs without a stream record, to
/// finish what account deletions and purges left pending (docs/operations.md).
pub const PURGE_SCHEDULE: &str = "rate(5 minutes)";

/// The event source mapping's filter: inserts of purge markers only, so
/// the function is not invoked (nor billed) for the table's other writes.
pub fn purge_filter() -> String {
    format!(r#"{{"eventName": ["INSERT"], "dynamodb": {{"Keys": {{"PK": {{"S": ["{PURGE_PK}"]}}}}}}}}"#)
}

pub(crate) fn purge_resources() -> String {
    let actions = events::actions(PURGE_ACTIONS);
    format!(
        "
  PurgeFunction:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: rust-cargolambda
      BuildProperties:
        Binary: purge
      checkov:
        skip:
          - id: CKV_AWS_117
            comment: The function reaches only DynamoDB over the AWS API; a VPC adds NAT cost and protects nothing here.
          - id: CKV_AWS_116
            comment: Invoked by the table's stream, whose failures go to the event source mapping's on-failure destination (PurgeDeadLetters), and by its schedule, whose failed run the next one repeats (PurgeScheduleErrorsAlarm); a dead-letter queue would hold only empty scheduled events.
          - id: CKV_AWS_115
            comment: Its concurrency is bounded by the stream's shards (one batch per shard at a time); it hashes nothing.
          - id: CKV_AWS_173
            comment: The environment holds no secret (the table name, boards and shard count); it is encrypted at rest with the AWS-managed key.
    Properties:
      Description: Deletes a deleted post's comments, likes and reports (and releases its images to the sweep), from the table's stream (docs/storage.md, Deleting a post), and on a schedule finishes pending account deletions and purges
      CodeUri: ../functions/purge/
      MemorySize: 256
      # A purge of 10,000 children is ~400 BatchWriteItems: seconds, not
      # minutes; a scheduled run stops 10 s before this to answer.
      Timeout: 120
      # A failed scheduled run is not retried: the next one, 5 minutes
      # on, does the same work (the stream's retries are its own).
      EventInvokeConfig:
        MaximumRetryAttempts: 0
      Policies:
        - Version: '2012-10-17'
          Statement:
            - Effect: Allow
              Action:{actions}
              Resource:
                - !GetAtt Table.Arn
                - !Sub '${{Table.Arn}}/index/*'
            - Effect: Allow
              Action:
                - sqs:SendMessage
              Resource:
                - !GetAtt PurgeDeadLetters.Arn
{traces}      Events:
        PurgeMarkers:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt Table.StreamArn
            StartingPosition: TRIM_HORIZON
            BatchSize: 10
            MaximumBatchingWindowInSeconds: 1
            # A purge is idempotent: retried from the record that failed,
            # then recorded in the dead-letter queue (the marker stays, and
            # the post stays unreadable, until it is purged).
            MaximumRetryAttempts: 10
            BisectBatchOnFunctionError: true
            FunctionResponseTypes:
              - ReportBatchItemFailures
            FilterCriteria:
              Filters:
                - Pattern: '{filter}'
            DestinationConfig:
              OnFailure:
                Type: SQS
                Destination: !GetAtt PurgeDeadLetters.Arn
        # Finishes the account deletions and purges left pending
        # (docs/operations.md, The purge of a deleted post's children).
        PendingWork:
          Type: Schedule
          Properties:
            Schedule: {schedule}
            Description: Finishes the account deletions and post purges left pending
",
        filter = purge_filter(),
        schedule = PURGE_SCHEDULE,
        traces = crate::functions::TRACES_STATEMENT,
    ) + &events::log_group("PurgeFunction")
        + &events::dead_letters(
            "Purge",
            "time to find why a purge failed and rerun it",
            "A deleted post's purge failed on every retry - its marker stays and its children are still stored; see the purge function's logs, then rerun it (docs/operations.md)",
        )
        + &events::errors_alarm(
            "PurgeScheduleErrorsAlarm",
            "PurgeFunction",
            "The purge function failed 3 times in 15 minutes - a pending account deletion or purge cannot finish, or the stream's batches fail; see its logs (docs/operations.md)",
        )
        + &events::iterator_age_alarm("Purge", "Purges")
}
