//! Which poem a verse is: its cepstra aligned (`dtw`) against the templates of the poems
//! not yet read (15-1: the kami-no-ku differ by the kimari-ji), the best and the
//! runner-up with the score between them, and the kana onsets from the same alignment.
//!
//! Reads a verse's frames and the templates; it learns nothing about the reader (that is
//! `readers_voice`).

use super::{MATCH_CEPS, POEM_SCORE_MIN};
use crate::audio::features::{Frames, CEPS, HOP_S};
use crate::audio::templates::{poem_template, KanaTemplates, TEMPLATE_STEP};
use crate::rules::kimariji::{sound_units, ReadPool};
use crate::rules::poems::{poem, Poem};

/// The held first kana as the templates assume it, seconds.
const TEMPLATE_FIRST_S: f64 = 1.1;
/// DTW band half-width, template frames (10 ms).
const BAND_FRAMES: usize = 40;
/// Threads matching a verse against the poems (the cores a recording is given).
const NAMING_THREADS: usize = 2;

/// Banded DTW between signal frames `x` and template `y`; the mean cost on the path, and
/// with `want_path` the first signal frame aligned to each template frame. A match that
/// must cost more than `abandon_above` is given up (infinity). Without the path only two
/// rows of the cost matrix are kept.
fn dtw(
    x: &[[f32; CEPS]],
    y: &[[f32; CEPS]],
    want_path: bool,
    abandon_above: f64,
) -> (f64, Vec<usize>) {
    let (n, m) = (x.len(), y.len());
    if n == 0 || m == 0 {
        return (f64::INFINITY, Vec::new());
    }
    let inf = f32::INFINITY;
    let band = BAND_FRAMES.max(n.abs_diff(m) + 4);
    let span = |i: usize| {
        let c = i * m / n;
        (c.saturating_sub(band), (c + band + 1).min(m))
    };
    let dist = |i: usize, j: usize| -> f32 {
        let mut s = 0.0;
        for k in 0..MATCH_CEPS {
            let e = x[i][k] - y[j][k];
            s += e * e;
        }
        s.sqrt()
    };
    let limit = (abandon_above * (n + m) as f64) as f32;
    // Row i of the matrix is row `row(i)` of `d`: all of them with the path, else two in
    // turn (a reused row is cleared over the span it held before).
    let rows = if want_path { n } else { 2 };
    let row = |i: usize| if want_path { i } else { i % 2 };
    let mut d = vec![inf; rows * m];
    let before = vec![inf; m];
    for i in 0..n {
        let (lo, hi) = span(i);
        if !want_path && i >= 2 {
            let (slo, shi) = span(i - 2);
            d[row(i) * m + slo..row(i) * m + shi].fill(inf);
        }
        // The previous row (all infinite above the first) and this one.
        let (prev, cur): (&[f32], &mut [f32]) = if i == 0 {
            (&before, &mut d[..m])
        } else {
            let (r0, r1) = (row(i - 1), row(i));
            if r0 < r1 {
                let (a, b) = d.split_at_mut(r1 * m);
                (&a[r0 * m..r0 * m + m], &mut b[..m])
            } else {
                let (a, b) = d.split_at_mut(r0 * m);
                (&b[..m], &mut a[r1 * m..r1 * m + m])
            }
        };
        for j in lo..hi {
            let best = if i == 0 && j == 0 {
                0.0
            } else if j > 0 {
                prev[j - 1].min(prev[j]).min(cur[j - 1])
            } else {
                prev[j]
            };
            if best < inf {
                cur[j] = best + dist(i, j);
            }
        }
        if cur[lo..hi].iter().all(|&c| c > limit) {
            return (f64::INFINITY, Vec::new());
        }
    }
    let total = d[row(n - 1) * m + m - 1];
    if !total.is_finite() {
        return (f64::INFINITY, Vec::new());
    }
    let cost = total as f64 / (n + m) as f64;
    if !want_path {
        return (cost, Vec::new());
    }
    // Backtrack: the first i for each j.
    let mut first_i = vec![usize::MAX; m];
    let (mut i, mut j) = (n - 1, m - 1);
    loop {
        first_i[j] = first_i[j].min(i);
        if i == 0 && j == 0 {
            break;
        }
        let cands = [
            (i > 0 && j > 0, i.wrapping_sub(1), j.wrapping_sub(1)),
            (i > 0, i.wrapping_sub(1), j),
            (j > 0, i, j.wrapping_sub(1)),
        ];
        let mut best = (inf, i, j);
        for (ok, a, b) in cands {
            if ok && d[a * m + b] < best.0 {
                best = (d[a * m + b], a, b);
            }
        }
        if best.1 == i && best.2 == j {
            break;
        }
        i = best.1;
        j = best.2;
    }
    (cost, first_i)
}

/// The lower MATCH_CEPS cepstra with their mean and spread over the sequence taken out
/// (the channel and the voice's own range); the rest zero.
pub(super) fn normalised(v: &[[f32; CEPS]]) -> Vec<[f32; CEPS]> {
    let (mean, sd) = mean_and_spread(v);
    standardised(v, &mean, &sd)
}

/// The lower MATCH_CEPS cepstra of each frame less `mean`, over `sd`; the rest zero.
pub(super) fn standardised(
    v: &[[f32; CEPS]],
    mean: &[f32; CEPS],
    sd: &[f32; CEPS],
) -> Vec<[f32; CEPS]> {
    v.iter()
        .map(|f| {
            let mut o = [0.0f32; CEPS];
            for k in 0..MATCH_CEPS {
                o[k] = (f[k] - mean[k]) / sd[k];
            }
            o
        })
        .collect()
}

/// A kami-no-ku as matched: its lower cepstra every template step, normalised over the
/// verse, the analysis frame it starts at and its first sound.
pub(super) struct Verse {
    pub(super) frames: Vec<[f32; CEPS]>,
    pub(super) first_frame: usize,
    pub(super) start_s: f64,
}

/// What the match against the poems not yet read tells of a verse.
pub(super) struct Naming {
    /// The poem, when it stands out of the others by POEM_SCORE_MIN.
    pub(super) poem: Option<u8>,
    pub(super) score: f64,
    pub(super) onsets: Vec<f64>,
    /// The best-matching poem even when it does not stand out.
    pub(super) candidate: Option<u8>,
    /// Each frame of the best template with the verse frame first aligned to it.
    pub(super) aligned: Vec<(usize, [f32; CEPS])>,
    /// The template voice that matched best (`None` when matched in the reader's own
    /// voice, `readers_kana`).
    pub(super) voice: Option<usize>,
    /// Each kana of the best-matching poem and the verse frames `[from, to)` aligned to it.
    pub(super) kana_spans: Vec<(String, usize, usize)>,
}

/// The verse's frames `[a, b)` as they are matched: every template step, normalised.
pub(super) fn verse_frames(f: &Frames, a: usize, b: usize) -> Vec<[f32; CEPS]> {
    normalised(
        &f.ceps[a.min(f.len())..b.min(f.len())]
            .iter()
            .step_by(TEMPLATE_STEP)
            .copied()
            .collect::<Vec<_>>(),
    )
}

/// The poem of a kami-no-ku, its score, the kana onsets and the best-matching poem even
/// when it does not stand out.
pub(super) fn name_poem(verse: &Verse, t: &KanaTemplates, pool: &ReadPool) -> Naming {
    let x = &verse.frames;
    let step_s = HOP_S * TEMPLATE_STEP as f64;
    let span_s = x.len() as f64 * step_s;
    let voices = t.kana.values().next().map_or(0, |v| v.len());
    // A template's first kana and each later kana, in template frames, for a verse of
    // `units` kana over this verse's span.
    let pace = |units: usize| -> (usize, usize) {
        let n = units.max(2);
        let first_s = TEMPLATE_FIRST_S.min(span_s * 0.4);
        let mora_s = ((span_s - first_s) / (n - 1) as f64).max(0.08);
        (
            (first_s / step_s).round() as usize,
            (mora_s / step_s).round() as usize,
        )
    };
    // A poem's match is given up once it must cost more than the second best its thread
    // has seen: it can then be neither the best nor the second.
    let score_poem = |p: &Poem, second: f64| -> (f64, u8, usize) {
        let units = sound_units(&p.kami_kana, &p.kami_pron);
        let (ff, mf) = pace(units.len());
        let mut best = (f64::INFINITY, 0usize);
        for v in 0..voices {
            if let Some((y, _)) = poem_template(t, &units, v, ff, mf) {
                let (c, _) = dtw(x, &normalised(&y), false, second.min(best.0));
                if c < best.0 {
                    best = (c, v);
                }
            }
        }
        (best.0, p.no, best.1)
    };
    let score_share = |part: &[&'static Poem]| -> Vec<(f64, u8, usize)> {
        let mut two = [f64::INFINITY; 2];
        part.iter()
            .map(|p| {
                let s = score_poem(p, two[1]);
                if s.0 < two[0] {
                    two = [s.0, two[0]];
                } else if s.0 < two[1] {
                    two[1] = s.0;
                }
                s
            })
            .collect()
    };
    // The poems not yet read are matched on NAMING_THREADS threads, each a share of them.
    let unread = pool.unread();
    let share = unread.len().div_ceil(NAMING_THREADS).max(1);
    let mut scored: Vec<(f64, u8, usize)> = std::thread::scope(|sc| {
        let jobs: Vec<_> = unread
            .chunks(share)
            .map(|part| sc.spawn(|| score_share(part)))
            .collect();
        jobs.into_iter()
            .flat_map(|j| j.join().unwrap_or_default())
            .collect()
    });
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut naming = Naming {
        poem: None,
        score: 0.0,
        onsets: fixed_pace_onsets(verse.start_s, span_s),
        candidate: None,
        aligned: Vec::new(),
        voice: None,
        kana_spans: Vec::new(),
    };
    let Some(&(c1, p1, v1)) = scored.first() else {
        return naming;
    };
    let c2 = scored.get(1).map_or(f64::INFINITY, |s| s.0);
    let score = if c2.is_finite() { (c2 - c1) / c2 } else { 1.0 };
    let Some(pd) = poem(p1) else {
        return naming;
    };
    let units = sound_units(&pd.kami_kana, &pd.kami_pron);
    let (ff, mf) = pace(units.len());
    if let Some((y, starts)) = poem_template(t, &units, v1, ff, mf) {
        let y = normalised(&y);
        let (_, first_i) = dtw(x, &y, true, f64::INFINITY);
        if !first_i.is_empty() {
            let first_s = verse.first_frame as f64 * HOP_S;
            naming.onsets = starts
                .iter()
                .enumerate()
                .map(|(k, &j)| {
                    if k == 0 {
                        verse.start_s
                    } else {
                        first_s + first_i[j.min(first_i.len() - 1)] as f64 * step_s
                    }
                })
                .collect();
            naming.aligned = first_i.iter().copied().zip(y).collect();
            naming.kana_spans = units
                .iter()
                .enumerate()
                .map(|(k, u)| {
                    let at = |j: usize| first_i[j.min(first_i.len() - 1)];
                    let to = starts.get(k + 1).map_or(x.len(), |&j| at(j));
                    (u.clone(), at(starts[k]), to.max(at(starts[k])))
                })
                .collect();
        }
    }
    naming.voice = Some(v1);
    naming.poem = (score >= POEM_SCORE_MIN).then_some(p1);
    naming.score = score;
    naming.candidate = Some(p1);
    naming
}

/// The mean and spread of each of the lower MATCH_CEPS cepstra over `v`.
pub(super) fn mean_and_spread(v: &[[f32; CEPS]]) -> ([f32; CEPS], [f32; CEPS]) {
    let mut mean = [0.0f32; CEPS];
    for f in v {
        for k in 0..MATCH_CEPS {
            mean[k] += f[k];
        }
    }
    for m in mean.iter_mut() {
        *m /= v.len().max(1) as f32;
    }
    let mut sd = [1.0f32; CEPS];
    for k in 0..MATCH_CEPS {
        let var = v.iter().map(|f| (f[k] - mean[k]).powi(2)).sum::<f32>() / v.len().max(1) as f32;
        sd[k] = var.sqrt().max(1e-3);
    }
    (mean, sd)
}

/// Onsets by the contract's tempo model when no poem can be aligned: the first kana
/// held, the rest evenly over the verse.
fn fixed_pace_onsets(start_s: f64, span_s: f64) -> Vec<f64> {
    const UNITS: usize = 17;
    let first = TEMPLATE_FIRST_S.min(span_s * 0.4);
    let mora = (span_s - first) / (UNITS - 1) as f64;
    (0..UNITS)
        .map(|k| {
            if k == 0 {
                start_s
            } else {
                start_s + first + (k - 1) as f64 * mora
            }
        })
        .collect()
}
