//! Per-frame training labels (`labels/`, docs/sim.md): every card's corners in the image
//! as rendered (distorted) and undistorted, every hand's keypoints and outline with its
//! height and contacts, and the true homography. Resting cards are written once per
//! change of the resting set (`cards.jsonl`), moving cards inline in each frame.

use crate::rules::geometry::FieldGeometry;
use crate::rules::model::{Hand, Player};
use crate::sim::body::project_to_tatami;
use crate::sim::camera::Camera;
use crate::sim::story::{contacts, hand_outline, Pose, Story};
use serde::Serialize;
use std::collections::BTreeMap;

/// Pixel and millimetre values are rounded to this many decimals.
fn r2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// One card in one frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardLabel {
    pub poem: u8,
    pub x_mm: f64,
    pub y_mm: f64,
    /// Physical rotation: 0 when the text is upright for player A, near 180 for B.
    pub angle_deg: f64,
    /// The player the printed text faces.
    pub faces: Player,
    pub moving: bool,
    /// No part of the card lies inside the playing area (17-2).
    pub out: bool,
    /// Corners in the card's own frame order (-w/2,-h/2), (+w/2,-h/2), (+w/2,+h/2),
    /// (-w/2,+h/2) with the card's frame rotated by `angle_deg`, as rendered (distorted).
    pub corners_px: [[f64; 2]; 4],
    /// The same corners in undistorted pixels.
    pub corners_undist_px: [[f64; 2]; 4],
}

/// One hand in one frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandLabel {
    pub player: Player,
    pub hand: Hand,
    pub lead: bool,
    /// Height of the middle fingertip above the tatami.
    pub height_mm: f64,
    /// Cards the fingertip is touching (or holding).
    pub touching: Vec<u8>,
    /// Any part of the hand's projection is inside the playing area.
    pub inside: bool,
    /// Keypoints (wrist, thumb, index, middle, ring, little fingertips) in the distorted image.
    pub keypoints_px: BTreeMap<&'static str, [f64; 2]>,
    /// Keypoints in the field frame: x, y and height above the tatami.
    pub keypoints_mm: BTreeMap<&'static str, [f64; 3]>,
    /// Convex outline (wrist to fingertips) projected onto the tatami, in the distorted image.
    pub outline_px: Vec<[f64; 2]>,
    /// The same outline in field millimetres.
    pub outline_mm: Vec<[f64; 2]>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameLabel {
    pub frame: u64,
    pub t_s: f64,
    /// The resting-card set in force (`cards.jsonl`).
    pub cards_epoch: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moving_cards: Vec<CardLabel>,
    pub hands: Vec<HandLabel>,
    /// Camera shake (hard preset): the camera centre's offset, and the homography field ->
    /// undistorted pixels of this frame. Resting-card corners in `cards.jsonl` are for the
    /// unshaken camera; map their `x_mm, y_mm` corners through this for the frame's pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera_shift_mm: Option<[f64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_to_image: Option<[[f64; 3]; 3]>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpochLabel {
    pub epoch: u32,
    pub from_frame: u64,
    pub cards: Vec<CardLabel>,
}

pub fn card_label(
    cam: &Camera,
    geom: &FieldGeometry,
    poem: u8,
    p: Pose,
    moving: bool,
) -> opencv::Result<CardLabel> {
    let corners = geom.card_corners(p.x_mm, p.y_mm, p.angle_deg);
    let pts: Vec<(f64, f64)> = corners.iter().map(|c| (c.x_mm, c.y_mm)).collect();
    let d = cam.project_distorted(&pts)?;
    let u = cam.project_undistorted(&pts);
    let a = p.angle_deg.rem_euclid(360.0);
    let a = if a > 180.0 { a - 360.0 } else { a };
    Ok(CardLabel {
        poem,
        x_mm: r2(p.x_mm),
        y_mm: r2(p.y_mm),
        angle_deg: r2(a),
        faces: if a.to_radians().cos() >= 0.0 {
            Player::A
        } else {
            Player::B
        },
        moving,
        out: geom.card_is_out(p.x_mm, p.y_mm, p.angle_deg),
        corners_px: [0, 1, 2, 3].map(|i| [r2(d[i].0), r2(d[i].1)]),
        corners_undist_px: [0, 1, 2, 3].map(|i| [r2(u[i].0), r2(u[i].1)]),
    })
}

pub fn hand_labels(story: &Story, cam: &Camera, t: f64) -> opencv::Result<Vec<HandLabel>> {
    let mut out = Vec::new();
    for (hi, h) in story.hands.iter().enumerate() {
        let look = &story.looks[h.player.index()];
        let shape = h.shape(t, look);
        let kp = shape.keypoints.all();
        let plane: Vec<(f64, f64)> = kp
            .iter()
            .map(|p| {
                let q = project_to_tatami(cam.centre_mm, *p);
                (q.x_mm, q.y_mm)
            })
            .collect();
        let kp_px = cam.project_distorted(&plane)?;
        let outline = hand_outline(h, look, cam.centre_mm, t);
        let opts: Vec<(f64, f64)> = outline.iter().map(|p| (p.x_mm, p.y_mm)).collect();
        let o_px = cam.project_distorted(&opts)?;
        let names = crate::sim::body::Keypoints::NAMES;
        out.push(HandLabel {
            player: h.player,
            hand: h.hand,
            lead: h.lead,
            height_mm: r2(shape.keypoints.middle.z_mm),
            touching: contacts(hi, &story.hands, &story.cards, &story.geom, t),
            inside: story.geom.hand_is_inside(&outline),
            keypoints_px: names
                .iter()
                .zip(&kp_px)
                .map(|(n, p)| (*n, [r2(p.0), r2(p.1)]))
                .collect(),
            keypoints_mm: names
                .iter()
                .zip(&kp)
                .map(|(n, p)| (*n, [r2(p.x_mm), r2(p.y_mm), r2(p.z_mm)]))
                .collect(),
            outline_px: o_px.iter().map(|p| [r2(p.0), r2(p.1)]).collect(),
            outline_mm: opts.iter().map(|p| [r2(p.0), r2(p.1)]).collect(),
        });
    }
    Ok(out)
}
