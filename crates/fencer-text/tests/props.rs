//! Property tests: the parser never panics on arbitrary input, and printing a syntax tree
//! then parsing it gives the same tree back.

use fencer_ir::{BinOp, UnOp};
use fencer_text::ast::*;
use fencer_text::{parse_ast, parse_program, print_ast};
use proptest::prelude::*;

fn sp() -> Span {
    Span::default()
}

fn ident() -> impl Strategy<Value = Ident> {
    prop::sample::select(vec!["x", "y", "r1", "r2", "a", "flag", "t", "m", "f", "w"]).prop_map(
        |n| Ident {
            name: n.to_string(),
            span: sp(),
        },
    )
}

fn binop() -> impl Strategy<Value = BinOp> {
    use BinOp::*;
    prop::sample::select(vec![
        Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr, Eq, Ne, Lt, Le, Gt, Ge, LogAnd, LogOr,
    ])
}

fn unop() -> impl Strategy<Value = UnOp> {
    prop::sample::select(vec![UnOp::Neg, UnOp::Not, UnOp::BitNot])
}

fn place_no_index() -> impl Strategy<Value = Place> {
    ident().prop_map(|name| Place { name, index: None })
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        (0i64..1000).prop_map(ExprKind::Int),
        any::<bool>().prop_map(ExprKind::Bool),
        place_no_index().prop_map(ExprKind::Place),
        (ident(), ident()).prop_map(|(a, b)| ExprKind::ThreadReg(a, b)),
    ]
    .prop_map(|kind| Expr { kind, span: sp() });
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (unop(), inner.clone()).prop_map(|(o, e)| ExprKind::Un(o, Box::new(e))),
            (binop(), inner.clone(), inner.clone()).prop_map(|(o, a, b)| ExprKind::Bin(
                o,
                Box::new(a),
                Box::new(b)
            )),
            (ident(), inner).prop_map(|(n, i)| ExprKind::Place(Place {
                name: n,
                index: Some(Box::new(i))
            })),
        ]
        .prop_map(|kind| Expr { kind, span: sp() })
    })
}

fn place() -> impl Strategy<Value = Place> {
    (ident(), prop::option::of(expr())).prop_map(|(name, i)| Place {
        name,
        index: i.map(Box::new),
    })
}

fn rhs() -> impl Strategy<Value = Rhs> {
    prop_oneof![
        4 => expr().prop_map(Rhs::Expr),
        1 => (place(), expr(), expr()).prop_map(|(place, expected, new)| Rhs::Cas { place, expected, new }),
        1 => (place(), expr()).prop_map(|(place, value)| Rhs::FetchAdd { place, value }),
        1 => (place(), expr()).prop_map(|(place, value)| Rhs::Xchg { place, value }),
        1 => (ident(), prop::option::of(expr())).prop_map(|(func, arg)| Rhs::Spawn { func, arg }),
        1 => (ident(), prop::collection::vec(expr(), 0..3)).prop_map(|(func, args)| Rhs::Call { func, args }),
    ]
}

fn stmt() -> impl Strategy<Value = Stmt> {
    let simple = prop_oneof![
        4 => (place(), rhs()).prop_map(|(lhs, rhs)| StmtKind::Assign { lhs, rhs }),
        1 => Just(StmtKind::Fence(fencer_ir::FenceKind::Full)),
        1 => Just(StmtKind::Fence(fencer_ir::FenceKind::StoreStore)),
        1 => expr().prop_map(StmtKind::Assume),
        1 => expr().prop_map(StmtKind::Assert),
        1 => ident().prop_map(StmtKind::Lock),
        1 => ident().prop_map(StmtKind::Unlock),
        1 => expr().prop_map(StmtKind::Join),
        1 => prop::option::of(expr()).prop_map(StmtKind::Return),
        1 => (ident(), prop::collection::vec(expr(), 0..3)).prop_map(|(func, args)| StmtKind::Call { func, args }),
    ]
    .prop_map(|kind| Stmt { kind, span: sp() });
    simple.prop_recursive(3, 20, 4, |inner| {
        let block = prop::collection::vec(inner, 0..4);
        prop_oneof![
            (
                prop::collection::vec((expr(), block.clone()), 1..4),
                prop::option::of(block.clone())
            )
                .prop_map(|(arms, els)| StmtKind::If { arms, els }),
            (expr(), block).prop_map(|(cond, body)| StmtKind::While { cond, body }),
        ]
        .prop_map(|kind| Stmt { kind, span: sp() })
    })
}

fn item() -> impl Strategy<Value = Item> {
    let init = prop_oneof![Just(Init::Zero), (-5i64..5).prop_map(Init::Scalar),];
    let decl = (ident(), prop::option::of(1u32..4), init)
        .prop_map(|(name, size, init)| SharedDecl { name, size, init });
    prop_oneof![
        prop::collection::vec(decl, 1..3).prop_map(Item::Shared),
        prop::collection::vec(ident(), 1..3).prop_map(Item::Mutex),
        (ident(), prop::collection::vec(stmt(), 0..5))
            .prop_map(|(name, body)| Item::Thread { name, body }),
        (
            ident(),
            prop::collection::vec(ident(), 0..3),
            prop::collection::vec(stmt(), 0..4)
        )
            .prop_map(|(name, params, body)| Item::Func { name, params, body }),
    ]
}

fn ast() -> impl Strategy<Value = Ast> {
    let cond = (
        prop::sample::select(vec![CondQuant::Exists, CondQuant::Forall]),
        expr(),
    )
        .prop_map(|(quant, expr)| Cond {
            quant,
            expr,
            span: sp(),
        });
    (prop::collection::vec(item(), 0..5), prop::option::of(cond))
        .prop_map(|(items, cond)| Ast { items, cond })
}

/// Fragments of the language, so that random programs get past the lexer often.
fn token_soup() -> impl Strategy<Value = String> {
    let toks = prop::sample::select(vec![
        "shared",
        "mutex",
        "thread",
        "fn",
        "p",
        "q",
        "x",
        "y",
        "r",
        "a",
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        ";",
        ",",
        "=",
        "==",
        "+",
        "-",
        "*",
        "/",
        "&&",
        "||",
        "!",
        ".",
        "0",
        "1",
        "42",
        "fence",
        "assume",
        "assert",
        "lock",
        "unlock",
        "if",
        "else",
        "while",
        "join",
        "return",
        "cas",
        "fetch_add",
        "xchg",
        "spawn",
        "exists",
        "forall",
        "true",
        "/*",
        "*/",
        "//",
        "\n",
        "9999999999999999999999",
    ]);
    prop::collection::vec(toks, 0..60).prop_map(|v| v.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let s = String::from_utf8_lossy(&bytes);
        let _ = parse_program("fuzz.fen", &s);
    }

    #[test]
    fn never_panics_on_token_soup(s in token_soup()) {
        if let Err(d) = parse_program("fuzz.fen", &s) {
            // Every diagnostic renders, with a position inside the file.
            let r = d.render(&s);
            prop_assert!(r.starts_with("fuzz.fen:"));
            prop_assert!(d.line >= 1 && d.col >= 1);
        }
    }

    #[test]
    fn print_then_parse_round_trips(a in ast()) {
        let text = print_ast(&a);
        let back = parse_ast("rt.fen", &text).map_err(|d| TestCaseError::fail(d.render(&text)))?;
        prop_assert_eq!(&back, &a, "printed:\n{}", text);
        // And printing is stable.
        prop_assert_eq!(print_ast(&back), text);
    }
}

#[test]
fn examples_round_trip() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "fen") {
            let src = std::fs::read_to_string(&path).unwrap();
            let a = parse_ast("e.fen", &src).unwrap();
            let printed = print_ast(&a);
            assert_eq!(
                parse_ast("e.fen", &printed).unwrap(),
                a,
                "{}",
                path.display()
            );
            // The lowered programs agree too.
            let p1 = parse_program("e.fen", &src).unwrap();
            let p2 = parse_program("e.fen", &printed).unwrap();
            assert_eq!(p1.objects.len(), p2.objects.len());
            assert_eq!(
                p1.functions
                    .iter()
                    .map(|f| f.body.iter().map(|i| &i.op).collect::<Vec<_>>())
                    .collect::<Vec<_>>(),
                p2.functions
                    .iter()
                    .map(|f| f.body.iter().map(|i| &i.op).collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            );
            n += 1;
        }
    }
    assert!(n >= 10, "examples not found in {dir}");
}

#[test]
fn generated_programs_parse() {
    for seed in 0..500 {
        let src = fencer_testgen::program(seed, &fencer_testgen::Shape::default());
        if let Err(d) = parse_program("gen.fen", &src) {
            panic!("seed {seed}:\n{src}\n{}", d.render(&src));
        }
    }
}
