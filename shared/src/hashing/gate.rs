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

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, Once, OnceLock};
use std::time::Instant;

use tokio::sync::oneshot;

use super::batch::{self, BatchMeasurement, BatchPlan, BcryptFailed, BcryptInput, Output};
use super::engine::{HashError as EngineError, Job};
use super::policy::{Algorithm, Tier};

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

/// Who asks for a hash, for the per-client share of a queue: the client
/// address key and, for an IPv6 client, its /48, hashed (the gate needs
/// only to tell clients apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueueOwner {
    key: u64,
    prefix_48: Option<u64>,
}

impl QueueOwner {
    pub fn of(client_key: &str) -> Self {
        use std::hash::{BuildHasher, BuildHasherDefault};
        // A fixed hasher: the same client is the same owner in every request.
        let hash = |s: &str| BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(s);
        QueueOwner {
            key: hash(client_key),
            prefix_48: prefix_48(client_key).map(|net| hash(&net.to_string())),
        }
    }
}

/// The /48 of an IPv6 /64 client key, as `app::throttle` counts it; `None`
/// for an IPv4 key.
fn prefix_48(client_key: &str) -> Option<ipnet::Ipv6Net> {
    let net: ipnet::Ipv6Net = client_key.parse().ok()?;
    (net.prefix_len() == 64).then(|| ipnet::Ipv6Net::new(net.addr(), 48).ok().map(|n| n.trunc()))?
}

/// How many places of a tier's `queue` one owner may hold: a quarter, at
/// least one, and never all of a queue of two or more.
pub fn fair_share(queue: usize) -> usize {
    (queue / 4).max(1).min(queue.saturating_sub(1).max(1))
}

/// How many places the /64s of one /48 may hold together: twice
/// [`fair_share`], and never all of a queue of two or more (one free /48
/// must not buy 65,536 shares).
fn fair_share_48(queue: usize) -> usize {
    (2 * fair_share(queue)).min(queue.saturating_sub(1).max(1))
}

/// Whether waiting bcrypt hashes of one tier and cost run together
/// (docs/DESIGN.md, Batch hashing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batching {
    /// Every hash alone.
    Off,
    /// By the plan measured once per process on this CPU
    /// ([`BatchPlan::measure`], started in the background; hashes run
    /// alone until it is known).
    Measured,
    /// By this plan.
    Plan(BatchPlan),
}

/// The process's measured plan, once known.
static MEASURED: OnceLock<BatchMeasurement> = OnceLock::new();

/// What [`Batching::Measured`] measured, once it has.
pub fn measured_plan() -> Option<BatchMeasurement> {
    MEASURED.get().copied()
}

/// A request in a tier's line, with its bcrypt input when it has one (the
/// input another waiter's batch may take).
#[derive(Debug)]
struct Waiter {
    owner: Option<QueueOwner>,
    sender: oneshot::Sender<Turn>,
    bcrypt: Option<BcryptInput>,
}

/// What a waiter hears when its turn comes.
#[derive(Debug)]
enum Turn {
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
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Ran<U> {
        Ran {
            value: f(self.value),
            started: self.started,
            finished: self.finished,
            batch: self.batch,
            busy: self.busy,
        }
    }
}

fn index(tier: Tier) -> usize {
    match tier {
        Tier::Member => 0,
        Tier::Guest => 1,
    }
}

#[derive(Debug)]
struct Scheduler {
    workers: usize,
    /// Idle workers.
    free: usize,
    /// Per tier, the waiters in arrival order.
    waiting: [VecDeque<Waiter>; 2],
    /// Per tier, the estimated hashing time started so far.
    served: [u64; 2],
    /// Per tier, the estimated time of one hash.
    cost: [u64; 2],
    /// Per tier, its share of the time when both wait.
    weight: [u64; 2],
    batching: Batching,
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

    fn start(&mut self, tier: usize) {
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

fn lock(scheduler: &Mutex<Scheduler>) -> MutexGuard<'_, Scheduler> {
    // The scheduler's state stays consistent at every await-free step.
    scheduler.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running worker slot: when dropped it goes to the next waiter (by fair
/// share), or back to the idle workers.
#[derive(Debug)]
struct Slot {
    scheduler: Arc<Mutex<Scheduler>>,
    armed: bool,
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
            static STARTED: Once = Once::new();
            STARTED.call_once(|| {
                hashing_threads().spawn_blocking(|| {
                    let measured = BatchPlan::measure();
                    tracing::info!(
                        target: super::timing::TARGET,
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

impl Slot {
    /// Workers busy now, this one included.
    fn busy(&self) -> usize {
        let state = lock(&self.scheduler);
        state.workers - state.free
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

/// The scheduling policy of the threads hashes run on: SCHED_IDLE, which
/// runs only when no other thread of the machine wants the core and is
/// preempted the moment one wakes. A read arriving while a hash runs gets the
/// core at once instead of waiting out the hash's time slice (nice 10 was not
/// enough: on this kernel the read still waited up to a slice, 3-4 ms at P99);
/// with nothing else to run, a hash runs at full speed. The price, stated in
/// docs/DESIGN.md: while other work keeps every core busy, hashing waits, and
/// its queue sheds (503) instead of taking CPU from requests that do not hash.
/// Measured in docs/benchmarks.md (the read P99 under report 1's mix).
pub(super) const HASHING_POLICY: thread_priority::ThreadSchedulePolicy =
    thread_priority::ThreadSchedulePolicy::Normal(thread_priority::NormalThreadSchedulePolicy::Idle);

/// The threads hashes run on: a blocking pool of its own whose threads take
/// [`HASHING_POLICY`] once, when they start (an unprivileged thread cannot
/// leave it again, so hashing cannot share threads with anything else). The
/// gate bounds how many run at once.
fn hashing_threads() -> &'static tokio::runtime::Handle {
    static THREADS: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    THREADS
        .get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .thread_name("hashing")
                .on_thread_start(|| {
                    // Best effort: where the kernel refuses, hashes run at the
                    // process's priority.
                    let _ = thread_priority::set_thread_priority_and_policy(
                        thread_priority::thread_native_id(),
                        thread_priority::ThreadPriority::Min,
                        HASHING_POLICY,
                    );
                })
                .build()
                .expect("the hashing threads' runtime builds")
        })
        .handle()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn the_gate_never_runs_more_than_its_workers_at_once() {
        let gate = HashingGate::new(2, 100);
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let jobs = (0..24).map(|_| {
            let (gate, running, peak) = (gate.clone(), running.clone(), peak.clone());
            tokio::spawn(async move {
                gate.run(Tier::Guest, move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(5));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
                .await
            })
        });
        let results: Vec<_> = futures_join_all(jobs).await;
        assert!(results.iter().all(Result::is_ok), "queue of 100 holds 24 jobs");
        assert_eq!(peak.load(Ordering::SeqCst), 2, "two workers, and both were used");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_full_queue_is_refused_at_once_and_frees_up_afterwards() {
        let gate = HashingGate::new(1, 2);
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
        // One job running and blocked, two waiting: the gate is full.
        let mut held = Vec::new();
        for _ in 0..3 {
            let (gate, rx) = (gate.clone(), release_rx.clone());
            held.push(tokio::spawn(async move {
                gate.run(Tier::Member, move || rx.lock().unwrap().recv().unwrap()).await
            }));
        }
        // Wait until one runs and two wait.
        while lock(&gate.scheduler).waiting[0].len() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let refused = gate.run(Tier::Member, || ()).await;
        assert_eq!(refused, Err(Overloaded { workers: 1, queue: 2 }));
        // Each tier has its own line: a member flood does not refuse guests.
        let guest = gate.clone();
        let queued_guest = tokio::spawn(async move { guest.run(Tier::Guest, || 5).await });

        for _ in 0..3 {
            release_tx.send(()).unwrap();
        }
        for job in held {
            assert!(job.await.unwrap().is_ok());
        }
        assert_eq!(queued_guest.await.unwrap(), Ok(5));
        assert_eq!(
            gate.run(Tier::Member, || 7).await,
            Ok(7),
            "capacity comes back when work ends"
        );
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_returns_its_place_in_the_queue() {
        let gate = HashingGate::new(1, 1);
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let blocker = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.run(Tier::Guest, move || rx.recv().unwrap()).await })
        };
        while lock(&gate.scheduler).free > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // This waiter queues, then is dropped by its timeout.
        let waited = tokio::time::timeout(Duration::from_millis(20), gate.run(Tier::Guest, || ())).await;
        assert!(waited.is_err());
        // The queue holds one: the next waiter takes the place given up.
        let next = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.run(Tier::Guest, || 4).await })
        };
        while !lock(&gate.scheduler).waiting[1].iter().any(|w| !w.sender.is_closed()) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tx.send(()).unwrap();
        assert_eq!(
            next.await.unwrap(),
            Ok(4),
            "the place the first waiter gave up was taken"
        );
        assert!(blocker.await.unwrap().is_ok());
        // The worker the abandoned waiter would have had is free again.
        assert_eq!(gate.run(Tier::Guest, || 3).await, Ok(3));
        assert_eq!(lock(&gate.scheduler).free, 1);
    }

    #[test]
    fn a_client_may_hold_a_quarter_of_a_queue_and_never_all_of_it() {
        assert_eq!(fair_share(64), 16);
        assert_eq!(fair_share(8), 2);
        assert_eq!(fair_share(3), 1);
        assert_eq!(fair_share(2), 1);
        assert_eq!(fair_share(1), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_client_holds_at_most_its_share_of_the_queue_and_others_still_get_in() {
        let gate = HashingGate::new(1, 8);
        let (release, blocked) = std::sync::mpsc::channel::<()>();
        let blocked = Arc::new(std::sync::Mutex::new(blocked));
        let flooder = Some(QueueOwner::of("198.51.100.7"));
        let run = |owner: Option<QueueOwner>| {
            let (gate, blocked) = (gate.clone(), blocked.clone());
            tokio::spawn(async move {
                gate.run_for(Tier::Member, owner, move || blocked.lock().unwrap().recv().unwrap())
                    .await
            })
        };
        let mut jobs = vec![run(flooder)];
        while lock(&gate.scheduler).free > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The flooder queues its two places (a quarter of 8); a third is refused.
        for _ in 0..2 {
            jobs.push(run(flooder));
        }
        while lock(&gate.scheduler).waiting[0].len() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let refused = gate.run_for(Tier::Member, flooder, || ()).await;
        assert_eq!(refused, Err(Overloaded { workers: 1, queue: 8 }));
        // Another client still queues, and so does a request without an owner.
        jobs.push(run(Some(QueueOwner::of("203.0.113.9"))));
        jobs.push(run(None));
        while lock(&gate.scheduler).waiting[0].len() < 4 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        for _ in 0..jobs.len() {
            release.send(()).unwrap();
        }
        for job in jobs {
            assert!(job.await.unwrap().is_ok());
        }
        assert_eq!(
            gate.run_for(Tier::Member, flooder, || 1).await,
            Ok(1),
            "its places came back"
        );
    }

    #[test]
    fn a_48_may_hold_twice_a_clients_share_and_never_all_of_a_queue() {
        assert_eq!(fair_share_48(64), 32);
        assert_eq!(fair_share_48(8), 4);
        assert_eq!(fair_share_48(3), 2);
        assert_eq!(fair_share_48(2), 1);
        assert_eq!(fair_share_48(1), 1);
        let v6 = QueueOwner::of("2001:db8:1:2::/64");
        assert_eq!(v6.prefix_48, QueueOwner::of("2001:db8:1:ffff::/64").prefix_48);
        assert_ne!(v6.prefix_48, QueueOwner::of("2001:db8:2:2::/64").prefix_48);
        assert_eq!(QueueOwner::of("203.0.113.9").prefix_48, None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_64s_of_one_48_together_hold_at_most_twice_a_share_and_others_still_get_in() {
        let gate = HashingGate::new(1, 8);
        let (release, blocked) = std::sync::mpsc::channel::<()>();
        let blocked = Arc::new(std::sync::Mutex::new(blocked));
        let run = |owner: QueueOwner| {
            let (gate, blocked) = (gate.clone(), blocked.clone());
            tokio::spawn(async move {
                gate.run_for(Tier::Member, Some(owner), move || {
                    blocked.lock().unwrap().recv().unwrap()
                })
                .await
            })
        };
        let mut jobs = vec![run(QueueOwner::of("192.0.2.1"))];
        while lock(&gate.scheduler).free > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // Eight /64s of one /48, each under its own share of 2, would take
        // all 8 places; together they get 4 (twice a share), then 503.
        let mut queued = 0;
        let mut refused = 0;
        for net in 0..8 {
            let owner = QueueOwner::of(&format!("2001:db8:1:{net}::/64"));
            for _ in 0..2 {
                let waiting = lock(&gate.scheduler).waiting[0].len();
                let job = run(owner);
                // A refusal answers at once; a place shows in the line.
                loop {
                    if job.is_finished() {
                        assert_eq!(job.await.unwrap(), Err(Overloaded { workers: 1, queue: 8 }));
                        refused += 1;
                        break;
                    }
                    if lock(&gate.scheduler).waiting[0].len() > waiting {
                        jobs.push(job);
                        queued += 1;
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        }
        println!("8 /64s of one /48, 2 tries each, queue of 8: {queued} queued, {refused} refused 503");
        assert_eq!((queued, refused), (4, 12));
        // Another /48 and an IPv4 client still find room: the line is not full.
        for other in ["2001:db8:2:0::/64", "203.0.113.9"] {
            let waiting = lock(&gate.scheduler).waiting[0].len();
            jobs.push(run(QueueOwner::of(other)));
            while lock(&gate.scheduler).waiting[0].len() == waiting {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        assert_eq!(lock(&gate.scheduler).waiting[0].len(), 6);
        for _ in 0..jobs.len() {
            release.send(()).unwrap();
        }
        for job in jobs {
            assert!(job.await.unwrap().is_ok());
        }
    }

    /// One worker, held busy while `members` member jobs and then `guests`
    /// guest jobs queue (member hashes estimated 8x a guest hash); returns
    /// the order in which the queued jobs ran.
    async fn run_order(members: usize, guests: usize) -> Vec<Tier> {
        run_order_weighted(members, guests, [1, 1]).await
    }

    async fn run_order_weighted(members: usize, guests: usize, weights: [u32; 2]) -> Vec<Tier> {
        let gate = HashingGate::with_costs(1, 1000, [8, 1]).weighted(weights);
        let (release, blocked) = std::sync::mpsc::channel::<()>();
        let blocker = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.run(Tier::Member, move || blocked.recv().unwrap()).await })
        };
        while lock(&gate.scheduler).free > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut jobs = Vec::new();
        let tiers = std::iter::repeat_n(Tier::Member, members).chain(std::iter::repeat_n(Tier::Guest, guests));
        for (queued, tier) in tiers.enumerate() {
            let (queued_gate, order) = (gate.clone(), order.clone());
            jobs.push(tokio::spawn(async move {
                queued_gate.run(tier, move || order.lock().unwrap().push(tier)).await
            }));
            // Each job is in line before the next one arrives.
            while lock(&gate.scheduler).waiting.iter().map(VecDeque::len).sum::<usize>() <= queued {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        release.send(()).unwrap();
        blocker.await.unwrap().unwrap();
        for job in jobs {
            job.await.unwrap().unwrap();
        }
        Arc::try_unwrap(order).unwrap().into_inner().unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cheap_guest_hashes_do_not_wait_behind_member_hashes_queued_before_them() {
        let order = run_order(4, 8).await;
        let second_member = order
            .iter()
            .enumerate()
            .filter(|(_, t)| **t == Tier::Member)
            .nth(1)
            .unwrap()
            .0;
        let last_guest = order.iter().rposition(|t| *t == Tier::Guest).unwrap();
        assert!(
            last_guest < second_member,
            "all 8 guests ran within one member hash's time: {order:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flood_of_cheap_guest_hashes_still_leaves_members_their_share() {
        let order = run_order(10, 60).await;
        let first_36 = &order[..36];
        let members = first_36.iter().filter(|t| **t == Tier::Member).count();
        // Equal time: 8 guests per member, so 4 of the first 36 are members.
        assert!((3..=5).contains(&members), "{members} members in {first_36:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn weights_give_each_tier_its_share_of_the_time_when_both_wait() {
        // 3:1 for members: 8 units a member hash, 1 a guest hash, so the
        // first 36 runs hold about 10 members (3/4 of the time), not 4.
        let order = run_order_weighted(20, 60, [3, 1]).await;
        let members = order[..36].iter().filter(|t| **t == Tier::Member).count();
        assert!((9..=11).contains(&members), "{members} members in {:?}", &order[..36]);
        // 1:3 for guests: members get a quarter, about 1.4 in 36.
        let order = run_order_weighted(20, 60, [1, 3]).await;
        let members = order[..36].iter().filter(|t| **t == Tier::Member).count();
        assert!((1..=2).contains(&members), "{members} members in {:?}", &order[..36]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn by_default_members_get_two_thirds_of_the_hashing_time_when_both_tiers_queue() {
        // The committed tier file's weights, chosen from report 1's mix under
        // overload (docs/benchmarks.md): 2:1 for members. With 8 units a
        // member hash and 1 a guest hash, about 7 of the first 36 runs are
        // members; the even 1:1 share would give 4.
        let weights = super::super::tier_file::TierChoices::parse(super::super::tier_file::EMBEDDED)
            .expect("the committed tier file parses")
            .weights();
        assert_eq!(weights, [2, 1]);
        let order = run_order_weighted(20, 60, weights).await;
        let members = order[..36].iter().filter(|t| **t == Tier::Member).count();
        assert!((6..=8).contains(&members), "{members} members in {:?}", &order[..36]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn hashes_run_only_when_the_threads_that_answer_requests_leave_the_core_free() {
        let policy = || thread_priority::thread_schedule_policy().expect("the thread's policy");
        let request_thread = policy();
        assert_ne!(request_thread, HASHING_POLICY);
        let gate = HashingGate::new(1, 4);
        assert_eq!(gate.run(Tier::Guest, policy).await.unwrap(), HASHING_POLICY);
        // The policy stays on the hashing threads.
        assert_eq!(policy(), request_thread);
        assert_eq!(tokio::task::spawn_blocking(policy).await.unwrap(), request_thread);
    }

    fn input(cost: u32, password: &str) -> BcryptInput {
        BcryptInput::with_salt(cost, [7; 16], password.as_bytes().to_vec())
    }

    /// A bcrypt job whose answer is its output and the batch it ran in.
    fn queue_bcrypt(gate: &HashingGate, cost: u32, password: &str) -> tokio::task::JoinHandle<(Output, usize, Output)> {
        let (gate, alone) = (gate.clone(), batch::digest_one(&input(cost, password)).unwrap());
        let job = Job::Bcrypt {
            input: input(cost, password),
            finish: Box::new(|output: &Output| output.clone()),
        };
        tokio::spawn(async move {
            let ran = gate.run_job(Tier::Guest, None, job).await.unwrap();
            (ran.value.unwrap(), ran.batch, alone)
        })
    }

    /// One worker, held busy until the returned sender sends.
    async fn busy_gate(plan: BatchPlan) -> (HashingGate, std::sync::mpsc::Sender<()>, tokio::task::JoinHandle<()>) {
        let gate = HashingGate::new(1, 64).batching(Batching::Plan(plan));
        let (release, blocked) = std::sync::mpsc::channel::<()>();
        let blocker = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.run(Tier::Guest, move || blocked.recv().unwrap()).await.unwrap() })
        };
        while lock(&gate.scheduler).free > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        (gate, release, blocker)
    }

    /// Waits for `n` guests still listening: a place given up stays in the
    /// line until the next arrival clears it, and must not count.
    async fn until_waiting(gate: &HashingGate, n: usize) {
        while lock(&gate.scheduler).waiting[1]
            .iter()
            .filter(|w| !w.sender.is_closed())
            .count()
            < n
        {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    const EIGHT_LANES: BatchPlan = BatchPlan {
        lanes: 8,
        min_batch: 2,
        backend: "test",
    };

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiting_bcrypt_hashes_of_one_cost_run_as_one_batch_and_each_gets_its_own_output() {
        let (gate, release, blocker) = busy_gate(EIGHT_LANES).await;
        let mut same = Vec::new();
        for i in 0..5 {
            same.push(queue_bcrypt(&gate, 4, &format!("password {i}")));
            until_waiting(&gate, i + 1).await;
        }
        let other_cost = queue_bcrypt(&gate, 5, "another cost");
        until_waiting(&gate, 6).await;
        release.send(()).unwrap();
        blocker.await.unwrap();
        for job in same {
            let (output, batch, alone) = job.await.unwrap();
            assert_eq!(batch, 5, "the five cost-4 hashes ran together");
            assert_eq!(output, alone, "each got its own output, as if alone");
        }
        let (output, batch, alone) = other_cost.await.unwrap();
        assert_eq!((batch, output), (1, alone), "another cost never joins the batch");
        assert_eq!(lock(&gate.scheduler).free, 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_takes_at_most_the_lanes_and_the_rest_wait_their_turn_in_order() {
        let plan = BatchPlan {
            lanes: 4,
            min_batch: 2,
            backend: "test",
        };
        let (gate, release, blocker) = busy_gate(plan).await;
        let mut jobs = Vec::new();
        for i in 0..6 {
            jobs.push(queue_bcrypt(&gate, 4, &format!("password {i}")));
            until_waiting(&gate, i + 1).await;
        }
        release.send(()).unwrap();
        blocker.await.unwrap();
        let mut batches = Vec::new();
        for job in jobs {
            let (output, batch, alone) = job.await.unwrap();
            assert_eq!(output, alone);
            batches.push(batch);
        }
        assert_eq!(batches, [4, 4, 4, 4, 2, 2], "four lanes, then the two left");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn fewer_waiting_hashes_than_pay_for_a_batch_run_one_by_one() {
        let plan = BatchPlan {
            lanes: 16,
            min_batch: 4,
            backend: "test",
        };
        let (gate, release, blocker) = busy_gate(plan).await;
        let mut jobs = Vec::new();
        for i in 0..3 {
            jobs.push(queue_bcrypt(&gate, 4, &format!("password {i}")));
            until_waiting(&gate, i + 1).await;
        }
        release.send(()).unwrap();
        blocker.await.unwrap();
        for job in jobs {
            assert_eq!(
                job.await.unwrap().1,
                1,
                "three waiting: a batch would cost more than three alone"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiter_that_gave_up_is_left_out_of_the_batch() {
        let (gate, release, blocker) = busy_gate(EIGHT_LANES).await;
        let kept = queue_bcrypt(&gate, 4, "kept");
        until_waiting(&gate, 1).await;
        let given_up = {
            let gate = gate.clone();
            let job = Job::Bcrypt {
                input: input(4, "gives up"),
                finish: Box::new(|output: &Output| output.clone()),
            };
            tokio::time::timeout(Duration::from_millis(20), async move {
                gate.run_job(Tier::Guest, None, job).await
            })
            .await
        };
        assert!(given_up.is_err());
        let also_kept = queue_bcrypt(&gate, 4, "also kept");
        // Joining the line clears the place given up: two wait.
        until_waiting(&gate, 2).await;
        release.send(()).unwrap();
        blocker.await.unwrap();
        assert_eq!(kept.await.unwrap().1, 2);
        assert_eq!(
            also_kept.await.unwrap().1,
            2,
            "the two that still wait, not the one that left"
        );
    }

    #[tokio::test]
    async fn a_lone_hash_runs_alone_on_a_free_worker_whatever_the_plan() {
        let gate = HashingGate::new(1, 4).batching(Batching::Plan(EIGHT_LANES));
        let (output, batch, alone) = queue_bcrypt(&gate, 4, "alone").await.unwrap();
        assert_eq!((batch, output), (1, alone));
    }

    async fn futures_join_all<T>(handles: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
        let mut out = Vec::new();
        for handle in handles.collect::<Vec<_>>() {
            out.push(handle.await.unwrap());
        }
        out
    }
}
