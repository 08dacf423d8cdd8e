//! Random small concurrent programs in the text format, deterministic from a seed, for
//! holding the engines to the reference explorer. Text (not IR) so that a failing case can
//! be printed, saved as a `.fen` regression file, and run with the CLI.

mod barriers;
mod c;
mod heap;
mod loops;
mod threads;
mod words;
pub use barriers::barrier_program;
pub use c::c_program;
pub use heap::{future_object_program, heap_program, listing, mutex_reinit_program};
pub use loops::lock_loop_program;
pub use threads::threads_program;
pub use words::mutex_word_program;

/// SplitMix64: tiny, fast, and the same sequence on every platform for a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    /// Uniform in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// Shape of the generated programs.
#[derive(Clone, Debug)]
pub struct Shape {
    pub threads: (u64, u64),
    pub locations: (u64, u64),
    pub instructions: (u64, u64),
    /// Percent chance that the program declares a mutex and uses it.
    pub mutex: u64,
    /// At most this many instructions in all threads together (keeps the exhaustive
    /// reference explorer fast on 4-thread programs).
    pub total: u64,
    /// Percent chance, per top-level instruction, of a loop instead: a spin loop that
    /// waits for a location to change, or a loop that retries a read-modify-write. Run
    /// such programs with a loop bound (`unroll`), as they may not terminate.
    pub loops: u64,
    /// Whether some instructions fault: an unlock of a mutex the thread does not hold, a
    /// read-modify-write whose operand may divide by zero. For engines explored with
    /// `--all` (the oracle tests); off, a program is the same as before these existed.
    pub faults: bool,
}

impl Default for Shape {
    /// The shape the engine property tests use: 2-4 threads, 1-4 locations, 1-6
    /// instructions per thread.
    fn default() -> Self {
        Shape {
            threads: (2, 4),
            locations: (1, 4),
            instructions: (1, 6),
            mutex: 15,
            total: 12,
            loops: 0,
            faults: false,
        }
    }
}

impl Shape {
    /// The default shape with loops in some programs.
    pub fn with_loops() -> Self {
        Shape {
            loops: 8,
            ..Shape::default()
        }
    }

    /// The shape of the DPOR oracle and parallel property tests, which explore on after
    /// violations: with faulting instructions, and with loops or not.
    pub fn oracle(loops: bool) -> Self {
        let base = if loops {
            Shape::with_loops()
        } else {
            Shape::default()
        };
        Shape {
            faults: true,
            ..base
        }
    }
}

/// A random program for `seed`.
pub fn program(seed: u64, shape: &Shape) -> String {
    let mut r = Rng::new(seed);
    let nt = r.range(shape.threads.0, shape.threads.1);
    let nl = r.range(shape.locations.0, shape.locations.1);
    let mutex = r.chance(shape.mutex);
    let locs: Vec<String> = (0..nl).map(|i| format!("x{i}")).collect();
    let mut s = format!(
        "// generated from seed {seed}\nshared {};\n",
        locs.iter()
            .map(|l| format!("{l} = 0"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if mutex {
        s.push_str("mutex m;\n");
    }
    let mut budget = shape.total.max(nt * shape.instructions.0);
    for t in 0..nt {
        s.push_str(&format!("thread t{t} {{\n"));
        // Leave every later thread its minimum.
        let reserve = (nt - t - 1) * shape.instructions.0;
        let hi = shape
            .instructions
            .1
            .min(budget - reserve)
            .max(shape.instructions.0);
        let n = r.range(shape.instructions.0, hi);
        budget -= n;
        let mut regs = 0u32;
        for _ in 0..n {
            let stmt = if shape.loops > 0 && r.chance(shape.loops) {
                looped(&mut r, &locs, &mut regs, mutex)
            } else {
                instruction(&mut r, &locs, &mut regs, mutex, shape.faults, true)
            };
            s.push_str("    ");
            s.push_str(&stmt);
            s.push('\n');
        }
        s.push_str("}\n");
    }
    s
}

/// A loop: a spin loop (which the spin-loop pass turns into an assume), or one whose body
/// has a side effect and so must stay a loop.
fn looped(r: &mut Rng, locs: &[String], regs: &mut u32, mutex: bool) -> String {
    let x = &locs[r.range(0, locs.len() as u64 - 1) as usize];
    let v = r.range(0, 2);
    // Iterations that take the mutex and give it back: dropped when they do nothing
    // else (a lock zero-net-effect loop), kept when they store.
    if mutex && r.chance(50) {
        let y = &locs[r.range(0, locs.len() as u64 - 1) as usize];
        return match r.range(0, 2) {
            0 => format!("while ({x} == {v}) {{ lock(m); unlock(m); }}"),
            1 => format!("while ({x} == {v}) {{ lock(m); unlock(m); lock(m); unlock(m); }}"),
            _ => format!(
                "while ({x} == {v}) {{ lock(m); {y} = {}; unlock(m); }}",
                r.range(1, 2)
            ),
        };
    }
    // Iterations that store: one the next iteration stores again over, unread, is dropped
    // (a CAS retry loop preparing its node); the others' reads of those cells, in the
    // window or not, decide it.
    if r.chance(30) {
        // A copy stores what the iteration read, as `n->next = top` does: a store seen in
        // the window then shows a value no execution without the iteration has.
        let y = r.pick(locs).clone();
        let w = r.pick(locs).clone();
        if r.chance(50) {
            return format!("while ({x} == {v}) {{ {y} = {w}; }}");
        }
        let z = r.pick(locs);
        return format!(
            "while ({x} == {v}) {{ {y} = {w}; {z} = {}; }}",
            r.range(1, 3)
        );
    }
    let reg = format!("r{}", *regs);
    match r.range(0, 2) {
        0 => return format!("while ({x} == {v}) {{ }}"),
        _ => *regs += 1,
    }
    match r.range(0, 3) {
        0 => format!("{reg} = {x}; while ({reg} != {v}) {{ {reg} = {x}; }}"),
        // The body writes a register that is read after the loop (by the final state, or
        // by an assertion): the iterations are not all alike.
        1 => format!("{reg} = 1; while ({x} == {v}) {{ {reg} = 0; }}"),
        2 => format!("{reg} = 1; while ({x} == {v}) {{ {reg} = 2; }} assert({reg} == 1);"),
        _ => {
            let w = r.range(1, 3);
            format!("{reg} = 0; while ({reg} == 0) {{ {reg} = cas({x}, {v}, {w}); }}")
        }
    }
}

fn value(r: &mut Rng, regs: u32) -> String {
    if regs > 0 && r.chance(30) {
        format!("r{} + 1", r.range(0, regs as u64 - 1))
    } else {
        r.range(1, 3).to_string()
    }
}

fn instruction(
    r: &mut Rng,
    locs: &[String],
    regs: &mut u32,
    mutex: bool,
    faults: bool,
    top: bool,
) -> String {
    let x = &locs[r.range(0, locs.len() as u64 - 1) as usize];
    let k = r.range(0, 99);
    let fresh = |regs: &mut u32| {
        *regs += 1;
        format!("r{}", *regs - 1)
    };
    match k {
        0..=29 => {
            let v = value(r, *regs);
            format!("{x} = {v};")
        }
        30..=57 => format!("{} = {x};", fresh(regs)),
        58..=61 => "fence;".to_string(),
        // Store-store fences: they change which updates are enabled under PSO, which the
        // engines' enabledness and happens-before must follow.
        62..=64 => "fence ss;".to_string(),
        65..=70 => {
            let (a, b) = (r.range(0, 2), r.range(1, 3));
            format!("{} = cas({x}, {a}, {b});", fresh(regs))
        }
        71..=76 => format!("{} = fetch_add({x}, 1);", fresh(regs)),
        77..=81 => {
            let v = r.range(1, 3);
            format!("{} = xchg({x}, {v});", fresh(regs))
        }
        82..=89 if top && *regs > 0 => {
            let c = r.range(0, *regs as u64 - 1);
            let v = r.range(0, 2);
            let inner = instruction(r, locs, regs, false, false, false);
            format!("if (r{c} == {v}) {{ {inner} }}")
        }
        90..=92 if *regs > 0 => {
            let c = r.range(0, *regs as u64 - 1);
            let v = r.range(0, 2);
            format!("assume(r{c} != {v});")
        }
        93..=96 if mutex && top => {
            let inner = instruction(r, locs, regs, false, false, false);
            format!("lock(m); {inner} unlock(m);")
        }
        // Instructions that fault, the first when the thread does not hold the mutex,
        // the second when the register read 0. A fault waits for the buffers its
        // instruction waits for (all of them; the location's channel): the clocks must
        // order it after its thread's updates, or a reversal runs it before them.
        97 if faults && mutex && top => "unlock(m);".to_string(),
        98 if faults && *regs > 0 => {
            let c = r.range(0, *regs as u64 - 1);
            format!("{} = fetch_add({x}, 1 / r{c});", fresh(regs))
        }
        _ => {
            let v = value(r, *regs);
            format!("{x} = {v};")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic() {
        let a = program(42, &Shape::default());
        assert_eq!(a, program(42, &Shape::default()));
        assert_ne!(a, program(43, &Shape::default()));
    }
}
