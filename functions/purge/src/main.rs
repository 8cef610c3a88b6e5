//! Lambda function `purge`: the table's stream delivers each deleted post's
//! purge marker, and `shared::runtime::lambda::run_purge` deletes the post's
//! children (docs/storage.md, Deleting a post).

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::lambda::run_purge().await
}
