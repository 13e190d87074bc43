//! Drawing a story through the camera. Everything is drawn on a top-down canvas of the
//! tatami plane (hands at height are drawn where their camera rays meet the plane), and a
//! precomputed remap turns the canvas into the distorted camera image.
//!
//! The tatami and the resting cards are drawn once per change of the resting set; each
//! frame only redraws the moving things inside their bounding box, with sub-frame samples
//! over the exposure for motion blur. Light, flicker and sensor noise are applied last.
//!
//! The files: `hands` (hands and their shadows), `surfaces` (the tatami and the cards' faces).

mod hands;
mod surfaces;

use self::hands::{draw_hand, draw_shadows, shape_points};
use self::surfaces::{card_texture, draw_tatami, CardTexture};

use crate::rules::geometry::Pt;
use crate::sim::body::{project_to_tatami, shadow_on_tatami, HandShape};
use crate::sim::camera::Camera;
use crate::sim::look::Look;
use crate::sim::story::{Pose, Story};
use crate::util::apply_homography;
use opencv::core::{
    self, Mat, Point, Point2f, Rect, Scalar, Vector, CV_16SC2, CV_32F, CV_32FC1, CV_32FC3, CV_8UC3,
};
use opencv::imgproc;
use opencv::prelude::*;
use rand::Rng;
use rand_chacha::ChaCha20Rng;

/// Subpixel precision of polygon drawing (OpenCV `shift`).
const SHIFT: i32 = 4;
const SHIFT_SCALE: f64 = 16.0;
/// The contact shadow a card lying on tatami casts in diffuse light: the tatami within
/// this distance of the card's edge is darkened, fading out linearly.
const CARD_SHADE_MM: f64 = 0.8;
/// Depth of that shadow at the card's edge, as a fraction of the look's shadow strength.
const CARD_SHADE_FRACTION: f64 = 0.6;
/// Canvas pixels per image pixel (finer than the image so the remap does not alias).
const CANVAS_OVERSAMPLE: f64 = 1.25;
/// Margin around the field of view drawn on the canvas.
const CANVAS_MARGIN_MM: f64 = 40.0;
/// At most this many sub-frame samples for motion blur.
pub const MAX_BLUR_SAMPLES: usize = 8;
/// Add a blur sample for every this many pixels of motion during the exposure.
const BLUR_PX_PER_SAMPLE: f64 = 1.5;
/// Noise patterns kept and cycled through.
const NOISE_PATTERNS: usize = 6;

/// The tatami-plane canvas: field millimetres to canvas pixels.
#[derive(Debug, Clone, Copy)]
pub struct CanvasFrame {
    pub x0_mm: f64,
    pub y1_mm: f64,
    pub mm_per_px: f64,
    pub w: i32,
    pub h: i32,
}

impl CanvasFrame {
    pub fn px(&self, p: Pt) -> (f64, f64) {
        (
            (p.x_mm - self.x0_mm) / self.mm_per_px,
            (self.y1_mm - p.y_mm) / self.mm_per_px,
        )
    }
    fn pt(&self, p: Pt) -> Point {
        let (u, v) = self.px(p);
        Point::new(
            (u * SHIFT_SCALE).round() as i32,
            (v * SHIFT_SCALE).round() as i32,
        )
    }
}

fn bgr(c: [f64; 3]) -> Scalar {
    Scalar::new(c[0], c[1], c[2], 0.0)
}

/// Renders frames of one story.
pub struct Renderer<'a> {
    story: &'a Story,
    cam: Camera,
    look: Look,
    pub canvas: CanvasFrame,
    tatami: Mat,
    static_canvas: Mat,
    work: Mat,
    /// Output pixel -> canvas pixel (float maps, for the shaken camera).
    map_x: Mat,
    map_y: Mat,
    /// The same, fixed-point (fast remap).
    map_fast1: Mat,
    map_fast2: Mat,
    gain: Mat,
    base: Mat,
    frame: Mat,
    textures: Vec<CardTexture>,
    static_key: Vec<i64>,
    noise: Mat,
    noise_offset: f64,
    last_dirty: Option<Rect>,
    last_dynamic_key: Vec<i64>,
    /// The lit frame before noise, kept to reuse its buffer.
    lit: Mat,
    pub fps: f64,
    pub static_rebuilds: usize,
    rng: ChaCha20Rng,
}

fn mat_zeros(rows: i32, cols: i32, typ: i32) -> opencv::Result<Mat> {
    Mat::new_rows_cols_with_default(rows, cols, typ, Scalar::all(0.0))
}

impl<'a> Renderer<'a> {
    pub fn new(
        story: &'a Story,
        cam: Camera,
        look: Look,
        fps: f64,
        rng: ChaCha20Rng,
    ) -> opencv::Result<Self> {
        let (w, h) = (cam.width_px as i32, cam.height_px as i32);
        // Undistorted position of every output pixel, then the field point it sees.
        let mut px: Vector<Point2f> = Vector::with_capacity((w * h) as usize);
        for v in 0..h {
            for u in 0..w {
                px.push(Point2f::new(u as f32, v as f32));
            }
        }
        let mut und: Vector<Point2f> = Vector::new();
        let k = cam.k_mat()?;
        let d = cam.dist_mat()?;
        opencv::calib3d::undistort_points(&px, &mut und, &k, &d, &core::no_array(), &k)?;
        let hinv = cam.image_to_field();
        let field: Vec<[f64; 2]> = und
            .iter()
            .map(|p| apply_homography(&hinv, [p.x as f64, p.y as f64]))
            .collect();
        let (mut x0, mut x1, mut y0, mut y1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for &[x, y] in &field {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        x0 -= CANVAS_MARGIN_MM;
        x1 += CANVAS_MARGIN_MM;
        y0 -= CANVAS_MARGIN_MM;
        y1 += CANVAS_MARGIN_MM;
        let mm_per_px = (x1 - x0) / (w as f64 * CANVAS_OVERSAMPLE);
        let canvas = CanvasFrame {
            x0_mm: x0,
            y1_mm: y1,
            mm_per_px,
            w: ((x1 - x0) / mm_per_px).ceil() as i32 + 1,
            h: ((y1 - y0) / mm_per_px).ceil() as i32 + 1,
        };
        let mut map_x = mat_zeros(h, w, CV_32FC1)?;
        let mut map_y = mat_zeros(h, w, CV_32FC1)?;
        {
            let mx = map_x.data_typed_mut::<f32>()?;
            for (i, &[x, _]) in field.iter().enumerate() {
                mx[i] = ((x - canvas.x0_mm) / mm_per_px) as f32;
            }
            let my = map_y.data_typed_mut::<f32>()?;
            for (i, &[_, y]) in field.iter().enumerate() {
                my[i] = ((canvas.y1_mm - y) / mm_per_px) as f32;
            }
        }
        let mut map_fast1 = Mat::default();
        let mut map_fast2 = Mat::default();
        imgproc::convert_maps(
            &map_x,
            &map_y,
            &mut map_fast1,
            &mut map_fast2,
            CV_16SC2,
            false,
        )?;

        let mut rng = rng;
        let tatami = draw_tatami(&canvas, &look, story, &mut rng)?;
        // Light: colour temperature, brightness and vignetting, as gain * 128 in 8 bits.
        let mut gain = mat_zeros(h, w, CV_8UC3)?;
        {
            let g = gain.data_bytes_mut()?;
            let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
            let r2max = cx * cx + cy * cy;
            for v in 0..h {
                for u in 0..w {
                    let r2 = ((u as f64 - cx).powi(2) + (v as f64 - cy).powi(2)) / r2max;
                    let vig = 1.0 - look.vignette * r2;
                    let i = ((v * w + u) * 3) as usize;
                    for c in 0..3 {
                        g[i + c] = (look.light_gain_bgr[c] * vig * 128.0)
                            .round()
                            .clamp(0.0, 255.0) as u8;
                    }
                }
            }
        }
        // Sensor noise patterns, stored with an offset so one saturating add applies them.
        let noise_offset = (3.0 * look.noise_sigma).ceil();
        let mut noise = mat_zeros(h * NOISE_PATTERNS as i32, w + 64, CV_8UC3)?;
        {
            let nb = noise.data_bytes_mut()?;
            for px in nb.iter_mut() {
                // Sum of uniforms: close enough to Gaussian sensor noise.
                let g: f64 =
                    (0..4).map(|_| rng.gen_range(-1.0..1.0)).sum::<f64>() * (3.0f64 / 4.0).sqrt();
                *px = (g * look.noise_sigma + noise_offset)
                    .round()
                    .clamp(0.0, 255.0) as u8;
            }
        }
        let textures = story
            .cards
            .iter()
            .map(|c| card_texture(c.poem, &look, mm_per_px, story, &mut rng))
            .collect::<opencv::Result<Vec<_>>>()?;
        let static_canvas = tatami.try_clone()?;
        let work = tatami.try_clone()?;
        Ok(Renderer {
            story,
            cam,
            look,
            canvas,
            tatami,
            static_canvas,
            work,
            map_x,
            map_y,
            map_fast1,
            map_fast2,
            gain,
            base: mat_zeros(h, w, CV_8UC3)?,
            frame: mat_zeros(h, w, CV_8UC3)?,
            textures,
            static_key: vec![i64::MIN],
            noise,
            noise_offset,
            last_dirty: None,
            last_dynamic_key: Vec::new(),
            lit: Mat::default(),
            fps,
            static_rebuilds: 0,
            rng,
        })
    }

    pub fn exposure_s(&self) -> f64 {
        self.look.exposure_frac / self.fps
    }

    /// Sample times over the exposure of frame `i` (centred on its capture time).
    fn samples(&self, t: f64, n: usize) -> Vec<f64> {
        let e = self.exposure_s();
        (0..n)
            .map(|k| t + e * ((k as f64 + 0.5) / n as f64 - 0.5))
            .collect()
    }

    /// Cards that do not move during the exposure around t.
    fn resting(&self, t: f64) -> Vec<usize> {
        let e = self.exposure_s();
        (0..self.story.cards.len())
            .filter(|&i| self.story.cards[i].still(t - e, t + e, &self.story.hands))
            .collect()
    }

    /// Lays card `idx` at `pose`: its face covers exactly the card's 52 x 73 mm outline,
    /// anti-aliased by its coverage, over a soft contact shadow just outside it.
    fn draw_card(&self, img: &mut Mat, idx: usize, pose: Pose) -> opencv::Result<()> {
        let c = &self.canvas;
        let tex = &self.textures[idx];
        let g = &self.story.geom;
        let (w, h) = (g.size.card_w_mm, g.size.card_h_mm);
        let (sn, cs) = pose.angle_deg.to_radians().sin_cos();
        let s = c.mm_per_px;
        let corners = g.card_corners(pose.x_mm, pose.y_mm, pose.angle_deg);
        let (mut u0, mut v0, mut u1, mut v1) = (
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        );
        for p in corners {
            let (u, v) = c.px(p);
            u0 = u0.min(u);
            v0 = v0.min(v);
            u1 = u1.max(u);
            v1 = v1.max(v);
        }
        let margin = (CARD_SHADE_MM / s).ceil() as i32 + 3;
        let roi = clip(
            Rect::new(
                u0.floor() as i32 - margin,
                v0.floor() as i32 - margin,
                (u1 - u0).ceil() as i32 + 2 * margin + 1,
                (v1 - v0).ceil() as i32 + 2 * margin + 1,
            ),
            img.cols(),
            img.rows(),
        );
        let Some(roi) = roi else { return Ok(()) };
        // Texel (j, k) of the padded texture covers card millimetres
        // [(j - pad) / tsx, (j - pad + 1) / tsx] across: its centre is half a texel in.
        let (tsx, tsy) = (tex.w as f64 / w, tex.h as f64 / h);
        let off = 0.5 - tex.pad as f64;
        let (ax, bx) = (cs / (tsx * s), sn / (tsy * s));
        let (ay, by) = (-sn / (tsx * s), cs / (tsy * s));
        let tx = (pose.x_mm - c.x0_mm - cs * w / 2.0 - sn * h / 2.0) / s;
        let ty = (c.y1_mm - pose.y_mm + sn * w / 2.0 - cs * h / 2.0) / s;
        let m = Mat::from_slice_2d(&[
            [ax, bx, tx + (ax + bx) * off - roi.x as f64],
            [ay, by, ty + (ay + by) * off - roi.y as f64],
        ])?;
        let mut colour = Mat::default();
        let mut mask = Mat::default();
        for (src, dst) in [(&tex.bgr, &mut colour), (&tex.mask, &mut mask)] {
            imgproc::warp_affine(
                src,
                dst,
                &m,
                roi.size(),
                imgproc::INTER_LINEAR,
                core::BORDER_CONSTANT,
                Scalar::all(0.0),
            )?;
        }
        let shade = CARD_SHADE_FRACTION * self.look.shadow_strength / 255.0;
        let mut dst = Mat::roi_mut(img, roi)?;
        for r in 0..roi.height {
            let col = colour.at_row::<core::Vec3b>(r)?;
            let msk = mask.at_row::<core::Vec2b>(r)?;
            let out = dst.at_row_mut::<core::Vec3b>(r)?;
            for ((o, cpx), mpx) in out.iter_mut().zip(col).zip(msk) {
                let (cover, under) = (mpx[0] as f64 / 255.0, mpx[1] as f64);
                if cover == 0.0 && under == 0.0 {
                    continue;
                }
                let keep = (1.0 - shade * under) * (1.0 - cover);
                for k in 0..3 {
                    o[k] = (o[k] as f64 * keep + cpx[k] as f64).round().min(255.0) as u8;
                }
            }
        }
        Ok(())
    }

    /// Shadows, then hands, lower hands first so a raised arm passes over the other.
    fn draw_hands(
        &self,
        img: &mut Mat,
        roi: Rect,
        shapes: &[(usize, HandShape)],
        cam: [f64; 3],
    ) -> opencv::Result<()> {
        if shapes.is_empty() {
            return Ok(());
        }
        let story = self.story;
        let cf = self.canvas;
        let mut order: Vec<&(usize, HandShape)> = shapes.iter().collect();
        order.sort_by(|a, b| {
            a.1.keypoints
                .middle
                .z_mm
                .total_cmp(&b.1.keypoints.middle.z_mm)
        });
        let mut r = Mat::roi_mut(img, roi)?;
        let all: Vec<&HandShape> = order.iter().map(|(_, s)| s).collect();
        draw_shadows(&mut r, &cf, roi, &all, &self.look)?;
        for (hi, s) in &order {
            let look = &story.looks[story.hands[*hi].player.index()];
            draw_hand(&mut r, &cf, roi, s, look, cam)?;
        }
        Ok(())
    }

    fn rebuild_static(
        &mut self,
        resting: &[usize],
        still_hands: &[usize],
        t: f64,
    ) -> opencv::Result<()> {
        self.tatami.copy_to(&mut self.static_canvas)?;
        let mut img = std::mem::take(&mut self.static_canvas);
        for &i in resting {
            let p = self.story.cards[i].pose(t, &self.story.hands);
            self.draw_card(&mut img, i, p)?;
        }
        // Hands that rest during the exposure belong to the still layer too.
        let story = self.story;
        let shapes: Vec<(usize, HandShape)> = still_hands
            .iter()
            .map(|&hi| {
                (
                    hi,
                    story.hands[hi].shape(t, &story.looks[story.hands[hi].player.index()]),
                )
            })
            .collect();
        let full = Rect::new(0, 0, img.cols(), img.rows());
        self.draw_hands(&mut img, full, &shapes, story.camera_mm)?;
        self.static_canvas = img;
        self.static_canvas.copy_to(&mut self.work)?;
        imgproc::remap(
            &self.static_canvas,
            &mut self.base,
            &self.map_fast1,
            &self.map_fast2,
            imgproc::INTER_LINEAR,
            core::BORDER_REPLICATE,
            Scalar::all(0.0),
        )?;
        let mut lit = Mat::default();
        core::multiply(&self.base, &self.gain, &mut lit, 1.0 / 128.0, -1)?;
        self.base = lit;
        self.base.copy_to(&mut self.frame)?;
        self.static_rebuilds += 1;
        self.last_dirty = None;
        self.last_dynamic_key.clear();
        Ok(())
    }

    /// Renders frame `i` into a BGR image (lit, flickering, noisy).
    pub fn render(&mut self, i: u64, out: &mut Mat) -> opencv::Result<()> {
        let t = i as f64 / self.fps;
        let story = self.story;
        let resting = self.resting(t);
        let e = self.exposure_s();
        let still_hands: Vec<usize> = (0..story.hands.len())
            .filter(|&hi| story.hands[hi].still(t - e, t + e))
            .collect();
        let mut key: Vec<i64> = Vec::new();
        for &ci in &resting {
            let p = story.cards[ci].pose(t, &story.hands);
            key.extend([
                story.cards[ci].poem as i64,
                (p.x_mm * 1e4) as i64,
                (p.y_mm * 1e4) as i64,
                (p.angle_deg * 1e4) as i64,
            ]);
        }
        key.push(-1);
        for &hi in &still_hands {
            let (p, z) = story.hands[hi].at(t);
            key.extend([
                hi as i64,
                (p.x_mm * 1e4) as i64,
                (p.y_mm * 1e4) as i64,
                (z * 1e4) as i64,
            ]);
        }
        if key != self.static_key {
            self.rebuild_static(&resting, &still_hands, t)?;
            self.static_key = key;
        }
        let moving_hands: Vec<usize> = (0..story.hands.len())
            .filter(|hi| !still_hands.contains(hi))
            .collect();
        let moving: Vec<usize> = (0..story.cards.len())
            .filter(|i| !resting.contains(i))
            .collect();
        let shake = self.look.shake_at(t);
        let shaken = self.look.shake_mm > 0.0;
        // Blur samples: enough that the fastest point moves ~1.5 px between samples.
        let mut speed_px: f64 = 0.0;
        for h in moving_hands.iter().map(|&hi| &story.hands[hi]) {
            let (a, za) = h.at(t - e / 2.0);
            let (b, zb) = h.at(t + e / 2.0);
            let d =
                ((a.x_mm - b.x_mm).powi(2) + (a.y_mm - b.y_mm).powi(2) + (za - zb).powi(2)).sqrt();
            speed_px = speed_px.max(d / self.canvas.mm_per_px);
        }
        for &ci in &moving {
            let a = story.cards[ci].pose(t - e / 2.0, &story.hands);
            let b = story.cards[ci].pose(t + e / 2.0, &story.hands);
            let d = ((a.x_mm - b.x_mm).powi(2) + (a.y_mm - b.y_mm).powi(2)).sqrt()
                + (a.angle_deg - b.angle_deg).abs().to_radians() * 45.0;
            speed_px = speed_px.max(d / self.canvas.mm_per_px);
        }
        let n = ((speed_px / BLUR_PX_PER_SAMPLE).ceil() as usize).clamp(1, MAX_BLUR_SAMPLES);
        let times = self.samples(t, n);
        // Same dynamic content as the last frame: keep the composited image.
        let mut dyn_key: Vec<i64> = vec![n as i64];
        for &ts in &times {
            for h in moving_hands.iter().map(|&hi| &story.hands[hi]) {
                let (p, z) = h.at(ts);
                dyn_key.extend([
                    (p.x_mm * 1e3) as i64,
                    (p.y_mm * 1e3) as i64,
                    (z * 1e3) as i64,
                ]);
            }
            for &ci in &moving {
                let p = story.cards[ci].pose(ts, &story.hands);
                dyn_key.extend([
                    ci as i64,
                    (p.x_mm * 1e3) as i64,
                    (p.y_mm * 1e3) as i64,
                    (p.angle_deg * 1e3) as i64,
                ]);
            }
        }
        if shaken || dyn_key != self.last_dynamic_key {
            self.compose(&times, &moving, &moving_hands, shake)?;
            self.last_dynamic_key = dyn_key;
        }
        // Light (gain map with the frame's flicker), then sensor noise.
        let fl = self.look.flicker_gain(t, e);
        self.frame
            .convert_to(&mut self.lit, CV_8UC3, fl, -self.noise_offset)?;
        let k = self.rng.gen_range(0..NOISE_PATTERNS as i32);
        let off = self.rng.gen_range(0..64);
        let r = Rect::new(off, k * out.rows(), out.cols(), out.rows());
        let noise = Mat::roi(&self.noise, r)?;
        core::add(&self.lit, &noise, out, &core::no_array(), -1)?;
        Ok(())
    }

    /// Draws the moving things of one frame into `self.frame`.
    fn compose(
        &mut self,
        times: &[f64],
        moving: &[usize],
        moving_hands: &[usize],
        shake: (f64, f64),
    ) -> opencv::Result<()> {
        let story = self.story;
        let cf = self.canvas;
        // Canvas region touched by anything dynamic.
        let mut bb = BBox::default();
        let mut shapes: Vec<Vec<(usize, HandShape)>> = Vec::new();
        let cam = [
            story.camera_mm[0] + shake.0,
            story.camera_mm[1] + shake.1,
            story.camera_mm[2],
        ];
        for &ts in times {
            let mut v = Vec::new();
            for &hi in moving_hands {
                let h = &story.hands[hi];
                let s = h.shape(ts, &story.looks[h.player.index()]);
                for p in shape_points(&s) {
                    bb.add(cf.px(project_to_tatami(cam, p)));
                    bb.add(cf.px(shadow_on_tatami(self.look.light_dir, p)));
                }
                v.push((hi, s));
            }
            for &ci in moving {
                for p in story.cards[ci].corners(ts, &story.hands, &story.geom) {
                    bb.add(cf.px(p));
                }
            }
            shapes.push(v);
        }
        let pad = 6;
        let roi = clip(bb.rect(pad), cf.w, cf.h).unwrap_or(Rect::new(0, 0, 1, 1));
        let n = times.len();
        let mut acc = Mat::default();
        for (k, &ts) in times.iter().enumerate() {
            {
                let src = Mat::roi(&self.static_canvas, roi)?;
                let mut dst = Mat::roi_mut(&mut self.work, roi)?;
                src.copy_to(&mut dst)?;
            }
            let mut work = std::mem::take(&mut self.work);
            for &ci in moving {
                let p = story.cards[ci].pose(ts, &story.hands);
                self.draw_card(&mut work, ci, p)?;
            }
            self.draw_hands(&mut work, roi, &shapes[k], cam)?;
            self.work = work;
            if n > 1 {
                let r = Mat::roi(&self.work, roi)?;
                if k == 0 {
                    r.convert_to(&mut acc, CV_32FC3, 1.0, 0.0)?;
                } else {
                    imgproc::accumulate(&r, &mut acc, &core::no_array())?;
                }
            }
        }
        if n > 1 {
            let mut dst = Mat::roi_mut(&mut self.work, roi)?;
            acc.convert_to(&mut dst, CV_8UC3, 1.0 / n as f64, 0.0)?;
        }
        if self.look.shake_mm > 0.0 {
            // The camera moved by `shake`: the pixel that saw field point p now sees p + shake.
            let s = cf.mm_per_px;
            let mut mx = Mat::default();
            let mut my = Mat::default();
            self.map_x.convert_to(&mut mx, CV_32F, 1.0, shake.0 / s)?;
            self.map_y.convert_to(&mut my, CV_32F, 1.0, -shake.1 / s)?;
            imgproc::remap(
                &self.work,
                &mut self.frame,
                &mx,
                &my,
                imgproc::INTER_LINEAR,
                core::BORDER_REPLICATE,
                Scalar::all(0.0),
            )?;
            let mut lit = Mat::default();
            core::multiply(&self.frame, &self.gain, &mut lit, 1.0 / 128.0, -1)?;
            self.frame = lit;
        } else {
            // Restore what the last frame drew, then remap the new region.
            if let Some(d) = self.last_dirty.take() {
                let src = Mat::roi(&self.base, d)?;
                let mut dst = Mat::roi_mut(&mut self.frame, d)?;
                src.copy_to(&mut dst)?;
            }
            if let Some(out_roi) = self.output_rect(roi)? {
                let m1 = Mat::roi(&self.map_fast1, out_roi)?;
                let m2 = Mat::roi(&self.map_fast2, out_roi)?;
                let mut dst = Mat::roi_mut(&mut self.frame, out_roi)?;
                imgproc::remap(
                    &self.work,
                    &mut dst,
                    &m1,
                    &m2,
                    imgproc::INTER_LINEAR,
                    core::BORDER_REPLICATE,
                    Scalar::all(0.0),
                )?;
                let g = Mat::roi(&self.gain, out_roi)?;
                let mut lit = Mat::default();
                core::multiply(&dst, &g, &mut lit, 1.0 / 128.0, -1)?;
                lit.copy_to(&mut dst)?;
                self.last_dirty = Some(out_roi);
            }
        }
        {
            let src = Mat::roi(&self.static_canvas, roi)?;
            let mut dst = Mat::roi_mut(&mut self.work, roi)?;
            src.copy_to(&mut dst)?;
        }
        Ok(())
    }

    /// The output pixels that see a canvas rectangle.
    fn output_rect(&self, roi: Rect) -> opencv::Result<Option<Rect>> {
        let cf = self.canvas;
        let mut pts = Vec::new();
        for i in 0..=4 {
            let f = i as f64 / 4.0;
            let u = roi.x as f64 + f * roi.width as f64;
            let v = roi.y as f64 + f * roi.height as f64;
            for (a, b) in [
                (u, roi.y as f64),
                (u, (roi.y + roi.height) as f64),
                (roi.x as f64, v),
                ((roi.x + roi.width) as f64, v),
            ] {
                pts.push((cf.x0_mm + a * cf.mm_per_px, cf.y1_mm - b * cf.mm_per_px));
            }
        }
        let px = self.cam.project_distorted(&pts)?;
        let mut bb = BBox::default();
        for p in px {
            bb.add(p);
        }
        Ok(clip(
            bb.rect(3),
            self.cam.width_px as i32,
            self.cam.height_px as i32,
        ))
    }
}

#[derive(Debug, Clone, Copy)]
struct BBox {
    u0: f64,
    v0: f64,
    u1: f64,
    v1: f64,
}

impl Default for BBox {
    fn default() -> Self {
        BBox {
            u0: f64::INFINITY,
            v0: f64::INFINITY,
            u1: f64::NEG_INFINITY,
            v1: f64::NEG_INFINITY,
        }
    }
}

impl BBox {
    fn add(&mut self, (u, v): (f64, f64)) {
        self.u0 = self.u0.min(u);
        self.v0 = self.v0.min(v);
        self.u1 = self.u1.max(u);
        self.v1 = self.v1.max(v);
    }
    fn rect(&self, pad: i32) -> Rect {
        if !self.u0.is_finite() {
            return Rect::new(0, 0, 0, 0);
        }
        let (u0, v0) = (
            self.u0.max(-1e6).floor() as i32 - pad,
            self.v0.max(-1e6).floor() as i32 - pad,
        );
        let (u1, v1) = (
            self.u1.min(1e6).ceil() as i32 + pad,
            self.v1.min(1e6).ceil() as i32 + pad,
        );
        Rect::new(u0, v0, u1 - u0, v1 - v0)
    }
}

fn clip(r: Rect, w: i32, h: i32) -> Option<Rect> {
    let x0 = r.x.max(0);
    let y0 = r.y.max(0);
    let x1 = (r.x + r.width).min(w);
    let y1 = (r.y + r.height).min(h);
    if x1 > x0 && y1 > y0 {
        Some(Rect::new(x0, y0, x1 - x0, y1 - y0))
    } else {
        None
    }
}
