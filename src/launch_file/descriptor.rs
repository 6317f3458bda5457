//! The `<...>` header of a kernel argument: its tokens, read into a [`Descriptor`], and what the
//! arguments read so far have bound ([`ArgsSoFar`]). Shared by the readers of plain arguments
//! (`args.rs`) and of images and samplers (`objects.rs`); it sees neither.

use super::contents::{Planned, Source};
use super::{Dump, ElemType, LaunchError};
use crate::exec::ArgValue;
use crate::exec::memory::BufferMode;
use crate::program::{AddressSpace, KernelArg};

/// What the arguments read so far produced.
#[derive(Default)]
pub(super) struct ArgsSoFar {
    pub(super) args: Vec<ArgValue>,
    /// Made once the whole file has been read (see [`super::contents`]).
    pub(super) buffers: Vec<Planned>,
    pub(super) dumps: Vec<Dump>,
    /// The access mode (`ro`, `wo`) of each buffer, by index; missing ones are read-write.
    pub(super) modes: Vec<BufferMode>,
    /// Whether each buffer was marked `noinit`, by index; missing ones were not.
    pub(super) noinit: Vec<bool>,
}

/// The argument being read, for error messages.
pub(super) struct Ctx<'a> {
    pub(super) index: usize,
    pub(super) arg: &'a KernelArg,
}

impl Ctx<'_> {
    pub(super) fn error(&self, line: usize, message: impl Into<String>) -> LaunchError {
        LaunchError { line, message: message.into(), arg: Some((self.index, self.arg.name.clone())) }
    }

    pub(super) fn is_buffer(&self) -> bool {
        matches!(self.arg.space, AddressSpace::Global | AddressSpace::Constant)
    }
}

/// The tokens of one argument header.
#[derive(Default)]
pub(super) struct Descriptor<'a> {
    pub(super) size: Option<usize>,
    pub(super) elem: Option<ElemType>,
    pub(super) fill: Option<&'a str>,
    pub(super) range: Option<&'a str>,
    pub(super) noinit: bool,
    pub(super) null: bool,
    pub(super) dump: bool,
    pub(super) hex: bool,
    pub(super) read_only: bool,
    pub(super) write_only: bool,
    pub(super) alias: Option<usize>,
}

/// Where the descriptor's values come from.
pub(super) fn source<'a>(desc: &Descriptor<'a>) -> Source<'a> {
    match (desc.noinit, desc.fill, desc.range) {
        (true, ..) => Source::Zeros,
        (_, Some(fill), _) => Source::Fill(fill),
        (_, _, Some(range)) => Source::Range(range),
        _ => Source::Inline,
    }
}

/// The tokens of an argument header.
pub(super) fn parse_header<'a>(header: &'a str, ctx: &Ctx, line: usize) -> Result<Descriptor<'a>, LaunchError> {
    let mut desc = Descriptor::default();
    for token in header.split(super::reader::is_space).filter(|t| !t.is_empty()) {
        apply_token(&mut desc, token, ctx).map_err(|message| ctx.error(line, message))?;
    }
    Ok(desc)
}

/// Records one header token. Like the reference tool, `dump`, `fill`, `range` and `size` are
/// recognised by prefix (`dumpit` is `dump`).
pub(super) fn apply_token<'a>(desc: &mut Descriptor<'a>, token: &'a str, ctx: &Ctx) -> Result<(), String> {
    if let Some(elem) = ElemType::from_keyword(token) {
        if desc.elem.replace(elem).is_some() {
            return Err("Argument type defined multiple times".into());
        }
    } else if token.starts_with("dump") {
        desc.dump = true;
    } else if let Some(value) = token.strip_prefix("fill") {
        desc.fill = Some(value.strip_prefix('=').filter(|v| !v.is_empty()).ok_or("Expected =VALUE after 'fill'")?);
    } else if token == "hex" {
        desc.hex = true;
    } else if token == "noinit" || token == "null" {
        if !ctx.is_buffer() {
            return Err(format!("'{token}' only valid for buffer arguments"));
        }
        *(if token == "null" { &mut desc.null } else { &mut desc.noinit }) = true;
    } else if let Some(value) = token.strip_prefix("range") {
        let value = value.strip_prefix('=').filter(|v| !v.is_empty());
        desc.range = Some(value.ok_or("Expected =START:INC:END after 'range'")?);
    } else if token == "ro" || token == "wo" {
        apply_access(desc, token, ctx)?;
    } else if let Some(value) = token.strip_prefix("alias=") {
        desc.alias = Some(value.parse().map_err(|_| format!("Invalid value for 'alias': '{value}'"))?);
    } else if let Some(value) = token.strip_prefix("size") {
        let value = value.strip_prefix('=').ok_or("Expected = after 'size'")?;
        desc.size = Some(value.parse().map_err(|_| "Invalid value for 'size'")?);
    } else {
        return Err(format!("Unrecognised header token '{token}'"));
    }
    Ok(())
}

/// `ro` / `wo`: checked like the reference tool; the run then reports stores to a read-only and
/// loads from a write-only buffer (`access-mode` findings).
fn apply_access(desc: &mut Descriptor, token: &str, ctx: &Ctx) -> Result<(), String> {
    let other = if token == "ro" { desc.write_only } else { desc.read_only };
    if other {
        return Err("'ro' and 'wo' are mutually exclusive".into());
    }
    if ctx.arg.space != AddressSpace::Global {
        return Err(format!("'{token}' only valid for global memory buffers"));
    }
    *(if token == "ro" { &mut desc.read_only } else { &mut desc.write_only }) = true;
    Ok(())
}
