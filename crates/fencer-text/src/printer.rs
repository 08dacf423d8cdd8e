//! Pretty-printer: prints a syntax tree as text that parses back to the same tree.

use crate::ast::*;
use crate::parser::precedence;
use fencer_ir::UnOp;
use std::fmt::Write as _;

pub fn print_ast(ast: &Ast) -> String {
    let mut s = String::new();
    for item in &ast.items {
        match item {
            Item::Shared(decls) => {
                let ds: Vec<String> = decls.iter().map(print_decl).collect();
                let _ = writeln!(s, "shared {};", ds.join(", "));
            }
            Item::Mutex(names) => {
                let ns: Vec<&str> = names.iter().map(|n| n.name.as_str()).collect();
                let _ = writeln!(s, "mutex {};", ns.join(", "));
            }
            Item::Thread { name, body } => {
                let _ = writeln!(s, "\nthread {} {{", name.name);
                print_block(&mut s, body, 1);
                s.push_str("}\n");
            }
            Item::Func { name, params, body } => {
                let ps: Vec<&str> = params.iter().map(|n| n.name.as_str()).collect();
                let _ = writeln!(s, "\nfn {}({}) {{", name.name, ps.join(", "));
                print_block(&mut s, body, 1);
                s.push_str("}\n");
            }
        }
    }
    if let Some(c) = &ast.cond {
        let q = match c.quant {
            CondQuant::Exists => "exists",
            CondQuant::Forall => "forall",
        };
        let _ = writeln!(s, "\n{q} ({})", print_expr(&c.expr));
    }
    s
}

fn print_decl(d: &SharedDecl) -> String {
    let mut s = d.name.name.clone();
    if let Some(n) = d.size {
        let _ = write!(s, "[{n}]");
    }
    match &d.init {
        Init::Zero => {}
        Init::Scalar(v) => {
            let _ = write!(s, " = {v}");
        }
        Init::List(vs) => {
            let vs: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
            let _ = write!(s, " = {{{}}}", vs.join(", "));
        }
    }
    s
}

fn indent(s: &mut String, level: usize) {
    for _ in 0..level {
        s.push_str("    ");
    }
}

fn print_block(s: &mut String, body: &[Stmt], level: usize) {
    for st in body {
        print_stmt(s, st, level);
    }
}

fn print_stmt(s: &mut String, st: &Stmt, level: usize) {
    indent(s, level);
    match &st.kind {
        StmtKind::Assign { lhs, rhs } => {
            let _ = writeln!(s, "{} = {};", print_place(lhs), print_rhs(rhs));
        }
        StmtKind::Fence(k) => {
            let _ = writeln!(s, "{};", k.name());
        }
        StmtKind::Assume(e) => {
            let _ = writeln!(s, "assume({});", print_expr(e));
        }
        StmtKind::Assert(e) => {
            let _ = writeln!(s, "assert({});", print_expr(e));
        }
        StmtKind::Lock(m) => {
            let _ = writeln!(s, "lock({});", m.name);
        }
        StmtKind::Unlock(m) => {
            let _ = writeln!(s, "unlock({});", m.name);
        }
        StmtKind::If { arms, els } => {
            for (i, (cond, then)) in arms.iter().enumerate() {
                let kw = if i == 0 { "if" } else { "} else if" };
                let _ = writeln!(s, "{kw} ({}) {{", print_expr(cond));
                print_block(s, then, level + 1);
                indent(s, level);
            }
            match els {
                None => s.push_str("}\n"),
                Some(b) => {
                    s.push_str("} else {\n");
                    print_block(s, b, level + 1);
                    indent(s, level);
                    s.push_str("}\n");
                }
            }
        }
        StmtKind::While { cond, body } => {
            let _ = writeln!(s, "while ({}) {{", print_expr(cond));
            print_block(s, body, level + 1);
            indent(s, level);
            s.push_str("}\n");
        }
        StmtKind::Join(e) => {
            let _ = writeln!(s, "join({});", print_expr(e));
        }
        StmtKind::Return(e) => match e {
            Some(e) => {
                let _ = writeln!(s, "return {};", print_expr(e));
            }
            None => s.push_str("return;\n"),
        },
        StmtKind::Call { func, args } => {
            let _ = writeln!(s, "{}({});", func.name, print_args(args));
        }
    }
}

fn print_args(args: &[Expr]) -> String {
    args.iter().map(print_expr).collect::<Vec<_>>().join(", ")
}

fn print_rhs(r: &Rhs) -> String {
    match r {
        Rhs::Expr(e) => print_expr(e),
        Rhs::Cas {
            place,
            expected,
            new,
        } => format!(
            "cas({}, {}, {})",
            print_place(place),
            print_expr(expected),
            print_expr(new)
        ),
        Rhs::FetchAdd { place, value } => {
            format!("fetch_add({}, {})", print_place(place), print_expr(value))
        }
        Rhs::Xchg { place, value } => {
            format!("xchg({}, {})", print_place(place), print_expr(value))
        }
        Rhs::Spawn { func, arg } => match arg {
            Some(a) => format!("spawn {}({})", func.name, print_expr(a)),
            None => format!("spawn {}()", func.name),
        },
        Rhs::Call { func, args } => format!("{}({})", func.name, print_args(args)),
    }
}

pub fn print_place(p: &Place) -> String {
    match &p.index {
        Some(i) => format!("{}[{}]", p.name.name, print_expr(i)),
        None => p.name.name.clone(),
    }
}

/// Prints with the fewest parentheses that keep the tree: a child operand is wrapped when it
/// binds more loosely than its parent, or equally on the right (operators associate left).
pub fn print_expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) if *v < 0 => format!("({v})"),
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Place(p) => print_place(p),
        ExprKind::ThreadReg(t, r) => format!("{}.{}", t.name, r.name),
        ExprKind::Un(op, a) => {
            let sym = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
                UnOp::BitNot => "~",
                // The text parser never builds these (only the C front-end does); printed
                // as the cast they stand for.
                UnOp::Sext(_) => "(signed)",
                UnOp::Zext(_) => "(unsigned)",
            };
            match a.kind {
                ExprKind::Bin(..) => format!("{sym}({})", print_expr(a)),
                _ => format!("{sym}{}", print_expr(a)),
            }
        }
        ExprKind::Bin(..) => print_chain(e),
    }
}

/// A binary expression, walking its left spine in a loop: operator chains are as deep as
/// they are long, and recursion down a chain of twenty thousand terms overflows the stack.
/// Operands on the right, and left operands that need parentheses, are bounded by the
/// parser's nesting limit.
fn print_chain(e: &Expr) -> String {
    let mut rights = Vec::new();
    let mut cur = e;
    let first = loop {
        let ExprKind::Bin(op, a, b) = &cur.kind else {
            break print_expr(cur);
        };
        let p = precedence(*op);
        rights.push((*op, wrap(b, p, true)));
        match &a.kind {
            ExprKind::Bin(o, ..) if precedence(*o) >= p => cur = a,
            _ => break wrap(a, p, false),
        }
    };
    let mut s = first;
    for (op, r) in rights.iter().rev() {
        let _ = write!(s, " {} {r}", op.symbol());
    }
    s
}

/// An operand of an operator of precedence `p`, wrapped when it binds more loosely, or
/// equally on the right (operators associate left).
fn wrap(x: &Expr, p: u8, right: bool) -> String {
    match &x.kind {
        ExprKind::Bin(o, ..) => {
            let q = precedence(*o);
            if q < p || (right && q == p) {
                format!("({})", print_expr(x))
            } else {
                print_expr(x)
            }
        }
        _ => print_expr(x),
    }
}
