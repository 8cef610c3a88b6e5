//! Lambda function `media`: its routes (upload grants and their state) and
//! the media bucket's events (each upload's check) and schedule (the sweep),
//! all through `shared::runtime::lambda::run_media` (docs/DESIGN.md, Images).

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::runtime::lambda::run_media().await
}
