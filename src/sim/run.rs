//! `simulate`: plans a story, writes the recording directory (contract section 3) and
//! renders the video, optionally with per-frame labels.

use crate::rules;
use crate::sim::camera::Camera;
use crate::sim::encode::{EncodeError, Encoder};
use crate::sim::labels::{card_label, hand_labels, EpochLabel, FrameLabel};
use crate::sim::look::{CardTextOptions, Look};
use crate::sim::render::Renderer;
use crate::sim::story::{plan, Story, StoryOptions};
use crate::sim::Preset;
use crate::util::{matrix_to_rows, write_json_line};
use opencv::core::{Mat, Scalar, CV_8UC3};
use opencv::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SimError {
    #[error("{}: {problem}", path.display())]
    Io { path: PathBuf, problem: String },
    #[error("rendering: {0}")]
    OpenCv(#[from] opencv::Error),
    #[error("encoding: {0}")]
    Encode(#[from] EncodeError),
    #[error("writing JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// What to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct SimOptions {
    pub seed: u64,
    pub fps: f64,
    pub width_px: u32,
    pub height_px: u32,
    pub readings: usize,
    pub preset: Preset,
    pub labels: bool,
    pub territory_mm: f64,
    pub gap_mm: f64,
    pub cards_per_side: usize,
    /// Card text overrides (font, columns, dakuten); default: as the seed draws them.
    pub card_text: CardTextOptions,
    /// Every reading a card on the field, raced for by both players touching it 0-20 ms
    /// apart (18-1's near-simultaneous take), for training data rich in close takes.
    pub close_takes: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 1,
            fps: 240.0,
            width_px: 1280,
            height_px: 720,
            readings: 10,
            preset: Preset::Realistic,
            labels: false,
            territory_mm: rules::geometry::TERRITORY_W_MM,
            gap_mm: rules::geometry::GAP_MM,
            cards_per_side: 25,
            card_text: CardTextOptions::default(),
            close_takes: false,
        }
    }
}

/// What was written, and how long it took.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimSummary {
    pub frames: u64,
    pub duration_s: f64,
    pub readings: usize,
    pub events: usize,
    pub video_bytes: u64,
    pub labels_bytes: u64,
    pub render_s: f64,
    pub ms_per_frame: f64,
    /// Of which drawing the frame.
    pub render_ms_per_frame: f64,
    /// Of which waiting for the encoder to take the frame.
    pub encode_wait_ms_per_frame: f64,
    pub static_rebuilds: usize,
}

/// The deterministic random streams of one seed: one per concern, so that changing how
/// one concern draws does not reshuffle the others.
fn stream(seed: u64, which: u64) -> ChaCha20Rng {
    let mut r = ChaCha20Rng::seed_from_u64(seed);
    r.set_stream(which);
    r
}

/// Plans the match of these options (no files).
pub fn plan_story(opts: &SimOptions) -> (Story, Camera, Look) {
    let look = Look::random(&mut stream(opts.seed, 1), opts.preset).with_card_text(&opts.card_text);
    let cam = Camera::random(
        &mut stream(opts.seed, 2),
        opts.width_px,
        opts.height_px,
        look.lens_strength,
    );
    let story = plan(
        &mut stream(opts.seed, 3),
        &StoryOptions {
            readings: opts.readings,
            preset: opts.preset,
            territory_mm: opts.territory_mm,
            gap_mm: opts.gap_mm,
            cards_per_side: opts.cards_per_side,
            close_takes: opts.close_takes,
        },
        cam.centre_mm,
    );
    (story, cam, look)
}

fn create(path: &Path) -> Result<BufWriter<File>, SimError> {
    File::create(path).map(BufWriter::new).map_err(io(path))
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> SimError + '_ {
    move |e| SimError::Io {
        path: path.to_path_buf(),
        problem: e.to_string(),
    }
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), SimError> {
    let mut f = create(path)?;
    serde_json::to_writer_pretty(&mut f, v)?;
    f.write_all(b"\n").map_err(io(path))?;
    f.flush().map_err(io(path))
}

fn write_lines<T: Serialize>(path: &Path, items: &[T]) -> Result<(), SimError> {
    let mut f = create(path)?;
    for it in items {
        write_json_line(&mut f, it).map_err(io(path))?;
    }
    Ok(())
}

/// The rulings on the truth, as `adjudicate` writes them: rulings, then the result line.
pub fn write_truth_decisions(path: &Path, story: &Story) -> Result<(), SimError> {
    let (rulings, result) = rules::adjudicate(&story.layout, &story.readings, &story.events);
    let mut f = create(path)?;
    for r in &rulings {
        write_json_line(&mut f, r).map_err(io(path))?;
    }
    write_json_line(&mut f, &result).map_err(io(path))
}

#[derive(Serialize)]
struct SceneLabel<'a> {
    fps: f64,
    exposure_s: f64,
    preset: Preset,
    seed: u64,
    calibration: crate::field::Calibration,
    field_to_image: [[f64; 3]; 3],
    camera_centre_mm: [f64; 3],
    look: &'a Look,
    moments: Vec<MomentLabel>,
}

#[derive(Serialize)]
struct MomentLabel {
    what: String,
    seq: u32,
    t_s: f64,
    frame: u64,
}

/// Writes the recording directory. `progress` draws a bar on stderr (when it is a terminal).
pub fn simulate(opts: &SimOptions, out: &Path, progress: bool) -> Result<SimSummary, SimError> {
    std::fs::create_dir_all(out).map_err(io(out))?;
    // One core: timing is comparable, and the other core is left to the encoder.
    opencv::core::set_num_threads(1)?;
    let (story, cam, look) = plan_story(opts);
    write_json(&out.join("layout.json"), &story.layout)?;
    write_lines(&out.join("readings.jsonl"), &story.readings)?;
    write_json(&out.join("calibration.json"), &cam.calibration())?;
    write_lines(&out.join("truth.jsonl"), &story.events)?;
    write_truth_decisions(&out.join("truth_decisions.jsonl"), &story)?;

    let frames = (story.duration_s * opts.fps).round() as u64;
    let mut renderer = Renderer::new(
        &story,
        cam.clone(),
        look.clone(),
        opts.fps,
        stream(opts.seed, 4),
    )?;
    let video = out.join("video.mp4");
    let mut enc = Encoder::start(&video, opts.width_px, opts.height_px, opts.fps, look.crf)?;
    let mut frames_csv = create(&out.join("frames.csv"))?;
    writeln!(frames_csv, "frame,t_s").map_err(io(out))?;
    let labels_dir = out.join("labels");
    let mut label_files = None;
    if opts.labels {
        std::fs::create_dir_all(&labels_dir).map_err(io(&labels_dir))?;
        let scene = SceneLabel {
            fps: opts.fps,
            exposure_s: renderer.exposure_s(),
            preset: opts.preset,
            seed: opts.seed,
            calibration: cam.calibration(),
            field_to_image: matrix_to_rows(&cam.field_to_image()),
            camera_centre_mm: cam.centre_mm,
            look: &look,
            moments: story
                .moments
                .iter()
                .map(|m| MomentLabel {
                    what: m.what.clone(),
                    seq: m.seq,
                    t_s: m.t_s,
                    frame: (m.t_s * opts.fps).round() as u64,
                })
                .collect(),
        };
        write_json(&labels_dir.join("scene.json"), &scene)?;
        label_files = Some((
            create(&labels_dir.join("frames.jsonl"))?,
            create(&labels_dir.join("cards.jsonl"))?,
        ));
    }
    let bar = if progress {
        indicatif::ProgressBar::new(frames)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg} {bar:40} {pos}/{len} frames, {per_sec}, eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message("simulate");
    let mut img = Mat::new_rows_cols_with_default(
        opts.height_px as i32,
        opts.width_px as i32,
        CV_8UC3,
        Scalar::all(0.0),
    )?;
    let exposure = renderer.exposure_s();
    let mut epoch_key: Option<Vec<usize>> = None;
    let mut epoch: u32 = 0;
    let started = Instant::now();
    let (mut render_s, mut encode_s) = (0.0, 0.0);
    for i in 0..frames {
        let t = i as f64 / opts.fps;
        let t0 = Instant::now();
        renderer.render(i, &mut img)?;
        let t1 = Instant::now();
        enc.write(img.data_bytes()?)?;
        render_s += (t1 - t0).as_secs_f64();
        encode_s += t1.elapsed().as_secs_f64();
        writeln!(frames_csv, "{i},{:.6}", t).map_err(io(out))?;
        if let Some((fl, cl)) = label_files.as_mut() {
            let resting: Vec<usize> = (0..story.cards.len())
                .filter(|&c| story.cards[c].still(t - exposure, t + exposure, &story.hands))
                .collect();
            if epoch_key.as_ref() != Some(&resting) {
                if epoch_key.is_some() {
                    epoch += 1;
                }
                let cards = resting
                    .iter()
                    .map(|&c| {
                        card_label(
                            &cam,
                            &story.geom,
                            story.cards[c].poem,
                            story.cards[c].pose(t, &story.hands),
                            false,
                        )
                    })
                    .collect::<opencv::Result<Vec<_>>>()?;
                write_json_line(
                    cl,
                    &EpochLabel {
                        epoch,
                        from_frame: i,
                        cards,
                    },
                )
                .map_err(io(&labels_dir))?;
                epoch_key = Some(resting.clone());
            }
            let shake = look.shake_at(t);
            let fcam = if look.shake_mm > 0.0 {
                cam.shifted(shake.0, shake.1)
            } else {
                cam.clone()
            };
            let moving_cards = (0..story.cards.len())
                .filter(|c| !resting.contains(c))
                .map(|c| {
                    card_label(
                        &fcam,
                        &story.geom,
                        story.cards[c].poem,
                        story.cards[c].pose(t, &story.hands),
                        true,
                    )
                })
                .collect::<opencv::Result<Vec<_>>>()?;
            let label = FrameLabel {
                frame: i,
                t_s: (t * 1e6).round() / 1e6,
                cards_epoch: epoch,
                moving_cards,
                hands: hand_labels(&story, &fcam, t)?,
                camera_shift_mm: (look.shake_mm > 0.0).then(|| {
                    [
                        (shake.0 * 100.0).round() / 100.0,
                        (shake.1 * 100.0).round() / 100.0,
                    ]
                }),
                field_to_image: (look.shake_mm > 0.0)
                    .then(|| matrix_to_rows(&fcam.field_to_image())),
            };
            write_json_line(fl, &label).map_err(io(&labels_dir))?;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    enc.finish()?;
    frames_csv.flush().map_err(io(out))?;
    let total_s = started.elapsed().as_secs_f64();
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let labels_bytes = if opts.labels {
        size(&labels_dir.join("frames.jsonl")) + size(&labels_dir.join("cards.jsonl"))
    } else {
        0
    };
    Ok(SimSummary {
        frames,
        duration_s: frames as f64 / opts.fps,
        readings: story.readings.len(),
        events: story.events.len(),
        video_bytes: size(&video),
        labels_bytes,
        render_s: total_s,
        ms_per_frame: total_s * 1e3 / frames.max(1) as f64,
        render_ms_per_frame: render_s * 1e3 / frames.max(1) as f64,
        encode_wait_ms_per_frame: encode_s * 1e3 / frames.max(1) as f64,
        static_rebuilds: renderer.static_rebuilds,
    })
}
