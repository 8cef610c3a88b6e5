//! The threads hashes run on, at idle priority.

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
pub(super) fn hashing_threads() -> &'static tokio::runtime::Handle {
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
