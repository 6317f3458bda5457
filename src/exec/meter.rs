//! The memory a worker thread holds during a run, charged to the run's [`MemoryBudget`]. It owns
//! only the charge: what the bytes are (groups, lanes, findings) is for its callers, the group
//! runner and the scheduler, to say.

use super::ExecError;
use crate::budget::{MemoryBudget, mib};

/// Memory one worker thread holds, charged to the run's budget: its current group (work-items,
/// `__local` memory, printf output so far) plus what it keeps of finished groups. Charges only
/// grow during the run and are given back when the worker ends.
pub struct Meter<'a> {
    memory: Option<&'a MemoryBudget>,
    charged: u64,
    /// Bytes kept from finished groups (printf output, distinct findings).
    pub kept: u64,
}

impl<'a> Meter<'a> {
    /// A meter that has charged nothing yet; with no budget it only counts.
    pub fn new(memory: Option<&'a MemoryBudget>) -> Self {
        Meter { memory, charged: 0, kept: 0 }
    }

    /// Makes sure `bytes` (besides what is kept) are charged; `what` names them in the error.
    pub fn need(&mut self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), ExecError> {
        let bytes = bytes.saturating_add(self.kept);
        if bytes <= self.charged {
            return Ok(());
        }
        if let Some(memory) = self.memory
            && !memory.try_charge(bytes - self.charged)
        {
            return Err(ExecError::Memory(format!(
                "{} would pass the limit of {} MiB ({} MiB in use)",
                what(),
                mib(memory.limit()),
                mib(memory.used())
            )));
        }
        self.charged = bytes;
        Ok(())
    }
}

impl Drop for Meter<'_> {
    fn drop(&mut self) {
        if let Some(memory) = self.memory {
            memory.release(self.charged);
        }
    }
}
