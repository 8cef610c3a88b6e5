//! Lambda function `account`: config, store and hashing are built once per cold
//! start by `shared::runtime::lambda`, which then serves this function's routes.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::lambda::run(shared::http::Function::Account).await
}
