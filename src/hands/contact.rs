//! The contact network (`models/contact.onnx`): is a fingertip the hand network found
//! pressing at table height, or held above it?
//!
//! Seen from above the cue is the hand's shadow: a fingertip held above the tatami has its
//! shadow beside it, a pressing one meets it. The network sees a square of the field
//! around the fingertip, sampled at `CROP_MM_PER_PX` whatever the recording's resolution
//! (the scale is the field map's own at that point), beside the same square 25 ms before
//! (a fingertip coming down meets its shadow while the hand stays) and of the plate
//! (the latest frame with no hand over the playing area), against which a shadow stands
//! out whatever the tatami, cards and light look like; it answers with one logit
//! (`train/train_contact.py`, docs/hands.md). It runs only for fingertips close to a
//! card, on frames the hand network runs on. A second network beside it
//! (`contact-second.onnx`, the same and a wider square) must agree, and a point network
//! (`contact-point.onnx`) says where in the square a fingertip found pressing presses,
//! and an onset network (`contact-onset.onnx`), from a short run of frames, whether the
//! finger has landed yet, which times a touch found (models/MODEL_CARD.md). All are
//! optional: without the first, contact is the hand network's own map.

use super::model::{planar_rgb, Backend, Net};
use super::HandsError;
use opencv::core::{self, Mat, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;
use std::path::{Path, PathBuf};

/// The network's input side, px, and its channels (the frame's RGB, the frame's
/// `CONTACT_BEFORE_S` before, the plate's).
pub const CROP_PX: usize = 48;
pub const CROP_CHANNELS: usize = 9;
/// Millimetres of the field a crop pixel covers.
pub const CROP_MM_PER_PX: f64 = 2.0;
/// A network may also take the same three over a wider square, of the whole hand and its
/// shadow (a hand held high casts its shadow far off): twice the channels, the second
/// nine at `WIDE_MM_PER_PX`.
pub const WIDE_MM_PER_PX: f64 = 4.0;
/// Width of the frame copy the crops are cut from: frames wider than this are halved
/// first (an area average, as the training crops were made at about 2 mm a pixel).
pub const CROP_SOURCE_MAX_W_PX: i32 = 960;

/// The committed model's file name, beside the hand model.
pub const CONTACT_FILE: &str = "contact.onnx";
/// A second network beside it, when present: a fingertip presses only when both say so
/// (two networks trained on different squares fail on different hands).
pub const CONTACT_SECOND_FILE: &str = "contact-second.onnx";
/// The point network beside them, when present: from the first network's nine planes
/// around a fingertip found pressing, where in the square the pressing fingertip lies
/// (two outputs, x and y in square pixels from its centre). The hand network's fingertip
/// may be the index or ring one, or lie some millimetres off; the card pressed is the
/// one under the point.
pub const CONTACT_POINT_FILE: &str = "contact-point.onnx";
/// The onset network beside them, when present: from the same square in the frame, in
/// the frames `ONSET_BACK_FRAMES` before it and in the plate (`ONSET_CHANNELS` planes),
/// whether the finger has reached the card by the frame (one logit). Run over the
/// frames around a touch the others found, it times the touch.
pub const CONTACT_ONSET_FILE: &str = "contact-onset.onnx";
/// The frames before the latest the onset network sees, in its input's order after it
/// (4.2 to 25 ms at 240 fps; it is run only on recordings of 200 fps or more).
pub const ONSET_BACK_FRAMES: [usize; 4] = [1, 2, 4, 6];
/// Its planes: three for each frame and for the plate.
pub const ONSET_CHANNELS: usize = 3 * (ONSET_BACK_FRAMES.len() + 2);

/// A frame kept for contact crops: the frame, halved when wide, and its scale from frame
/// pixels.
pub struct CropSource {
    pub bgr: Mat,
    pub scale: f64,
}

impl CropSource {
    pub fn new(frame: &Mat) -> Result<CropSource, HandsError> {
        if frame.cols() > CROP_SOURCE_MAX_W_PX {
            let mut half = Mat::default();
            imgproc::resize(
                frame,
                &mut half,
                Size::new(frame.cols() / 2, frame.rows() / 2),
                0.0,
                0.0,
                imgproc::INTER_AREA,
            )?;
            let scale = half.cols() as f64 / frame.cols() as f64;
            Ok(CropSource { bgr: half, scale })
        } else {
            Ok(CropSource {
                bgr: frame.try_clone()?,
                scale: 1.0,
            })
        }
    }
}

/// One contact network, ready to run.
struct ContactNet {
    net: Net,
    /// It also takes the wider square (`WIDE_MM_PER_PX`).
    wide: bool,
}

/// The contact network (and the second, and the point network, when there are), ready
/// to run.
pub struct ContactModel {
    nets: Vec<ContactNet>,
    point: Option<ContactNet>,
    onset: Option<Net>,
    path: PathBuf,
}

impl ContactModel {
    /// Loads the contact network at `path`, run by `backend` on one thread (ONNX Runtime
    /// runs these small networks in about half tract's time).
    pub fn load(path: &Path, backend: Backend) -> Result<ContactModel, HandsError> {
        Ok(ContactModel {
            nets: vec![ContactNet::load(path, backend)?],
            point: None,
            onset: None,
            path: path.to_path_buf(),
        })
    }

    /// The contact model beside a hand model, when there is one, with the second
    /// network when that is there too.
    pub fn beside(hand_model: &Path, backend: Backend) -> Result<Option<ContactModel>, HandsError> {
        let p = hand_model.with_file_name(CONTACT_FILE);
        if !p.is_file() {
            return Ok(None);
        }
        let mut m = ContactModel::load(&p, backend)?;
        let second = hand_model.with_file_name(CONTACT_SECOND_FILE);
        if second.is_file() {
            m.nets.push(ContactNet::load(&second, backend)?);
        }
        let point = hand_model.with_file_name(CONTACT_POINT_FILE);
        if point.is_file() {
            let net = ContactNet::load(&point, backend)?;
            if net.wide {
                return Err(HandsError::Model {
                    path: point,
                    problem: format!(
                        "a point network takes {CROP_CHANNELS} channels, not {}",
                        2 * CROP_CHANNELS
                    ),
                });
            }
            m.point = Some(net);
        }
        let onset = hand_model.with_file_name(CONTACT_ONSET_FILE);
        if onset.is_file() {
            let net = Net::load(&onset, backend, 1, &[[1, ONSET_CHANNELS, CROP_PX, CROP_PX]])
                .map_err(|problem| HandsError::Model {
                    path: onset.clone(),
                    problem,
                })?;
            m.onset = Some(net);
        }
        Ok(Some(m))
    }

    /// Whether an onset network is there to time touches.
    pub fn times_touches(&self) -> bool {
        self.onset.is_some()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The probability that the fingertip at `tip_px` (frame pixels) presses, where the
    /// image holds `px_per_mm` frame pixels a millimetre; `frames` are the frame, the
    /// frame `CONTACT_BEFORE_S` earlier and the plate (the latest frame with no hand
    /// over the playing area). With two networks, the lower of their two; when the first already
    /// answers below `enough` (the probability at which a fingertip presses) its answer
    /// stands and the second is not run: the lower of the two could not reach `enough`
    /// either. Most fingertips near a card are not pressing, so this halves the work.
    pub fn press_p(
        &self,
        frames: [&CropSource; 3],
        tip_px: [f64; 2],
        px_per_mm: f64,
        enough: f64,
    ) -> Result<f64, HandsError> {
        let n = CROP_PX * CROP_PX;
        let wide = self.nets.iter().any(|m| m.wide);
        let scales: &[f64] = if wide {
            &[CROP_MM_PER_PX, WIDE_MM_PER_PX]
        } else {
            &[CROP_MM_PER_PX]
        };
        let mut input = vec![0f32; scales.len() * CROP_CHANNELS * n];
        // Per scale, the frame, the frame before and the plate, three planes each; the
        // wider square is cut only when a network that takes it runs.
        let cut_scale = |i: usize, input: &mut [f32]| {
            cut_three(
                frames,
                tip_px,
                px_per_mm,
                scales[i],
                &mut input[i * CROP_CHANNELS * n..(i + 1) * CROP_CHANNELS * n],
            )
        };
        cut_scale(0, &mut input)?;
        let mut wide_cut = false;
        // The last network takes the planes themselves, the others a copy.
        let mut p = 1.0f64;
        for (k, m) in self.nets.iter().enumerate() {
            if p < enough {
                break;
            }
            if m.wide && !wide_cut {
                cut_scale(1, &mut input)?;
                wide_cut = true;
            }
            let planes = if k + 1 == self.nets.len() {
                std::mem::take(&mut input)
            } else {
                input.clone()
            };
            p = p.min(m.run(planes)?);
        }
        Ok(p)
    }

    /// Where the fingertip found at `tip_px` presses, by the point network, in frame
    /// pixels; `None` without a point network. Arguments as `press_p`'s.
    pub fn press_point(
        &self,
        frames: [&CropSource; 3],
        tip_px: [f64; 2],
        px_per_mm: f64,
    ) -> Result<Option<[f64; 2]>, HandsError> {
        let Some(net) = &self.point else {
            return Ok(None);
        };
        let mut input = vec![0f32; CROP_CHANNELS * CROP_PX * CROP_PX];
        cut_three(frames, tip_px, px_per_mm, CROP_MM_PER_PX, &mut input)?;
        let out = net.outputs(input)?;
        let (Some(dx), Some(dy)) = (out.first(), out.get(1)) else {
            return Err(HandsError::Inference(
                "the point network gave fewer than two outputs".into(),
            ));
        };
        // Square pixels to frame pixels: `CROP_MM_PER_PX` millimetres each.
        let k = px_per_mm * CROP_MM_PER_PX;
        Ok(Some([
            tip_px[0] + *dx as f64 * k,
            tip_px[1] + *dy as f64 * k,
        ]))
    }

    /// The probability that the finger pressing at `tip_px` has reached the card by the
    /// first of `frames` (the frame, the frames `ONSET_BACK_FRAMES` before it, the
    /// plate), by the onset network; `None` without one. Other arguments as `press_p`'s.
    pub fn landed_p(
        &self,
        frames: [&CropSource; ONSET_BACK_FRAMES.len() + 2],
        tip_px: [f64; 2],
        px_per_mm: f64,
    ) -> Result<Option<f64>, HandsError> {
        let Some(net) = &self.onset else {
            return Ok(None);
        };
        let n = 3 * CROP_PX * CROP_PX;
        let mut input = vec![0f32; ONSET_CHANNELS * CROP_PX * CROP_PX];
        for (j, frame) in frames.iter().enumerate() {
            cut(
                frame,
                tip_px,
                px_per_mm,
                CROP_MM_PER_PX,
                &mut input[j * n..(j + 1) * n],
            )?;
        }
        let logit = net
            .run(input)?
            .first()
            .copied()
            .ok_or_else(|| HandsError::Inference("the onset network gave no output".into()))?;
        Ok(Some(1.0 / (1.0 + (-logit as f64).exp())))
    }
}

impl ContactNet {
    fn load(path: &Path, backend: Backend) -> Result<ContactNet, HandsError> {
        let bad = |problem: String| HandsError::Model {
            path: path.to_path_buf(),
            problem,
        };
        if !path.is_file() {
            return Err(bad("file not found".into()));
        }
        let net = Net::load(
            path,
            backend,
            1,
            &[
                [1, CROP_CHANNELS, CROP_PX, CROP_PX],
                [1, 2 * CROP_CHANNELS, CROP_PX, CROP_PX],
            ],
        )
        .map_err(bad)?;
        let wide = net.shape()[1] == 2 * CROP_CHANNELS;
        Ok(ContactNet { net, wide })
    }

    /// The network on the input planes, of which it takes the first nine, or all
    /// eighteen when it is a wide one: the probability of pressing, from its one logit.
    fn run(&self, input: Vec<f32>) -> Result<f64, HandsError> {
        let logit = self
            .outputs(input)?
            .first()
            .copied()
            .ok_or_else(|| HandsError::Inference("contact model gave no output".into()))?;
        Ok(1.0 / (1.0 + (-logit as f64).exp()))
    }

    /// The network's outputs on the input planes (the first nine, or all eighteen when
    /// it is a wide one).
    fn outputs(&self, mut input: Vec<f32>) -> Result<Vec<f32>, HandsError> {
        let channels = if self.wide {
            2 * CROP_CHANNELS
        } else {
            CROP_CHANNELS
        };
        input.truncate(channels * CROP_PX * CROP_PX);
        self.net.run(input)
    }
}

/// The same square cut from each of three frames (the frame, the frame before, the
/// plate) into nine planes, three each, in that order.
fn cut_three(
    frames: [&CropSource; 3],
    tip_px: [f64; 2],
    px_per_mm: f64,
    mm_per_px: f64,
    out: &mut [f32],
) -> Result<(), HandsError> {
    let n = 3 * CROP_PX * CROP_PX;
    for (j, frame) in frames.iter().enumerate() {
        cut(
            frame,
            tip_px,
            px_per_mm,
            mm_per_px,
            &mut out[j * n..(j + 1) * n],
        )?;
    }
    Ok(())
}

/// Cuts the square around `tip_px` (frame pixels) from `src`, `mm_per_px` millimetres a
/// crop pixel, into three planes of RGB in [-0.5, 0.5].
fn cut(
    src: &CropSource,
    tip_px: [f64; 2],
    px_per_mm: f64,
    mm_per_px: f64,
    out: &mut [f32],
) -> Result<(), HandsError> {
    // Source pixels per crop pixel, and the affine map source -> crop.
    let k = px_per_mm * src.scale * mm_per_px;
    if !(k.is_finite() && k > 0.0) {
        return Err(HandsError::Inference(format!(
            "no image scale at {tip_px:?} ({px_per_mm} px a mm)"
        )));
    }
    let c = [tip_px[0] * src.scale, tip_px[1] * src.scale];
    let half = CROP_PX as f64 / 2.0;
    let m = Mat::from_slice_2d(&[
        [1.0 / k, 0.0, half - c[0] / k],
        [0.0, 1.0 / k, half - c[1] / k],
    ])?;
    let mut crop = Mat::default();
    imgproc::warp_affine(
        &src.bgr,
        &mut crop,
        &m,
        Size::new(CROP_PX as i32, CROP_PX as i32),
        imgproc::INTER_LINEAR,
        core::BORDER_REPLICATE,
        Scalar::all(0.0),
    )?;
    planar_rgb(&crop, out)
}
