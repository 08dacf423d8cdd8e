//! The representative values of C programs' inputs (`fencer_ir::inputs`), on the IR the
//! front-end really writes: `__VERIFIER_nondet_*()` through the variable's register,
//! `__VERIFIER_assume` and `assume_abort_if_not`, signed and unsigned comparisons, and
//! clang's branches for `&&`. Needs clang-14.

use fencer_c::{load_with_inputs, CompileOptions};
use fencer_ir::inputs::{input_sites, Domain};
use fencer_ir::Value;
use fencer_memory::ModelKind;

const HEADER: &str = "extern int __VERIFIER_nondet_int(void);
extern unsigned __VERIFIER_nondet_uint(void);
extern _Bool __VERIFIER_nondet_bool(void);
extern char __VERIFIER_nondet_char(void);
extern unsigned char __VERIFIER_nondet_uchar(void);
extern void __VERIFIER_assume(int);
int x;
";

/// The domains of the program's inputs, in source order, with at most `limit` values.
fn domains(name: &str, body: &str, limit: u64) -> Vec<Domain> {
    let dir = std::env::temp_dir().join(format!("fencer-c-input-sites-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(name);
    std::fs::write(&f, format!("{HEADER}{body}")).unwrap();
    let p = load_with_inputs(&f, &CompileOptions::default(), ModelKind::Sc)
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_file(&f);
    let mut sites = input_sites(&p, limit);
    sites.sort_by_key(|s| s.loc);
    sites.into_iter().map(|s| s.domain).collect()
}

/// The values of `lo..=hi` in the order a domain lists them.
fn all(lo: Value, hi: Value) -> Domain {
    let mut v: Vec<Value> = (lo..=hi).collect();
    v.sort_by_key(|&v| (v.unsigned_abs(), v));
    Domain::Values(v)
}

fn values(v: &[Value]) -> Domain {
    Domain::Values(v.to_vec())
}

const INT_WIDE: Domain = Domain::Wide {
    lo: i32::MIN as Value,
    hi: i32::MAX as Value,
    count: 1 << 32,
};

#[test]
fn a_bool_takes_both_values() {
    let d = domains(
        "bool.c",
        "int main(void) { _Bool b = __VERIFIER_nondet_bool(); if (b) x = 1; return 0; }",
        256,
    );
    assert_eq!(d, vec![values(&[0, 1])]);
}

#[test]
fn an_int_tested_for_nonzero_takes_zero_and_one() {
    let d = domains(
        "nonzero.c",
        "int main(void) { int r = __VERIFIER_nondet_int(); if (r) x = 2; return 0; }",
        256,
    );
    assert_eq!(d, vec![values(&[0, 1])]);
}

#[test]
fn an_unsigned_assume_narrows_an_input_used_in_arithmetic() {
    let d = domains(
        "unsigned.c",
        "int main(void) {
           unsigned u = __VERIFIER_nondet_uint();
           __VERIFIER_assume(u < 3);
           x = u + 1;
           unsigned w = __VERIFIER_nondet_uint();
           __VERIFIER_assume(w <= 7u);
           x = w;
           return 0;
         }",
        256,
    );
    assert_eq!(d, vec![values(&[0, 1, 2]), all(0, 7)]);
}

#[test]
fn a_char_copied_takes_every_value_or_is_wide() {
    let src = "int main(void) { char c = __VERIFIER_nondet_char(); x = c; return 0; }";
    assert_eq!(domains("char.c", src, 256), vec![all(-128, 127)]);
    assert_eq!(
        domains("char.c", src, 100),
        vec![Domain::Wide {
            lo: -128,
            hi: 127,
            count: 256
        }]
    );
}

#[test]
fn an_int_copied_is_wide() {
    let d = domains(
        "int.c",
        "int main(void) { int n = __VERIFIER_nondet_int(); x = n; return 0; }",
        256,
    );
    assert_eq!(d, vec![INT_WIDE]);
}

#[test]
fn assumes_narrow_an_int() {
    let d = domains(
        "assumes.c",
        "int main(void) {
           int n = __VERIFIER_nondet_int();
           __VERIFIER_assume(n >= 0);
           __VERIFIER_assume(n < 4);
           x = n * 2;
           return 0;
         }",
        256,
    );
    assert_eq!(d, vec![values(&[0, 1, 2, 3])]);
}

#[test]
fn an_assume_with_and_narrows_through_its_branches() {
    let d = domains(
        "and.c",
        "int main(void) {
           int m = __VERIFIER_nondet_int();
           __VERIFIER_assume(0 <= m && m < 3);
           x = m;
           return 0;
         }",
        256,
    );
    assert_eq!(d, vec![values(&[0, 1, 2])]);
}

#[test]
fn assume_abort_if_not_narrows() {
    let d = domains(
        "abort_if_not.c",
        "void reach_error(void);
         void abort(void);
         void assume_abort_if_not(int cond) { if (!cond) { abort(); } }
         int main(void) {
           int k = __VERIFIER_nondet_int();
           assume_abort_if_not(k > 0 && k <= 5);
           x = k;
           int big = __VERIFIER_nondet_int();
           assume_abort_if_not(big > 5);
           x = big;
           return 0;
         }",
        256,
    );
    assert_eq!(
        d,
        vec![
            all(1, 5),
            Domain::Wide {
                lo: 6,
                hi: i32::MAX as Value,
                count: i32::MAX as u64 - 5
            }
        ]
    );
}

#[test]
fn comparisons_need_one_value_per_outcome() {
    let d = domains(
        "thresholds.c",
        "int main(void) {
           int n = __VERIFIER_nondet_int();
           if (n == 7) x = 3; else if (n < 10) x = 4;
           unsigned char c = __VERIFIER_nondet_uchar();
           if (c < 5) x = 5;
           return 0;
         }",
        256,
    );
    // 255, not below 5, is held as -1.
    assert_eq!(d, vec![values(&[0, 7, 10]), values(&[0, -1])]);
}

#[test]
fn a_copy_used_in_arithmetic_is_not_threshold_only() {
    let d = domains(
        "copy.c",
        "int main(void) {
           int a = __VERIFIER_nondet_int();
           int b = a;
           if (b > 0) x = b + 1;
           return 0;
         }",
        256,
    );
    assert_eq!(d, vec![INT_WIDE]);
}
