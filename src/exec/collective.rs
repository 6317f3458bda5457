//! Work-group collective functions (`work_group_all/any/broadcast/reduce/scan_*`, and their
//! sub-group forms, a sub-group being the whole work-group here): given every work-item's
//! contribution in local linear order, the result each one receives.

use super::half;
use crate::ir::value::{mask, sign_extend};
use crate::ir::{CollectiveOp, GroupArith, HalfRound};

/// One work-item's part in a collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contribution {
    /// Its value, `bits` wide (a boolean for all/any).
    pub value: u64,
    /// For a broadcast: the local linear id of the work-item whose value it asks for.
    pub source: u64,
}

fn float(v: u64, bits: u8) -> f64 {
    match bits {
        64 => f64::from_bits(v),
        16 => half::to_f32(v as u16) as f64,
        _ => f32::from_bits(v as u32) as f64,
    }
}

fn bits_of(x: f64, bits: u8) -> u64 {
    match bits {
        64 => x.to_bits(),
        16 => half::from_f64(x, HalfRound::Rte) as u64,
        _ => (x as f32).to_bits() as u64,
    }
}

/// The neutral element of an arithmetic (the first value of an exclusive scan).
fn identity(arith: GroupArith, bits: u8) -> u64 {
    let m = mask(bits);
    match arith {
        GroupArith::IAdd | GroupArith::UMax => 0,
        GroupArith::FAdd => bits_of(0.0, bits),
        GroupArith::UMin => m,
        GroupArith::SMin => m >> 1,
        GroupArith::SMax => (m >> 1) + 1,
        GroupArith::FMin => bits_of(f64::INFINITY, bits),
        GroupArith::FMax => bits_of(f64::NEG_INFINITY, bits),
    }
}

fn combine(arith: GroupArith, bits: u8, a: u64, b: u64) -> u64 {
    let m = mask(bits);
    match arith {
        GroupArith::IAdd => a.wrapping_add(b) & m,
        GroupArith::UMin => (a & m).min(b & m),
        GroupArith::UMax => (a & m).max(b & m),
        GroupArith::SMin => (sign_extend(a, bits).min(sign_extend(b, bits)) as u64) & m,
        GroupArith::SMax => (sign_extend(a, bits).max(sign_extend(b, bits)) as u64) & m,
        // Rounded to the type at every step, as a device adding in order would.
        GroupArith::FAdd => bits_of(float(a, bits) + float(b, bits), bits),
        GroupArith::FMin => bits_of(float(a, bits).min(float(b, bits)), bits),
        GroupArith::FMax => bits_of(float(a, bits).max(float(b, bits)), bits),
    }
}

/// The result of each work-item, in the order of `parts` (local linear order).
pub fn results(op: CollectiveOp, bits: u8, parts: &[Contribution]) -> Vec<u64> {
    match op {
        CollectiveOp::All => {
            let all = parts.iter().all(|p| p.value != 0) as u64;
            vec![all; parts.len()]
        }
        CollectiveOp::Any => {
            let any = parts.iter().any(|p| p.value != 0) as u64;
            vec![any; parts.len()]
        }
        CollectiveOp::Broadcast => {
            parts.iter().map(|p| parts.get(p.source as usize).map_or(0, |from| from.value & mask(bits))).collect()
        }
        CollectiveOp::Reduce(arith) => {
            let total = parts.iter().fold(identity(arith, bits), |acc, p| combine(arith, bits, acc, p.value));
            vec![total; parts.len()]
        }
        CollectiveOp::InclusiveScan(arith) => {
            let mut acc = identity(arith, bits);
            parts
                .iter()
                .map(|p| {
                    acc = combine(arith, bits, acc, p.value);
                    acc
                })
                .collect()
        }
        CollectiveOp::ExclusiveScan(arith) => {
            let mut acc = identity(arith, bits);
            parts
                .iter()
                .map(|p| {
                    let before = acc;
                    acc = combine(arith, bits, acc, p.value);
                    before
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(values: &[i32]) -> Vec<Contribution> {
        values.iter().map(|&v| Contribution { value: v as u32 as u64, source: 0 }).collect()
    }

    fn signed(results: Vec<u64>) -> Vec<i32> {
        results.into_iter().map(|v| v as u32 as i32).collect()
    }

    #[test]
    fn integer_reductions_and_scans() {
        let parts = ints(&[3, -1, 4, -1, 5]);
        assert_eq!(signed(results(CollectiveOp::Reduce(GroupArith::IAdd), 32, &parts)), vec![10; 5]);
        assert_eq!(signed(results(CollectiveOp::Reduce(GroupArith::SMin), 32, &parts)), vec![-1; 5]);
        assert_eq!(
            signed(results(CollectiveOp::Reduce(GroupArith::UMax), 32, &parts)),
            vec![-1; 5],
            "-1 is 0xffffffff"
        );
        assert_eq!(signed(results(CollectiveOp::InclusiveScan(GroupArith::IAdd), 32, &parts)), vec![3, 2, 6, 5, 10]);
        assert_eq!(signed(results(CollectiveOp::ExclusiveScan(GroupArith::IAdd), 32, &parts)), vec![0, 3, 2, 6, 5]);
        assert_eq!(
            signed(results(CollectiveOp::ExclusiveScan(GroupArith::SMax), 32, &parts)),
            vec![i32::MIN, 3, 3, 4, 4],
            "an exclusive max scan starts from the smallest value"
        );
        assert_eq!(
            results(CollectiveOp::ExclusiveScan(GroupArith::UMin), 32, &parts)[0],
            u32::MAX as u64,
            "an exclusive unsigned min scan starts from the largest value"
        );
    }

    #[test]
    fn float_scans_add_in_order() {
        let parts: Vec<Contribution> =
            [1.0f32, 1e8, -1e8, 0.5].iter().map(|f| Contribution { value: f.to_bits() as u64, source: 0 }).collect();
        let scan: Vec<f32> = results(CollectiveOp::InclusiveScan(GroupArith::FAdd), 32, &parts)
            .into_iter()
            .map(|v| f32::from_bits(v as u32))
            .collect();
        assert_eq!(scan, vec![1.0, 1e8, 0.0, 0.5], "each step rounds to float, in local id order");
        let min = results(CollectiveOp::ExclusiveScan(GroupArith::FMin), 32, &parts)[0];
        assert_eq!(f32::from_bits(min as u32), f32::INFINITY);
    }

    #[test]
    fn half_reductions_round_to_half() {
        let parts: Vec<Contribution> =
            [0x3c00u64, 0x4000, 0x3800, 0xbc00].iter().map(|&v| Contribution { value: v, source: 0 }).collect();
        assert_eq!(results(CollectiveOp::Reduce(GroupArith::FAdd), 16, &parts), vec![0x4100; 4], "1 + 2 + 0.5 - 1");
        assert_eq!(results(CollectiveOp::Reduce(GroupArith::FMin), 16, &parts), vec![0xbc00; 4]);
        assert_eq!(results(CollectiveOp::ExclusiveScan(GroupArith::FMax), 16, &parts)[0], 0xfc00, "-inf");
    }

    #[test]
    fn all_any_and_broadcast() {
        let flags = ints(&[1, 1, 0]);
        assert_eq!(results(CollectiveOp::All, 1, &flags), vec![0; 3]);
        assert_eq!(results(CollectiveOp::Any, 1, &flags), vec![1; 3]);
        let parts: Vec<Contribution> = [10u64, 20, 30].iter().map(|&v| Contribution { value: v, source: 2 }).collect();
        assert_eq!(results(CollectiveOp::Broadcast, 32, &parts), vec![30; 3]);
    }
}
