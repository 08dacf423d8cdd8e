//! The MPI transport's self-test, run under `mpirun` by `tests/mpirun.rs`.
//!
//! `fencer-mpi-selftest [--time]`: every rank runs a script of collective calls over MPI
//! and again over fencer-explicit's in-process `Threads` transport (as many threads as
//! there are ranks), checks the results against the expected ones, and checks that both
//! transports gave this rank the same. With `--time`, rank 0 then prints how long one
//! exchange takes. Without an MPI launcher it checks that MPI stays uninitialised.
//!
//! Exit paths, for the test of what `mpirun` makes of them: `no-finish` (return from
//! `main` without `fencer_mpi::finish`), `exit CODE` (`fencer_mpi::exit(CODE)` on every
//! rank), `panic` (rank 1 panics while the others wait for it in an exchange).

use std::hint::black_box;
use std::time::{Duration, Instant};

use fencer_explicit::dist::{Threads, Transport};
use fencer_mpi::Mpi;
use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(mpi) = fencer_mpi::init().expect("MPI initialises") else {
        assert!(!fencer_mpi::launched());
        assert!(
            !mpi::environment::is_initialized(),
            "MPI initialised without a launcher"
        );
        println!("not launched: MPI left uninitialised");
        return;
    };
    assert!(fencer_mpi::launched());
    let (me, n) = (mpi.rank(), mpi.size());
    match args.first().map(String::as_str) {
        Some("no-finish") => {
            mpi.exchange(vec![vec![1]; n]);
            return;
        }
        Some("exit") => {
            mpi.exchange(vec![vec![1]; n]);
            let code = args.get(1).map_or(0, |c| c.parse().expect("an exit code"));
            fencer_mpi::exit(code);
        }
        Some("panic") => {
            if me == 1 {
                panic!("rank 1 gives up");
            }
            mpi.exchange(vec![vec![1]; n]);
            unreachable!("rank 1 never sends");
        }
        _ => {}
    }

    // Over MPI, from a thread other than the one that initialised it (the engine may do
    // that: the transport is Send + Sync and MPI runs SERIALIZED).
    let over_mpi = std::thread::scope(|s| {
        s.spawn(|| script(&mpi, &|bytes| mpi.set_round_limit(bytes)))
            .join()
            .expect("the script passes over MPI")
    });
    let over_threads = std::thread::scope(|s| {
        let ranks: Vec<_> = Threads::ranks(n)
            .into_iter()
            .map(|t| s.spawn(move || script(&t, &|_| {})))
            .collect();
        ranks
            .into_iter()
            .map(|h| h.join().expect("the script passes over Threads"))
            .collect::<Vec<_>>()
    })
    .swap_remove(me);
    assert_eq!(
        over_mpi, over_threads,
        "MPI and Threads disagree on rank {me}"
    );

    if args.iter().any(|a| a == "--time") {
        time(&mpi);
    }
    println!(
        "rank {me} of {n}: {} results, the same over MPI and Threads",
        over_mpi.len()
    );
    fencer_mpi::finish();
}

/// Bytes no two (sender, receiver, tag) share, so a misplaced piece shows.
fn pattern(from: usize, to: usize, tag: u64, len: usize) -> Vec<u8> {
    let seed = (from as u64) << 40 ^ (to as u64) << 20 ^ tag << 8;
    (0..len as u64)
        .map(|i| ((i ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
        .collect()
}

fn digest(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// The same calls on any transport; what this rank got, one line per result. Asserts
/// the expected results on the way.
fn script(t: &dyn Transport, rounds: &dyn Fn(Option<usize>)) -> Vec<String> {
    let (me, n) = (t.rank(), t.size());
    let mut log = Vec::new();
    let exchange = |name: &str, tag: u64, len: &dyn Fn(usize, usize) -> usize| {
        let got = t.exchange((0..n).map(|to| pattern(me, to, tag, len(me, to))).collect());
        assert_eq!(got.len(), n, "{name}: one buffer per rank");
        let mut lines = Vec::new();
        for (from, b) in got.iter().enumerate() {
            assert!(
                *b == pattern(from, me, tag, len(from, me)),
                "{name}: rank {me} got {} bytes from rank {from}, expected {}",
                b.len(),
                len(from, me)
            );
            lines.push(format!(
                "{name}: {from} -> {me}: {} bytes, {:016x}",
                b.len(),
                digest(b)
            ));
        }
        lines
    };

    log.extend(exchange("every pair", 1, &|f, to| {
        1 + 7 * f + 3 * to + 256 * (f * n + to)
    }));
    log.extend(exchange("all empty", 2, &|_, _| 0));
    log.extend(exchange("some empty", 3, &|f, to| {
        if (f + to) % 2 == 0 {
            0
        } else {
            100 + f
        }
    }));
    log.extend(exchange("one sender", 4, &|f, to| {
        if f == n - 1 {
            5000 + to
        } else {
            0
        }
    }));
    log.extend(exchange("to itself only", 5, &|f, to| {
        if f == to {
            10
        } else {
            0
        }
    }));
    log.extend(exchange("a few MB", 6, &|f, to| (3 << 20) + 1000 * f + to));
    for k in 0..5 {
        log.extend(exchange("back to back", 10 + k, &|f, to| {
            (k as usize * 31 + f + to) % 50
        }));
    }

    // Several MPI_Alltoallv rounds per exchange (a no-op over Threads).
    rounds(Some(1000));
    log.extend(exchange("rounds", 20, &|f, to| 1 + 1000 * to + 337 * f));
    log.extend(exchange("whole rounds", 21, &|_, to| 1000 * (to + 1)));
    log.extend(exchange("one long", 22, &|f, to| {
        if f == 0 && to == n - 1 {
            10_500
        } else {
            f + to
        }
    }));
    let mut b = if me == n - 1 {
        pattern(n - 1, 0, 23, 3500)
    } else {
        vec![1; 3]
    };
    t.broadcast(n - 1, &mut b);
    assert!(b == pattern(n - 1, 0, 23, 3500), "chunked broadcast");
    log.push(format!("chunked broadcast: {:016x}", digest(&b)));
    rounds(None);
    log.extend(exchange("after rounds", 24, &|f, to| 2000 + f * n + to));

    // Reductions: every rank's vector is known, so the expected results are too.
    let vector = |r: usize| {
        let r = r as u64;
        let last = if r == n as u64 - 1 { u64::MAX } else { r };
        vec![r, 1, u64::MAX - r, r * r + 7, last, 1 << 63]
    };
    let fold = |op: fn(u64, u64) -> u64| {
        (0..n)
            .map(vector)
            .reduce(|a, b| a.iter().zip(&b).map(|(&x, &y)| op(x, y)).collect())
            .expect("a rank")
    };
    type Reduction<'a> = (&'a str, &'a dyn Fn(&mut [u64]), fn(u64, u64) -> u64);
    let ops: [Reduction; 3] = [
        ("sum", &|v| t.sum(v), u64::wrapping_add),
        ("min", &|v| t.min(v), u64::min),
        ("max", &|v| t.max(v), u64::max),
    ];
    for (name, reduce, op) in ops {
        let mut v = vector(me);
        reduce(&mut v);
        assert_eq!(v, fold(op), "{name}");
        log.push(format!("{name}: {v:?}"));
    }
    let mut empty: [u64; 0] = [];
    t.sum(&mut empty);
    let mut long: Vec<u64> = (0..10_000u64).map(|i| i * (me as u64 + 1)).collect();
    t.sum(&mut long);
    let ranks = (n * (n + 1) / 2) as u64;
    assert!(long.iter().enumerate().all(|(i, &x)| x == i as u64 * ranks));
    log.push(format!("long sum: {}", long.iter().sum::<u64>()));

    // Broadcasts from every root, of nothing, and of a few MB.
    for root in 0..n {
        let mut b = if me == root {
            pattern(root, 0, 30, 1000 + root)
        } else {
            vec![0xaa; 7]
        };
        t.broadcast(root, &mut b);
        assert!(
            b == pattern(root, 0, 30, 1000 + root),
            "broadcast from {root}"
        );
        log.push(format!("broadcast from {root}: {:016x}", digest(&b)));
    }
    let mut b = if me == n - 1 { Vec::new() } else { vec![1, 2] };
    t.broadcast(n - 1, &mut b);
    assert!(b.is_empty(), "empty broadcast");
    let root = 1 % n;
    let mut b = if me == root {
        pattern(root, 0, 31, 2 << 20)
    } else {
        Vec::new()
    };
    t.broadcast(root, &mut b);
    assert!(b == pattern(root, 0, 31, 2 << 20), "large broadcast");
    log.push(format!("large broadcast: {:016x}", digest(&b)));

    let all = t.gather_all(&pattern(me, 0, 40, 10 + me));
    for (from, b) in all.iter().enumerate() {
        assert!(*b == pattern(from, 0, 40, 10 + from), "gather_all");
    }
    log.push(format!("gather_all: {} ranks", all.len()));
    log
}

/// Rank 0 prints the mean time of one exchange: of empty buffers (the header
/// `MPI_Alltoall` alone), and of 1 MiB for every pair of ranks.
fn time(mpi: &Mpi) {
    let n = mpi.size();
    let mean = |runs: u32, f: &mut dyn FnMut()| {
        for _ in 0..runs / 10 + 1 {
            f();
        }
        let start = Instant::now();
        for _ in 0..runs {
            f();
        }
        start.elapsed() / runs
    };
    let empty = mean(2000, &mut || {
        black_box(mpi.exchange(vec![Vec::new(); n]));
    });
    let mib = vec![pattern(mpi.rank(), 0, 50, 1 << 20); n];
    let one_mib = mean(50, &mut || {
        black_box(mpi.exchange(mib.clone()));
    });
    let copy = mean(50, &mut || {
        black_box(mib.clone());
    });
    // MPI alone: one MPI_Alltoallv of the same bytes between buffers made beforehand.
    let world = mpi::topology::SimpleCommunicator::world();
    let (counts, displs): (Vec<i32>, Vec<i32>) = (0..n as i32)
        .map(|r| {
            if r as usize == mpi.rank() {
                (0, 0)
            } else {
                (1 << 20, r << 20)
            }
        })
        .unzip();
    let send = mib.concat();
    let mut recv = vec![0u8; send.len()];
    let raw = mean(50, &mut || {
        world.all_to_all_varcount_into(
            &Partition::new(&send[..], &counts[..], &displs[..]),
            &mut PartitionMut::new(&mut recv[..], &counts[..], &displs[..]),
        );
    });
    if mpi.rank() == 0 {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "timing, {n} ranks: exchange of empty buffers {:.1} µs; of 1 MiB per pair \
             {:.0} µs ({:.0} µs of it copying the {n} outgoing buffers in this test; \
             MPI_Alltoallv alone between buffers made beforehand: {:.0} µs)",
            us(empty),
            us(one_mib),
            us(copy),
            us(raw)
        );
    }
}
