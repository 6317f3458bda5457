//! SPIR-V ingest: turns module bytes into words, clears what rspirv cannot load, loads the
//! module with rspirv's `dr` API, and hands it to `lower`, which lowers it to [`crate::ir`]. The
//! optimiser ([`crate::opt`]) and the IR's validation ([`crate::ir::validate`]) run after it, called
//! by `Program::from_spirv`.
//!
//! It reads SPIR-V and writes IR; it sees nothing of how a program is built or run.

mod lower;
mod module;
mod types;

use crate::ir;
use module::SpecConstantOps;

const MAGIC: u32 = 0x0723_0203;
const OP_EXT_INST_IMPORT: u32 = 11;
const OP_EXT_INST: u32 = 12;
const OP_UNDEF: u32 = 1;
const OP_SPEC_CONSTANT_OP: u32 = 52;
const OP_CONSTANT_SAMPLER: u32 = 45;
/// The largest SPIR-V sampler addressing mode (`RepeatMirrored`) and filter mode (`Linear`).
const LAST_ADDRESSING_MODE: u32 = 4;
const LAST_FILTER_MODE: u32 = 1;

/// Loads a SPIR-V binary and lowers it to our IR, not yet optimised or validated; a failure as
/// the text users see.
pub fn load_and_lower(bytes: &[u8]) -> Result<ir::Module, String> {
    let words = to_words(bytes)?;
    let (words, spec_ops) = prepare(&words)?;
    let module = rspirv::dr::load_words(&words).map_err(|e| format!("cannot parse SPIR-V: {e}"))?;
    lower::lower(&module, spec_ops).map_err(|e| e.to_string())
}

/// Reads the bytes as words in the module's own byte order.
fn to_words(bytes: &[u8]) -> Result<Vec<u32>, String> {
    if bytes.len() < 20 || !bytes.len().is_multiple_of(4) {
        return Err(format!("not a SPIR-V module: {} bytes is not a whole header and words", bytes.len()));
    }
    let le: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if le[0] == MAGIC {
        Ok(le)
    } else if le[0].swap_bytes() == MAGIC {
        Ok(le.into_iter().map(u32::swap_bytes).collect())
    } else {
        Err(format!("not a SPIR-V module: magic number 0x{:08x}", le[0]))
    }
}

/// Rewrites what rspirv cannot load. Removes every `OpExtInst` of a debug or non-semantic set
/// (OpenCL.DebugInfo.100 puts them at module scope, where rspirv's loader refuses them; source
/// locations come from `OpLine`), and sets `OpSpecConstantOp`s aside (see [`SpecConstantOps`]).
/// An `OpConstantSampler` whose addressing or filter mode is out of range (the translator's
/// rendering of an integer sampler literal without those bits, such as `5`) gets no addressing
/// and nearest filtering, which is what the bits read as (`CLK_ADDRESS_NONE` is 0, and only
/// `CLK_FILTER_LINEAR` selects linear), instead of failing the whole module in rspirv.
fn prepare(words: &[u32]) -> Result<(Vec<u32>, SpecConstantOps), String> {
    let mut spec_ops = SpecConstantOps::new();
    let mut out = words[..5].to_vec();
    let mut debug_sets = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let word_count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xffff;
        if word_count == 0 || at + word_count > words.len() {
            return Err(format!("malformed SPIR-V: instruction at word {at} runs past the end of the module"));
        }
        let inst = &words[at..at + word_count];
        match opcode {
            OP_EXT_INST_IMPORT if word_count >= 3 => {
                let name = string_operand(&inst[2..]);
                if name != "OpenCL.std" {
                    debug_sets.push(inst[1]);
                }
            }
            OP_EXT_INST if word_count >= 5 && debug_sets.contains(&inst[3]) => {
                at += word_count;
                continue;
            }
            OP_CONSTANT_SAMPLER if word_count == 6 => {
                let mut fixed = [0; 6];
                fixed.copy_from_slice(inst);
                if fixed[3] > LAST_ADDRESSING_MODE {
                    fixed[3] = 0;
                }
                if fixed[5] > LAST_FILTER_MODE {
                    fixed[5] = 0;
                }
                out.extend_from_slice(&fixed);
                at += word_count;
                continue;
            }
            OP_SPEC_CONSTANT_OP if word_count >= 4 => {
                spec_ops.insert(inst[2], (inst[3], inst[4..].to_vec()));
                out.extend_from_slice(&[(3 << 16) | OP_UNDEF, inst[1], inst[2]]);
                at += word_count;
                continue;
            }
            _ => {}
        }
        out.extend_from_slice(inst);
        at += word_count;
    }
    Ok((out, spec_ops))
}

/// Decodes a literal string operand (UTF-8, NUL-terminated, packed little-endian in words).
fn string_operand(words: &[u32]) -> String {
    let mut bytes = Vec::new();
    'outer: for w in words {
        for b in w.to_le_bytes() {
            if b == 0 {
                break 'outer;
            }
            bytes.push(b);
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_sampler_modes_read_as_none_and_nearest() {
        let header = [MAGIC, 0x0001_0200, 0, 30, 0];
        let sampler = |addressing: u32, filter: u32| [(6 << 16) | OP_CONSTANT_SAMPLER, 7, 22, addressing, 1, filter];
        let mut words = header.to_vec();
        words.extend_from_slice(&sampler(2, u32::MAX));
        words.extend_from_slice(&sampler(7, 1));
        words.extend_from_slice(&sampler(4, 0));
        let (out, _) = prepare(&words).unwrap();
        let mut want = header.to_vec();
        want.extend_from_slice(&sampler(2, 0));
        want.extend_from_slice(&sampler(0, 1));
        want.extend_from_slice(&sampler(4, 0));
        assert_eq!(out, want);
    }

    #[test]
    fn rejects_garbage_with_a_message() {
        assert!(load_and_lower(&[1, 2, 3]).unwrap_err().contains("not a SPIR-V module"));
        assert!(load_and_lower(&[0u8; 24]).unwrap_err().contains("magic"));
        let mut truncated = MAGIC.to_le_bytes().to_vec();
        truncated.extend_from_slice(&[0; 16]);
        truncated.extend_from_slice(&((9u32 << 16) | 17).to_le_bytes());
        assert!(load_and_lower(&truncated).unwrap_err().contains("runs past the end"));
    }
}
