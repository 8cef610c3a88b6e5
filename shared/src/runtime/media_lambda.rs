//! The `media` function's three kinds of event (docs/DESIGN.md,
//! Images): API Gateway requests for its routes, the media bucket's
//! "Object Created" events for uploads (through EventBridge, or a direct S3
//! notification), and its schedule's events for the sweep. One function, so
//! that what checks an upload is what granted it (one role on `uploads/`).

use lambda_http::{Context, LambdaEvent, Service as _};
use serde_json::{Value, json};

use crate::app::App;
use crate::domain::MediaId;
use crate::domain::media::upload_key;

/// What an invocation asks for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum MediaEvent {
    /// Uploads arrived: check each (ids from keys `uploads/<id>`; others skipped).
    Uploaded(Vec<MediaId>),
    /// The schedule: sweep what is due.
    Sweep,
    /// Anything else is an API Gateway request for the routes.
    Request,
}

/// The upload a key names, if it is one (`uploads/<id>`).
fn uploaded(key: &str) -> Option<MediaId> {
    let id = MediaId::parse(key.strip_prefix("uploads/")?).ok()?;
    (upload_key(&id) == key).then_some(id)
}

pub(super) fn classify(payload: &Value) -> MediaEvent {
    // EventBridge: S3's "Object Created", or the schedule's "Scheduled Event".
    match (payload["source"].as_str(), payload["detail-type"].as_str()) {
        (Some("aws.s3"), Some("Object Created")) => {
            let key = payload["detail"]["object"]["key"].as_str().unwrap_or_default();
            return MediaEvent::Uploaded(uploaded(key).into_iter().collect());
        }
        (Some("aws.events"), _) => return MediaEvent::Sweep,
        _ => {}
    }
    // A direct S3 notification: `Records` of `aws:s3`.
    if let Some(records) = payload["Records"].as_array()
        && records.iter().all(|r| r["eventSource"] == "aws:s3")
        && !records.is_empty()
    {
        let keys = records.iter().filter_map(|r| r["s3"]["object"]["key"].as_str());
        return MediaEvent::Uploaded(keys.filter_map(uploaded).collect());
    }
    MediaEvent::Request
}

/// One invocation. A check or sweep that fails is an error, so Lambda
/// retries the event (EventBridge's asynchronous invocation: twice).
pub(super) async fn handle<S>(
    app: &App,
    routes: &S,
    payload: Value,
    context: Context,
) -> Result<Value, lambda_http::Error>
where
    S: tower::Service<lambda_http::Request, Error = std::convert::Infallible> + Clone + Send + 'static,
    S::Response: lambda_http::IntoResponse,
    S::Future: Send,
{
    match classify(&payload) {
        MediaEvent::Uploaded(ids) => {
            let mut statuses = Vec::with_capacity(ids.len());
            for id in &ids {
                let status = app.check_upload(id).await.map_err(|e| e.to_string())?;
                statuses.push(json!({"id": id.as_str(), "status": status}));
            }
            Ok(json!({"checked": statuses}))
        }
        MediaEvent::Sweep => {
            let swept = app.sweep_media().await.map_err(|e| e.to_string())?;
            Ok(json!({"swept": swept}))
        }
        MediaEvent::Request => {
            let request: lambda_http::request::LambdaRequest = serde_json::from_value(payload)?;
            // What `lambda_http::run` does with each event, for this one.
            let mut adapter = lambda_http::Adapter::from(routes.clone());
            let response = adapter
                .call(LambdaEvent::new(request, context))
                .await
                .map_err(|e| match e {})?;
            Ok(serde_json::to_value(response)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::new_id;

    #[test]
    fn uploads_schedules_and_requests_are_told_apart() {
        let id = new_id();
        let bridged = json!({
            "source": "aws.s3", "detail-type": "Object Created",
            "detail": {"bucket": {"name": "media"}, "object": {"key": format!("uploads/{id}"), "size": 10}}
        });
        assert_eq!(
            classify(&bridged),
            MediaEvent::Uploaded(vec![MediaId::parse(&id).unwrap()])
        );
        let notified = json!({"Records": [
            {"eventSource": "aws:s3", "s3": {"object": {"key": format!("uploads/{id}")}}},
            {"eventSource": "aws:s3", "s3": {"object": {"key": format!("files/{id}.jpg")}}}
        ]});
        assert_eq!(
            classify(&notified),
            MediaEvent::Uploaded(vec![MediaId::parse(&id).unwrap()])
        );
        let served = json!({"source": "aws.s3", "detail-type": "Object Created",
            "detail": {"object": {"key": format!("files/{id}.jpg")}}});
        assert_eq!(
            classify(&served),
            MediaEvent::Uploaded(Vec::new()),
            "a checked file is no upload"
        );
        let scheduled = json!({"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}});
        assert_eq!(classify(&scheduled), MediaEvent::Sweep);
        let request = json!({"version": "2.0", "routeKey": "GET /media/{media_id}", "rawPath": "/media/x"});
        assert_eq!(classify(&request), MediaEvent::Request);
        assert_eq!(uploaded("uploads/../x"), None);
        assert_eq!(uploaded(&format!("uploads/{}", id.to_lowercase())), None);
    }
}
