//! Conditions users sent that overflowed the stack: ten thousand nested parentheses and
//! thirty thousand conjuncts. On 2 MiB (cargo's test threads) and 8 MiB (the CLI's main
//! thread) stacks they must lower, or end in a diagnostic.

use fencer_ir::CondExpr;
use fencer_litmus::parse_litmus;

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

fn sb(cond: &str) -> String {
    format!(
        "X86 SB\n{{\n}}\n P0          | P1          ;\n MOV [x],$1  | MOV [y],$1  ;\n MOV EAX,[y] | MOV EAX,[x] ;\nexists\n{cond}\n"
    )
}

fn depth(e: &CondExpr) -> u32 {
    match e {
        CondExpr::Const(_) | CondExpr::Var(_) => 1,
        CondExpr::Un(_, a) => depth(a) + 1,
        CondExpr::Bin(_, a, b) => depth(a).max(depth(b)) + 1,
    }
}

#[test]
fn thirty_thousand_conjuncts() {
    on_stacks(|| {
        let mut c = String::from("(0:EAX=0");
        for i in 0..30000 {
            c.push_str(if i % 2 == 0 {
                " /\\ 1:EAX=0"
            } else {
                " /\\ x=1"
            });
        }
        c.push_str(" \\/ y=5)");
        let src = sb(&c);
        let l = parse_litmus("t.litmus", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
        assert!(depth(&l.prop) <= 20, "{}", depth(&l.prop));
        let text = &l.program.cond.as_ref().unwrap().text;
        assert!(
            text.starts_with("exists (0:EAX=0 /\\ 1:EAX=0 /\\ [x]=1 /\\"),
            "{text}"
        );
        assert!(text.ends_with(" \\/ [y]=5)"), "{text}");
        assert_eq!(l.vars.len(), 4);
    });
}

#[test]
fn ten_thousand_parentheses_are_a_diagnostic() {
    on_stacks(|| {
        for (open, close) in [("(", ")"), ("~(", ")"), ("~", "")] {
            let src = sb(&format!(
                "{}0:EAX=0{}",
                open.repeat(10000),
                close.repeat(10000)
            ));
            let Err(d) = parse_litmus("t.litmus", &src) else {
                panic!("accepted")
            };
            assert_eq!(d.line, 8, "{d}");
            assert!(d.message.contains("nested too deeply"), "{d}");
            assert!(d.message.contains("expected at most"), "{d}");
        }
        // Within the limit is fine.
        let src = sb(&format!("{}0:EAX=0{}", "~(".repeat(32), ")".repeat(32)));
        parse_litmus("t.litmus", &src).unwrap_or_else(|d| panic!("{}", d.render(&src)));
    });
}
