//! DVE text from a syntax tree: what `fencer transform` writes. The output parses back to
//! the same tree (spans aside) with fencer's parser and, for models in DiVinE 2's
//! language (no templates, `for`, `expression` or `property ltl`), with DiVinE 2's.

use crate::ast::*;
use std::fmt::Write;

/// Binding strength of an operator, as the parser reads it (higher binds tighter).
fn prec(op: BinOp) -> u8 {
    use BinOp::*;
    match op {
        Imply => 1,
        Or => 2,
        And => 3,
        BitOr => 4,
        BitXor => 5,
        BitAnd => 6,
        Eq | Ne => 7,
        Lt | Le | Gt | Ge => 8,
        Shl | Shr => 9,
        Add | Sub => 10,
        Mul | Div | Rem => 11,
    }
}

fn op_text(op: BinOp) -> &'static str {
    use BinOp::*;
    match op {
        Imply => "imply",
        Or => "||",
        And => "&&",
        BitOr => "|",
        BitXor => "^",
        BitAnd => "&",
        Eq => "==",
        Ne => "!=",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
        Shl => "<<",
        Shr => ">>",
        Add => "+",
        Sub => "-",
        Mul => "*",
        Div => "/",
        Rem => "%",
    }
}

fn proc_ref(p: &ProcRef, out: &mut String) {
    out.push_str(&p.name.name);
    if let Some(args) = &p.args {
        out.push('(');
        list(args, out);
        out.push(')');
    }
}

fn list(es: &[Expr], out: &mut String) {
    for (k, e) in es.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        expr_into(e, 0, out);
    }
}

/// Writes `e`, parenthesised when its operator binds less tightly than `min` requires.
fn expr_into(e: &Expr, min: u8, out: &mut String) {
    match e {
        Expr::Num(n, _) => {
            // The parser reads `-5` as negation of 5; keep negative literals apart from a
            // preceding operator.
            if *n < 0 {
                let _ = write!(out, "({n})");
            } else {
                let _ = write!(out, "{n}");
            }
        }
        Expr::Bool(b, _) => out.push_str(if *b { "true" } else { "false" }),
        Expr::Var(name, idx) => {
            out.push_str(&name.name);
            if let Some(i) = idx {
                out.push('[');
                expr_into(i, 0, out);
                out.push(']');
            }
        }
        Expr::InState(p, s) => {
            proc_ref(p, out);
            out.push('.');
            out.push_str(&s.name);
        }
        Expr::Remote(p, x, idx) => {
            proc_ref(p, out);
            out.push_str("->");
            out.push_str(&x.name);
            if let Some(i) = idx {
                out.push('[');
                expr_into(i, 0, out);
                out.push(']');
            }
        }
        Expr::Call(f, args, _) => {
            out.push_str(&f.name);
            out.push('(');
            list(args, out);
            out.push(')');
        }
        Expr::Unary(op, a, _) => {
            out.push_str(match op {
                UnOp::Neg => "-",
                UnOp::Not => "not ",
                UnOp::BitNot => "~",
            });
            expr_into(a, 12, out);
        }
        Expr::Binary(op, a, b) => {
            let p = prec(*op);
            let paren = p < min;
            if paren {
                out.push('(');
            }
            // Left-associative except `imply`, which the parser reads to the right.
            let (lmin, rmin) = if *op == BinOp::Imply {
                (p + 1, p)
            } else {
                (p, p + 1)
            };
            expr_into(a, lmin, out);
            let _ = write!(out, " {} ", op_text(*op));
            expr_into(b, rmin, out);
            if paren {
                out.push(')');
            }
        }
    }
}

pub fn expr(e: &Expr) -> String {
    let mut s = String::new();
    expr_into(e, 0, &mut s);
    s
}

fn ty(t: Type) -> &'static str {
    match t {
        Type::Byte => "byte",
        Type::Int => "int",
    }
}

fn var_decl(v: &VarDecl, indent: &str, out: &mut String) {
    out.push_str(indent);
    if v.konst {
        out.push_str("const ");
    }
    if v.input {
        out.push_str("input ");
    }
    let _ = write!(out, "{} {}", ty(v.ty), v.name.name);
    if let Some(n) = &v.size {
        let _ = write!(out, "[{}]", expr(n));
    }
    match &v.init {
        Some(Init::Scalar(e)) => {
            let _ = write!(out, " = {}", expr(e));
        }
        Some(Init::List(es, _)) => {
            out.push_str(" = {");
            list(es, out);
            out.push('}');
        }
        None => {}
    }
    out.push_str(";\n");
}

fn chan_decl(c: &ChanDecl, indent: &str, out: &mut String) {
    out.push_str(indent);
    out.push_str("channel ");
    if !c.types.is_empty() {
        out.push('{');
        for (k, t) in c.types.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push_str(ty(*t));
        }
        out.push_str("} ");
    }
    out.push_str(&c.name.name);
    if let Some(n) = &c.size {
        let _ = write!(out, "[{}]", expr(n));
    }
    out.push_str(";\n");
}

fn names(word: &str, ns: &[Ident], out: &mut String) {
    if ns.is_empty() {
        return;
    }
    let _ = write!(out, "{word} ");
    for (k, n) in ns.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        out.push_str(&n.name);
    }
    out.push_str(";\n");
}

pub fn transition(t: &Transition, out: &mut String) {
    let _ = write!(out, "  {} -> {} {{", t.from.name, t.to.name);
    if let Some(g) = &t.guard {
        let _ = write!(out, " guard {};", expr(g));
    }
    if let Some(s) = &t.sync {
        out.push_str(" sync ");
        if let Some(o) = &s.owner {
            proc_ref(o, out);
            out.push_str("->");
        }
        out.push_str(&s.chan.name);
        out.push(if s.send { '!' } else { '?' });
        match s.values.len() {
            0 => {}
            1 => out.push_str(&expr(&s.values[0])),
            _ => {
                out.push('{');
                list(&s.values, out);
                out.push('}');
            }
        }
        out.push(';');
    }
    if !t.effect.is_empty() {
        out.push_str(" effect ");
        for (k, a) in t.effect.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{} = {}", expr(&a.target), expr(&a.value));
        }
        out.push(';');
    }
    out.push_str(" }");
}

fn process(p: &Process, out: &mut String) {
    if p.property {
        out.push_str("property ");
    }
    let _ = write!(out, "process {}", p.name.name);
    if let Some(ps) = &p.params {
        out.push('(');
        for (k, (q, n)) in ps.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            if let Some(q) = q {
                let _ = write!(out, "{} ", q.name);
            }
            out.push_str(&n.name);
        }
        out.push(')');
    }
    out.push_str(" {\n");
    for v in &p.vars {
        var_decl(v, "", out);
    }
    for c in &p.channels {
        chan_decl(c, "", out);
    }
    names("state", &p.states, out);
    if let Some(i) = &p.init {
        let _ = writeln!(out, "init {};", i.name);
    }
    names("accept", &p.accept, out);
    names("commit", &p.commit, out);
    if !p.asserts.is_empty() {
        out.push_str("assert ");
        for (k, (s, e)) in p.asserts.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{}: {}", s.name, expr(e));
        }
        out.push_str(";\n");
    }
    if !p.trans.is_empty() {
        out.push_str("trans\n");
        for (k, t) in p.trans.iter().enumerate() {
            transition(t, out);
            out.push_str(if k + 1 < p.trans.len() { ",\n" } else { ";\n" });
        }
    }
    out.push_str("}\n");
}

fn item(i: &Item, out: &mut String) {
    match i {
        Item::Var(v) => var_decl(v, "", out),
        Item::Chan(c) => chan_decl(c, "", out),
        Item::Process(p) => {
            out.push('\n');
            process(p, out);
        }
        Item::Instance(inst) => {
            let _ = write!(out, "process {}(", inst.template.name);
            list(&inst.args, out);
            out.push_str(");\n");
        }
        Item::Definition(d) => {
            let _ = write!(out, "expression {}", d.name.name);
            out.push('(');
            for (k, p) in d.params.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                out.push_str(&p.name);
            }
            out.push(')');
            let _ = writeln!(out, " {{ {} }}", expr(&d.body));
        }
        Item::Ltl(l) => {
            let _ = writeln!(out, "property ltl {} \"{}\"", l.name.name, l.formula);
        }
        Item::For(f) => {
            let _ = writeln!(
                out,
                "for ({} : {} .. {}) {{",
                f.var.name,
                expr(&f.from),
                expr(&f.to)
            );
            for i in &f.body {
                item(i, out);
            }
            out.push_str("}\n");
        }
    }
}

/// The model as DVE text.
pub fn model(m: &Model) -> String {
    let mut out = String::new();
    for i in &m.items {
        item(i, &mut out);
    }
    out.push_str(if m.synchronous {
        "\nsystem sync"
    } else {
        "\nsystem async"
    });
    if let Some(p) = &m.property {
        let _ = write!(out, " property {}", p.name);
    }
    out.push_str(";\n");
    out
}
