//! The DynamoDB client, built when the store first talks to the table.
//! Loading the SDK's settings (profiles, provider chains, endpoint rules)
//! took ~0.7 ms of a function's ~1 ms cold start beyond a hello-world one
//! (docs/benchmarks.md, Cold start); a request that never reads the table
//! (GET /health) does not wait for it, and the first one that does pays it once.

use std::future::Future;
use std::pin::Pin;

use aws_sdk_dynamodb::Client;
use tokio::sync::OnceCell;

use super::SdkTuning;
use crate::aws::AwsSettings;

#[derive(Debug)]
pub(super) struct LazyClient {
    client: OnceCell<Client>,
    /// How to build it; `None` when it was given ready-made.
    settings: Option<(AwsSettings, SdkTuning)>,
}

impl LazyClient {
    pub(super) fn ready(client: Client) -> Self {
        LazyClient {
            client: OnceCell::new_with(Some(client)),
            settings: None,
        }
    }

    pub(super) fn on_first_use(settings: AwsSettings, tuning: SdkTuning) -> Self {
        LazyClient {
            client: OnceCell::new(),
            settings: Some((settings, tuning)),
        }
    }

    /// The client; concurrent first callers wait for one build, and a build
    /// cancelled half-way (a timed-out request) is started again by the next.
    pub(super) async fn get(&self) -> &Client {
        match self.client.get() {
            Some(client) => client,
            None => self.build().await,
        }
    }

    /// Boxed: every store call awaits [`get`](Self::get), and the SDK's
    /// settings loader is a large future that would otherwise be part of each.
    fn build(&self) -> Pin<Box<dyn Future<Output = &Client> + Send + '_>> {
        Box::pin(self.client.get_or_init(|| async {
            let (settings, tuning) = self.settings.as_ref().expect("a lazy client has its settings");
            Client::from_conf(super::sdk_config(settings, tuning).await.build())
        }))
    }

    pub(super) fn is_built(&self) -> bool {
        self.client.initialized()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_store_for_aws_itself_builds_its_client_only_when_first_used() {
        let store = super::super::DynamoStore::connect("boards", None, None, &SdkTuning::defaults(false))
            .await
            .unwrap();
        assert!(!store.client_is_built());
    }

    #[tokio::test]
    async fn concurrent_first_callers_share_one_client() {
        // Building a client does not connect: no endpoint needs to listen.
        let settings = AwsSettings::new(Some("http://127.0.0.1:9"), None).unwrap();
        let lazy = LazyClient::on_first_use(settings, SdkTuning::defaults(true));
        assert!(!lazy.is_built());
        let (first, second) = tokio::join!(lazy.get(), lazy.get());
        assert!(std::ptr::eq(first, second));
        assert!(lazy.is_built());
        assert!(std::ptr::eq(first, lazy.get().await));
    }
}
