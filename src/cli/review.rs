//! `review OUT --seq N`: one ruling of a report in the terminal, with the paths of its
//! clip and strip. Reads `OUT/review.json` (written with the page); holds no logic.

use crate::cli::report::report_error;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

pub fn review(out_dir: &Path, seq: u32, out: &mut dyn Write) -> Result<()> {
    let text = crate::report::review_text(out_dir, seq).map_err(report_error)?;
    out.write_all(text.as_bytes())?;
    Ok(())
}
