use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::threads::HASHING_POLICY;
use super::*;
use crate::batch::BatchPlan;
use crate::tier_file::{EMBEDDED, TierChoices};

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
    let weights = TierChoices::parse(EMBEDDED)
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
