//! What the layer remembers about the application's OpenCL objects, keyed by handle: programs
//! (source or IL and build options), kernels (program, name, argument values) and buffers (size,
//! parent). Handles are reused after their final release, so every creation call replaces
//! whatever was known under that handle.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use crate::program::Program;
use crate::spool::{ProgramKind, ProgramSpec};

/// The kinds of handle the side tables are keyed by. The C types are all `void *`, so these
/// marker types are what keeps a kernel's key out of the table of buffers.
pub mod kind {
    /// A `cl_program`.
    pub enum Program {}
    /// A `cl_kernel`.
    pub enum Kernel {}
    /// A `cl_mem`: a buffer, sub-buffer or image (one handle space).
    pub enum Mem {}
    /// A `cl_sampler`.
    pub enum Sampler {}
}

/// The key of a side table: the identity of one of the driver's handles, of the kind `T` (see
/// [`kind`]). Handles are the driver's, so the key is the address alone, never dereferenced.
pub struct Key<T> {
    address: usize,
    kind: PhantomData<fn() -> T>,
}

impl<T> Key<T> {
    /// The key of the handle at `address` (as the application passed it inside an argument's
    /// bytes, or a handle read as a number).
    pub fn at(address: usize) -> Key<T> {
        Key { address, kind: PhantomData }
    }
}

impl<T> Key<T> {
    /// The key of `handle` (the table it is used with says which kind it is).
    pub fn of(handle: *mut std::ffi::c_void) -> Key<T> {
        Key::at(handle as usize)
    }

    /// The handle again, to pass back to the driver.
    pub fn handle(self) -> *mut std::ffi::c_void {
        self.address as *mut std::ffi::c_void
    }
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Key<T> {}

impl<T> PartialEq for Key<T> {
    fn eq(&self, other: &Self) -> bool {
        self.address == other.address
    }
}

impl<T> Eq for Key<T> {}

impl<T> Hash for Key<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.address.hash(state);
    }
}

impl<T> std::fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}", self.address)
    }
}

/// Where a program came from.
#[derive(Debug, Clone)]
pub enum ProgramSource {
    /// OpenCL C source.
    Source(String),
    /// SPIR-V.
    Il(Vec<u8>),
    /// Made by `clLinkProgram` from compiled source or SPIR-V programs (a library's units come
    /// flattened).
    Linked { units: Vec<Unit>, options: String },
    /// Something the emulator cannot read (a binary, or a linked program): why.
    Unsupported(&'static str),
}

/// One separately compiled program inside a linked one: the spool's record of it, which the
/// emulator builds the same way for an inline check and for a spooled one.
pub use crate::spool::UnitSpec as Unit;

/// One program object.
#[derive(Debug)]
pub struct ProgramState {
    /// The name reports show for it (see `names.rs`).
    pub name: String,
    pub source: ProgramSource,
    /// The options of the last `clBuildProgram`.
    pub options: String,
    /// Options that make our compiler see the device's extensions, and only those.
    pub device_options: String,
    /// Headers of the last `clCompileProgram`: include name and text.
    pub headers: Vec<(String, String)>,
    /// The program as the emulator builds it (None when it cannot: see
    /// [`ProgramSource::Unsupported`]), made once per program object and shared by every
    /// launch of its kernels, inline checks and spooled launches alike.
    pub spec: Option<Arc<ProgramSpec>>,
    /// The emulator's build, made once, on the first check of one of its kernels.
    pub built: OnceLock<Result<Arc<Program>, String>>,
}

impl ProgramState {
    pub fn new(
        name: String,
        source: ProgramSource,
        options: String,
        device_options: String,
        headers: Vec<(String, String)>,
    ) -> ProgramState {
        let kind = match &source {
            ProgramSource::Source(text) => Some(ProgramKind::Source {
                text: text.clone(),
                options: options.clone(),
                device_options: device_options.clone(),
                headers: headers.clone(),
            }),
            ProgramSource::Il(bytes) => Some(ProgramKind::Il { bytes: bytes.clone() }),
            ProgramSource::Linked { units, options } => {
                Some(ProgramKind::Linked { units: units.clone(), options: options.clone() })
            }
            ProgramSource::Unsupported(_) => None,
        };
        let spec = kind.map(|kind| Arc::new(ProgramSpec { name: name.clone(), kind }));
        ProgramState { name, source, options, device_options, headers, spec, built: OnceLock::new() }
    }

    pub fn file_name(&self) -> String {
        self.name.clone()
    }
}

/// One kernel argument as the application set it.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgState {
    /// `arg_value` was NULL: a `__local` allocation of this many bytes.
    Local(usize),
    /// A buffer handle (the value was a known `cl_mem`).
    Buffer(Key<kind::Mem>),
    /// A shared virtual memory pointer (`clSetKernelArgSVMPointer`), possibly inside an allocation.
    Svm(usize),
    /// A NULL buffer pointer.
    Null,
    /// Plain bytes (scalars, structs, or anything else).
    Value(Vec<u8>),
    /// An image handle.
    Image(Key<kind::Mem>),
    /// A sampler: its kernel-side `CLK_*` bits.
    Sampler(u32),
}

/// One kernel object.
#[derive(Debug, Clone)]
pub struct KernelState {
    pub program: Arc<ProgramState>,
    pub name: String,
    pub args: Vec<Option<ArgState>>,
    /// Launches seen so far.
    pub launches: u64,
}

/// One buffer or sub-buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferState {
    pub size: usize,
    /// The parent buffer and the offset in it, for a sub-buffer.
    pub parent: Option<(Key<kind::Mem>, usize)>,
    pub flags: u64,
}

/// One image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageState {
    pub desc: crate::exec::image::ImageDesc,
    pub flags: u64,
}

/// Everything tracked, behind one lock in the layer.
#[derive(Debug, Default)]
pub struct State {
    pub programs: HashMap<Key<kind::Program>, Arc<ProgramState>>,
    pub kernels: HashMap<Key<kind::Kernel>, KernelState>,
    pub buffers: HashMap<Key<kind::Mem>, BufferState>,
    pub images: HashMap<Key<kind::Mem>, ImageState>,
    /// Samplers: their kernel-side `CLK_*` bits.
    pub samplers: HashMap<Key<kind::Sampler>, u32>,
    /// SVM allocations by base address: their sizes.
    pub svm: BTreeMap<usize, usize>,
    next_program: u64,
    /// `CLRACE_SOURCE_DIR`: where the application's program files are, to name programs by.
    pub source_dir: Option<std::path::PathBuf>,
}

impl State {
    /// Records a new buffer, image or sampler under `handle`, forgetting any object of another
    /// kind that had the handle before (the driver reuses released handles).
    pub fn add_buffer(&mut self, handle: Key<kind::Mem>, buffer: BufferState) {
        self.forget(handle.address);
        self.buffers.insert(handle, buffer);
    }

    pub fn add_image(&mut self, handle: Key<kind::Mem>, image: ImageState) {
        self.forget(handle.address);
        self.images.insert(handle, image);
    }

    pub fn add_sampler(&mut self, handle: Key<kind::Sampler>, bits: u32) {
        self.forget(handle.address);
        self.samplers.insert(handle, bits);
    }

    /// Forgets the buffer, image or sampler at `address` (one handle space for the three).
    fn forget(&mut self, address: usize) {
        self.buffers.remove(&Key::at(address));
        self.images.remove(&Key::at(address));
        self.samplers.remove(&Key::at(address));
    }

    pub fn add_program(&mut self, handle: Key<kind::Program>, source: ProgramSource) {
        self.next_program += 1;
        let name = match &source {
            ProgramSource::Source(text) => super::names::of_source(text, self.source_dir.as_deref()),
            ProgramSource::Il(module) => super::names::of_il(module),
            ProgramSource::Linked { units, .. } => {
                let names: Vec<&str> = units.iter().map(|u| u.name.as_str()).collect();
                super::names::of_linked(&names)
            }
            ProgramSource::Unsupported(_) => format!("program-{}", self.next_program),
        };
        let program = ProgramState::new(name, source, String::new(), String::new(), Vec::new());
        self.programs.insert(handle, Arc::new(program));
    }

    /// After a successful `clBuildProgram`: a source program is named again with the kernels the
    /// driver found (`driver_kernels`, see `names.rs`). Returns the program as it now is.
    pub fn built(&mut self, handle: Key<kind::Program>, driver_kernels: &[String]) -> Option<Arc<ProgramState>> {
        let old = self.programs.get(&handle)?.clone();
        if let ProgramSource::Source(text) = &old.source {
            let name = super::names::of_built_source(text, self.source_dir.as_deref(), driver_kernels);
            if name != old.name {
                let program = ProgramState::new(
                    name,
                    old.source.clone(),
                    old.options.clone(),
                    old.device_options.clone(),
                    old.headers.clone(),
                );
                self.programs.insert(handle, Arc::new(program));
            }
        }
        self.programs.get(&handle).cloned()
    }

    /// Records build (or compile) options and headers; a rebuilt program gets a fresh emulator
    /// build.
    pub fn set_options(
        &mut self,
        handle: Key<kind::Program>,
        options: &str,
        device_options: &str,
        headers: Vec<(String, String)>,
    ) {
        if let Some(old) = self.programs.get(&handle) {
            let program = ProgramState::new(
                old.name.clone(),
                old.source.clone(),
                options.to_string(),
                device_options.to_string(),
                headers,
            );
            self.programs.insert(handle, Arc::new(program));
        }
    }

    /// The source of a program that `clLinkProgram` makes from `inputs`.
    pub fn linked(&self, inputs: &[Key<kind::Program>], options: &str) -> ProgramSource {
        let mut units = Vec::new();
        for input in inputs {
            let Some(program) = self.programs.get(input) else {
                return ProgramSource::Unsupported("one of the programs it links is unknown to clrace");
            };
            match &program.source {
                ProgramSource::Source(text) => units.push(Unit {
                    name: program.name.clone(),
                    source: text.clone(),
                    options: format!("{} {}", program.options, program.device_options),
                    headers: program.headers.clone(),
                    il: None,
                }),
                ProgramSource::Linked { units: more, .. } => units.extend(more.iter().cloned()),
                ProgramSource::Il(module) => units.push(Unit {
                    name: program.name.clone(),
                    source: String::new(),
                    options: String::new(),
                    headers: Vec::new(),
                    il: Some(module.clone()),
                }),
                ProgramSource::Unsupported(why) => return ProgramSource::Unsupported(why),
            }
        }
        ProgramSource::Linked { units, options: options.to_string() }
    }

    /// The text of a program's source, if it has one (for `clCompileProgram` headers).
    pub fn source_text(&self, handle: Key<kind::Program>) -> Option<String> {
        match &self.programs.get(&handle)?.source {
            ProgramSource::Source(text) => Some(text.clone()),
            _ => None,
        }
    }

    pub fn add_kernel(&mut self, handle: Key<kind::Kernel>, program: Key<kind::Program>, name: String) {
        match self.programs.get(&program) {
            Some(p) => {
                self.kernels.insert(handle, KernelState { program: p.clone(), name, args: Vec::new(), launches: 0 });
            }
            None => {
                self.kernels.remove(&handle);
            }
        }
    }

    /// Records `clSetKernelArg`: NULL value is `__local`, a known buffer handle is a buffer.
    pub fn set_arg(&mut self, kernel: Key<kind::Kernel>, index: usize, size: usize, value: Option<&[u8]>) {
        let arg = match value {
            None => ArgState::Local(size),
            Some(bytes) if bytes.len() == size_of::<usize>() => {
                let address = usize::from_ne_bytes(bytes.try_into().expect("pointer-sized"));
                if self.buffers.contains_key(&Key::at(address)) {
                    ArgState::Buffer(Key::at(address))
                } else if self.images.contains_key(&Key::at(address)) {
                    ArgState::Image(Key::at(address))
                } else if let Some(&bits) = self.samplers.get(&Key::at(address)) {
                    ArgState::Sampler(bits)
                } else if address == 0 {
                    ArgState::Null
                } else {
                    ArgState::Value(bytes.to_vec())
                }
            }
            Some(bytes) => ArgState::Value(bytes.to_vec()),
        };
        if let Some(k) = self.kernels.get_mut(&kernel) {
            if k.args.len() <= index {
                k.args.resize(index + 1, None);
            }
            k.args[index] = Some(arg);
        }
    }

    /// Records `clSetKernelArgSVMPointer`.
    pub fn set_svm_arg(&mut self, kernel: Key<kind::Kernel>, index: usize, pointer: usize) {
        let arg = if pointer == 0 { ArgState::Null } else { ArgState::Svm(pointer) };
        if let Some(k) = self.kernels.get_mut(&kernel) {
            if k.args.len() <= index {
                k.args.resize(index + 1, None);
            }
            k.args[index] = Some(arg);
        }
    }

    /// The SVM allocation holding `pointer`: its base and size.
    pub fn svm_allocation(&self, pointer: usize) -> Option<(usize, usize)> {
        let (&base, &size) = self.svm.range(..=pointer).next_back()?;
        (pointer < base + size).then_some((base, size))
    }

    /// The access the host gave the kernel to a buffer or sub-buffer (`CL_MEM_READ_ONLY`,
    /// `CL_MEM_WRITE_ONLY`): its own flags, else (a sub-buffer created without access flags)
    /// its parent's.
    pub fn access_mode(&self, mut handle: Key<kind::Mem>) -> crate::exec::memory::BufferMode {
        use crate::exec::memory::BufferMode;
        use opencl_sys::{CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY};
        for _ in 0..64 {
            let Some(buffer) = self.buffers.get(&handle) else { break };
            let flags = buffer.flags;
            if flags & CL_MEM_READ_ONLY != 0 {
                return BufferMode::ReadOnly;
            }
            if flags & CL_MEM_WRITE_ONLY != 0 {
                return BufferMode::WriteOnly;
            }
            match buffer.parent {
                Some((parent, _)) if flags & CL_MEM_READ_WRITE == 0 => handle = parent,
                _ => break,
            }
        }
        BufferMode::ReadWrite
    }

    /// The root buffer and the byte offset in it of a buffer or sub-buffer.
    pub fn root_of(&self, mut handle: Key<kind::Mem>) -> Option<(Key<kind::Mem>, usize)> {
        let mut offset = 0;
        for _ in 0..64 {
            let buffer = self.buffers.get(&handle)?;
            match buffer.parent {
                Some((parent, at)) => {
                    offset += at;
                    handle = parent;
                }
                None => return Some((handle, offset)),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of the made-up handle `address`.
    fn k<T>(address: usize) -> Key<T> {
        Key::at(address)
    }

    #[test]
    fn arguments_are_classified_by_what_the_application_passed() {
        let mut s = State::default();
        s.add_program(k(1), ProgramSource::Source("kernel void k() {}".into()));
        s.add_kernel(k(10), k(1), "k".into());
        s.buffers.insert(k(0x5000), BufferState { size: 64, parent: None, flags: 0 });
        s.set_arg(k(10), 0, 8, Some(&0x5000usize.to_ne_bytes()));
        s.set_arg(k(10), 2, 256, None);
        s.set_arg(k(10), 1, 4, Some(&7u32.to_ne_bytes()));
        s.set_arg(k(10), 3, 8, Some(&0usize.to_ne_bytes()));
        let args = &s.kernels[&k(10)].args;
        assert_eq!(args[0], Some(ArgState::Buffer(k(0x5000))));
        assert_eq!(args[1], Some(ArgState::Value(7u32.to_ne_bytes().to_vec())));
        assert_eq!(args[2], Some(ArgState::Local(256)));
        assert_eq!(args[3], Some(ArgState::Null));
    }

    #[test]
    fn svm_pointers_resolve_to_their_allocation() {
        let mut s = State::default();
        s.svm.insert(0x1000, 256);
        s.svm.insert(0x4000, 64);
        assert_eq!(s.svm_allocation(0x1000), Some((0x1000, 256)));
        assert_eq!(s.svm_allocation(0x10ff), Some((0x1000, 256)));
        assert_eq!(s.svm_allocation(0x1100), None);
        assert_eq!(s.svm_allocation(0x0fff), None);
        assert_eq!(s.svm_allocation(0x4010), Some((0x4000, 64)));
    }

    #[test]
    fn sub_buffers_resolve_to_their_root() {
        let mut s = State::default();
        s.buffers.insert(k(1), BufferState { size: 1024, parent: None, flags: 0 });
        s.buffers.insert(k(2), BufferState { size: 512, parent: Some((k(1), 256)), flags: 0 });
        s.buffers.insert(k(3), BufferState { size: 128, parent: Some((k(2), 128)), flags: 0 });
        s.buffers.insert(k(4), BufferState { size: 64, parent: Some((k(1), 0)), flags: opencl_sys::CL_MEM_WRITE_ONLY });
        s.buffers.insert(k(5), BufferState { size: 64, parent: None, flags: opencl_sys::CL_MEM_READ_ONLY });
        s.buffers.insert(k(6), BufferState { size: 32, parent: Some((k(5), 0)), flags: 0 });
        s.buffers.insert(k(7), BufferState { size: 32, parent: Some((k(5), 0)), flags: opencl_sys::CL_MEM_READ_WRITE });
        use crate::exec::memory::BufferMode;
        let modes: Vec<BufferMode> = (1..=7).map(|h| s.access_mode(k(h))).collect();
        assert_eq!(
            modes,
            [
                BufferMode::ReadWrite,
                BufferMode::ReadWrite,
                BufferMode::ReadWrite,
                BufferMode::WriteOnly,
                BufferMode::ReadOnly,
                BufferMode::ReadOnly,
                BufferMode::ReadWrite
            ],
            "own flags first, else the parent's"
        );
        assert_eq!(s.root_of(k(3)), Some((k(1), 384)));
        assert_eq!(s.root_of(k(9)), None);
    }

    #[test]
    fn creation_replaces_what_a_reused_handle_knew() {
        let mut s = State::default();
        s.add_program(k(1), ProgramSource::Source("a".into()));
        s.add_kernel(k(10), k(1), "first".into());
        s.set_arg(k(10), 0, 4, Some(&[1, 2, 3, 4]));
        s.add_kernel(k(10), k(1), "second".into());
        assert_eq!(s.kernels[&k(10)].name, "second");
        assert!(s.kernels[&k(10)].args.is_empty());
    }

    #[test]
    fn spirv_programs_link_as_units_of_their_own() {
        let mut s = State::default();
        s.add_program(k(1), ProgramSource::Il(vec![3, 2, 35, 7]));
        s.add_program(k(2), ProgramSource::Source("int f(void) { return 1; }".into()));
        s.set_options(k(2), "-DX=1", "", Vec::new());
        let ProgramSource::Linked { units, options } = s.linked(&[k(1), k(2)], "-cl-denorms-are-zero") else {
            panic!("not linked");
        };
        assert_eq!(options, "-cl-denorms-are-zero");
        assert_eq!(units[0].il.as_deref(), Some(&[3u8, 2, 35, 7][..]));
        let names = (units[0].name.clone(), units[1].name.clone());
        assert!(names.0.starts_with("spirv-") && names.0.ends_with(".spv"), "{names:?}");
        assert!(names.1.starts_with("program-") && names.1.ends_with(".cl"), "{names:?}");
        assert!(units[1].il.is_none() && units[1].options.contains("-DX=1"));
    }

    #[test]
    fn a_built_program_is_named_by_the_kernels_the_driver_found() {
        let mut s = State::default();
        let source = "#define KERNEL __kernel\n#define REQD_WG_SIZE(X, Y, Z) __attribute__((reqd_work_group_size(X, Y, Z)))\nKERNEL REQD_WG_SIZE(2, 1, 1) void racy(global int *a) { a[0] = 1; }\n";
        s.add_program(k(1), ProgramSource::Source(source.into()));
        assert!(s.programs[&k(1)].name.starts_with("program-"));
        s.set_options(k(1), "-DX=1", "", Vec::new());
        let built = s.built(k(1), &["racy".to_string()]).unwrap();
        assert!(built.name.starts_with("racy-") && built.options == "-DX=1", "{built:?}");
        s.add_kernel(k(10), k(1), "racy".into());
        assert_eq!(s.kernels[&k(10)].program.name, built.name);
    }

    #[test]
    fn a_reused_handle_is_the_newest_object() {
        let mut s = State::default();
        s.add_program(k(1), ProgramSource::Source("kernel void k(global int *p) {}".into()));
        s.add_kernel(k(10), k(1), "k".into());
        s.add_sampler(k(7), 0x13);
        s.add_buffer(k(7), BufferState { size: 64, parent: None, flags: 0 });
        s.set_arg(k(10), 0, 8, Some(&7usize.to_ne_bytes()));
        assert_eq!(s.kernels[&k(10)].args[0], Some(ArgState::Buffer(k(7))));
        let desc = crate::exec::image::ImageDesc {
            kind: crate::exec::image::ImageKind::D1,
            order: 0x10B0,
            data_type: 0x10DE,
            width: 4,
            height: 1,
            depth: 1,
            array_size: 1,
        };
        s.add_image(k(7), ImageState { desc, flags: 0 });
        s.set_arg(k(10), 0, 8, Some(&7usize.to_ne_bytes()));
        assert_eq!(s.kernels[&k(10)].args[0], Some(ArgState::Image(k(7))));
        s.add_sampler(k(7), 0x13);
        s.set_arg(k(10), 0, 8, Some(&7usize.to_ne_bytes()));
        assert!(matches!(s.kernels[&k(10)].args[0], Some(ArgState::Sampler(0x13))));
    }
}
