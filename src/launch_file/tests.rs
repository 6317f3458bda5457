//! End-to-end tests of launch-file reading and dump printing, on kernel signatures built by
//! hand. Expected dump texts were captured from `oclgrind-kernel` 21.10 runs.

use super::*;
use crate::exec::ArgValue;
use crate::program::{AddressSpace, KernelArg};

fn arg(name: &str, space: AddressSpace, type_name: &str, size: usize) -> KernelArg {
    let is_pointer = space != AddressSpace::Private;
    KernelArg {
        name: name.into(),
        space,
        is_pointer,
        type_name: type_name.into(),
        size: if is_pointer { 8 } else { size },
        pointee_size: if is_pointer { size } else { 0 },
        handle: None,
    }
}

fn global(name: &str, ty: &str) -> KernelArg {
    arg(name, AddressSpace::Global, &format!("{ty}*"), 4)
}

fn constant(name: &str, ty: &str) -> KernelArg {
    arg(name, AddressSpace::Constant, &format!("{ty}*"), 4)
}

fn local(name: &str, ty: &str) -> KernelArg {
    arg(name, AddressSpace::Local, &format!("{ty}*"), 4)
}

fn private(name: &str, ty: &str, size: usize) -> KernelArg {
    arg(name, AddressSpace::Private, ty, size)
}

fn kernel(args: Vec<KernelArg>) -> KernelInfo {
    KernelInfo { name: "k".into(), args, required_local_size: None }
}

fn parse(text: &str, kernel: &KernelInfo) -> Result<LaunchFile, LaunchError> {
    let header = parse_header(text)?;
    parse_args(text, &header, kernel, 1)
}

fn ok(text: &str, kernel: &KernelInfo) -> LaunchFile {
    parse(text, kernel).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn err(text: &str, kernel: &KernelInfo) -> String {
    match parse(text, kernel) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const HEAD: &str = "k.cl\nk\n4 1 1\n1 1 1\n";

fn bytes<T: scalar::Elem>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    values.iter().for_each(|v| v.put(&mut out));
    out
}

#[test]
fn bench_style_file() {
    let text = "# tiled matmul, n=128, 16x16 work-groups\nmatmul.cl\nmatmul\n128 128 1\n16 16 1\n\n\
                <size=4>\n128\n<size=64 fill=0.5>\n<size=64 fill=2>\n<size=64 fill=0>\n";
    let k = kernel(vec![private("n", "int", 4), global("a", "float"), global("b", "float"), global("c", "float")]);
    let header = parse_header(text).unwrap();
    assert_eq!(header.program, "matmul.cl");
    assert_eq!(header.kernel, "matmul");
    let data = parse_args(text, &header, &k, 1).unwrap();
    assert_eq!(data.launch.kernel, "matmul");
    assert_eq!(data.launch.work_dim, 3);
    assert_eq!(data.launch.global_size, [128, 128, 1]);
    assert_eq!(data.launch.local_size, [16, 16, 1]);
    assert_eq!(data.launch.global_offset, [0; 3]);
    assert_eq!(
        data.launch.args,
        vec![
            ArgValue::Value(128i32.to_le_bytes().to_vec()),
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Buffer(2)
        ]
    );
    assert_eq!(data.buffers[0], bytes(&[0.5f32; 16]));
    assert_eq!(data.buffers[1], bytes(&[2.0f32; 16]));
    assert_eq!(data.buffers[2], vec![0; 64]);
    assert!(data.dumps.is_empty());
}

#[test]
fn header_tokens_and_defaults() {
    let k = kernel(vec![
        global("a", "float4"),
        constant("b", "uint"),
        global("c", "void"),
        local("scratch", "int"),
        global("d", "long"),
        global("e", "short"),
        global("f", "S"),
    ]);
    let text = format!(
        "{HEAD}<size=32 range=0:1:7 dump ro>\n<size=8 hex dump> ff 10\n<size=3 noinit wo dump>\n<size=16>\n\
         <null>\n<size=4 ushort fill=-1 dump>\n<size=8 double fill=1.5 dump hex>\n"
    );
    let data = ok(&text, &k);
    assert_eq!(data.buffers[0], bytes(&[0f32, 1., 2., 3., 4., 5., 6., 7.]));
    assert_eq!(data.buffers[1], bytes(&[255u32, 16]));
    assert_eq!(data.buffers[2], vec![0; 3]);
    assert_eq!(data.buffers[3], bytes(&[u16::MAX; 2]));
    assert_eq!(data.buffers[4], bytes(&[1.5f64]));
    assert_eq!(
        data.launch.args,
        vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Buffer(2),
            ArgValue::Local(16),
            ArgValue::Null,
            ArgValue::Buffer(3),
            ArgValue::Buffer(4),
        ]
    );
    let dumps: Vec<_> = data.dumps.iter().map(|d| (d.arg_index, d.name.as_str(), d.buffer, d.elem, d.hex)).collect();
    assert_eq!(
        dumps,
        vec![
            (0, "a", 0, ElemType::Float, false),
            (1, "b", 1, ElemType::UInt, true),
            (2, "c", 2, ElemType::UChar, false),
            (5, "e", 3, ElemType::UShort, false),
            (6, "f", 4, ElemType::Double, true),
        ]
    );
}

#[test]
fn prefix_tokens_like_the_reference_tool() {
    let k = kernel(vec![global("a", "int")]);
    let data = ok(&format!("{HEAD}<size=4 dumped fill=3>"), &k);
    assert_eq!(data.dumps.len(), 1);
    assert_eq!(data.buffers[0], bytes(&[3i32]));
}

#[test]
fn default_type_by_prefix() {
    let cases = [
        ("char", ElemType::Char),
        ("uchar16*", ElemType::UChar),
        ("short2", ElemType::Short),
        ("ushort", ElemType::UShort),
        ("int4*", ElemType::Int),
        ("uint*", ElemType::UInt),
        ("long", ElemType::Long),
        ("ulong8*", ElemType::ULong),
        ("float3*", ElemType::Float),
        ("double*", ElemType::Double),
        ("void*", ElemType::UChar),
    ];
    for (name, elem) in cases {
        assert_eq!(ElemType::default_for(name), Some(elem), "{name}");
    }
    for name in ["S", "struct S*", "half*", "size_t", "bool"] {
        assert_eq!(ElemType::default_for(name), None, "{name}");
    }
}

#[test]
fn inline_values_span_lines_and_comments() {
    let k = kernel(vec![global("a", "int"), global("b", "float")]);
    let text = format!("{HEAD}<size=16 dump> 1\n  2 # two\n\n-3\n+4 <size=8>\n 0.5 1e3");
    let data = ok(&text, &k);
    assert_eq!(data.buffers[0], bytes(&[1i32, 2, -3, 4]));
    assert_eq!(data.buffers[1], bytes(&[0.5f32, 1000.0]));
}

#[test]
fn header_is_read_to_the_last_angle_bracket() {
    // The header is everything up to the last '>' of its line; what follows is values.
    let k = kernel(vec![global("a", "int")]);
    let data = ok(&format!("{HEAD}  <size=8 dump> 7 8"), &k);
    assert_eq!(data.buffers[0], bytes(&[7i32, 8]));
    assert_eq!(err(&format!("{HEAD}<size=4> 1 >"), &k), "Line 5: Invalid value for 'size' (argument 0: a)");
}

#[test]
fn char_values_hex_and_range_checked() {
    let k = kernel(vec![global("a", "char"), global("b", "uchar")]);
    let data = ok(&format!("{HEAD}<size=5 char hex>\n0x01 0x02 -7f 7f 0\n<size=2> 255 0"), &k);
    assert_eq!(data.buffers[0], vec![1, 2, 0x81, 0x7f, 0]);
    assert_eq!(data.buffers[1], vec![255, 0]);
    assert_eq!(err(&format!("{HEAD}<size=2>\n1 128\n<size=1> 0"), &k), "Line 6: Invalid char value (argument 0: a)");
    assert_eq!(err(&format!("{HEAD}<size=1> 0\n<size=1> -1"), &k), "Line 6: Invalid char value (argument 1: b)");
    assert_eq!(err(&format!("{HEAD}<size=2 fill=300>\n<size=1> 0"), &k), "Line 5: Invalid char value (argument 0: a)");
}

/// Bytes as `clrace export` writes them (two hex digits each, many to a line) read in one pass
/// per line, mixed with words of other forms, which read as before; and what is wrong in them
/// still names the word and its line.
#[test]
fn hex_byte_lines_mixed_with_other_words() {
    let k = kernel(vec![global("a", "uchar"), global("b", "uchar")]);
    let text =
        format!("{HEAD}<size=12 uchar hex>\n00 0a FF\tfe 0x1f 7\n\n  Ab 10 +3 0X2 00\n01\n<size=1 uchar hex> c0");
    let data = ok(&text, &k);
    assert_eq!(data.buffers[0], vec![0, 10, 255, 254, 31, 7, 0xab, 16, 3, 2, 0, 1]);
    assert_eq!(data.buffers[1], vec![0xc0]);
    let k = kernel(vec![global("a", "uchar")]);
    assert_eq!(
        err(&format!("{HEAD}<size=4 uchar hex>\n00 11\n22 g1"), &k),
        "Line 7: Failed to parse 'g1' as uchar (hex) (argument 0: a)"
    );
    assert_eq!(err(&format!("{HEAD}<size=3 uchar hex>\n00 100 11"), &k), "Line 6: Invalid char value (argument 0: a)");
    assert_eq!(
        err(&format!("{HEAD}<size=4 uchar hex>\n00 11\n22"), &k),
        "Line 7: Unexpected EOF: expected 4 values, found 3 (argument 0: a)"
    );
}

#[test]
fn hex_applies_to_inline_fill_and_range_values_but_not_floats() {
    let k = kernel(vec![global("a", "uint"), global("b", "short"), global("c", "float")]);
    let text = format!("{HEAD}<hex size=8> 0xFF 10\n<size=8 range=a:-3:1 hex>\n<size=4 hex> 10");
    let data = ok(&text, &k);
    assert_eq!(data.buffers[0], bytes(&[255u32, 16]));
    assert_eq!(data.buffers[1], bytes(&[10i16, 7, 4, 1]));
    assert_eq!(data.buffers[2], bytes(&[10.0f32]));
    let k = kernel(vec![global("a", "int")]);
    assert_eq!(ok(&format!("{HEAD}<size=4 fill=ff hex>"), &k).buffers[0], bytes(&[255i32]));
}

#[test]
fn ranges() {
    let k = kernel(vec![global("a", "float"), global("b", "int"), global("c", "uchar"), global("d", "double")]);
    let text = format!(
        "{HEAD}<size=16 range=1:-0.5:-0.5>\n<size=16 range=3:-1:0>\n<size=256 range=0:1:255>\n\
                        <size=88 range=0:0.1:1>"
    );
    let data = ok(&text, &k);
    assert_eq!(data.buffers[0], bytes(&[1.0f32, 0.5, 0.0, -0.5]));
    assert_eq!(data.buffers[1], bytes(&[3i32, 2, 1, 0]));
    assert_eq!(data.buffers[2], (0..=255u8).collect::<Vec<_>>());
    let tenths: Vec<f64> = std::iter::successors(Some(0.0f64), |v| Some(v + 0.1)).take(11).collect();
    assert_eq!(data.buffers[3], bytes(&tenths));
    // Accumulated in float, like the reference tool: 0:0.1:0.7 gives 8 values.
    let k = kernel(vec![global("a", "float")]);
    let data = ok(&format!("{HEAD}<size=32 range=0:0.1:0.7>"), &k);
    let sevenths: Vec<f32> = std::iter::successors(Some(0.0f32), |v| Some(v + 0.1)).take(8).collect();
    assert_eq!(data.buffers[0], bytes(&sevenths));
}

#[test]
fn range_and_fill_errors() {
    let k = kernel(vec![global("a", "float")]);
    let cases = [
        ("<size=16 range=0:1:2>", "Line 5: Range doesn't produce correct buffer size (3 values for 4 elements)"),
        // In float arithmetic (1 - 0 + 0.1) / 0.1 is not a whole number.
        (
            "<size=44 range=0:0.1:1>",
            "Line 5: Range doesn't produce correct buffer size (11.000000074505804 values for 11 elements)",
        ),
        ("<size=16 range=0:0:3>", "Line 5: Range doesn't produce correct buffer size (inf values for 4 elements)"),
        ("<size=16 range=0:1:3x>", "Line 5: Invalid range format"),
        ("<size=16 range=0:1>", "Line 5: Invalid range format"),
        ("<size=16 range=a:1:3>", "Line 5: Invalid range format"),
        ("<size=16 range=0:1:3:4>", "Line 5: Invalid range format"),
        ("<size=16 range=>", "Line 5: Expected =START:INC:END after 'range'"),
        ("<size=16 fill=x>", "Line 5: Invalid fill value"),
        ("<size=16 fill=1e40>", "Line 5: Invalid fill value"),
        ("<size=16 fill=1.5.>", "Line 5: Invalid fill value"),
        ("<size=16 fill>", "Line 5: Expected =VALUE after 'fill'"),
    ];
    for (header, expected) in cases {
        assert_eq!(err(&format!("{HEAD}{header}"), &k), format!("{expected} (argument 0: a)"), "{header}");
    }
}

#[test]
fn local_arguments_use_only_the_size() {
    let k = kernel(vec![local("tmp", "float"), local("s", "S"), global("o", "int")]);
    let data = ok(&format!("{HEAD}<size=1024 fill=abc hex>\n<size=12>\n<size=4 fill=0>"), &k);
    assert_eq!(data.launch.args, vec![ArgValue::Local(1024), ArgValue::Local(12), ArgValue::Buffer(0)]);
    assert_eq!(data.buffers.len(), 1);
    assert_eq!(
        err(&format!("{HEAD}<size=6>\n<size=12>\n<size=4 fill=0>"), &k),
        "Line 5: Initialiser type must exactly divide argument size (argument 0: tmp)"
    );
}

#[test]
fn private_arguments_become_values() {
    let k = kernel(vec![
        private("n", "int", 4),
        private("v", "float4", 16),
        private("s", "S", 12),
        private("c", "uchar", 1),
        private("w", "int", 4),
        private("x", "int", 4),
    ]);
    let text = format!(
        "{HEAD}<size=4> 7\n<size=16> 1 2 3 4\n<size=12 float> 1 2 3\n<size=1> 200\n<size=8> 5 6\n<size=2 short> -1"
    );
    let data = ok(&text, &k);
    let values: Vec<_> = data
        .launch
        .args
        .iter()
        .map(|a| match a {
            ArgValue::Value(v) => v.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(values[0], bytes(&[7i32]));
    assert_eq!(values[1], bytes(&[1.0f32, 2.0, 3.0, 4.0]));
    assert_eq!(values[2], bytes(&[1.0f32, 2.0, 3.0]));
    assert_eq!(values[3], vec![200]);
    // The argument's size wins: extra bytes dropped, missing ones zero.
    assert_eq!(values[4], bytes(&[5i32]));
    assert_eq!(values[5], vec![0xff, 0xff, 0, 0]);
    assert!(data.buffers.is_empty());
    let k = kernel(vec![private("n", "uint", 4)]);
    assert_eq!(ok(&format!("{HEAD}<size=4 fill=-1>"), &k).launch.args, vec![ArgValue::Value(vec![0xff; 4])]);
}

#[test]
fn null_and_noinit_need_no_type() {
    let k = kernel(vec![global("p", "S"), global("q", "S")]);
    let data = ok(&format!("{HEAD}<null>\n<size=24 noinit>"), &k);
    assert_eq!(data.launch.args, vec![ArgValue::Null, ArgValue::Buffer(0)]);
    assert_eq!(data.buffers, vec![vec![0; 24]]);
    let expected = "Line 6: Invalid default kernel argument type (no element type for 'S*'; name one, e.g. \
                    <size=.. float>) (argument 1: q)";
    assert_eq!(err(&format!("{HEAD}<null>\n<size=24 noinit dump>"), &k), expected);
    let data = ok(&format!("{HEAD}<null>\n<size=24 noinit dump int>"), &k);
    assert_eq!(data.dumps[0].elem, ElemType::Int);
}

#[test]
fn descriptor_errors_name_line_and_argument() {
    let k = kernel(vec![private("n", "int", 4), global("buf", "float"), constant("c", "int"), global("s", "S")]);
    let good = ["<size=4> 1", "<size=4 fill=0>", "<size=4 fill=0>", "<size=4 float fill=0>"];
    let with = |index: usize, bad: &str| {
        let mut lines = good.map(String::from);
        lines[index] = bad.into();
        format!("{HEAD}{}", lines.join("\n"))
    };
    let cases = [
        (1, "<fill=0>", "Line 6: size required (argument 1: buf)"),
        (1, "<size=4 bogus>", "Line 6: Unrecognised header token 'bogus' (argument 1: buf)"),
        (1, "size=4>", "Line 6: Expected argument header <...> (argument 1: buf)"),
        (1, "<size=4 fill=0", "Line 6: Missing '>' at end of argument header (argument 1: buf)"),
        (1, "<size=4 int float fill=0>", "Line 6: Argument type defined multiple times (argument 1: buf)"),
        (1, "<size=4 fill=0 noinit>", "Line 6: Multiple initializers present (argument 1: buf)"),
        (1, "<size=4 fill=0 range=0:1:0>", "Line 6: Multiple initializers present (argument 1: buf)"),
        (1, "<size=6 fill=0>", "Line 6: Initialiser type must exactly divide argument size (argument 1: buf)"),
        (1, "<sizes=4>", "Line 6: Expected = after 'size' (argument 1: buf)"),
        (1, "<size=-1>", "Line 6: Invalid value for 'size' (argument 1: buf)"),
        (
            1,
            "<size=18446744073709551615 uchar noinit>",
            "Line 6: size=18446744073709551615 is more than the 1099511627776 bytes (1 TiB) a buffer may have \
             (argument 1: buf)",
        ),
        (1, "<size=4 null>", "Line 6: 'null' not valid with other argument descriptors (argument 1: buf)"),
        (1, "<null dump>", "Line 6: 'null' not valid with other argument descriptors (argument 1: buf)"),
        (1, "<size=4 ro wo fill=0>", "Line 6: 'ro' and 'wo' are mutually exclusive (argument 1: buf)"),
        (2, "<size=4 ro fill=0>", "Line 7: 'ro' only valid for global memory buffers (argument 2: c)"),
        (0, "<size=4 dump> 1", "Line 5: 'dump' only valid for memory objects (argument 0: n)"),
        (0, "<size=4 noinit>", "Line 5: 'noinit' only valid for buffer arguments (argument 0: n)"),
        (0, "<null>", "Line 5: 'null' only valid for buffer arguments (argument 0: n)"),
        (0, "<size=4 wo> 1", "Line 5: 'wo' only valid for global memory buffers (argument 0: n)"),
        (0, "<size=4> 1.5", "Line 5: Expected argument header <...> (argument 1: buf)"),
        (0, "<size=4> x", "Line 5: Failed to parse 'x' as int (argument 0: n)"),
        (0, "<size=4 hex> g", "Line 5: Failed to parse 'g' as int (hex) (argument 0: n)"),
        (0, "<size=4> 2147483648", "Line 5: Failed to parse '2147483648' as int (argument 0: n)"),
        (
            3,
            "<size=4 fill=0>",
            "Line 8: Invalid default kernel argument type (no element type for 'S*'; name one, e.g. <size=.. float>) \
             (argument 3: s)",
        ),
    ];
    for (index, bad, expected) in cases {
        assert_eq!(err(&with(index, bad), &k), expected, "{bad}");
    }
}

#[test]
fn end_of_file_errors() {
    let k = kernel(vec![global("in", "int"), global("out", "int")]);
    assert_eq!(
        err(&format!("{HEAD}<size=8 dump>\n5\n"), &k),
        "Line 6: Unexpected EOF: expected 2 values, found 1 (argument 0: in)"
    );
    assert_eq!(
        err(&format!("{HEAD}<size=4> 5\n# the end\n"), &k),
        "Line 6: Unexpected EOF: expected an argument header <...> (argument 1: out)"
    );
    let extra = format!("{HEAD}<size=4> 5\n<size=4 noinit>\n\n9 # nine");
    assert_eq!(err(&extra, &k), "Line 8: Unexpected token '9' (expected EOF)");
    // Stricter than the reference tool, which ignores the rest of the last line.
    assert_eq!(err(&format!("{HEAD}<size=4> 5\n<size=4> 6 7"), &k), "Line 6: Unexpected token '7' (expected EOF)");
    // More lenient: the reference tool rejects a trailing comment.
    ok(&format!("{HEAD}<size=4> 5\n<size=4 noinit>\n# end\n"), &k);
}

#[test]
fn work_groups_must_divide_unless_opencl_2() {
    let k = kernel(vec![global("a", "int")]);
    let text = "k.cl k\n3 3 3\n2 2 2\n<size=4 noinit>";
    assert_eq!(err(text, &k), "Line 3: Work group size must divide NDRange exactly.");
    let data = ok(&format!("# ARGS: --build-options -cl-std=CL2.0\n{text}"), &k);
    assert_eq!(data.launch.global_size, [3; 3]);
    assert_eq!(data.launch.local_size, [2; 3]);
    // The caller may add build options (e.g. from its command line) before reading arguments.
    let mut header = parse_header(text).unwrap();
    header.build_options = Some("-cl-std=CL3.0".into());
    assert!(parse_args(text, &header, &k, 1).is_ok());
}

#[test]
fn directives_reach_the_launch() {
    let k = kernel(vec![global("a", "int")]);
    let text = "# clrace: offset 8\n# clrace: dim 1\nk.cl k\n16 1 1\n4 1 1\n<size=4 noinit>";
    let data = ok(text, &k);
    assert_eq!(data.launch.global_offset, [8, 0, 0]);
    assert_eq!(data.launch.work_dim, 1);
}

#[test]
fn aliases_share_a_buffer() {
    let k = kernel(vec![global("a", "float"), private("n", "int", 4), constant("b", "float"), global("c", "int")]);
    let text = format!("{HEAD}<size=8 range=1:1:2>\n<size=4> 2\n<alias=0>\n<alias=0 dump hex int>");
    let data = ok(&text, &k);
    assert_eq!(
        data.launch.args,
        vec![ArgValue::Buffer(0), ArgValue::Value(bytes(&[2i32])), ArgValue::Buffer(0), ArgValue::Buffer(0)]
    );
    assert_eq!(data.buffers.len(), 1);
    assert_eq!(data.dumps, vec![Dump { arg_index: 3, name: "c".into(), buffer: 0, elem: ElemType::Int, hex: true }]);
    let printed = format_dumps(&data, &data.buffers);
    assert_eq!(printed, "\nArgument 'c': 8 bytes\n  c[0] = 0x3f800000\n  c[1] = 0x40000000\n\n");
}

#[test]
fn alias_errors() {
    let k = kernel(vec![global("a", "float"), private("n", "int", 4), global("b", "float"), global("p", "float")]);
    let with = |b: &str, p: &str| format!("{HEAD}<size=8 fill=1>\n<size=4> 2\n{b}\n{p}");
    let cases = [
        (with("<alias=2>", "<null>"), "Line 7: alias=2 must name an earlier argument (argument 2: b)"),
        (with("<alias=1>", "<null>"), "Line 7: alias=1: argument 1 is not a buffer (argument 2: b)"),
        (with("<null>", "<alias=2>"), "Line 8: alias=2: argument 2 is not a buffer (argument 3: p)"),
        (
            with("<alias=0 size=8>", "<null>"),
            "Line 7: 'alias' not valid with size, fill, range, noinit or null (argument 2: b)",
        ),
        (with("<alias=x>", "<null>"), "Line 7: Invalid value for 'alias': 'x' (argument 2: b)"),
        (with("<alias=0 dump double>", "<alias=0 dump char hex>"), "Line 8: 'alias' needs no values: none may follow"),
    ];
    for (text, expected) in &cases[..5] {
        assert_eq!(&err(text, &k), expected);
    }
    // Any type dividing the shared buffer's size may be used to dump it.
    let data = ok(&cases[5].0, &k);
    assert_eq!(data.dumps.iter().map(|d| d.elem).collect::<Vec<_>>(), [ElemType::Double, ElemType::Char]);
    let k3 = kernel(vec![global("a", "float"), global("b", "float")]);
    assert_eq!(
        err(&format!("{HEAD}<size=4 fill=1>\n<alias=0 dump double>"), &k3),
        "Line 6: Initialiser type must exactly divide argument size (argument 1: b)"
    );
    let k = kernel(vec![private("n", "int", 4), private("m", "int", 4)]);
    assert_eq!(
        err(&format!("{HEAD}<size=4> 1\n<alias=0>"), &k),
        "Line 6: 'alias' only valid for buffer arguments (argument 1: m)"
    );
}

#[test]
fn dumps_of_a_parsed_file_match_oclgrind() {
    // `copyf(global float* in, global float* out)`: out[i] = in[i], 16 work-items.
    let text = "copy.cl\ncopyf\n16 1 1\n1 1 1\n<size=64 dump>\n\
                1e-05 123456 1234567 0.1 0.3333333333 -0 1e6 1e38 0.0001 0.00001234 100000 999999.5 \
                9999995 0.000099999996 1.5e-7 -2.5\n<size=64 fill=0 dump>\n";
    let k = kernel(vec![global("in", "float"), global("out", "float")]);
    let data = ok(text, &k);
    let after_run = vec![data.buffers[0].clone(), data.buffers[0].clone()];
    let values = "[0] = 1e-05\n  NAME[1] = 123456\n  NAME[2] = 1.23457e+06\n  NAME[3] = 0.1\n  \
                  NAME[4] = 0.333333\n  NAME[5] = -0\n  NAME[6] = 1e+06\n  NAME[7] = 1e+38\n  NAME[8] = 0.0001\n  \
                  NAME[9] = 1.234e-05\n  NAME[10] = 100000\n  NAME[11] = 1e+06\n  NAME[12] = 1e+07\n  \
                  NAME[13] = 0.0001\n  NAME[14] = 1.5e-07\n  NAME[15] = -2.5\n";
    let block = |name: &str| format!("\nArgument '{name}': 64 bytes\n  {name}{}\n", values.replace("NAME", name));
    assert_eq!(format_dumps(&data, &after_run), format!("{}{}", block("in"), block("out")));
}

#[test]
fn error_display() {
    let e = LaunchError { line: 6, message: "Invalid char value".into(), arg: Some((0, "in".into())) };
    assert_eq!(e.to_string(), "Line 6: Invalid char value (argument 0: in)");
    let e = LaunchError::at(3, "Failed to parse NDRange");
    assert_eq!(e.to_string(), "Line 3: Failed to parse NDRange");
    let _: &dyn std::error::Error = &e;
}

fn image_arg(name: &str, ty: &str) -> KernelArg {
    let handle = if ty == "sampler_t" { crate::program::Handle::Sampler } else { crate::program::Handle::Image };
    let space = if ty == "sampler_t" { AddressSpace::Private } else { AddressSpace::Global };
    KernelArg { handle: Some(handle), is_pointer: false, size: 8, pointee_size: 0, ..arg(name, space, ty, 8) }
}

#[test]
fn image_and_sampler_arguments() {
    use crate::exec::image::{ImageKind, Sampler};
    let k = kernel(vec![image_arg("src", "image2d_array_t"), image_arg("s", "sampler_t")]);
    let text = format!(
        "{HEAD}<order=RG type=SNORM_INT16 width=2 height=1 layers=2 dump>\n1 -1 2 -2 3 -3 4 -4\n\
         <sampler normalized address=mirrored_repeat filter=linear>\n"
    );
    let data = ok(&text, &k);
    let ArgValue::Image { buffer: 0, desc } = &data.launch.args[0] else { panic!("{:?}", data.launch.args) };
    assert_eq!((desc.kind, desc.width, desc.height, desc.array_size), (ImageKind::D2Array, 2, 1, 2));
    assert_eq!(data.buffers[0], bytes::<i16>(&[1, -1, 2, -2, 3, -3, 4, -4]));
    assert_eq!(data.dumps[0].elem, ElemType::Short);
    let ArgValue::Sampler(bits) = data.launch.args[1] else { panic!() };
    let s = Sampler::from_bits(bits as u64);
    assert!(s.normalized && s.linear && s.addressing == crate::exec::image::Addressing::MirroredRepeat);

    let bad = |header: &str| err(&format!("{HEAD}{header}\n<sampler>\n"), &k);
    assert!(bad("<order=RGB type=FLOAT width=1 noinit>").contains("Unknown channel order 'RGB'"));
    assert!(bad("<order=R width=1 noinit>").contains("an image needs order=... and type=..."));
    assert!(bad("<order=BGRA type=FLOAT width=1 noinit>").contains("not a valid OpenCL image format"));
    assert!(bad("<order=R type=FLOAT width=99999999999 height=99999999999 noinit>").contains("larger than 1 TiB"));
    assert!(bad("<order=R type=FLOAT width=2 size=4 noinit>").contains("does not match the image's 8 bytes"));
    assert!(bad("<order=R type=FLOAT width=1 null>").contains("not valid for images"));
    let sampler = err(&format!("{HEAD}<order=R type=FLOAT width=1 noinit>\n<sampler address=wrap>\n"), &k);
    assert!(sampler.contains("Unknown addressing mode 'wrap'"), "{sampler}");
}
