//! The commands behind the binary: each reads its files, calls one library function and
//! writes its output. Owns file access and exit codes; holds no referee logic.

pub mod analyze;
pub mod field;
pub mod layout;
pub mod live;
pub mod perceive;
pub mod readings;
pub mod report;
pub mod review;
pub mod score;
pub mod simulate;

use crate::rules::{self, InputError};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Exit status for input that cannot be used (contract section 6).
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit status for an internal failure.
pub const EXIT_INTERNAL: i32 = 1;

/// True when an error (anywhere in its chain) is bad input rather than a failure of ours.
pub fn is_bad_input(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<InputError>().is_some())
}

/// The one line printed for an error: bad input names its own file, line and problem.
pub fn error_line(err: &anyhow::Error) -> String {
    match err.chain().find_map(|e| e.downcast_ref::<InputError>()) {
        Some(input) => input.to_string(),
        None => format!("{err:#}"),
    }
}

/// A capture error as the binary reports it: the input's fault (a video or frames.csv
/// that cannot be read) as one line naming its file, place and problem (exit status 2);
/// an OpenCV failure as it is.
pub fn capture_error(e: crate::capture::CaptureError) -> anyhow::Error {
    match e {
        crate::capture::CaptureError::Input {
            path,
            place,
            problem,
        } => InputError::new(&path.display().to_string(), place, problem).into(),
        other => anyhow::Error::new(other),
    }
}

/// Reads a text file; a missing or unreadable file is bad input.
pub fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        InputError::new(
            &path.display().to_string(),
            "file",
            format!("cannot be read: {e}"),
        )
        .into()
    })
}

pub fn load_layout(path: &Path) -> Result<rules::Layout> {
    Ok(rules::parse::parse_layout(
        &path.display().to_string(),
        &read_text(path)?,
    )?)
}

pub fn load_readings(path: &Path) -> Result<Vec<rules::Reading>> {
    Ok(rules::parse::parse_readings(
        &path.display().to_string(),
        &read_text(path)?,
    )?)
}

pub fn load_events(path: &Path) -> Result<Vec<rules::Event>> {
    Ok(rules::parse::parse_events(
        &path.display().to_string(),
        &read_text(path)?,
    )?)
}

/// `adjudicate`: rulings as JSON lines, each written and flushed as it is made, then the result.
pub fn adjudicate(
    layout: &Path,
    readings: &Path,
    events: &Path,
    out: &mut dyn Write,
) -> Result<()> {
    let layout = load_layout(layout)?;
    let readings = load_readings(readings)?;
    let events = load_events(events)?;
    let mut write_err: Option<std::io::Error> = None;
    let (_, result) = rules::adjudicate_with(&layout, &readings, &events, |r| {
        if write_err.is_none() {
            if let Err(e) = write_json_line(out, r) {
                write_err = Some(e);
            }
        }
    });
    if let Some(e) = write_err {
        return Err(e).context("writing decisions");
    }
    write_json_line(out, &result).context("writing the result")?;
    Ok(())
}

pub use crate::util::write_json_line;

/// `kimariji [--read 74,64]`: `poem<TAB>kimariji<TAB>length` of every unread poem.
pub fn kimariji(read: &[u8], out: &mut dyn Write) -> Result<()> {
    let mut pool = rules::kimariji::ReadPool::new();
    for (i, &p) in read.iter().enumerate() {
        if rules::poems::poem(p).is_none() {
            return Err(InputError::new(
                "--read",
                format!("item {}", i + 1),
                format!("poem {p} does not exist (poems are 1..100)"),
            )
            .into());
        }
        if pool.is_read(p) {
            return Err(InputError::new(
                "--read",
                format!("item {}", i + 1),
                format!("poem {p} is listed twice"),
            )
            .into());
        }
        pool.mark_read(p);
    }
    for poem in pool.unread() {
        if let Some(k) = pool.kimariji(poem.no) {
            writeln!(out, "{}\t{}\t{}", poem.no, k.kana, k.len)?;
        }
    }
    out.flush()?;
    Ok(())
}
