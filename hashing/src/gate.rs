//! The hashing gate: password hashes run on the blocking pool, at most
//! `workers` at once, with at most `queue` more waiting per tier. A request
//! that finds its tier's queue full is refused at once ([`Overloaded`], mapped
//! to 503 with `Retry-After`) instead of joining a queue that only grows:
//! under a flood the service sheds hashing work, and requests that do not hash
//! never wait behind it.
//!
//! When both tiers wait, a free worker goes to the tier that has been given
//! less estimated hashing time so far ([`Algorithm::estimated_micros`]),
//! counted against its weight (the tier file's `gate_weights`, 1:1 unless it
//! says otherwise): at 1:1 the tiers share the CPU evenly, so about eight
//! 19 ms guest hashes run for each 150 ms member hash instead of queueing
//! behind it in arrival order, and a flood of cheap guest hashes still leaves
//! members half of the time; at 3:1 members get three quarters.
//!
//! Within a tier, one client ([`QueueOwner`], the client address key) holds
//! at most a quarter of the queue ([`fair_share`]; docs/API.md, Throttling
//! and quotas), and the /64s of one IPv6 /48 together at most twice that
//! ([`fair_share_48`]; docs/API.md, Hardening): a few addresses looping
//! correct logins are refused 503 at their share while everyone else's
//! hashes still find room.

mod owner;
mod scheduler;
mod threads;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::oneshot;

use crate::batch::{self, BcryptFailed, BcryptInput, Output};
use crate::config::Batching;
use crate::engine::{HashError as EngineError, Job};
use crate::policy::{Algorithm, Tier};
use owner::fair_share_48;
pub use owner::{QueueOwner, fair_share};
pub use scheduler::{Ran, measured_plan};
use scheduler::{Scheduler, Slot, Turn, Waiter, index, lock, measure_once};
use threads::hashing_threads;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("password hashing is at capacity: {workers} running and {queue} waiting")]
pub struct Overloaded {
    pub workers: usize,
    pub queue: usize,
}

#[derive(Debug, Clone)]
pub struct HashingGate {
    /// Who runs next.
    scheduler: Arc<Mutex<Scheduler>>,
    workers: usize,
    queue: usize,
}

pub const DEFAULT_QUEUE: usize = 64;

impl HashingGate {
    /// A gate whose tiers cost the same. `workers` is clamped to at least 1.
    pub fn new(workers: usize, queue: usize) -> Self {
        Self::with_costs(workers, queue, [1, 1])
    }

    /// A gate sharing its workers between tiers by the estimated cost of
    /// their algorithms.
    pub fn for_algorithms(workers: usize, queue: usize, member: Algorithm, guest: Algorithm) -> Self {
        Self::with_costs(workers, queue, [member.estimated_micros(), guest.estimated_micros()])
    }

    /// `cost` is indexed member, guest.
    fn with_costs(workers: usize, queue: usize, cost: [u64; 2]) -> Self {
        let workers = workers.max(1);
        HashingGate {
            scheduler: Arc::new(Mutex::new(Scheduler {
                workers,
                free: workers,
                waiting: [VecDeque::new(), VecDeque::new()],
                served: [0, 0],
                cost: cost.map(|c| c.max(1)),
                weight: [1, 1],
                batching: Batching::Off,
            })),
            workers,
            queue,
        }
    }

    /// The tiers' shares of the time when both wait (`[member, guest]`,
    /// each at least 1). Set before the gate is shared.
    pub fn weighted(self, weights: [u32; 2]) -> Self {
        lock(&self.scheduler).weight = weights.map(|w| u64::from(w.max(1)));
        self
    }

    /// Whether waiting bcrypt hashes run together. [`Batching::Measured`]
    /// starts the process's one measurement (in the background, once).
    pub fn batching(self, batching: Batching) -> Self {
        if batching == Batching::Measured {
            measure_once();
        }
        lock(&self.scheduler).batching = batching;
        self
    }

    pub fn workers(&self) -> usize {
        self.workers
    }

    pub fn queue(&self) -> usize {
        self.queue
    }

    fn overloaded(&self) -> Overloaded {
        Overloaded {
            workers: self.workers,
            queue: self.queue,
        }
    }

    /// A worker slot now, or a place in the tier's line, or a refusal when
    /// `queue` of the tier's jobs are already waiting, or when `owner`
    /// already holds its [`fair_share`] of them, or its /48 its
    /// [`fair_share_48`]. A waiter with a bcrypt
    /// input may instead have it run in another's batch.
    async fn turn(
        &self,
        tier: Tier,
        owner: Option<QueueOwner>,
        bcrypt: Option<BcryptInput>,
    ) -> Result<Turn, Overloaded> {
        let tier = index(tier);
        let waiting = {
            let mut state = lock(&self.scheduler);
            if state.free > 0 {
                state.free -= 1;
                state.start(tier);
                let slot = Slot {
                    scheduler: Arc::clone(&self.scheduler),
                    armed: true,
                };
                return Ok(Turn::Lead {
                    slot,
                    own: bcrypt,
                    riders: Vec::new(),
                });
            }
            // Waiters that gave up no longer hold a place.
            state.waiting[tier].retain(|waiter| !waiter.sender.is_closed());
            if state.waiting[tier].len() >= self.queue {
                return Err(self.overloaded());
            }
            if let Some(owner) = owner {
                let line = &state.waiting[tier];
                let held = line
                    .iter()
                    .filter(|w| w.owner.is_some_and(|o| o.key == owner.key))
                    .count();
                let held_by_48 = |prefix| {
                    line.iter()
                        .filter(|w| w.owner.is_some_and(|o| o.prefix_48 == Some(prefix)))
                        .count()
                };
                if held >= fair_share(self.queue)
                    || owner
                        .prefix_48
                        .is_some_and(|p| held_by_48(p) >= fair_share_48(self.queue))
                {
                    return Err(self.overloaded());
                }
            }
            if state.waiting[tier].is_empty() {
                // A tier that was idle starts level with the other: idle time
                // is not saved up as credit for a later burst.
                state.served[tier] = state.served[tier].max(state.served[1 - tier]);
            }
            let (sender, receiver) = oneshot::channel();
            state.waiting[tier].push_back(Waiter { owner, sender, bcrypt });
            receiver
        };
        // A sender is dropped unanswered only when the batch that took it
        // failed to run (the runtime shutting down): answer as a refusal.
        waiting.await.map_err(|_| self.overloaded())
    }

    /// Runs `work` on the blocking pool once a worker slot is free for `tier`,
    /// or refuses at once when `queue` jobs of that tier are already waiting.
    ///
    /// Dropping the returned future while it waits gives its place back; once
    /// the work has started, the slot stays taken until the work ends, because
    /// the CPU stays busy whether or not anyone awaits the result.
    pub async fn run<T, F>(&self, tier: Tier, work: F) -> Result<T, Overloaded>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.run_for(tier, None, work).await
    }

    /// [`Self::run`] for `owner`, who may hold at most its [`fair_share`]
    /// of the tier's queue.
    pub async fn run_for<T, F>(&self, tier: Tier, owner: Option<QueueOwner>, work: F) -> Result<T, Overloaded>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let slot = self.slot_alone(tier, owner).await?;
        self.on_threads(move || {
            let _slot = slot;
            work()
        })
        .await
    }

    /// Runs `job` behind the gate: a bcrypt job alone or in a batch of
    /// waiting ones of its tier and cost, anything else alone.
    pub async fn run_job<T: Send + 'static>(
        &self,
        tier: Tier,
        owner: Option<QueueOwner>,
        job: Job<T>,
    ) -> Result<Ran<Result<T, EngineError>>, Overloaded> {
        match job {
            Job::Alone(work) => {
                let slot = self.slot_alone(tier, owner).await?;
                self.on_threads(move || {
                    let (busy, started) = (slot.busy(), Instant::now());
                    let value = work();
                    Ran {
                        value,
                        started,
                        finished: Instant::now(),
                        batch: 1,
                        busy,
                    }
                })
                .await
            }
            Job::Bcrypt { input, finish } => {
                let ran = match self.turn(tier, owner, Some(input)).await? {
                    Turn::Rode(ran) => ran,
                    Turn::Lead { slot, own, riders } => {
                        let own = own.expect("a bcrypt waiter leads with its own input");
                        self.on_threads(move || run_batch(slot, own, riders)).await?
                    }
                };
                Ok(ran.map(|output| {
                    output
                        .map(|output| finish(&output))
                        .map_err(|e| EngineError::Algorithm(e.to_string()))
                }))
            }
        }
    }

    /// A worker slot for work that never joins a batch.
    async fn slot_alone(&self, tier: Tier, owner: Option<QueueOwner>) -> Result<Slot, Overloaded> {
        match self.turn(tier, owner, None).await? {
            Turn::Lead { slot, .. } => Ok(slot),
            Turn::Rode(_) => unreachable!("only a waiter with a bcrypt input rides in a batch"),
        }
    }

    /// Runs `work` on the hashing threads.
    async fn on_threads<T, F>(&self, work: F) -> Result<T, Overloaded>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let task = hashing_threads().spawn_blocking(work);
        match task.await {
            Ok(value) => Ok(value),
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            // Cancelled: the runtime is shutting down. Answer as a refusal.
            Err(_cancelled) => Err(self.overloaded()),
        }
    }
}

/// The leader's own input alone, or with its riders' as one batch; each
/// rider is sent its result, and the slot frees when all are done.
fn run_batch(slot: Slot, own: BcryptInput, riders: Vec<Waiter>) -> Ran<Result<Output, BcryptFailed>> {
    let (busy, started) = (slot.busy(), Instant::now());
    let ran = |value, batch| Ran {
        value,
        started,
        finished: Instant::now(),
        batch,
        busy,
    };
    if riders.is_empty() {
        return ran(batch::digest_one(&own), 1);
    }
    let inputs: Vec<&BcryptInput> = std::iter::once(&own)
        .chain(riders.iter().filter_map(|rider| rider.bcrypt.as_ref()))
        .collect();
    let size = inputs.len();
    let mut outputs: Vec<Result<Output, BcryptFailed>> = match batch::digest_many(&inputs) {
        Ok(outputs) => outputs.into_iter().map(Ok).collect(),
        Err(failed) => vec![Err(failed); size],
    };
    drop(inputs);
    let mine = outputs.remove(0);
    for (rider, output) in riders.into_iter().zip(outputs) {
        // A rider that gave up meanwhile no longer listens.
        let _ = rider.sender.send(Turn::Rode(ran(output, size)));
    }
    drop(slot);
    ran(mine, size)
}

#[cfg(test)]
mod tests;
