//! A contact sheet of sample frames (docs/sim-contact-sheet.png): each preset, a touch and a
//! push-out, so that a reader sees what the simulator draws.

use crate::sim::render::Renderer;
use crate::sim::run::{plan_story, SimError, SimOptions};
use crate::sim::Preset;
use opencv::core::{Mat, Point, Rect, Scalar, Size, Vector, CV_8UC3};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::path::Path;

const TILE_W: i32 = 512;
const TILE_H: i32 = 288;

/// Renders one frame of a recording (no files written).
pub fn still(opts: &SimOptions, t_s: f64) -> Result<Mat, SimError> {
    let (story, cam, look) = plan_story(opts);
    let mut r = Renderer::new(
        &story,
        cam,
        look,
        opts.fps,
        ChaCha20Rng::seed_from_u64(opts.seed),
    )?;
    let mut img = Mat::new_rows_cols_with_default(
        opts.height_px as i32,
        opts.width_px as i32,
        CV_8UC3,
        Scalar::all(0.0),
    )?;
    r.render((t_s * opts.fps).round() as u64, &mut img)?;
    Ok(img)
}

/// The first moment of a kind in a seed's story, searching seeds from `seed`.
fn find_moment(base: &SimOptions, what: &str) -> Option<(SimOptions, f64)> {
    for s in base.seed..base.seed + 40 {
        let opts = SimOptions {
            seed: s,
            ..base.clone()
        };
        let (story, _, _) = plan_story(&opts);
        if let Some(m) = story.moments.iter().find(|m| m.what.starts_with(what)) {
            return Some((opts, m.t_s));
        }
    }
    None
}

/// Writes the contact sheet (3 x 2 tiles with captions).
pub fn contact_sheet(path: &Path) -> Result<(), SimError> {
    let base = SimOptions {
        readings: 8,
        ..SimOptions::default()
    };
    let mut picks: Vec<(String, SimOptions, f64)> = Vec::new();
    for (preset, what) in [
        (Preset::Clean, "direct touch"),
        (Preset::Realistic, "touches"),
        (Preset::Hard, "send"),
    ] {
        let b = SimOptions {
            preset,
            seed: 11,
            ..base.clone()
        };
        if let Some((o, t)) = find_moment(&b, what) {
            picks.push((
                format!("{preset}: {what} (seed {}, t={t:.3} s)", o.seed),
                o,
                t,
            ));
        }
    }
    for (preset, what, dt) in [
        (Preset::Realistic, "push-out", -0.12),
        (Preset::Realistic, "dead-card touch", 0.01),
        (Preset::Hard, "early entry", 0.0),
    ] {
        let b = SimOptions {
            preset,
            seed: 21,
            ..base.clone()
        };
        if let Some((o, t)) = find_moment(&b, what) {
            picks.push((
                format!("{preset}: {what} (seed {}, t={:.3} s)", o.seed, t + dt),
                o,
                t + dt,
            ));
        }
    }
    let cols = 3;
    let rows = picks.len().div_ceil(cols) as i32;
    let mut sheet = Mat::new_rows_cols_with_default(
        rows * TILE_H,
        cols as i32 * TILE_W,
        CV_8UC3,
        Scalar::all(255.0),
    )?;
    for (i, (caption, opts, t)) in picks.iter().enumerate() {
        let img = still(opts, *t)?;
        let mut small = Mat::default();
        imgproc::resize(
            &img,
            &mut small,
            Size::new(TILE_W, TILE_H),
            0.0,
            0.0,
            imgproc::INTER_AREA,
        )?;
        imgproc::rectangle(
            &mut small,
            Rect::new(0, 0, TILE_W, 22),
            Scalar::all(0.0),
            -1,
            imgproc::LINE_8,
            0,
        )?;
        imgproc::put_text(
            &mut small,
            caption,
            Point::new(6, 16),
            imgproc::FONT_HERSHEY_SIMPLEX,
            0.5,
            Scalar::all(255.0),
            1,
            imgproc::LINE_AA,
            false,
        )?;
        let r = Rect::new(
            (i % cols) as i32 * TILE_W,
            (i / cols) as i32 * TILE_H,
            TILE_W,
            TILE_H,
        );
        let mut dst = Mat::roi_mut(&mut sheet, r)?;
        small.copy_to(&mut dst)?;
    }
    let params: Vector<i32> = Vector::from(vec![imgcodecs::IMWRITE_PNG_COMPRESSION, 9]);
    imgcodecs::imwrite(path, &sheet, &params)?;
    Ok(())
}
