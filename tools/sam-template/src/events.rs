//! The resources every function fed by events (the stream's `purge` and
//! `notify`, the scheduled `media`) has around it: its log group, the
//! stream's dead-letter queue and the alarms on them.

/// A policy's `Action:` list, each on its own line under it.
pub(crate) fn actions(actions: &[&str]) -> String {
    actions.iter().map(|a| format!("\n                - {a}")).collect()
}

/// The log group of the function resource `resource`.
pub(crate) fn log_group(resource: &str) -> String {
    format!(
        "
  {resource}Logs:
    Type: AWS::Logs::LogGroup
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_158
            comment: Function logs hold no secrets (a test scans them); the default encryption of CloudWatch Logs applies.
    Properties:
      LogGroupName: !Sub /aws/lambda/${{{resource}}}
      RetentionInDays: !Ref LogRetentionDays
"
    )
}

/// `{name}DeadLetters`, where a stream's event source mapping records the
/// batches that failed every retry (kept as long as SQS keeps: `why`), and
/// its alarm, `lost` saying what a message there means.
pub(crate) fn dead_letters(name: &str, why: &str, lost: &str) -> String {
    format!(
        "
  {name}DeadLetters:
    Type: AWS::SQS::Queue
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_27
            comment: Encrypted at rest with SQS-managed keys (SqsManagedSseEnabled); its messages hold only stream coordinates (shard, sequence numbers), and a KMS key adds cost without a reader to restrict.
    Properties:
      # The most SQS keeps: {why}.
      MessageRetentionPeriod: 1209600
      SqsManagedSseEnabled: true

  {name}DeadLettersAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: {lost}
      Namespace: AWS/SQS
      MetricName: ApproximateNumberOfMessagesVisible
      Dimensions:
        - Name: QueueName
          Value: !GetAtt {name}DeadLetters.QueueName
      Statistic: Maximum
      Period: 300
      EvaluationPeriods: 1
      ComparisonOperator: GreaterThanThreshold
      Threshold: 0
      TreatMissingData: notBreaching
      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
"
    )
}

/// `{name}ScheduleErrorsAlarm`-style alarm `alarm`: the function failed in
/// 3 periods of 5 minutes running.
pub(crate) fn errors_alarm(alarm: &str, function: &str, description: &str) -> String {
    format!(
        "
  {alarm}:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: {description}
      Namespace: AWS/Lambda
      MetricName: Errors
      Dimensions:
        - Name: FunctionName
          Value: !Ref {function}
      Statistic: Sum
      Period: 300
      EvaluationPeriods: 3
      DatapointsToAlarm: 3
      ComparisonOperator: GreaterThanThreshold
      Threshold: 0
      TreatMissingData: notBreaching
      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
"
    )
}

/// `{name}IteratorAgeAlarm`: the function `{name}Function` is more than 5
/// minutes behind the table's stream; `what` names what falls behind.
pub(crate) fn iterator_age_alarm(name: &str, what: &str) -> String {
    let function = name.to_lowercase();
    format!(
        "
  {name}IteratorAgeAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: {what} are more than 5 minutes behind the table's stream - the {function} function is failing or throttled (docs/operations.md)
      Namespace: AWS/Lambda
      MetricName: IteratorAge
      Dimensions:
        - Name: FunctionName
          Value: !Ref {name}Function
      Statistic: Maximum
      Period: 300
      EvaluationPeriods: 2
      ComparisonOperator: GreaterThanThreshold
      Threshold: 300000
      TreatMissingData: notBreaching
      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]
"
    )
}
