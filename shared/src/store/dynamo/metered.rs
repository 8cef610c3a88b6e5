//! How every request is sent and how it fails: asking for its consumed
//! capacity and handing it to the store's meter ([`super::capacity`]), so
//! none can forget; and the SDK error mapping every request shares.

use aws_sdk_dynamodb::config::http::HttpResponse as Response;
use aws_sdk_dynamodb::error::{BuildError, DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::batch_get_item::{
    BatchGetItemError, BatchGetItemOutput, builders::BatchGetItemFluentBuilder,
};
use aws_sdk_dynamodb::operation::batch_write_item::{
    BatchWriteItemError, BatchWriteItemOutput, builders::BatchWriteItemFluentBuilder,
};
use aws_sdk_dynamodb::operation::delete_item::{DeleteItemError, DeleteItemOutput, builders::DeleteItemFluentBuilder};
use aws_sdk_dynamodb::operation::get_item::{GetItemError, GetItemOutput, builders::GetItemFluentBuilder};
use aws_sdk_dynamodb::operation::put_item::{PutItemError, PutItemOutput, builders::PutItemFluentBuilder};
use aws_sdk_dynamodb::operation::query::{QueryError, QueryOutput, builders::QueryFluentBuilder};
use aws_sdk_dynamodb::operation::transact_write_items::{
    TransactWriteItemsError, TransactWriteItemsOutput, builders::TransactWriteItemsFluentBuilder,
};
use aws_sdk_dynamodb::operation::update_item::{UpdateItemError, UpdateItemOutput, builders::UpdateItemFluentBuilder};
use aws_sdk_dynamodb::types::ReturnConsumedCapacity;

use super::DynamoStore;
use crate::store::{StoreError, StoreResult};

/// A request builder sent with its capacity recorded; `touched` is the
/// partition key of every item it names (one entry per item).
pub(super) trait Metered: Sized {
    type Output;
    type Error: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static;

    /// Sends, records the capacity, and leaves the error as DynamoDB gave it.
    fn send_metered(
        self,
        store: &DynamoStore,
        touched: &[String],
    ) -> impl Future<Output = Result<Self::Output, SdkError<Self::Error, Response>>> + Send;

    /// Sends, records the capacity, and turns an error into the store's.
    async fn metered(self, store: &DynamoStore, touched: &[String]) -> StoreResult<Self::Output> {
        self.send_metered(store, touched).await.map_err(sdk_error)
    }

    /// As [`Self::metered`], with `None` when the request's condition failed
    /// (nothing written).
    async fn metered_if(self, store: &DynamoStore, touched: &[String]) -> StoreResult<Option<Self::Output>> {
        match self.send_metered(store, touched).await {
            Ok(out) => Ok(Some(out)),
            Err(e) if is_conditional_failure(&e) => Ok(None),
            Err(e) => Err(sdk_error(e)),
        }
    }
}

macro_rules! metered {
    ($($builder:ty => $output:ty, $error:ty);* $(;)?) => {$(
        impl Metered for $builder {
            type Output = $output;
            type Error = $error;

            async fn send_metered(
                self,
                store: &DynamoStore,
                touched: &[String],
            ) -> Result<$output, SdkError<$error, Response>> {
                self.return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                    .send()
                    .await
                    .inspect(|out| store.record(out, touched))
            }
        }
    )*};
}

metered!(
    GetItemFluentBuilder => GetItemOutput, GetItemError;
    BatchGetItemFluentBuilder => BatchGetItemOutput, BatchGetItemError;
    QueryFluentBuilder => QueryOutput, QueryError;
    PutItemFluentBuilder => PutItemOutput, PutItemError;
    UpdateItemFluentBuilder => UpdateItemOutput, UpdateItemError;
    DeleteItemFluentBuilder => DeleteItemOutput, DeleteItemError;
    TransactWriteItemsFluentBuilder => TransactWriteItemsOutput, TransactWriteItemsError;
    BatchWriteItemFluentBuilder => BatchWriteItemOutput, BatchWriteItemError;
);

/// Throttling, timeouts and unreachable endpoints are "unavailable" (503).
pub(crate) fn sdk_error<E, R>(err: SdkError<E, R>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    let transient = match &err {
        SdkError::ServiceError(service) => matches!(
            service.err().code(),
            Some(
                "ProvisionedThroughputExceededException"
                    | "ThrottlingException"
                    | "RequestLimitExceeded"
                    | "InternalServerError"
                    // AWS's common 500: `503 unavailable`, as
                    // docs/API.md, Errors, says of a store that fails
                    // (DynamoDB Local answers it when its file is locked).
                    | "InternalFailure"
                    | "ServiceUnavailable"
                    | "LimitExceededException"
            )
        ),
        _ => true, // dispatch failures, timeouts, unreadable responses
    };
    let message = DisplayErrorContext(&err).to_string();
    if transient {
        StoreError::Unavailable(message)
    } else {
        StoreError::Internal(message)
    }
}

/// A request the adapter built without a field it requires: a bug (500).
impl From<BuildError> for StoreError {
    fn from(err: BuildError) -> Self {
        StoreError::Internal(err.to_string())
    }
}

/// Whether a single-item write failed only because its condition did not hold.
pub(super) fn is_conditional_failure<E: ProvideErrorMetadata, R>(err: &SdkError<E, R>) -> bool {
    err.as_service_error()
        .is_some_and(|e| e.code() == Some("ConditionalCheckFailedException"))
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::error::{ErrorMetadata, SdkError};
    use aws_sdk_dynamodb::operation::put_item::PutItemError;

    use super::sdk_error;
    use crate::store::StoreError;

    fn answered(code: &str) -> StoreError {
        let error = PutItemError::generic(ErrorMetadata::builder().code(code).build());
        // The raw response is only printed: any `Debug` stands in for it.
        sdk_error(SdkError::service_error(error, "a 500 answer"))
    }

    #[test]
    fn a_store_that_fails_on_its_side_is_unavailable_and_a_refused_request_is_not() {
        for code in [
            "InternalServerError",
            "InternalFailure",
            "ServiceUnavailable",
            "ThrottlingException",
        ] {
            assert!(matches!(answered(code), StoreError::Unavailable(_)), "{code}");
        }
        for code in ["ValidationException", "AccessDeniedException"] {
            assert!(matches!(answered(code), StoreError::Internal(_)), "{code}");
        }
    }
}
