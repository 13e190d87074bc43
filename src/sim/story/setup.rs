//! The match before the first reading: each player's look (skin, sleeve, hand size) and
//! the layout dealt at the end of memorisation, rows with a real layout's small disorder.

use super::motion::Pose;
use crate::rules::geometry::FieldGeometry;
use crate::rules::model::*;
use crate::rules::poems::POEM_COUNT;
use crate::sim::body::Appearance;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeMap;

const SKIN_BGR: [[f64; 3]; 6] = [
    [170.0, 195.0, 235.0],
    [140.0, 170.0, 215.0],
    [120.0, 150.0, 200.0],
    [95.0, 125.0, 175.0],
    [75.0, 100.0, 150.0],
    [160.0, 180.0, 225.0],
];
const SLEEVE_BGR: [[f64; 3]; 7] = [
    [70.0, 40.0, 30.0],
    [30.0, 30.0, 30.0],
    [235.0, 235.0, 235.0],
    [120.0, 120.0, 125.0],
    [40.0, 80.0, 40.0],
    [50.0, 40.0, 110.0],
    [150.0, 110.0, 60.0],
];

pub(super) fn look(rng: &mut ChaCha20Rng) -> Appearance {
    let skin = SKIN_BGR[rng.gen_range(0..SKIN_BGR.len())];
    let j = rng.gen_range(-8.0..8.0);
    Appearance {
        hand_len_mm: rng.gen_range(172.0..198.0),
        palm_w_mm: rng.gen_range(78.0..92.0),
        skin_bgr: skin.map(|c: f64| (c + j).clamp(0.0, 255.0)),
        sleeve_bgr: SLEEVE_BGR[rng.gen_range(0..SLEEVE_BGR.len())],
        sleeve_w_mm: rng.gen_range(105.0..150.0),
    }
}

/// The layout at the end of memorisation: rows of cards from each territory's side
/// edges inwards, with the small disorder of real layouts.
pub fn make_layout(
    rng: &mut ChaCha20Rng,
    geom: &FieldGeometry,
    per_side: usize,
    disorder: f64,
) -> (Layout, Vec<Pose>) {
    let mut pool: Vec<u8> = (1..=POEM_COUNT).collect();
    pool.shuffle(rng);
    let (cw, w) = (geom.size.card_w_mm, geom.size.width_mm);
    let per_side = per_side.min(40);
    let mut cards = Vec::new();
    let mut poses = Vec::new();
    let mut next = pool.into_iter();
    for p in Player::BOTH {
        // Rows of 7 to 10 cards, 3 rows.
        let mut rows = [per_side / 3; 3];
        for r in rows.iter_mut().take(per_side % 3) {
            *r += 1;
        }
        let shift = rng.gen_range(0..=2usize).min(rows[0]);
        rows[0] -= shift;
        rows[2] += shift;
        for (ri, &n) in rows.iter().enumerate() {
            let row = ri as u8 + 1;
            let left = (n / 2 + rng.gen_range(0..=1usize)).min(n);
            let yc = geom.row_center_y_mm(p, row);
            let mut place = |x: f64, rng: &mut ChaCha20Rng| {
                let poem = next.next().unwrap_or(1);
                let a = rng.gen_range(-2.0..2.0) * disorder;
                let mut y = yc + rng.gen_range(-1.5..1.5) * disorder;
                // A tilted card reaches further; keep every corner on the territory.
                let terr = geom.territory(p);
                let reach = geom
                    .card_corners(0.0, 0.0, a)
                    .iter()
                    .map(|c| c.y_mm.abs())
                    .fold(0.0, f64::max);
                y = y.clamp(terr.y0_mm + reach + 0.01, terr.y1_mm - reach - 0.01);
                cards.push(CardPlacement {
                    poem: Some(poem),
                    owner: p,
                    row,
                    x_mm: x,
                    y_mm: y,
                    angle_deg: a,
                    poem_score: None,
                    candidates: Vec::new(),
                });
                let turn = if p == Player::B { 180.0 } else { 0.0 };
                poses.push(Pose {
                    x_mm: x,
                    y_mm: y,
                    angle_deg: a + turn,
                });
            };
            let edge = cw / 2.0 + 3.0;
            let mut x = -w / 2.0 + edge + rng.gen_range(0.0..4.0) * disorder;
            for _ in 0..left {
                place(x, rng);
                x += cw + 3.0 + rng.gen_range(0.0..7.0) * disorder;
            }
            let mut x = w / 2.0 - edge - rng.gen_range(0.0..4.0) * disorder;
            for _ in left..n {
                place(x, rng);
                x -= cw + 3.0 + rng.gen_range(0.0..7.0) * disorder;
            }
        }
    }
    let layout = Layout {
        field: geom.size.clone(),
        players: BTreeMap::new(),
        cards,
    };
    (layout, poses)
}
