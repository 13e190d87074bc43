//! The hand network: loading `models/hands.onnx`, preparing a frame for it and running it.
//!
//! The network sees the whole frame reduced to fit 320 x 184 (aspect kept, padded at the
//! bottom and right) and answers with 8 maps on a grid of half that size (see
//! `train/train.py` and `models/MODEL_CARD.md`). tract is the default engine; ONNX
//! Runtime is an optional one (cargo feature `ort`).

use super::HandsError;
use opencv::core::{self, Mat, Rect, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;
use std::path::{Path, PathBuf};
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::Factoid;

/// The network's input, px.
pub const MODEL_IN_W_PX: usize = 320;
pub const MODEL_IN_H_PX: usize = 184;
/// Its output grid, cells, and the number of maps.
pub const OUT_W_CELLS: usize = 160;
pub const OUT_H_CELLS: usize = 92;
pub const OUT_MAPS: usize = 8;
/// Input pixels per output cell.
pub const CELL_IN_PX: f64 = 2.0;

/// Which engine runs the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Backend {
    /// tract-onnx, pure Rust (default).
    #[default]
    Tract,
    /// ONNX Runtime through the `ort` crate (build with `--features ort`, and set
    /// `ORT_DYLIB_PATH` to `libonnxruntime.so`).
    Ort,
}

type TractPlan = std::sync::Arc<TypedRunnableModel>;

enum Engine {
    /// The plan, and the pool its matrix products run on when given more than one
    /// thread.
    Tract(TractPlan, Option<tract_linalg::multithread::Executor>),
    #[cfg(feature = "ort")]
    Ort(std::sync::Mutex<ort::session::Session>),
}

/// The output of one run: `OUT_MAPS` maps of `OUT_H_CELLS` x `OUT_W_CELLS` logits, and
/// the scale from frame pixels to input pixels.
pub struct Maps {
    pub data: Vec<f32>,
    pub scale: f64,
    /// The frame's size, px: what lies beyond it is padding.
    pub frame_px: [f64; 2],
}

impl Maps {
    /// Logit of map `c` at cell (x, y).
    #[inline]
    pub fn at(&self, c: usize, x: usize, y: usize) -> f32 {
        self.data[(c * OUT_H_CELLS + y) * OUT_W_CELLS + x]
    }
    /// Map `c` as a slice, row-major.
    pub fn map(&self, c: usize) -> &[f32] {
        let n = OUT_H_CELLS * OUT_W_CELLS;
        &self.data[c * n..(c + 1) * n]
    }
    /// Frame pixel of a cell coordinate (cell centres at integer + 0.5).
    pub fn cell_to_px(&self, x_cells: f64, y_cells: f64) -> [f64; 2] {
        [
            x_cells * CELL_IN_PX / self.scale,
            y_cells * CELL_IN_PX / self.scale,
        ]
    }
    /// The same, kept inside the frame (outlines stop at its edge).
    pub fn cell_to_px_clipped(&self, x_cells: f64, y_cells: f64) -> [f64; 2] {
        self.clip_px(self.cell_to_px(x_cells, y_cells))
    }
    /// A frame point kept inside the frame.
    pub fn clip_px(&self, [x, y]: [f64; 2]) -> [f64; 2] {
        [
            x.clamp(0.0, self.frame_px[0]),
            y.clamp(0.0, self.frame_px[1]),
        ]
    }
}

/// A frame reduced for the network (BGR, `MODEL_IN_W_PX` x `MODEL_IN_H_PX`), and the scale
/// from frame pixels to its pixels.
pub struct SmallFrame {
    pub bgr: Mat,
    pub scale: f64,
    /// The original frame's size, px.
    pub frame_px: [f64; 2],
}

/// Reduces a decoded frame to the network's input size (aspect kept, zero padding).
pub fn shrink(frame: &Mat) -> Result<SmallFrame, HandsError> {
    let (w, h) = (frame.cols().max(1) as f64, frame.rows().max(1) as f64);
    let scale = (MODEL_IN_W_PX as f64 / w).min(MODEL_IN_H_PX as f64 / h);
    let sw = ((w * scale).round() as i32).clamp(1, MODEL_IN_W_PX as i32);
    let sh = ((h * scale).round() as i32).clamp(1, MODEL_IN_H_PX as i32);
    let mut small = Mat::default();
    imgproc::resize(
        frame,
        &mut small,
        Size::new(sw, sh),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )?;
    let mut bgr = Mat::new_rows_cols_with_default(
        MODEL_IN_H_PX as i32,
        MODEL_IN_W_PX as i32,
        core::CV_8UC3,
        Scalar::all(0.0),
    )?;
    let mut roi = bgr.roi_mut(Rect::new(0, 0, sw, sh))?;
    small.copy_to(&mut roi)?;
    Ok(SmallFrame {
        bgr,
        scale,
        frame_px: [w, h],
    })
}

/// The network, ready to run.
pub struct HandModel {
    net: Net,
    path: PathBuf,
}

/// One network of one input, of a fixed shape, ready to run on the chosen engine: the
/// hand network and the contact networks alike.
pub(crate) struct Net {
    engine: Engine,
    shape: [usize; 4],
}

impl Net {
    /// Loads the network at `path`, whose one input must have one of the shapes `wants`
    /// (checked by parsing it, whichever engine runs it). `threads`: intra-op threads
    /// (tract: its matrix products on a pool of that many).
    pub(crate) fn load(
        path: &Path,
        backend: Backend,
        threads: usize,
        wants: &[[usize; 4]],
    ) -> Result<Net, String> {
        match backend {
            Backend::Tract => {
                let (plan, shape) = load_tract_plan_of(path, wants)?;
                let pool = (threads > 1)
                    .then(|| tract_linalg::multithread::Executor::multithread(threads));
                Ok(Net {
                    engine: Engine::Tract(plan, pool),
                    shape,
                })
            }
            Backend::Ort => {
                let shape = input_shape_of(path, wants)?;
                Ok(Net {
                    engine: load_ort(path, threads)?,
                    shape,
                })
            }
        }
    }

    /// Its input's shape.
    pub(crate) fn shape(&self) -> [usize; 4] {
        self.shape
    }

    /// Runs it on one input of its shape, planar; its first output's values.
    pub(crate) fn run(&self, input: Vec<f32>) -> Result<Vec<f32>, HandsError> {
        match &self.engine {
            Engine::Tract(plan, pool) => {
                let [n, c, h, w] = self.shape;
                let t: Tensor = tract_ndarray::Array4::from_shape_vec((n, c, h, w), input)
                    .map_err(|e| HandsError::Inference(e.to_string()))?
                    .into();
                let run = || plan.run(tvec!(t.into()));
                let out = match pool {
                    Some(p) => tract_linalg::multithread::multithread_tract_scope(p.clone(), run),
                    None => run(),
                }
                .map_err(|e| HandsError::Inference(e.to_string()))?;
                let view = out[0]
                    .to_plain_array_view::<f32>()
                    .map_err(|e| HandsError::Inference(e.to_string()))?;
                Ok(view.iter().copied().collect())
            }
            #[cfg(feature = "ort")]
            Engine::Ort(session) => run_ort(session, self.shape, input),
        }
    }
}

impl HandModel {
    /// Loads and checks the model: ONNX, one input of 1 x 3 x 184 x 320.
    /// `threads`: intra-op threads (tract: its matrix products on a pool of that many).
    pub fn load(path: &Path, backend: Backend, threads: usize) -> Result<HandModel, HandsError> {
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
            threads,
            &[[1, 3, MODEL_IN_H_PX, MODEL_IN_W_PX]],
        )
        .map_err(bad)?;
        Ok(HandModel {
            net,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs the network on a reduced frame.
    pub fn run(&self, small: &SmallFrame) -> Result<Maps, HandsError> {
        let input = to_input(&small.bgr)?;
        let data = self.net.run(input)?;
        if data.len() != OUT_MAPS * OUT_H_CELLS * OUT_W_CELLS {
            return Err(HandsError::Inference(format!(
                "output has {} values, expected {}",
                data.len(),
                OUT_MAPS * OUT_H_CELLS * OUT_W_CELLS
            )));
        }
        Ok(Maps {
            data,
            scale: small.scale,
            frame_px: small.frame_px,
        })
    }
}

/// BGR u8 -> RGB f32 in [-0.5, 0.5], planar (as `train/train.py` `to_input`).
fn to_input(bgr: &Mat) -> Result<Vec<f32>, HandsError> {
    let n = MODEL_IN_W_PX * MODEL_IN_H_PX;
    let mut out = vec![0f32; 3 * n];
    planar_rgb(bgr, &mut out)?;
    Ok(out)
}

/// Writes a BGR u8 image into `out` as three planes of RGB f32 in [-0.5, 0.5] (the
/// input both networks were trained on); `out` holds 3 x the image's pixels.
pub(crate) fn planar_rgb(bgr: &Mat, out: &mut [f32]) -> Result<(), HandsError> {
    let bytes = bgr.data_bytes()?;
    let n = out.len() / 3;
    for (i, px) in bytes.chunks_exact(3).enumerate().take(n) {
        out[i] = px[2] as f32 / 255.0 - 0.5;
        out[n + i] = px[1] as f32 / 255.0 - 0.5;
        out[2 * n + i] = px[0] as f32 / 255.0 - 0.5;
    }
    Ok(())
}

/// Loads a model whose one input has one of the shapes `wants`; returns it with the shape.
fn load_tract_plan_of(
    path: &Path,
    wants: &[[usize; 4]],
) -> Result<(TractPlan, [usize; 4]), String> {
    let (model, want) = parse_checked(path, wants)?;
    let shape = |w: &[usize; 4]| format!("{} x {} x {} x {}", w[0], w[1], w[2], w[3]);
    model
        .with_input_fact(0, f32::fact(want).into())
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable())
        .map(|plan| (plan, want))
        .map_err(|e| {
            format!(
                "cannot be prepared for {}: {}",
                shape(&want),
                root_cause(&e)
            )
        })
}

/// The shape of the one input of the model at `path`, one of `wants` (checked).
fn input_shape_of(path: &Path, wants: &[[usize; 4]]) -> Result<[usize; 4], String> {
    parse_checked(path, wants).map(|(_, want)| want)
}

/// Parses the ONNX file at `path` and checks it has one input, of one of the shapes
/// `wants`; returns the model and that shape.
fn parse_checked(
    path: &Path,
    wants: &[[usize; 4]],
) -> Result<(InferenceModel, [usize; 4]), String> {
    let model = tract_onnx::onnx()
        .model_for_path(path)
        .map_err(|e| format!("not a readable ONNX model ({})", root_cause(&e)))?;
    let inputs = model.input_outlets().map_err(|e| e.to_string())?.len();
    if inputs != 1 {
        return Err(format!("expected one input, found {inputs}"));
    }
    let fact = model.input_fact(0).map_err(|e| e.to_string())?;
    let dims: Option<Vec<usize>> = fact
        .shape
        .dims()
        .map(|d| d.concretize().and_then(|t| t.as_i64().map(|v| v as usize)))
        .collect();
    let shape = |w: &[usize; 4]| format!("{} x {} x {} x {}", w[0], w[1], w[2], w[3]);
    let expected = wants.iter().map(shape).collect::<Vec<_>>().join(" or ");
    let want = match dims {
        Some(d) => match wants.iter().find(|w| d == w.as_slice()) {
            Some(w) => *w,
            None => return Err(format!("input shape is {d:?}, expected {expected}")),
        },
        None => return Err(format!("input shape is not fixed, expected {expected}")),
    };
    Ok((model, want))
}

fn root_cause(e: &anyhow::Error) -> String {
    e.chain().last().map(|c| c.to_string()).unwrap_or_default()
}

#[cfg(not(feature = "ort"))]
fn load_ort(_path: &Path, _threads: usize) -> Result<Engine, String> {
    Err("the ONNX Runtime backend is not built in (cargo build --features ort)".into())
}

/// ONNX Runtime allows one environment a process: made once, kept for every session.
#[cfg(feature = "ort")]
fn ort_environment() -> Result<&'static ort::environment::Environment, String> {
    static ENV: std::sync::OnceLock<Result<ort::environment::Environment, String>> =
        std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        // The library is loaded at run time: a missing one is told, not a panic.
        match std::env::var_os("ORT_DYLIB_PATH") {
            None => return Err("ORT_DYLIB_PATH is not set (it names libonnxruntime.so)".into()),
            Some(p) if !std::path::Path::new(&p).is_file() => {
                return Err(format!(
                    "ORT_DYLIB_PATH names {}, which is not a file",
                    std::path::Path::new(&p).display()
                ))
            }
            Some(_) => {}
        }
        std::panic::catch_unwind(|| ort::init().build().map_err(|e| e.to_string()))
            .unwrap_or_else(|_| Err("the library named by ORT_DYLIB_PATH cannot be loaded".into()))
    })
    .as_ref()
    .map_err(|e| format!("ONNX Runtime cannot start: {e}"))
}

#[cfg(feature = "ort")]
fn load_ort(path: &Path, threads: usize) -> Result<Engine, String> {
    use ort::session::{builder::GraphOptimizationLevel, Session};
    let env = ort_environment()?;
    let fail = |e: String| format!("ONNX Runtime cannot load it: {e}");
    let mut b = Session::builder(env)
        .map_err(|e| fail(e.to_string()))?
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .map_err(|e| fail(e.to_string()))?
        .with_intra_threads(threads.max(1))
        .map_err(|e| fail(e.to_string()))?;
    let s = b.commit_from_file(path).map_err(|e| fail(e.to_string()))?;
    Ok(Engine::Ort(std::sync::Mutex::new(s)))
}

#[cfg(feature = "ort")]
fn run_ort(
    session: &std::sync::Mutex<ort::session::Session>,
    [n, c, h, w]: [usize; 4],
    input: Vec<f32>,
) -> Result<Vec<f32>, HandsError> {
    let err = |e: String| HandsError::Inference(e);
    let arr =
        ndarray::Array4::from_shape_vec((n, c, h, w), input).map_err(|e| err(e.to_string()))?;
    let mut s = session.lock().map_err(|e| err(e.to_string()))?;
    let t = ort::value::TensorRef::from_array_view(&arr).map_err(|e| err(e.to_string()))?;
    let out = s.run(ort::inputs![t]).map_err(|e| err(e.to_string()))?;
    let (_, data) = out[0]
        .try_extract_tensor::<f32>()
        .map_err(|e| err(e.to_string()))?;
    Ok(data.to_vec())
}
