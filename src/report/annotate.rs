//! The annotated video of the whole match, made on request (`--annotate`): every frame
//! with the field lines, the cards where they lie, the hands and their contacts, a marker
//! for each event as it happens, and a banner with the current reading, its kimari-ji and
//! the time from the kimari-ji moment. Encoded by the `ffmpeg` command (H.264).

use super::draw::{self, bgr, FieldPx, Layer, View};
use super::facts;
use super::frames::FrameReader;
use super::hands::HandStream;
use super::{ReportError, ReportInput};
use crate::rules::model::{touched_card_words, EventKind};
use opencv::core::{Point, Scalar};
use opencv::prelude::*;
use opencv::{freetype, imgproc};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// A Japanese font for the kimari-ji (Debian `fonts-ipafont-gothic`); without it the
/// banner names the poem by number only.
const KANA_FONT: &str = "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf";
/// An event's marker stays on screen this long after it.
const MARKER_HOLD_S: f64 = 0.5;
const ANNOTATED_CRF: &str = "26";

/// Writes `out/annotated.mp4`; returns its path.
pub fn write_annotated(
    out: &Path,
    input: &ReportInput,
    video: &Path,
) -> Result<std::path::PathBuf, ReportError> {
    let mut reader = FrameReader::open(video)?;
    let (w, h) = (reader.width_px, reader.height_px);
    let field = match &input.calibration {
        Some(c) => Some(FieldPx::new(
            crate::field::FieldMap::from_calibration(c, input.layout.field.clone())
                .map_err(|e| ReportError::Calibration(e.to_string()))?,
        )?),
        None => None,
    };
    let mut hands = match &input.hands {
        Some(p) => Some(HandStream::open(p)?),
        None => None,
    };
    let mut ft = if Path::new(KANA_FONT).is_file() {
        let mut f = freetype::create_free_type2()?;
        f.load_font_data(KANA_FONT, 0)?;
        Some(f)
    } else {
        None
    };
    let path = out.join("annotated.mp4");
    let mut child = Command::new("ffmpeg")
        .args([
            "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "bgr24", "-s",
        ])
        .arg(format!("{w}x{h}"))
        .arg("-r")
        .arg(format!("{}", reader.fps))
        .args([
            "-i",
            "-",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-crf",
            ANNOTATED_CRF,
            "-pix_fmt",
            "yuv420p",
        ])
        .arg(&path)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            ReportError::Ffmpeg(format!(
                "cannot start it (install the Debian package `ffmpeg`): {e}"
            ))
        })?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| ReportError::Ffmpeg("no pipe to it".into()))?;
    let view = View {
        x0: 0.0,
        y0: 0.0,
        scale: 1.0,
    };
    let mut board_events = usize::MAX;
    let mut cards = Vec::new();
    let mut layer: Option<Layer> = None;
    let mut layer_poem: Option<u8> = None;
    let mut index = 0u64;
    let write_result: Result<(), ReportError> = (|| {
        while let Some(mut img) = reader.read(index)? {
            let t = reader.t_s(index);
            let passed = input.events.partition_point(|e| e.t_s <= t);
            let reading = input
                .readings
                .iter()
                .rposition(|r| r.kami_start_s <= t)
                .map(|i| &input.readings[i]);
            let ruling = reading.and_then(|rd| input.rulings.iter().find(|r| r.seq == rd.seq));
            let poem = ruling.map(|r| r.poem);
            if let Some(f) = &field {
                // The field and cards change only with an event or a new reading.
                if passed != board_events || poem != layer_poem || layer.is_none() {
                    board_events = passed;
                    layer_poem = poem;
                    cards = f.cards_px(&facts::cards_at(&input.layout, &input.events, t))?;
                    let size = img.size()?;
                    layer = Some(Layer::render(size, &|m: &mut opencv::core::Mat| {
                        draw::draw_field(m, &view, f, &cards, poem)
                    })?);
                }
            }
            if let Some(l) = &layer {
                l.apply(&mut img)?;
            }
            if let Some(hs) = hands.as_mut() {
                let obs = hs.at(index)?;
                draw::draw_hands(&mut img, &view, &obs, &cards)?;
            }
            // Events of the last half second, newest at the bottom.
            let recent: Vec<_> = input.events[..passed]
                .iter()
                .rev()
                .take_while(|e| t - e.t_s <= MARKER_HOLD_S)
                .collect();
            for (k, e) in recent.iter().take(4).enumerate() {
                let text = match &e.what {
                    EventKind::Touch {
                        player,
                        poem,
                        territory,
                        ..
                    } => format!(
                        "touch {player} -> {}",
                        touched_card_words(*poem, *territory)
                    ),
                    EventKind::Out { poem, .. } => format!("card {poem} out"),
                    EventKind::Enter { player, hand } => format!("{player} {hand} hand enters"),
                    EventKind::Leave { player, hand } => format!("{player} {hand} hand leaves"),
                    EventKind::Send { from, poem } => format!("{from} sends {poem}"),
                    EventKind::Place { poem, owner, .. } => format!("{poem} placed for {owner}"),
                    EventKind::Contact { .. } => "hands in contact".into(),
                    EventKind::Unseen { what, .. } => format!("unseen: {what}"),
                };
                draw::label_at(
                    &mut img,
                    &text,
                    Point::new(8, h - 26 - 20 * k as i32),
                    0.5,
                    bgr("#ffd600"),
                    false,
                )?;
                if let EventKind::Touch {
                    poem: Some(poem), ..
                } = &e.what
                {
                    if let Some(c) = cards.iter().find(|c| c.poem == Some(*poem)) {
                        imgproc::circle(
                            &mut img,
                            view.pt(c.centre_px),
                            14,
                            bgr("#ff1744"),
                            2,
                            imgproc::LINE_AA,
                            0,
                        )?;
                    }
                }
            }
            let banner = match (reading, ruling) {
                (Some(rd), Some(r)) => format!(
                    "t {t:.3} s   reading {}   poem {}   {}{}",
                    rd.seq,
                    r.poem,
                    if t >= r.decided_s {
                        format!("kimari-ji complete {:+.0} ms", (t - r.decided_s) * 1000.0)
                    } else {
                        "kimari-ji not yet complete".into()
                    },
                    r.take
                        .as_ref()
                        .filter(|k| t >= k.t_s)
                        .map_or(String::new(), |k| format!("   take {}", k.player))
                ),
                _ => format!("t {t:.3} s   before the first reading"),
            };
            // Sized to the frame: the banner must fit left of the kimari-ji box.
            let banner_scale = (w as f64 / 1280.0 * 0.7).clamp(0.35, 0.9);
            draw::label_at(
                &mut img,
                &banner,
                Point::new(8, 6),
                banner_scale,
                Scalar::all(255.0),
                false,
            )?;
            if let (Some(f), Some(r)) = (ft.as_mut(), ruling) {
                if t >= r.decided_s {
                    let org = Point::new(w - 130, 8);
                    imgproc::rectangle(
                        &mut img,
                        opencv::core::Rect::new(org.x - 6, org.y - 2, 126, 40),
                        Scalar::all(20.0),
                        -1,
                        imgproc::LINE_8,
                        0,
                    )?;
                    f.put_text(
                        &mut img,
                        &r.kimariji,
                        org,
                        32,
                        bgr("#ffd600"),
                        -1,
                        imgproc::LINE_AA,
                        false,
                    )?;
                }
            }
            stdin
                .write_all(img.data_bytes()?)
                .map_err(|e| ReportError::Ffmpeg(format!("writing a frame: {e}")))?;
            index += 1;
        }
        Ok(())
    })();
    drop(stdin);
    let done = child
        .wait_with_output()
        .map_err(|e| ReportError::Ffmpeg(e.to_string()))?;
    write_result?;
    if !done.status.success() {
        return Err(ReportError::Ffmpeg(
            String::from_utf8_lossy(&done.stderr).trim().to_string(),
        ));
    }
    Ok(path)
}
