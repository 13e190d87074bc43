//! ChArUco calibration on synthetic views of the board through a known distorting camera,
//! and the field commands' bad input through the binary (one line, exit status 2).

use karuta_referee::field::charuco::{self, Board, BoardSpec};
use karuta_referee::field::synth::{self, Camera};
use karuta_referee::field::{Calibration, Intrinsics};
use karuta_referee::rules::model::FieldSize;
use karuta_referee::util::{apply_homography, matrix_from_rows, matrix_to_rows};
use opencv::core::{Mat, Scalar, Vector};
use opencv::{core, imgcodecs};
use std::path::{Path, PathBuf};
use std::process::Command;

fn spec() -> BoardSpec {
    BoardSpec {
        squares_x: 7,
        squares_y: 5,
        square_mm: 30.0,
        marker_mm: 22.0,
        dictionary: "DICT_5X5_100".into(),
    }
}

fn truth() -> Intrinsics {
    Intrinsics {
        image_size: [800, 600],
        camera_matrix: matrix_from_rows(&[
            [650.0, 0.0, 405.0],
            [0.0, 650.0, 296.0],
            [0.0, 0.0, 1.0],
        ]),
        dist_coeffs: vec![-0.25, 0.08, 0.0, 0.0, 0.0],
    }
}

/// Board poses: tilted 14-34 degrees every way, 300-420 mm away, spread over the frame so
/// that the corners of the image are seen too.
fn poses(n: usize) -> Vec<([f64; 3], [f64; 3])> {
    (0..n)
        .map(|i| {
            let a = i as f64 * 2.39996;
            let tilt = 0.25 + 0.35 * ((i % 3) as f64 / 2.0);
            (
                [tilt * a.cos(), tilt * a.sin(), 0.2 * (a * 0.7).sin()],
                [
                    95.0 * (a * 1.3).cos(),
                    75.0 * (a * 0.9).sin(),
                    300.0 + 30.0 * (i % 5) as f64,
                ],
            )
        })
        .collect()
}

fn views(n: usize) -> Vec<Mat> {
    let mut b = Board::new(&spec()).unwrap();
    synth::board_views(&mut b, &truth(), &poses(n)).unwrap()
}

fn check_intrinsics(k: &Intrinsics) {
    let t = truth();
    for (i, j) in [(0, 0), (1, 1)] {
        let rel =
            (k.camera_matrix[(i, j)] - t.camera_matrix[(i, j)]).abs() / t.camera_matrix[(i, j)];
        assert!(rel < 0.01, "focal {:?}", k.camera_matrix);
    }
    assert!(
        (k.camera_matrix[(0, 2)] - 405.0).abs() < 5.0,
        "{:?}",
        k.camera_matrix
    );
    assert!(
        (k.camera_matrix[(1, 2)] - 296.0).abs() < 5.0,
        "{:?}",
        k.camera_matrix
    );
    // The distortion itself: where the truth puts rays far from the centre, within 1.5 px.
    let corner = [[100.0, 80.0], [700.0, 520.0], [400.0, 60.0]];
    let a = k.undistort_px(&corner).unwrap();
    let b = t.undistort_px(&corner).unwrap();
    for (p, q) in a.iter().zip(&b) {
        assert!(
            (p[0] - q[0]).hypot(p[1] - q[1]) < 1.5,
            "{p:?} vs {q:?} ({:?})",
            k.dist_coeffs
        );
    }
}

#[test]
fn charuco_views_recover_the_camera() {
    let b = Board::new(&spec()).unwrap();
    let cal = charuco::calibrate(&b, views(16)).unwrap();
    eprintln!("{cal:?}");
    assert!(cal.views_used >= 14, "{}", cal.views_used);
    assert!(
        cal.reprojection_error_px < 0.5,
        "{}",
        cal.reprojection_error_px
    );
    check_intrinsics(&cal.intrinsics);
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("karuta-field-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_board(dir: &Path) -> PathBuf {
    let p = dir.join("board.json");
    std::fs::write(&p, serde_json::to_string(&spec()).unwrap()).unwrap();
    p
}

fn write_views(dir: &Path, frames: &[Mat]) {
    for (i, f) in frames.iter().enumerate() {
        let p = dir.join(format!("view{i:02}.png"));
        assert!(imgcodecs::imwrite(p.to_str().unwrap(), f, &Vector::new()).unwrap());
    }
}

/// Runs the binary; returns (exit code, stdout, stderr).
fn run(cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn calibrate_command_writes_calibration_json() {
    let d = scratch("ok");
    let board = write_board(&d);
    let imgs = d.join("views");
    std::fs::create_dir_all(&imgs).unwrap();
    write_views(&imgs, &views(16));
    let out = d.join("calibration.json");
    let (code, stdout, stderr) = run(bin()
        .args(["calibrate", "--board"])
        .arg(&board)
        .arg("--images")
        .arg(&imgs)
        .arg("--out")
        .arg(&out));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("reprojection error"), "{stdout}");
    let c: Calibration = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(c.reprojection_error_px.unwrap() < 0.5);
    check_intrinsics(&Intrinsics::from_calibration(&c));
}

fn one_error_line(stderr: &str, code: i32, wants: &str) {
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains(wants), "wanted {wants:?} in {stderr}");
}

#[test]
fn too_few_board_views_exit_2() {
    let d = scratch("few");
    let board = write_board(&d);
    write_views(&d, &views(3));
    let (code, _, stderr) = run(bin()
        .args(["calibrate", "--board"])
        .arg(&board)
        .arg("--images")
        .arg(&d));
    one_error_line(&stderr, code, "too few board views: 3 of 3 frames");
}

#[test]
fn board_not_found_exit_2() {
    let d = scratch("none");
    let board = write_board(&d);
    let mut noise =
        Mat::new_rows_cols_with_default(600, 800, core::CV_8UC1, Scalar::all(0.0)).unwrap();
    core::randu(&mut noise, &Scalar::all(0.0), &Scalar::all(255.0)).unwrap();
    write_views(&d, &[noise.clone(), noise]);
    let (code, _, stderr) = run(bin()
        .args(["calibrate", "--board"])
        .arg(&board)
        .arg("--images")
        .arg(&d));
    one_error_line(&stderr, code, "the board was not found in any of 2 frames");
}

#[test]
fn unreadable_inputs_exit_2() {
    let d = scratch("bad");
    let board = write_board(&d);
    std::fs::write(d.join("broken.png"), b"not a png").unwrap();
    let (code, _, stderr) = run(bin()
        .args(["calibrate", "--board"])
        .arg(&board)
        .arg("--images")
        .arg(&d));
    one_error_line(
        &stderr,
        code,
        "broken.png: image: cannot be read as an image",
    );

    let video = d.join("clip.mp4");
    std::fs::write(&video, b"not a video").unwrap();
    let (code, _, stderr) = run(bin()
        .args(["calibrate", "--board"])
        .arg(&board)
        .arg("--video")
        .arg(&video));
    one_error_line(&stderr, code, "clip.mp4: video:");

    let bad_board = d.join("bad_board.json");
    std::fs::write(&bad_board, r#"{"squares_x": 7, "squares_y": 5, "square_mm": 30, "marker_mm": 40, "dictionary": "DICT_5X5_100"}"#).unwrap();
    let (code, _, stderr) = run(bin()
        .args(["calibrate", "--board"])
        .arg(&bad_board)
        .arg("--images")
        .arg(&d));
    one_error_line(
        &stderr,
        code,
        "bad_board.json: board: marker_mm (40) must be positive and smaller than square_mm (30)",
    );
}

fn field_quads(mirror: bool) -> (Camera, Vec<karuta_referee::field::CardQuad>) {
    let field = FieldSize::default();
    let cam = Camera::overhead(
        [1280, 720],
        1000.0,
        vec![-0.1, 0.02, 0.0, 0.0, 0.0],
        830.0,
        [3.0, 2.0],
        1.0,
    )
    .unwrap();
    let cards = synth::layout(31, &field, 3.0, 1.0);
    let mut q = synth::quads(&cam, &cards, &field, 0.5, 32).unwrap();
    if mirror {
        for c in &mut q {
            for p in &mut c.corners_px {
                p[0] = 1280.0 - p[0];
            }
        }
    }
    (cam, q)
}

#[test]
fn register_command_from_cards_and_a_folding_view_exit_2() {
    let d = scratch("register");
    let (cam, quads) = field_quads(false);
    let cal = Calibration {
        image_size: [1280, 720],
        camera_matrix: matrix_to_rows(&cam.intrinsics.camera_matrix),
        dist_coeffs: cam.intrinsics.dist_coeffs.clone(),
        image_to_field: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        reprojection_error_px: None,
    };
    let cal_path = d.join("intrinsics.json");
    std::fs::write(&cal_path, serde_json::to_string(&cal).unwrap()).unwrap();
    let qp = d.join("quads.json");
    std::fs::write(&qp, serde_json::to_string(&quads).unwrap()).unwrap();
    let out = d.join("calibration.json");
    let (code, stdout, stderr) = run(bin()
        .args(["register", "--calibration"])
        .arg(&cal_path)
        .arg("--cards")
        .arg(&qp)
        .arg("--out")
        .arg(&out));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("layout: legal"), "{stdout}");
    let c: Calibration = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    // The written homography maps the camera's own view of a field point back onto it.
    let truth_h = cam.image_to_field().unwrap();
    let map = karuta_referee::field::FieldMap::from_calibration(&c, FieldSize::default()).unwrap();
    for p in [[300.0, 200.0], [640.0, 360.0], [1000.0, 600.0]] {
        let got = map.point_to_field(p).unwrap();
        let und = cam.intrinsics.undistort_px(&[p]).unwrap()[0];
        let want = apply_homography(&truth_h, und);
        assert!(
            (got.x_mm - want[0]).hypot(got.y_mm - want[1]) < 2.0,
            "{got:?} vs {want:?}"
        );
    }

    let (_, mirrored) = field_quads(true);
    std::fs::write(&qp, serde_json::to_string(&mirrored).unwrap()).unwrap();
    let (code, _, stderr) = run(bin()
        .args(["register", "--cards"])
        .arg(&qp)
        .arg("--out")
        .arg(&out));
    one_error_line(&stderr, code, "quads.json: cards: the image-to-field homography is unusable: it would fold the field over");
}

#[test]
fn register_command_from_markers() {
    let d = scratch("markers");
    let field = FieldSize::default();
    let cam =
        Camera::overhead([1280, 720], 1000.0, vec![0.0; 5], 1200.0, [1.0, 1.0], -1.0).unwrap();
    let cards = synth::layout(41, &field, 2.0, 1.0);
    let img = d.join("markers.png");
    let frame = synth::render(&cam, &cards, &field, &[], true, 42).unwrap();
    assert!(imgcodecs::imwrite(img.to_str().unwrap(), &frame, &Vector::new()).unwrap());
    let out = d.join("calibration.json");
    let (code, stdout, stderr) = run(bin()
        .args(["register", "--markers"])
        .arg(&img)
        .arg("--out")
        .arg(&out));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("16/16 corners agree"), "{stdout}");
    let c: Calibration = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let truth = cam.image_to_field().unwrap();
    for p in [[200.0, 150.0], [1100.0, 600.0]] {
        let a = apply_homography(&matrix_from_rows(&c.image_to_field), p);
        let b = apply_homography(&truth, p);
        assert!((a[0] - b[0]).hypot(a[1] - b[1]) < 2.0, "{a:?} vs {b:?}");
    }
    // A frame without markers: one line, exit 2.
    let bare = d.join("bare.png");
    let frame = synth::render(&cam, &cards, &field, &[], false, 42).unwrap();
    assert!(imgcodecs::imwrite(bare.to_str().unwrap(), &frame, &Vector::new()).unwrap());
    let (code, _, stderr) = run(bin()
        .args(["register", "--markers"])
        .arg(&bare)
        .arg("--out")
        .arg(&out));
    one_error_line(
        &stderr,
        code,
        "bare.png: markers: too few field-corner markers",
    );
}
