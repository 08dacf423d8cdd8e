//! How C fences and release operations lower per model: never stronger than what the
//! hardware mapping gives (a stronger fence would hide executions, hence bugs). Needs
//! clang-14.

use fencer_c::{load, CompileOptions};
use fencer_ir::{FenceKind, Op, Program};
use fencer_memory::ModelKind;
use fencer_report::Verdict;

fn have_clang() -> bool {
    let ok = |c: &str| {
        std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let found = std::env::var("FENCER_CLANG").is_ok_and(|c| ok(&c))
        || ok("clang-14")
        || ok("/usr/lib/llvm-14/bin/clang");
    if !found {
        eprintln!("skipped: clang-14 is not installed");
    }
    found
}

fn lower(name: &str, src: &str, model: ModelKind) -> Program {
    let dir = std::env::temp_dir().join(format!("fencer-c-fences-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(name);
    std::fs::write(&f, src).unwrap();
    let p = load(&f, &CompileOptions::default(), model).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_file(&f);
    p
}

/// The fences of function `func`, in order.
fn fences(p: &Program, func: &str) -> Vec<FenceKind> {
    let f = p
        .functions
        .iter()
        .find(|f| f.name == func)
        .unwrap_or_else(|| panic!("no function {func}"));
    f.body
        .iter()
        .filter_map(|i| match i.op {
            Op::Fence(k) => Some(k),
            _ => None,
        })
        .collect()
}

fn verdict(p: &Program, model: ModelKind) -> Verdict {
    let mut p = p.clone();
    fencer_ir::spin::spin_assume(&mut p);
    fencer_dpor::explore(&p, model, &fencer_dpor::Options::default()).verdict
}

const HEAD: &str = "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\
                    atomic_int x, y;\nint r0, r1;\n";

fn program(t0: &str, t1: &str, cond: &str) -> String {
    format!(
        "{HEAD}void *t0(void *a) {{ {t0} return 0; }}\nvoid *t1(void *a) {{ {t1} return 0; }}\n\
         int main(void) {{ pthread_t a, b; pthread_create(&a, 0, t0, 0); \
         pthread_create(&b, 0, t1, 0); pthread_join(a, 0); pthread_join(b, 0); \
         assert({cond}); return 0; }}\n"
    )
}

const RLX_X: &str = "atomic_store_explicit(&x, 1, memory_order_relaxed);";
const RLX_Y: &str = "atomic_store_explicit(&y, 1, memory_order_relaxed);";

#[test]
fn fence_orders_lower_to_their_kinds() {
    if !have_clang() {
        return;
    }
    use FenceKind::{Full, StoreStore};
    let cases: &[(&str, &[FenceKind], &[FenceKind])] = &[
        (
            "atomic_thread_fence(memory_order_release);",
            &[StoreStore],
            &[],
        ),
        (
            "atomic_thread_fence(memory_order_acq_rel);",
            &[StoreStore],
            &[],
        ),
        (
            "__atomic_thread_fence(__ATOMIC_RELEASE);",
            &[StoreStore],
            &[],
        ),
        ("atomic_thread_fence(memory_order_acquire);", &[], &[]),
        (
            "atomic_thread_fence(memory_order_seq_cst);",
            &[Full],
            &[Full],
        ),
        ("__sync_synchronize();", &[Full], &[Full]),
        (
            "asm volatile(\"sfence\" ::: \"memory\");",
            &[StoreStore],
            &[],
        ),
        ("asm volatile(\"mfence\" ::: \"memory\");", &[Full], &[Full]),
    ];
    for &(fence, pso, tso) in cases {
        let src = program(&format!("{RLX_X} {fence} {RLX_Y}"), "", "1");
        let got = |m| fences(&lower("f.c", &src, m), "t0");
        assert_eq!(got(ModelKind::Pso), pso, "{fence} under PSO");
        assert_eq!(got(ModelKind::Tso), tso, "{fence} under TSO");
        assert_eq!(got(ModelKind::Sc), [], "{fence} under SC");
    }
    // A release store is a store-store fence and the store under PSO; a release
    // read-modify-write likewise; a seq_cst one takes a full fence.
    let rel = program(
        &format!("{RLX_X} atomic_store_explicit(&y, 1, memory_order_release);"),
        "",
        "1",
    );
    assert_eq!(
        fences(&lower("r.c", &rel, ModelKind::Pso), "t0"),
        [StoreStore]
    );
    assert_eq!(fences(&lower("r.c", &rel, ModelKind::Tso), "t0"), []);
    let rmw = program(
        &format!(
            "{RLX_X} atomic_exchange_explicit(&y, 1, memory_order_release); \
                  atomic_fetch_add(&y, 1);"
        ),
        "",
        "1",
    );
    assert_eq!(
        fences(&lower("m.c", &rmw, ModelKind::Pso), "t0"),
        [StoreStore, Full]
    );
}

/// Message passing: a release fence between the stores is enough under every model; store
/// buffering: a release fence between store and load is not (a full fence in its place
/// would have hidden the bug under PSO).
#[test]
fn release_fences_order_stores_not_loads() {
    if !have_clang() {
        return;
    }
    let mp = program(
        &format!("{RLX_X} atomic_thread_fence(memory_order_release); {RLX_Y}"),
        "r0 = atomic_load_explicit(&y, memory_order_relaxed); \
         r1 = atomic_load_explicit(&x, memory_order_relaxed);",
        "!(r0 == 1 && r1 == 0)",
    );
    let no_fence = mp.replace("atomic_thread_fence(memory_order_release);", "");
    let sb = program(
        &format!(
            "{RLX_X} atomic_thread_fence(memory_order_release); \
             r0 = atomic_load_explicit(&y, memory_order_relaxed);"
        ),
        &format!(
            "{RLX_Y} atomic_thread_fence(memory_order_release); \
             r1 = atomic_load_explicit(&x, memory_order_relaxed);"
        ),
        "!(r0 == 0 && r1 == 0)",
    );
    for m in ModelKind::ALL {
        assert_eq!(verdict(&lower("mp.c", &mp, m), m), Verdict::Safe, "mp {m}");
        let want = if m == ModelKind::Pso {
            Verdict::Violation
        } else {
            Verdict::Safe
        };
        assert_eq!(
            verdict(&lower("mp0.c", &no_fence, m), m),
            want,
            "mp unfenced {m}"
        );
        let want = if m == ModelKind::Sc {
            Verdict::Safe
        } else {
            Verdict::Violation
        };
        assert_eq!(verdict(&lower("sb.c", &sb, m), m), want, "sb {m}");
    }
}
