//! The hashing gate: password hashes run on the blocking pool, at most
//! `workers` at once, with at most `queue` more waiting. A request that finds
//! the queue full is refused at once ([`Overloaded`], mapped to 503 with
//! `Retry-After`) instead of joining a queue that only grows: under a flood the
//! service sheds hashing work, and cheap requests never wait behind it.

use std::sync::Arc;

use tokio::sync::Semaphore;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("password hashing is at capacity: {workers} running and {queue} waiting")]
pub struct Overloaded {
    pub workers: usize,
    pub queue: usize,
}

#[derive(Debug, Clone)]
pub struct HashingGate {
    /// Permits for running and waiting together: `workers + queue`.
    admitted: Arc<Semaphore>,
    /// Permits for running.
    running: Arc<Semaphore>,
    workers: usize,
    queue: usize,
}

/// The default worker count: leave one core to everything else, but keep one.
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .saturating_sub(1)
        .max(1)
}

pub const DEFAULT_QUEUE: usize = 64;

impl HashingGate {
    /// `workers` is clamped to at least 1.
    pub fn new(workers: usize, queue: usize) -> Self {
        let workers = workers.max(1);
        HashingGate {
            admitted: Arc::new(Semaphore::new(workers + queue)),
            running: Arc::new(Semaphore::new(workers)),
            workers,
            queue,
        }
    }

    pub fn workers(&self) -> usize {
        self.workers
    }

    pub fn queue(&self) -> usize {
        self.queue
    }

    /// Runs `work` on the blocking pool once a worker slot is free, or refuses
    /// at once when `workers + queue` jobs are already admitted.
    ///
    /// Dropping the returned future while it waits gives its place back; once
    /// the work has started, the slot stays taken until the work ends, because
    /// the CPU stays busy whether or not anyone awaits the result.
    pub async fn run<T, F>(&self, work: F) -> Result<T, Overloaded>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let overloaded = Overloaded {
            workers: self.workers,
            queue: self.queue,
        };
        let admitted = Arc::clone(&self.admitted).try_acquire_owned().map_err(|_| overloaded)?;
        let running = Arc::clone(&self.running)
            .acquire_owned()
            .await
            .expect("the gate never closes its semaphores");
        let task = tokio::task::spawn_blocking(move || {
            let _slots = (admitted, running);
            work()
        });
        match task.await {
            Ok(value) => Ok(value),
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            // Cancelled: the runtime is shutting down. Answer as a refusal.
            Err(_cancelled) => Err(overloaded),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn default_workers_is_at_least_one() {
        assert!(default_workers() >= 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn the_gate_never_runs_more_than_its_workers_at_once() {
        let gate = HashingGate::new(2, 100);
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let jobs = (0..24).map(|_| {
            let (gate, running, peak) = (gate.clone(), running.clone(), peak.clone());
            tokio::spawn(async move {
                gate.run(move || {
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
                gate.run(move || rx.lock().unwrap().recv().unwrap()).await
            }));
        }
        // Wait until all three are admitted.
        while gate.admitted.available_permits() > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let refused = gate.run(|| ()).await;
        assert_eq!(refused, Err(Overloaded { workers: 1, queue: 2 }));

        for _ in 0..3 {
            release_tx.send(()).unwrap();
        }
        for job in held {
            assert!(job.await.unwrap().is_ok());
        }
        assert_eq!(gate.run(|| 7).await, Ok(7), "capacity comes back when work ends");
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_returns_its_place_in_the_queue() {
        let gate = HashingGate::new(1, 1);
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let blocker = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.run(move || rx.recv().unwrap()).await })
        };
        while gate.running.available_permits() > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // This waiter queues, then is dropped by its timeout.
        let waited = tokio::time::timeout(Duration::from_millis(20), gate.run(|| ())).await;
        assert!(waited.is_err());
        assert_eq!(gate.admitted.available_permits(), 1, "the queue slot came back");
        tx.send(()).unwrap();
        assert!(blocker.await.unwrap().is_ok());
    }

    async fn futures_join_all<T>(handles: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
        let mut out = Vec::new();
        for handle in handles.collect::<Vec<_>>() {
            out.push(handle.await.unwrap());
        }
        out
    }
}
