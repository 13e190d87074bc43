//! Hands drawn on the canvas: each part (sleeve, forearm, palm, fingers) projected from
//! its height onto the tatami plane along the camera's rays (`draw_hand`), and the
//! shadows the hands cast on the tatami and the cards, softened with their height
//! (`draw_shadows`).

use super::{bgr, mat_zeros, CanvasFrame, SHIFT, SHIFT_SCALE};
use crate::rules::geometry::Pt;
use crate::sim::body::{project_to_tatami, shadow_on_tatami, HandShape, P3};
use crate::sim::look::Look;
use opencv::core::{
    Mat, Point, Rect, Scalar, Size, ToInputArray, ToInputOutputArray, ToOutputArray, Vector,
    CV_8UC1,
};
use opencv::prelude::*;
use opencv::{core, imgproc};

/// Pixels of blur per step of the reduced image in `soft_blur`.
const SOFT_BLUR_SIGMA_PER_STEP: f64 = 2.0;

pub(super) fn shape_points(s: &HandShape) -> Vec<P3> {
    let mut v: Vec<P3> = s.outline_points();
    v.extend(s.forearm.iter().copied());
    v.extend(s.sleeve.iter().copied());
    v
}

fn poly_pts(cf: &CanvasFrame, roi: Rect, pts: impl IntoIterator<Item = Pt>) -> Vector<Point> {
    pts.into_iter()
        .map(|p| {
            let q = cf.pt(p);
            Point::new(
                q.x - roi.x * SHIFT_SCALE as i32,
                q.y - roi.y * SHIFT_SCALE as i32,
            )
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn draw_parts<I: ToInputOutputArray>(
    img: &mut I,
    cf: &CanvasFrame,
    roi: Rect,
    s: &HandShape,
    to_plane: &dyn Fn(P3) -> Pt,
    skin: Scalar,
    sleeve: Scalar,
    dark: Scalar,
    with_outline: bool,
) -> opencv::Result<()> {
    let px = |p: P3| {
        let q = cf.pt(to_plane(p));
        Point::new(
            q.x - roi.x * SHIFT_SCALE as i32,
            q.y - roi.y * SHIFT_SCALE as i32,
        )
    };
    let scale = 1.0 / cf.mm_per_px;
    imgproc::fill_convex_poly(
        img,
        &poly_pts(cf, roi, s.forearm.iter().map(|p| to_plane(*p))),
        skin,
        imgproc::LINE_AA,
        SHIFT,
    )?;
    imgproc::fill_convex_poly(
        img,
        &poly_pts(cf, roi, s.sleeve.iter().map(|p| to_plane(*p))),
        sleeve,
        imgproc::LINE_AA,
        SHIFT,
    )?;
    let palm = poly_pts(cf, roi, s.palm.iter().map(|p| to_plane(*p)));
    if with_outline {
        imgproc::polylines(
            img,
            &Vector::<Vector<Point>>::from(vec![palm.clone()]),
            true,
            dark,
            (2.0 * scale).max(1.0) as i32,
            imgproc::LINE_AA,
            SHIFT,
        )?;
    }
    imgproc::fill_convex_poly(img, &palm, skin, imgproc::LINE_AA, SHIFT)?;
    for f in &s.fingers {
        let w = (f.width_mm * scale).max(1.0);
        if with_outline {
            imgproc::line(
                img,
                px(f.base),
                px(f.tip),
                dark,
                (w + 2.0).round() as i32,
                imgproc::LINE_AA,
                SHIFT,
            )?;
        }
        imgproc::line(
            img,
            px(f.base),
            px(f.tip),
            skin,
            w.round() as i32,
            imgproc::LINE_AA,
            SHIFT,
        )?;
    }
    Ok(())
}

/// A hand in its look's skin and sleeve, each point projected from its height along the
/// ray from the camera at `cam` (field mm) onto the tatami plane.
pub(super) fn draw_hand<I: ToInputOutputArray>(
    img: &mut I,
    cf: &CanvasFrame,
    roi: Rect,
    s: &HandShape,
    look: &crate::sim::body::Appearance,
    cam: [f64; 3],
) -> opencv::Result<()> {
    let skin = bgr(look.skin_bgr);
    let dark = bgr(look.skin_bgr.map(|c| c * 0.72));
    let sleeve = bgr(look.sleeve_bgr);
    draw_parts(
        img,
        cf,
        roi,
        s,
        &|p| project_to_tatami(cam, p),
        skin,
        sleeve,
        dark,
        true,
    )
}

/// The hands' shadow along the look's light, darkening what is drawn beneath by the
/// look's shadow strength, softer the higher the hands are.
pub(super) fn draw_shadows<I: ToInputOutputArray + ToInputArray + ToOutputArray>(
    img: &mut I,
    cf: &CanvasFrame,
    roi: Rect,
    shapes: &[&HandShape],
    look: &Look,
) -> opencv::Result<()> {
    let mut mask = mat_zeros(roi.height, roi.width, CV_8UC1)?;
    let white = Scalar::all(255.0);
    let light = look.light_dir;
    let mut z_sum = 0.0;
    for s in shapes {
        draw_parts(
            &mut mask,
            cf,
            roi,
            s,
            &|p| shadow_on_tatami(light, p),
            white,
            white,
            white,
            false,
        )?;
        z_sum += s.keypoints.middle.z_mm;
    }
    // A soft shadow, softer the higher the hands.
    let sigma = (2.0 + 0.06 * z_sum / shapes.len().max(1) as f64) / cf.mm_per_px;
    let soft = soft_blur(&mask, sigma.max(0.5))?;
    let mut factor = Mat::default();
    soft.convert_to(&mut factor, CV_8UC1, -look.shadow_strength, 255.0)?;
    let mut f3 = Mat::default();
    imgproc::cvt_color(&factor, &mut f3, imgproc::COLOR_GRAY2BGR, 0)?;
    let mut out = Mat::default();
    core::multiply(img, &f3, &mut out, 1.0 / 255.0, -1)?;
    out.copy_to(img)?;
    Ok(())
}

/// A wide Gaussian blur of a mask, done on the mask reduced by up to 8x (area average) and
/// brought back bilinearly: a shadow this soft has nothing finer than the reduced grid,
/// and the blur costs a fraction of a full-resolution one.
fn soft_blur(mask: &Mat, sigma: f64) -> opencv::Result<Mat> {
    let step = (sigma / SOFT_BLUR_SIGMA_PER_STEP).floor().clamp(1.0, 8.0) as i32;
    let mut soft = Mat::default();
    if step == 1 {
        imgproc::gaussian_blur(
            mask,
            &mut soft,
            Size::new(0, 0),
            sigma,
            0.0,
            core::BORDER_DEFAULT,
        )?;
        return Ok(soft);
    }
    let small_size = Size::new(
        (mask.cols() + step - 1) / step,
        (mask.rows() + step - 1) / step,
    );
    let mut small = Mat::default();
    imgproc::resize(mask, &mut small, small_size, 0.0, 0.0, imgproc::INTER_AREA)?;
    let mut blurred = Mat::default();
    imgproc::gaussian_blur(
        &small,
        &mut blurred,
        Size::new(0, 0),
        sigma / step as f64,
        0.0,
        core::BORDER_DEFAULT,
    )?;
    imgproc::resize(
        &blurred,
        &mut soft,
        mask.size()?,
        0.0,
        0.0,
        imgproc::INTER_LINEAR,
    )?;
    Ok(soft)
}
