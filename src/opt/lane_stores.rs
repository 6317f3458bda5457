//! Writes of some lanes of a vector in memory (`v[i].x = 1`, `v[i].zy = ...`) as what the source
//! says: clang makes each one a load of the whole vector, a change of some of its lanes (moves,
//! shuffles) and a store of the whole vector back. Taken literally, the load is a read the
//! program never asked for (a read of a write-only buffer, a read that races with another
//! work-item's write of another lane) and the unchanged lanes are written back.
//!
//! Where the vector loaded is used only to build the vector stored to the same pointer in the
//! same straight-line code, and the lanes that change are consecutive and take none of its lanes,
//! the load is dropped and the store keeps only the changed lanes: its layout's leaves for them
//! (all of them when the whole vector is replaced, `v[i].wzyx = w[i]`), its size and so its
//! bounds check whole. What it cannot see: values. It follows which register holds which
//! loaded lane through moves and shuffles only, and gives up on anything else.

use super::base::{Facts, ends_block};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst, Layout, Reg};

/// Rewrites every such load and store of `func`, marking the dropped loads in `keep`; returns
/// how many stores were narrowed. New layouts go to `module`.
#[allow(clippy::needless_range_loop)] // `q` indexes the code, `keep` and the layouts' users alike
pub fn narrow_lane_stores(module: &mut ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
    // Counted once: a narrowed store only reads fewer registers, so stale counts keep more.
    let facts = Facts::of(module, func);
    let mut narrowed = 0;
    for q in 0..func.code.len() {
        let Inst::Load { dst: loaded, ptr, layout, .. } = func.code[q] else { continue };
        if !keep[q] {
            continue;
        }
        let Some((r, src, lanes)) = find_store(module, func, &facts, q, loaded, ptr, layout) else { continue };
        let Inst::Store { loc, align, .. } = func.code[r] else { continue };
        let whole = &module.layouts[layout as usize];
        let narrow = Layout { size: whole.size, leaves: whole.leaves[lanes.clone()].to_vec() };
        let new_layout = module.layouts.len() as u32;
        module.layouts.push(narrow);
        func.code[r] = Inst::Store { src: src + lanes.start as Reg, ptr, layout: new_layout, loc, align };
        keep[q] = false;
        narrowed += 1;
    }
    narrowed
}

/// What a register holds between the load and the store: a lane of the loaded vector, or
/// something else.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    Loaded(usize),
    Other,
}

/// The store back to `ptr` that the load at `q` feeds, with its source register and the range of
/// lanes that change, if the rewrite is sound.
#[allow(clippy::needless_range_loop)] // `r` indexes the code and the branch targets alike
fn find_store(
    module: &ir::Module,
    func: &Function,
    facts: &Facts,
    q: usize,
    loaded: Reg,
    ptr: Reg,
    layout: u32,
) -> Option<(usize, Reg, std::ops::Range<usize>)> {
    let lanes = module.layouts.get(layout as usize)?.leaves.len();
    let is_loaded = |r: Reg| (loaded..loaded + lanes as Reg).contains(&r);
    // Registers known to hold a loaded lane (few: a vector's lanes and their copies).
    let mut held: Vec<(Reg, usize)> = (0..lanes).map(|j| (loaded + j as Reg, j)).collect();
    let lookup =
        |held: &[(Reg, usize)], r: Reg| held.iter().find(|h| h.0 == r).map_or(Held::Other, |h| Held::Loaded(h.1));
    let (reads, targets) = (&facts.reads, &facts.targets);
    let mut reads_between = vec![0u32; func.template.len()];
    for r in q + 1..func.code.len() {
        if targets[r] || ends_block(&func.code[r - 1]) {
            return None;
        }
        let inst = &func.code[r];
        if let Inst::Store { src, ptr: p, layout: l, .. } = *inst
            && p == ptr
            && l == layout
        {
            // Every loaded register and every register holding a loaded lane is read here and
            // between only, and lane j of the store is unchanged when it holds loaded lane j.
            // A changed lane must not take another lane of this load: the load goes.
            let stored = |j: usize| lookup(&held, src + j as Reg) == Held::Loaded(j);
            let changed: Vec<usize> = (0..lanes).filter(|&j| !stored(j)).collect();
            let (first, last) = (*changed.first()?, *changed.last()?);
            let fresh = changed.iter().all(|&j| lookup(&held, src + j as Reg) == Held::Other);
            if last - first + 1 != changed.len() || !fresh {
                return None;
            }
            for j in 0..lanes {
                reads_between[(src + j as Reg) as usize] += 1;
            }
            let private = held.iter().all(|&(reg, _)| reads[reg as usize] == reads_between[reg as usize]);
            return private.then_some((r, src, first..last + 1));
        }
        // Reads of loaded lanes are only moves and shuffles, counted; other writes forget.
        let mut reads_loaded = false;
        operands::for_each(module, func, inst, |reg, n, u| {
            for x in reg..reg + n as Reg {
                if u == Use::Read {
                    if let Some(c) = reads_between.get_mut(x as usize) {
                        *c += 1;
                    }
                    reads_loaded |= lookup(&held, x) != Held::Other;
                }
            }
        });
        let mut written: Vec<(Reg, Held)> = Vec::new();
        match *inst {
            Inst::Mov { dst, src, n } => {
                written.extend((0..n as Reg).map(|i| (dst + i, lookup(&held, src + i))));
            }
            Inst::Shuffle { dst, first, n } => {
                let sources = func.lanes.get(first as usize..first as usize + n as usize)?;
                written.extend(sources.iter().enumerate().map(|(i, &s)| (dst + i as Reg, lookup(&held, s))));
            }
            _ if reads_loaded => return None,
            _ => {
                let mut writes = Vec::new();
                operands::for_each(module, func, inst, |reg, n, u| {
                    if u == Use::Write {
                        writes.extend((reg..reg + n as Reg).map(|x| (x, Held::Other)));
                    }
                });
                written = writes;
            }
        }
        for (reg, h) in written {
            if reg == ptr || is_loaded(reg) && h != Held::Loaded((reg - loaded) as usize) {
                return None;
            }
            held.retain(|x| x.0 != reg);
            if let Held::Loaded(j) = h {
                held.push((reg, j));
            }
        }
    }
    None
}
