//! Why a build failed, sorted by whose fault it is: the tools missing, the application's source
//! (clang's diagnostics become the build log), our own translator or loader, or a SPIR-V module
//! we cannot run.
//!
//! Plain data: it sees nothing of the tools or of what a built program becomes.

/// Why a program could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// The compiler tools are missing; the message says how to install them.
    ToolsMissing(String),
    /// The source does not compile: clang's diagnostics.
    Compile(String),
    /// The translator or our loader failed on input clang accepted: our bug, not the user's.
    Internal(String),
    /// The SPIR-V module is malformed or uses something we cannot run.
    Spirv(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::ToolsMissing(m) => write!(f, "compiler tools missing: {m}"),
            BuildError::Compile(log) => write!(f, "build failed:\n{log}"),
            BuildError::Internal(m) => write!(f, "internal compiler error: {m}"),
            BuildError::Spirv(m) => write!(f, "invalid or unsupported SPIR-V: {m}"),
        }
    }
}

impl std::error::Error for BuildError {}
