//! What a caller sees of a built program: its kernels and their reflected signatures.
//!
//! A [`Program`] is built once (from OpenCL C, separately compiled and linked OpenCL C units, or
//! SPIR-V) and then launched any number of times through [`crate::exec::run`].
//!
//! It sits on top of the build pipeline and only calls down: [`crate::compile`] for SPIR-V bytes,
//! then [`crate::spirv`], which lowers them to IR, then [`crate::opt`], which optimises the IR,
//! and last [`crate::ir::validate`], whose proof the executor relies on. What the lowering and
//! the passes made of a SPIR-V module is kept on disk (`cache.rs`) for the next build of the
//! same module, which then only validates it. The reflection
//! types and [`BuildError`] live with the IR and the compiler; they are re-exported here as the
//! program's own vocabulary.

mod cache;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

pub use crate::compile::BuildError;
pub use crate::ir::reflect::{AddressSpace, Handle, KernelArg, KernelInfo};
use crate::{compile, ir, opt, spirv};

/// A program ready to run: its SPIR-V lowered to our IR.
#[derive(Debug)]
pub struct Program {
    pub(crate) module: ir::Module,
    /// Flush single-precision denormals to zero (`-cl-denorms-are-zero`).
    pub flush_denormals: bool,
    /// Warnings and notes the compiler printed on a successful build.
    pub build_log: String,
    /// The modules specialised for the latest launches ([`Program::specialise`]), most recent
    /// last: a launch repeated with the same arguments (an application's loop) reuses its own.
    pub(crate) specialised: Specialised,
    /// Per kernel, the parameters it may write through ([`Program::written_params`]), worked
    /// out at the first launch that asks.
    written: Box<[OnceLock<Option<Vec<bool>>>]>,
    /// Per kernel, its `__local` reads no write can race with ([`Program::quiet_reads`]), worked
    /// out at the first checked launch.
    quiet: Box<[OnceLock<Vec<Vec<bool>>>]>,
}

/// Per (kernel, by-value argument slots): what was made of launches with them. At most
/// [`SPECIALISED_KEPT`] are kept.
pub(crate) type Specialised = Mutex<Vec<Kept>>;

/// One kernel, the slots of its by-value arguments, and what was made of launches with them.
pub(crate) type Kept = (usize, Vec<Option<Vec<u64>>>, Made);

/// What [`Program::specialise_if_repaid`] made for one kernel and argument values.
#[derive(Debug, Clone)]
pub(crate) enum Made {
    /// One launch ran the code as built: alone it would not have repaid specialising, a second
    /// one with the same values is specialised.
    Deferred,
    /// The specialised module, or `None` where there was nothing to specialise.
    Module(Option<Arc<ir::Module>>),
}

/// How many specialisations a program keeps.
const SPECIALISED_KEPT: usize = 8;

/// Keeps `entry` as the most recent of `kept`, forgetting the oldest when
/// [`SPECIALISED_KEPT`] are kept already.
fn keep(kept: &mut Vec<Kept>, entry: Kept) {
    if kept.len() >= SPECIALISED_KEPT {
        kept.remove(0);
    }
    kept.push(entry);
}

impl Program {
    /// Compiles OpenCL C `source` (named `path` in diagnostics and source locations) with the
    /// application's build `options`, then loads and lowers it.
    pub fn from_source(source: &str, path: &Path, options: &str) -> Result<Program, BuildError> {
        Program::from_compiled(compile::compile(source, path, options)?)
    }

    /// Compiles each of `units` separately (as `clCompileProgram` would), links them with the
    /// application's `link_options` (as `clLinkProgram` would), then loads and lowers the result.
    pub fn from_units(units: &[compile::Unit], link_options: &str) -> Result<Program, BuildError> {
        Program::from_compiled(compile::compile_units(units, link_options)?)
    }

    fn from_compiled(built: compile::Compiled) -> Result<Program, BuildError> {
        let mut program = Program::from_spirv(&built.spirv)?;
        program.flush_denormals = built.flush_denormals;
        program.build_log = built.log;
        Ok(program)
    }

    /// Loads a SPIR-V module (little- or big-endian words as bytes).
    pub fn from_spirv(bytes: &[u8]) -> Result<Program, BuildError> {
        let cache = cache::Lowered::open(bytes);
        let cached = cache.as_ref().and_then(|c| c.load()).filter(|module| match ir::validate::check_module(module) {
            Ok(()) => true,
            Err(e) => {
                tracing::debug!("a cached lowered module failed validation ({e}); lowering afresh");
                false
            }
        });
        let module = match cached {
            Some(module) => module,
            None => {
                let mut module = spirv::load_and_lower(bytes).map_err(BuildError::Spirv)?;
                opt::optimise(&mut module);
                ir::reconverge::annotate(&mut module);
                ir::validate::check_module(&module).map_err(BuildError::Spirv)?;
                if let Some(cache) = &cache {
                    cache.store(&module);
                }
                module
            }
        };
        Ok(Program::with_module(module))
    }

    /// A program of `module` as lowered, with nothing of a build's options or log.
    pub(crate) fn with_module(module: ir::Module) -> Program {
        let written = module.kernels.iter().map(|_| OnceLock::new()).collect();
        let quiet = module.kernels.iter().map(|_| OnceLock::new()).collect();
        Program {
            module,
            flush_denormals: false,
            build_log: String::new(),
            specialised: Specialised::default(),
            written,
            quiet,
        }
    }

    /// Which parameters of kernel `kernel` (an index of [`ir::Module::kernels`]) the kernel may
    /// write through ([`ir::written::written_params`]; None when it cannot tell), worked out
    /// once per program: every checked launch asks, and a spooled BLAS run has thousands of
    /// launches of one kernel.
    pub fn written_params(&self, kernel: usize) -> Option<&[bool]> {
        let cell = self.written.get(kernel)?;
        cell.get_or_init(|| ir::written::written_params(&self.module, kernel as u32)).as_deref()
    }

    /// Per function, per instruction, whether it is a `__local` read of kernel `kernel` that no
    /// write can race with ([`ir::intervals::quiet_local_reads`]), worked out once per program
    /// (for the code as built; a specialised module has code of its own).
    pub fn quiet_reads(&self, kernel: usize) -> &[Vec<bool>] {
        match self.quiet.get(kernel) {
            Some(cell) => cell.get_or_init(|| ir::intervals::quiet_local_reads(&self.module, kernel as u32)),
            None => &[],
        }
    }

    /// A copy of the program's module made for one launch of its kernel `kernel` (an index of
    /// [`ir::Module::kernels`]) whose by-value arguments hold `values` (per argument, its slots
    /// as the executor copies them; `None` for the others): see [`opt::specialise`], whose
    /// result is annotated and validated here as a built program is. `None` when nothing was
    /// specialised, and when validation refuses the result (logged: the launch then runs the
    /// code as built). The latest results are kept: a launch with the same kernel and values
    /// gets the same module again without specialising.
    pub fn specialise(&self, kernel: usize, values: &[Option<Vec<u64>>]) -> Option<Arc<ir::Module>> {
        self.specialise_if_repaid(kernel, values, |_| true)
    }

    /// [`Program::specialise`] for a launch that specialising must repay: when `repays(code)`
    /// (`code`: the instructions the kernel reaches, which the cost of specialising follows) says
    /// this launch alone does not, the first launch with these values runs the code as built
    /// (`None`) and the next one with the same values is specialised (an application's loop of
    /// launches pays for it once).
    pub fn specialise_if_repaid(
        &self,
        kernel: usize,
        values: &[Option<Vec<u64>>],
        repays: impl FnOnce(usize) -> bool,
    ) -> Option<Arc<ir::Module>> {
        {
            let mut kept = self.specialised.lock();
            match kept.iter().position(|(k, v, _)| *k == kernel && v == values) {
                Some(at) => {
                    let entry = kept.remove(at);
                    if let Made::Module(module) = &entry.2 {
                        let module = module.clone();
                        kept.push(entry);
                        return module;
                    }
                    // Seen once before: specialised now, for this launch and the next.
                    kept.push(entry);
                }
                None if !repays(opt::reached_code(&self.module, kernel)?) => {
                    keep(&mut kept, (kernel, values.to_vec(), Made::Deferred));
                    return None;
                }
                None => {}
            }
        }
        let module = self.specialise_now(kernel, values).map(Arc::new);
        let mut kept = self.specialised.lock();
        // Another launch may have kept the same meanwhile (checks run in parallel): one entry.
        let at = kept.iter().position(|(k, v, _)| *k == kernel && v == values);
        if let Some(at) = at
            && let Made::Module(theirs) = &kept[at].2
        {
            return theirs.clone();
        }
        if let Some(at) = at {
            kept.remove(at);
        }
        keep(&mut kept, (kernel, values.to_vec(), Made::Module(module.clone())));
        module
    }

    fn specialise_now(&self, kernel: usize, values: &[Option<Vec<u64>>]) -> Option<ir::Module> {
        let (mut module, reached) = opt::specialise(&self.module, kernel, values)?;
        for &f in &reached {
            ir::reconverge::annotate_function(&mut module.functions[f]);
        }
        match ir::validate::check_launch(&module, kernel, &reached) {
            Ok(()) => Some(module),
            Err(e) => {
                tracing::warn!(
                    "the code specialised for a launch of kernel {kernel} failed validation ({e}); running it as built"
                );
                debug_assert!(false, "specialised code failed validation: {e}");
                None
            }
        }
    }

    /// The lowered program (source locations, variables, code).
    pub fn module(&self) -> &ir::Module {
        &self.module
    }

    /// The program's kernels, in module order.
    pub fn kernels(&self) -> impl Iterator<Item = &KernelInfo> {
        self.module.kernels.iter().map(|k| &k.info)
    }

    /// One kernel by name.
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels().find(|k| k.name == name)
    }
}
