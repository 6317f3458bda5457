//! Image and sampler argument descriptors, a clrace extension of the launch-file format:
//! `<image2d order=RGBA type=UNORM_INT8 width=W height=H ...>` followed by the pixels, and
//! `<sampler normalized address=repeat filter=linear>`.

use super::contents::{At, plan};
use super::descriptor::{ArgsSoFar, Ctx, Descriptor, apply_token, source};
use super::reader::Reader;
use super::{Dump, ElemType, LaunchError};
use crate::exec::ArgValue;
use crate::exec::image::{self, Addressing, ImageDesc, ImageKind, Sampler, Storage};

/// Reads an image argument: geometry and format from the header, then the pixels like a buffer's
/// values (`fill`, `range`, `noinit` or inline, as elements of the channel type).
pub(super) fn read_image(
    reader: &mut Reader,
    header: &str,
    ctx: &Ctx,
    line: usize,
    out: &mut ArgsSoFar,
) -> Result<(), LaunchError> {
    let err = |message: String| ctx.error(line, message);
    let mut kind = kind_from_type_name(&ctx.arg.type_name);
    let (mut order, mut data_type) = (None, None);
    let mut dims = [1u64; 4];
    let mut desc = Descriptor::default();
    for token in header.split(super::reader::is_space).filter(|t| !t.is_empty()) {
        let (key, value) = token.split_once('=').unwrap_or((token, ""));
        let number = || value.parse::<u64>().map_err(|_| err(format!("Invalid value for '{key}': '{value}'")));
        match key {
            "image1d" | "image1d_buffer" | "image1d_array" | "image2d" | "image2d_array" | "image3d" => {
                kind = kind_from_type_name(key)
            }
            "width" => dims[0] = number()?,
            "height" => dims[1] = number()?,
            "depth" => dims[2] = number()?,
            "layers" => dims[3] = number()?,
            "order" => {
                order = Some(image::order_named(value).ok_or_else(|| err(format!("Unknown channel order '{value}'")))?)
            }
            "type" => {
                data_type =
                    Some(image::type_named(value).ok_or_else(|| err(format!("Unknown channel type '{value}'")))?)
            }
            _ => apply_token(&mut desc, token, ctx).map_err(err)?,
        }
    }
    if desc.null || desc.alias.is_some() || desc.read_only || desc.write_only {
        return Err(err("'null', 'alias', 'ro' and 'wo' are not valid for images".into()));
    }
    let kind = kind.ok_or_else(|| err("the image kind is unknown: name it (image2d, image3d, ...)".into()))?;
    let (Some(order), Some(data_type)) = (order, data_type) else {
        return Err(err("an image needs order=... and type=...".into()));
    };
    let image =
        ImageDesc { kind, order, data_type, width: dims[0], height: dims[1], depth: dims[2], array_size: dims[3] };
    image.check().map_err(err)?;
    let size = image.byte_size() as usize;
    if desc.size.is_some_and(|s| s != size) {
        return Err(err(format!("size={} does not match the image's {size} bytes", desc.size.unwrap_or(0))));
    }
    let initializers = usize::from(desc.noinit) + usize::from(desc.fill.is_some()) + usize::from(desc.range.is_some());
    if initializers > 1 {
        return Err(err("Multiple initializers present".into()));
    }
    let elem = desc.elem.unwrap_or_else(|| elem_for(data_type));
    if !size.is_multiple_of(elem.size()) {
        return Err(err("Initialiser type must exactly divide argument size".into()));
    }
    let at = At { line, index: ctx.index, name: &ctx.arg.name };
    let planned = plan(reader, source(&desc), elem, desc.hex, size, &at)?;
    let buffer = out.buffers.len();
    out.buffers.push(planned);
    out.args.push(ArgValue::Image { buffer, desc: image });
    if desc.dump {
        out.dumps.push(Dump { arg_index: ctx.index, name: ctx.arg.name.clone(), buffer, elem, hex: desc.hex });
    }
    Ok(())
}

/// Reads a sampler argument: `normalized`, `address=MODE`, `filter=nearest|linear`.
pub(super) fn read_sampler(header: &str, ctx: &Ctx, line: usize, out: &mut ArgsSoFar) -> Result<(), LaunchError> {
    let mut sampler = Sampler { normalized: false, addressing: Addressing::None, linear: false };
    for token in header.split(super::reader::is_space).filter(|t| !t.is_empty()) {
        sampler = match token.split_once('=').unwrap_or((token, "")) {
            ("sampler", "") => sampler,
            ("normalized", "") => Sampler { normalized: true, ..sampler },
            ("address", mode) => {
                let addressing = match mode {
                    "none" => Addressing::None,
                    "clamp_to_edge" => Addressing::ClampToEdge,
                    "clamp" => Addressing::Clamp,
                    "repeat" => Addressing::Repeat,
                    "mirrored_repeat" => Addressing::MirroredRepeat,
                    _ => return Err(ctx.error(line, format!("Unknown addressing mode '{mode}'"))),
                };
                Sampler { addressing, ..sampler }
            }
            ("filter", "nearest") => Sampler { linear: false, ..sampler },
            ("filter", "linear") => Sampler { linear: true, ..sampler },
            _ => return Err(ctx.error(line, format!("Unrecognised sampler token '{token}'"))),
        };
    }
    out.args.push(ArgValue::Sampler(sampler.bits() as u32));
    Ok(())
}

/// The image kind an OpenCL C type name (`image2d_t`, `image1d_buffer_t`...) or header token names.
fn kind_from_type_name(name: &str) -> Option<ImageKind> {
    let name = name.trim().trim_end_matches("_t");
    Some(match name {
        "image1d" => ImageKind::D1,
        "image1d_buffer" => ImageKind::D1Buffer,
        "image1d_array" => ImageKind::D1Array,
        "image2d" => ImageKind::D2,
        "image2d_array" => ImageKind::D2Array,
        "image3d" => ImageKind::D3,
        _ => return None,
    })
}

/// The element type pixel values are written in by default: the channel's storage type (`half`
/// channels as their raw bits in `ushort`).
fn elem_for(data_type: u32) -> ElemType {
    match image::storage_of(data_type) {
        Some(Storage::Snorm(8) | Storage::Signed(8)) => ElemType::Char,
        Some(Storage::Snorm(16) | Storage::Signed(16)) => ElemType::Short,
        Some(Storage::Unorm(8) | Storage::Unsigned(8)) => ElemType::UChar,
        Some(Storage::Unorm(16) | Storage::Unsigned(16) | Storage::Half) => ElemType::UShort,
        Some(Storage::Signed(32)) => ElemType::Int,
        Some(Storage::Unsigned(32)) => ElemType::UInt,
        _ => ElemType::Float,
    }
}
