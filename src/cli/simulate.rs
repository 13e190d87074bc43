//! `simulate`: checks the options, runs the simulator, prints what was written.

use crate::rules::InputError;
use crate::sim::look::{CardColumns, CardTextOptions};
use crate::sim::{self, Preset, SimOptions};
use anyhow::Result;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Parses `WIDTHxHEIGHT`.
pub fn parse_size(s: &str) -> Result<(u32, u32), InputError> {
    let bad = || {
        InputError::new(
            "--size",
            s,
            "expected WIDTHxHEIGHT, e.g. 1280x720, both even and at least 64",
        )
    };
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if w < 64 || h < 64 || w % 2 == 1 || h % 2 == 1 || w > 7680 || h > 4320 {
        return Err(bad());
    }
    Ok((w, h))
}

/// Options as the command line gives them.
#[derive(Debug, Clone)]
pub struct SimulateArgs {
    pub seed: u64,
    pub fps: f64,
    pub size: String,
    pub readings: usize,
    pub preset: Preset,
    pub labels: bool,
    pub territory_mm: f64,
    pub gap_mm: f64,
    pub card_font: Option<std::path::PathBuf>,
    pub card_columns: Option<CardColumns>,
    pub card_dakuten: bool,
    pub close_takes: bool,
}

pub fn simulate(args: &SimulateArgs, out_dir: &Path, out: &mut dyn Write) -> Result<()> {
    let (width_px, height_px) = parse_size(&args.size)?;
    if !(args.fps >= 1.0 && args.fps <= 1000.0) {
        return Err(
            InputError::new("--fps", args.fps.to_string(), "must be between 1 and 1000").into(),
        );
    }
    if args.readings == 0 || args.readings > 100 {
        return Err(InputError::new(
            "--readings",
            args.readings.to_string(),
            "must be between 1 and 100",
        )
        .into());
    }
    if !(600.0..=1000.0).contains(&args.territory_mm) {
        return Err(InputError::new(
            "--territory-mm",
            args.territory_mm.to_string(),
            "must be between 600 and 1000",
        )
        .into());
    }
    if !(0.0..=100.0).contains(&args.gap_mm) {
        return Err(InputError::new(
            "--gap-mm",
            args.gap_mm.to_string(),
            "must be between 0 and 100",
        )
        .into());
    }
    if let Some(f) = &args.card_font {
        if !f.is_file() {
            return Err(InputError::new(
                "--card-font",
                f.display().to_string(),
                "no such font file",
            )
            .into());
        }
    }
    let opts = SimOptions {
        seed: args.seed,
        fps: args.fps,
        width_px,
        height_px,
        readings: args.readings,
        preset: args.preset,
        labels: args.labels,
        territory_mm: args.territory_mm,
        gap_mm: args.gap_mm,
        card_text: CardTextOptions {
            font: args.card_font.as_ref().map(|f| f.display().to_string()),
            columns: args.card_columns,
            dakuten: args.card_dakuten,
        },
        close_takes: args.close_takes,
        ..SimOptions::default()
    };
    let summary = sim::simulate(&opts, out_dir, std::io::stderr().is_terminal())?;
    serde_json::to_writer(&mut *out, &summary)?;
    writeln!(out)?;
    Ok(())
}
