//! The 100 poems of the Ogura Hyakunin Isshu, embedded in the binary.
//!
//! Source: `hyakunin_isshu.csv` (copied from the shared data set). The kana columns are
//! what the engine relies on; the static kimari-ji column is kept only to check the
//! kimari-ji algorithm against it.

use std::sync::OnceLock;

/// Number of poems in the anthology; poems are numbered 1..=POEM_COUNT.
pub const POEM_COUNT: u8 = 100;

const CSV: &str = include_str!("hyakunin_isshu.csv");

/// One poem, as the engine needs it.
#[derive(Debug, Clone)]
pub struct Poem {
    pub no: u8,
    pub poet: String,
    /// Upper verse in historical kana, phrases separated by spaces.
    pub kami_kana: String,
    /// Lower verse in historical kana (torifuda text, with dakuten).
    pub shimo_kana: String,
    /// Upper verse as the reader pronounces it, modern hiragana.
    pub kami_pron: String,
    /// Static kimari-ji from the data set (historical kana), for checking only.
    pub static_kimariji: String,
    /// One sound per historical kana unit of the kami-no-ku (see `kimariji`).
    pub units: Vec<char>,
    /// The comparison key of each unit (sound with long-o merged).
    pub keys: Vec<String>,
}

impl Poem {
    /// The lower verse as printed on a torifuda: no spaces and no dakuten/handakuten.
    pub fn torifuda_text(&self) -> String {
        self.shimo_kana
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(strip_dakuten)
            .collect()
    }
}

/// All 100 poems, index `no - 1`.
pub fn poems() -> &'static [Poem] {
    static POEMS: OnceLock<Vec<Poem>> = OnceLock::new();
    POEMS.get_or_init(|| parse_csv(CSV))
}

/// The poem numbered `no` (1..=100), or `None`.
pub fn poem(no: u8) -> Option<&'static Poem> {
    if (1..=POEM_COUNT).contains(&no) {
        poems().get(no as usize - 1)
    } else {
        None
    }
}

fn parse_csv(text: &str) -> Vec<Poem> {
    // The embedded file is fixed at build time; a test checks all 100 rows parse.
    let mut out = Vec::with_capacity(POEM_COUNT as usize);
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 9 {
            continue;
        }
        let kami_kana = f[4].to_string();
        let kami_pron = f[6].to_string();
        let units = crate::rules::kimariji::sound_units(&kami_kana, &kami_pron);
        let keys = crate::rules::kimariji::comparison_keys(&units);
        out.push(Poem {
            no: f[0].parse().unwrap_or(0),
            poet: f[1].to_string(),
            kami_kana,
            shimo_kana: f[5].to_string(),
            kami_pron,
            static_kimariji: f[7].to_string(),
            units: units
                .into_iter()
                .map(|u| u.chars().next().unwrap_or(' '))
                .collect(),
            keys,
        });
    }
    out
}

/// Removes dakuten and handakuten, as real torifuda print the kana.
pub fn strip_dakuten(c: char) -> char {
    const VOICED: &str = "がぎぐげござじずぜぞだぢづでどばびぶべぼぱぴぷぺぽ";
    const PLAIN: &str = "かきくけこさしすせそたちつてとはひふへほはひふへほ";
    match VOICED.chars().position(|v| v == c) {
        Some(i) => PLAIN.chars().nth(i).unwrap_or(c),
        None => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_hundred_poems_parse_in_order() {
        let p = poems();
        assert_eq!(p.len(), 100);
        for (i, poem) in p.iter().enumerate() {
            assert_eq!(poem.no as usize, i + 1);
            assert_eq!(
                poem.units.len(),
                poem.kami_kana.replace(' ', "").chars().count()
            );
        }
    }

    #[test]
    fn torifuda_text_has_no_dakuten() {
        // 1: わがころもでは つゆにぬれつつ
        assert_eq!(
            poem(1).unwrap().torifuda_text(),
            "わかころもてはつゆにぬれつつ"
        );
        assert!(poem(0).is_none() && poem(101).is_none());
    }
}
