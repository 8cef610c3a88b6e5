//! The smallest lambda_http function: answers every request with 200. Its
//! cold start is the floor the project's functions are measured against
//! (issue 15: at most 1.3 times this, same build, same run).

use lambda_http::{Body, Error, Request, Response, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_http::run(service_fn(|_: Request| async {
        Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(Body::from(r#"{"status":"ok"}"#))
            .map_err(Error::from)
    }))
    .await
}
