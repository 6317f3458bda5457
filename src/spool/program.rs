//! The program of a spooled launch as the emulator builds it: its name, its OpenCL C text or
//! SPIR-V with the build options, or the units a `clLinkProgram` linked. The layer fills a
//! [`ProgramSpec`] from what the application gave the driver; the spool stores it as one blob
//! (its JSON) that every launch of the program shares, and the checker of a spool builds it here
//! exactly as the layer builds it for an inline check.
//!
//! It knows nothing of the layer's program objects or of how the spool stores it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::compile::{BuildError, Unit};
use crate::program::Program;
use crate::report::Sources;

/// A program as the emulator builds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramSpec {
    /// The name reports call it (`axpb-1a2b3c4d.cl`): the path its source is compiled under.
    pub name: String,
    pub kind: ProgramKind,
}

/// Where a program came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ProgramKind {
    /// OpenCL C source, built with `options` (the application's) and `device_options` (those
    /// that make our compiler see the device's extensions).
    Source {
        text: String,
        options: String,
        device_options: String,
        /// Headers of the last `clCompileProgram`: include name and text.
        headers: Vec<(String, String)>,
    },
    /// A SPIR-V module.
    Il {
        #[serde(with = "super::hex::bytes")]
        bytes: Vec<u8>,
    },
    /// Made by `clLinkProgram` from separately compiled units, linked with `options`.
    Linked { units: Vec<UnitSpec>, options: String },
}

/// One separately compiled program inside a linked one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitSpec {
    /// The name reports give it.
    pub name: String,
    pub source: String,
    /// `clCompileProgram`'s options (with the device's extensions).
    pub options: String,
    /// Headers given to `clCompileProgram`: include name and text.
    pub headers: Vec<(String, String)>,
    /// The module of a program created from SPIR-V (then `source` is empty).
    #[serde(with = "super::hex::optional")]
    pub il: Option<Vec<u8>>,
}

impl ProgramSpec {
    /// Builds the program for the emulator: OpenCL C compiled under its name with its options
    /// and the device's, SPIR-V read as it is, linked units compiled and linked.
    pub fn build(&self) -> Result<Program, BuildError> {
        match &self.kind {
            ProgramKind::Source { text, options, device_options, .. } => {
                let options = format!("{options} {device_options}");
                Program::from_source(text, &PathBuf::from(&self.name), &options)
            }
            ProgramKind::Il { bytes } => Program::from_spirv(bytes),
            ProgramKind::Linked { units, options } => {
                let units: Vec<Unit> = units
                    .iter()
                    .map(|u| Unit {
                        source: u.source.clone(),
                        path: PathBuf::from(&u.name),
                        options: u.options.clone(),
                        headers: u.headers.clone(),
                        spirv: u.il.clone(),
                    })
                    .collect();
                Program::from_units(&units, options)
            }
        }
    }

    /// The source text of the program, for the lines its reports show (none for SPIR-V).
    pub fn sources(&self) -> Sources {
        let files = match &self.kind {
            ProgramKind::Source { text, .. } => vec![(PathBuf::from(&self.name), text.clone())],
            ProgramKind::Linked { units, .. } => {
                units.iter().map(|u| (PathBuf::from(&u.name), u.source.clone())).collect()
            }
            ProgramKind::Il { .. } => Vec::new(),
        };
        Sources::new(files)
    }
}
