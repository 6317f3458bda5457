//! What an application's launches add up to, shared by the two places that check them: the
//! layer, inline while the application runs, and the spool checker, after it. `ledger` counts
//! what became of every launch of every kernel; `reports` reports each checked launch and keeps
//! what earlier ones reported; `summary` writes the closing summary from both.
//!
//! It sees counts, reasons and totals: not launches, checks or report text.

mod ledger;
mod reports;
mod summary;

pub use ledger::{KernelKey, KernelRecord, Ledger};
pub use reports::Reports;
pub use summary::{Style, Totals, json as summary_json, render as render_summary};
