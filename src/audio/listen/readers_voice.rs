//! The reader's own voice: a map from the reader's cepstra to the templates' learnt from
//! the verses already named (`Adaptation`), the reader's own kana cut from those verses
//! (`readers_kana`), and the verses named again in them (`rename_in_the_readers_voice`,
//! `second_opinion`).
//!
//! Reads the verses as heard and their namings. It names a verse the templates left
//! null, and leaves null one the templates named narrowly and the reader's own kana name
//! plainly otherwise; it never finds verses (that is the module above).

use super::naming::{mean_and_spread, name_poem, normalised, standardised, Naming, Verse};
use super::{round_ms, round_score, HeardReading, MATCH_CEPS, POEM_SCORE_MIN};
use crate::audio::features::CEPS;
use crate::audio::templates::KanaTemplates;
use crate::rules::kimariji::ReadPool;
use std::collections::{BTreeMap, HashMap};

/// A verse named in the reader's own voice (kana cut from this recording's named verses)
/// whose closest template poem differs is named when its poem stands out by this much:
/// twice the templates' margin, as those kana come from a handful of verses.
const OWN_VOICE_SCORE_MIN: f64 = 2.0 * POEM_SCORE_MIN;
/// The verses named teach the reader's voice (`Adaptation`), or the surest one when none is,
/// in at most this many rounds of learning and naming again.
const ADAPT_ROUNDS: usize = 3;
/// The fewest aligned frames an adaptation is fitted on.
const ADAPT_PAIRS_MIN: usize = 200;
/// The pull of the adaptation toward no change, per aligned frame.
const ADAPT_RIDGE_SHARE: f64 = 0.05;
/// A kana as this reader says it lasts at least this many template frames to serve as
/// its template ...
const READER_KANA_MIN_FRAMES: usize = 4;
/// ... and a held first kana gives only its first this many frames.
const READER_HELD_FRAMES: usize = 30;

/// A map of the reader's cepstra (normalised over each verse) onto the templates',
/// learnt from this recording's own verses that named their poem plainly: an affine map
/// fitted by least squares on the frames their alignment paired, held near no change.
/// A voice with no template then meets the templates halfway, in its own measure.
struct Adaptation {
    /// Rows: the map's output; columns: the input's MATCH_CEPS cepstra, then 1.
    map: nalgebra::SMatrix<f64, MATCH_CEPS, { MATCH_CEPS + 1 }>,
}

impl Adaptation {
    /// The map that best takes each `x` to its paired `y`, or `None` without enough pairs.
    fn fit(pairs: &[([f32; CEPS], [f32; CEPS])]) -> Option<Adaptation> {
        type Square = nalgebra::SMatrix<f64, { MATCH_CEPS + 1 }, { MATCH_CEPS + 1 }>;
        type Cross = nalgebra::SMatrix<f64, { MATCH_CEPS + 1 }, MATCH_CEPS>;
        if pairs.len() < ADAPT_PAIRS_MIN {
            return None;
        }
        let mut gram = Square::zeros();
        let mut cross = Cross::zeros();
        for (x, y) in pairs {
            let mut xa = nalgebra::SVector::<f64, { MATCH_CEPS + 1 }>::zeros();
            for k in 0..MATCH_CEPS {
                xa[k] = x[k] as f64;
            }
            xa[MATCH_CEPS] = 1.0;
            let ya = nalgebra::SVector::<f64, MATCH_CEPS>::from_fn(|k, _| y[k] as f64);
            gram += xa * xa.transpose();
            cross += xa * ya.transpose();
        }
        // Held near no change: a ridge pulling the map toward the identity.
        let ridge = ADAPT_RIDGE_SHARE * pairs.len() as f64;
        for k in 0..MATCH_CEPS {
            gram[(k, k)] += ridge;
            cross[(k, k)] += ridge;
        }
        let solved = gram.lu().solve(&cross)?;
        Some(Adaptation {
            map: solved.transpose(),
        })
    }

    /// One frame in the templates' measure.
    fn apply_one(&self, x: &[f32; CEPS]) -> [f32; CEPS] {
        let mut o = [0.0f32; CEPS];
        for (k, ok) in o.iter_mut().enumerate().take(MATCH_CEPS) {
            let v: f64 = x[..MATCH_CEPS]
                .iter()
                .enumerate()
                .map(|(m, &xm)| self.map[(k, m)] * xm as f64)
                .sum();
            *ok = (v + self.map[(k, MATCH_CEPS)]) as f32;
        }
        o
    }

    /// A verse's frames in the templates' measure, normalised again over the verse.
    fn apply(&self, frames: &[[f32; CEPS]]) -> Vec<[f32; CEPS]> {
        normalised(&frames.iter().map(|x| self.apply_one(x)).collect::<Vec<_>>())
    }

    /// The map learnt from the frames that the alignment of the verses `teachers` paired
    /// with template frames (`fit`).
    fn taught_by<'a>(teachers: impl Iterator<Item = &'a (Verse, Naming)>) -> Option<Adaptation> {
        let pairs: Vec<([f32; CEPS], [f32; CEPS])> = teachers
            .flat_map(|(v, n)| n.aligned.iter().map(|&(i, y)| (v.frames[i], y)))
            .collect();
        Adaptation::fit(&pairs)
    }

    /// A verse in the templates' measure.
    fn verse(&self, v: &Verse) -> Verse {
        Verse {
            frames: self.apply(&v.frames),
            first_frame: v.first_frame,
            start_s: v.start_s,
        }
    }
}

/// Kana templates in this reader's own voice: every kana that the verses named so far
/// hold, cut from them where their alignment put it and taken into the templates'
/// measure (`Adaptation`); a kana the reader has not yet said comes from the template
/// voice that matched the named verses most often, in the same measure. One voice. The
/// verse `except`, when given, gives none of its kana (it would vouch for itself).
fn readers_kana(
    t: &KanaTemplates,
    verses: &[(Verse, Naming)],
    adaptation: &Adaptation,
    except: Option<usize>,
) -> KanaTemplates {
    let named = verses
        .iter()
        .enumerate()
        .filter(|&(k, (_, n))| n.poem.is_some() && Some(k) != except)
        .map(|(_, x)| x);
    let voices = t.kana.values().next().map_or(0, |v| v.len());
    let mut votes = vec![0usize; voices.max(1)];
    // Each kana's cuts after a verse's first (length, verse, from, to), and its first
    // cut as a verse's held opening.
    let mut inner: HashMap<&str, Vec<(usize, &Verse, usize, usize)>> = HashMap::new();
    let mut opening: HashMap<&str, (&Verse, usize, usize)> = HashMap::new();
    for (v, n) in named {
        if let Some(voice) = n.voice.filter(|&i| i < votes.len()) {
            votes[voice] += 1;
        }
        for (i, (u, from, to)) in n.kana_spans.iter().enumerate() {
            if to - from < READER_KANA_MIN_FRAMES || *to > v.frames.len() {
                continue;
            }
            if i == 0 {
                opening.entry(u.as_str()).or_insert((
                    v,
                    *from,
                    (*from + READER_HELD_FRAMES).min(*to),
                ));
            } else {
                inner
                    .entry(u.as_str())
                    .or_default()
                    .push((to - from, v, *from, *to));
            }
        }
    }
    let fallback = (0..votes.len()).max_by_key(|&v| votes[v]).unwrap_or(0);
    // The fallback voice's kana in a measure like a normalised template's: its mean and
    // spread over all its kana taken out.
    let all: Vec<[f32; CEPS]> = t
        .kana
        .values()
        .filter_map(|v| v.get(fallback))
        .flatten()
        .copied()
        .collect();
    let (mean, sd) = mean_and_spread(&all);
    let mut kana = BTreeMap::new();
    for (k, per_voice) in &t.kana {
        // Of several cuts, the one of median length.
        let own = inner
            .get_mut(k.as_str())
            .map(|cuts| {
                cuts.sort_by_key(|c| c.0);
                let (_, v, a, b) = cuts[cuts.len() / 2];
                (v, a, b)
            })
            .or_else(|| opening.get(k.as_str()).copied());
        let frames: Vec<[f32; CEPS]> = match own {
            Some((v, a, b)) => v.frames[a..b]
                .iter()
                .map(|x| adaptation.apply_one(x))
                .collect(),
            None => per_voice
                .get(fallback)
                .map(|f| standardised(f, &mean, &sd))
                .unwrap_or_default(),
        };
        kana.insert(k.clone(), vec![frames]);
    }
    KanaTemplates { kana }
}

/// This recording's reader as the verses named so far teach it: the map of its voice into
/// the templates' measure (`Adaptation`) and its own kana (`readers_kana`).
pub(super) struct ReadersEar {
    adaptation: Adaptation,
    reader: KanaTemplates,
}

impl ReadersEar {
    /// Taught by the verses `teachers` (the map) and by every verse named (the kana).
    fn taught_by<'a>(
        t: &KanaTemplates,
        verses: &[(Verse, Naming)],
        teachers: impl Iterator<Item = &'a (Verse, Naming)>,
    ) -> Option<ReadersEar> {
        let adaptation = Adaptation::taught_by(teachers)?;
        let reader = readers_kana(t, verses, &adaptation, None);
        Some(ReadersEar { adaptation, reader })
    }

    /// Taught by the verses named.
    pub(super) fn of_named(t: &KanaTemplates, verses: &[(Verse, Naming)]) -> Option<ReadersEar> {
        Self::taught_by(t, verses, verses.iter().filter(|(_, n)| n.poem.is_some()))
    }

    /// A verse matched in the templates' measure against the poems of `pool`; left null
    /// there, named in the reader's own voice when that agrees with its closest match, or
    /// stands out there twice as plainly as a naming must (OWN_VOICE_SCORE_MIN).
    pub(super) fn name(&self, t: &KanaTemplates, v: &Verse, pool: &ReadPool) -> Naming {
        let adapted = self.adaptation.verse(v);
        let again = name_poem(&adapted, t, pool);
        if again.poem.is_none() {
            let own = name_poem(&adapted, &self.reader, pool);
            if own_voice_names(&own, again.candidate) {
                return Naming { voice: None, ..own };
            }
        }
        again
    }
}

/// Verses whose poem the templates could not tell are matched again in the reader's
/// own measure (`Adaptation`), learnt from the verses named so far; only the poems no
/// verse has been named are left to them. Each round learns from the verses the last
/// one named too.
pub(super) fn rename_in_the_readers_voice(
    t: &KanaTemplates,
    out: &mut [HeardReading],
    verses: &mut [(Verse, Naming)],
) {
    for _ in 0..ADAPT_ROUNDS {
        let named = verses.iter().filter(|(_, n)| n.poem.is_some()).count();
        if named == verses.len() {
            return;
        }
        // The named verses teach; with none named, the verse whose closest poem stands
        // out most does (it stays null unless the round names it; a round that names
        // nothing ends the learning).
        let surest = (named == 0)
            .then(|| {
                verses
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1 .1.score.total_cmp(&b.1 .1.score))
                    .map(|(k, _)| k)
            })
            .flatten();
        let teachers = verses
            .iter()
            .enumerate()
            .filter(|(k, (_, n))| n.poem.is_some() || Some(*k) == surest)
            .map(|(_, x)| x);
        let Some(ear) = ReadersEar::taught_by(t, verses, teachers) else {
            return;
        };
        let mut pool = ReadPool::new();
        for p in verses.iter().filter_map(|(_, n)| n.poem) {
            pool.mark_read(p);
        }
        let mut renamed = false;
        for (r, (v, n)) in out.iter_mut().zip(verses.iter_mut()) {
            if n.poem.is_some() {
                continue;
            }
            let again = ear.name(t, v, &pool);
            if let Some(p) = again.poem {
                pool.mark_read(p);
                r.poem = Some(p);
                r.candidate = Some(p);
                r.poem_score = round_score(again.score);
                r.onsets_s = again.onsets.iter().copied().map(round_ms).collect();
                *n = again;
                renamed = true;
            }
        }
        if !renamed {
            return;
        }
    }
}

/// A verse the templates named by less than OWN_VOICE_SCORE_MIN is matched once more in
/// the reader's own kana, cut from the other named verses; when that names another poem
/// by OWN_VOICE_SCORE_MIN, the two measures disagree plainly and the verse is left null
/// (`analyze` then takes the card taken, for review).
pub(super) fn second_opinion(
    t: &KanaTemplates,
    out: &mut [HeardReading],
    verses: &[(Verse, Naming)],
) {
    let Some(adaptation) = Adaptation::taught_by(verses.iter().filter(|(_, n)| n.poem.is_some()))
    else {
        return;
    };
    for (k, (v, n)) in verses.iter().enumerate() {
        let Some(p) = n
            .poem
            .filter(|_| n.voice.is_some() && n.score < OWN_VOICE_SCORE_MIN)
        else {
            continue;
        };
        let reader = readers_kana(t, verses, &adaptation, Some(k));
        let mut pool = ReadPool::new();
        for q in verses
            .iter()
            .filter_map(|(_, n)| n.poem)
            .filter(|&q| q != p)
        {
            pool.mark_read(q);
        }
        let own = name_poem(&adaptation.verse(v), &reader, &pool);
        if own.poem.is_some_and(|q| q != p) && own.score >= OWN_VOICE_SCORE_MIN {
            out[k].poem = None;
        }
    }
}

/// Whether a verse named in the reader's own voice takes that name: when it agrees with
/// the templates' closest poem, or stands out by OWN_VOICE_SCORE_MIN without it.
pub(super) fn own_voice_names(own: &Naming, closest: Option<u8>) -> bool {
    own.poem.is_some() && (own.poem == closest || own.score >= OWN_VOICE_SCORE_MIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::templates::embedded;

    #[test]
    fn a_map_learnt_from_paired_frames_takes_the_reader_to_the_templates() {
        let pairs: Vec<([f32; CEPS], [f32; CEPS])> = (0..400)
            .map(|i| {
                let mut x = [0.0f32; CEPS];
                for (k, v) in x.iter_mut().enumerate().take(MATCH_CEPS) {
                    *v = ((i * (k + 3)) as f32 * 0.37).sin();
                }
                let mut y = [0.0f32; CEPS];
                for k in 0..MATCH_CEPS {
                    y[k] = 0.8 * x[k] + 0.3 * x[(k + 1) % MATCH_CEPS] - 0.2;
                }
                (x, y)
            })
            .collect();
        let map = Adaptation::fit(&pairs).expect("enough pairs");
        let worst = pairs
            .iter()
            .flat_map(|(x, y)| {
                let mapped = map.apply_one(x);
                (0..MATCH_CEPS).map(move |k| (mapped[k] - y[k]).abs())
            })
            .fold(0.0f32, f32::max);
        assert!(
            worst < 0.1,
            "mapped frames off their pairs by up to {worst:.3}"
        );
        assert!(Adaptation::fit(&pairs[..ADAPT_PAIRS_MIN - 1]).is_none());
    }

    #[test]
    fn the_readers_kana_are_cut_where_the_alignment_put_them() {
        let t = embedded();
        let frames: Vec<[f32; CEPS]> = (0..60)
            .map(|i| {
                let mut c = [0.0f32; CEPS];
                for (m, v) in c.iter_mut().enumerate().take(MATCH_CEPS) {
                    *v = ((i * (m + 2)) as f32 * 0.21).sin();
                }
                c
            })
            .collect();
        let span = |k: &str, a: usize, b: usize| (k.to_string(), a, b);
        let naming = Naming {
            poem: Some(1),
            score: 0.2,
            onsets: Vec::new(),
            candidate: Some(1),
            aligned: Vec::new(),
            voice: Some(2),
            // The held first kana, then two more.
            kana_spans: vec![span("あ", 0, 40), span("き", 40, 52), span("の", 52, 60)],
        };
        let verse = Verse {
            frames: frames.clone(),
            first_frame: 0,
            start_s: 0.0,
        };
        let same: Vec<([f32; CEPS], [f32; CEPS])> =
            (0..400).map(|i| (frames[i % 60], frames[i % 60])).collect();
        let map = Adaptation::fit(&same).expect("enough pairs");
        let own = readers_kana(t, &[(verse, naming)], &map, None);
        let close = |a: &[[f32; CEPS]], b: &[[f32; CEPS]]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| (0..MATCH_CEPS).all(|m| (x[m] - y[m]).abs() < 0.05))
        };
        assert!(
            close(&own.kana["き"][0], &frames[40..52]),
            "き not cut from frames 40-52"
        );
        assert!(close(&own.kana["の"][0], &frames[52..60]));
        // A held first kana gives its opening only.
        assert!(close(&own.kana["あ"][0], &frames[0..READER_HELD_FRAMES]));
        // A kana the reader has not said: the voice that matched, in a template's measure.
        let unsaid = &own.kana["ふ"][0];
        assert_eq!(unsaid.len(), t.kana["ふ"][2].len());
        assert!(!close(unsaid, &t.kana["ふ"][0][..]));
        assert_eq!(own.kana.len(), t.kana.len());
        assert!(own.kana.values().all(|v| v.len() == 1));
    }
}
