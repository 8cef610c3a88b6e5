//! [`RequestCounter`]: an SDK interceptor that counts the HTTP requests a
//! client sends, for tests that pin what an operation costs.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;

/// Counts HTTP requests sent to DynamoDB (retries included): tests use it to
/// prove how many round trips an operation costs.
#[derive(Debug, Default, Clone)]
pub struct RequestCounter(Arc<AtomicU64>);

impl RequestCounter {
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl Intercept for RequestCounter {
    fn name(&self) -> &'static str {
        "RequestCounter"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}
