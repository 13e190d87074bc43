//! A synthetic layout frame for testing the card detector before (and besides) the
//! simulator: cream cards with a coloured border and kana in columns, on a textured
//! mat, seen through a slightly tilted camera, with uneven light and noise. Deliberately
//! unlike the simulator's art (its own colours, column split, margins).

use karuta_referee::rules::geometry::{rotated_rect, FieldGeometry};
use karuta_referee::rules::model::Player;
use karuta_referee::rules::poems;
use karuta_referee::util::{apply_homography, matrix_from_rows};
use nalgebra::Matrix3;
use opencv::core::{self, Mat, Point, Point2f, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{freetype, imgproc};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub struct SynthCard {
    pub poem: u8,
    pub owner: Player,
    pub row: u8,
    pub x_mm: f64,
    pub y_mm: f64,
    pub angle_deg: f64,
    /// Image corners of the card outline, field-frame order of `rotated_rect`.
    pub corners_px: [[f64; 2]; 4],
}

pub struct SynthFrame {
    pub bgr: Mat,
    pub cards: Vec<SynthCard>,
    /// Field mm -> image px.
    pub field_to_image: Matrix3<f64>,
}

const CANVAS_PX_PER_MM: f64 = 4.0;

fn card_canvas(
    ft: &mut core::Ptr<freetype::FreeType2>,
    text: &str,
    border: Scalar,
    face: Scalar,
    border_mm: f64,
) -> Mat {
    let (w, h) = (
        (52.0 * CANVAS_PX_PER_MM) as i32,
        (73.0 * CANVAS_PX_PER_MM) as i32,
    );
    let mut m = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, border).unwrap();
    let b = (border_mm * CANVAS_PX_PER_MM) as i32;
    imgproc::rectangle(
        &mut m,
        core::Rect::new(b, b, w - 2 * b, h - 2 * b),
        face,
        -1,
        imgproc::LINE_8,
        0,
    )
    .unwrap();
    // Columns of up to six kana, right to left, glyphs a little smaller than the cell.
    let chars: Vec<char> = text.chars().collect();
    let per_col = 6usize;
    let ncols = chars.len().div_ceil(per_col);
    let inner_w = (w - 2 * b) as f64 * 0.86;
    let inner_h = (h - 2 * b) as f64 * 0.88;
    let x0 = b as f64 + (w - 2 * b) as f64 * 0.07;
    let y0 = b as f64 + (h - 2 * b) as f64 * 0.06;
    let colp = inner_w / ncols.max(3) as f64;
    let rowp = inner_h / per_col as f64;
    let g = (colp.min(rowp) * 0.85) as i32;
    for (i, c) in chars.iter().enumerate() {
        let (col, row) = (i / per_col, i % per_col);
        let cx = x0 + inner_w - (col as f64 + 0.5) * colp;
        let cy = y0 + (row as f64 + 0.5) * rowp;
        let s = c.to_string();
        let mut base = 0;
        let sz = ft.get_text_size(&s, g, -1, &mut base).unwrap();
        ft.put_text(
            &mut m,
            &s,
            Point::new(
                (cx - sz.width as f64 / 2.0) as i32,
                (cy + sz.height as f64 / 2.0) as i32,
            ),
            g,
            Scalar::new(30.0, 30.0, 40.0, 0.0),
            -1,
            imgproc::LINE_AA,
            true,
        )
        .unwrap();
    }
    m
}

/// Renders a 50-card layout.
pub fn render(seed: u64, width: i32, height: i32) -> SynthFrame {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let geom = FieldGeometry::default();
    // Camera: ~1.2 px/mm at 1280 wide, small roll, slight keystone.
    let s = 1.15 * width as f64 / 1280.0;
    let roll = rng.gen_range(-2.0f64..2.0).to_radians();
    let (sr, cr) = roll.sin_cos();
    let (cx, cy) = (width as f64 / 2.0, height as f64 / 2.0);
    let k = rng.gen_range(-0.00015..0.00015);
    let h = matrix_from_rows(&[[s * cr, s * sr, cx], [s * sr, -s * cr, cy], [0.0, k, 1.0]]);
    // Background: mat colour with weave texture.
    let base = Scalar::new(
        rng.gen_range(60.0..110.0),
        rng.gen_range(140.0..175.0),
        rng.gen_range(150.0..185.0),
        0.0,
    );
    let mut noise =
        Mat::new_rows_cols_with_default(height, width, core::CV_32FC1, Scalar::all(0.0)).unwrap();
    core::randn(&mut noise, &Scalar::all(0.0), &Scalar::all(18.0)).unwrap();
    let mut weave = Mat::default();
    imgproc::gaussian_blur(
        &noise,
        &mut weave,
        Size::new(1, 9),
        0.0,
        3.0,
        core::BORDER_DEFAULT,
    )
    .unwrap();
    let mut img = Mat::new_rows_cols_with_default(height, width, core::CV_8UC3, base).unwrap();
    let mut weave8 = Mat::default();
    weave
        .convert_to(&mut weave8, core::CV_8U, 1.0, 128.0)
        .unwrap();
    let mut weave3 = Mat::default();
    imgproc::cvt_color_def(&weave8, &mut weave3, imgproc::COLOR_GRAY2BGR).unwrap();
    let mut tmp = Mat::default();
    core::add_weighted(&img, 1.0, &weave3, 1.0, -128.0, &mut tmp, -1).unwrap();
    img = tmp;

    let mut ft = freetype::create_free_type2().unwrap();
    let fonts = [
        "/usr/share/fonts/opentype/ipafont-mincho/ipam.ttf",
        "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
    ];
    ft.load_font_data(fonts[rng.gen_range(0..2)], 0).unwrap();
    let border = Scalar::new(
        rng.gen_range(20.0..200.0),
        rng.gen_range(20.0..140.0),
        rng.gen_range(20.0..120.0),
        0.0,
    );
    let face = Scalar::new(
        rng.gen_range(200.0..225.0),
        rng.gen_range(225.0..240.0),
        rng.gen_range(235.0..250.0),
        0.0,
    );
    let border_mm = rng.gen_range(2.5..4.5);

    let mut pool: Vec<u8> = (1..=100).collect();
    pool.shuffle(&mut rng);
    let mut cards = Vec::new();
    let mut next = 0;
    for owner in [Player::A, Player::B] {
        for (row, n) in [(1u8, 8usize), (2, 8), (3, 9)] {
            let y = geom.row_center_y_mm(owner, row);
            let span = 870.0 - 52.0;
            for i in 0..n {
                let x = -span / 2.0 + span * i as f64 / (n - 1) as f64 + rng.gen_range(-3.0..3.0);
                let angle = rng.gen_range(-2.5..2.5);
                let yy = y + rng.gen_range(-1.5..1.5);
                let poem = pool[next];
                next += 1;
                let text = poems::poem(poem).unwrap().torifuda_text();
                let canvas = card_canvas(&mut ft, &text, border, face, border_mm);
                // Canvas corners -> field corners. B's cards face B: upside down.
                let fc = rotated_rect(x, yy, 52.0, 73.0, angle);
                // rotated_rect: (-w,-h), (+w,-h), (+w,+h), (-w,+h); the canvas top-left
                // is the card's top-left seen by its owner.
                let canvas_field = match owner {
                    Player::A => [fc[3], fc[2], fc[1], fc[0]],
                    Player::B => [fc[1], fc[0], fc[3], fc[2]],
                };
                let (cw, ch) = (canvas.cols() as f32, canvas.rows() as f32);
                let src: Vector<Point2f> = [
                    Point2f::new(0.0, 0.0),
                    Point2f::new(cw, 0.0),
                    Point2f::new(cw, ch),
                    Point2f::new(0.0, ch),
                ]
                .into_iter()
                .collect();
                let dst: Vector<Point2f> = canvas_field
                    .iter()
                    .map(|p| {
                        let q = apply_homography(&h, [p.x_mm, p.y_mm]);
                        Point2f::new(q[0] as f32, q[1] as f32)
                    })
                    .collect();
                let m = imgproc::get_perspective_transform_def(&src, &dst).unwrap();
                let mut warped = Mat::default();
                imgproc::warp_perspective(
                    &canvas,
                    &mut warped,
                    &m,
                    Size::new(width, height),
                    imgproc::INTER_AREA,
                    core::BORDER_CONSTANT,
                    Scalar::all(0.0),
                )
                .unwrap();
                let white = Mat::new_rows_cols_with_default(
                    canvas.rows(),
                    canvas.cols(),
                    core::CV_8UC1,
                    Scalar::all(255.0),
                )
                .unwrap();
                let mut mask = Mat::default();
                imgproc::warp_perspective(
                    &white,
                    &mut mask,
                    &m,
                    Size::new(width, height),
                    imgproc::INTER_LINEAR,
                    core::BORDER_CONSTANT,
                    Scalar::all(0.0),
                )
                .unwrap();
                // Soft edge: blend by the mask.
                let mut mask3 = Mat::default();
                imgproc::cvt_color_def(&mask, &mut mask3, imgproc::COLOR_GRAY2BGR).unwrap();
                let mut mf = Mat::default();
                mask3
                    .convert_to(&mut mf, core::CV_32FC3, 1.0 / 255.0, 0.0)
                    .unwrap();
                let (mut wf, mut imf) = (Mat::default(), Mat::default());
                warped
                    .convert_to(&mut wf, core::CV_32FC3, 1.0, 0.0)
                    .unwrap();
                img.convert_to(&mut imf, core::CV_32FC3, 1.0, 0.0).unwrap();
                let mut a = Mat::default();
                core::multiply(&wf, &mf, &mut a, 1.0, -1).unwrap();
                let mut inv = Mat::default();
                core::subtract(&Scalar::all(1.0), &mf, &mut inv, &core::no_array(), -1).unwrap();
                let mut b = Mat::default();
                core::multiply(&imf, &inv, &mut b, 1.0, -1).unwrap();
                let mut sum = Mat::default();
                core::add(&a, &b, &mut sum, &core::no_array(), -1).unwrap();
                sum.convert_to(&mut img, core::CV_8UC3, 1.0, 0.0).unwrap();
                let corners_px = fc.map(|p| apply_homography(&h, [p.x_mm, p.y_mm]));
                cards.push(SynthCard {
                    poem,
                    owner,
                    row,
                    x_mm: x,
                    y_mm: yy,
                    angle_deg: angle,
                    corners_px,
                });
            }
        }
    }
    // Uneven light: brighter towards one corner, warm tint; sensor noise.
    let mut light =
        Mat::new_rows_cols_with_default(height, width, core::CV_32FC3, Scalar::all(0.0)).unwrap();
    let (lx, ly) = (
        rng.gen_range(0.0..width as f64),
        rng.gen_range(0.0..height as f64),
    );
    let tint = [rng.gen_range(0.85..1.0), 1.0, rng.gen_range(1.0..1.1)];
    for yy in 0..height {
        for xx in 0..width {
            let d = ((xx as f64 - lx).hypot(yy as f64 - ly)) / width as f64;
            let g = 1.05 - 0.35 * d;
            let v = light.at_2d_mut::<core::Vec3f>(yy, xx).unwrap();
            *v = core::Vec3f::from([(g * tint[0]) as f32, g as f32, (g * tint[2]) as f32]);
        }
    }
    let mut imf = Mat::default();
    img.convert_to(&mut imf, core::CV_32FC3, 1.0, 0.0).unwrap();
    let mut lit = Mat::default();
    core::multiply(&imf, &light, &mut lit, 1.0, -1).unwrap();
    let mut n =
        Mat::new_rows_cols_with_default(height, width, core::CV_32FC3, Scalar::all(0.0)).unwrap();
    core::randn(&mut n, &Scalar::all(0.0), &Scalar::all(3.0)).unwrap();
    let mut noisy = Mat::default();
    core::add(&lit, &n, &mut noisy, &core::no_array(), -1).unwrap();
    let mut out = Mat::default();
    noisy.convert_to(&mut out, core::CV_8UC3, 1.0, 0.0).unwrap();
    SynthFrame {
        bgr: out,
        cards,
        field_to_image: h,
    }
}
