//! Random small C programs for what only the C front-end and its library give meaning to:
//! TLS keys with destructors (run at thread exit, not at process exit), condition
//! variables waited on with `while` or with `if` (spurious wake-ups), reads of a mutex's
//! word, and `main` that returns, calls `exit`, or `pthread_exit`s while threads still run.
//! Every global is in the final state, so the engines can be held to the reference
//! explorer on the program as written (the issue-45 classes: what one of them got wrong
//! shows as a final state the other lacks).

use crate::Rng;
use std::fmt::Write as _;

/// One statement of a thread, `k` numbering the globals it may write; `wait`: it may wait
/// for the release in a `while` loop (not in the thread that releases).
fn statement(r: &mut Rng, s: &mut String, k: usize, keys: bool, wait: bool) {
    match r.range(0, 6) {
        0 if wait => s.push_str(
            "  pthread_mutex_lock(&m);\n  while (!ready)\n    pthread_cond_wait(&c, &m);\n  \
             pthread_mutex_unlock(&m);\n",
        ),
        1 => {
            let _ = write!(
                s,
                "  pthread_mutex_lock(&m);\n  if (!ready)\n    pthread_cond_wait(&c, &m);\n  \
                 w{k} = ready + 2;\n  pthread_mutex_unlock(&m);\n"
            );
        }
        2 => {
            let _ = writeln!(s, "  w{k} = *(volatile int *)&m;");
        }
        3 if keys => {
            let _ = writeln!(s, "  pthread_setspecific(key, (void *){});", r.range(1, 2));
        }
        4 => {
            let _ = writeln!(s, "  w{k} = x;");
        }
        _ => {
            let _ = writeln!(s, "  x = {};", r.range(1, 2));
        }
    }
}

/// The statement that lets every waiter go: it runs in a thread other than `main`,
/// unconditionally, so that nothing waits forever.
fn release(r: &mut Rng, s: &mut String) {
    let call = if r.chance(50) { "signal" } else { "broadcast" };
    let _ = write!(
        s,
        "  pthread_mutex_lock(&m);\n  ready = 1;\n  pthread_cond_{call}(&c);\n  \
         pthread_mutex_unlock(&m);\n"
    );
}

/// A random C program for `seed`: `main` and one or two threads of one or two
/// statements, the last thread ending with the release of the condition variable.
pub fn c_program(seed: u64) -> String {
    let mut r = Rng::new(seed ^ 0x4320_5052);
    let keys = r.chance(50);
    let threads = r.range(1, 2) as usize;
    let mut globals = vec!["x".to_string(), "d".to_string()];
    let mut s = String::from(
        "#include <pthread.h>\n#include <stdlib.h>\n\npthread_mutex_t m = \
         PTHREAD_MUTEX_INITIALIZER;\npthread_cond_t c = PTHREAD_COND_INITIALIZER;\n",
    );
    if keys {
        s.push_str("pthread_key_t key;\n");
    }
    let mut bodies = Vec::new();
    // Thread t writes the globals w{2t}, w{2t+1}; main writes w{2 * threads}...
    for t in 0..=threads {
        let mut b = String::new();
        let n = if t == threads {
            r.range(0, 1)
        } else {
            r.range(1, 2)
        };
        for i in 0..n {
            statement(&mut r, &mut b, 2 * t + i as usize, keys, t + 1 != threads);
        }
        if t + 1 == threads {
            release(&mut r, &mut b);
        }
        bodies.push(b);
    }
    for k in 0..2 * (threads + 1) {
        globals.push(format!("w{k}"));
    }
    let _ = writeln!(s, "volatile int ready;\nint {};\n", globals.join(", "));
    if keys {
        // Each run of a destructor leaves its value in `d`, in order.
        s.push_str("void dtor(void *v) { d = d * 4 + (int)(long)v; }\n\n");
    }
    for (t, b) in bodies.iter().take(threads).enumerate() {
        let _ = write!(s, "void *t{t}(void *a) {{\n{b}  return 0;\n}}\n\n");
    }
    s.push_str("int main(void) {\n");
    if keys {
        s.push_str("  pthread_key_create(&key, dtor);\n");
    }
    for t in 0..threads {
        let _ = writeln!(s, "  pthread_t h{t};\n  pthread_create(&h{t}, 0, t{t}, 0);");
    }
    s.push_str(&bodies[threads]);
    if keys && r.chance(50) {
        s.push_str("  pthread_setspecific(key, (void *)3);\n");
    }
    for t in 0..threads {
        if r.chance(50) {
            let _ = writeln!(s, "  pthread_join(h{t}, 0);");
        }
    }
    s.push_str(match r.range(0, 2) {
        0 => "  return 0;\n}\n",
        1 => "  exit(0);\n}\n",
        _ => "  pthread_exit(0);\n}\n",
    });
    s
}
