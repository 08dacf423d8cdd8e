//! Each thread on its own: every path it can take, given the values its reads may return.
//!
//! A read may return any value some write could give its location; that set is the least
//! fixpoint of "run every thread with these values, collect what they write" from the
//! initial values. Later, a candidate execution picks one path per thread and, for every
//! read, a write of the value the path assumed: every herd7 candidate is then met exactly
//! once, because a path and its read values are fixed by the choice of `rf`.

use crate::program::{BinOp, Expr, Ins, LocId, Program, Reg, Thread, UpdateOp, Val};
use crate::Error;
use std::collections::BTreeSet;

/// At most this many events per thread: dependencies are bitmasks over a thread's events.
pub const MAX_THREAD_EVENTS: usize = 128;
/// A path longer than this is taken for a loop that does not end.
const MAX_STEPS: usize = 10_000;
/// Paths per thread, in all.
const MAX_PATHS: usize = 200_000;
/// Values one location may hold.
const MAX_VALUES: usize = 512;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    Update,
    Fence,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathEvent {
    pub kind: Kind,
    pub loc: Option<LocId>,
    pub read: Option<Val>,
    pub write: Option<Val>,
    /// Indices into the program's tag table.
    pub tags: Vec<u16>,
    /// The instruction instance: events of one instance are not ordered by `po`.
    pub instance: u32,
    /// Bits: the thread's earlier events (reads) this one's address, written value, or
    /// reaching depends on.
    pub addr_deps: u128,
    pub data_deps: u128,
    pub ctrl_deps: u128,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub events: Vec<PathEvent>,
    pub regs: Vec<Val>,
    /// The path ended at a [`Ins::CutOff`]: a loop's unrolling bound.
    pub cut: bool,
}

/// Interned tag names.
#[derive(Default, Debug)]
pub struct Tags {
    pub names: Vec<String>,
}

impl Tags {
    pub fn id(&mut self, name: &str) -> u16 {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i as u16,
            None => {
                self.names.push(name.to_string());
                (self.names.len() - 1) as u16
            }
        }
    }
}

type Domains = Vec<BTreeSet<Val>>;

/// Every path of every thread, with the values each location may hold.
pub fn all_paths(p: &Program, tags: &mut Tags) -> Result<Vec<Vec<Path>>, Error> {
    let mut domains: Domains = p
        .locations
        .iter()
        .map(|l| BTreeSet::from([l.init]))
        .collect();
    let mut tagged: Vec<Vec<Vec<u16>>> = Vec::new();
    for t in &p.threads {
        tagged.push(
            t.code
                .iter()
                .map(|ins| match ins {
                    Ins::Read { tags: ts, .. }
                    | Ins::Write { tags: ts, .. }
                    | Ins::Update { tags: ts, .. }
                    | Ins::Fence { tags: ts } => ts.iter().map(|n| tags.id(n)).collect(),
                    _ => Vec::new(),
                })
                .collect(),
        );
    }
    // A value a read returns comes from a write whose value was computed from values read
    // before, and so on: a chain of distinct write events of one execution. So a value
    // needs at most as many rounds as an execution has writes; later rounds only add
    // values no execution can produce (a `LOCK INC` feeding itself for ever).
    let mut round = 0;
    loop {
        round += 1;
        let mut paths = Vec::new();
        let mut next = domains.clone();
        let mut writes = 0;
        for (ti, t) in p.threads.iter().enumerate() {
            let ps = thread_paths(p, ti, t, &tagged[ti], &domains)?;
            let mut most = 0;
            for path in &ps {
                let mut w = 0;
                for e in &path.events {
                    if let (Some(l), Some(v)) = (e.loc, e.write) {
                        next[l as usize].insert(v);
                        w += 1;
                    }
                }
                most = most.max(w);
            }
            writes += most;
            paths.push(ps);
        }
        if let Some((l, _)) = next.iter().enumerate().find(|(_, d)| d.len() > MAX_VALUES) {
            return Err(Error::Limit(format!(
                "location {} may hold more than {MAX_VALUES} values",
                p.locations[l].name
            )));
        }
        if next == domains || round > writes {
            return Ok(paths);
        }
        domains = next;
    }
}

#[derive(Clone)]
struct State {
    pc: usize,
    regs: Vec<(Val, u128)>,
    events: Vec<PathEvent>,
    ctrl: u128,
    instance: u32,
    steps: usize,
}

fn thread_paths(
    p: &Program,
    ti: usize,
    t: &Thread,
    tags: &[Vec<u16>],
    domains: &Domains,
) -> Result<Vec<Path>, Error> {
    let mut regs = vec![(Val::Int(0), 0u128); t.regs.len()];
    for &(r, v) in &t.init {
        regs[r as usize] = (v, 0);
    }
    let mut out = Vec::new();
    let mut stack = vec![State {
        pc: 0,
        regs,
        events: Vec::new(),
        ctrl: 0,
        instance: 0,
        steps: 0,
    }];
    let err = |msg: String| Error::Program(format!("thread {}: {msg}", t.name));
    while let Some(mut s) = stack.pop() {
        loop {
            if s.steps > MAX_STEPS {
                return Err(err(format!(
                    "a path runs more than {MAX_STEPS} instructions: a loop that does not end?"
                )));
            }
            s.steps += 1;
            let Some(ins) = t.code.get(s.pc) else {
                out.push(Path {
                    events: s.events,
                    regs: s.regs.into_iter().map(|(v, _)| v).collect(),
                    cut: false,
                });
                if out.len() > MAX_PATHS {
                    return Err(Error::Limit(format!(
                        "thread {} has more than {MAX_PATHS} paths",
                        t.name
                    )));
                }
                break;
            };
            let pc = s.pc;
            s.pc += 1;
            let ev = |s: &State| -> Result<(), Error> {
                if s.events.len() >= MAX_THREAD_EVENTS {
                    return Err(err(format!(
                        "more than {MAX_THREAD_EVENTS} memory events on one path"
                    )));
                }
                Ok(())
            };
            match ins {
                Ins::Instance => s.instance += 1,
                Ins::CutOff => {
                    out.push(Path {
                        events: s.events,
                        regs: s.regs.into_iter().map(|(v, _)| v).collect(),
                        cut: true,
                    });
                    break;
                }
                Ins::Set { dst, expr } => {
                    let v = eval(expr, &s.regs).map_err(&err)?;
                    s.regs[*dst as usize] = v;
                }
                Ins::Jump(to) => s.pc = *to,
                Ins::Branch { cond, target } => {
                    let (v, d) = eval(cond, &s.regs).map_err(&err)?;
                    s.ctrl |= d;
                    if v.truthy() {
                        s.pc = *target;
                    }
                }
                Ins::Choice(to) => {
                    let mut other = s.clone();
                    other.pc = *to;
                    stack.push(other);
                }
                Ins::Assume(cond) => {
                    let (v, _) = eval(cond, &s.regs).map_err(&err)?;
                    if !v.truthy() {
                        break;
                    }
                }
                Ins::Fence { .. } => {
                    ev(&s)?;
                    s.events.push(PathEvent {
                        kind: Kind::Fence,
                        loc: None,
                        read: None,
                        write: None,
                        tags: tags[pc].clone(),
                        instance: s.instance,
                        addr_deps: 0,
                        data_deps: 0,
                        ctrl_deps: s.ctrl,
                    });
                }
                Ins::Write { addr, value, .. } => {
                    ev(&s)?;
                    let (l, ad) = location(p, addr, &s.regs).map_err(&err)?;
                    let (v, dd) = eval(value, &s.regs).map_err(&err)?;
                    s.events.push(PathEvent {
                        kind: Kind::Write,
                        loc: Some(l),
                        read: None,
                        write: Some(v),
                        tags: tags[pc].clone(),
                        instance: s.instance,
                        addr_deps: ad,
                        data_deps: dd,
                        ctrl_deps: s.ctrl,
                    });
                }
                Ins::Read { dst, addr, .. } => {
                    ev(&s)?;
                    let (l, ad) = location(p, addr, &s.regs).map_err(&err)?;
                    let bit = 1u128 << s.events.len();
                    let mut values = domains[l as usize].iter();
                    let first = *values.next().expect("a location has its initial value");
                    for &v in values {
                        let mut other = s.clone();
                        read_event(&mut other, *dst, l, v, ad, bit, &tags[pc]);
                        stack.push(other);
                    }
                    read_event(&mut s, *dst, l, first, ad, bit, &tags[pc]);
                }
                Ins::Update {
                    dst,
                    addr,
                    expected,
                    op,
                    ..
                } => {
                    ev(&s)?;
                    let (l, ad) = location(p, addr, &s.regs).map_err(&err)?;
                    let bit = 1u128 << s.events.len();
                    let olds: Vec<(Val, u128)> = match expected {
                        Some(e) => vec![eval(e, &s.regs).map_err(&err)?],
                        None => domains[l as usize].iter().map(|&v| (v, 0)).collect(),
                    };
                    let (operand, od) = match op {
                        UpdateOp::Set(e) | UpdateOp::Apply(_, e) => {
                            eval(e, &s.regs).map_err(&err)?
                        }
                    };
                    for (k, &(old, _)) in olds.iter().enumerate() {
                        let new = match op {
                            UpdateOp::Set(_) => operand,
                            UpdateOp::Apply(o, _) => binop(*o, old, operand).map_err(&err)?,
                        };
                        let mut target = if k + 1 == olds.len() {
                            None
                        } else {
                            Some(s.clone())
                        };
                        let st = target.as_mut().unwrap_or(&mut s);
                        st.events.push(PathEvent {
                            kind: Kind::Update,
                            loc: Some(l),
                            read: Some(old),
                            write: Some(new),
                            tags: tags[pc].clone(),
                            instance: st.instance,
                            addr_deps: ad,
                            data_deps: od,
                            ctrl_deps: st.ctrl,
                        });
                        if let Some(d) = dst {
                            st.regs[*d as usize] = (old, bit);
                        }
                        if let Some(other) = target {
                            stack.push(other);
                        }
                    }
                }
            }
        }
    }
    let _ = ti;
    Ok(out)
}

fn read_event(
    s: &mut State,
    dst: Option<Reg>,
    l: LocId,
    v: Val,
    addr_deps: u128,
    bit: u128,
    tags: &[u16],
) {
    s.events.push(PathEvent {
        kind: Kind::Read,
        loc: Some(l),
        read: Some(v),
        write: None,
        tags: tags.to_vec(),
        instance: s.instance,
        addr_deps,
        data_deps: 0,
        ctrl_deps: s.ctrl,
    });
    if let Some(d) = dst {
        s.regs[d as usize] = (v, bit);
    }
}

fn location(p: &Program, addr: &Expr, regs: &[(Val, u128)]) -> Result<(LocId, u128), String> {
    match eval(addr, regs)? {
        (Val::Loc(l), d) if (l as usize) < p.locations.len() => Ok((l, d)),
        (v, _) => Err(format!("{v} is not the address of a location")),
    }
}

/// A value and the reads it depends on.
fn eval(e: &Expr, regs: &[(Val, u128)]) -> Result<(Val, u128), String> {
    Ok(match e {
        Expr::Val(v) => (*v, 0),
        Expr::Reg(r) => regs[*r as usize],
        Expr::Not(a) => {
            let (v, d) = eval(a, regs)?;
            (Val::Int(!v.truthy() as i64), d)
        }
        Expr::Neg(a) => match eval(a, regs)? {
            (Val::Int(v), d) => (Val::Int(v.wrapping_neg()), d),
            (v, _) => return Err(format!("cannot negate {v}")),
        },
        Expr::Bin(op, a, b) => {
            let (x, dx) = eval(a, regs)?;
            let (y, dy) = eval(b, regs)?;
            (binop(*op, x, y)?, dx | dy)
        }
    })
}

pub fn binop(op: BinOp, x: Val, y: Val) -> Result<Val, String> {
    use BinOp::*;
    let b = |c: bool| Val::Int(c as i64);
    match op {
        Eq => return Ok(b(x == y)),
        Ne => return Ok(b(x != y)),
        LAnd => return Ok(b(x.truthy() && y.truthy())),
        LOr => return Ok(b(x.truthy() || y.truthy())),
        _ => {}
    }
    let (Val::Int(a), Val::Int(c)) = (x, y) else {
        return Err(format!("cannot compute {x} {op:?} {y}"));
    };
    Ok(match op {
        Add => Val::Int(a.wrapping_add(c)),
        Sub => Val::Int(a.wrapping_sub(c)),
        Mul => Val::Int(a.wrapping_mul(c)),
        Div | Rem if c == 0 => return Err("division by zero".into()),
        Div => Val::Int(a.wrapping_div(c)),
        Rem => Val::Int(a.wrapping_rem(c)),
        And => Val::Int(a & c),
        Or => Val::Int(a | c),
        Xor => Val::Int(a ^ c),
        Shl => Val::Int(a.wrapping_shl(c as u32)),
        Shr => Val::Int(a.wrapping_shr(c as u32)),
        Lt => b(a < c),
        Le => b(a <= c),
        Gt => b(a > c),
        Ge => b(a >= c),
        Eq | Ne | LAnd | LOr => unreachable!(),
    })
}
