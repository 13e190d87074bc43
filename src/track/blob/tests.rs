//! Blobs of moving paper found on drawn frames, and a card's geometry as a blob.

use super::*;
use crate::rules::geometry::{Pt, Rect as AreaRect};

fn area() -> AreaRect {
    AreaRect {
        x0_mm: -435.0,
        y0_mm: -254.0,
        x1_mm: 435.0,
        y1_mm: 254.0,
    }
}

/// The layout's two cards.
const LAYOUT: [Rect; 2] = [Rect::new(10, 10, 26, 36), Rect::new(40, 10, 26, 36)];

fn quad(r: &Rect) -> QuadPx {
    let (x0, y0) = (r.x as f64, r.y as f64);
    let (x1, y1) = (x0 + r.width as f64, y0 + r.height as f64);
    [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
}

fn finder() -> BlobFinder {
    let cards: Vec<QuadPx> = LAYOUT.iter().map(quad).collect();
    BlobFinder::new(&field_with(&[]), &cards).unwrap()
}

/// A frame of tatami with cream rectangles (cards) on it.
fn drawn(tatami: Scalar, cream: Scalar, cards: &[Rect]) -> Mat {
    let mut img = Mat::new_rows_cols_with_default(240, 320, core::CV_8UC3, tatami).unwrap();
    for r in cards {
        imgproc::rectangle(&mut img, *r, cream, -1, imgproc::LINE_8, 0).unwrap();
    }
    img
}

/// A tatami-green frame with a few cream cards (the layout image), and the same
/// frame with new paper on it.
fn field_with(extra: &[Rect]) -> Mat {
    let cards: Vec<Rect> = LAYOUT.iter().chain(extra).copied().collect();
    drawn(
        Scalar::new(60.0, 140.0, 120.0, 0.0),
        Scalar::new(215.0, 235.0, 242.0, 0.0),
        &cards,
    )
}

/// The centre of the card-sized blob `finder` sees nearest `at` in `frame`.
fn card_seen(finder: &BlobFinder, frame: &Mat, at: [f64; 2], reach: f64) -> Option<[f64; 2]> {
    let face = 26.0 * 36.0;
    finder
        .nearest(frame, at, reach, [0.2 * face, 1.6 * face], &[])
        .unwrap()
        .map(|b| b.centre_px)
}

#[test]
fn a_blob_larger_than_the_area_allowed_is_not_taken_for_a_card() {
    let finder = finder();
    // A card's face of new paper, and nearer the point asked about a pale region
    // three faces large (a hand).
    let card = Rect::new(220, 150, 26, 36);
    let hand = Rect::new(120, 120, 52, 54);
    let frame = field_with(&[card, hand]);
    let face = 26.0 * 36.0;
    let at = [140.0, 140.0];
    let any = finder
        .nearest(&frame, at, 150.0, [0.2 * face, f64::INFINITY], &[])
        .unwrap()
        .expect("a blob");
    assert!(
        (any.centre_px[0] - 145.5).abs() < 3.0,
        "the nearer, larger: {:?}",
        any.centre_px
    );
    let capped = finder
        .nearest(&frame, at, 150.0, [0.2 * face, 1.6 * face], &[])
        .unwrap()
        .expect("the card");
    assert!(
        (capped.centre_px[0] - 232.5).abs() < 3.0,
        "the card: {:?}",
        capped.centre_px
    );
    assert!(capped.area_px <= 1.6 * face);
}

#[test]
fn a_pale_hand_is_white_but_not_of_the_papers_colour() {
    // Nearer the point asked about, a region of pale skin as large as a face: white
    // by its smallest channel, but warmer than the cards' paper.
    let mut frame = field_with(&[Rect::new(220, 150, 26, 36)]);
    let skin = Scalar::new(170.0, 200.0, 240.0, 0.0);
    let hand = Rect::new(120, 120, 26, 36);
    imgproc::rectangle(&mut frame, hand, skin, -1, imgproc::LINE_8, 0).unwrap();
    let seen = card_seen(&finder(), &frame, [130.0, 130.0], 150.0).expect("the card");
    assert!(
        (seen[0] - 232.5).abs() < 3.0,
        "the card, not the hand: {seen:?}"
    );
    // Without a layout to measure the paper on, any white is paper.
    let blind = BlobFinder::new(&field_with(&[]), &[]).unwrap();
    let seen = card_seen(&blind, &frame, [130.0, 130.0], 150.0).expect("a blob");
    assert!((seen[0] - 132.5).abs() < 3.0, "{seen:?}");
}

#[test]
fn on_a_dim_recording_paper_a_little_brighter_than_the_tatami_is_new_paper() {
    // Paper 21 gray levels over the tatami: less than `DIFF_MIN`. Eight cards, so that
    // the paper is the frame's brightest 3% (its white balance).
    let (tatami, cream) = (
        Scalar::new(90.0, 110.0, 110.0, 0.0),
        Scalar::new(125.0, 128.0, 128.0, 0.0),
    );
    let layout: Vec<Rect> = (0..8).map(|k| Rect::new(10 + 30 * k, 10, 26, 36)).collect();
    let cards: Vec<QuadPx> = layout.iter().map(quad).collect();
    let mut finder = BlobFinder::new(&drawn(tatami, cream, &layout), &cards).unwrap();
    assert!(finder.diff_min < DIFF_MIN, "{}", finder.diff_min);
    let mut moved = layout.clone();
    moved.push(Rect::new(220, 150, 26, 36));
    let frame = drawn(tatami, cream, &moved);
    let seen = card_seen(&finder, &frame, [200.0, 150.0], 150.0).expect("the card");
    assert!((seen[0] - 232.5).abs() < 3.0, "{seen:?}");
    // At the fixed level it is not seen.
    finder.diff_min = DIFF_MIN;
    assert!(card_seen(&finder, &frame, [200.0, 150.0], 150.0).is_none());
}

#[test]
fn beside_a_white_sleeve_brighter_than_the_cards_their_paper_is_still_paper() {
    // A sleeve of pure white over a fifth of the frame: the white balance puts it at
    // `PAPER_LEVEL`, and the cards' paper below `WHITE_MIN`.
    let field = |extra: &[Rect]| {
        let cards: Vec<Rect> = LAYOUT.iter().chain(extra).copied().collect();
        let tatami = Scalar::new(60.0, 140.0, 120.0, 0.0);
        let mut img = drawn(tatami, Scalar::new(190.0, 205.0, 210.0, 0.0), &cards);
        let (sleeve, white) = (Rect::new(0, 190, 320, 50), Scalar::all(255.0));
        imgproc::rectangle(&mut img, sleeve, white, -1, imgproc::LINE_8, 0).unwrap();
        img
    };
    let cards: Vec<QuadPx> = LAYOUT.iter().map(quad).collect();
    let mut finder = BlobFinder::new(&field(&[]), &cards).unwrap();
    assert!(finder.white_min < WHITE_MIN, "{}", finder.white_min);
    let frame = field(&[Rect::new(220, 120, 26, 36)]);
    let seen = card_seen(&finder, &frame, [200.0, 130.0], 100.0).expect("the card");
    assert!((seen[0] - 232.5).abs() < 3.0, "{seen:?}");
    finder.white_min = WHITE_MIN;
    assert!(card_seen(&finder, &frame, [200.0, 130.0], 100.0).is_none());
}

#[test]
fn a_card_just_past_the_side_line_is_out_and_one_touching_it_is_not() {
    // Upright card (52 wide along x), far edge at x = 435 + 52 + 1.
    let pts = [Pt::new(488.0, 0.0), Pt::new(470.0, 10.0)];
    assert!(out_margin_mm(&pts, 0.0, 52.0, 73.0, &area()) > 0.0);
    let pts = [Pt::new(486.0, 0.0)];
    assert!(out_margin_mm(&pts, 0.0, 52.0, 73.0, &area()) < 0.0);
    // Turned 90 degrees, its 73 mm side lies along x.
    let pts = [Pt::new(500.0, 0.0)];
    assert!(out_margin_mm(&pts, 90.0, 52.0, 73.0, &area()) < 0.0);
}
