//! Why a module cannot be lowered: one variant per failure the lowering finds itself, and the
//! text of the module reader's failures. It sees only the SPIR-V names the
//! messages quote (opcodes, operands, types); the text users see is its `Display`.

use std::fmt;

use rspirv::dr::Operand;
use rspirv::spirv::{BuiltIn, Op, OpenclStd100Op as Cl};

use super::{MAX_FRAME_SLOTS, MAX_MODULE_SLOTS};
use crate::spirv::types::Ty;

/// A module the lowering refuses, and why.
#[derive(Debug, Clone, PartialEq)]
pub enum LowerError {
    /// A failure of the module reader (`module.rs`: ids, literals, types, constants), as its text.
    Module(String),
    /// A failure inside the named function.
    InFunction {
        name: String,
        error: Box<LowerError>,
    },
    /// The functions' register templates together pass [`MAX_MODULE_SLOTS`].
    ModuleSlots,
    /// One function's frame passes [`MAX_FRAME_SLOTS`].
    FrameSlots,
    /// One value needs this many register slots, past [`MAX_FRAME_SLOTS`].
    ValueSlots(usize),
    /// The call graph has a cycle through this function id.
    Recursion {
        function: u32,
    },
    EntryPointWithoutName,
    EntryPointWithoutFunction,
    /// An operand id that names no value or constant.
    UnknownOperand(u32),
    /// A branch to a block id the function does not have.
    UnknownBlock(u32),
    InstructionWithoutResult,
    NoRegister(u32),
    /// A private variable of this many bytes, past a work-item's private memory.
    PrivateTooLarge(u64),
    CompositeInsertIndex,
    CompositeConstructComponents,
    ShuffleLanes {
        selectors: usize,
        lanes: u32,
    },
    ShuffleComponent {
        lane: u32,
        a: u32,
        b: u32,
    },
    UnknownCallee,
    /// `OpGenericCastToPtrExplicit` to a storage class other than global, local or private.
    GenericCastTo(Option<Operand>),
    NotAnImage(Op),
    TexelLanes(Op),
    ImageCoordinates {
        op: Op,
        lanes: u32,
    },
    ImageQueryLanes {
        op: Op,
        lanes: u32,
    },
    UnsupportedBuiltin(BuiltIn),
    ChainOnNonPointer,
    StructIndexNotConstant,
    StructIndexOutOfRange,
    ChainIntoNonComposite(Ty),
    ChainIndexNotScalar,
    GroupOperationExpected(Operand),
    ExtInstOperands {
        op: Cl,
        have: usize,
        needs: usize,
    },
}

impl From<String> for LowerError {
    fn from(text: String) -> Self {
        LowerError::Module(text)
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LowerError as E;
        match self {
            E::Module(text) => f.write_str(text),
            E::InFunction { name, error } => write!(f, "in function '{name}': {error}"),
            E::ModuleSlots => write!(f, "the functions' values need more than {MAX_MODULE_SLOTS} register slots"),
            E::FrameSlots => write!(f, "its values need more than {MAX_FRAME_SLOTS} register slots"),
            E::ValueSlots(n) => write!(f, "a value of {n} register slots (at most {MAX_FRAME_SLOTS})"),
            E::Recursion { function } => {
                write!(f, "recursion is not allowed in OpenCL C (function %{function} calls itself)")
            }
            E::EntryPointWithoutName => f.write_str("entry point without a name"),
            E::EntryPointWithoutFunction => f.write_str("entry point names no function"),
            E::UnknownOperand(i) => {
                write!(f, "operand %{i} is not a value we know (forward reference to a non-value?)")
            }
            E::UnknownBlock(label) => write!(f, "branch to unknown block %{label}"),
            E::InstructionWithoutResult => f.write_str("instruction without a result"),
            E::NoRegister(r) => write!(f, "no register for %{r}"),
            E::PrivateTooLarge(size) => write!(
                f,
                "a private variable of {size} bytes (a work-item may have {} bytes)",
                crate::ir::value::MAX_PRIVATE_BYTES
            ),
            E::CompositeInsertIndex => f.write_str("CompositeInsert index out of range"),
            E::CompositeConstructComponents => f.write_str("CompositeConstruct with the wrong number of components"),
            E::ShuffleLanes { selectors, lanes } => {
                write!(f, "OpVectorShuffle of {selectors} components for {lanes} lanes")
            }
            E::ShuffleComponent { lane, a, b } => {
                write!(f, "OpVectorShuffle selects component {lane} of two vectors of {a} and {b} components")
            }
            E::UnknownCallee => f.write_str("call to an unknown function"),
            E::GenericCastTo(class) => write!(f, "OpGenericCastToPtrExplicit to {class:?}"),
            E::NotAnImage(op) => write!(f, "Op{op:?} on a value that is not an image of the right kind"),
            E::TexelLanes(op) => write!(f, "Op{op:?} needs a 4-component texel"),
            E::ImageCoordinates { op, lanes } => write!(f, "Op{op:?} with {lanes} coordinates"),
            E::ImageQueryLanes { op, lanes } => write!(f, "Op{op:?} with {lanes} lanes"),
            E::UnsupportedBuiltin(b) => write!(f, "unsupported builtin variable {b:?}"),
            E::ChainOnNonPointer => f.write_str("access chain on a non-pointer"),
            E::StructIndexNotConstant => f.write_str("struct index must be constant"),
            E::StructIndexOutOfRange => f.write_str("struct index out of range"),
            E::ChainIntoNonComposite(ty) => write!(f, "access chain into non-composite type {ty:?}"),
            E::ChainIndexNotScalar => f.write_str("an access-chain index that is not a scalar"),
            E::GroupOperationExpected(o) => write!(f, "group operation expected, found {o:?}"),
            E::ExtInstOperands { op, have, needs } => {
                write!(f, "OpenCL.std {op:?} with {have} operands (it needs {needs})")
            }
        }
    }
}

impl std::error::Error for LowerError {}

impl From<LowerError> for String {
    fn from(e: LowerError) -> Self {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_before() {
        let nested = LowerError::InFunction {
            name: "shuf".into(),
            error: Box::new(LowerError::ShuffleComponent { lane: 8, a: 4, b: 4 }),
        };
        assert_eq!(
            nested.to_string(),
            "in function 'shuf': OpVectorShuffle selects component 8 of two vectors of 4 and 4 components"
        );
        assert_eq!(
            LowerError::PrivateTooLarge(20_000_000).to_string(),
            "a private variable of 20000000 bytes (a work-item may have 16777216 bytes)"
        );
        assert_eq!(LowerError::TexelLanes(Op::ImageRead).to_string(), "OpImageRead needs a 4-component texel");
        assert_eq!(LowerError::GenericCastTo(None).to_string(), "OpGenericCastToPtrExplicit to None");
        assert_eq!(
            LowerError::ExtInstOperands { op: Cl::vloadn, have: 1, needs: 2 }.to_string(),
            "OpenCL.std vloadn with 1 operands (it needs 2)"
        );
    }
}
