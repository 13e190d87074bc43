//! Re-detection of cards that moved: after the motion monitor reports a card `Moved`
//! (or a send, a put-back), the frame is searched for card quads that are not among the
//! cards still in place, and each is named among the poems that went missing.
//! Reads decoded frames in the same pixels as the outlines given; writes nothing.

use super::cards::{self, centre, side_lengths, FindOptions, FoundCard};
use super::naming::{CardName, Namer};
use super::{DetectError, PointPx, QuadPx};
use opencv::core::Mat;

/// A quad closer than this fraction of a card's short side to a still card is that card.
const SAME_PLACE_FRAC: f64 = 0.5;
/// Blobs this close to a still card (fraction of its short side) are not fitted at all:
/// a little inside `SAME_PLACE_FRAC`, as a blob's centre is not yet the fitted card's.
const SKIP_FRAC: f64 = 0.4;

/// The layout's card scale, which fixes the search.
#[derive(Debug, Clone, Copy)]
pub struct CardScale {
    /// The typical face area, px.
    pub face_area_px: f64,
    /// The border's width over the face's long side (`None`: measured on the cards
    /// found, which then must all be fitted).
    pub border_ratio: Option<f64>,
}

/// A card found again.
#[derive(Debug, Clone)]
pub struct Relocated {
    pub card: FoundCard,
    pub name: CardName,
}

/// What one search found: the cards named among the missing poems, and the face centre
/// of every card it read, named or not (a later search for the same poems need not read
/// again a card still lying there: `known`).
#[derive(Debug, Clone, Default)]
pub struct Search {
    pub found: Vec<Relocated>,
    pub read_at_px: Vec<PointPx>,
}

/// A card whose face centre lies this close to one read before (fraction of the square
/// root of the face area) is the same card lying still.
pub const KNOWN_FRAC: f64 = 0.1;

/// Cards in `frame` that are not at any of `still_outlines`, named among `missing`
/// (the poems of the cards that moved). `scale` is the layout's card scale: its typical
/// face area, and its border ratio when known (otherwise measured on the cards found);
/// `styles` are the typeface styles the layout's cards were named in (`None`: chosen
/// from the cards found). Only places away from the still cards are fitted, and cards
/// whose face centre lies at one of `known` (cards an earlier search for the same poems
/// read in vain, still lying there) are not read again.
pub fn relocate(
    frame: &Mat,
    still_outlines: &[QuadPx],
    scale: &CardScale,
    missing: &[u8],
    namer: &Namer,
    styles: Option<&[usize]>,
    known: &[PointPx],
) -> Result<Search, DetectError> {
    if missing.is_empty() {
        return Ok(Search::default());
    }
    let ignore_near = match scale.border_ratio {
        // Without the layout's border, every card is fitted to measure it.
        None => Vec::new(),
        Some(_) => {
            let side = scale.face_area_px.sqrt();
            still_outlines
                .iter()
                .map(|q| (centre(q), SKIP_FRAC * side_lengths(q).0))
                .chain(known.iter().map(|&c| (c, KNOWN_FRAC * side)))
                .collect()
        }
    };
    let found = cards::find_cards(
        frame,
        &FindOptions {
            expected_face_area_px: Some(scale.face_area_px),
            border_ratio: scale.border_ratio,
            ignore_near,
        },
    )?;
    let fresh: Vec<FoundCard> = found
        .into_iter()
        .filter(|f| {
            let c = f.centre_px();
            let (short, _) = side_lengths(&f.card_px);
            still_outlines.iter().all(|q| {
                let s = centre(q);
                (s[0] - c[0]).hypot(s[1] - c[1]) > SAME_PLACE_FRAC * short
            })
        })
        .collect();
    let faces: Vec<QuadPx> = fresh.iter().map(|f| f.face_px).collect();
    let read_at_px = faces.iter().map(centre).collect();
    // A moved card may lie either way up: each is read both ways and keeps the way its
    // best candidate stands out more; the same field-relative rule as the layout's
    // names it, with only the missing poems open (each at most once).
    let names = namer.name_cards_either_way(frame, &faces, Some(missing), styles)?;
    Ok(Search {
        found: fresh
            .into_iter()
            .zip(names)
            .map(|(card, name)| Relocated { card, name })
            .collect(),
        read_at_px,
    })
}
