//! Lambda function `notify`: the table's stream delivers the posts and
//! comments written, deleted and disowned, and
//! `shared::runtime::lambda::run_notify` notifies whom they concern
//! (docs/DESIGN.md, Notifications off the request).

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::lambda::run_notify().await
}
