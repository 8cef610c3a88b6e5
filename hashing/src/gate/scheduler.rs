//! Who runs next: the tiers' lines, the time each tier has been served, the
//! worker slots, and which waiting bcrypt inputs ride in a leader's batch.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, Once, OnceLock};
use std::time::Instant;

use tokio::sync::oneshot;

use super::owner::QueueOwner;
use super::threads::hashing_threads;
use crate::batch::{BatchMeasurement, BatchPlan, BcryptFailed, BcryptInput, Output};
use crate::config::Batching;
use crate::policy::Tier;

/// The process's measured plan, once known.
static MEASURED: OnceLock<BatchMeasurement> = OnceLock::new();

/// What [`Batching::Measured`] measured, once it has.
pub fn measured_plan() -> Option<BatchMeasurement> {
    MEASURED.get().copied()
}

/// Starts the process's one measurement of [`Batching::Measured`]'s plan,
/// in the background, once.
pub(super) fn measure_once() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        hashing_threads().spawn_blocking(|| {
            let measured = BatchPlan::measure();
            tracing::info!(
                target: crate::timing::TARGET,
                backend = measured.plan.backend,
                lanes = measured.plan.lanes,
                min_batch = measured.plan.min_batch,
                single_ms = measured.single_ms,
                batch_ms = measured.batch_ms,
                "bcrypt batch plan measured"
            );
            let _ = MEASURED.set(measured);
        });
    });
}

/// A request in a tier's line, with its bcrypt input when it has one (the
/// input another waiter's batch may take).
#[derive(Debug)]
pub(super) struct Waiter {
    pub(super) owner: Option<QueueOwner>,
    pub(super) sender: oneshot::Sender<Turn>,
    pub(super) bcrypt: Option<BcryptInput>,
}

/// What a waiter hears when its turn comes.
#[derive(Debug)]
pub(super) enum Turn {
    /// Run now, holding the slot: its own input (if it queued one) together
    /// with the riders' inputs, whose results it sends them.
    Lead {
        slot: Slot,
        own: Option<BcryptInput>,
        riders: Vec<Waiter>,
    },
    /// Its input ran in another waiter's batch.
    Rode(Ran<Result<Output, BcryptFailed>>),
}

/// Work that ran behind the gate, and how.
#[derive(Debug)]
pub struct Ran<T> {
    pub value: T,
    pub started: Instant,
    pub finished: Instant,
    /// Hashes that ran together, this one included (1: alone).
    pub batch: usize,
    /// Workers busy when it started, its own included.
    pub busy: usize,
}

impl<T> Ran<T> {
    pub(super) fn map<U>(self, f: impl FnOnce(T) -> U) -> Ran<U> {
        Ran {
            value: f(self.value),
            started: self.started,
            finished: self.finished,
            batch: self.batch,
            busy: self.busy,
        }
    }
}

pub(super) fn index(tier: Tier) -> usize {
    match tier {
        Tier::Member => 0,
        Tier::Guest => 1,
    }
}

#[derive(Debug)]
pub(super) struct Scheduler {
    pub(super) workers: usize,
    /// Idle workers.
    pub(super) free: usize,
    /// Per tier, the waiters in arrival order.
    pub(super) waiting: [VecDeque<Waiter>; 2],
    /// Per tier, the estimated hashing time started so far.
    pub(super) served: [u64; 2],
    /// Per tier, the estimated time of one hash.
    pub(super) cost: [u64; 2],
    /// Per tier, its share of the time when both wait.
    pub(super) weight: [u64; 2],
    pub(super) batching: Batching,
}

impl Scheduler {
    /// The waiting tier that has been served less (the guest tier on a tie).
    fn next_tier(&self) -> Option<usize> {
        let (member, guest) = (index(Tier::Member), index(Tier::Guest));
        match (self.waiting[member].is_empty(), self.waiting[guest].is_empty()) {
            (true, true) => None,
            (false, true) => Some(member),
            (true, false) => Some(guest),
            (false, false) => Some(if self.served[member] < self.served[guest] {
                member
            } else {
                guest
            }),
        }
    }

    pub(super) fn start(&mut self, tier: usize) {
        // Time counted against the weight: a tier of weight 3 is charged a
        // third as much, so it gets three times the turns' time.
        self.served[tier] += self.cost[tier] * 1_000 / self.weight[tier];
    }

    fn plan(&self) -> BatchPlan {
        match self.batching {
            Batching::Off => BatchPlan::OFF,
            Batching::Plan(plan) => plan,
            Batching::Measured => measured_plan().map_or(BatchPlan::OFF, |m| m.plan),
        }
    }

    /// The waiters of `tier` whose bcrypt inputs of `cost` join a leader's
    /// batch, in arrival order, taken out of the line: as many as the plan
    /// says for how many such inputs wait, none when a batch would not pay.
    /// The others keep their places.
    fn riders(&mut self, tier: usize, cost: u32) -> Vec<Waiter> {
        let plan = self.plan();
        if !plan.batches() {
            return Vec::new();
        }
        let joins = |w: &Waiter| !w.sender.is_closed() && w.bcrypt.as_ref().is_some_and(|input| input.cost() == cost);
        let alike = 1 + self.waiting[tier].iter().filter(|w| joins(w)).count();
        let take = plan.size(alike) - 1;
        if take == 0 {
            return Vec::new();
        }
        let mut riders = Vec::with_capacity(take);
        let mut kept = VecDeque::with_capacity(self.waiting[tier].len());
        for waiter in self.waiting[tier].drain(..) {
            if riders.len() < take && joins(&waiter) {
                riders.push(waiter);
            } else {
                kept.push_back(waiter);
            }
        }
        self.waiting[tier] = kept;
        riders
    }
}

pub(super) fn lock(scheduler: &Mutex<Scheduler>) -> MutexGuard<'_, Scheduler> {
    // The scheduler's state stays consistent at every await-free step.
    scheduler.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running worker slot: when dropped it goes to the next waiter (by fair
/// share), or back to the idle workers.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) scheduler: Arc<Mutex<Scheduler>>,
    pub(super) armed: bool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut state = lock(&self.scheduler);
        while let Some(tier) = state.next_tier() {
            let mut leader = state.waiting[tier].pop_front().expect("next_tier saw a waiter");
            if leader.sender.is_closed() {
                continue;
            }
            let riders = match &leader.bcrypt {
                Some(input) => state.riders(tier, input.cost()),
                None => Vec::new(),
            };
            let hashes = 1 + riders.len();
            let slot = Slot {
                scheduler: Arc::clone(&self.scheduler),
                armed: true,
            };
            let own = leader.bcrypt.take();
            match leader.sender.send(Turn::Lead { slot, own, riders }) {
                Ok(()) => {
                    // Each hash of a batch is charged as if alone: the
                    // weights share hashes' time as before.
                    for _ in 0..hashes {
                        state.start(tier);
                    }
                    return;
                }
                // That waiter gave up just now: disarm its slot (we hold the
                // lock), give its riders their places back, try the next.
                Err(turn) => {
                    if let Turn::Lead { mut slot, riders, .. } = turn {
                        slot.armed = false;
                        for rider in riders.into_iter().rev() {
                            state.waiting[tier].push_front(rider);
                        }
                    }
                }
            }
        }
        state.free += 1;
    }
}

impl Slot {
    /// Workers busy now, this one included.
    pub(super) fn busy(&self) -> usize {
        let state = lock(&self.scheduler);
        state.workers - state.free
    }
}
