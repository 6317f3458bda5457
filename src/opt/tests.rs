//! The optimiser's tests: small functions run through the whole of [`super::optimise`], so
//! that each pass is seen together with those that run before and after it (frames left
//! unpacked, so that the registers a test names keep their numbers; packing has its own test).

/// `code` as a function of parameters r0 and r1 and eight registers, run through every pass but
/// packing: what the passes counted, and the code left.
fn optimised_function(code: Vec<crate::ir::Inst>) -> (crate::opt::Stats, Vec<crate::ir::Inst>) {
    let locs = vec![u32::MAX; code.len()];
    let template = vec![0; 8];
    let params = vec![(0, 1), (1, 1)];
    let f = crate::ir::Function { name: "f".into(), code, locs, template, params, ..Default::default() };
    let mut m = crate::ir::Module { functions: vec![f], ..crate::ir::Module::default() };
    let stats = crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
    (stats, m.functions.remove(0).code)
}

mod peephole {
    use crate::ir::{self, Conv, Function, Index, Inst};
    use crate::ir::{IntOp, SwitchTable};
    use crate::opt::Stats;

    fn function(code: Vec<Inst>, slots: usize) -> Function {
        let locs = (0..code.len() as u32).collect();
        Function { name: "f".into(), code, locs, template: vec![0; slots], ..Function::default() }
    }

    fn module(functions: Vec<Function>) -> ir::Module {
        ir::Module { functions, ..ir::Module::default() }
    }

    fn add(dst: u32, a: u32) -> Inst {
        Inst::IntBin { op: IntOp::Add, bits: 32, dst, a, b: a, n: 1 }
    }

    #[test]
    fn branches_to_branches_are_threaded_and_fallthrough_branches_removed() {
        // 0: add; 1: branch 2; 2: branch 4; 3: add (unreachable); 4: br r0 ? 5 : 6;
        // 5: branch 7; 6: branch 7; 7: return
        let code = vec![
            add(1, 0),
            Inst::Branch { target: 2 },
            Inst::Branch { target: 4 },
            add(2, 0),
            Inst::BranchIf { cond: 0, then: 5, otherwise: 6 },
            Inst::Branch { target: 7 },
            Inst::Branch { target: 7 },
            Inst::Return { src: 0, n: 0 },
        ];
        let mut m = module(vec![function(code, 3)]);
        let stats = crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
        let f = &m.functions[0];
        // The conditional branch's targets both land on the return: it becomes a branch to the
        // next instruction, and goes too.
        assert!(matches!(f.code[..], [Inst::IntBin { .. }, Inst::Return { .. }]), "{:?}", f.code);
        assert_eq!(f.locs, [0, 7], "each instruction keeps its own location");
        assert_eq!(stats.removed_instructions, 6);
        assert!(stats.threaded_targets >= 3);
    }

    #[test]
    fn loops_keep_their_back_edge_and_targets_are_renumbered() {
        // 0: branch 1; 1: add; 2: br r1 ? 3 : 5; 3: branch 4; 4: branch 1; 5: switch; 6: return
        let code = vec![
            Inst::Branch { target: 1 },
            add(1, 1),
            Inst::BranchIf { cond: 1, then: 3, otherwise: 5 },
            Inst::Branch { target: 4 },
            Inst::Branch { target: 1 },
            Inst::Switch { value: 1, bits: 32, table: 0 },
            Inst::Return { src: 0, n: 0 },
        ];
        let mut f = function(code, 2);
        f.switch_tables.push(SwitchTable { cases: vec![(1, 3), (2, 6)], default: 0 });
        let mut m = module(vec![f]);
        crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
        let f = &m.functions[0];
        let [
            Inst::IntBin { .. },
            Inst::BranchIf { then: 0, otherwise: 2, .. },
            Inst::Switch { .. },
            Inst::Return { .. },
        ] = f.code[..]
        else {
            panic!("{:?}", f.code)
        };
        // Case 1 went to 3 -> 4 -> 1 (now 0), case 2 to the return, the default to 0 -> 1 (now 0).
        assert_eq!(f.switch_tables[0].cases, [(1, 0), (2, 3)]);
        assert_eq!(f.switch_tables[0].default, 0);
    }

    #[test]
    fn an_endless_branch_cycle_stays_a_cycle() {
        let code = vec![Inst::Branch { target: 1 }, Inst::Branch { target: 0 }];
        let mut m = module(vec![function(code, 1)]);
        crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
        assert!(matches!(m.functions[0].code[..], [Inst::Branch { target: 0 }]), "{:?}", m.functions[0].code);
    }

    fn chain(conv: Conv, from: u8, to: u8, bits: u8, between: Option<Inst>) -> Function {
        // r0 = param pointer, r1 = param index; r2 = convert r1; [between]; r3 = ptr r0 + r2
        let mut code = vec![Inst::Convert { conv, from, to, dst: 2, src: 1, n: 1 }];
        code.extend(between);
        code.push(Inst::PtrOffset { dst: 3, base: 0, offset: 0, first_index: 0, num_indices: 1 });
        code.push(Inst::Return { src: 3, n: 1 });
        let mut f = function(code, 5);
        f.params = vec![(0, 1), (1, 1)];
        f.indices = vec![Index { reg: 2, bits, stride: 4 }];
        f
    }

    fn fold(f: Function) -> (Function, Stats) {
        let mut m = module(vec![f]);
        let stats = crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
        (m.functions.pop().unwrap(), stats)
    }

    #[test]
    fn a_sign_extension_feeding_only_an_index_folds_into_its_width() {
        let (f, stats) = fold(chain(Conv::SInt, 32, 64, 64, None));
        assert_eq!(stats.folded_extensions, 1);
        assert!(matches!(f.code[..], [Inst::PtrOffset { .. }, Inst::Return { .. }]), "{:?}", f.code);
        assert_eq!((f.indices[0].reg, f.indices[0].bits, f.indices[0].stride), (1, 32, 4));
        // A truncation to the index's width reads the same low bits of the source.
        let (f, _) = fold(chain(Conv::UInt, 64, 32, 32, None));
        assert_eq!((f.indices[0].reg, f.indices[0].bits), (1, 32));
        // Something unrelated in between does not matter.
        let (f, _) = fold(chain(Conv::SInt, 16, 64, 64, Some(add(4, 0))));
        assert_eq!((f.indices[0].reg, f.indices[0].bits, f.code.len()), (1, 16, 3));
    }

    #[test]
    fn extensions_stay_where_folding_would_change_the_index() {
        // A zero extension: the index would read the source as signed.
        let (f, stats) = fold(chain(Conv::UInt, 32, 64, 64, None));
        assert_eq!((stats.folded_extensions, f.indices[0].reg), (0, 2));
        // The source is written again before the PtrOffset.
        let (_, stats) = fold(chain(Conv::SInt, 32, 64, 64, Some(add(1, 0))));
        assert_eq!(stats.folded_extensions, 0);
        // The extended value has another reader.
        let (_, stats) = fold(chain(Conv::SInt, 32, 64, 64, Some(add(4, 2))));
        assert_eq!(stats.folded_extensions, 0);
        // A float conversion is no extension.
        let (_, stats) = fold(chain(Conv::SIntToFloat { round: ir::Round::Default }, 32, 64, 64, None));
        assert_eq!(stats.folded_extensions, 0);
        // A branch target between them: another path may enter without the conversion.
        // 0: br r1 ? 1 : 2; 1: r2 = convert r1; 2: add; 3: ptr r0 + r2; 4: return
        let mut f = chain(Conv::SInt, 32, 64, 64, Some(add(4, 0)));
        f.code.insert(0, Inst::BranchIf { cond: 1, then: 1, otherwise: 2 });
        f.locs.insert(0, 9);
        let (_, stats) = fold(f);
        assert_eq!(stats.folded_extensions, 0);
    }

    #[test]
    fn a_pointer_offset_feeding_only_another_merges_into_it() {
        // r0 = base, r1, r2 = indices; r3 = r0 + 8 + r1*64; [between]; r4 = r3 + 4 + r2*4
        let chain = |between: Option<Inst>| {
            let mut code = vec![Inst::PtrOffset { dst: 3, base: 0, offset: 8, first_index: 0, num_indices: 1 }];
            code.extend(between);
            code.push(Inst::PtrOffset { dst: 4, base: 3, offset: 4, first_index: 1, num_indices: 1 });
            code.push(Inst::Return { src: 4, n: 1 });
            let mut f = function(code, 6);
            f.params = vec![(0, 1), (1, 1), (2, 1)];
            f.indices = vec![Index { reg: 1, bits: 64, stride: 64 }, Index { reg: 2, bits: 32, stride: 4 }];
            fold(f)
        };
        let (f, stats) = chain(None);
        assert_eq!(stats.merged_offsets, 1);
        let [Inst::PtrOffset { dst: 4, base: 0, offset: 12, first_index, num_indices: 2 }, Inst::Return { .. }] =
            f.code[..]
        else {
            panic!("{:?}", f.code)
        };
        let merged = &f.indices[first_index as usize..first_index as usize + 2];
        assert_eq!(merged.iter().map(|i| (i.reg, i.bits, i.stride)).collect::<Vec<_>>(), [(1, 64, 64), (2, 32, 4)]);
        // The outer index changes in between: the two stay apart.
        assert_eq!(chain(Some(add(1, 5))).1.merged_offsets, 0);
        // The intermediate pointer has another use.
        assert_eq!(chain(Some(add(5, 3))).1.merged_offsets, 0);
        // Something unrelated in between does not matter.
        assert_eq!(chain(Some(add(5, 5))).1.merged_offsets, 1);
    }

    #[test]
    fn array_index_checks_follow_a_merge_of_their_chains() {
        // tile[i][j]: r3 = r0 + r1*64; check r1 < 16 for r3; r4 = r3 + r2*4; check r2 < 16 for r4.
        let check = |index, ptr| Inst::IndexCheck { index, ptr, extent: 16, loc: 0 };
        let code = vec![
            Inst::PtrOffset { dst: 3, base: 0, offset: 0, first_index: 0, num_indices: 1 },
            check(0, 3),
            Inst::PtrOffset { dst: 4, base: 3, offset: 0, first_index: 1, num_indices: 1 },
            check(1, 4),
            Inst::Return { src: 4, n: 1 },
        ];
        let mut f = function(code, 6);
        f.params = vec![(0, 1), (1, 1), (2, 1)];
        f.indices = vec![Index { reg: 1, bits: 64, stride: 64 }, Index { reg: 2, bits: 32, stride: 4 }];
        let (f, stats) = fold(f);
        assert_eq!(stats.merged_offsets, 1, "the check does not keep the chains apart");
        let [
            Inst::PtrOffset { dst: 4, base: 0, first_index, num_indices: 2, .. },
            Inst::IndexCheck { index: i, ptr: 4, .. },
            Inst::IndexCheck { index: j, ptr: 4, .. },
            Inst::Return { .. },
        ] = f.code[..]
        else {
            panic!("{:?}", f.code)
        };
        // Both checks read the merged chain's entries, after it is computed.
        assert_eq!((i, j), (first_index, first_index + 1));
        assert_eq!((f.indices[i as usize].reg, f.indices[j as usize].reg), (1, 2));
    }
}

mod coalesce {
    use crate::ir::{Conv, FloatOp, Inst, IntOp};

    fn add(dst: u32, a: u32, b: u32, n: u16) -> Inst {
        Inst::IntBin { op: IntOp::Add, bits: 32, dst, a, b, n }
    }

    fn mov(dst: u32, src: u32, n: u16) -> Inst {
        Inst::Mov { dst, src, n }
    }

    /// Runs every peephole on one function of `code` (parameters r0 and r1, eight registers).
    fn optimised(code: Vec<Inst>) -> (usize, Vec<Inst>) {
        let (stats, code) = super::optimised_function(code);
        (stats.coalesced_copies, code)
    }

    #[test]
    fn a_copy_after_its_writer_becomes_the_writers_result_even_when_it_reads_the_target() {
        let (n, code) = optimised(vec![add(2, 1, 0, 1), mov(1, 2, 1), Inst::Return { src: 1, n: 1 }]);
        assert_eq!(n, 1);
        assert!(matches!(code[..], [Inst::IntBin { dst: 1, a: 1, b: 0, .. }, Inst::Return { src: 1, .. }]), "{code:?}");
    }

    #[test]
    fn a_read_of_the_target_between_writer_and_copy_keeps_the_copy() {
        let body = vec![add(2, 0, 0, 1), add(3, 1, 0, 1), mov(1, 2, 1), add(4, 1, 3, 1), Inst::Return { src: 4, n: 1 }];
        let (n, code) = optimised(body.clone());
        assert_eq!((n, code.len()), (0, body.len()), "{code:?}");
    }

    #[test]
    fn a_vector_writer_that_reads_the_target_keeps_the_copy() {
        // r2:2 = r2:2 + r4:2 computed into r6:2, then copied back: element 1 of the sum must read
        // the old element 1, so the add may not write r2:2 itself.
        let body = vec![add(6, 2, 4, 2), mov(2, 6, 2), Inst::Return { src: 2, n: 2 }];
        let (n, _) = optimised(body);
        assert_eq!(n, 0);
    }

    #[test]
    fn a_copied_value_read_again_later_keeps_its_copy() {
        let body = vec![add(2, 0, 0, 1), mov(1, 2, 1), add(3, 2, 1, 1), Inst::Return { src: 3, n: 1 }];
        let (n, _) = optimised(body);
        assert_eq!(n, 0);
    }

    fn truncate(dst: u32, src: u32) -> Inst {
        Inst::Convert { conv: Conv::UInt, from: 32, to: 32, dst, src, n: 1 }
    }

    #[test]
    fn a_truncation_of_a_value_of_its_width_is_a_copy_folded_into_the_writer() {
        // A 32-bit load, a 32-bit float sum, an element store of a register-held array.
        let load = Inst::LoadScalar { dst: 2, ptr: 0, size: 4, loc: 0, align: 4 };
        let sum = Inst::FloatBin { op: FloatOp::Add, bits: 32, dst: 4, a: 3, b: 3, n: 1 };
        let (n, code) = optimised(vec![load, truncate(3, 2), sum, truncate(5, 4), Inst::Return { src: 5, n: 1 }]);
        assert_eq!(n, 2);
        assert!(
            matches!(
                code[..],
                [Inst::LoadScalar { dst: 3, .. }, Inst::FloatBin { dst: 5, a: 3, .. }, Inst::Return { src: 5, .. }]
            ),
            "{code:?}"
        );
        // A 64-bit sum keeps its truncation.
        let wide = Inst::IntBin { op: IntOp::Add, bits: 64, dst: 2, a: 0, b: 1, n: 1 };
        let (n, code) = optimised(vec![wide, truncate(3, 2), Inst::Return { src: 3, n: 1 }]);
        assert_eq!(n, 0);
        assert!(matches!(code[1], Inst::Convert { .. }), "{code:?}");
    }

    #[test]
    fn a_copy_of_a_register_written_again_before_anything_reads_it_is_folded() {
        // r2 holds two values in turn, each copied out once (a scalarised array's elements): the
        // first copy is folded into its writer (the second is forwarded to its reader).
        let body = vec![add(2, 0, 1, 1), mov(3, 2, 1), add(2, 1, 1, 1), mov(4, 2, 1), add(5, 3, 4, 1)];
        let (n, code) = optimised([body, vec![Inst::Return { src: 5, n: 1 }]].concat());
        assert_eq!(n, 1, "{code:?}");
        assert!(
            matches!(
                code[..],
                [Inst::IntBin { dst: 3, .. }, Inst::IntBin { dst: 2, .. }, Inst::IntBin { dst: 5, a: 3, b: 2, .. }, _]
            ),
            "{code:?}"
        );
        // A read of the first value after its copy keeps that copy.
        let body = vec![add(2, 0, 1, 1), mov(3, 2, 1), add(6, 2, 3, 1), add(2, 1, 1, 1), add(5, 2, 6, 1)];
        let (n, code) = optimised([body, vec![Inst::Return { src: 5, n: 1 }]].concat());
        assert_eq!(n, 0, "{code:?}");
    }
}

mod promote {
    use crate::ir::{self, Function, Inst};

    /// `r1`: a variable of 8 bytes copied from the parameter `r0` (`r2` holds the size), then
    /// `extra` before `r3 = &r1[4]; r4 = r3[0]; r1[0] = r4; r5 = r1[0]; return r5`.
    fn function(extra: Vec<Inst>) -> ir::Module {
        let mut code =
            vec![Inst::Alloca { dst: 1, size: 8, align: 4 }, Inst::CopyMemory { dst: 1, src: 0, size: 2, loc: 0 }];
        code.extend(extra);
        code.extend([
            Inst::PtrOffset { dst: 3, base: 1, offset: 4, first_index: 0, num_indices: 0 },
            Inst::LoadScalar { dst: 4, ptr: 3, size: 4, loc: 0, align: 4 },
            Inst::StoreScalar { src: 4, ptr: 1, size: 4, loc: 0, align: 4 },
            Inst::LoadScalar { dst: 5, ptr: 1, size: 4, loc: 0, align: 4 },
            Inst::Return { src: 5, n: 1 },
        ]);
        let mut template = vec![0; 8];
        template[2] = 8;
        let locs = vec![u32::MAX; code.len()];
        let f = Function { name: "f".into(), code, locs, template, params: vec![(0, 1)], ..Function::default() };
        ir::Module { functions: vec![f], ..ir::Module::default() }
    }

    #[test]
    fn a_variable_copied_whole_and_used_by_field_lives_in_registers() {
        let mut m = function(vec![]);
        let stats = crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
        assert_eq!(stats.promoted_variables, 1);
        let f = &m.functions[0];
        // Fields at 0 and 4 in r8 and r9, loaded from the source by one layout load (the copies
        // of the fields that promotion leaves are forwarded to their readers).
        let [
            Inst::Load { dst: 8, ptr: 0, layout, .. },
            Inst::Convert { dst: 8, src: 9, from: 32, to: 32, .. },
            Inst::Return { src: 8, .. },
        ] = f.code[..]
        else {
            panic!("{:?}", f.code)
        };
        let layout = &m.layouts[layout as usize];
        assert_eq!(layout.size, 8);
        assert_eq!(layout.leaves.iter().map(|l| (l.offset, l.size)).collect::<Vec<_>>(), [(0, 4), (4, 4)]);
    }

    #[test]
    fn a_variable_whose_address_escapes_or_is_indexed_stays_in_memory() {
        let escapes = [
            // Its address stored somewhere.
            Inst::StoreScalar { src: 1, ptr: 0, size: 8, loc: 0, align: 8 },
            // An index computed at run time.
            Inst::PtrOffset { dst: 6, base: 1, offset: 0, first_index: 0, num_indices: 1 },
            // Copied onto itself.
            Inst::CopyMemory { dst: 1, src: 1, size: 2, loc: 0 },
            // An address past its end.
            Inst::PtrOffset { dst: 6, base: 1, offset: 12, first_index: 0, num_indices: 0 },
        ];
        for extra in escapes {
            let mut m = function(vec![extra.clone()]);
            m.functions[0].indices.push(ir::Index { reg: 7, bits: 32, stride: 4 });
            let stats = crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
            assert_eq!(stats.promoted_variables, 0, "promoted despite {extra:?}");
            assert!(matches!(m.functions[0].code[0], Inst::Alloca { .. }));
        }
    }

    /// A module of one function with parameter `r0`, `code`, `template` (registers and their
    /// constants), and the layout of two 4-byte fields as layout 0.
    fn module(code: Vec<Inst>, template: Vec<u64>) -> ir::Module {
        let locs = vec![u32::MAX; code.len()];
        let f = Function { name: "f".into(), code, locs, template, params: vec![(0, 1)], ..Function::default() };
        let pair =
            ir::Layout { size: 8, leaves: vec![ir::Leaf { offset: 0, size: 4 }, ir::Leaf { offset: 4, size: 4 }] };
        ir::Module { functions: vec![f], layouts: vec![pair], ..ir::Module::default() }
    }

    /// `z = c; t.re = ...; t.im = ...; z = t; return norm(z)` as clang leaves a helper taking
    /// structs by value: variables copied whole into each other and read by layout loads.
    #[test]
    fn variables_copied_into_each_other_and_read_whole_live_in_registers() {
        let code = vec![
            Inst::Alloca { dst: 1, size: 8, align: 4 },
            Inst::Alloca { dst: 3, size: 8, align: 4 },
            Inst::Alloca { dst: 4, size: 8, align: 4 },
            Inst::CopyMemory { dst: 1, src: 0, size: 2, loc: 0 },
            Inst::CopyMemory { dst: 3, src: 1, size: 2, loc: 0 },
            Inst::Load { dst: 5, ptr: 3, layout: 0, loc: 0, align: 4 },
            Inst::StoreScalar { src: 6, ptr: 4, size: 4, loc: 0, align: 4 },
            Inst::PtrOffset { dst: 7, base: 4, offset: 4, first_index: 0, num_indices: 0 },
            Inst::StoreScalar { src: 5, ptr: 7, size: 4, loc: 0, align: 4 },
            Inst::CopyMemory { dst: 3, src: 4, size: 2, loc: 0 },
            Inst::Load { dst: 8, ptr: 3, layout: 0, loc: 0, align: 4 },
            Inst::CopyMemory { dst: 0, src: 3, size: 2, loc: 0 },
            Inst::Return { src: 9, n: 1 },
        ];
        let mut template = vec![0; 10];
        template[2] = 8;
        let mut m = module(code, template);
        let stats = crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
        assert_eq!(stats.promoted_variables, 3, "{:?}", m.functions[0].code);
        let code = &m.functions[0].code;
        assert!(!code.iter().any(|i| matches!(i, Inst::Alloca { .. } | Inst::CopyMemory { .. })), "{code:?}");
        // What remains of memory: the copy in from the parameter and the copy out to it.
        let memory: Vec<_> = code.iter().filter(|i| matches!(i, Inst::Load { .. } | Inst::Store { .. })).collect();
        assert!(matches!(memory[..], [Inst::Load { ptr: 0, .. }, Inst::Store { ptr: 0, .. }]), "{code:?}");
    }

    /// A field read where some path has not written it keeps its variable in memory (which the
    /// check of uninitialised values watches): written on one side of a branch only, or never.
    #[test]
    fn a_field_not_written_on_every_path_keeps_the_variable() {
        let on_one_side = vec![
            Inst::Alloca { dst: 1, size: 8, align: 4 },
            Inst::BranchIf { cond: 0, then: 2, otherwise: 3 },
            Inst::CopyMemory { dst: 1, src: 0, size: 2, loc: 0 },
            Inst::Load { dst: 5, ptr: 1, layout: 0, loc: 0, align: 4 },
            Inst::Return { src: 5, n: 1 },
        ];
        let half = vec![
            Inst::Alloca { dst: 1, size: 8, align: 4 },
            Inst::StoreScalar { src: 0, ptr: 1, size: 4, loc: 0, align: 4 },
            Inst::Load { dst: 5, ptr: 1, layout: 0, loc: 0, align: 4 },
            Inst::Return { src: 5, n: 1 },
        ];
        // Only scalar accesses, all of them after a store: clang kept it in memory for a reason
        // (`volatile`), so it stays.
        let scalars = vec![
            Inst::Alloca { dst: 1, size: 4, align: 4 },
            Inst::StoreScalar { src: 0, ptr: 1, size: 4, loc: 0, align: 4 },
            Inst::LoadScalar { dst: 5, ptr: 1, size: 4, loc: 0, align: 4 },
            Inst::Return { src: 5, n: 1 },
        ];
        for code in [on_one_side, half, scalars] {
            let mut template = vec![0; 8];
            template[2] = 8;
            let mut m = module(code, template);
            let stats = crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
            assert_eq!(stats.promoted_variables, 0, "{:?}", m.functions[0].code);
        }
    }

    #[test]
    fn fields_read_before_the_copy_or_overlapping_keep_the_variable() {
        // A field read between the variable and its copy: not every path has run the copy.
        let mut m = function(vec![]);
        m.functions[0].code.insert(1, Inst::LoadScalar { dst: 6, ptr: 1, size: 4, loc: 0, align: 4 });
        m.functions[0].locs.push(u32::MAX);
        assert_eq!(crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED).promoted_variables, 0);
        // An 8-byte field over the two 4-byte ones.
        let mut m = function(vec![Inst::LoadScalar { dst: 6, ptr: 1, size: 8, loc: 0, align: 8 }]);
        assert_eq!(crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED).promoted_variables, 0);
    }
}

mod unroll {
    use crate::ir::{self, Cmp, Function, Index, Inst, IntOp};
    use crate::opt::Stats;

    /// Constant registers: r10 = 0, r11 = 2, r12 = 1, r13 = 3; r14 = 8 (a copy's size).
    const ZERO: u32 = 10;
    const TWO: u32 = 11;
    const ONE: u32 = 12;
    const THREE: u32 = 13;

    /// `float a[2]` (r1) filled by `for (i = 0; i < bound; i++) a[i] = i;` (counter r2, the
    /// element's address r4, index entry 0 checked against 2), then `return a[1]` (r6, r5).
    /// `before` goes right after the `Alloca`; `r0` is a parameter (a global pointer).
    fn counted(bound: u32, before: Vec<Inst>) -> ir::Module {
        let k = before.len() as u32;
        let mut code = vec![Inst::Alloca { dst: 1, size: 8, align: 4 }];
        code.extend(before);
        code.extend([
            Inst::Mov { dst: 2, src: ZERO, n: 1 },
            Inst::Compare { cmp: Cmp::SLt, bits: 32, dst: 3, a: 2, b: bound, n: 1 },
            Inst::BranchIf { cond: 3, then: k + 4, otherwise: k + 9 },
            Inst::PtrOffset { dst: 4, base: 1, offset: 0, first_index: 0, num_indices: 1 },
            Inst::IndexCheck { index: 0, ptr: 4, extent: 2, loc: 7 },
            Inst::StoreScalar { src: 2, ptr: 4, size: 4, loc: 7, align: 4 },
            Inst::IntBin { op: IntOp::Add, bits: 32, dst: 2, a: 2, b: ONE, n: 1 },
            Inst::Branch { target: k + 2 },
            Inst::PtrOffset { dst: 6, base: 1, offset: 4, first_index: 0, num_indices: 0 },
            Inst::LoadScalar { dst: 5, ptr: 6, size: 4, loc: 9, align: 4 },
            Inst::Return { src: 5, n: 1 },
        ]);
        let mut template = vec![0; 16];
        template[TWO as usize] = 2;
        template[ONE as usize] = 1;
        template[THREE as usize] = 3;
        template[14] = 8;
        let locs = (0..code.len() as u32).collect();
        let f = Function {
            name: "f".into(),
            code,
            locs,
            template,
            params: vec![(0, 1)],
            indices: vec![Index { reg: 2, bits: 32, stride: 4 }],
            ..Function::default()
        };
        ir::Module { functions: vec![f], ..ir::Module::default() }
    }

    fn optimised(m: &mut ir::Module) -> (Stats, &Function) {
        let stats = crate::opt::optimise(m);
        (stats, &m.functions[0])
    }

    fn has(f: &Function, what: fn(&Inst) -> bool) -> bool {
        f.code.iter().any(what)
    }

    #[test]
    fn a_counted_loop_over_a_private_array_becomes_straight_line_code_in_registers() {
        let mut m = counted(TWO, vec![]);
        let (stats, f) = optimised(&mut m);
        assert_eq!((stats.unrolled_loops, stats.scalarised_arrays), (1, 1), "{:?}", f.code);
        assert!(!has(f, |i| matches!(i, Inst::BranchIf { .. } | Inst::Branch { .. })), "{:?}", f.code);
        assert!(!has(f, |i| matches!(i, Inst::IndexCheck { .. })), "both indices are inside the array: {:?}", f.code);
        assert!(
            !has(f, |i| matches!(i, Inst::Alloca { .. } | Inst::LoadScalar { .. } | Inst::StoreScalar { .. })),
            "{:?}",
            f.code
        );
        // a[1] = 1 is what is returned, and nothing else is left: the stores became
        // register writes, their values constants.
        let [Inst::Return { src, n: 1 }] = f.code[..] else { panic!("{:?}", f.code) };
        assert_eq!(f.template[src as usize], 1);
    }

    #[test]
    fn a_loop_whose_bound_is_not_constant_stays_a_loop() {
        // The bound is the parameter r0.
        let mut m = counted(0, vec![]);
        let (stats, f) = optimised(&mut m);
        assert_eq!((stats.unrolled_loops, stats.scalarised_arrays), (0, 0));
        assert!(has(f, |i| matches!(i, Inst::IndexCheck { .. })));
        assert!(has(f, |i| matches!(i, Inst::Alloca { .. })));
    }

    #[test]
    fn a_constant_index_outside_the_array_keeps_its_check_and_the_array_its_memory() {
        // `i < 3` over an array of 2: the third iteration's check must still report.
        let mut m = counted(THREE, vec![]);
        let (stats, f) = optimised(&mut m);
        assert_eq!((stats.unrolled_loops, stats.scalarised_arrays), (1, 0), "{:?}", f.code);
        let checks: Vec<_> = f
            .code
            .iter()
            .filter_map(|i| match *i {
                Inst::IndexCheck { index, extent, loc, .. } => Some((index, extent, loc)),
                _ => None,
            })
            .collect();
        assert_eq!(checks.len(), 1, "only the index 2 is outside: {:?}", f.code);
        let (index, extent, loc) = checks[0];
        let entry = f.indices[index as usize];
        assert_eq!((f.template[entry.reg as usize], entry.bits, extent, loc), (2, 32, 2, 7));
        assert!(has(f, |i| matches!(i, Inst::Alloca { .. })));
    }

    #[test]
    fn an_array_whose_address_escapes_stays_in_memory() {
        let escapes = [
            // Its address stored to global memory.
            Inst::StoreScalar { src: 1, ptr: 0, size: 8, loc: 0, align: 8 },
            // Copied out.
            Inst::CopyMemory { dst: 0, src: 1, size: 14, loc: 0 },
            // Compared (and the result stored, so that it is not dead code).
            Inst::Compare { cmp: Cmp::Eq, bits: 64, dst: 7, a: 1, b: 0, n: 1 },
        ];
        for extra in escapes {
            let used = Inst::StoreScalar { src: 7, ptr: 0, size: 1, loc: 0, align: 1 };
            let mut m = counted(TWO, vec![extra.clone(), used]);
            let (stats, f) = optimised(&mut m);
            assert_eq!(stats.unrolled_loops, 1, "{extra:?}");
            assert_eq!(stats.scalarised_arrays, 0, "replaced despite {extra:?}");
            assert!(has(f, |i| matches!(i, Inst::Alloca { .. })));
            // One store per iteration, at constant offsets, each with the store's location.
            let stores: Vec<_> = (0..f.code.len())
                .filter_map(|pc| match f.code[pc] {
                    Inst::StoreScalar { ptr, loc: 7, .. } => Some((ptr, f.locs[pc])),
                    _ => None,
                })
                .collect();
            assert_eq!(stores.len(), 2, "{:?}", f.code);
            assert!(stores.iter().all(|s| s.1 == 8), "the store's pc before unrolling: {stores:?}");
            assert!(!has(f, |i| matches!(i, Inst::PtrOffset { num_indices: 1.., .. })), "{:?}", f.code);
        }
    }

    #[test]
    fn an_element_read_before_it_is_written_keeps_the_array_in_memory() {
        // `a[1]` read before the loop writes it: the check of uninitialised values must see
        // the fresh variable's bytes (the read's result is returned through r7 ... kept alive
        // by a store to global memory).
        let before = vec![
            Inst::PtrOffset { dst: 8, base: 1, offset: 4, first_index: 0, num_indices: 0 },
            Inst::LoadScalar { dst: 7, ptr: 8, size: 4, loc: 3, align: 4 },
            Inst::StoreScalar { src: 7, ptr: 0, size: 4, loc: 3, align: 4 },
        ];
        let mut m = counted(TWO, before);
        let (stats, f) = optimised(&mut m);
        assert_eq!((stats.unrolled_loops, stats.scalarised_arrays), (1, 0), "{:?}", f.code);
        assert!(has(f, |i| matches!(i, Inst::Alloca { .. })));
        assert!(!has(f, |i| matches!(i, Inst::IndexCheck { .. })), "the folding still happens");
    }

    #[test]
    fn a_loop_with_another_way_in_is_not_unrolled() {
        // A branch from before the loop into its body.
        let mut m = counted(TWO, vec![Inst::BranchIf { cond: 0, then: 2, otherwise: 5 }]);
        let (stats, _) = optimised(&mut m);
        assert_eq!(stats.unrolled_loops, 0);
    }
}

mod inline {
    use crate::ir::{self, Arg, ArgKind, Fence, Function, Index, Inst, IntOp, Scope, SwitchTable};
    use crate::opt::inline::inline_calls;

    fn args(regs: &[u32]) -> Vec<Arg> {
        regs.iter().map(|&reg| Arg { reg, n: 1, kind: ArgKind::Other }).collect()
    }

    fn add(dst: u32, a: u32, b: u32) -> Inst {
        Inst::IntBin { op: IntOp::Add, bits: 32, dst, a, b, n: 1 }
    }

    /// A function of `slots` registers with parameters `params` (one slot each), its
    /// instructions located at `first_loc` onwards.
    fn function(code: Vec<Inst>, params: &[u32], slots: usize, first_loc: u32) -> Function {
        let locs = (first_loc..first_loc + code.len() as u32).collect();
        let params = params.iter().map(|&p| (p, 1)).collect();
        Function { name: "f".into(), code, locs, params, template: vec![0; slots], ..Function::default() }
    }

    /// `add(r0, r1)`: `r2 = r0 + r1; r2 = r2 + 7 (r3); return r2`, its fifth slot unused
    /// (locations 100..103).
    fn adder() -> Function {
        let code = vec![add(2, 0, 1), add(2, 2, 3), Inst::Return { src: 2, n: 1 }];
        let mut f = function(code, &[0, 1], 5, 100);
        f.template[3] = 7;
        f
    }

    /// `r1 = r0 + r0; r2 = call 0 (r0, r1); r3 = r2 + r1; return r3` (locations 0..4).
    fn caller() -> Function {
        let code = vec![
            add(1, 0, 0),
            Inst::Call { func: 0, dst: 2, first_arg: 0, num_args: 2 },
            add(3, 2, 1),
            Inst::Return { src: 3, n: 1 },
        ];
        Function { args: args(&[0, 1]), ..function(code, &[0], 4, 0) }
    }

    fn inlined(callee: Function, mut caller: Function) -> (usize, Function) {
        let module = ir::Module { functions: vec![callee, Function::default()], ..ir::Module::default() };
        let n = inline_calls(&module, &mut caller);
        (n, caller)
    }

    #[test]
    fn a_call_becomes_the_callee_body_in_fresh_registers() {
        let (n, f) = inlined(adder(), caller());
        assert_eq!(n, 1);
        // The callee's r2 and its constant r3 go to r4 and r5 (after the caller's four), its
        // unused r4 nowhere; its parameters, never written, are read in place from the
        // arguments r0 and r1.
        assert!(
            matches!(
                f.code[..],
                [
                    Inst::IntBin { dst: 1, .. },
                    Inst::IntBin { op: IntOp::Add, dst: 4, a: 0, b: 1, .. },
                    Inst::IntBin { op: IntOp::Add, dst: 4, a: 4, b: 5, .. },
                    Inst::Mov { dst: 2, src: 4, n: 1 },
                    Inst::IntBin { dst: 3, a: 2, b: 1, .. },
                    Inst::Return { src: 3, n: 1 },
                ]
            ),
            "{:?}",
            f.code
        );
        assert_eq!(f.locs, [0, 100, 101, 102, 2, 3], "each instruction keeps its source location");
        assert_eq!(f.template, [0, 0, 0, 0, 0, 7], "the callee's constant follows the caller's slots");
    }

    #[test]
    fn a_callee_constant_is_the_callers_register_of_its_value() {
        // The caller holds 7 in r4, which nothing writes: the callee's r3 reads it.
        let mut caller = caller();
        caller.template.push(7);
        let (n, f) = inlined(adder(), caller);
        assert_eq!(n, 1);
        assert!(matches!(f.code[2], Inst::IntBin { dst: 5, a: 5, b: 4, .. }), "{:?}", f.code);
        assert_eq!(f.template, [0, 0, 0, 0, 7, 0]);
    }

    #[test]
    fn a_parameter_the_callee_writes_is_copied_into_a_register_of_its_own() {
        // `r0 = r0 + r1; return r0`: r0 is written, so it gets a copy of the argument at the
        // call's location; r1 is still read in place.
        let callee = function(vec![add(0, 0, 1), Inst::Return { src: 0, n: 1 }], &[0, 1], 2, 100);
        let (n, f) = inlined(callee, caller());
        assert_eq!(n, 1);
        assert!(
            matches!(
                f.code[1..4],
                [
                    Inst::Mov { dst: 4, src: 0, n: 1 },
                    Inst::IntBin { dst: 4, a: 4, b: 1, .. },
                    Inst::Mov { dst: 2, src: 4, n: 1 }
                ]
            ),
            "{:?}",
            f.code
        );
        assert_eq!(f.locs[1..4], [1, 100, 101]);
    }

    #[test]
    fn side_tables_targets_and_several_returns_are_renumbered() {
        // Callee (params r0 pointer, r1 index): 0: r2 = r0 + r1*4; 1: switch r1 {0: 2, default 3};
        // 2: return r2; 3: r3 = r2 + 4; 4: return r3.
        let mut callee = function(
            vec![
                Inst::PtrOffset { dst: 2, base: 0, offset: 0, first_index: 0, num_indices: 1 },
                Inst::Switch { value: 1, bits: 32, table: 0 },
                Inst::Return { src: 2, n: 1 },
                Inst::PtrOffset { dst: 3, base: 2, offset: 4, first_index: 0, num_indices: 0 },
                Inst::Return { src: 3, n: 1 },
            ],
            &[0, 1],
            4,
            100,
        );
        callee.indices.push(Index { reg: 1, bits: 32, stride: 4 });
        callee.switch_tables.push(SwitchTable { cases: vec![(0, 2)], default: 3 });
        // Caller: 0: if r0 goto 1 else 3; 1: r2 = call; 2: goto 3; 3: switch r0 {1: 1, default 4};
        // 4: return r2. It has an index entry and a switch table of its own.
        let mut caller = function(
            vec![
                Inst::BranchIf { cond: 0, then: 1, otherwise: 3 },
                Inst::Call { func: 0, dst: 2, first_arg: 0, num_args: 2 },
                Inst::Branch { target: 3 },
                Inst::Switch { value: 0, bits: 32, table: 0 },
                Inst::Return { src: 2, n: 1 },
            ],
            &[0, 1],
            3,
            0,
        );
        caller.args = args(&[0, 1]);
        caller.indices.push(Index { reg: 0, bits: 32, stride: 8 });
        caller.switch_tables.push(SwitchTable { cases: vec![(1, 1)], default: 4 });
        let (n, f) = inlined(callee, caller);
        assert_eq!(n, 1);
        assert!(
            matches!(
                f.code[..],
                [
                    Inst::BranchIf { cond: 0, then: 1, otherwise: 8 },
                    Inst::PtrOffset { dst: 3, base: 0, first_index: 1, num_indices: 1, .. },
                    Inst::Switch { value: 1, table: 1, .. },
                    Inst::Mov { dst: 2, src: 3, n: 1 },
                    Inst::Branch { target: 7 },
                    Inst::PtrOffset { dst: 4, base: 3, offset: 4, .. },
                    Inst::Mov { dst: 2, src: 4, n: 1 },
                    Inst::Branch { target: 8 },
                    Inst::Switch { value: 0, table: 0, .. },
                    Inst::Return { src: 2, n: 1 },
                ]
            ),
            "{:?}",
            f.code
        );
        assert_eq!(f.indices.len(), 2);
        assert_eq!((f.indices[1].reg, f.indices[1].stride), (1, 4), "the callee's entry reads the argument");
        assert_eq!((f.switch_tables[0].cases.clone(), f.switch_tables[0].default), (vec![(1, 1)], 9));
        assert_eq!((f.switch_tables[1].cases.clone(), f.switch_tables[1].default), (vec![(0, 3)], 5));
        assert_eq!(f.locs, [0, 100, 101, 102, 102, 103, 104, 2, 3, 4]);
    }

    #[test]
    fn callees_that_synchronise_allocate_or_read_before_writing_stay_calls() {
        let barrier = Inst::Barrier { fence: Fence::default(), scope: Scope::WorkGroup, loc: 0, sub_group: false };
        let atomic = Inst::Atomic {
            op: ir::AtomicOp::Add,
            bits: 32,
            order: ir::MemOrder::Relaxed,
            fail_order: ir::MemOrder::Relaxed,
            scope: Scope::Device,
            dst: 2,
            ptr: 0,
            value: 1,
            comparator: 1,
            loc: 0,
        };
        let alloca = Inst::Alloca { dst: 2, size: 4, align: 4 };
        // r3 is read before anything writes it (and is written after): each call would see
        // what the previous one left there.
        let stale = add(2, 3, 0);
        for first in [barrier, atomic, alloca, stale] {
            let code = vec![first.clone(), add(3, 0, 1), add(2, 0, 3), Inst::Return { src: 2, n: 1 }];
            let (n, f) = inlined(function(code, &[0, 1], 4, 100), caller());
            assert_eq!(n, 0, "{first:?}");
            assert_eq!(f.code.len(), 4);
            assert!(matches!(f.code[1], Inst::Call { .. }), "{first:?}");
        }
    }

    #[test]
    fn helpers_are_inlined_callees_first_but_not_into_entry_stubs() {
        // 0: the caller, 1: a helper calling 2: the adder; 3: an entry stub calling 0.
        let mut caller = caller();
        caller.code[1] = Inst::Call { func: 1, dst: 2, first_arg: 0, num_args: 2 };
        let mut middle = function(
            vec![Inst::Call { func: 2, dst: 2, first_arg: 0, num_args: 2 }, Inst::Return { src: 2, n: 1 }],
            &[0, 1],
            3,
            200,
        );
        middle.args = args(&[1, 0]);
        let mut stub = function(
            vec![Inst::Call { func: 0, dst: 1, first_arg: 0, num_args: 1 }, Inst::Return { src: 0, n: 0 }],
            &[0],
            2,
            300,
        );
        stub.args = args(&[0]);
        let mut m = ir::Module { functions: vec![caller, middle, adder(), stub], ..ir::Module::default() };
        let stats = crate::opt::optimise_with(&mut m, crate::opt::Passes::UNPACKED);
        assert_eq!(stats.inlined_calls, 2, "the adder into the helper, the helper into the caller");
        assert!(!m.functions[0].code.iter().any(|i| matches!(i, Inst::Call { .. })), "{:?}", m.functions[0].code);
        assert!(matches!(m.functions[3].code[0], Inst::Call { func: 0, .. }), "the stub still calls");
        // The helper passed its arguments swapped: the caller adds r1 and r0.
        assert!(
            m.functions[0].code.iter().any(|i| matches!(i, Inst::IntBin { op: IntOp::Add, a: 1, b: 0, .. })),
            "{:?}",
            m.functions[0].code
        );
    }
}

mod hoist {
    use crate::ir::{self, Inst, IntOp};

    fn add(dst: u32, a: u32, b: u32) -> Inst {
        Inst::IntBin { op: IntOp::Add, bits: 32, dst, a, b, n: 1 }
    }

    /// `code` optimised (parameters r0 and r1, eight registers), unpacked: the hoisted count
    /// and the code.
    fn optimised(code: Vec<Inst>) -> (usize, Vec<Inst>) {
        let (stats, code) = super::optimised_function(code);
        (stats.hoisted_instructions, code)
    }

    /// A counted loop: r2 counts from r0 while below r1, its body `body` (after which the counter
    /// steps), then the function returns r3.
    fn counted(body: Vec<Inst>) -> Vec<Inst> {
        let n = body.len() as u32;
        let mut code = vec![
            Inst::Mov { dst: 2, src: 0, n: 1 },
            Inst::Compare { cmp: ir::Cmp::SLt, bits: 32, dst: 4, a: 2, b: 1, n: 1 },
            Inst::BranchIf { cond: 4, then: 3, otherwise: 4 + n + 1 },
        ];
        code.extend(body);
        code.push(add(2, 2, 0));
        code.push(Inst::Branch { target: 1 });
        code.push(Inst::Return { src: 3, n: 1 });
        code
    }

    /// `first`, then `code` with its branch targets one further on.
    fn prepend(first: Inst, code: Vec<Inst>) -> Vec<Inst> {
        let mut out = vec![first];
        for mut inst in code {
            crate::opt::base::retarget(&mut inst, |t| *t += 1);
            out.push(inst);
        }
        out
    }

    #[test]
    fn an_invariant_leaves_its_loop_with_the_back_edge_renumbered() {
        // r5 = r0 + r1 is invariant; r3 = r3 + r5 is not.
        let (n, code) = optimised(counted(vec![add(5, 0, 1), add(3, 3, 5)]));
        assert_eq!(n, 1, "{code:?}");
        let [
            Inst::Mov { dst: 2, .. },
            Inst::IntBin { dst: 5, a: 0, b: 1, .. },
            Inst::Compare { .. },
            Inst::BranchIf { then: 4, otherwise: 7, .. },
            Inst::IntBin { dst: 3, .. },
            Inst::IntBin { dst: 2, .. },
            Inst::Branch { target: 2 },
            Inst::Return { .. },
        ] = code[..]
        else {
            panic!("{code:?}")
        };
    }

    #[test]
    fn a_loop_entered_in_its_middle_or_an_invariant_read_before_it_stays() {
        // A read of r5 before its writer in the loop: the first iteration reads the old value.
        let (n, code) = optimised(counted(vec![add(3, 3, 5), add(5, 0, 1)]));
        assert_eq!(n, 0, "{code:?}");
        // A second writer of r5 (before the loop): the loop's writer is not its only one.
        let (n, code) = optimised(prepend(add(5, 1, 1), counted(vec![add(5, 0, 1), add(3, 3, 5)])));
        assert_eq!(n, 0, "{code:?}");
        // A branch from before the loop into its body (to the invariant's reader): the code
        // before the header would not run on that way in.
        let into_body = Inst::BranchIf { cond: 0, then: 1, otherwise: 5 };
        let (n, code) = optimised(prepend(into_body, counted(vec![add(5, 0, 1), add(3, 3, 5)])));
        assert_eq!(n, 0, "{code:?}");
    }
}

/// A kernel calling helpers runs the same with and without inlining: same buffers, findings
/// (with their counts) and races.
mod inline_end_to_end {
    use std::path::Path;

    use crate::check::{Checked, Plan, check};
    use crate::exec::{ArgValue, Launch, RunOptions};
    use crate::ir::{self, Inst};
    use crate::opt::Passes;
    use crate::program::Program;

    /// Helpers with branches and several returns, a helper storing to `__local` memory (two
    /// work-items store the same element: a race), and a load out of bounds for most of the
    /// second work-group, all from helpers called more than once.
    const SOURCE: &str = r#"
int index_of(int row, int col, int ld, int transpose) {
    if (transpose) return col * ld + row;
    return row * ld + col;
}
float load_at(const __global float* m, int row, int col, int ld, int transpose) {
    return m[index_of(row, col, ld, transpose)];
}
int clamp_to(int x, int hi) {
    if (x > hi) return hi;
    if (x < 0) return 0;
    return x;
}
void put(__local float* tile, int i, float v) { tile[i] = v; }
__kernel void helpers(__global const float* a, __global float* out, int ld, int transpose) {
    __local float tile[64];
    int x = get_local_id(0);
    int g = get_global_id(0);
    float v = load_at(a, x / 8, x % 8, ld, transpose) + load_at(a, clamp_to(x - 4, 7), 1, ld, 1 - transpose);
    put(tile, x, v);
    put(tile, (x + 1) % 64, v + 1.0f);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = tile[clamp_to(63 - x, 63)] + load_at(a, g / 2, 0, ld + 1, transpose);
}
"#;

    fn program(inline: bool) -> Program {
        program_with(Passes { inline, ..Passes::ALL })
    }

    fn program_with(passes: Passes) -> Program {
        build(SOURCE, passes)
    }

    /// `source` built, lowered and optimised with `passes`, as the program cache would.
    pub(super) fn build(source: &str, passes: Passes) -> Program {
        let built = crate::compile::compile(source, Path::new("opt.cl"), "").expect("builds");
        let mut module = crate::spirv::load_and_lower(&built.spirv).expect("lowers");
        crate::opt::optimise_with(&mut module, passes);
        ir::reconverge::annotate(&mut module);
        ir::validate::check_module(&module).expect("valid");
        Program::with_module(module)
    }

    fn run(program: &Program) -> (Vec<Vec<u8>>, Checked) {
        let a: Vec<u8> = (0..64).flat_map(|i| (i as f32 * 0.5).to_le_bytes()).collect();
        let args = vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Value(8i32.to_le_bytes().to_vec()),
            ArgValue::Value(0i32.to_le_bytes().to_vec()),
        ];
        run_launch(program, "helpers", args, vec![a, vec![0u8; 128 * 4]])
    }

    /// Kernel `kernel` of `program` on 128 work-items in groups of 64 with `args` and `buffers`,
    /// with the race detector and the check of uninitialised values, on one thread: the buffers
    /// after, and what the check found.
    pub(super) fn run_launch(
        program: &Program,
        kernel: &str,
        args: Vec<ArgValue>,
        mut buffers: Vec<Vec<u8>>,
    ) -> (Vec<Vec<u8>>, Checked) {
        let launch = Launch {
            kernel: kernel.into(),
            work_dim: 1,
            global_offset: [0; 3],
            global_size: [128, 1, 1],
            local_size: [64, 1, 1],
            args,
        };
        let plan = Plan {
            races: Some(crate::detect::Options::default()),
            run: RunOptions { threads: Some(1), check_uninitialized: true, ..RunOptions::default() },
            explore: None,
            release_buffers: false,
        };
        let checked = check(program, &launch, &mut buffers, plan).expect("runs");
        (buffers, checked)
    }

    #[test]
    fn a_kernel_calling_helpers_computes_and_reports_the_same_inlined() {
        let (called, inlined) = (program(false), program(true));
        let kernel = |p: &Program| {
            let k = p.module.kernels.iter().find(|k| k.info.name == "helpers").expect("the kernel");
            p.module.functions[k.function as usize].code.clone()
        };
        let calls = |code: &[Inst]| code.iter().filter(|i| matches!(i, Inst::Call { .. })).count();
        assert!(calls(&kernel(&called)) >= 6, "{:?}", kernel(&called));
        assert_eq!(calls(&kernel(&inlined)), 0, "{:?}", kernel(&inlined));
        let (buffers, with_calls) = run(&called);
        let (inlined_buffers, without) = run(&inlined);
        assert_eq!(buffers, inlined_buffers);
        assert!(!with_calls.outcome.findings.is_empty() && !with_calls.races.is_empty(), "the test tests something");
        assert_eq!(with_calls.outcome.findings, without.outcome.findings);
        assert_eq!(with_calls.outcome.finding_counts, without.outcome.finding_counts);
        assert_eq!(with_calls.races, without.races);
    }

    #[test]
    fn packed_frames_hold_only_named_slots_and_compute_and_report_the_same() {
        let (loose, packed) = (program_with(Passes::UNPACKED), program_with(Passes::ALL));
        let slots = |p: &Program| p.module.functions.iter().map(|f| f.template.len()).sum::<usize>();
        assert!(slots(&packed) < slots(&loose), "{} slots packed, {} not", slots(&packed), slots(&loose));
        // Packing again finds nothing to remove: every slot left is named.
        let mut again = packed.module.clone();
        for i in 0..again.functions.len() {
            let mut func = std::mem::take(&mut again.functions[i]);
            assert_eq!(crate::opt::registers::pack_registers(&again, &mut func), 0, "{}", func.name);
            again.functions[i] = func;
        }
        let (buffers, before) = run(&loose);
        let (packed_buffers, after) = run(&packed);
        assert_eq!(buffers, packed_buffers);
        assert!(!before.outcome.findings.is_empty() && !before.races.is_empty(), "the test tests something");
        assert_eq!(before.outcome.findings, after.outcome.findings);
        assert_eq!(before.outcome.finding_counts, after.outcome.finding_counts);
        assert_eq!(before.races, after.races);
    }
}

/// Loop invariants hoisted out of nested loops: the code before computes and reports the same
/// as the code after, and no work-item id is computed inside a loop any more.
mod hoist_end_to_end {
    use super::inline_end_to_end::{build, run_launch};
    use crate::exec::ArgValue;
    use crate::ir::{Function, Inst};
    use crate::opt::Passes;

    /// Two nested loops whose bodies recompute work-item ids and products of them (one inside a
    /// condition), an invariant feeding a `__local` write that races with the readers of the
    /// same tile, and a store out of bounds for the second work-group.
    const SOURCE: &str = r#"
__kernel void tiles(__global const float* a, __global float* out, int n, int reps) {
    __local float tile[64];
    int x = get_local_id(0);
    float acc = 0.0f;
    for (int k = 0; k < reps; k++) {
        tile[x] = a[(get_group_id(0) * 64 + get_local_id(0)) % n] + (float)k;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < reps + 1; j++) {
            int row = (int)get_local_id(0) / 8;
            acc += tile[row * 8 + j % 8] * (float)(get_local_size(0) * j + k);
            if (x == 3) tile[((int)get_local_id(0) / 8 + 1) * 8 + j % 8] = acc;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0) * 2 % 256] = acc;
}
"#;

    /// Whether an instruction of `f` that `is` picks lies inside one of its loops (between a
    /// branch target and a branch back to it).
    fn inside_a_loop(f: &Function, is: impl Fn(&Inst) -> bool) -> bool {
        let mut back = Vec::new();
        for (pc, inst) in f.code.iter().enumerate() {
            match *inst {
                Inst::Branch { target } if target as usize <= pc => back.push((target as usize, pc)),
                Inst::BranchIf { then, otherwise, .. } => {
                    back.extend([then, otherwise].into_iter().filter(|&t| t as usize <= pc).map(|t| (t as usize, pc)))
                }
                _ => {}
            }
        }
        assert!(!back.is_empty(), "the kernel has loops: {:?}", f.code);
        back.iter().any(|&(h, t)| f.code[h..=t].iter().any(&is))
    }

    #[test]
    fn work_item_ids_leave_their_loops_and_the_kernel_computes_and_reports_the_same() {
        let (kept, hoisted) = (build(SOURCE, Passes { hoist: false, ..Passes::ALL }), build(SOURCE, Passes::ALL));
        let kernel = |p: &crate::program::Program| {
            let k = p.module.kernels.iter().find(|k| k.info.name == "tiles").expect("the kernel").function;
            let f = &p.module.functions[k as usize];
            // The entry stub only calls the body, which holds the loops.
            match f.code[..] {
                [Inst::Call { func, .. }, ..] => p.module.functions[func as usize].clone(),
                _ => f.clone(),
            }
        };
        let builtin = |i: &Inst| matches!(i, Inst::Builtin { .. });
        assert!(inside_a_loop(&kernel(&kept), builtin), "{:?}", kernel(&kept).code);
        assert!(!inside_a_loop(&kernel(&hoisted), builtin), "{:?}", kernel(&hoisted).code);
        assert_eq!(kernel(&kept).code.len(), kernel(&hoisted).code.len(), "instructions move, none goes");
        for reps in [0i32, 1, 3] {
            let args = || {
                vec![
                    ArgValue::Buffer(0),
                    ArgValue::Buffer(1),
                    ArgValue::Value(100i32.to_le_bytes().to_vec()),
                    ArgValue::Value(reps.to_le_bytes().to_vec()),
                ]
            };
            let buffers = || vec![(0..128).flat_map(|i| (i as f32 * 0.25).to_le_bytes()).collect(), vec![0u8; 128 * 4]];
            let (before_buffers, before) = run_launch(&kept, "tiles", args(), buffers());
            let (after_buffers, after) = run_launch(&hoisted, "tiles", args(), buffers());
            assert_eq!(before_buffers, after_buffers, "reps {reps}");
            assert!(!before.outcome.findings.is_empty(), "the test tests something: reps {reps}");
            assert_eq!(before.races.is_empty(), reps == 0, "a race once the loop runs: reps {reps}");
            assert_eq!(before.outcome.findings, after.outcome.findings, "reps {reps}");
            assert_eq!(before.outcome.finding_counts, after.outcome.finding_counts, "reps {reps}");
            assert_eq!(before.races, after.races, "reps {reps}");
        }
    }
}

mod builtins {
    use super::inline_end_to_end::{build, run_launch};
    use crate::exec::ArgValue;
    use crate::ir::{Builtin, Inst};
    use crate::opt::Passes;

    const SOURCE: &str = r#"
__kernel void ids(__global uint* out, __global uint* twice) {
    size_t g = get_global_id(0);
    out[g] = (uint)(g * 1000 + get_local_id(0) * 10 + get_global_size(1) + get_local_id(2));
    size_t id[2] = { get_global_id(0), get_global_id(1) };
    twice[g] = (uint)(id[0] + id[1]);
}
__kernel void one(__global uint* out) { out[get_global_id(0)] = 7; }
"#;

    #[test]
    fn a_work_item_function_reads_up_to_its_last_slot_read_and_computes_as_before() {
        let program = build(SOURCE, Passes::ALL);
        let code = |name: &str| {
            let kernel = program.module.kernels.iter().find(|k| k.info.name == name).expect("the kernel");
            let code = &program.module.functions[kernel.function as usize].code;
            match code[..] {
                [Inst::Call { func, .. }, ..] => program.module.functions[func as usize].code.clone(),
                _ => code.clone(),
            }
        };
        let builtins = |code: &[Inst]| -> Vec<(Builtin, u8)> {
            code.iter()
                .filter_map(|i| match *i {
                    Inst::Builtin { which, dims, .. } => Some((which, dims)),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(builtins(&code("one")), [(Builtin::GlobalId, 1)], "only the first slot is read");
        let code = code("ids");
        let mut dims = builtins(&code);
        dims.sort_by_key(|&(which, dims)| (which as u8, dims));
        dims.dedup();
        // The global id's first two slots (the private array reads both), the local id's three
        // (its third is read), the global size's first two.
        let want = [(Builtin::GlobalId, 2), (Builtin::LocalId, 3), (Builtin::GlobalSize, 2)];
        for (which, n) in want {
            assert!(dims.contains(&(which, n)), "{which:?} reading {n}: {dims:?} in {code:?}");
        }
        let (buffers, checked) = run_launch(
            &program,
            "ids",
            vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
            vec![vec![0; 512], vec![0; 512]],
        );
        let words = |b: &[u8]| b.chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect::<Vec<_>>();
        let out: Vec<u32> = (0..128).map(|g| g * 1000 + (g % 64) * 10 + 1).collect();
        assert_eq!(words(&buffers[0]), out);
        assert_eq!(words(&buffers[1]), (0..128).collect::<Vec<u32>>());
        assert!(checked.outcome.findings.is_empty() && checked.races.is_empty());
    }
}
