//! The instructions that speak to the user: `printf` (kept per work-item until the next
//! barrier) and `assert` (a finding). Methods of [`Executor`], inlined into its loop; the
//! formatting lives in `exec::printf`.

use super::super::hooks::GroupHooks;
use super::super::ops::float_lane;
use super::super::printf;
use super::executor::Executor;
use super::faults;
use crate::ir::value::mask;
use crate::ir::{self, Reg};

impl<H: GroupHooks> Executor<'_, '_, H> {
    #[inline(always)]
    pub(super) fn printf(&mut self, dst: Reg, fmt: Reg, first_arg: u32, num_args: u16) {
        let regs = self.regs;
        let arg_list = &self.func.args[first_arg as usize..first_arg as usize + num_args as usize];
        for &l in self.act.lanes {
            let l = l as usize;
            let args: Vec<printf::PrintfArg> =
                arg_list.iter().map(|a| printf_arg(a, |i| regs.r(a.reg as usize + i, l))).collect();
            let ls = &mut self.lanes[l];
            let text = {
                let mut mem = self.space.of(&mut ls.private);
                let fmt = mem.read_c_string(regs.r(fmt as usize, l));
                printf::format(&fmt, &args, &mut |p| mem.read_c_string(p))
            };
            ls.printf.push_str(&text);
            self.flags.printed = true;
            regs.set_r(dst as usize, l, 0);
        }
    }

    /// `assert(cond)` with an optional message (`msg`, a C string): a finding for each lane
    /// whose condition is zero.
    #[inline(always)]
    pub(super) fn assert(&mut self, cond: Reg, bits: u8, (has_msg, msg): (bool, Reg), loc: u32) {
        let regs = self.regs;
        for &l in self.act.lanes {
            let l = l as usize;
            if regs.r(cond as usize, l) & mask(bits) == 0 {
                let ls = &mut self.lanes[l];
                let message = has_msg.then(|| self.space.of(&mut ls.private).read_c_string(regs.r(msg as usize, l)));
                self.sink.findings.push(faults::assertion_failed(message, self.ids.global(l), loc));
            }
        }
    }
}

/// A printf argument of one lane; `slot(i)` reads the argument's `i`-th slot.
fn printf_arg(a: &ir::Arg, slot: impl Fn(usize) -> u64) -> printf::PrintfArg {
    let one = |v: u64| match a.kind {
        ir::ArgKind::Int(b) => printf::PrintfArg::Int { bits: b as u32, value: v & mask(b) },
        ir::ArgKind::Float(b) => printf::PrintfArg::Float(float_lane(v, b)),
        _ => printf::PrintfArg::Pointer(v),
    };
    if a.n > 1 { printf::PrintfArg::Vector((0..a.n as usize).map(|i| one(slot(i))).collect()) } else { one(slot(0)) }
}
