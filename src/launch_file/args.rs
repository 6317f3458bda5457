//! Argument descriptors: the `<...>` header of each kernel argument and the values after it,
//! turned into an [`ArgValue`], a buffer and perhaps a [`Dump`].

use super::contents::{At, Planned, Source, plan};
use super::descriptor::{ArgsSoFar, Ctx, Descriptor, parse_header, source};
use super::objects;
use super::reader::Reader;
use super::{Dump, ElemType, LaunchError};
use crate::exec::ArgValue;
use crate::exec::memory::BufferMode;
use crate::program::{AddressSpace, Handle, KernelArg};

/// Reads the descriptor of argument `index` (header and values) and records what it binds.
pub(super) fn read_arg(
    reader: &mut Reader,
    index: usize,
    arg: &KernelArg,
    out: &mut ArgsSoFar,
) -> Result<(), LaunchError> {
    let ctx = Ctx { index, arg };
    let header = read_header_text(reader, &ctx)?;
    let line = reader.line_no();
    match arg.handle {
        Some(Handle::Image) => return objects::read_image(reader, header, &ctx, line, out),
        Some(Handle::Sampler) => return objects::read_sampler(header, &ctx, line, out),
        None => {}
    }
    let desc = parse_header(header, &ctx, line)?;
    if let Some(target) = desc.alias {
        return bind_alias(&desc, target, &ctx, line, out);
    }
    if desc.null {
        return bind_null(&desc, &ctx, line, out);
    }
    let size = desc.size.ok_or_else(|| ctx.error(line, "size required"))?;
    let elem = element_type(&desc, &ctx, line, size)?;
    if desc.dump && !ctx.is_buffer() {
        return Err(ctx.error(line, "'dump' only valid for memory objects"));
    }
    let initializers = usize::from(desc.noinit) + usize::from(desc.fill.is_some()) + usize::from(desc.range.is_some());
    if initializers > 1 {
        return Err(ctx.error(line, "Multiple initializers present"));
    }
    if arg.space == AddressSpace::Local {
        out.args.push(ArgValue::Local(size));
        return Ok(());
    }
    // A type is needed to read values or to print them, not for zeros.
    let typed = || elem.ok_or_else(|| ctx.error(line, invalid_default_type(arg)));
    let source = source(&desc);
    let values_elem = if matches!(source, Source::Zeros) { ElemType::UChar } else { typed()? };
    let at = At { line, index, name: &arg.name };
    let planned = plan(reader, source, values_elem, desc.hex, size, &at)?;
    let dump = if desc.dump { Some((typed()?, desc.hex)) } else { None };
    let mode = match (desc.read_only, desc.write_only) {
        (true, _) => BufferMode::ReadOnly,
        (_, true) => BufferMode::WriteOnly,
        _ => BufferMode::ReadWrite,
    };
    bind_data(planned, dump, mode, arg, index, out)
}

/// Consumes `<` and returns the header text up to the last `>` of that line.
fn read_header_text<'a>(reader: &mut Reader<'a>, ctx: &Ctx) -> Result<&'a str, LaunchError> {
    match reader.char() {
        Some('<') => {}
        Some(_) => return Err(ctx.error(reader.line_no(), "Expected argument header <...>")),
        None => return Err(ctx.error(reader.line_no(), "Unexpected EOF: expected an argument header <...>")),
    }
    let rest = reader.rest();
    let end = rest.rfind('>').ok_or_else(|| ctx.error(reader.line_no(), "Missing '>' at end of argument header"))?;
    reader.advance(end + 1);
    Ok(&rest[..end])
}

/// The explicit type, else the one named by the argument's type (`None` if it names none).
/// A known type must divide `size`.
fn element_type(desc: &Descriptor, ctx: &Ctx, line: usize, size: usize) -> Result<Option<ElemType>, LaunchError> {
    let elem = desc.elem.or_else(|| ElemType::default_for(&ctx.arg.type_name));
    if elem.is_some_and(|elem| !size.is_multiple_of(elem.size())) {
        return Err(ctx.error(line, "Initialiser type must exactly divide argument size"));
    }
    Ok(elem)
}

fn invalid_default_type(arg: &KernelArg) -> String {
    format!(
        "Invalid default kernel argument type (no element type for '{}'; name one, e.g. <size=.. float>)",
        arg.type_name
    )
}

/// `<null>`: a NULL buffer pointer. No type is needed (the reference tool wants one anyway).
fn bind_null(desc: &Descriptor, ctx: &Ctx, line: usize, out: &mut ArgsSoFar) -> Result<(), LaunchError> {
    if desc.size.is_some() || desc.fill.is_some() || desc.range.is_some() || desc.noinit || desc.dump {
        return Err(ctx.error(line, "'null' not valid with other argument descriptors"));
    }
    out.args.push(ArgValue::Null);
    Ok(())
}

/// `<alias=K>`: the buffer of earlier argument `K`, shared (a clrace extension).
fn bind_alias(
    desc: &Descriptor,
    target: usize,
    ctx: &Ctx,
    line: usize,
    out: &mut ArgsSoFar,
) -> Result<(), LaunchError> {
    if !ctx.is_buffer() {
        return Err(ctx.error(line, "'alias' only valid for buffer arguments"));
    }
    if desc.size.is_some() || desc.fill.is_some() || desc.range.is_some() || desc.noinit || desc.null {
        return Err(ctx.error(line, "'alias' not valid with size, fill, range, noinit or null"));
    }
    if target >= ctx.index {
        return Err(ctx.error(line, format!("alias={target} must name an earlier argument")));
    }
    let Some(&ArgValue::Buffer(buffer)) = out.args.get(target) else {
        return Err(ctx.error(line, format!("alias={target}: argument {target} is not a buffer")));
    };
    out.args.push(ArgValue::Buffer(buffer));
    if desc.dump {
        let size = out.buffers[buffer].size;
        let elem =
            element_type(desc, ctx, line, size)?.ok_or_else(|| ctx.error(line, invalid_default_type(ctx.arg)))?;
        out.dumps.push(Dump { arg_index: ctx.index, name: ctx.arg.name.clone(), buffer, elem, hex: desc.hex });
    }
    Ok(())
}

/// Binds a by-value argument or a new buffer; `dump` is the element type and hex flag to print
/// the buffer with.
fn bind_data(
    planned: Planned,
    dump: Option<(ElemType, bool)>,
    mode: BufferMode,
    arg: &KernelArg,
    index: usize,
    out: &mut ArgsSoFar,
) -> Result<(), LaunchError> {
    if arg.space == AddressSpace::Private {
        // The argument's own size wins: extra bytes are dropped, missing ones are zero.
        let mut data = planned.make(if arg.size > 0 { arg.size } else { planned.size })?;
        if arg.size > 0 {
            data.resize(arg.size, 0);
        }
        out.args.push(ArgValue::Value(data));
        return Ok(());
    }
    let buffer = out.buffers.len();
    if planned.noinit() {
        out.noinit.resize(buffer, false);
        out.noinit.push(true);
    }
    out.buffers.push(planned);
    out.args.push(ArgValue::Buffer(buffer));
    if mode != BufferMode::ReadWrite {
        out.modes.resize(buffer, BufferMode::ReadWrite);
        out.modes.push(mode);
    }
    if let Some((elem, hex)) = dump {
        out.dumps.push(Dump { arg_index: index, name: arg.name.clone(), buffer, elem, hex });
    }
    Ok(())
}
