//! placeholder: the OpenCL.std library is being written (replace this whole file).
use rspirv::spirv::OpenclStd100Op as Cl;
pub enum Second { Float(f64), Int(i64) }
pub fn float32(op: Cl, a: f32, b: f32, c: f32) -> Option<f32> { float64(op, a as f64, b as f64, c as f64).map(|v| v as f32) }
pub fn float64(op: Cl, a: f64, b: f64, c: f64) -> Option<f64> { Some(match op { Cl::sqrt => a.sqrt(), Cl::mad | Cl::fma => a.mul_add(b, c), Cl::fmin => a.min(b), Cl::fmax => a.max(b), Cl::fabs => a.abs(), _ => return None }) }
pub fn float32_with_out(_op: Cl, _a: f32, _b: f32) -> Option<(f32, Second)> { None }
pub fn float64_with_out(_op: Cl, _a: f64, _b: f64) -> Option<(f64, Second)> { None }
pub fn integer(_op: Cl, _bits: u32, _a: u64, _b: u64, _c: u64) -> Option<u64> { None }
pub fn ilogb32(_x: f32) -> i32 { 0 }
pub fn ilogb64(_x: f64) -> i32 { 0 }
pub fn with_int32(_op: Cl, _a: f32, _n: i32) -> Option<f32> { None }
pub fn with_int64(_op: Cl, _a: f64, _n: i32) -> Option<f64> { None }
