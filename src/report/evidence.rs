//! The evidence of each ruling: a strip of frames around the deciding moment (every
//! second frame over +-10 frames, times in ms from the kimari-ji moment) and a slow-motion
//! clip of the take as numbered JPEG frames the page steps through, both zoomed on the
//! card with the field, the cards and the hands drawn.
//!
//! Reads the video (seeking between rulings), the calibration and, when given, hand
//! observations; writes `OUT/evidence/seq-NNN/strip.jpg` and `.../clip/NNNN.jpg`.

use super::draw::{self, bgr, CardPx, FieldPx, Layer, View};
use super::facts::{self, Focus};
use super::frames::FrameReader;
use super::hands::{self, HandObs};
use super::{ReportError, ReportInput};
use crate::rules::model::{touched_card_words, EventKind, Ruling};
use crate::rules::Event;
use opencv::core::{self, Mat, Rect, Scalar, Size, Vector};
use opencv::imgcodecs;
use opencv::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The strip spans this many frames either side of the deciding frame ("about +-10").
pub const STRIP_HALF_FRAMES: i64 = 10;
/// Every this many frames one tile: 11 tiles over +-10 frames.
pub const STRIP_STEP_FRAMES: i64 = 2;
/// The clip starts this long before the deciding moment (the reach of both hands) ...
pub const CLIP_BEFORE_S: f64 = 0.40;
/// ... and ends this long after it (the card leaving, the rival arriving).
pub const CLIP_AFTER_S: f64 = 0.20;
/// A strip tile is a square of this many card heights around the card, shown at
/// `TILE_PX`; the clip shows `CLIP_CARD_HEIGHTS` card heights at `CLIP_W_PX` x `CLIP_H_PX`.
const TILE_CARD_HEIGHTS: f64 = 4.0;
const TILE_PX: i32 = 200;
const CLIP_CARD_HEIGHTS: f64 = 7.5;
const CLIP_W_PX: i32 = 480;
const CLIP_H_PX: i32 = 360;
const JPEG_QUALITY_TILE: i32 = 85;
const JPEG_QUALITY_CLIP: i32 = 78;

/// One clip frame as the page lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ClipFrame {
    /// Path relative to the report's folder.
    pub file: String,
    pub frame: u64,
    /// Milliseconds from the kimari-ji moment (`decided_s`).
    pub t_ms: f64,
}

/// Where a ruling's evidence is and what it shows.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub seq: u32,
    /// Relative to the report's folder.
    pub strip: String,
    pub strip_frames: Vec<(u64, f64)>,
    pub clip_dir: String,
    pub clip: Vec<ClipFrame>,
    pub deciding_frame: u64,
    pub deciding_t_s: f64,
    pub focus: String,
    pub focus_poem: Option<u8>,
}

enum Job {
    Tile { ruling: usize, slot: usize },
    Clip { ruling: usize, slot: usize },
}

struct Plan<'a> {
    ruling: &'a Ruling,
    focus: Focus,
    strip: Vec<u64>,
    clip: Vec<u64>,
    tile_crop: Rect,
    clip_crop: Rect,
    cards: Vec<CardPx>,
    events: Vec<&'a Event>,
    dir: PathBuf,
    /// The field and cards drawn once for the tile view and for the clip view.
    tile_layer: Option<Layer>,
    clip_layer: Option<Layer>,
}

/// The view a crop gives at an output size (as `draw::zoom` makes it).
fn view_of(crop: Rect, out: Size) -> View {
    View {
        x0: crop.x as f64,
        y0: crop.y as f64,
        scale: out.width as f64 / crop.width as f64,
    }
}

fn write_jpeg(path: &Path, img: &Mat, quality: i32) -> Result<(), ReportError> {
    let params = Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, quality]);
    let ok = imgcodecs::imwrite(path, img, &params)?;
    if ok {
        Ok(())
    } else {
        Err(ReportError::write(
            path,
            std::io::Error::other("the JPEG encoder refused it"),
        ))
    }
}

fn mkdir(path: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(path).map_err(|e| ReportError::write(path, e))
}

fn event_text(e: &Event) -> Option<String> {
    Some(match &e.what {
        EventKind::Touch {
            player,
            hand,
            poem,
            territory,
            direct,
        } => {
            format!(
                "touch {player} ({hand}) card {}{}",
                touched_card_words(*poem, *territory),
                if *direct { "" } else { " (struck)" }
            )
        }
        EventKind::Out { poem, by, .. } => format!("card {poem} out (by {by:?})"),
        EventKind::Enter { player, hand } => format!("{player} {hand} hand enters"),
        EventKind::Leave { player, hand } => format!("{player} {hand} hand leaves"),
        EventKind::Send { from, poem } => format!("{from} sends {poem}"),
        EventKind::Contact { .. } => "hands in contact".to_string(),
        _ => return None,
    })
}

/// The evidence written, and where its time went.
pub struct EvidenceRun {
    pub evidence: Vec<Evidence>,
    /// Seeking and decoding video frames, seconds.
    pub decode_s: f64,
    /// Encoding and writing JPEG files, seconds.
    pub jpeg_s: f64,
}

/// Writes every ruling's strip and clip under `out/evidence/`.
pub fn write_evidence(
    out: &Path,
    input: &ReportInput,
    video: &Path,
) -> Result<EvidenceRun, ReportError> {
    let mut jpeg_s = 0.0;
    let mut reader = FrameReader::open(video)?;
    let size = Size::new(reader.width_px, reader.height_px);
    let field = match &input.calibration {
        Some(c) => Some(FieldPx::new(
            crate::field::FieldMap::from_calibration(c, input.layout.field.clone())
                .map_err(|e| ReportError::Calibration(e.to_string()))?,
        )?),
        None => None,
    };
    let last_frame = reader.frame_count.saturating_sub(1);
    let root = out.join("evidence");
    let mut plans = Vec::new();
    for r in &input.rulings {
        let focus = facts::focus(&input.layout, &input.readings, &input.events, r);
        let fd = reader.index_at(focus.deciding_t_s).min(last_frame);
        let strip: Vec<u64> = (-STRIP_HALF_FRAMES..=STRIP_HALF_FRAMES)
            .step_by(STRIP_STEP_FRAMES as usize)
            .map(|k| (fd as i64 + k).clamp(0, last_frame as i64) as u64)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let c0 = reader
            .index_at(focus.deciding_t_s - CLIP_BEFORE_S)
            .min(last_frame);
        let c1 = reader
            .index_at(focus.deciding_t_s + CLIP_AFTER_S)
            .min(last_frame);
        let clip: Vec<u64> = (c0..=c1).collect();
        let cards_now = facts::cards_at(&input.layout, &input.events, focus.deciding_t_s - 1e-3);
        let cards = match &field {
            Some(f) => f.cards_px(&cards_now)?,
            None => Vec::new(),
        };
        let centre_card = cards
            .iter()
            .find(|c| c.poem.is_some() && c.poem == focus.poem);
        let (centre, card_h_px) = match (centre_card, &field, focus.at_mm) {
            (Some(c), _, _) => (
                c.centre_px,
                (c.corners_px[0][0] - c.corners_px[3][0])
                    .hypot(c.corners_px[0][1] - c.corners_px[3][1]),
            ),
            (None, Some(f), Some((x, y))) => {
                let p = f
                    .map
                    .to_image(&[crate::rules::geometry::Pt::new(x, y)])
                    .map_err(|e| ReportError::Calibration(e.to_string()))?;
                (p[0], size.height as f64 / 8.0)
            }
            _ => (
                [size.width as f64 / 2.0, size.height as f64 / 2.0],
                size.height as f64 / 4.0,
            ),
        };
        let tile_side = TILE_CARD_HEIGHTS * card_h_px;
        let tile_crop = draw::crop_around(centre, tile_side, tile_side, size);
        let clip_h = CLIP_CARD_HEIGHTS * card_h_px;
        let clip_crop = draw::crop_around(
            centre,
            clip_h * CLIP_W_PX as f64 / CLIP_H_PX as f64,
            clip_h,
            size,
        );
        // Keep the clip's aspect when the frame clamps one side.
        let clip_crop = fit_aspect(clip_crop, CLIP_W_PX as f64 / CLIP_H_PX as f64, centre, size);
        let t0 = reader.t_s(c0) - 1e-9;
        let t1 = reader.t_s(c1) + 1e-9;
        let events: Vec<&Event> = input
            .events
            .iter()
            .filter(|e| e.t_s >= t0 && e.t_s <= t1 && event_text(e).is_some())
            .collect();
        let dir = root.join(format!("seq-{:03}", r.seq));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| ReportError::write(&dir, e))?;
        }
        mkdir(&dir.join("clip"))?;
        let layer = |crop: Rect, out: Size| -> Result<Option<Layer>, ReportError> {
            match &field {
                Some(f) => {
                    let v = view_of(crop, out);
                    Ok(Some(Layer::render(out, &|img: &mut Mat| {
                        draw::draw_field(img, &v, f, &cards, focus.poem)
                    })?))
                }
                None => Ok(None),
            }
        };
        let tile_layer = layer(tile_crop, Size::new(TILE_PX, TILE_PX))?;
        let clip_layer = layer(clip_crop, Size::new(CLIP_W_PX, CLIP_H_PX))?;
        plans.push(Plan {
            ruling: r,
            focus,
            strip,
            clip,
            tile_crop,
            clip_crop,
            cards,
            events,
            dir,
            tile_layer,
            clip_layer,
        });
    }

    let mut jobs: BTreeMap<u64, Vec<Job>> = BTreeMap::new();
    for (i, p) in plans.iter().enumerate() {
        for (slot, f) in p.strip.iter().enumerate() {
            jobs.entry(*f)
                .or_default()
                .push(Job::Tile { ruling: i, slot });
        }
        for (slot, f) in p.clip.iter().enumerate() {
            jobs.entry(*f)
                .or_default()
                .push(Job::Clip { ruling: i, slot });
        }
    }
    let hands: HashMap<u64, Vec<HandObs>> = match &input.hands {
        Some(h) => hands::read_frames(h, &jobs.keys().copied().collect())?,
        None => HashMap::new(),
    };
    let mut tiles: Vec<Vec<Option<Mat>>> = plans
        .iter()
        .map(|p| (0..p.strip.len()).map(|_| None).collect())
        .collect();
    let mut clip_written: Vec<Vec<ClipFrame>> = plans.iter().map(|_| Vec::new()).collect();
    let no_hands = Vec::new();
    for (frame_no, js) in &jobs {
        let Some(frame) = reader.read(*frame_no)? else {
            continue;
        };
        let t_s = reader.t_s(*frame_no);
        let hs = hands.get(frame_no).unwrap_or(&no_hands);
        for j in js {
            match *j {
                Job::Tile { ruling, slot } => {
                    let p = &plans[ruling];
                    let (mut img, v) =
                        draw::zoom(&frame, p.tile_crop, Size::new(TILE_PX, TILE_PX))?;
                    decorate(&mut img, &v, p.tile_layer.as_ref(), p, hs)?;
                    let dt_ms = (t_s - p.ruling.decided_s) * 1000.0;
                    draw::label_at(
                        &mut img,
                        &format!("{dt_ms:+.1} ms"),
                        core::Point::new(4, 4),
                        0.5,
                        Scalar::all(255.0),
                        false,
                    )?;
                    draw::label_at(
                        &mut img,
                        &format!("frame {frame_no}"),
                        core::Point::new(4, TILE_PX - 22),
                        0.4,
                        Scalar::all(220.0),
                        false,
                    )?;
                    if *frame_no == reader.index_at(p.focus.deciding_t_s) {
                        draw::border(&mut img, bgr("#ff1744"), 4)?;
                    }
                    tiles[ruling][slot] = Some(img);
                }
                Job::Clip { ruling, slot } => {
                    let p = &plans[ruling];
                    let (mut img, v) =
                        draw::zoom(&frame, p.clip_crop, Size::new(CLIP_W_PX, CLIP_H_PX))?;
                    decorate(&mut img, &v, p.clip_layer.as_ref(), p, hs)?;
                    let dt_ms = (t_s - p.ruling.decided_s) * 1000.0;
                    let head =
                        format!("{dt_ms:+.1} ms from kimari-ji   frame {frame_no}   t {t_s:.3} s");
                    draw::label_at(
                        &mut img,
                        &head,
                        core::Point::new(4, 4),
                        0.45,
                        Scalar::all(255.0),
                        false,
                    )?;
                    let passed: Vec<String> = p
                        .events
                        .iter()
                        .filter(|e| e.t_s <= t_s + 0.5 / reader.fps)
                        .filter_map(|e| {
                            event_text(e).map(|s| {
                                format!("{:+.1} ms  {s}", (e.t_s - p.ruling.decided_s) * 1000.0)
                            })
                        })
                        .collect();
                    for (k, line) in passed.iter().rev().take(3).enumerate() {
                        let colour = if k == 0 {
                            bgr("#ffd600")
                        } else {
                            Scalar::all(230.0)
                        };
                        draw::label_at(
                            &mut img,
                            line,
                            core::Point::new(4, CLIP_H_PX - 22 - 18 * k as i32),
                            0.42,
                            colour,
                            false,
                        )?;
                    }
                    if *frame_no == reader.index_at(p.focus.deciding_t_s) {
                        draw::border(&mut img, bgr("#ff1744"), 3)?;
                    }
                    let file = p.dir.join("clip").join(format!("{slot:04}.jpg"));
                    let tj = std::time::Instant::now();
                    write_jpeg(&file, &img, JPEG_QUALITY_CLIP)?;
                    jpeg_s += tj.elapsed().as_secs_f64();
                    clip_written[ruling].push(ClipFrame {
                        file: rel(out, &file),
                        frame: *frame_no,
                        t_ms: dt_ms,
                    });
                }
            }
        }
    }

    let mut out_ev = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        let mut row = Vector::<Mat>::new();
        let mut strip_frames = Vec::new();
        let gap = Mat::new_rows_cols_with_default(TILE_PX, 4, core::CV_8UC3, Scalar::all(255.0))?;
        for (slot, t) in tiles[i].iter().enumerate() {
            if let Some(t) = t {
                if !row.is_empty() {
                    row.push(gap.try_clone()?);
                }
                row.push(t.try_clone()?);
                let f = p.strip[slot];
                strip_frames.push((f, (reader.t_s(f) - p.ruling.decided_s) * 1000.0));
            }
        }
        let strip = p.dir.join("strip.jpg");
        if !row.is_empty() {
            let mut img = Mat::default();
            core::hconcat(&row, &mut img)?;
            write_jpeg(&strip, &img, JPEG_QUALITY_TILE)?;
        }
        let mut clip = std::mem::take(&mut clip_written[i]);
        clip.sort_by_key(|c| c.frame);
        out_ev.push(Evidence {
            seq: p.ruling.seq,
            strip: rel(out, &strip),
            strip_frames,
            clip_dir: rel(out, &p.dir.join("clip")),
            clip,
            deciding_frame: reader.index_at(p.focus.deciding_t_s),
            deciding_t_s: p.focus.deciding_t_s,
            focus: p.focus.what.clone(),
            focus_poem: p.focus.poem,
        });
    }
    Ok(EvidenceRun {
        evidence: out_ev,
        decode_s: reader.decode_s,
        jpeg_s,
    })
}

fn decorate(
    img: &mut Mat,
    v: &View,
    layer: Option<&Layer>,
    p: &Plan,
    hands: &[HandObs],
) -> Result<(), ReportError> {
    if let Some(l) = layer {
        l.apply(img)?;
    }
    draw::draw_hands(img, v, hands, &p.cards)
}

/// Grows the clamped side of a crop back to the wanted aspect where the frame allows.
fn fit_aspect(r: Rect, aspect: f64, centre: [f64; 2], frame: Size) -> Rect {
    let (w, h) = (r.width as f64, r.height as f64);
    if (w / h - aspect).abs() < 0.01 {
        return r;
    }
    if w / h > aspect {
        draw::crop_around(centre, h * aspect, h, frame)
    } else {
        draw::crop_around(centre, w, w / aspect, frame)
    }
}

/// `path` relative to `base`, with forward slashes (for the page's links).
pub fn rel(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}
