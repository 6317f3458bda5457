//! Why a check of an application's launch did not complete, in the words both the layer and a
//! spool's check use: a kind (one note per kernel and kind), the reason the closing summary
//! counts, and the note's text. The callers only say how they name their own limits.
//!
//! It turns errors into words: it cannot see the check, nor where the note goes.

use crate::exec::ExecError;

/// Why a check did not complete.
#[derive(Debug)]
pub struct Failure {
    pub kind: &'static str,
    pub reason: String,
    pub message: String,
}

/// How a caller's limits are named in the reasons: a check over its CPU time, over its wall
/// time, over its memory.
pub struct Limits {
    pub cpu: String,
    pub wall: String,
    pub memory: String,
}

impl Failure {
    /// The program of `program` could not be built for the emulator.
    pub fn build(program: &str, why: &str) -> Failure {
        Failure {
            kind: "build",
            reason: format!("its program could not be built for the emulator: {why}"),
            message: format!("kernels of {program} are not checked: {}", cited(why)),
        }
    }

    /// The kernel is not in its program as the emulator built it.
    pub fn missing(kernel: &str, program: &str) -> Failure {
        Failure {
            kind: "missing",
            reason: "the kernel is not in its program as we built it".into(),
            message: format!("kernel '{kernel}' is not in its program {program} as we built it"),
        }
    }

    /// An argument the emulator cannot take (`why`); `unsupported` when it is of a kind the
    /// emulator does not take at all.
    pub fn input(kernel: &str, program: &str, why: &str, unsupported: bool) -> Failure {
        let kinds = if unsupported { " (pipes, queues, or not set)" } else { "" };
        let message = format!("kernel '{kernel}' ({program}) is not checked: {why}{kinds}");
        Failure { kind: "argument", reason: why.to_string(), message }
    }

    /// A run that did not complete: launch `number` of `kernel` in `program`.
    pub fn run(e: &ExecError, kernel: &str, program: &str, number: u64, limits: &Limits) -> Failure {
        let (kind, reason) = match e {
            ExecError::Timeout(m) if m.starts_with("CPU-time") => ("timeout", limits.cpu.clone()),
            ExecError::Timeout(_) => ("timeout", limits.wall.clone()),
            ExecError::Memory(_) => ("memory", limits.memory.clone()),
            ExecError::Budget(_) => ("budget", "its check ran out of CLRACE_BUDGET".to_string()),
            ExecError::Hang(_) => ("hang", "it cannot finish in the emulator (a forward-progress hang)".to_string()),
            ExecError::Unsupported(_) => ("unsupported", "it uses something the emulator does not support".to_string()),
            ExecError::Launch(_) => ("launch", "the emulator refused the launch".to_string()),
            ExecError::Fault(_) => ("fault", "the emulator failed".to_string()),
        };
        // Once per kernel and kind of failure: an unsupported feature fails every launch.
        let message =
            format!("kernel '{kernel}' ({program}) could not be checked (launch {number}): {}", cited(&e.to_string()));
        Failure { kind, reason, message }
    }
}

/// A message of the emulator's or the compiler's as notes cite it: a program is compiled as a
/// file of the current directory that does not exist (its name is the one reports use), so
/// places under the current directory are named relative to it, as reports name them.
pub fn cited(message: &str) -> String {
    match std::env::current_dir() {
        Ok(cwd) if cwd.parent().is_some() => message.replace(&format!("{}/", cwd.display()), ""),
        _ => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::Failure;

    #[test]
    fn an_argument_failure_names_the_kernel_and_says_which_kinds_are_not_taken() {
        let unsupported = Failure::input("k", "p.cl", "argument 1 ('q') is of a kind not supported yet", true);
        assert_eq!(unsupported.kind, "argument");
        assert_eq!(unsupported.reason, "argument 1 ('q') is of a kind not supported yet");
        assert_eq!(
            unsupported.message,
            "kernel 'k' (p.cl) is not checked: argument 1 ('q') is of a kind not supported yet (pipes, queues, or not set)"
        );
        let damaged = Failure::input("k", "p.cl", "the spooled launch is damaged: x", false);
        assert_eq!(damaged.message, "kernel 'k' (p.cl) is not checked: the spooled launch is damaged: x");
    }
}
