//! The dashboard and alarms on the functions' EMF hash metrics and the
//! API's errors.

use std::fmt::Write as _;

use crate::functions::functions_by_tier;
use crate::managed::fixed_capacity_tier;
use crate::mode::ComputeMode;
use crate::yaml::pascal;
use shared::hashing::tier_file::TierFile;

/// The CloudWatch namespace the functions' EMF hash records go to
/// (`shared::hashing::timing::NAMESPACE`).
const HASH_NAMESPACE: &str = shared::hashing::timing::NAMESPACE;

pub(crate) fn monitoring_parameters(tiers: &TierFile) -> anyhow::Result<String> {
    let mut t = String::new();
    for (tier, _) in functions_by_tier(tiers) {
        let budget = fixed_capacity_tier(tiers, tier)
            .ok_or_else(|| anyhow::anyhow!("tier file has no {tier} tier"))?
            .budget_ms;
        let _ = write!(
            t,
            "  {Tier}HashP99AlarmMs:
    Type: Number
    Description: Alarm when the P99 of {tier}-tier hash times (hash_ms) stays above this many ms - the tier is too slow for the CPU it runs on (default - its budget in infra/tiers.json)
    Default: {budget}
",
            Tier = pascal(tier),
        );
    }
    t += "  Api5xxAlarmThreshold:
    Type: Number
    Description: Alarm when the API answers more than this many 5xx in 5 minutes (503 is the hashing queue shedding load, or Lambda throttling)
    Default: 25
  AlarmTopicArn:
    Type: String
    Description: SNS topic the alarms notify (empty - none, see them in CloudWatch)
    Default: ''
";
    Ok(t)
}

/// The dashboard (hash time P99 per tier, queue wait, the API's 4xx/5xx)
/// and the alarms on them, in both modes. The hash alarms name the exact
/// metrics (alarms cannot SEARCH): the `algorithm` dimension is the tier the
/// mode hashes with (classic: the tier parameter; managed instances: the
/// tier file's fixed-capacity tier).
pub(crate) fn monitoring_resources(tiers: &TierFile, mode: ComputeMode) -> anyhow::Result<String> {
    let by_tier = functions_by_tier(tiers);
    let search = |metric: &str, filter: &str| {
        format!("SEARCH('{{{HASH_NAMESPACE},function,tier,algorithm}} MetricName=\"{metric}\"{filter}', 'p99', 60)")
    };
    let mut widgets = Vec::new();
    for (i, (tier, _)) in by_tier.iter().enumerate() {
        widgets.push(serde_json::json!({
            "type": "metric",
            "x": 12 * (i % 2), "y": 6 * (i / 2), "width": 12, "height": 6,
            "properties": {
                "title": format!("hash_ms P99, {tier} tier (per function and algorithm)"),
                "region": "${AWS::Region}",
                "view": "timeSeries",
                "period": 60,
                "metrics": [[{"expression": search("hash_ms", &format!(" tier=\"{tier}\"")), "id": tier}]],
                "annotations": {"horizontal": [{"label": "alarm", "value": format!("@@{}HashP99AlarmMs@@", pascal(tier))}]},
                "yAxis": {"left": {"min": 0}}
            }
        }));
    }
    let y = 6 * by_tier.len().div_ceil(2);
    widgets.push(serde_json::json!({
        "type": "metric",
        "x": 0, "y": y, "width": 12, "height": 6,
        "properties": {
            "title": "queue_wait_ms P99 (hashing queue)",
            "region": "${AWS::Region}",
            "view": "timeSeries",
            "period": 60,
            "metrics": [[{"expression": search("queue_wait_ms", ""), "id": "wait"}]],
            "yAxis": {"left": {"min": 0}}
        }
    }));
    widgets.push(serde_json::json!({
        "type": "metric",
        "x": 12, "y": y, "width": 12, "height": 6,
        "properties": {
            "title": "API 4xx and 5xx",
            "region": "${AWS::Region}",
            "view": "timeSeries",
            "stat": "Sum",
            "period": 60,
            "metrics": [
                ["AWS/ApiGateway", "4xx", "ApiId", "${HttpApi}"],
                ["AWS/ApiGateway", "5xx", "ApiId", "${HttpApi}"]
            ],
            "annotations": {"horizontal": [{"label": "5xx alarm (per 5 minutes)", "value": "@@Api5xxAlarmThreshold@@"}]},
            "yAxis": {"left": {"min": 0}}
        }
    }));
    // The purge off the request (tools/sam-template/src/purge.rs).
    widgets.push(serde_json::json!({
        "type": "metric",
        "x": 0, "y": y + 6, "width": 24, "height": 6,
        "properties": {
            "title": "purge: stream iterator age (ms, max) and dead letters",
            "region": "${AWS::Region}",
            "view": "timeSeries",
            "period": 60,
            "metrics": [
                ["AWS/Lambda", "IteratorAge", "FunctionName", "${PurgeFunction}", {"stat": "Maximum"}],
                ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", "${PurgeDeadLetters.QueueName}", {"stat": "Maximum", "yAxis": "right"}]
            ],
            "yAxis": {"left": {"min": 0}, "right": {"min": 0}}
        }
    }));
    // The notifications off the request (tools/sam-template/src/notify.rs).
    widgets.push(serde_json::json!({
        "type": "metric",
        "x": 0, "y": y + 12, "width": 24, "height": 6,
        "properties": {
            "title": "notify: stream iterator age (ms, max) and dead letters",
            "region": "${AWS::Region}",
            "view": "timeSeries",
            "period": 60,
            "metrics": [
                ["AWS/Lambda", "IteratorAge", "FunctionName", "${NotifyFunction}", {"stat": "Maximum"}],
                ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", "${NotifyDeadLetters.QueueName}", {"stat": "Maximum", "yAxis": "right"}]
            ],
            "yAxis": {"left": {"min": 0}, "right": {"min": 0}}
        }
    }));
    // One line per widget.
    let mut body = String::from("{\"widgets\": [\n");
    for (i, widget) in widgets.iter().enumerate() {
        let comma = if i + 1 < widgets.len() { "," } else { "" };
        let _ = writeln!(body, "  {}{comma}", serde_json::to_string(widget)?);
    }
    body += "]}";
    // Parameters as numbers: `"@@Name@@"` becomes `${Name}`, which !Sub fills.
    while let Some(start) = body.find("\"@@") {
        let end = start + 3 + body[start + 3..].find("@@\"").expect("closing marker");
        let name = body[start + 3..end].to_owned();
        body.replace_range(start..end + 3, &format!("${{{name}}}"));
    }
    let body: String = body.lines().map(|l| format!("        {l}\n")).collect();
    let mut t = format!(
        "
  Dashboard:
    Type: AWS::CloudWatch::Dashboard
    Properties:
      DashboardBody: !Sub |
{body}"
    );
    let alarm_actions = "      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]";
    for (tier, functions) in &by_tier {
        let fixed = fixed_capacity_tier(tiers, tier).ok_or_else(|| anyhow::anyhow!("tier file has no {tier} tier"))?;
        let tier_pascal = pascal(tier);
        let algorithm = match mode {
            ComputeMode::Classic => format!("!Ref {tier_pascal}Tier"),
            ComputeMode::ManagedInstances => format!("'{}'", fixed.spec),
        };
        let ids: Vec<String> = (0..functions.len()).map(|i| format!("m{i}")).collect();
        let _ = write!(
            t,
            "
  {tier_pascal}HashP99Alarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: !Sub 'P99 of {tier}-tier hash times ({names}) above ${{{tier_pascal}HashP99AlarmMs}} ms - the tier is too slow for this CPU (recalibrate, docs/hashing.md) or hashing is starved'
      ComparisonOperator: GreaterThanThreshold
      Threshold: !Ref {tier_pascal}HashP99AlarmMs
      EvaluationPeriods: 3
      DatapointsToAlarm: 2
      TreatMissingData: notBreaching
{alarm_actions}
      Metrics:
        - Id: worst
          Label: slowest function's P99
          Expression: MAX([{ids}])
          ReturnData: true
",
            names = functions.join(", "),
            ids = ids.join(", "),
        );
        for (id, function) in ids.iter().zip(functions) {
            let _ = write!(
                t,
                "        - Id: {id}
          ReturnData: false
          MetricStat:
            Period: 300
            Stat: p99
            Metric:
              Namespace: {HASH_NAMESPACE}
              MetricName: hash_ms
              Dimensions:
                - Name: function
                  Value: {function}
                - Name: tier
                  Value: {tier}
                - Name: algorithm
                  Value: {algorithm}
"
            );
        }
    }
    let _ = write!(
        t,
        "
  Api5xxAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: !Sub 'More than ${{Api5xxAlarmThreshold}} API 5xx in 5 minutes - 503s are the hashing queue shedding load or Lambda throttling (raise the reserved concurrency, or ManagedInstancesMaxVCpus on managed instances), others are faults (see the function logs)'
      Namespace: AWS/ApiGateway
      MetricName: 5xx
      Dimensions:
        - Name: ApiId
          Value: !Ref HttpApi
      Statistic: Sum
      Period: 300
      EvaluationPeriods: 1
      ComparisonOperator: GreaterThanThreshold
      Threshold: !Ref Api5xxAlarmThreshold
      TreatMissingData: notBreaching
{alarm_actions}
"
    );
    Ok(t)
}
