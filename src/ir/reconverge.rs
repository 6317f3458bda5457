//! Reconvergence points for the lockstep executor: for every conditional branch and switch of a
//! lowered function, the first instruction of the block that immediately post-dominates it, where
//! the work-items that took different paths meet again.
//!
//! It works on the flat code array alone (branch targets already resolved), after every other
//! lowering step; it knows nothing of SPIR-V's merge instructions, which describe the same points
//! for structured code but not for the trampoline blocks the lowering adds. A branch with a path
//! that returns gets [`EXIT`]: its work-items meet only when the function returns. Blocks that
//! cannot reach a return (infinite loops) are left out, so a branch into one meets where its other
//! paths do.

use super::{self as ir, Inst, dominators};

/// "No block": the paths meet only at the function's exit.
pub const EXIT: u32 = u32::MAX;

/// Fills in `ir::Function::joins` for every function of `module` (after the last change to its
/// code).
pub fn annotate(module: &mut ir::Module) {
    module.functions.iter_mut().for_each(annotate_function);
}

/// Fills in `f.joins` (after the last change to its code).
pub fn annotate_function(f: &mut ir::Function) {
    let tables = &f.switch_tables;
    // A table that does not exist is validation's to report; here it has no targets.
    let switch_targets = |t: u32| {
        tables
            .get(t as usize)
            .map_or_else(Vec::new, |table| table.cases.iter().map(|c| c.1).chain([table.default]).collect())
    };
    f.joins = joins(&f.code, &switch_targets);
}

/// The reconvergence point of each instruction: for `BranchIf` and `Switch`, the pc of their
/// immediate post-dominator block (or [`EXIT`]); [`EXIT`] for every other instruction.
pub fn joins(code: &[Inst], switch_targets: &dyn Fn(u32) -> Vec<u32>) -> Vec<u32> {
    let mut joins = vec![EXIT; code.len()];
    if code.is_empty() {
        return joins;
    }
    let targets = |inst: &Inst| -> Option<Vec<u32>> {
        match *inst {
            Inst::Branch { target } => Some(vec![target]),
            Inst::BranchIf { then, otherwise, .. } => Some(vec![then, otherwise]),
            Inst::Switch { table, .. } => Some(switch_targets(table)),
            Inst::Return { .. } | Inst::Unreachable { .. } => Some(vec![]),
            _ => None,
        }
    };
    // Block leaders: the entry, every branch target, and whatever follows a terminator.
    let mut leader = vec![false; code.len()];
    leader[0] = true;
    for (pc, inst) in code.iter().enumerate() {
        if let Some(ts) = targets(inst) {
            for t in ts {
                if let Some(l) = leader.get_mut(t as usize) {
                    *l = true;
                }
            }
            if let Some(l) = leader.get_mut(pc + 1) {
                *l = true;
            }
        }
    }
    let starts: Vec<u32> = (0..code.len() as u32).filter(|&pc| leader[pc as usize]).collect();
    let mut block_of = vec![0u32; code.len()];
    for (b, w) in starts.windows(2).enumerate() {
        block_of[w[0] as usize..w[1] as usize].fill(b as u32);
    }
    let last_start = *starts.last().expect("the entry is a leader") as usize;
    block_of[last_start..].fill(starts.len() as u32 - 1);
    let n = starts.len();
    let exit = n; // the virtual exit node
    let succs: Vec<Vec<usize>> = (0..n)
        .map(|b| {
            let end = starts.get(b + 1).map_or(code.len(), |&s| s as usize);
            match targets(&code[end - 1]) {
                Some(ts) if ts.is_empty() => vec![exit],
                Some(ts) => {
                    ts.iter().filter(|&&t| (t as usize) < code.len()).map(|&t| block_of[t as usize] as usize).collect()
                }
                // Falls through into the next block (or off the end: treated as an exit).
                None if end < code.len() => vec![b + 1],
                None => vec![exit],
            }
        })
        .collect();
    // Post-dominators: dominators of the reverse graph rooted at the exit.
    let mut reversed: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for (b, ss) in succs.iter().enumerate() {
        for &s in ss {
            reversed[s].push(b);
        }
    }
    let ipdom = dominators::immediate(&reversed, exit);
    for (pc, inst) in code.iter().enumerate() {
        if matches!(inst, Inst::BranchIf { .. } | Inst::Switch { .. }) {
            let b = block_of[pc] as usize;
            joins[pc] = match ipdom[b] {
                Some(d) if d != exit => starts[d],
                _ => EXIT,
            };
        }
    }
    joins
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ret() -> Inst {
        Inst::Return { src: 0, n: 0 }
    }

    fn mov() -> Inst {
        Inst::Mov { dst: 0, src: 0, n: 1 }
    }

    fn no_switches(_: u32) -> Vec<u32> {
        vec![]
    }

    #[test]
    fn an_if_else_meets_after_both_arms() {
        // 0: if c goto 1 else 3; 1: then; 2: goto 4; 3: else (falls through); 4: join; 5: return
        let code = vec![
            Inst::BranchIf { cond: 0, then: 1, otherwise: 3 },
            mov(),
            Inst::Branch { target: 4 },
            mov(),
            mov(),
            ret(),
        ];
        let joins = joins(&code, &no_switches);
        assert_eq!(joins[0], 4);
        assert_eq!(joins[1], EXIT);
    }

    #[test]
    fn a_loop_exit_branch_meets_at_the_loop_exit() {
        // 0: header: if c goto 1 else 3; 1: body; 2: goto 0; 3: exit; 4: return
        let code =
            vec![Inst::BranchIf { cond: 0, then: 1, otherwise: 3 }, mov(), Inst::Branch { target: 0 }, mov(), ret()];
        assert_eq!(joins(&code, &no_switches)[0], 3);
    }

    #[test]
    fn a_branch_with_an_early_return_meets_at_the_exit() {
        // 0: if c goto 1 else 2; 1: return; 2: work; 3: return
        let code = vec![Inst::BranchIf { cond: 0, then: 1, otherwise: 2 }, ret(), mov(), ret()];
        assert_eq!(joins(&code, &no_switches)[0], EXIT);
    }

    #[test]
    fn a_switch_meets_where_its_cases_do() {
        // 0: switch -> 1, 2, default 3; 1: goto 4; 2: goto 4; 3: (falls) ; 4: return
        let code = vec![
            Inst::Switch { value: 0, bits: 32, table: 0 },
            Inst::Branch { target: 4 },
            Inst::Branch { target: 4 },
            mov(),
            ret(),
        ];
        let table = |_: u32| vec![1, 2, 3];
        assert_eq!(joins(&code, &table)[0], 4);
    }

    #[test]
    fn an_infinite_loop_is_left_out() {
        // 0: if c goto 1 else 2; 1: goto 1 (forever); 2: return
        let code = vec![Inst::BranchIf { cond: 0, then: 1, otherwise: 2 }, Inst::Branch { target: 1 }, ret()];
        assert_eq!(joins(&code, &no_switches)[0], 2);
    }
}
