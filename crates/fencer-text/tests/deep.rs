//! Inputs users sent that overflowed the stack: long operator chains, long `else if`
//! chains and deep nesting. Each runs on a thread with a 2 MiB stack (what cargo gives
//! tests) and on one with 8 MiB (the CLI's main thread), and must parse, lower, print and
//! drop, or end in a diagnostic.

use fencer_ir::{Expr, Op, Program};
use fencer_text::{parse_ast, parse_program, print_ast};

const MAX_IR_DEPTH: u32 = 64;

fn on_stacks(f: fn()) {
    for mib in [2, 8] {
        std::thread::Builder::new()
            .stack_size(mib << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap_or_else(|_| panic!("failed with a {mib} MiB stack"));
    }
}

fn depth(e: &Expr) -> u32 {
    match e {
        Expr::Const(_) | Expr::Reg(_) => 1,
        Expr::AddrOf(_, a) | Expr::Un(_, a) => depth(a) + 1,
        Expr::Bin(_, a, b) => depth(a).max(depth(b)) + 1,
    }
}

fn max_depth(p: &Program) -> u32 {
    let mut d = 0;
    for f in &p.functions {
        for i in &f.body {
            let mut es = Vec::new();
            match &i.op {
                Op::Local { expr, .. } => es.push(expr),
                Op::Assert { cond, .. } | Op::Assume(cond) | Op::Branch { cond, .. } => {
                    es.push(cond)
                }
                _ => {}
            }
            for e in es {
                d = d.max(depth(e));
            }
        }
    }
    d
}

/// Runs a straight-line thread (loads read initial values) and returns its registers.
fn run(p: &Program) -> Vec<i64> {
    let f = &p.functions[0];
    let mut regs = vec![0; f.reg_names.len()];
    for i in &f.body {
        match &i.op {
            Op::Local { dst, expr } => {
                regs[*dst as usize] = fencer_machine::eval(expr, &regs).expect("no fault")
            }
            Op::Load { dst, addr, .. } => {
                let fencer_ir::Addr::Global { obj, .. } = addr else {
                    panic!()
                };
                regs[*dst as usize] = p.objects[*obj as usize].init_value(0);
            }
            Op::Assert { cond, .. } => {
                assert_eq!(fencer_machine::eval(cond, &regs), Some(1), "assertion")
            }
            op => panic!("unexpected {op:?}"),
        }
    }
    regs
}

fn reg(p: &Program, name: &str) -> usize {
    p.functions[0].reg_by_name(name).unwrap() as usize
}

fn chain(first: &str, op: &str, term: &str, n: usize) -> String {
    let mut s = String::from(first);
    for _ in 1..n {
        s.push_str(op);
        s.push_str(term);
    }
    s
}

#[test]
fn plus_chain_of_19000_terms() {
    on_stacks(|| {
        // Shared reads in the chain become loads, in order; the sum is exact.
        let e = chain("x", " + ", "x + 1", 9500);
        let src = format!(
            "shared x = 3;\nthread p {{ r = {e}; assert(r == {}); }}",
            9500 * 4 - 1
        );
        let p = parse_program("t.fen", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
        assert!(max_depth(&p) <= MAX_IR_DEPTH, "{}", max_depth(&p));
        let regs = run(&p);
        assert_eq!(regs[reg(&p, "r")], 9500 * 4 - 1);
        // The printer walks the chain in a loop too, and what it prints parses back.
        let a = parse_ast("t.fen", &src).unwrap();
        let text = print_ast(&a);
        assert_eq!(print_ast(&parse_ast("t.fen", &text).unwrap()), text);
    });
}

#[test]
fn minus_and_comparison_chains_keep_their_value() {
    on_stacks(|| {
        // `-` is rebalanced as `+` of negations; `<` is not associative and is split into
        // temporaries instead: ((0 < 1) < 1) < 1 ... alternates 1, 0, 1, ...
        let src = format!(
            "thread p {{ a = {}; b = {}; c = {}; }}",
            chain("100000", " - ", "3", 19000),
            chain("0", " < ", "1", 19002),
            chain("1", " * 3 + ", "1 - 2", 5000),
        );
        let p = parse_program("t.fen", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
        assert!(max_depth(&p) <= MAX_IR_DEPTH, "{}", max_depth(&p));
        let regs = run(&p);
        assert_eq!(regs[reg(&p, "a")], 100000 - 3 * 18999);
        assert_eq!(regs[reg(&p, "b")], 1);
        // 1 * 3 + 1 - 2 * 3 + 1 - 2 * 3 ... + 1 - 2: the products bind tighter.
        let c: i64 = 3 + 4999 - 6 * 4998 - 2;
        assert_eq!(regs[reg(&p, "c")], c);
    });
}

#[test]
fn logical_chains_short_circuit() {
    on_stacks(|| {
        // The division by zero is never evaluated: `0` stops the `&&` chain and `1` the
        // `||` chain, however the chain is regrouped.
        let src = format!(
            "thread p {{ z = 0; a = {} && 0 && 1 / z; b = {} || 1 || 1 / z; }}",
            chain("1", " && ", "1", 20000),
            chain("0", " || ", "0", 20000),
        );
        let p = parse_program("t.fen", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
        assert!(max_depth(&p) <= MAX_IR_DEPTH, "{}", max_depth(&p));
        let regs = run(&p);
        assert_eq!(regs[reg(&p, "a")], 0);
        assert_eq!(regs[reg(&p, "b")], 1);
    });
}

#[test]
fn else_if_chain_of_10000_arms() {
    on_stacks(|| {
        let mut src = String::from("shared x;\nthread p { r = x;\n if (r == 0) { x = 1; }");
        for i in 1..10000 {
            src.push_str(&format!(" else if (r == {i}) {{ x = {}; }}", i + 1));
        }
        src.push_str(" else { x = 0; }\n}\n");
        let p = parse_program("t.fen", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
        // Every arm's branch falls through to the next arm's condition; every jump goes
        // to the end.
        let body = &p.functions[0].body;
        let end = body.len() as u32;
        let jumps = body
            .iter()
            .filter(|i| matches!(i.op, Op::Jump(t) if t == end));
        assert_eq!(jumps.count(), 10000);
        let a = parse_ast("t.fen", &src).unwrap();
        let text = print_ast(&a);
        assert!(text.contains("} else if (r == 9999) {"));
        assert_eq!(print_ast(&parse_ast("t.fen", &text).unwrap()), text);
    });
}

#[test]
fn deep_parentheses_are_a_diagnostic() {
    on_stacks(|| {
        for (open, close) in [("(", ")"), ("-(", ")"), ("!", "")] {
            let src = format!(
                "thread p {{\n  r = {}1{};\n}}",
                open.repeat(10000),
                close.repeat(10000)
            );
            let d = parse_program("t.fen", &src).unwrap_err();
            assert_eq!(d.line, 2);
            assert!(d.message.contains("nesting deeper than"), "{d}");
            assert!(d.message.contains("expected at most"), "{d}");
        }
        let src = format!("thread p {{ {} }}", "if (1) {".repeat(5000));
        let d = parse_program("t.fen", &src).unwrap_err();
        assert!(d.message.contains("nesting deeper than"), "{d}");
    });
}

#[test]
fn long_chains_that_can_divide_by_zero_are_a_diagnostic() {
    on_stacks(|| {
        let src = format!(
            "thread p {{ z = 1;\n r = {}; }}",
            chain("z", " / ", "z", 19000)
        );
        let d = parse_program("t.fen", &src).unwrap_err();
        assert_eq!((d.line, d.col), (2, 6));
        assert!(d.message.contains("expression too deep"), "{d}");
        // A few dozen are fine, and so are long sums of divisions.
        let src = format!(
            "thread p {{ z = 1; r = {}; s = {}; }}",
            chain("z", " / ", "z", 40),
            chain("z / z", " + ", "z / z", 19000)
        );
        let p = parse_program("t.fen", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
        assert!(max_depth(&p) <= MAX_IR_DEPTH, "{}", max_depth(&p));
        assert_eq!(run(&p)[reg(&p, "s")], 19000);
    });
}

#[test]
fn final_conditions() {
    on_stacks(|| {
        let src = format!(
            "shared x;\nthread p {{ x = 1; }}\nexists ({})",
            chain("x == 1", " && ", "x + 0 == 1", 30000)
        );
        let p = parse_program("t.fen", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
        let c = p.cond.as_ref().unwrap();
        assert_eq!(c.expr.eval(&|_| 1), 1);
        assert_eq!(c.expr.eval(&|_| 0), 0);
        let src = format!(
            "shared x;\nthread p {{ x = 1; }}\nexists ({})",
            chain("x", " < ", "1", 20000)
        );
        let d = parse_program("t.fen", &src).unwrap_err();
        assert_eq!(d.line, 3);
        assert!(d.message.contains("final condition too deep"), "{d}");
    });
}

#[test]
fn shared_memory_is_bounded() {
    // 20 arrays of a million non-zero cells fill 160 MB per state; 20000 would be 160 GB.
    let mut src = String::new();
    for i in 0..20000 {
        src.push_str(&format!("shared a{i}[1000000] = 7;\n"));
    }
    src.push_str("thread p { fence; }\n");
    let d = parse_program("t.fen", &src).unwrap_err();
    assert_eq!((d.line, d.col), (17, 8), "{d}");
    assert!(
        d.message.contains("too much initialised shared memory"),
        "{d}"
    );
    // Zero cells cost nothing: memory is sparse.
    let mut src = String::new();
    for i in 0..2000 {
        src.push_str(&format!("shared a{i}[1000000];\n"));
    }
    src.push_str("thread p { a0[999999] = 1; }\n");
    parse_program("t.fen", &src).unwrap();
}
