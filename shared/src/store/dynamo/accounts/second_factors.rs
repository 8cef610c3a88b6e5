//! [`SecondFactors`] on DynamoDB: a member's TOTP as four
//! attributes of their member item, each operation one conditional
//! UpdateItem (docs/storage.md, "TOTP (DynamoDB)"):
//!
//! - `totp_secret` (S): the sealed secret; absent when TOTP is off;
//! - `totp_confirmed` (BOOL): false while the enrollment waits for its
//!   first code; stored only beside `totp_secret` (the session check reads
//!   it alone);
//! - `totp_last_step` (N): the last time step a code was accepted for;
//! - `totp_recovery` (SS): the hashes of the unused recovery codes; absent
//!   when none is left (DynamoDB stores no empty set).
//!
//! A spend is its condition: `totp_last_step < :step`, or `contains(
//! totp_recovery, :hash)` with `DELETE` of that element, so racing spends of
//! one step or one code succeed once.

use async_trait::async_trait;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::{UpdateItemError, UpdateItemOutput};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};

use super::sessions::{LIVE_ACCOUNT, state_of};
use crate::domain::{MemberId, StoredTotp, TotpStart, Username};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{Item, n, s, text};
use crate::store::dynamo::items::member_pk;
use crate::store::dynamo::metered::Metered;
use crate::store::dynamo::metered::{is_conditional_failure, sdk_error};
use crate::store::{SecondFactors, StoreError, StoreResult};

/// The member item is not a tombstone (the methods named by username only).
const NOT_DELETED: &str = "attribute_not_exists(deleted_at)";

/// Every TOTP attribute, for a `REMOVE`.
pub(super) const ALL_TOTP: &str = "totp_secret, totp_confirmed, totp_last_step, totp_recovery";

/// The member's TOTP as the member item holds it, `None` when off.
pub(in crate::store::dynamo) fn stored_totp(item: &Item) -> StoreResult<Option<StoredTotp>> {
    let Some(sealed_secret) = text(item, "totp_secret") else {
        return Ok(None);
    };
    let corrupt = |what: &str| StoreError::Internal(format!("a stored TOTP's {what} does not parse"));
    let confirmed = match item.get("totp_confirmed") {
        None => false,
        Some(value) => *value.as_bool().map_err(|_| corrupt("totp_confirmed"))?,
    };
    let last_step = match item.get("totp_last_step") {
        None => 0,
        Some(value) => value
            .as_n()
            .ok()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| corrupt("totp_last_step"))?,
    };
    let mut recovery_codes = match item.get("totp_recovery") {
        None => Vec::new(),
        Some(value) => value.as_ss().map_err(|_| corrupt("totp_recovery"))?.clone(),
    };
    // A set has no order: this one is stable.
    recovery_codes.sort();
    Ok(Some(StoredTotp {
        sealed_secret: sealed_secret.to_owned(),
        confirmed,
        last_step,
        recovery_codes,
    }))
}

fn step_value(step: u64) -> AttributeValue {
    AttributeValue::N(step.to_string())
}

impl DynamoStore {
    /// An UpdateItem of `username`'s member item, its units metered.
    async fn member_update(&self, username: &Username) -> UpdateItemFluentBuilder {
        self.client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(Self::member_key(username)))
    }

    async fn send_member_update(
        &self,
        username: &Username,
        update: UpdateItemFluentBuilder,
    ) -> Result<UpdateItemOutput, SdkError<UpdateItemError>> {
        update.send_metered(self, &[member_pk(username.as_str())]).await
    }

    /// True when the update's condition held (and it was written), false when not.
    async fn conditional_member_update(
        &self,
        username: &Username,
        update: UpdateItemFluentBuilder,
    ) -> StoreResult<bool> {
        match self.send_member_update(username, update).await {
            Ok(_) => Ok(true),
            Err(e) if is_conditional_failure(&e) => Ok(false),
            Err(e) => Err(sdk_error(e)),
        }
    }

    /// A write that may change whether TOTP is on (confirm, remove): true
    /// when its condition held. This process keeps the session state the
    /// write left (the update returns the whole item), or forgets what it
    /// knew when the outcome is unknown; a failed condition changed nothing.
    async fn totp_change(
        &self,
        id: &MemberId,
        username: &Username,
        update: UpdateItemFluentBuilder,
        gone_when_refused: bool,
    ) -> StoreResult<bool> {
        let update = update.return_values(ReturnValue::AllNew);
        match self.send_member_update(username, update).await {
            Ok(out) => {
                let state = state_of(&out.attributes.unwrap_or_default(), id)?;
                self.remember_written(id, username, state);
                Ok(true)
            }
            Err(e) if is_conditional_failure(&e) => {
                if gone_when_refused {
                    self.remember_written(id, username, None);
                }
                Ok(false)
            }
            Err(e) => {
                // It may have been written: ask the table next time.
                self.forget_session(id, username);
                Err(sdk_error(e))
            }
        }
    }
}

/// Whether the member item a failed condition returned (`ALL_OLD`) is the
/// live account `id`.
fn is_live(item: Option<&Item>, id: &MemberId) -> bool {
    item.is_some_and(|item| !item.contains_key("deleted_at") && text(item, "id") == Some(id.as_str()))
}

#[async_trait]
impl SecondFactors for DynamoStore {
    /// One UpdateItem: the secret, unconfirmed, unless TOTP is on. A failed
    /// condition returns the item (`ReturnValuesOnConditionCheckFailure`),
    /// which tells "on already" from "no such account" without a read.
    async fn start_totp(&self, id: &MemberId, username: &Username, sealed: &str) -> StoreResult<TotpStart> {
        let update = self
            .member_update(username)
            .await
            .update_expression(
                "SET totp_secret = :sealed, totp_confirmed = :no, totp_last_step = :zero REMOVE totp_recovery",
            )
            .condition_expression(format!(
                "{LIVE_ACCOUNT} AND (attribute_not_exists(totp_confirmed) OR totp_confirmed = :no)"
            ))
            .expression_attribute_names("#id", "id")
            .expression_attribute_values(":id", s(id.as_str()))
            .expression_attribute_values(":sealed", s(sealed))
            .expression_attribute_values(":no", AttributeValue::Bool(false))
            .expression_attribute_values(":zero", n(0))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        match self.send_member_update(username, update).await {
            Ok(_) => Ok(TotpStart::Started),
            Err(e) if is_conditional_failure(&e) => {
                let old = match e.as_service_error() {
                    Some(UpdateItemError::ConditionalCheckFailedException(failed)) => failed.item(),
                    _ => None,
                };
                Ok(if is_live(old, id) {
                    TotpStart::AlreadyOn
                } else {
                    TotpStart::NoAccount
                })
            }
            Err(e) => Err(sdk_error(e)),
        }
    }

    /// One UpdateItem, conditioned on the live account and on `sealed`
    /// still waiting.
    async fn confirm_totp(
        &self,
        id: &MemberId,
        username: &Username,
        sealed: &str,
        recovery_codes: &[String],
        step: u64,
    ) -> StoreResult<bool> {
        let mut codes = recovery_codes.to_vec();
        // A string set takes each element once, and no empty set is stored.
        codes.sort();
        codes.dedup();
        let mut update = self
            .member_update(username)
            .await
            .condition_expression(format!(
                "{LIVE_ACCOUNT} AND totp_secret = :sealed AND totp_confirmed = :no"
            ))
            .expression_attribute_names("#id", "id")
            .expression_attribute_values(":id", s(id.as_str()))
            .expression_attribute_values(":sealed", s(sealed))
            .expression_attribute_values(":no", AttributeValue::Bool(false))
            .expression_attribute_values(":yes", AttributeValue::Bool(true))
            .expression_attribute_values(":step", step_value(step));
        update = if codes.is_empty() {
            update.update_expression("SET totp_confirmed = :yes, totp_last_step = :step REMOVE totp_recovery")
        } else {
            update
                .update_expression("SET totp_confirmed = :yes, totp_last_step = :step, totp_recovery = :codes")
                .expression_attribute_values(":codes", AttributeValue::Ss(codes))
        };
        self.totp_change(id, username, update, false).await
    }

    /// One UpdateItem whose condition is the spend: a confirmed TOTP whose
    /// last accepted step is earlier.
    async fn spend_totp_step(&self, username: &Username, step: u64) -> StoreResult<bool> {
        let update = self
            .member_update(username)
            .await
            .update_expression("SET totp_last_step = :step")
            .condition_expression(format!(
                "{NOT_DELETED} AND totp_confirmed = :yes AND totp_last_step < :step"
            ))
            .expression_attribute_values(":yes", AttributeValue::Bool(true))
            .expression_attribute_values(":step", step_value(step));
        self.conditional_member_update(username, update).await
    }

    /// One UpdateItem: `DELETE` of the hash from the set, conditioned on the
    /// set holding it (the last one removes the attribute).
    async fn spend_recovery_code(&self, username: &Username, hash: &str) -> StoreResult<bool> {
        let update = self
            .member_update(username)
            .await
            .update_expression("DELETE totp_recovery :spent")
            .condition_expression(format!(
                "{NOT_DELETED} AND totp_confirmed = :yes AND contains(totp_recovery, :hash)"
            ))
            .expression_attribute_values(":yes", AttributeValue::Bool(true))
            .expression_attribute_values(":hash", s(hash))
            .expression_attribute_values(":spent", AttributeValue::Ss(vec![hash.to_owned()]));
        self.conditional_member_update(username, update).await
    }

    /// One UpdateItem, conditioned on the secret still being `old`.
    async fn reseal_totp(&self, username: &Username, old: &str, new: &str) -> StoreResult<bool> {
        let update = self
            .member_update(username)
            .await
            .update_expression("SET totp_secret = :new")
            .condition_expression(format!("{NOT_DELETED} AND totp_secret = :old"))
            .expression_attribute_values(":old", s(old))
            .expression_attribute_values(":new", s(new));
        self.conditional_member_update(username, update).await
    }

    /// One UpdateItem removing every TOTP attribute, conditioned on the live account.
    async fn end_totp(&self, id: &MemberId, username: &Username) -> StoreResult<bool> {
        let update = self
            .member_update(username)
            .await
            .update_expression(format!("REMOVE {ALL_TOTP}"))
            .condition_expression(LIVE_ACCOUNT)
            .expression_attribute_names("#id", "id")
            .expression_attribute_values(":id", s(id.as_str()));
        self.totp_change(id, username, update, true).await
    }
}
